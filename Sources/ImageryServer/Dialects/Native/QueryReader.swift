import Foundation
import Imagery

/// Typed reads of query parameters (``ArgumentReader``), each refusing a bad value with a message that
/// names the parameter and what it accepts (one wording for every parameter of a kind).
struct QueryReader {
    let query: [String: String]

    init(_ query: [String: String]) {
        self.query = query
    }

    func integer(_ name: String, in range: ClosedRange<Int>) throws -> Int? {
        guard let text = query[name] else { return nil }
        do {
            return try ArgumentReader.integer(text, in: range)
        } catch {
            throw ServerError.badParameter("\(name) must be \(error.phrase)")
        }
    }

    func number(_ name: String, in range: ClosedRange<Double>) throws -> Double? {
        guard let text = query[name] else { return nil }
        do {
            return try ArgumentReader.number(text, in: range)
        } catch {
            throw ServerError.badParameter("\(name) must be \(error.phrase)")
        }
    }

    /// `1`, `true`, `0` or `false`.
    func bool(_ name: String) throws -> Bool? {
        guard let text = query[name] else { return nil }
        switch text {
        case "1", "true": return true
        case "0", "false": return false
        default: throw ServerError.badParameter("\(name) must be true or false (1 or 0)")
        }
    }

    /// One of `choices`' keys (built only when the parameter is there: most requests name few).
    func choice<Value>(_ name: String, _ choices: @autoclosure () -> [String: Value]) throws -> Value? {
        guard let text = query[name] else { return nil }
        let choices = choices()
        guard let value = choices[text] else {
            let names = choices.keys.sorted { (Int($0) ?? 0, $0) < (Int($1) ?? 0, $1) }
            throw ServerError.badParameter("\(name) must be one of \(names.joined(separator: ", "))")
        }
        return value
    }

    /// An edge or corner, `smart` (libvips' attention), `entropy`, or `X,Y`: a focal point in fractions of the image.
    func gravity(_ name: String) throws -> ImageRecipe.Gravity? {
        guard let text = query[name] else { return nil }
        if let gravity = Vocabulary.gravities.value(text, in: .native) { return gravity }
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        if parts.count == 2, let x = try? ArgumentReader.number(parts[0], in: 0...1),
            let y = try? ArgumentReader.number(parts[1], in: 0...1)
        {
            return .focalPoint(x: x, y: y)
        }
        let names = Vocabulary.gravities.names(in: .native).joined(separator: ", ")
        throw ServerError.badParameter("\(name) must be \(names), or X,Y (a focal point, fractions from 0 to 1)")
    }

    /// `X,Y,WIDTH,HEIGHT` (a rectangle) or `WIDTH,HEIGHT` (placed by `gravity`), each a whole number of
    /// pixels or a fraction of the image's side (written with a point: `0.5`).
    func crop(_ name: String, gravity: ImageRecipe.Gravity) throws -> ImageRecipe.Crop? {
        guard let text = query[name] else { return nil }
        let message =
            "\(name) must be X,Y,WIDTH,HEIGHT or WIDTH,HEIGHT: whole pixels, or fractions of the image written with a point (0.25); sizes above 0"
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        func length(_ part: Substring, size: Bool) throws -> ImageRecipe.Length {
            if part.contains(".") {
                guard let fraction = ArgumentReader.decimal(part),
                    size ? (fraction > 0 && fraction <= 1) : (0..<1).contains(fraction)
                else {
                    throw ServerError.badParameter(message)
                }
                return .fraction(fraction)
            }
            guard let pixels = Int(part), size ? pixels > 0 : pixels >= 0 else {
                throw ServerError.badParameter(message)
            }
            return .pixels(pixels)
        }
        switch parts.count {
        case 2:
            return ImageRecipe.Crop(
                width: try length(parts[0], size: true), height: try length(parts[1], size: true),
                placement: .gravity(gravity))
        case 4:
            return ImageRecipe.Crop(
                width: try length(parts[2], size: true), height: try length(parts[3], size: true),
                placement: .origin(x: try length(parts[0], size: false), y: try length(parts[1], size: false))
            )
        default:
            throw ServerError.badParameter(message)
        }
    }

    /// `ALL`, `VERTICAL,HORIZONTAL` or `TOP,RIGHT,BOTTOM,LEFT` (as CSS), in `range`.
    func insets(_ name: String, in range: ClosedRange<Int>) throws -> ImageRecipe.Insets? {
        guard let text = query[name] else { return nil }
        let values = text.split(separator: ",", omittingEmptySubsequences: false).map { Int($0) }
        guard values.allSatisfy({ $0.map(range.contains) ?? false }) else {
            throw ServerError.badParameter(
                "\(name) must be 1, 2 or 4 whole numbers from \(range.lowerBound) to \(range.upperBound) (CSS order)")
        }
        let sides = values.compactMap { $0 }
        switch sides.count {
        case 1: return ImageRecipe.Insets(all: sides[0])
        case 2: return ImageRecipe.Insets(top: sides[0], right: sides[1], bottom: sides[0], left: sides[1])
        case 4: return ImageRecipe.Insets(top: sides[0], right: sides[1], bottom: sides[2], left: sides[3])
        default:
            throw ServerError.badParameter(
                "\(name) must be 1, 2 or 4 whole numbers from \(range.lowerBound) to \(range.upperBound) (CSS order)")
        }
    }

    /// A hex colour: `RGB`, `RRGGBB` or `RRGGBBAA`.
    func color(_ name: String) throws -> ImageRecipe.Color? {
        guard let text = query[name] else { return nil }
        guard let color = ImageRecipe.Color(hex: text) else {
            throw ServerError.badParameter("\(name) must be a hex colour: RGB, RRGGBB or RRGGBBAA (ff8800)")
        }
        return color
    }
}
