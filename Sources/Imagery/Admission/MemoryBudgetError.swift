import Foundation

/// Why a ``MemoryBudget`` refused a reservation.
public enum MemoryBudgetError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Too much is in flight and the line is full, or the wait grew too long: try again after
    /// `retryAfter` seconds.
    case overloaded(retryAfter: Int)
    /// The work needs more than the whole budget (`bytes` of `limit`): it can never be admitted.
    case tooLarge(bytes: Int, limit: Int)

    public var description: String {
        switch self {
        case .overloaded(let seconds):
            "too much work is in flight: try again in \(seconds) s"
        case .tooLarge(let bytes, let limit):
            "the work needs about \(bytes >> 20) MiB of memory, more than the in-flight budget of \(limit >> 20) MiB"
        }
    }
}
