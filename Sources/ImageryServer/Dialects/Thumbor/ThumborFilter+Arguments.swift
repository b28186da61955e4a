import Foundation
import Imagery

/// thumbor's argument grammar (`BaseFilter`'s `Number`, `PositiveNumber`, `DecimalNumber`,
/// `Boolean`, and each filter's own regular expression), which decides before ``ArgumentReader`` whether a
/// filter is applied at all; its refusals use the reader's phrases. Arguments outside it throw ``Dropped``:
/// thumbor drops such a filter, and the URL's reader skips it (``SkippedOption``) unless the
/// configuration refuses such filters. Values the grammar takes but that are out of range here throw a
/// plain 400: thumbor applies those, so they are never dropped.
extension ThumborFilter {
    /// A filter thumbor drops: arguments its grammar does not match (`sharpen()`, `blur(1.5)`), or a
    /// value it ignores (`format(bmp)`, `max_bytes(0)`). `error` is the 400 answered where such filters
    /// are refused (``ServerConfiguration/Thumbor/refusesBadFilterArguments``).
    struct Dropped: Error {
        let error: ServerError
    }

    /// ``Dropped`` with `message`.
    func dropped(_ message: String) -> Dropped { Dropped(error: .badParameter(message)) }

    /// Fails unless there are from `required` to `required + optional` arguments.
    func expect(_ required: Int, optional: Int = 0, _ shape: String) throws {
        guard (required...(required + optional)).contains(arguments.count) else {
            throw dropped("thumbor filter \(name) takes \(shape)")
        }
    }

    /// Argument `index` as a whole number (`-?\d+`; only `\d+` unless `negative`), kept within ±2³¹.
    func integer(_ index: Int, _ argument: String, negative: Bool = true) throws -> Int {
        let text = index < arguments.count ? arguments[index] : ""
        let digits = negative && text.hasPrefix("-") ? text.dropFirst() : Substring(text)
        guard !digits.isEmpty, digits.allSatisfy(\.isASCIIDigit) else {
            let phrase = negative ? "a whole number" : ArgumentReader.phrase(0...Int(Int32.max))
            throw dropped("thumbor filter \(name)'s \(argument) must be \(phrase): \(text)")
        }
        guard let value = Int(digits.prefix(12)) else { return 0 }
        return (text.hasPrefix("-") ? -1 : 1) * min(value, Int(Int32.max))
    }

    /// Argument `index` as a decimal number (`-?(\d+\.?\d*|\d*\.?\d+)`).
    func decimal(_ index: Int, _ argument: String) throws -> Double {
        let text = index < arguments.count ? arguments[index] : ""
        let body = text.hasPrefix("-") ? text.dropFirst() : Substring(text)
        guard body.contains(where: \.isASCIIDigit), body.filter({ $0 == "." }).count <= 1,
            body.allSatisfy({ $0.isASCIIDigit || $0 == "." }), let value = Double(text), value.isFinite
        else { throw dropped("thumbor filter \(name)'s \(argument) must be a number: \(text)") }
        return value
    }

    /// Argument `index` as thumbor's boolean (`true`, `True`, `1`; `false`, `False`, `0`), or `absent`
    /// when there is no such argument.
    func boolean(_ index: Int, _ argument: String, absent: Bool) throws -> Bool {
        guard index < arguments.count else { return absent }
        switch arguments[index] {
        case "true", "True", "1": return true
        case "false", "False", "0": return false
        default: throw dropped("thumbor filter \(name)'s \(argument) must be true or false: \(arguments[index])")
        }
    }

    /// The colour adjustments, as thumbor 7.8's filters of these names compute them; `nil` for
    /// another filter.
    func adjustment() throws -> ImageRecipe.Adjustment? {
        let adjustment: ImageRecipe.Adjustment
        switch name {
        case "brightness", "contrast":
            try expect(1, "a change from -100 to 100")
            let percent = try integer(0, "change")
            adjustment = name == "brightness" ? .brightness(percent) : .contrast(percent)
        case "saturation":
            try expect(1, "a factor (1: as it is)")
            adjustment = .saturation(try decimal(0, "factor"))
        case "rgb":
            try expect(3, "the changes of red, green and blue, each from -100 to 100")
            adjustment = .channels(
                red: try integer(0, "red"), green: try integer(1, "green"), blue: try integer(2, "blue"))
        case "colorize":
            try expect(4, "the percentages of red, green and blue (0 to 100) and a colour in hex (ff8800)")
            let hex = arguments[3]
            guard hex.count == 6, let color = ImageRecipe.Color(hex: hex) else {
                throw ServerError.badParameter(
                    "thumbor filter colorize's colour must be six hex digits (ff8800): \(hex)")
            }
            adjustment = .colorize(
                red: try integer(0, "red", negative: false), green: try integer(1, "green", negative: false),
                blue: try integer(2, "blue", negative: false), color: color
            )
        case "equalize":
            try expect(0, "no arguments")
            adjustment = .equalize
        case "curve":
            try expect(4, "four curves, for all channels, red, green and blue, each [(x,y),(x,y),...]")
            let names = ["curve of all channels", "red curve", "green curve", "blue curve"]
            let curves = try zip(arguments, names).map { try Self.curve($0, filter: name, argument: $1) }
            adjustment = .curves(.init(all: curves[0], red: curves[1], green: curves[2], blue: curves[3]))
        case "noise":
            try expect(1, optional: 1, "an amount (0 to 255) and an optional seed")
            let seed = arguments.count > 1 ? try integer(1, "seed", negative: false) : 0
            adjustment = .noise(amount: try integer(0, "amount", negative: false), seed: UInt32(clamping: seed))
        case "convolution":
            try expect(
                2, optional: 1, "a matrix (numbers separated by ;), its number of columns, and whether to normalise it")
            let weights = arguments[0].split(separator: ";", omittingEmptySubsequences: false).map { Double($0) }
            guard !weights.isEmpty, weights.allSatisfy({ $0?.isFinite ?? false }),
                arguments[0].allSatisfy({ $0.isASCIIDigit || ".;-".contains($0) })
            else {
                throw dropped("thumbor filter convolution's matrix must be numbers separated by ;: \(arguments[0])")
            }
            let columns = try integer(1, "number of columns", negative: false)
            adjustment = .convolution(
                .init(
                    weights: weights.map { $0! }, columns: columns,
                    normalizes: try boolean(2, "normalisation", absent: true)
                ))
        case "round_corner":
            try expect(
                4, optional: 1,
                "a radius (a or a|b), a colour as red, green and blue (0 to 255), and whether corners are transparent")
            let radii = arguments[0].split(separator: "|", omittingEmptySubsequences: false)
            guard (1...2).contains(radii.count), radii.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCIIDigit) })
            else {
                throw dropped(
                    "thumbor filter round_corner's radius must be a number of pixels, or two as a|b: \(arguments[0])")
            }
            let (a, b) = (Int(radii[0].prefix(9)) ?? 0, Int(radii[radii.count - 1].prefix(9)) ?? 0)
            var channels: [UInt8] = []
            for (index, channel) in ["red", "green", "blue"].enumerated() {
                let value = try integer(index + 1, channel, negative: false)
                guard value <= 255 else {
                    throw ServerError.badParameter(
                        "thumbor filter round_corner's \(channel) must be from 0 to 255: \(value)")
                }
                channels.append(UInt8(value))
            }
            adjustment = .roundCorners(
                horizontal: a, vertical: b, color: .init(red: channels[0], green: channels[1], blue: channels[2]),
                transparent: try boolean(4, "transparency", absent: false)
            )
        default:
            return nil
        }
        if let problem = adjustment.problem {
            throw ServerError.badParameter("thumbor filter \(name): \(problem)")
        }
        return adjustment
    }

    /// `[(x,y),(x,y),...]`, each value 0...255.
    static func curve(_ text: String, filter: String, argument: String) throws -> [ImageRecipe.Adjustment.Curves.Point]
    {
        let failure = ServerError.badParameter(
            "thumbor filter \(filter)'s \(argument) must be points [(x,y),(x,y),...] from 0 to 255, x increasing: \(text)"
        )
        guard text.hasPrefix("["), text.hasSuffix("]") else { throw failure }
        let body = text.dropFirst().dropLast()
        guard body.allSatisfy({ $0.isASCIIDigit || "(),".contains($0) }) else { throw failure }
        var points: [ImageRecipe.Adjustment.Curves.Point] = []
        for pair in body.split(separator: ")", omittingEmptySubsequences: true) {
            let inner = pair.drop { $0 == "," }
            guard inner.hasPrefix("(") else { throw failure }
            let values = inner.dropFirst().split(separator: ",", omittingEmptySubsequences: false)
            guard values.count == 2, let x = UInt8(values[0]), let y = UInt8(values[1]) else { throw failure }
            points.append(.init(x, y))
        }
        guard points.count >= 2, zip(points, points.dropFirst()).allSatisfy({ $0.input < $1.input }) else {
            throw failure
        }
        return points
    }
}
