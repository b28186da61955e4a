import Foundation

/// A priority that can change while work runs, with one observer told of each change.
///
/// Priorities flow down a chain of cells: an ``ImageTask``'s cell is observed by the
/// decode job it waits on; that job's cell by the download job; the download job's
/// cell by the download queue. Observers re-read ``value`` when called, so
/// notifications that overtake each other still settle on the latest value.
final class PriorityCell: Sendable {
    private struct State {
        var value: ImageRequest.Priority
        var observer: (@Sendable () -> Void)?
    }

    private let state: Locked<State>

    init(_ value: ImageRequest.Priority) {
        state = Locked(State(value: value, observer: nil))
    }

    var value: ImageRequest.Priority {
        get { state.withLock { $0.value } }
        set {
            let observer = state.withLock { state -> (@Sendable () -> Void)? in
                guard state.value != newValue else { return nil }
                state.value = newValue
                return state.observer
            }
            observer?()
        }
    }

    /// Installs `observer` (replacing any) and returns the value at that moment.
    @discardableResult
    func observe(_ observer: @escaping @Sendable () -> Void) -> ImageRequest.Priority {
        state.withLock { state in
            state.observer = observer
            return state.value
        }
    }

    func stopObserving() {
        state.withLock { $0.observer = nil }
    }
}
