import Foundation

extension MemoryBudget {
    /// The state of the budget, for metrics.
    public struct Snapshot: Sendable, Hashable {
        public var limit: Int
        /// Bytes held now.
        public var used: Int
        /// The most bytes held at once so far.
        public var peak: Int
        /// Reservations waiting now.
        public var queued: Int
        /// Reservations admitted so far (at once or after waiting).
        public var admitted: Int
        /// Of those, how many waited first.
        public var waited: Int
        /// Refused because the line was full or the wait too long.
        public var refusedOverloaded: Int
        /// Refused because they were larger than the limit.
        public var refusedTooLarge: Int
        /// Whether admission is held back because resident memory is over its ceiling (``setResidentPressure(_:)``).
        public var underPressure: Bool = false
    }
}
