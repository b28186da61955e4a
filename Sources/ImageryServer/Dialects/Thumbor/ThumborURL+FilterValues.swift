import Foundation
import Imagery

/// What thumbor filters' arguments name beside numbers: the image of `watermark()` and `frame()`, and
/// colours.
extension ThumborURL {
    /// `watermark(IMAGE,X,Y,ALPHA[,W_RATIO,H_RATIO])`, as thumbor places it (``ImageRecipe/Watermark/Paste``):
    /// IMAGE a URL (loaded as a source is: the same guard, limits and caches) or a configured watermark's
    /// name (or a URL or path whose last part, with or without its extension, is one); X and Y pixels
    /// from the left or top (negative: from the right or bottom), `Np` a percentage of the side,
    /// `center` or `repeat`; ALPHA the transparency 0...100; the ratios the largest width and height in
    /// % of the image's (`none`: follow the other).
    static func watermark(_ filter: ThumborFilter, watermarks: [String: String]) throws -> ImageRecipe.Watermark {
        try filter.expect(
            4, optional: 2, "an image, x, y, alpha (0 to 100), and optionally the width and height ratios")
        let arguments = filter.arguments
        let image = unquoted(arguments[0])
        let decoded = image.removingPercentEncoding ?? image
        let last = decoded.split(separator: "/").last.map(String.init) ?? decoded
        let stem = last.split(separator: ".").first.map(String.init) ?? last
        let mark: ImageRecipe.Watermark.Mark =
            if let id = [decoded, last, stem].lazy.compactMap({ watermarks[$0] }).first {
                .image(id)
            } else {
                .linked(.source(try linkedURL(image, filter: "watermark")))
            }
        func position(_ text: String, _ name: String) throws -> ImageRecipe.Watermark.Paste.Position {
            switch text {
            case "center": return .center
            case "repeat": return .repeat
            default:
                let fromEnd = text.hasPrefix("-")
                var digits = fromEnd ? text.dropFirst() : Substring(text)
                let percent = digits.hasSuffix("p")
                if percent { digits = digits.dropLast() }
                guard !digits.isEmpty, digits.count < 10, digits.allSatisfy(\.isASCIIDigit), let value = Int(digits)
                else {
                    throw filter.dropped(
                        "thumbor filter watermark's \(name) must be pixels (-10), a percentage (20p, -20p), center or repeat: \(text)"
                    )
                }
                return percent ? .percent(value, fromEnd: fromEnd) : .pixels(value, fromEnd: fromEnd)
            }
        }
        func ratio(_ index: Int, _ name: String) throws -> Double? {
            guard index < arguments.count, arguments[index] != "none" else { return nil }
            let value = try filter.integer(index, name)
            guard value > 0 else {
                throw ServerError.badParameter(
                    "thumbor filter watermark's \(name) must be above 0 (a % of the image's side) or none")
            }
            return Double(value) / 100
        }
        let paste = ImageRecipe.Watermark.Paste(
            x: try position(arguments[1], "x"), y: try position(arguments[2], "y"),
            widthRatio: try ratio(4, "w_ratio"), heightRatio: try ratio(5, "h_ratio"),
            // thumbor: 100 and above are invisible alike
            transparency: min(100, try filter.integer(3, "alpha", negative: false))
        )
        var watermark = ImageRecipe.Watermark(mark: mark)
        watermark.placement = .pasted(paste)
        return watermark
    }

    /// A filter's image argument as a source URL: unquoted, percent-decoded, `http://` when it has no scheme.
    /// - Throws: A 400 (thumbor's grammar takes any text there, and its loader then fails: not dropped).
    static func linkedURL(_ argument: String, filter: String) throws -> URL {
        do {
            return try sourceURL(Substring(unquoted(argument)))
        } catch {
            throw ServerError.badParameter("thumbor filter \(filter)'s image must be an http or https URL: \(argument)")
        }
    }

    /// thumbor's `String` argument: without the single quotes around it, if it has them.
    static func unquoted(_ text: String) -> String {
        text.count >= 2 && text.hasPrefix("'") && text.hasSuffix("'") ? String(text.dropFirst().dropLast()) : text
    }

    /// A thumbor colour: hex without `#` (`fff`, `ff0000`), `transparent`, or a CSS name (``ThumborColorNames``).
    static func color(_ text: String, filter: String) throws -> ImageRecipe.Color {
        let lowered = text.lowercased()
        if lowered == "auto" || lowered == "blur" {
            throw ServerError.badParameter(
                "thumbor filter \(filter)(\(lowered)) is not supported: give a colour (hex or a name)")
        }
        let hex = lowered == "transparent" ? "00000000" : ThumborColorNames.hex[lowered] ?? lowered
        guard let color = ImageRecipe.Color(hex: hex) else {
            throw ServerError.badParameter(
                "thumbor filter \(filter) takes a colour: hex without # (ff8800), transparent, or a name like white")
        }
        return color
    }
}
