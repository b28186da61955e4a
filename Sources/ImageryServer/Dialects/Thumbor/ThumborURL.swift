import Foundation

/// A thumbor 7 URL path, split into its parts as thumbor's own pattern splits it (libthumbor's
/// `Url.regex`), before any meaning is given to them (``ThumborURL/parameters(maximumSide:)``):
///
///     /(unsafe|HMAC)/[meta/][trim[:top-left|:bottom-right][:TOLERANCE]/][LxT:RxB/]
///     [adaptive-][full-]fit-in/][-]Wx[-]H/[left|center|right/][top|middle|bottom/][smart/]
///     [filters:NAME(ARGS)[:NAME(ARGS)...]/]IMAGE
///
/// Every part but the image is optional, in that order; a part out of order is taken as the start
/// of the image URI, as thumbor takes it.
struct ThumborURL {
    /// `unsafe`, or the HMAC signature of ``signed``.
    enum Signature: Equatable {
        case unsafe
        case hmac(String)
    }

    /// Where the trim's reference colour is taken.
    enum TrimCorner: String, Equatable {
        case topLeft = "top-left"
        case bottomRight = "bottom-right"
    }

    /// `fit-in` and its forms.
    enum FitIn: Equatable {
        case fitIn
        case adaptive
        case full
        case adaptiveFull
    }

    /// A side of `WxH`: a number of pixels (0: follow the aspect ratio) or the source's own (`orig`).
    enum Side: Equatable {
        case pixels(Int)
        case original
    }

    let signature: Signature
    /// The path after the signature, as thumbor signs it.
    let signed: Substring
    var meta = false
    var trim: (corner: TrimCorner, tolerance: Int)?
    /// (left, top, right, bottom), in source pixels.
    var crop: (left: Int, top: Int, right: Int, bottom: Int)?
    var fitIn: FitIn?
    var width = Side.pixels(0)
    var height = Side.pixels(0)
    /// `-W`: mirror left and right.
    var horizontalFlip = false
    /// `-H`: mirror top and bottom.
    var verticalFlip = false
    var horizontalAlign = "center"
    var verticalAlign = "middle"
    var smart = false
    /// The filters, in the order written.
    var filters: [ThumborFilter] = []
    /// The image URI as written (percent-encoded or plain).
    var image: Substring = ""

    /// Parses a request path (`/unsafe/300x200/smart/example.com/a.jpg`).
    /// - Throws: A 400 ``ServerError`` when the path has no signature part or no image.
    init(path: Substring) throws {
        DialectParses.count()
        (signature, signed) = try Self.signature(of: path)
        var rest = signed

        /// The next segment (up to `/`), taken when `accept` says it is that part.
        func take(_ accept: (Substring) -> Bool) -> Substring? {
            guard let end = rest.firstIndex(of: "/") else { return nil }
            let segment = rest[..<end]
            guard accept(segment) else { return nil }
            rest = rest[rest.index(after: end)...]
            return segment
        }
        _ = take { $0 == "debug" }
        meta = take { $0 == "meta" } != nil
        if let segment = take(Self.isTrim) { trim = Self.trim(segment) }
        if let segment = take({ Self.crop($0) != nil }) { crop = Self.crop(segment) }
        if let segment = take({ Self.fitIn($0) != nil }) { fitIn = Self.fitIn(segment) }
        if let segment = take({ Self.dimensions($0) != nil }), let dimensions = Self.dimensions(segment) {
            (horizontalFlip, width, verticalFlip, height) = dimensions
        }
        if let segment = take({ ["left", "right", "center"].contains($0) }) { horizontalAlign = String(segment) }
        if let segment = take({ ["top", "bottom", "middle"].contains($0) }) { verticalAlign = String(segment) }
        smart = take { $0 == "smart" } != nil
        // filters:...) up to the first ")/" (thumbor's non-greedy `filters:(.+?\))/`).
        if rest.hasPrefix("filters:"), let end = rest.range(of: ")/") {
            let list = rest[rest.index(rest.startIndex, offsetBy: 8)..<rest.index(after: end.lowerBound)]
            filters = try ThumborFilter.list(list)
            rest = rest[end.upperBound...]
        }
        guard !rest.isEmpty else { throw ServerError.badParameter("a thumbor URL ends with the image's URL") }
        image = rest
    }

    /// The signature and the signed rest of `path` (after the signature's `/`), before anything else
    /// is read: a forged URL is refused before its options are.
    static func signature(of path: Substring) throws -> (Signature, signed: Substring) {
        let path = path.drop { $0 == "/" }
        guard let slash = path.firstIndex(of: "/") else {
            throw ServerError.badParameter("a thumbor URL is /unsafe/OPTIONS/IMAGE or /SIGNATURE/OPTIONS/IMAGE")
        }
        let first = path[..<slash]
        return (first == "unsafe" ? .unsafe : .hmac(String(first)), path[path.index(after: slash)...])
    }

    static func isTrim(_ segment: Substring) -> Bool {
        guard segment.hasPrefix("trim") else { return false }
        let parts = segment.split(separator: ":", omittingEmptySubsequences: false)
        guard parts[0] == "trim", parts.count <= 3 else { return false }
        var index = 1
        if index < parts.count, TrimCorner(rawValue: String(parts[index])) != nil { index += 1 }
        if index < parts.count, !parts[index].isEmpty, parts[index].allSatisfy(\.isASCIIDigit) { index += 1 }
        return index == parts.count
    }

    static func trim(_ segment: Substring) -> (corner: TrimCorner, tolerance: Int) {
        var result = (corner: TrimCorner.topLeft, tolerance: 0)
        for part in segment.split(separator: ":").dropFirst() {
            if let corner = TrimCorner(rawValue: String(part)) {
                result.corner = corner
            } else {
                result.tolerance = Int(part) ?? 0
            }
        }
        return result
    }

    /// `LxT:RxB`.
    static func crop(_ segment: Substring) -> (left: Int, top: Int, right: Int, bottom: Int)? {
        let corners = segment.split(separator: ":", omittingEmptySubsequences: false)
        guard corners.count == 2 else { return nil }
        let values = corners.flatMap { $0.split(separator: "x", omittingEmptySubsequences: false) }
        guard values.count == 4, values.allSatisfy({ !$0.isEmpty && $0.count < 10 && $0.allSatisfy(\.isASCIIDigit) })
        else { return nil }
        let numbers = values.compactMap { Int($0) }
        return (numbers[0], numbers[1], numbers[2], numbers[3])
    }

    static func fitIn(_ segment: Substring) -> FitIn? {
        switch segment {
        case "fit-in": .fitIn
        case "adaptive-fit-in": .adaptive
        case "full-fit-in": .full
        case "adaptive-full-fit-in": .adaptiveFull
        default: nil
        }
    }

    /// `[-]W x [-]H`, each side a number, `orig`, or nothing (0).
    static func dimensions(_ segment: Substring) -> (Bool, Side, Bool, Side)? {
        guard let x = segment.firstIndex(of: "x") else { return nil }
        func side(_ text: Substring) -> (flip: Bool, side: Side)? {
            var text = text
            let flip = text.first == "-"
            if flip { text = text.dropFirst() }
            if text.isEmpty { return (flip, .pixels(0)) }
            if text == "orig" { return (flip, .original) }
            guard text.count < 10, text.allSatisfy(\.isASCIIDigit), let value = Int(text) else { return nil }
            return (flip, .pixels(value))
        }
        guard let width = side(segment[..<x]), let height = side(segment[segment.index(after: x)...]) else {
            return nil
        }
        return (width.flip, width.side, height.flip, height.side)
    }
}

extension Character {
    var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}

/// One thumbor filter as written: `name(arg,arg)`.
struct ThumborFilter: Equatable {
    let name: String
    let arguments: [String]

    /// `name(args):name(args)...`, split as thumbor splits it: at each `):` (so an argument may hold
    /// colons, a watermark's URL, and parentheses, a curve's points), the arguments at the commas
    /// outside brackets and parentheses.
    /// - Throws: A 400 ``ServerError`` naming what is malformed.
    static func list(_ text: Substring) throws -> [ThumborFilter] {
        var filters: [ThumborFilter] = []
        let pieces = text.components(separatedBy: "):")
        for (index, piece) in pieces.enumerated() {
            let written = index == pieces.count - 1 ? piece : piece + ")"
            guard let open = written.firstIndex(of: "("), written.hasSuffix(")") else {
                throw ServerError.badParameter(
                    "thumbor filters are written name(arguments), separated by colons: \(written)")
            }
            let name = written[..<open]
            guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else {
                throw ServerError.badParameter(
                    "thumbor filters are written name(arguments), separated by colons: \(written)")
            }
            let inside = written[written.index(after: open)..<written.index(before: written.endIndex)]
            filters.append(ThumborFilter(name: String(name), arguments: arguments(inside)))
        }
        return filters
    }

    /// `inside` split at its top-level commas, each part trimmed.
    static func arguments(_ inside: Substring) -> [String] {
        guard !inside.isEmpty else { return [] }
        var parts: [String] = []
        var (depth, current) = (0, "")
        for character in inside {
            switch character {
            case "(", "[": depth += 1
            case ")", "]": depth -= 1
            case "," where depth == 0:
                parts.append(current.trimmingCharacters(in: .whitespaces))
                current = ""
                continue
            default: break
            }
            current.append(character)
        }
        parts.append(current.trimmingCharacters(in: .whitespaces))
        return parts
    }
}
