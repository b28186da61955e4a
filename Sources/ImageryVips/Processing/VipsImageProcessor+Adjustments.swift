import CVips
import Foundation
import Imagery

/// ``ImageRecipe/Adjustment``s on libvips, each to thumbor's arithmetic: per-channel steps as tables
/// (`maplut`), the others as libvips operations.
extension VipsImageProcessor {
    /// `adjustments` applied to `image` in order. Consumes `image` (released on failure too).
    func adjusted(_ image: UnsafeMutablePointer<VipsImage>, _ adjustments: [ImageRecipe.Adjustment]) throws -> UnsafeMutablePointer<VipsImage> {
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

    private func adjusted(_ image: UnsafeMutablePointer<VipsImage>, _ adjustment: ImageRecipe.Adjustment) throws -> UnsafeMutablePointer<VipsImage> {
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
                    plane.withUnsafeBufferPointer { imagery_vips_add_plane(input, output, $0.baseAddress, Int32(width), Int32(height)) }
                }
            }
        case .convolution(let kernel):
            let sum = kernel.weights.reduce(0, +)
            let weights = kernel.normalizes && sum != 0 ? kernel.weights.map { $0 / sum } : kernel.weights
            let rows = weights.count / kernel.columns
            return try Vips.apply(try eightBitColour(image)) { imagery_vips_convolve($0, $1, weights, Int32(kernel.columns), Int32(rows)) }
        case .roundCorners(let horizontal, let vertical, let color, let transparent):
            return try roundingCorners(image, horizontal: horizontal, vertical: vertical, color: color, transparent: transparent)
        case .scale(let factor):
            let (width, height) = (Double(vips_image_get_width(image)) * factor, Double(vips_image_get_height(image)) * factor)
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
                    imagery_vips_recombine($0, $1, [0.299, 0.587, 0.114, -0.1687, -0.3313, 0.5, 0.5, -0.4187, -0.0813], [0, 128, 128])
                }
                let chroma = try Vips.apply(image, releasingInput: false) { imagery_vips_extract_bands($0, $1, 1, 2) }
                defer { imagery_vips_unref(chroma) }
                var luma = try Vips.apply(image) { imagery_vips_extract_bands($0, $1, 0, 1) }
                luma = try Vips.apply(luma) { imagery_vips_wavelet_sharpen($0, $1, amount, radius) }
                image = try Vips.apply(luma) { imagery_vips_bandjoin2($0, chroma, $1) }
                image = try Vips.apply(image) {
                    imagery_vips_recombine($0, $1, [1, 0, 1.402, 1, -0.34414, -0.71414, 1, 1.772, 0], [-1.402 * 128, (0.34414 + 0.71414) * 128, -1.772 * 128])
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

    /// `mark` pasted on `image` as thumbor pastes a watermark (``ImageRecipe/Watermark/Paste``): sized by
    /// the ratios, its alpha less the transparency, each copy composited "over" (thumbor's
    /// `_composite`: the same arithmetic), 8-bit sRGB. Consumes `image`.
    func pasted(
        _ image: UnsafeMutablePointer<VipsImage>, _ mark: ImageRecipe.Watermark.Mark, _ paste: ImageRecipe.Watermark.Paste
    ) throws -> UnsafeMutablePointer<VipsImage> {
        let base = try eightBitColour(image)
        let (width, height) = (Int(vips_image_get_width(base)), Int(vips_image_get_height(base)))
        let overlay: Image
        do {
            overlay = try pastedMark(mark, paste, outputWidth: width, outputHeight: height)
        } catch {
            imagery_vips_unref(base)
            throw error
        }
        let origins = paste.origins(width: overlay.width, height: overlay.height, outputWidth: width, outputHeight: height)
            .filter { $0.x < width && $0.y < height && $0.x + overlay.width > 0 && $0.y + overlay.height > 0 }
        guard !origins.isEmpty else { return base }
        return try blended(base, origins.map { (overlay, $0.x, $0.y) }, removingAlpha: false)
    }

    /// RGBA `overlays` laid over `image` at their places, each on the pixels under it only (the image
    /// rendered once, then changed in place: no libvips operation per overlay), or with
    /// `removingAlpha`, the image's alpha lowered where they are opaque. Consumes `image`.
    private func blended(
        _ image: UnsafeMutablePointer<VipsImage>, _ overlays: [(image: Image, x: Int, y: Int)], removingAlpha: Bool
    ) throws -> UnsafeMutablePointer<VipsImage> {
        var image = try Vips.apply(image) { imagery_vips_cast_uchar($0, $1) }
        image = try Vips.apply(image) { imagery_vips_render_copy($0, $1) }
        for overlay in overlays where overlay.image.pixelFormat == .rgba8 {
            overlay.image.pixels.withUnsafeBytes { buffer in
                guard let pixels = buffer.bindMemory(to: UInt8.self).baseAddress else { return }
                imagery_blend_in_place(
                    image, pixels, Int32(overlay.image.width), Int32(overlay.image.height), Int32(overlay.x), Int32(overlay.y), removingAlpha ? 1 : 0
                )
            }
        }
        return image
    }

    /// `overlays` composited over `base` in one operation (the fewer libvips operations a request
    /// runs, the less it costs: each is built anew), the result with `base`'s bands, 8 bits. Consumes `base`.
    private func composited(
        _ base: UnsafeMutablePointer<VipsImage>, _ overlays: inout [UnsafeMutablePointer<VipsImage>?], x: [Int32], y: [Int32], mode: VipsBlendMode
    ) throws -> UnsafeMutablePointer<VipsImage> {
        let bands = vips_image_get_bands(base)
        let count = Int32(overlays.count)
        var result = try Vips.apply(base) { input, output in imagery_vips_composite_at(input, &overlays, count, x, y, mode, output) }
        if vips_image_get_bands(result) > bands { result = try Vips.apply(result) { imagery_vips_extract_bands($0, $1, 0, bands) } }
        return try Vips.apply(result) { imagery_vips_cast_uchar($0, $1) }
    }

    /// A watermark made ready to paste (decoded, 8-bit sRGB with alpha, sized, its transparency taken
    /// off its alpha), from ``preparedMarks``: made once per image, size and transparency.
    private func pastedMark(
        _ mark: ImageRecipe.Watermark.Mark, _ paste: ImageRecipe.Watermark.Paste, outputWidth: Int, outputHeight: Int
    ) throws -> Image {
        let name: String
        switch mark {
        case .image(let configured): name = "configured:" + configured
        case .linked(.encoded(let image)): name = "linked:" + image.id
        default: throw ImageProcessingError.invalidValue("thumbor watermarks are images")
        }
        let natural = name + "|natural"
        var source = Self.preparedMarks.withLock { $0[natural] }
        if source == nil {
            guard let opened = try opened(mark) else { throw ImageProcessingError.invalidValue("thumbor watermarks are images") }
            var rgba = try eightBitColour(opened)
            if !Vips.hasAlpha(rgba) { rgba = try Vips.apply(rgba) { imagery_vips_add_alpha($0, $1) } }
            let pixels = try Vips.makeImage(consuming: rgba, format: .png)
            Self.remember(natural, pixels)
            source = pixels
        }
        guard let source else { throw ImageProcessingError.invalidValue("thumbor watermarks are images") }
        let size = paste.size(width: source.width, height: source.height, outputWidth: outputWidth, outputHeight: outputHeight)
        let key = name + "|\(size.width)x\(size.height)|\(paste.transparency)"
        if let prepared = Self.preparedMarks.withLock({ $0[key] }) { return prepared }
        var overlay = try Self.wrapped(source)
        if size.width != source.width || size.height != source.height {
            overlay = try Vips.resized(overlay, width: size.width, height: size.height)
        }
        if paste.transparency > 0 {  // thumbor's _alpha: alpha less 255 × transparency / 100, at least 0
            let delta = -Double(255 * paste.transparency / 100)
            let alpha = try Vips.apply(overlay, releasingInput: false) { imagery_vips_extract_bands($0, $1, 3, 1) }
            let lowered = try Vips.apply(alpha) { imagery_vips_linear1($0, $1, 1, delta, 0) }
            defer { imagery_vips_unref(lowered) }
            let colour = try Vips.apply(overlay) { imagery_vips_extract_bands($0, $1, 0, 3) }
            overlay = try Vips.apply(colour) { imagery_vips_bandjoin2($0, lowered, $1) }
        }
        let prepared = try Vips.makeImage(consuming: overlay, format: .png)
        Self.remember(key, prepared)
        return prepared
    }

    /// Watermarks ready to paste, as 8-bit RGBA pixels, by image, size and transparency: at most 64,
    /// the oldest forgotten first (a site uses a few watermarks at a few sizes).
    private static let preparedMarks = Locked([String: Image]())
    private static let preparedOrder = Locked([String]())

    private static func remember(_ key: String, _ image: Image) {
        preparedOrder.withLock { order in
            preparedMarks.withLock { marks in
                if marks[key] == nil { order.append(key) }
                marks[key] = image
                while order.count > 64 { marks[order.removeFirst()] = nil }
            }
        }
    }

    /// 8-bit RGBA pixels as an sRGB libvips image (a copy; no operation runs).
    private static func wrapped(_ image: Image) throws -> UnsafeMutablePointer<VipsImage> {
        let made = image.pixels.withUnsafeBytes { buffer in
            imagery_vips_srgb_from_pixels(buffer.baseAddress, buffer.count, Int32(image.width), Int32(image.height), 4)
        }
        guard let made else { throw VipsError(message: Vips.takeError()) }
        return made
    }

    /// `image` in a nine-patch frame, as thumbor's `frame()` draws it: the image on an opaque white
    /// canvas grown by the frame's padding (its bottom row and right column of black marks), then each
    /// cell of the frame (cut by the black marks of its top row and left column) stretched to its
    /// place and laid over it. Consumes `image`.
    private func framed(_ image: UnsafeMutablePointer<VipsImage>, _ frame: ImageRecipe.LinkedImage) throws -> UnsafeMutablePointer<VipsImage> {
        var canvas: UnsafeMutablePointer<VipsImage> = image
        let patch: NinePatch
        let frameImage: UnsafeMutablePointer<VipsImage>
        do {
            guard case .encoded(let encoded) = frame else { throw ImageProcessingError.invalidValue("the frame image at \(frame) was not loaded") }
            guard let opened = try opened(.linked(.encoded(encoded))) else { throw ImageProcessingError.invalidValue("a frame is an image") }
            var rgba = try eightBitColour(opened)
            if !Vips.hasAlpha(rgba) { rgba = try Vips.apply(rgba) { imagery_vips_add_alpha($0, $1) } }
            let pixels = try Vips.makeImage(consuming: rgba, format: .png)
            guard pixels.width >= 3, pixels.height >= 3 else { throw ImageProcessingError.invalidValue("a nine-patch frame is at least 3 × 3 pixels") }
            patch = NinePatch(pixels)
            guard let wrapped = pixels.pixels.withUnsafeBytes({
                imagery_vips_from_pixels($0.baseAddress, $0.count, Int32(pixels.width), Int32(pixels.height), 4, 0)
            }) else { throw VipsError(message: Vips.takeError()) }
            frameImage = try Vips.apply(wrapped) { imagery_vips_set_interpretation($0, $1, VIPS_INTERPRETATION_sRGB) }
        } catch {
            imagery_vips_unref(canvas)
            throw error
        }
        defer { imagery_vips_unref(frameImage) }
        // The image over opaque white, grown by the padding.
        canvas = try eightBitColour(canvas)
        if Vips.hasAlpha(canvas) { canvas = try Vips.apply(canvas) { imagery_vips_flatten_onto($0, $1, [255, 255, 255], 3) } }
        canvas = try Vips.apply(canvas) { imagery_vips_add_alpha($0, $1) }
        let (width, height) = (Int(vips_image_get_width(canvas)), Int(vips_image_get_height(canvas)))
        let padding = patch.padding
        let (outerWidth, outerHeight) = (width + padding.left + padding.right, height + padding.top + padding.bottom)
        if (outerWidth, outerHeight) != (width, height) {
            canvas = try Vips.apply(canvas) {
                imagery_vips_embed($0, $1, Int32(padding.left), Int32(padding.top), Int32(outerWidth), Int32(outerHeight), [255, 255, 255, 255], 4)
            }
        }
        // The cells, stretched.
        var cells: [UnsafeMutablePointer<VipsImage>?] = []
        var origins: [(x: Int32, y: Int32)] = []
        defer { cells.forEach { imagery_vips_unref($0) } }
        do {
            for cell in patch.cells(targetWidth: outerWidth, targetHeight: outerHeight) where cell.target.width > 0 && cell.target.height > 0 {
                var piece = try Vips.apply(frameImage, releasingInput: false) {
                    imagery_vips_extract($0, $1, Int32(cell.source.x), Int32(cell.source.y), Int32(cell.source.width), Int32(cell.source.height))
                }
                if (cell.source.width, cell.source.height) != (cell.target.width, cell.target.height) {
                    piece = try Vips.resized(piece, width: cell.target.width, height: cell.target.height)
                }
                cells.append(piece)
                origins.append((Int32(cell.target.x), Int32(cell.target.y)))
            }
        } catch {
            imagery_vips_unref(canvas)
            throw error
        }
        guard !cells.isEmpty else { return canvas }
        let xs: [Int32] = origins.map(\.x)
        let ys: [Int32] = origins.map(\.y)
        return try composited(canvas, &cells, x: xs, y: ys, mode: VIPS_BLEND_MODE_OVER)
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
            guard imagery_vips_histogram(colour, Int32(band), &counts) == 0 else { throw VipsError(message: Vips.takeError()) }
            var total = 0.0
            cumulative.append(counts.map { count in
                total += count
                return count > 0 ? total : 0
            })
        }
        let area = Double(vips_image_get_width(colour)) * Double(vips_image_get_height(colour))
        var minimum = [0.0, 0.0, 0.0]
        var value = 0
        while minimum.allSatisfy({ $0 == 0 }), value < 256 {
            for band in 0..<3 where minimum[band] == 0 && cumulative[band][value] != 0 { minimum[band] = cumulative[band][value] }
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
    private func eightBitColour(_ image: UnsafeMutablePointer<VipsImage>) throws -> UnsafeMutablePointer<VipsImage> {
        let isSRGB = vips_image_get_interpretation(image) == VIPS_INTERPRETATION_sRGB && vips_image_get_format(image) == VIPS_FORMAT_UCHAR
        guard !isSRGB || vips_image_get_bands(image) < 3 else { return image }
        return try Vips.apply(image) { imagery_vips_colourspace($0, $1, VIPS_INTERPRETATION_sRGB) }
    }

    /// `operation` on `image`'s three colour bands (8-bit sRGB), its alpha joined back as it was.
    /// Consumes `image`; `operation` consumes what it is given.
    private func onColour(
        _ image: UnsafeMutablePointer<VipsImage>, _ operation: (UnsafeMutablePointer<VipsImage>) throws -> UnsafeMutablePointer<VipsImage>
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
        _ image: UnsafeMutablePointer<VipsImage>, _ tables: @escaping (UnsafeMutablePointer<VipsImage>) throws -> [[UInt8]]
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

    /// Corners outside ellipses of `horizontal` × `vertical` (at most half of each side) painted
    /// `color`, or cut out when `transparent`; the ellipses' edges anti-aliased (4 × 4 samples a pixel).
    private func roundingCorners(
        _ image: UnsafeMutablePointer<VipsImage>, horizontal: Int, vertical: Int, color: ImageRecipe.Color, transparent: Bool
    ) throws -> UnsafeMutablePointer<VipsImage> {
        var image = try eightBitColour(image)
        let (width, height) = (Int(vips_image_get_width(image)), Int(vips_image_get_height(image)))
        let (a, b) = (min(horizontal, width / 2), min(vertical, height / 2))
        guard a > 0, b > 0 else { return image }
        if transparent, !Vips.hasAlpha(image) { image = try Vips.apply(image) { imagery_vips_add_alpha($0, $1) } }
        // The corners: RGBA, alpha where the ellipse does not cover (the top-left one's, mirrored),
        // made here as pixels: no libvips operation until the one composite.
        var coverage = [UInt8](repeating: 0, count: a * b)
        let samples = 4
        for y in 0..<b {
            for x in 0..<a {
                var outside = 0
                for sy in 0..<samples {
                    for sx in 0..<samples {
                        let dx = (Double(x) + (Double(sx) + 0.5) / Double(samples) - Double(a)) / Double(a)
                        let dy = (Double(y) + (Double(sy) + 0.5) / Double(samples) - Double(b)) / Double(b)
                        if dx * dx + dy * dy > 1 { outside += 1 }
                    }
                }
                coverage[y * a + x] = UInt8(255 * outside / (samples * samples))
            }
        }
        var overlays: [(image: Image, x: Int, y: Int)] = []
        let mirrors: [(x: Bool, y: Bool)] = [(false, false), (true, false), (false, true), (true, true)]
        for mirror in mirrors {
            var patch = Data(count: a * b * 4)
            for y in 0..<b {
                let row: Int = mirror.y ? b - 1 - y : y
                for x in 0..<a {
                    let column: Int = mirror.x ? a - 1 - x : x
                    let offset = (y * a + x) * 4
                    patch[offset] = color.red
                    patch[offset + 1] = color.green
                    patch[offset + 2] = color.blue
                    patch[offset + 3] = coverage[row * a + column]
                }
            }
            let corner = Image(width: a, height: b, pixelFormat: .rgba8, pixels: patch, sourceFormat: .png)
            overlays.append((corner, mirror.x ? width - a : 0, mirror.y ? height - b : 0))
        }
        return try blended(image, overlays, removingAlpha: transparent)  // painted on an opaque image: no alpha band
    }
}

/// The C library's `random()` after `srandom(seed)` (glibc's additive feedback generator, its
/// default type 3), so that noise seeded as thumbor seeds it is thumbor's noise.
struct CRandom {
    private var state = [Int32](repeating: 0, count: 31)
    private var front = 3
    private var rear = 0

    init(seed: UInt32) {
        var word = Int64(seed == 0 ? 1 : seed)
        state[0] = Int32(truncatingIfNeeded: word)
        for i in 1..<31 {
            let (high, low) = (word / 127_773, word % 127_773)
            word = 16_807 * low - 2_836 * high
            if word < 0 { word += 2_147_483_647 }
            state[i] = Int32(truncatingIfNeeded: word)
        }
        for _ in 0..<310 { _ = next() }
    }

    /// The next value, 0...2³¹ - 1.
    mutating func next() -> UInt32 {
        state[front] = state[front] &+ state[rear]
        let value = UInt32(bitPattern: state[front]) >> 1
        front = (front + 1) % 31
        rear = (rear + 1) % 31
        return value
    }
}

/// A nine-patch image (Android's): inside a one-pixel border, opaque black marks on the top row and
/// the left column say which columns and rows stretch; on the bottom row and the right column, where
/// the content goes (the padding is what they leave out).
struct NinePatch {
    let width: Int
    let height: Int
    /// Whether each column (1..<width-1) stretches, and each row.
    let stretchyColumns: [Bool]
    let stretchyRows: [Bool]
    let padding: (left: Int, top: Int, right: Int, bottom: Int)

    /// - Parameter image: RGBA, 8 bits, at least 3 × 3.
    init(_ image: Image) {
        (width, height) = (image.width, image.height)
        func marked(_ x: Int, _ y: Int) -> Bool {
            let offset = image.pixels.startIndex + (y * image.width + x) * 4
            return image.pixels[offset] == 0 && image.pixels[offset + 1] == 0 && image.pixels[offset + 2] == 0 && image.pixels[offset + 3] == 255
        }
        stretchyColumns = (0..<image.width).map { $0 > 0 && $0 < image.width - 1 && marked($0, 0) }
        stretchyRows = (0..<image.height).map { $0 > 0 && $0 < image.height - 1 && marked(0, $0) }
        let inner = (1..<(image.width - 1)), innerRows = (1..<(image.height - 1))
        let left = inner.first { marked($0, image.height - 1) }.map { $0 - 1 } ?? 0
        let right = inner.reversed().first { marked($0, image.height - 1) }.map { image.width - 2 - $0 } ?? 0
        let top = innerRows.first { marked(image.width - 1, $0) }.map { $0 - 1 } ?? 0
        let bottom = innerRows.reversed().first { marked(image.width - 1, $0) }.map { image.height - 2 - $0 } ?? 0
        padding = (left, top, right, bottom)
    }

    /// Runs of columns (or rows) of one stretchiness, inside the border: (start, length, stretchy).
    private static func runs(_ stretchy: [Bool]) -> [(start: Int, length: Int, stretchy: Bool)] {
        var runs: [(start: Int, length: Int, stretchy: Bool)] = []
        var start = 1
        while start < stretchy.count - 1 {
            var end = start + 1
            while end < stretchy.count - 1, stretchy[end] == stretchy[start] { end += 1 }
            runs.append((start, end - start, stretchy[start]))
            start = end
        }
        return runs
    }

    /// Each cell's rectangle in the nine-patch and where it goes on a `targetWidth` × `targetHeight`
    /// image (thumbor's sizes: fixed runs as they are, stretchy ones sharing what is left, rounded; a cell
    /// that would not fit is left out).
    func cells(targetWidth: Int, targetHeight: Int) -> [(source: ImageRecipe.Rect, target: ImageRecipe.Rect)] {
        let columns = Self.runs(stretchyColumns), rows = Self.runs(stretchyRows)
        let stretchyWidth = columns.filter(\.stretchy).reduce(0) { $0 + $1.length }
        let stretchyHeight = rows.filter(\.stretchy).reduce(0) { $0 + $1.length }
        let spareWidth = max(0, targetWidth - (width - 2 - stretchyWidth)), spareHeight = max(0, targetHeight - (height - 2 - stretchyHeight))
        func size(_ run: (start: Int, length: Int, stretchy: Bool), _ stretchyTotal: Int, _ spare: Int) -> Int {
            run.stretchy ? Int(Double(run.length) / Double(stretchyTotal) * Double(spare) + 0.5) : run.length
        }
        var cells: [(source: ImageRecipe.Rect, target: ImageRecipe.Rect)] = []
        var y = 0
        for row in rows {
            let rowHeight = size(row, stretchyHeight, spareHeight)
            var x = 0
            for column in columns {
                let columnWidth = size(column, stretchyWidth, spareWidth)
                if x + columnWidth <= targetWidth, y + rowHeight <= targetHeight {
                    cells.append((
                        ImageRecipe.Rect(x: column.start, y: row.start, width: column.length, height: row.length),
                        ImageRecipe.Rect(x: x, y: y, width: columnWidth, height: rowHeight)
                    ))
                }
                x += columnWidth
            }
            y += rowHeight
        }
        return cells
    }
}
