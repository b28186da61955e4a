import CVips
import Foundation
import Imagery

/// BMP and ICO sources, read by Imagery's own readers (``BMP``, ``ICO``: libvips reads them only
/// through ImageMagick, whose loaders are blocked as untrusted), then through the same checks and
/// processing as any source. An icon whose largest picture is a PNG is that PNG.
extension VipsImageDecoder {
    /// Whether Imagery's own readers read `format` (not libvips).
    static func readsItself(_ format: ImageFormat) -> Bool { format == .bmp || format == .ico }

    /// The header of a bitmap source, checked against the pixel limit as ``checkHeader(_:_:format:)`` checks libvips'.
    func bitmapHeader(_ base: UnsafeRawPointer, _ count: Int, format: ImageFormat) throws -> Header {
        let data = Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: base), count: count, deallocator: .none)
        let (width, height): (Int, Int)
        if format == .ico, let png = try ICO.largestPNG(in: data) {
            return try png.withUnsafeBytes { try checkHeader($0.baseAddress!, $0.count, format: .png) }
        } else if format == .ico {
            (width, height) = try ICO.largestSize(of: data)
        } else {
            let header = try BMP.header(of: data)
            (width, height) = (header.width, header.height)
        }
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        guard !overflow, pixels <= maximumPixels else {
            throw ImageDecodingError.tooManyPixels(width: width, height: height, limit: maximumPixels)
        }
        return Header(
            width: width, height: height, swapped: false, orientation: 1, bands: 4, sampleBytes: 1, copyright: nil,
            frames: 1)
    }

    /// A BMP or ICO source decoded for `recipe`: its header checked (the server's limits and the
    /// recipe's), its pixels read, the recipe applied by the processor as to any decoded image.
    func decodeBitmap(_ data: Data, format: ImageFormat, recipe: ImageRecipe) throws -> Image {
        let header: Header
        do {
            header = try data.withUnsafeBytes { try bitmapHeader($0.baseAddress!, $0.count, format: format) }
        } catch let error as VipsError {
            // An icon's PNG whose header libvips cannot read (found by fuzzing `decode`: it escaped untyped).
            throw error.decodingError(format: format)
        }
        try check(recipe.sourceLimits, header, bytes: data.count)
        let picture: ICO.Picture =
            format == .bmp
            ? .bitmap(try BMP.decode(data, maximumPixels: maximumPixels))
            : try ICO.largestPicture(of: data, maximumPixels: maximumPixels)
        switch picture {
        case .png(let png):
            let image = try decode(png, recipe: recipe)
            return Image(
                width: image.width, height: image.height, pixelFormat: image.pixelFormat, pixels: image.pixels,
                sourceFormat: .ico,
                metadata: image.metadata, animation: image.animation
            )
        case .bitmap(let image):
            do {
                let base = ThumbnailBase(image: image, scale: 1, sourceWidth: image.width, sourceHeight: image.height)
                return try processor.process(base, recipe: recipe)
            } catch ImageProcessingError.failed(let reason) {
                throw ImageDecodingError.corrupt(format: format, reason: reason)
            }
        }
    }
}
