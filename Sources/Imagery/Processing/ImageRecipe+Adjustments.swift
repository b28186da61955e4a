import Foundation

extension ImageRecipe {
    /// One step of ``ImageRecipe/adjustments``: a change of the pixels (or of the size, ``scale(_:)``)
    /// of the image the geometry made, applied in the order of the list (thumbor's filters: each one
    /// the filter of that name in thumbor 7.8, to its arithmetic).
    ///
    /// Colour steps work on 8-bit sRGB (a grey image becomes colour, a 16-bit one 8-bit) and leave
    /// alpha as it is, except ``convolution(_:)``, which filters alpha too.
    public enum Adjustment: Sendable, Hashable, CustomStringConvertible {
        /// Adds `percent` % of 255 to each colour channel (-100...100; thumbor's `brightness`).
        case brightness(Int)
        /// Moves each colour channel away from (above 0) or towards (below 0) 128 by a factor of
        /// ((100 + `percent`) / 100)², -100...100 (thumbor's `contrast`).
        case contrast(Int)
        /// Moves each colour channel away from the pixel's perceived brightness by a factor (1: none,
        /// 0: grey, 2: twice as saturated); thumbor's `saturation`.
        case saturation(Double)
        /// Adds a percentage of 255 to each of red, green and blue (-100...100; thumbor's `rgb`).
        case channels(red: Int, green: Int, blue: Int)
        /// Blends each channel with `color`'s by its own percentage (0...100; thumbor's `colorize`).
        case colorize(red: Int, green: Int, blue: Int, color: Color)
        /// Stretches each channel's histogram over 0...255 (thumbor's `equalize`).
        case equalize
        /// Tone curves (thumbor's `curve`): each channel through its own, then all through ``Curves/all``.
        case curves(Curves)
        /// Uniform noise of `amount` levels (0...255), one value added to the three channels of a
        /// pixel, drawn in reading order from a generator seeded with `seed` (thumbor's `noise`: the
        /// C library's `random()`, so a seed gives thumbor's own pixels). The same recipe always makes
        /// the same pixels.
        case noise(amount: Int, seed: UInt32)
        /// A convolution (thumbor's `convolution`).
        case convolution(Kernel)
        /// Corners rounded to ellipses of `horizontal` × `vertical` pixels (at most half the image's
        /// sides), outside them `color` or, when `transparent`, transparency (thumbor's `round_corner`).
        case roundCorners(horizontal: Int, vertical: Int, color: Color, transparent: Bool)
        /// The image resized by a factor (0 < factor <= 1; sides rounded down; thumbor's `proportion`).
        case scale(Double)
        /// Wavelet sharpening (thumbor's `sharpen`): five levels of detail, each scaled by
        /// `amount` × e^(-(level - `radius`)² / 1.5) + 1 (amount 0...100, radius 0...10), of the
        /// luma only (in YCbCr) or of each channel.
        case waveletSharpen(amount: Double, radius: Double, luminanceOnly: Bool)
        /// A watermark laid over the image at this point of the list (thumbor's `watermark()`).
        case watermark(Watermark)
        /// The image framed by a nine-patch image (thumbor's `frame()`): the frame's stretchable
        /// parts stretched around the image, its padding added.
        case frame(LinkedImage)
        /// Converts to grey, the luma as Pillow computes it (0.299 R + 0.587 G + 0.114 B, rounded;
        /// thumbor's `grayscale`).
        case grayscale

        /// A tone curve for each channel, and one for all, each a list of (input, output) points in
        /// 0...255, increasing inputs, joined by a natural cubic spline (thumbor's `curve`).
        public struct Curves: Sendable, Hashable {
            public var all: [Point]
            public var red: [Point]
            public var green: [Point]
            public var blue: [Point]

            public init(all: [Point], red: [Point], green: [Point], blue: [Point]) {
                (self.all, self.red, self.green, self.blue) = (all, red, green, blue)
            }

            /// A point of a curve.
            public struct Point: Sendable, Hashable {
                public var input: UInt8
                public var output: UInt8

                public init(_ input: UInt8, _ output: UInt8) { (self.input, self.output) = (input, output) }
            }
        }

        /// A convolution matrix, read row by row.
        public struct Kernel: Sendable, Hashable {
            /// The weights, `columns` a row; an odd number of rows and of columns.
            public var weights: [Double]
            public var columns: Int
            /// Divides the weights by their sum (unless it is 0).
            public var normalizes: Bool

            public init(weights: [Double], columns: Int, normalizes: Bool = true) {
                (self.weights, self.columns, self.normalizes) = (weights, columns, normalizes)
            }

            /// The largest number of rows or columns (thumbor's blur of radius 150: 301 a side).
            public static let maximumSide = 301
            /// The largest number of weights.
            public static let maximumCount = 625

            /// Why the kernel cannot be applied, or `nil` when it can.
            public var problem: String? {
                guard columns > 0, !weights.isEmpty, weights.count % columns == 0 else {
                    return "a convolution's matrix must fill whole rows of its number of columns"
                }
                let rows = weights.count / columns
                guard rows % 2 == 1, columns % 2 == 1 else {
                    return "a convolution's matrix must have an odd number of rows and of columns"
                }
                guard rows <= Self.maximumSide, columns <= Self.maximumSide, weights.count <= Self.maximumCount else {
                    return
                        "a convolution's matrix has at most \(Self.maximumSide) rows or columns and \(Self.maximumCount) weights"
                }
                guard weights.allSatisfy(\.isFinite) else { return "a convolution's weights must be finite numbers" }
                return nil
            }
        }

        /// Why the step cannot be applied, or `nil` when it can.
        public var problem: String? {
            switch self {
            case .brightness(let percent), .contrast(let percent):
                (-100...100).contains(percent) ? nil : "brightness and contrast are from -100 to 100"
            case .saturation(let factor):
                factor.isFinite && (-100...100).contains(factor) ? nil : "saturation is a factor from -100 to 100"
            case .channels(let red, let green, let blue):
                [red, green, blue].allSatisfy { (-100...100).contains($0) } ? nil : "rgb's changes are from -100 to 100"
            case .colorize(let red, let green, let blue, _):
                [red, green, blue].allSatisfy { (0...100).contains($0) }
                    ? nil : "colorize's percentages are from 0 to 100"
            case .equalize, .grayscale, .frame:
                nil
            case .watermark(let watermark):
                if case .pasted(let paste) = watermark.placement, !(0...100).contains(paste.transparency) {
                    "a watermark's transparency is from 0 to 100"
                } else if case .pasted(let paste) = watermark.placement,
                    [paste.widthRatio, paste.heightRatio].contains(where: { ($0 ?? 1) <= 0 })
                {
                    "a watermark's size ratios are above 0"
                } else {
                    nil
                }
            case .curves(let curves):
                [curves.all, curves.red, curves.green, curves.blue].allSatisfy(Self.isCurve)
                    ? nil
                    : "a curve has at least two points with increasing inputs"
            case .noise(let amount, _):
                (0...255).contains(amount) ? nil : "noise's amount is from 0 to 255"
            case .convolution(let kernel):
                kernel.problem
            case .roundCorners(let horizontal, let vertical, _, _):
                horizontal >= 0 && vertical >= 0 ? nil : "corner radii are 0 or more"
            case .scale(let factor):
                factor > 0 && factor <= 1 ? nil : "a scale is above 0 and at most 1"
            case .waveletSharpen(let amount, let radius, _):
                (0...100).contains(amount) && (0...10).contains(radius)
                    ? nil : "sharpening's amount is from 0 to 100 and its radius from 0 to 10"
            }
        }

        private static func isCurve(_ points: [Curves.Point]) -> Bool {
            points.count >= 2 && zip(points, points.dropFirst()).allSatisfy { $0.input < $1.input }
        }

        /// The step's part of a recipe's key.
        public var description: String {
            switch self {
            case .brightness(let percent): "brightness(\(percent))"
            case .contrast(let percent): "contrast(\(percent))"
            case .saturation(let factor): "saturation(\(factor))"
            case .channels(let red, let green, let blue): "rgb(\(red),\(green),\(blue))"
            case .colorize(let red, let green, let blue, let color): "colorize(\(red),\(green),\(blue),\(color))"
            case .equalize: "equalize"
            case .curves(let curves):
                "curve("
                    + [curves.all, curves.red, curves.green, curves.blue].map { points in
                        points.map { "\($0.input):\($0.output)" }.joined(separator: ";")
                    }.joined(separator: "|") + ")"
            case .noise(let amount, let seed): "noise(\(amount),\(seed))"
            case .convolution(let kernel):
                "convolution(\(kernel.weights.map { "\($0)" }.joined(separator: ";")),\(kernel.columns),\(kernel.normalizes))"
            case .roundCorners(let horizontal, let vertical, let color, let transparent):
                "round(\(horizontal)|\(vertical),\(color)\(transparent ? ",transparent" : ""))"
            case .scale(let factor): "scale(\(factor))"
            case .waveletSharpen(let amount, let radius, let luminanceOnly):
                "sharpen(\(amount),\(radius),\(luminanceOnly))"
            case .grayscale: "gray"
            case .watermark(let watermark): watermark.key
            case .frame(let frame): "frame(\(frame))"
            }
        }
    }
}

extension ImageRecipe.Adjustment.Curves {
    /// The 256-entry table of a curve: thumbor's natural cubic spline through the points (outputs
    /// rounded and kept in 0...255), the first point's output below the first input, the last
    /// point's from the last input on.
    public static func table(_ points: [Point]) -> [UInt8] {
        var table = [UInt8](repeating: points.first?.output ?? 0, count: 256)
        guard points.count >= 2 else { return table }
        let x = points.map { Double($0.input) }
        let y = points.map { Double($0.output) }
        let n = points.count
        // Second derivatives of the natural spline (zero at both ends): a tridiagonal system.
        var lower = [Double](repeating: 0, count: n)
        var diagonal = [Double](repeating: 1, count: n)
        var upper = [Double](repeating: 0, count: n)
        var right = [Double](repeating: 0, count: n)
        for i in 1..<(n - 1) {
            lower[i] = (x[i] - x[i - 1]) / 6
            diagonal[i] = (x[i + 1] - x[i - 1]) / 3
            upper[i] = (x[i + 1] - x[i]) / 6
            right[i] = (y[i + 1] - y[i]) / (x[i + 1] - x[i]) - (y[i] - y[i - 1]) / (x[i] - x[i - 1])
        }
        for i in 1..<n {  // forward elimination
            let k = lower[i] / diagonal[i - 1]
            diagonal[i] -= k * upper[i - 1]
            right[i] -= k * right[i - 1]
        }
        var second = [Double](repeating: 0, count: n)
        for i in stride(from: n - 1, through: 0, by: -1) {
            second[i] = (right[i] - (i + 1 < n ? upper[i] * second[i + 1] : 0)) / diagonal[i]
        }
        for i in 0..<(n - 1) {
            let h = x[i + 1] - x[i]
            for input in Int(x[i])..<Int(x[i + 1]) {
                let t = (Double(input) - x[i]) / h
                let a = 1 - t
                let value =
                    a * y[i] + t * y[i + 1] + h * h / 6
                    * ((a * a * a - a) * second[i] + (t * t * t - t) * second[i + 1])
                table[input] = UInt8(max(0, min(255, value.rounded())))
            }
        }
        for input in Int(points[n - 1].input)..<256 { table[input] = points[n - 1].output }
        return table
    }
}
