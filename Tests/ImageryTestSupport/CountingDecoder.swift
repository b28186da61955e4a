import Foundation
import Imagery
import Synchronization

/// A real decoder wrapped to count how often the pipeline calls it (previews apart: it makes them
/// when its decoder does, ``ProgressiveDecoding``).
public final class CountingDecoder: ProgressiveDecoding {
    private let base: any ImageDecoding
    private let calls = Atomic<Int>(0)
    private let previewCalls = Atomic<Int>(0)

    public init(_ base: any ImageDecoding) {
        self.base = base
    }

    /// How many decodes ran.
    public var count: Int { calls.load(ordering: .relaxed) }

    public func decode(_ data: Data, recipe: ImageRecipe) throws -> Image {
        calls.add(1, ordering: .relaxed)
        return try base.decode(data, recipe: recipe)
    }

    /// How many previews were decoded.
    public var previewCount: Int { previewCalls.load(ordering: .relaxed) }

    public func makeScanCounter() -> any ScanCounting {
        (base as? any ProgressiveDecoding)?.makeScanCounter() ?? NoScans()
    }

    public func decodePreview(_ data: Data, recipe: ImageRecipe) throws -> Image {
        previewCalls.add(1, ordering: .relaxed)
        guard let base = base as? any ProgressiveDecoding else { throw ImageDecodingError.unsupportedFormat }
        return try base.decodePreview(data, recipe: recipe)
    }

    /// The reader of a decoder that makes no previews.
    private struct NoScans: ScanCounting {
        mutating func count(_ data: Data) -> CompletedScans? { nil }
    }
}

/// A counter tasks can share.
public final class Counter: Sendable {
    private let atomic = Atomic<Int>(0)
    public init() {}
    public func increment() { atomic.add(1, ordering: .relaxed) }
    public var value: Int { atomic.load(ordering: .relaxed) }
}

/// Waits until `condition` holds (``waitUntil(_:limit:every:_:)`` without a description): `timeout`
/// is only a hang guard, never less than ``hangGuard`` whatever a caller passes, and reaching it
/// throws ``WaitTimedOut``. Returns `true` (for callers written as `#expect(try await waitUntil { ... })`).
@discardableResult
public func waitUntil(timeout: Duration = hangGuard, _ condition: @Sendable () -> Bool) async throws -> Bool {
    try await waitUntil("a condition", limit: max(timeout, hangGuard), every: .milliseconds(5)) { condition() }
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
