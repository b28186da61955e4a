/// A flag set once; `set()` says whether this call set it (the package's loaders use it for "shut
/// down once": by their owner, or else when they are released).
package final class OnceFlag: Sendable {
    private let flag = Locked(false)

    package init() {}

    /// Sets the flag; `true` if this call set it.
    package func set() -> Bool {
        flag.withLock { value in
            defer { value = true }
            return !value
        }
    }

    /// Whether the flag is set.
    package var isSet: Bool { flag.withLock { $0 } }
}
