/// When one load's previews are decoded and handed out (``ImagePipeline/ProgressivePreviews``), as
/// a value type: each event returns what to do, done by ``PreviewScheduler`` after unlocking. It
/// holds no tasks, clocks or bytes, so it is tested directly.
///
/// A preview's decode starts when the body holds more complete scans than the last preview decoded,
/// no other preview decodes, and ``minimumInterval`` has passed since the last one was handed out
/// (the first starts as soon as one scan is complete). A decode that ends is handed out unless the
/// load has finished meanwhile, or it shows nothing new (the same pixels as the last one: at a
/// small decode scale the scans of fine detail change nothing). Once the body is complete
/// (``stop()``), or shows no previews to come, or a preview's decode failed, none starts; once the
/// load ends (``finish()``), none is handed out.
struct PreviewStateMachine: Sendable {
    enum Phase: Sendable, Equatable {
        /// Previews may start.
        case open
        /// None starts any more; one decoding may still be handed out.
        case stopped
        /// The load ended: nothing more is handed out.
        case finished
    }

    /// How a preview's decode ended.
    enum DecodeOutcome: Sendable, Equatable {
        /// An image, to hand out.
        case decoded
        /// An image with the same pixels as the last one handed out: not handed out again.
        case unchanged
        /// Left out (no room in the memory budget, or cancelled): a later chunk may try again.
        case skipped
        /// The decoder failed: no more previews for this load (the final decode will say why).
        case failed
    }

    enum ReceiveAction: Sendable, Equatable {
        case none
        /// Decode a preview of these scans.
        case decode(CompletedScans)
    }

    /// The least time between two previews handed out.
    let minimumInterval: Duration
    private(set) var phase = Phase.open
    /// A preview's decode runs.
    private(set) var isDecoding = false
    /// Scans in the latest preview decoded (handed out, or unchanged).
    private(set) var shownScans = 0
    private var lastShown: ContinuousClock.Instant?

    init(minimumInterval: Duration) {
        self.minimumInterval = minimumInterval
    }

    /// Whether a chunk is worth reading now: previews are open and none decodes (a chunk read later
    /// reads the bytes of this one too).
    var wantsBody: Bool { phase == .open && !isDecoding }

    /// The body so far holds `scans` complete (`nil`: it will give no previews) at `now`.
    mutating func received(_ scans: CompletedScans?, now: ContinuousClock.Instant) -> ReceiveAction {
        guard wantsBody else { return .none }
        guard let scans else {
            phase = .stopped
            return .none
        }
        guard scans.count > shownScans else { return .none }
        if let lastShown, lastShown.duration(to: now) < minimumInterval { return .none }
        isDecoding = true
        return .decode(scans)
    }

    /// The decode of a preview of `scans` scans ended at `now`; returns whether to hand it out.
    mutating func decodeEnded(_ outcome: DecodeOutcome, scans: Int, now: ContinuousClock.Instant) -> Bool {
        isDecoding = false
        switch outcome {
        case .skipped:
            return false
        case .unchanged:
            shownScans = max(shownScans, scans)
            return false
        case .failed:
            if phase == .open { phase = .stopped }
            return false
        case .decoded:
            guard phase != .finished else { return false }
            shownScans = scans
            lastShown = now
            return true
        }
    }

    /// The whole body has arrived: the final decode comes next, and no preview starts.
    mutating func stop() {
        if phase == .open { phase = .stopped }
    }

    /// The load ended (with its image, an error, or cancelled): nothing more is handed out.
    mutating func finish() {
        phase = .finished
    }
}
