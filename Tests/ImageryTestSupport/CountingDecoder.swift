import Foundation
import Imagery
import Synchronization

/// A real decoder wrapped to count how often the pipeline calls it.
public final class CountingDecoder: ImageDecoding {
    private let base: any ImageDecoding
    private let calls = Atomic<Int>(0)

    public init(_ base: any ImageDecoding) {
        self.base = base
    }

    /// How many decodes ran.
    public var count: Int { calls.load(ordering: .relaxed) }

    public func decode(_ data: Data, recipe: ImageRecipe) throws -> Image {
        calls.add(1, ordering: .relaxed)
        return try base.decode(data, recipe: recipe)
    }
}

/// A counter tasks can share.
public final class Counter: Sendable {
    private let atomic = Atomic<Int>(0)
    public init() {}
    public func increment() { atomic.add(1, ordering: .relaxed) }
    public var value: Int { atomic.load(ordering: .relaxed) }
}

/// Polls `condition` every 5 ms until it holds or `timeout` passes; returns whether it held. Two
/// minutes by default: the full suite on two cores has kept a waiting task from running for over 30 s.
@discardableResult
public func waitUntil(timeout: Duration = .seconds(120), _ condition: @Sendable () -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        guard ContinuousClock.now < deadline else { return false }
        try await Task.sleep(for: .milliseconds(5))
    }
    return true
}

/// A flag tasks can share.
public final class Flag: Sendable {
    private let atomic = Atomic<Bool>(false)
    public init() {}
    public func set(_ value: Bool = true) { atomic.store(value, ordering: .relaxed) }
    public var isSet: Bool { atomic.load(ordering: .relaxed) }
}

/// Values tasks append to, read after.
public final class Recorded<Value: Sendable>: Sendable {
    private let values = Mutex<[Value]>([])
    public init() {}
    public func append(_ value: Value) { values.withLock { $0.append(value) } }
    public var all: [Value] { values.withLock { $0 } }
}
