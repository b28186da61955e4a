import Foundation

extension MemoryBudget {
    /// How much, and how long to wait for it.
    public struct Configuration: Sendable, Hashable {
        /// The most bytes held at once.
        public var limit: Int
        /// The most reservations waiting at once; more are refused. Default 64.
        public var maximumQueueLength: Int
        /// The longest a request waits for admission, over all its waits (a download slot, its
        /// source's bytes, its decode), before it is refused. Default 10 s.
        public var maximumWait: Duration
        /// The most decodes admitted at once; `nil` (the default): memory alone decides. Set it to
        /// the pipeline's ``ImagePipeline/Configuration/maximumConcurrentDecodes`` so an admitted
        /// decode never waits for a thread: its whole wait is then in this line, and timed.
        public var maximumConcurrentDecodes: Int?
        /// How long a decode is assumed to hold its slot until one has finished (then the pace
        /// measured decides), when the budget predicts whether a request can be served by its
        /// deadline. Default 0.5 s: a large photo's decode and resize here. Longer refuses more of a
        /// cold start's first requests (a soak's 16 first new sources met 28 refusals at 1 s);
        /// shorter downloads sources in a burst that then cannot be decoded in time.
        public var initialDecodeHold: Duration
        /// Whether ``maximumWait`` is the whole request's time, of which the request's own work
        /// once admitted (its decode and encode, at the pace measured) is kept free: the admission
        /// deadline is then ``maximumWait`` less that work (``admissionDeadline()``). A server sets
        /// it with its request timeout as ``maximumWait``: a request waits as long as it can still be
        /// answered in time, and is refused at once when the decodes ahead say it cannot. Default false.
        public var leavesTimeForOwnWork: Bool

        public init(
            limit: Int, maximumQueueLength: Int = 64, maximumWait: Duration = .seconds(10),
            maximumConcurrentDecodes: Int? = nil,
            initialDecodeHold: Duration = .milliseconds(500), leavesTimeForOwnWork: Bool = false
        ) {
            precondition(limit > 0 && maximumQueueLength >= 0, "a budget needs a positive limit")
            self.limit = limit
            self.maximumQueueLength = maximumQueueLength
            self.maximumWait = maximumWait
            self.maximumConcurrentDecodes = maximumConcurrentDecodes
            self.initialDecodeHold = initialDecodeHold
            self.leavesTimeForOwnWork = leavesTimeForOwnWork
        }
    }
}
