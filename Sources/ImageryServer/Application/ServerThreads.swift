import Imagery
import NIOCore

/// The threads `imagery serve` runs on, sized by the processors the process may use
/// (`UsableProcessors`), and what it says about them at start.
public enum ServerThreads {
    /// Sizes SwiftNIO's shared event loops and blocking pool (Hummingbird's server and the origin client
    /// use them) by `UsableProcessors.current`, unless the environment sets them
    /// (`NIO_SINGLETON_GROUP_LOOP_COUNT`, `NIO_SINGLETON_BLOCKING_POOL_THREAD_COUNT`). NIO's own default,
    /// `System.coreCount`, follows the cgroup's quota and cpuset but not the affinity mask: a server
    /// started with `taskset -c 0` on 16 cores ran 16 event loops on its one core.
    ///
    /// Call it first, before anything uses NIO's shared threads (NIO stops the process otherwise).
    public static func fitToUsableProcessors(environment: [String: String]) {
        let count = UsableProcessors.current.count
        if environment["NIO_SINGLETON_GROUP_LOOP_COUNT"] == nil {
            NIOSingletons.groupLoopCountSuggestion = count
        }
        if environment["NIO_SINGLETON_BLOCKING_POOL_THREAD_COUNT"] == nil {
            NIOSingletons.blockingPoolThreadCountSuggestion = count
        }
    }

    /// What the server derived from the machine and runs with: the processors it may use, decodes,
    /// encodes and event loops at once, memory, and connections. One line at start, so that an operator
    /// sees what was derived (and what `--memory-limit`, `--max-connections` and the rest set).
    static func summary(of service: ImageService) -> String {
        let configuration = service.configuration
        let decodes = service.pipeline.configuration.maximumConcurrentDecodes
        func mebibytes(_ bytes: Int) -> String { "\(bytes >> 20) MiB" }
        return """
            usable processors: \(UsableProcessors.current); at once: \(decodes) decodes, \
            \(service.encodingPool.threadCount) encodes, \(NIOSingletons.groupLoopCountSuggestion) event loops; \
            memory limit \(mebibytes(configuration.limits.memoryLimit)) (in flight \(mebibytes(configuration.limits.inflightMemory)); \
            admission held back over \(mebibytes(configuration.limits.residentCeiling)) resident after a trim, \(configuration.limits.admissionQueueLength) requests may wait); \
            at most \(configuration.listener.maximumConnections) connections, \
            \(configuration.origins.maximumConcurrentFetches) origin fetches at once
            """
    }
}
