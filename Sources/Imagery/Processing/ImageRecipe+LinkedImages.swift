import Foundation

extension ImageRecipe {
    /// An encoded image a recipe carries (a watermark or a frame fetched for the request it belongs to),
    /// known in keys by ``id`` alone (its source and a checksum of its bytes), not by its bytes.
    public struct EncodedImage: Sendable, Hashable, CustomStringConvertible {
        /// What names it in keys: its source and a checksum of ``data`` (another version is another id).
        public let id: String
        /// The encoded bytes (JPEG, PNG, WebP, GIF, AVIF...).
        public let data: Data

        public init(id: String, data: Data) { (self.id, self.data) = (id, data) }

        public static func == (lhs: Self, rhs: Self) -> Bool { lhs.id == rhs.id }
        public func hash(into hasher: inout Hasher) { hasher.combine(id) }
        public var description: String { id }
    }

    /// An image a recipe lays over or around its result that lives at a URL: first the URL (what a
    /// URL syntax gives), then its bytes once whoever runs the recipe has loaded them (as a source is
    /// loaded: the same checks, limits and caches) (``ImageRecipe/resolvingLinks(_:)``).
    public enum LinkedImage: Sendable, Hashable, CustomStringConvertible {
        /// Not loaded yet: a processor refuses it.
        case source(URL)
        /// Loaded.
        case encoded(EncodedImage)

        public var description: String {
            switch self {
            case .source(let url): "url(\(url.absoluteString.utf8.count):\(url.absoluteString))"
            case .encoded(let image): "img(\(image.id.utf8.count):\(image.id))"
            }
        }
    }

    /// The URLs of the linked images not loaded yet (watermarks, frames), each once, in order.
    public var linkedSources: [URL] {
        var urls: [URL] = []
        func add(_ image: LinkedImage?) {
            if case .source(let url) = image, !urls.contains(url) { urls.append(url) }
        }
        add(watermark?.linkedImage)
        for adjustment in adjustments {
            switch adjustment {
            case .watermark(let watermark): add(watermark.linkedImage)
            case .frame(let frame): add(frame)
            default: break
            }
        }
        return urls
    }

    /// The recipe with each linked image that `resolve` has bytes for given them.
    public func resolvingLinks(_ resolve: (URL) -> EncodedImage?) -> ImageRecipe {
        func resolved(_ image: LinkedImage) -> LinkedImage {
            guard case .source(let url) = image, let encoded = resolve(url) else { return image }
            return .encoded(encoded)
        }
        func resolved(_ watermark: Watermark) -> Watermark {
            guard case .linked(let image) = watermark.mark else { return watermark }
            var watermark = watermark
            watermark.mark = .linked(resolved(image))
            return watermark
        }
        var recipe = self
        recipe.watermark = watermark.map(resolved)
        recipe.adjustments = adjustments.map { adjustment in
            switch adjustment {
            case .watermark(let watermark): .watermark(resolved(watermark))
            case .frame(let frame): .frame(resolved(frame))
            default: adjustment
            }
        }
        return recipe
    }
}

extension ImageRecipe.Watermark {
    /// The linked image it lays over the output, if it is one.
    var linkedImage: ImageRecipe.LinkedImage? {
        if case .linked(let image) = mark { return image }
        return nil
    }

    /// Where thumbor's `watermark()` pastes a watermark: its position on each axis, its size as a
    /// fraction of the output's, and the transparency subtracted from its alpha.
    public struct Paste: Sendable, Hashable, CustomStringConvertible {
        /// A position along one side.
        public enum Position: Sendable, Hashable, CustomStringConvertible {
            /// Pixels from the start (left, top), or from the end (the watermark's far side that far from
            /// the right or bottom edge; thumbor's negative numbers, `-0` flush with the edge).
            case pixels(Int, fromEnd: Bool)
            /// A percentage of the output's side, rounded to pixels, as ``pixels(_:fromEnd:)`` (`20p`).
            case percent(Int, fromEnd: Bool)
            /// Centred.
            case center
            /// Repeated along the side, spaced as thumbor spaces the copies.
            case `repeat`

            public var description: String {
                switch self {
                case .pixels(let value, let fromEnd): "\(fromEnd ? "-" : "")\(value)"
                case .percent(let value, let fromEnd): "\(fromEnd ? "-" : "")\(value)p"
                case .center: "center"
                case .repeat: "repeat"
                }
            }
        }

        public var x: Position
        public var y: Position
        /// The largest width and height as fractions of the output's (either may be `nil`: following
        /// the other by the watermark's aspect ratio); both `nil`: its own size.
        public var widthRatio: Double?
        public var heightRatio: Double?
        /// Subtracted from the watermark's alpha: 0 (as it is) to 100 (invisible), % of 255.
        public var transparency: Int

        public init(
            x: Position, y: Position, widthRatio: Double? = nil, heightRatio: Double? = nil, transparency: Int = 0
        ) {
            (self.x, self.y, self.widthRatio, self.heightRatio, self.transparency) = (
                x, y, widthRatio, heightRatio, transparency
            )
        }

        public var description: String {
            "paste(\(x),\(y),\(widthRatio.map { "\($0)" } ?? "none"),\(heightRatio.map { "\($0)" } ?? "none"),\(transparency))"
        }

        /// The watermark's size on an `outputWidth` × `outputHeight` output (thumbor's `calc_watermark_size`).
        public func size(width: Int, height: Int, outputWidth: Int, outputHeight: Int) -> (width: Int, height: Int) {
            guard widthRatio != nil || heightRatio != nil else { return (width, height) }
            let (w, h) = (Double(width), Double(height))
            var maxWidth = widthRatio.map { Double(outputWidth) * $0 }
            var maxHeight = heightRatio.map { Double(outputHeight) * $0 }
            if maxWidth == nil || maxWidth == 0 { maxWidth = w * (maxHeight ?? 0) / h }
            if maxHeight == nil || maxHeight == 0 { maxHeight = h * maxWidth! / w }
            let (boxWidth, boxHeight) = (maxWidth!, maxHeight!)
            guard boxWidth > 0, boxHeight > 0 else { return (1, 1) }
            // Python's round: halves to the even neighbour (a 80x40 mark at 15% of 300 is 45x22, not 45x23).
            if w / boxWidth >= h / boxHeight {
                return (
                    max(1, Int(boxWidth.rounded(.toNearestOrEven))),
                    max(1, Int((h * boxWidth / w).rounded(.toNearestOrEven)))
                )
            }
            return (
                max(1, Int((w * boxHeight / h).rounded(.toNearestOrEven))),
                max(1, Int(boxHeight.rounded(.toNearestOrEven)))
            )
        }

        /// The top-left corners of the copies of a `width` × `height` watermark on an `outputWidth` ×
        /// `outputHeight` output, as thumbor places them (they may hang off the edges: what is outside is cut).
        public func origins(width: Int, height: Int, outputWidth: Int, outputHeight: Int) -> [(x: Int, y: Int)] {
            func along(_ position: Position, _ part: Int, _ side: Int) -> [Int] {
                var position = position
                if case .percent(let value, let fromEnd) = position {
                    position = .pixels(
                        Int((Double(side) * Double(value) / 100 + 1e-5).rounded(.toNearestOrEven)), fromEnd: fromEnd)
                }
                switch position {
                case .center: return [(side - part) / 2]
                case .pixels(let value, let fromEnd): return [fromEnd ? side - part - value : value]
                case .percent: return []
                case .repeat:
                    var (count, space) = (side / part, side % part)  // thumbor's divmod
                    if Double(side) / Double(part) < 2 {
                        (count, space) = (Int((Double(side) / Double(part)).rounded(.up)), 10)
                    }
                    return (count, space).0 > 0 ? Self.repeated(count: count, rest: space, part: part) : []
                }
            }
            let xs = along(x, width, outputWidth)
            let ys = along(y, height, outputHeight)
            // thumbor: at most 6 × 6 then, spread over the side
            if x == .repeat, y == .repeat, xs.count * ys.count > 100 {
                let (across, down) = (min(6, xs.count), min(6, ys.count))
                let columns = Self.repeated(count: across, rest: outputWidth - across * width, part: width)
                let rows = Self.repeated(count: down, rest: outputHeight - down * height, part: height)
                return rows.flatMap { y in columns.map { (x: $0, y: y) } }
            }
            return ys.flatMap { y in xs.map { (x: $0, y: y) } }
        }

        /// `count` copies `part` long, `rest` pixels shared out between them (thumbor's spacing).
        private static func repeated(count: Int, rest: Int, part: Int) -> [Int] {
            let space = Int((Double(rest) / Double(max(count, 2) - 1)).rounded(.down))
            return (0..<count).map { $0 * space + $0 * part }
        }
    }
}
