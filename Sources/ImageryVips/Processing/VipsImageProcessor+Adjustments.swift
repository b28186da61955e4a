import CVips
import Foundation
import Imagery

/// ``ImageRecipe/Adjustment``s on libvips, each to thumbor's arithmetic: per-channel steps as tables
/// (`maplut`), the others as libvips operations.
extension VipsImageProcessor {
    /// `adjustments` applied to `image` in order. Consumes `image` (released on failure too).
    func adjusted(_ image: UnsafeMutablePointer<VipsImage>, _ adjustments: [ImageRecipe.Adjustment]) throws
        -> UnsafeMutablePointer<VipsImage>
    {
        var image = image
        for adjustment in adjustments {
            if let problem = adjustment.problem {
                imagery_vips_unref(image)
                throw ImageProcessingError.invalidValue(problem)
            }
            image = try adjusted(image, adjustment)
        }
        return image
    }

    private func adjusted(_ image: UnsafeMutablePointer<VipsImage>, _ adjustment: ImageRecipe.Adjustment) throws
        -> UnsafeMutablePointer<VipsImage>
    {
        switch adjustment {
        case .brightness(let percent):
            let delta = 255 * percent / 100
            return try mappingColour(image) { _ in Self.tables { $0 + delta } }
        case .contrast(let percent):
            let factor = (percent + 100) * (percent + 100) / 100
            return try mappingColour(image) { _ in Self.tables { factor * ($0 - 128) / 100 + 128 } }
        case .channels(let red, let green, let blue):
            let deltas = [red, green, blue].map { 255 * $0 / 100 }
            return try mappingColour(image) { _ in deltas.map { delta in Self.table { $0 + delta } } }
        case .colorize(let red, let green, let blue, let color):
            let blends = [(red, color.red), (green, color.green), (blue, color.blue)]
            return try mappingColour(image) { _ in
                blends.map { percent, fill in
                    Self.table { Int((Double($0) * (100 - Double(percent)) + Double(fill) * Double(percent)) / 100) }
                }
            }
        case .curves(let curves):
            let all = ImageRecipe.Adjustment.Curves.table(curves.all)
            return try mappingColour(image) { _ in
                [curves.red, curves.green, curves.blue].map { points in
                    ImageRecipe.Adjustment.Curves.table(points).map { all[Int($0)] }
                }
            }
        case .equalize:
            return try mappingColour(image) { colour in try Self.equalizingTables(colour) }
        case .saturation(let change):
            return try onColour(image) { colour in try Vips.apply(colour) { imagery_vips_saturation($0, $1, change) } }
        case .noise(let amount, let seed):
            guard amount > 0 else { return image }
            return try onColour(image) { colour in
                let (width, height) = (Int(vips_image_get_width(colour)), Int(vips_image_get_height(colour)))
                var generator = CRandom(seed: seed)
                let plane = (0..<(width * height)).map { _ in Int16(Int(generator.next()) % amount - amount / 2) }
                return try Vips.apply(colour) { input, output in
                    plane.withUnsafeBufferPointer {
                        imagery_vips_add_plane(input, output, $0.baseAddress, Int32(width), Int32(height))
                    }
                }
            }
        case .convolution(let kernel):
            let sum = kernel.weights.reduce(0, +)
            let weights = kernel.normalizes && sum != 0 ? kernel.weights.map { $0 / sum } : kernel.weights
            let rows = weights.count / kernel.columns
            return try Vips.apply(try eightBitColour(image)) {
                imagery_vips_convolve($0, $1, weights, Int32(kernel.columns), Int32(rows))
            }
        case .roundCorners(let horizontal, let vertical, let color, let transparent):
            return try roundingCorners(
                image, horizontal: horizontal, vertical: vertical, color: color, transparent: transparent)
        case .scale(let factor):
            let (width, height) = (
                Double(vips_image_get_width(image)) * factor, Double(vips_image_get_height(image)) * factor
            )
            guard width >= 1, height >= 1 else { return image }  // as thumbor: nothing under a pixel
            return try Vips.resized(image, width: Int(width), height: Int(height))
        case .waveletSharpen(let amount, let radius, let luminanceOnly):
            return try onColour(image) { colour in
                var image = try Vips.apply(colour) { imagery_vips_cast_float($0, $1) }
                guard luminanceOnly else {
                    image = try Vips.apply(image) { imagery_vips_wavelet_sharpen($0, $1, amount, radius) }
                    return try Vips.apply(image) { imagery_vips_cast_truncating($0, $1) }
                }
                // thumbor's YCbCr (JPEG's), the luma sharpened, back to RGB.
                image = try Vips.apply(image) {
                    imagery_vips_recombine(
                        $0, $1, [0.299, 0.587, 0.114, -0.1687, -0.3313, 0.5, 0.5, -0.4187, -0.0813], [0, 128, 128])
                }
                let chroma = try Vips.apply(image, releasingInput: false) { imagery_vips_extract_bands($0, $1, 1, 2) }
                defer { imagery_vips_unref(chroma) }
                var luma = try Vips.apply(image) { imagery_vips_extract_bands($0, $1, 0, 1) }
                luma = try Vips.apply(luma) { imagery_vips_wavelet_sharpen($0, $1, amount, radius) }
                image = try Vips.apply(luma) { imagery_vips_bandjoin2($0, chroma, $1) }
                image = try Vips.apply(image) {
                    imagery_vips_recombine(
                        $0, $1, [1, 0, 1.402, 1, -0.34414, -0.71414, 1, 1.772, 0],
                        [-1.402 * 128, (0.34414 + 0.71414) * 128, -1.772 * 128])
                }
                return try Vips.apply(image) { imagery_vips_cast_truncating($0, $1) }
            }
        case .watermark(let watermark):
            if let problem = problem(of: watermark) {
                imagery_vips_unref(image)
                throw ImageProcessingError.invalidValue(problem)
            }
            return try watermarked(image, watermark, dpr: 1)
        case .frame(let frame):
            return try framed(image, frame)
        case .grayscale:
            let image = try onColour(image) { colour in try Vips.apply(colour) { imagery_vips_luma($0, $1) } }
            return try Vips.apply(image) { imagery_vips_set_interpretation($0, $1, VIPS_INTERPRETATION_B_W) }
        }
    }

    /// A table of 0...255 through `transform`, its results kept in 0...255.
    private static func table(_ transform: (Int) -> Int) -> [UInt8] {
        (0..<256).map { UInt8(max(0, min(255, transform($0)))) }
    }

    /// The same table for red, green and blue.
    private static func tables(_ transform: (Int) -> Int) -> [[UInt8]] {
        let one = table(transform)
        return [one, one, one]
    }

    /// thumbor's histogram equalisation of each channel: a value v becomes
    /// (cdf(v) - cdf₀) / (pixels - cdf₀) × 255, cdf₀ the channels' smallest non-zero cdf, taken
    /// (as thumbor takes it) only for the channels whose first value is the lowest of the three.
    private static func equalizingTables(_ colour: UnsafeMutablePointer<VipsImage>) throws -> [[UInt8]] {
        var cumulative: [[Double]] = []
        for band in 0..<3 {
            var counts = [Double](repeating: 0, count: 256)
            guard imagery_vips_histogram(colour, Int32(band), &counts) == 0 else {
                throw VipsError(message: Vips.takeError())
            }
            var total = 0.0
            cumulative.append(
                counts.map { count in
                    total += count
                    return count > 0 ? total : 0
                })
        }
        let area = Double(vips_image_get_width(colour)) * Double(vips_image_get_height(colour))
        var minimum = [0.0, 0.0, 0.0]
        var value = 0
        while minimum.allSatisfy({ $0 == 0 }), value < 256 {
            for band in 0..<3 where minimum[band] == 0 && cumulative[band][value] != 0 {
                minimum[band] = cumulative[band][value]
            }
            value += 1
        }
        return (0..<3).map { band in
            (0..<256).map { value in
                let scaled = (cumulative[band][value] - minimum[band]) / (area - minimum[band]) * 255
                return scaled.isFinite ? UInt8(max(0, min(255, Int(scaled)))) : 0
            }
        }
    }

    /// `image` as 8-bit sRGB, with its alpha if it has one.
    func eightBitColour(_ image: UnsafeMutablePointer<VipsImage>) throws -> UnsafeMutablePointer<VipsImage> {
        let isSRGB =
            vips_image_get_interpretation(image) == VIPS_INTERPRETATION_sRGB
            && vips_image_get_format(image) == VIPS_FORMAT_UCHAR
        guard !isSRGB || vips_image_get_bands(image) < 3 else { return image }
        return try Vips.apply(image) { imagery_vips_colourspace($0, $1, VIPS_INTERPRETATION_sRGB) }
    }

    /// `operation` on `image`'s three colour bands (8-bit sRGB), its alpha joined back as it was.
    /// Consumes `image`; `operation` consumes what it is given.
    private func onColour(
        _ image: UnsafeMutablePointer<VipsImage>,
        _ operation: (UnsafeMutablePointer<VipsImage>) throws -> UnsafeMutablePointer<VipsImage>
    ) throws -> UnsafeMutablePointer<VipsImage> {
        let image = try eightBitColour(image)
        guard Vips.hasAlpha(image) else { return try operation(image) }
        let alpha: UnsafeMutablePointer<VipsImage>
        do {
            alpha = try Vips.apply(image, releasingInput: false) { imagery_vips_extract_bands($0, $1, 3, 1) }
        } catch {
            imagery_vips_unref(image)
            throw error
        }
        defer { imagery_vips_unref(alpha) }
        let colour = try operation(try Vips.apply(image) { imagery_vips_extract_bands($0, $1, 0, 3) })
        return try Vips.apply(colour) { imagery_vips_bandjoin2($0, alpha, $1) }
    }

    /// `image`'s colour bands each through its table of `tables(colour)` (red, green, blue).
    private func mappingColour(
        _ image: UnsafeMutablePointer<VipsImage>,
        _ tables: @escaping (UnsafeMutablePointer<VipsImage>) throws -> [[UInt8]]
    ) throws -> UnsafeMutablePointer<VipsImage> {
        try onColour(image) { colour in
            let joined: [UInt8]
            do { joined = try tables(colour).flatMap { $0 } } catch {
                imagery_vips_unref(colour)
                throw error
            }
            return try Vips.apply(colour) { imagery_vips_map_tables($0, $1, joined, 3) }
        }
    }
}
