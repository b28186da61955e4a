import Foundation
import Imagery

/// Imagery's own BMP and ICO readers (``BMP``, ``ICO``): any bytes, read as a BMP file and as an
/// icon file. Input: the file.
enum BitmapsTarget {
    /// Small enough that a fuzzer's claims of huge bitmaps are refused fast, large enough for real layouts.
    static let maximumPixels = 1 << 20

    static func run(_ bytes: [UInt8]) throws(FuzzFailure) {
        let data = Data(bytes)
        // A BMP: refused with a reason (a typed decoding error), or pixels the headers account for.
        let header = try? BMP.header(of: data)
        do {
            let image = try BMP.decode(data, maximumPixels: maximumPixels)
            guard let header else { throw FuzzFailure("decoded a bitmap whose header alone was refused") }
            try require(
                (image.width, image.height) == (header.width, header.height),
                "decoded \(image.width)x\(image.height), header \(header.width)x\(header.height)")
            try require(image.width * image.height <= maximumPixels, "decoded past the pixel limit")
            // What was decoded survives the writer and the reader again, pixel for pixel (but a picture
            // transparent everywhere: 32-bit alpha that is 0 everywhere reads as opaque, as browsers read it).
            let channels = image.pixelFormat.channels
            let invisible =
                image.pixelFormat.hasAlpha
                && stride(from: channels - 1, to: image.pixels.count, by: channels).allSatisfy { image.pixels[$0] == 0 }
            if !invisible {
                let again = try BMP.decode(BMP.encode(image), maximumPixels: maximumPixels)
                try require(
                    again == image.replacingSource(with: again.sourceFormat),
                    "a decoded bitmap did not round-trip through BMP.encode")
            }
        } catch let failure as FuzzFailure {
            throw failure
        } catch {
            try require(error is ImageDecodingError, "BMP threw \(type(of: error)), not ImageDecodingError")
        }
        // An icon: the same, its largest picture a PNG's bytes from within the file or a bitmap.
        do {
            switch try ICO.largestPicture(of: data, maximumPixels: maximumPixels) {
            case .png(let png):
                try require(
                    png.count <= data.count && data.range(of: png) != nil, "an icon's PNG is not bytes of the file")
                try require(try ICO.largestPNG(in: data) == png, "largestPNG disagrees with largestPicture")
            case .bitmap(let image):
                try require(
                    image.width <= 256 * 256 && image.width * image.height <= maximumPixels, "an icon past the limit")
                try require(try ICO.largestPNG(in: data) == nil, "largestPNG found a PNG in a bitmap icon")
            }
        } catch let failure as FuzzFailure {
            throw failure
        } catch {
            try require(error is ImageDecodingError, "ICO threw \(type(of: error)), not ImageDecodingError")
        }
    }
}

extension Image {
    func replacingSource(with format: ImageFormat) -> Image {
        Image(
            width: width, height: height, pixelFormat: pixelFormat, pixels: pixels, sourceFormat: format,
            metadata: metadata, animation: animation)
    }
}
