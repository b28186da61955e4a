import Foundation
import Imagery

/// The reading of imgproxy's option arguments: format names, and one option's arguments with its ranges and messages.
extension ImgproxyOptions {
    /// The format imgproxy names `name` (`jpg` or `jpeg`, `png`, ..., any case), if it is one written here.
    static func format<Name: StringProtocol>(named name: Name) -> ImageFormat? {
        Vocabulary.formats.value(name.lowercased(), in: .imgproxy)
    }

    /// The formats imgproxy's URLs and settings name, as a list for messages.
    static var formatNames: String { Vocabulary.formats.names(in: .imgproxy).joined(separator: ", ") }

    /// The formats imgproxy names (`jpeg`, `png`, ... as its settings list them).
    /// - Throws: ``ConfigurationFileError`` naming the first that is not one written here.
    static func formats(named names: [String]) throws(ConfigurationFileError) -> [ImageFormat] {
        var formats: [ImageFormat] = []
        for name in names {
            guard let format = format(named: name) else {
                throw ConfigurationFileError(message: "\(name) is not a format read here (\(formatNames))")
            }
            formats.append(format)
        }
        return formats
    }

    /// One option's arguments, read with imgproxy's rules and refused with its name.
    struct Reader {
        let option: ImgproxyURL.Option
        var arguments: [Substring] { option.arguments }

        subscript(index: Int) -> Substring { option.arguments[index] }

        func invalid(_ index: Int, _ expected: String) -> ServerError {
            ServerError.badParameter("imgproxy \(option.name): \(self[index]) is not \(expected)")
        }

        func invalidCount() -> ServerError {
            ServerError.badParameter("imgproxy \(option.name) has the wrong number of arguments (\(arguments.count))")
        }

        func count(_ range: ClosedRange<Int>) throws {
            guard range.contains(arguments.count) else { throw invalidCount() }
        }

        /// Go's `strconv.ParseBool` (`1`, `t`, `true`, ...); anything else is false, as imgproxy treats it.
        func bool(_ index: Int) -> Bool {
            ["1", "t", "T", "true", "TRUE", "True"].contains(self[index])
        }

        /// A whole number in `range` (0 or more unless it says).
        func integer(_ index: Int, in range: ClosedRange<Int> = 0...Int(Int32.max)) throws -> Int {
            do { return try ArgumentReader.integer(self[index], in: range) } catch {
                throw invalid(index, error.phrase)
            }
        }

        /// A decimal number that `valid` takes, else `expected` ("a number above 0").
        func number(_ index: Int, _ expected: String, _ valid: (Double) -> Bool) throws -> Double {
            do {
                return try ArgumentReader.number(self[index], expected, where: valid)
            } catch {
                throw invalid(index, error.phrase)
            }
        }

        /// `METHOD[:TARGET[:MIN[:MAX[:ALLOWED_ERROR]]]]`, an empty argument the server's setting. Methods:
        /// `none`, `size` (a target in bytes) and `ssimulacra2` (a target score, 0 to 100: Imagery's
        /// measure); imgproxy Pro's `dssim` and `ml` are refused (neither is measured here).
        func autoQuality() throws -> AutoQualityChoice {
            func optional<T>(_ index: Int, _ read: (Int) throws -> T) rethrows -> T? {
                index < arguments.count && !self[index].isEmpty ? try read(index) : nil
            }
            let minimum = try optional(2) { try quality($0) }
            let maximum = try optional(3) { try quality($0) }
            var auto = AutoQuality(
                minimum: minimum.flatMap { $0 > 0 ? $0 : nil }, maximum: maximum.flatMap { $0 > 0 ? $0 : nil })
            switch self[0] {
            case "none":
                return .fixed
            case "size":
                auto.target = try optional(1) { .bytes(max(1, try integer($0))) }
            case "ssimulacra2":
                auto.target = try optional(1) {
                    .ssimulacra2(try number($0, "a SSIMULACRA2 score from 0 to 100") { (0...100).contains($0) })
                }
                auto.tolerance = try optional(4) { try number($0, "a number, 0 or more") { $0 >= 0 && $0.isFinite } }
            case "dssim", "ml":
                throw invalid(
                    0,
                    "a method measured here: size or ssimulacra2 (imgproxy Pro's DSSIM and ML are not; a SSIMULACRA2 target of 70 is about JPEG quality 80's)"
                )
            default:
                throw invalid(0, "an autoquality method (none, size, ssimulacra2)")
            }
            return .search(auto)
        }

        /// A quality: 0 (the default) to 100.
        func quality(_ index: Int) throws -> Int { try integer(index, in: 0...100) }

        /// A resizing type (``Vocabulary/sizingModes``).
        func resizingType(_ index: Int) throws -> ImageRecipe.Sizing.Mode {
            do {
                return try ArgumentReader.word(self[index], in: Vocabulary.sizingModes, of: .imgproxy)
            } catch {
                throw invalid(index, error.phrase)
            }
        }

        /// `EXTEND[:GRAVITY[:X:Y]]` from argument `start`: the gravity to extend by, or `nil` (not extended).
        func extend(from start: Int) throws -> ImageRecipe.OffsetGravity? {
            guard start < arguments.count, arguments.count - start <= 4 else { throw invalidCount() }
            guard bool(start) else { return nil }
            return arguments.count > start + 1
                ? try gravity(from: start + 1, smart: false) : ImageRecipe.OffsetGravity(.center)
        }

        /// imgproxy's format name at `index` (`svg` only passes an SVG source on: no raster is made a vector).
        func format(_ index: Int) throws -> ImageFormat {
            guard let format = ImgproxyOptions.format(named: self[index]) else {
                throw invalid(index, "a format written here (\(ImgproxyOptions.formatNames))")
            }
            return format
        }

        /// `TYPE[:X:Y]` from argument `start`: `ce`, `no`, `so`, `ea`, `we`, `noea`, `nowe`, `soea`, `sowe`
        /// with offsets, `sm` (smart, where `smart` allows it) and `fp:X:Y` (a focal point).
        func gravity(from start: Int, smart: Bool) throws -> ImageRecipe.OffsetGravity {
            let rest = arguments.count - start
            guard rest >= 1 else { throw invalidCount() }
            switch self[start] {
            case "sm" where smart:
                guard rest == 1 else { throw invalidCount() }
                return ImageRecipe.OffsetGravity(.smart(.attention))
            case "fp":
                guard rest == 3 else { throw invalidCount() }
                let x =
                    self[start + 1].isEmpty
                    ? 0 : try number(start + 1, "a fraction from 0 to 1") { (0...1).contains($0) }
                let y =
                    self[start + 2].isEmpty
                    ? 0 : try number(start + 2, "a fraction from 0 to 1") { (0...1).contains($0) }
                return ImageRecipe.OffsetGravity(.focalPoint(x: x, y: y))
            default:
                guard let gravity = Reader.placement(self[start]) else {
                    let names = Reader.placementNames + (smart ? ", sm" : "")
                    throw invalid(start, "a gravity (\(names), fp:X:Y)")
                }
                guard rest <= 3 else { throw invalidCount() }
                func offset(_ index: Int) throws -> Double {
                    guard index < arguments.count, !self[index].isEmpty else { return 0 }
                    return try number(index, "a number (pixels, or a fraction of the side below 1)") { $0.isFinite }
                }
                return ImageRecipe.OffsetGravity(gravity, x: try offset(start + 1), y: try offset(start + 2))
            }
        }

        /// A gravity by imgproxy's short name (`ce`, `no`, ..., `sowe`) with offsets.
        static func offsetGravity(_ name: Substring, x: Double, y: Double) -> ImageRecipe.OffsetGravity {
            ImageRecipe.OffsetGravity(placement(name) ?? .center, x: x, y: y)
        }

        /// An edge, a corner or the centre by imgproxy's short name (``Vocabulary/gravities``: not `sm`).
        static func placement(_ name: Substring) -> ImageRecipe.Gravity? {
            guard let gravity = Vocabulary.gravities.value(name, in: .imgproxy), gravity.isPlacement else { return nil }
            return gravity
        }

        /// imgproxy's names of the edges, corners and centre, for messages.
        static let placementNames = Vocabulary.gravities.names(in: .imgproxy).filter { placement(Substring($0)) != nil }
            .joined(separator: ", ")

        /// `RGB` or `RRGGBB` hex, `R:G:B` (0...255 each), or nothing (no background).
        func color() throws -> ImageRecipe.Color? {
            switch arguments.count {
            case 1:
                if self[0].isEmpty { return nil }
                guard [3, 6].contains(self[0].count), !self[0].hasPrefix("#"),
                    let color = ImageRecipe.Color(hex: String(self[0]))
                else {
                    throw invalid(0, "a hex colour (RGB or RRGGBB)")
                }
                return color
            case 3:
                let values = try (0..<3).map { index in
                    guard let value = UInt8(self[index]) else { throw invalid(index, "a number from 0 to 255") }
                    return value
                }
                return ImageRecipe.Color(red: values[0], green: values[1], blue: values[2])
            default:
                throw invalidCount()
            }
        }
    }
}
