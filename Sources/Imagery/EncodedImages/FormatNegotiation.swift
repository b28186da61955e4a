/// Which formats an `Accept` header may choose for an encoded image, and in which order.
///
/// A client names the formats it shows (`Accept: image/avif,image/webp,*/*`): the first of
/// ``candidates`` it names with a weight above 0 is written (wildcards do not count: a client that
/// shows WebP says so by name), an animation getting the first named one that animates. The
/// standard order is bytes at the same perceived quality, each format at its default: on the
/// project's corpus at 256 px AVIF needs 0.71x to 0.76x JPEG's bytes, WebP 0.82x to 0.86x, JPEG XL
/// 0.84x to 1.04x (BENCHMARKS.md, issue 28).
public struct FormatNegotiation: Sendable, Hashable {
    /// The formats `Accept` may choose, the one preferred first. Default AVIF, WebP, JPEG XL.
    public var candidates: [ImageFormat]
    /// Formats that replace even a format asked for when `Accept` names them, first first (imgproxy's
    /// `ENFORCE_AVIF`, `ENFORCE_WEBP`); an animation keeps a format that animates. Default none.
    public var enforced: [ImageFormat]

    /// AVIF, then WebP, then JPEG XL; nothing enforced.
    public static let standard = FormatNegotiation()

    /// - Parameters:
    ///   - candidates: The formats `Accept` may choose, the one preferred first.
    ///   - enforced: Formats that replace even a format asked for when `Accept` names them.
    public init(candidates: [ImageFormat] = [.avif, .webp, .jxl], enforced: [ImageFormat] = []) {
        self.candidates = candidates
        self.enforced = enforced
    }

    /// The output for a request that asks for `asked` (`nil`: no format) with `accept`:
    /// 1. the first of ``enforced`` that `accept` names;
    /// 2. else `asked`;
    /// 3. else the first of ``candidates`` that `accept` names;
    /// 4. else `otherwise`.
    /// - Parameters:
    ///   - asked: The format the request names, if any.
    ///   - otherwise: The output when nothing is asked or accepted (``OutputFormat/source`` usually).
    ///   - accept: The request's `Accept` header.
    public func output(asked: ImageFormat?, otherwise: OutputFormat, accept: String?) -> OutputFormat {
        if !enforced.isEmpty, let enforced = Self.choice(among: enforced, accept: AcceptHeader(accept)) {
            return enforced
        }
        if let asked { return .format(asked) }
        return Self.choice(among: candidates, accept: AcceptHeader(accept)) ?? otherwise
    }

    /// Whether the output depends on `Accept` (a response says `Vary: Accept`) when `asked` is the format asked for.
    /// - Parameter asked: The format the request names, if any.
    public func variesWithAccept(asked: ImageFormat?) -> Bool {
        !enforced.isEmpty || (asked == nil && !candidates.isEmpty)
    }

    private static func choice(among formats: [ImageFormat], accept: AcceptHeader) -> OutputFormat? {
        var first: ImageFormat?
        var animating: ImageFormat?
        for format in formats where accept.accepts(format.mimeType) {
            if first == nil { first = format }
            if animating == nil, format.canAnimate { animating = format }
        }
        guard let first else { return nil }
        return .negotiated(first, animation: first.canAnimate ? nil : animating)
    }
}
