import Foundation

/// Makes one load's previews (``ImagePipeline/ProgressivePreviews``): reads the body as it arrives
/// with the decoder's ``ScanCounting`` reader, decodes the scans complete when
/// ``PreviewStateMachine`` says, and hands each preview out through `deliver`, unless it has the
/// pixels of the last one.
///
/// A preview is handed out under the scheduler's lock, and ``finish()`` takes that lock before the
/// load returns its image: no preview can come after the image. ``finish()`` also cancels a
/// preview's decode still queued and waits for one already running, so none outlives the load.
final class PreviewScheduler: Sendable {
    /// Runs a preview's decode where decodes run; throws `CancellationError` when cancelled before it starts.
    typealias DecodeRunner = @Sendable (_ work: @escaping @Sendable () throws -> Image) async throws -> Image

    private struct State {
        var machine: PreviewStateMachine
        var counter: any ScanCounting
        var decode: Task<Void, Never>?
        /// The last preview handed out.
        var shown: Image?
    }

    private let state: Locked<State>
    private let decoder: any ProgressiveDecoding
    private let recipe: ImageRecipe
    private let time: TimeSource
    private let budget: MemoryBudget?
    private let run: DecodeRunner
    private let isWanted: @Sendable () -> Bool
    private let deliver: @Sendable (Image) -> Void

    /// - Parameters:
    ///   - decoder: Counts the scans and decodes the previews.
    ///   - recipe: What each preview is made with (the load's).
    ///   - minimumInterval: The least time between two previews, on `time`.
    ///   - budget: Charged each preview's bytes and decode estimate, if set; a preview that does not fit is skipped.
    ///   - run: Runs a decode on the decode threads.
    ///   - isWanted: Whether anyone wants previews now (checked for each chunk).
    ///   - deliver: Hands a preview out; called under the scheduler's lock.
    init(
        decoder: any ProgressiveDecoding, recipe: ImageRecipe, minimumInterval: Duration, time: TimeSource,
        budget: MemoryBudget?, run: @escaping DecodeRunner, isWanted: @escaping @Sendable () -> Bool,
        deliver: @escaping @Sendable (Image) -> Void
    ) {
        self.state = Locked(
            State(machine: PreviewStateMachine(minimumInterval: minimumInterval), counter: decoder.makeScanCounter()))
        self.decoder = decoder
        self.recipe = recipe
        self.time = time
        self.budget = budget
        self.run = run
        self.isWanted = isWanted
        self.deliver = deliver
    }

    /// The body so far (from the loader's thread): starts a preview's decode when one is due.
    /// - Complexity: O(*n*) in the bytes not read before, when a preview could start; O(1) otherwise.
    func receive(_ body: Data) {
        guard state.withLock({ $0.machine.wantsBody }), isWanted() else { return }
        state.withLock { state in
            guard state.machine.wantsBody else { return }
            let scans = state.counter.count(body)
            guard case .decode(let scans) = state.machine.received(scans, now: time.instant()) else { return }
            // Made under the lock, so that `finish` always finds it.
            let prefix = body.prefix(scans.byteCount)
            state.decode = Task { await self.decode(prefix, scans: scans.count) }
        }
    }

    /// The whole body has arrived: no preview starts from now on (one decoding may still be handed out).
    func stop() {
        state.withLock { $0.machine.stop() }
    }

    /// The load ends: nothing is handed out from now on; a preview's decode still queued is
    /// cancelled, and one running is waited for.
    func finish() async {
        let decode = state.withLock { state in
            state.machine.finish()
            return state.decode
        }
        decode?.cancel()
        await decode?.value
    }

    private func decode(_ data: Data, scans: Int) async {
        var image: Image?
        let outcome: PreviewStateMachine.DecodeOutcome
        if let charge = admit(data) {
            do {
                let (decoder, recipe) = (self.decoder, self.recipe)
                image = try await run { try decoder.decodePreview(data, recipe: recipe) }
                outcome = .decoded
            } catch is CancellationError {
                outcome = .skipped
            } catch {
                outcome = .failed
            }
            charge.release()
        } else {
            outcome = .skipped
        }
        // Compared outside the lock: only this decode (one runs at a time) sets `shown`.
        let shown = state.withLock { $0.shown }
        let unchanged = image.map { image in shown.map { Self.samePixels(image, $0) } ?? false } ?? false
        state.withLock { state in
            state.decode = nil
            if state.machine.decodeEnded(unchanged ? .unchanged : outcome, scans: scans, now: time.instant()),
                let image
            {
                state.shown = image
                deliver(image)
            }
        }
    }

    /// Whether two previews look the same (the same size, format and pixels).
    /// - Complexity: O(*n*) in the pixels' bytes, once the sizes agree.
    private static func samePixels(_ a: Image, _ b: Image) -> Bool {
        a.width == b.width && a.height == b.height && a.pixelFormat == b.pixelFormat && a.pixels == b.pixels
    }

    /// Charges the preview's bytes and decode estimate to the budget if they fit now; `nil`: skip it.
    private func admit(_ data: Data) -> Admitted? {
        guard let budget else { return Admitted(reservation: nil) }
        let estimate =
            (decoder as? any DecodeCostEstimating).flatMap { try? $0.estimatedDecodeMemory(data, recipe: recipe) } ?? 0
        return budget.chargeIfRoom(data.count + estimate).map { Admitted(reservation: $0) }
    }

    /// What a preview holds in the budget (nothing without one).
    private struct Admitted {
        let reservation: Reservation?
        func release() { reservation?.release() }
    }
}
