import Synchronization

/// Counts the parses of request text (a thumbor or imgproxy path split into its parts, a query decoded)
/// made in a task, for tests that hold a request to one parse.
enum DialectParses {
    /// The counter of the current task, if a test set one.
    @TaskLocal static var counter: Counter?

    /// A number of parses.
    final class Counter: Sendable {
        private let parses = Atomic(0)

        /// The parses counted so far.
        var value: Int { parses.load(ordering: .relaxed) }

        /// Counts one.
        func add() { parses.add(1, ordering: .relaxed) }
    }

    /// Counts one parse, where a test counts them.
    static func count() { counter?.add() }
}
