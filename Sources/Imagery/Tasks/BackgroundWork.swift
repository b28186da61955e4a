/// Work a pipeline starts and does not wait for (thumbnails encoded and stored on disk), counted
/// so that a caller about to exit can wait for it (``ImagePipeline/waitForStores()``).
final class BackgroundWork: Sendable {
    private struct State {
        var running = 0
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Locked(State())

    /// Runs `work` in a detached task of `priority`, counted until it ends.
    func start(priority: TaskPriority, _ work: @escaping @Sendable () async -> Void) {
        state.withLock { $0.running += 1 }
        Task.detached(priority: priority) {
            await work()
            let waiters = self.state.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.running -= 1
                guard state.running == 0 else { return [] }
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.resume() }
        }
    }

    /// Returns once no counted work runs (at once if none does).
    func waitUntilDone() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let idle = state.withLock { state -> Bool in
                guard state.running > 0 else { return true }
                state.waiters.append(continuation)
                return false
            }
            if idle { continuation.resume() }
        }
    }
}
