import Foundation
import Imagery

extension ServerConfiguration {
    /// What a request may cost: memory (the budget admission keeps), time, and the size of sources and outputs.
    public struct Limits: Sendable {
        /// The memory the server's caches and its work in flight may use together; default 128 MiB a
        /// usable processor, at least 512 MiB, at most half the memory the process may use
        /// (``MachineDefaults``).
        /// ``ServerConfiguration/Limits/maximumInflightMemory`` of it bounds downloads and decodes in flight; the caches
        /// (responses, decoded images, originals, bases) share the rest.
        public var memoryLimit = MachineDefaults.current.memoryLimit

        /// The bytes downloads and decodes in flight may hold at once (`MemoryBudget`), part of
        /// ``ServerConfiguration/Limits/memoryLimit``; `nil` (the default): half of it. Work that does not fit waits in line
        /// (at most ``ServerConfiguration/Limits/admissionQueueLength`` requests, as long as ``ServerConfiguration/Limits/admissionTimeout`` allows), else is
        /// answered 503 with `Retry-After`; a source that alone needs more is answered 413.
        public var maximumInflightMemory: Int?

        /// The most requests waiting for memory or a decode at once; more are answered 503 at once.
        /// Default 32 a usable processor, at least 64 (``MachineDefaults``).
        public var admissionQueueLength = MachineDefaults.current.admissionQueueLength

        /// The longest a request waits for memory before it is answered 503. `nil` (the default): as
        /// long as it can still be answered within ``ServerConfiguration/Limits/requestTimeout`` at the pace decodes have been
        /// going (the request timeout less its own decode and encode); a request the decodes ahead of
        /// it say cannot is answered 503 at once. A browser does not retry an `<img>` answered 503: a
        /// page's burst is better served late than refused.
        public var admissionTimeout: Duration?

        /// The largest source accepted, in bytes; default 50 MB.
        public var maximumSourceBytes = 50_000_000

        /// The most pixels a source may declare (checked from its header, before decoding); default 100 MP.
        public var maximumSourcePixels = 100_000_000

        /// The most frames of an animated source processed together (each resized and kept in GIF and
        /// WebP outputs); default 1 000. All its frames together count against ``ServerConfiguration/Limits/maximumSourcePixels``.
        /// An animation over either limit is 413 before a frame is decoded (`frame=N` still takes one).
        public var maximumFrames = 1_000

        /// The most pixels of each frame of an animation (imgproxy's `IMGPROXY_MAX_ANIMATION_FRAME_RESOLUTION`);
        /// default `nil`: each frame is bounded by ``ServerConfiguration/Limits/maximumSourcePixels`` with the others.
        public var maximumFramePixels: Int?

        /// The largest `w` or `h`; default 8192.
        public var maximumOutputSide = 8192

        /// The longest an image may take to make (revalidation, admission, fetch, decode, encode);
        /// past it the work is cancelled and the request answered 504. Default 30 s.
        public var requestTimeout: Duration = .seconds(30)

        public init() {}
    }
}

extension ServerConfiguration.Limits {
    /// The in-flight budget in bytes: ``maximumInflightMemory``, else half of ``memoryLimit``.
    public var inflightMemory: Int { maximumInflightMemory ?? memoryLimit / 2 }

    /// The bytes the caches share: ``memoryLimit`` less the in-flight budget (which must be less).
    public var cacheMemory: Int { max(0, memoryLimit - inflightMemory) }

    /// The resident memory past which the server gives memory back to the system even while busy:
    /// ``memoryLimit`` and 100 MiB for what no budget counts (code, stacks, connections).
    public var residentCeiling: Int { memoryLimit + 100 << 20 }
}

extension ServerConfiguration.Limits: ConfigurationPart {
    /// Checks that every value is one the server can run with.
    /// - Throws: ``ConfigurationFileError`` naming the first setting (its key) whose value is not.
    public func validate() throws(ConfigurationFileError) {
        let require = ConfigurationRule.require
        let longest = ConfigurationRule.longest
        let bytes = ConfigurationRule.bytes
        try require((1 << 20...1 << 50).contains(memoryLimit), "limits.memoryLimit", "must be from 1 MiB to 1 PiB")
        if let inflight = maximumInflightMemory {
            try require(
                inflight > 0 && inflight < memoryLimit, "limits.maximumInflightMemory",
                "must be positive and less than limits.memoryLimit (the caches get the rest)"
            )
        }
        try require(
            (0...1 << 20).contains(admissionQueueLength), "limits.admissionQueueLength", "must be from 0 to 1048576")
        if let admissionTimeout = admissionTimeout {
            try require(
                admissionTimeout >= .zero && admissionTimeout <= longest, "limits.admissionTimeoutSeconds",
                "must be from 0 to a year")
        }
        try require(
            requestTimeout > .zero && requestTimeout <= longest, "limits.requestTimeoutSeconds",
            "must be more than 0 and at most a year")
        try require(bytes.contains(maximumSourceBytes), "limits.maximumSourceBytes", "must be from 1 to 1 PiB")
        try require(bytes.contains(maximumSourcePixels), "limits.maximumSourcePixels", "must be from 1 to 2^50")
        try require((1...100_000).contains(maximumFrames), "limits.maximumFrames", "must be from 1 to 100000")
        try require(
            maximumFramePixels.map(bytes.contains) ?? true, "limits.maximumFramePixels", "must be from 1 to 2^50")
        try require((1...1 << 20).contains(maximumOutputSide), "limits.maximumOutputSide", "must be from 1 to 1048576")
    }
}
