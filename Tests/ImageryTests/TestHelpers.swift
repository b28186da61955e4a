import Synchronization

/// A counter tasks can share.
final class Counter: Sendable {
    private let atomic = Atomic<Int>(0)
    func increment() { atomic.add(1, ordering: .relaxed) }
    var value: Int { atomic.load(ordering: .relaxed) }
}

/// A flag tasks can share.
final class Flag: Sendable {
    private let atomic = Atomic<Bool>(false)
    func set() { atomic.store(true, ordering: .relaxed) }
    var isSet: Bool { atomic.load(ordering: .relaxed) }
}
