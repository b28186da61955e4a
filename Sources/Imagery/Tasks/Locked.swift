import Foundation

/// State guarded by a lock: `withLock` gives exclusive `inout` access.
///
/// Why not `Synchronization.Mutex`: on Linux it waits on a raw futex that
/// ThreadSanitizer cannot see, so every contended `withLock` is reported as a
/// data race (measured: a 4-thread counter under `Mutex` gives dozens of
/// reports, under a pthread mutex none). With a pthread mutex (`NSLock`)
/// `--sanitize=thread` checks our code, not the lock. The package's other modules use it too.
@usableFromInline
package final class Locked<State>: @unchecked Sendable {
    @usableFromInline let lock = NSLock()
    // Only touched while `lock` is held, so dynamic exclusivity checks are redundant.
    @usableFromInline @exclusivity(unchecked) var state: State

    @inlinable
    package init(_ state: State) {
        self.state = state
    }

    /// Runs `body` with the lock held.
    @inlinable
    package func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&state)
    }
}
