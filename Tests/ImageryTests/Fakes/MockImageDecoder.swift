import Foundation

@testable import Imagery

/// An ``ImageDecoding`` for ``TestImage`` bytes, with no codec: it counts its decodes (each one's
/// start is an event a test awaits), can hold them at a gate, and can fail the next ones on purpose.
///
/// It also estimates a decode's memory (``DecodeCostEstimating``) from the header, as a real decoder
/// does: the output's pixels, or what a test sets.
final class MockImageDecoder: ImageDecoding, DecodeCostEstimating {
    /// One decode: the tag of the source it read and the recipe it was asked for.
    struct Call: Sendable, Equatable {
        var tag: UInt8?
        var recipe: ImageRecipe
    }

    private struct State {
        var failures: [any Error] = []
        var gate: BlockingGate?
        var estimate: Int?
        var running = 0
        var peakRunning = 0
    }

    private let state = Locked(State())
    /// Every decode started, in order.
    let calls = EventLog<Call>()

    init() {}

    /// Decodes started so far.
    var decodeCount: Int { calls.count }

    /// The most decodes that ran at once.
    var peakConcurrentDecodes: Int { state.withLock { $0.peakRunning } }

    /// The next decodes throw these, one each, in order (after the gate, if any).
    func failNext(_ errors: any Error...) {
        state.withLock { $0.failures.append(contentsOf: errors) }
    }

    /// Holds every decode from now on at `gate` (on its decode thread) until the gate opens.
    func hold(at gate: BlockingGate?) {
        state.withLock { $0.gate = gate }
    }

    /// What ``estimatedDecodeMemory(_:recipe:)`` answers from now on; `nil`: the output's pixels.
    func setEstimate(_ bytes: Int?) {
        state.withLock { $0.estimate = bytes }
    }

    /// Returns once `count` decodes have started.
    func waitForDecodes(_ count: Int) async throws {
        try await calls.waitForCount(count, "decodes started")
    }

    func decode(_ data: Data, recipe: ImageRecipe) throws -> Image {
        let header = try? TestImage.header(of: data)
        calls.append(Call(tag: header?.tag, recipe: recipe))
        let (gate, failure) = state.withLock { state -> (BlockingGate?, (any Error)?) in
            state.running += 1
            state.peakRunning = max(state.peakRunning, state.running)
            return (state.gate, state.failures.isEmpty ? nil : state.failures.removeFirst())
        }
        defer { state.withLock { $0.running -= 1 } }
        try gate?.wait()
        if let failure { throw failure }
        let source = try TestImage.header(of: data)
        let size = TestImage.size(of: recipe, width: source.width, height: source.height)
        return TestImage.image(width: size.width, height: size.height, tag: source.tag, format: source.format)
    }

    func estimatedDecodeMemory(_ data: Data, recipe: ImageRecipe) throws -> Int {
        let source = try TestImage.header(of: data)
        if let estimate = state.withLock({ $0.estimate }) { return estimate }
        let size = TestImage.size(of: recipe, width: source.width, height: source.height)
        return size.width * size.height
    }
}

/// A ``MockImageDecoder`` that keeps bases (``ThumbnailDeriving``): the source at the largest scale
/// of 1, 2, 4 or 8 that still has the thumbnail's pixels; a later thumbnail that the base has enough
/// pixels for is made from it (a derivation, counted), any other is decoded anew.
final class MockDerivingDecoder: ThumbnailDeriving {
    /// Counts the decodes (those that keep a base among them).
    let decoder = MockImageDecoder()
    /// Every thumbnail made from a base, in order.
    let derivations = EventLog<ImageRecipe>()

    init() {}

    func decode(_ data: Data, recipe: ImageRecipe) throws -> Image {
        try decoder.decode(data, recipe: recipe)
    }

    func decodeKeepingBase(_ data: Data, recipe: ImageRecipe) throws -> (image: Image, base: ThumbnailBase?) {
        let image = try decoder.decode(data, recipe: recipe)
        let source = try TestImage.header(of: data)
        var scale = 1
        while scale < 8, source.width / (scale * 2) >= image.width, source.height / (scale * 2) >= image.height {
            scale *= 2
        }
        let base = TestImage.image(
            width: source.width / scale, height: source.height / scale, tag: source.tag, format: source.format
        )
        return (image, ThumbnailBase(image: base, scale: scale, sourceWidth: source.width, sourceHeight: source.height))
    }

    func image(_ recipe: ImageRecipe, from base: ThumbnailBase) throws -> Image? {
        let size = TestImage.size(of: recipe, width: base.sourceWidth, height: base.sourceHeight)
        guard base.image.width >= size.width, base.image.height >= size.height else { return nil }
        derivations.append(recipe)
        return TestImage.image(
            width: size.width, height: size.height, tag: base.image.testTag, format: base.image.sourceFormat
        )
    }
}

/// A latch for work that blocks its thread (a decode on the pipeline's decode threads): `wait()`
/// blocks until `open()`. A wait that outlives ``hangGuard`` throws instead of hanging the suite.
final class BlockingGate: @unchecked Sendable {
    // @unchecked: `isOpen` is only touched with `condition` locked.
    private let condition = NSCondition()
    private var isOpen = false
    /// Threads that reached the gate, in all.
    private var arrivals = 0
    /// Told of each arrival (for tests that await "a decode is held").
    let arrived = EventLog<Int>()

    init() {}

    func open() {
        condition.lock()
        isOpen = true
        condition.broadcast()
        condition.unlock()
    }

    func wait() throws {
        condition.lock()
        arrivals += 1
        let arrival = arrivals
        condition.unlock()
        arrived.append(arrival)
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date().addingTimeInterval(Double(hangGuard.components.seconds))
        while !isOpen {
            if !condition.wait(until: deadline) { throw HangGuardExpired(waitingFor: "a blocking gate to open") }
        }
    }
}
