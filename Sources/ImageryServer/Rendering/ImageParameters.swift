import Foundation
import Hummingbird
import Imagery

/// What one image request asks for, whatever URL syntax wrote it: a source, a recipe and an output.
/// Each syntax is a parser into this (``Dialects/Native``: the `/image` query; ``ThumborURL``;
/// ``ImgproxyURL``), and everything after it (result storage, the pipeline, admission, headers) is
/// one path, so that one output asked for in any syntax is one variant in every cache.
package struct ImageParameters: Sendable, Hashable {
    package internal(set) var url: URL
    /// What to make of the source (for a placeholder: its small version).
    package let recipe: ImageRecipe
    /// `placeholder=`: a hash or a tiny image instead of the image.
    package let placeholder: Placeholder?
    package let format: ImageFormat?
    /// How the output is written (its quality `nil` unless `q` is given: the format's default then).
    package let encoding: EncodingOptions
    package var quality: Int? { encoding.quality }
    /// Whether the quality is chosen per image (`q=auto`, imgproxy's `autoquality`) or fixed (`autoquality:none`);
    /// `nil`: as the server's ``AutoQualitySettings`` say for a request that asks for no quality.
    package var autoQuality: AutoQualityChoice?
    /// Whether the request names a quality (`q`, or one for some format): the server's default search is not for it.
    var namesAQuality: Bool { quality != nil || !formatQualities.isEmpty }
    /// Whether `Accept` chooses the format when none is asked for (else: the source's); default `true`.
    package var negotiates = true
    /// Qualities by output format, for when ``encoding`` has none (imgproxy's `format_quality`); the
    /// configuration's qualities after these.
    package var formatQualities: [ImageFormat: Int] = [:]
    /// imgproxy's `cachebuster`: another value is another response, made from the source loaded anew
    /// (not from the caches), so that a changed source shows at once.
    package var cacheBuster: String?
    /// When the source is answered as it is, unprocessed (imgproxy's `skip_processing` and `raw`); `nil`: never.
    package var passthrough: Passthrough?
    /// The formats an output without a format asked for (or negotiated) may keep from its source, in order
    /// of preference (imgproxy's `PREFERRED_FORMATS`: a source in another format gets the first that holds
    /// its animation and transparency); `nil`: the source's format by `OutputFormat.source`'s rule.
    package var preferredFormats: [ImageFormat]?
    /// Formats that replace even a format asked for when `Accept` takes them, first first (imgproxy's
    /// `ENFORCE_WEBP`, `ENFORCE_AVIF`, `ENFORCE_JXL`); an animation keeps a format that animates.
    package var enforcedFormats: [ImageFormat] = []
    /// The formats `Accept` may choose, the one preferred first (``negotiable``; thumbor's `AUTO_WEBP`:
    /// WebP; imgproxy's `AUTO_JXL`, `AUTO_AVIF`, `AUTO_WEBP`: those, in that order, as imgproxy).
    package var negotiableFormats = ImageParameters.negotiable
    /// Answers a PNG source without alpha as JPEG when no format is asked for or negotiated
    /// (thumbor's `autojpg()` and `AUTO_PNG_TO_JPG`); default `false`.
    package var opaquePNGAsJPEG = false
    /// The output when no format is asked for or negotiated, where the URL's peer has its own rule
    /// (thumbor's table: ``ThumborURL/outputFormats``); `nil`: ``preferredFormats`` or the source's format by
    /// `OutputFormat.source`'s rule (with ``opaquePNGAsJPEG``).
    package var unaskedOutputRule: OutputFormat?
    /// Options the URL names that are not applied, as its syntax's peer skips them (thumbor's filters
    /// it has not loaded or cannot read): named in the response, counted and logged, never part of a
    /// cache key (the output is the one the URL without them makes).
    package var skipped: [SkippedOption] = []

    /// When a source is answered as it is: no decode, no encode (still only an image within the pixel limit).
    package enum Passthrough: Sendable, Hashable {
        /// A source in one of these formats, when no other output format is asked for (imgproxy's `skip_processing`).
        case formats(Set<ImageFormat>)
        /// Any source, whatever else is asked (imgproxy's `raw`).
        case always

        /// Whether a source of `format` is answered as it is when `asked` is the output format asked for (`nil`: none).
        func applies(to format: ImageFormat, asked: ImageFormat?) -> Bool {
            switch self {
            case .always: true
            case .formats(let formats): formats.contains(format) && (asked == nil || asked == format)
            }
        }

        var cacheToken: String {
            switch self {
            case .always: "|raw"
            case .formats(let formats): "|skp:" + formats.map(\.rawValue).sorted().joined(separator: ",")
            }
        }
    }

    /// Parameters made by another URL syntax (``ThumborURL``): the same source, recipe and output.
    package init(url: URL, recipe: ImageRecipe, format: ImageFormat?, encoding: EncodingOptions, negotiates: Bool) {
        (self.url, self.format, self.encoding, self.negotiates, placeholder) = (url, format, encoding, negotiates, nil)
        self.recipe = Self.framed(recipe, for: format)
    }

    /// The same output made from another source (the fallback image).
    func from(_ source: URL) -> ImageParameters {
        var parameters = self
        parameters.url = source
        parameters.cacheBuster = nil
        return parameters
    }

    /// `recipe` taking the first frame when `format` cannot animate (no other frame is decoded then).
    static func framed(_ recipe: ImageRecipe, for format: ImageFormat?) -> ImageRecipe {
        guard recipe.frame == nil, let format, !format.canAnimate else { return recipe }
        var framed = recipe
        framed.frame = 0
        return framed
    }

    /// Everything but the output format, as a cache key: the URL as given, the recipe, the encoding.
    package var responseKey: String {
        "\(url.absoluteString)|\(recipe)|\(encoding)" + (placeholder.map { "|" + $0.rawValue } ?? "") + outputKey
            + (passthrough?.cacheToken ?? "")
            + (autoQuality?.cacheToken ?? "")
    }

    /// What selects the output beyond the recipe and the encoding, when set: per-format qualities and
    /// the cache buster (empty for most requests).
    var outputKey: String {
        guard !formatQualities.isEmpty || cacheBuster != nil else { return "" }
        let qualities = formatQualities.sorted { $0.key.rawValue < $1.key.rawValue }.map {
            "\($0.key.rawValue)=\($0.value)"
        }
        return "|fq:" + qualities.joined(separator: ",") + (cacheBuster.map { "|cb:" + $0 } ?? "")
    }

    /// The encoding for `format`: ``encoding``, its quality from ``formatQualities`` when it has none.
    func encoding(for format: ImageFormat?) -> EncodingOptions {
        var options = encoding
        if options.quality == nil, let format { options.quality = formatQualities[format] }
        return options
    }

    /// The hash placeholder asked for instead of an image (text), if any.
    var hashPlaceholder: Placeholder? { placeholder.flatMap { $0.isHash ? $0 : nil } }

    /// Which formats `Accept` may choose: ``negotiableFormats`` (none when the request does not
    /// negotiate), and ``enforcedFormats``. The library's negotiation (`FormatNegotiation`): the
    /// first of AVIF, WebP and JPEG XL that `Accept` names with a weight above 0, an animation the
    /// first of them that animates (WebP). The order is bytes at the same perceived quality, each
    /// format at its default (BENCHMARKS.md, issue 28); AVIF's encode, the dearest, adds about 40 % to
    /// a cold thumbnail's cost, once (result storage keeps it).
    var negotiation: FormatNegotiation {
        FormatNegotiation(candidates: negotiates ? negotiableFormats : [], enforced: enforcedFormats)
    }

    /// What the response will be encoded as, decided before any image is loaded: the format asked
    /// for, or the one `Accept` chooses (``negotiation``), else the source's by the request's rule
    /// (``preferredFormats``, ``opaquePNGAsJPEG``). (A hash placeholder is no image: ``hashPlaceholder``.)
    /// - Parameter accept: The request's `Accept` header.
    package func outputChoice(accept: String?) -> OutputFormat {
        negotiation.output(asked: format, otherwise: unaskedOutput, accept: accept)
    }

    /// The output when no format is asked for or accepted.
    var unaskedOutput: OutputFormat {
        if let unaskedOutputRule { return unaskedOutputRule }
        return preferredFormats.map { .preferred($0) } ?? (opaquePNGAsJPEG ? .opaquePNGAsJPEG : .source)
    }

    /// The formats `Accept` may choose, the one preferred first.
    static let negotiable = FormatNegotiation.standard.candidates

    /// Whether the response depends on `Accept` (no `format` parameter): `Vary: Accept`.
    var isNegotiated: Bool {
        negotiation.variesWithAccept(asked: format) && hashPlaceholder == nil
    }
}
