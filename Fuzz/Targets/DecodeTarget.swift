import Foundation
import Imagery
import ImageryVips

/// The whole decode path on any bytes, with the server's limits (smaller, so that a fuzzer's
/// claims of huge images are refused fast): the format sniffed, the header checked, every format
/// libvips reads here (JPEG through `CJPEG` or libvips, PNG, GIF, WebP, AVIF/HEIF, TIFF, SVG after
/// sanitising, BMP and ICO by Imagery's readers), at full size or at a thumbnail's, one frame or an
/// animation's. Input: a byte (what the recipe asks), then the file.
enum DecodeTarget {
    static let maximumPixels = 1 << 22
    static let decoder: VipsImageDecoder = {
        var decoder = VipsImageDecoder(
            maximumPixels: maximumPixels, maximumThumbnailSide: 1024, rejectsCorruptData: true)
        decoder.maximumFrames = 16
        decoder.maximumFramePixels = 1 << 20
        return decoder
    }()

    static func run(_ bytes: [UInt8]) throws(FuzzFailure) {
        guard let mode = bytes.first else { return }
        let data = Data(bytes.dropFirst())
        var recipe = ImageRecipe()
        switch mode % 4 {
        case 0: break
        case 1: recipe = ImageRecipe(resize: ImageRequest.Thumbnail(width: 64, height: 64))
        case 2: recipe = ImageRecipe(resize: ImageRequest.Thumbnail(width: 300, height: 300, fit: .inside))
        default: recipe.frame = Int(mode / 4) % 3
        }
        let header: ImageHeader?
        do {
            header = try decoder.inspect(data)
        } catch let error as ImageDecodingError {
            _ = error
            header = nil
        } catch {
            throw FuzzFailure("inspect threw \(type(of: error)), not ImageDecodingError: \(error)")
        }
        let image: Image
        do {
            image = try decoder.decode(data, recipe: recipe)
        } catch is ImageDecodingError {
            return
        } catch is ImageProcessingError {
            return
        } catch {
            throw FuzzFailure("decode threw \(type(of: error)): \(error)")
        }
        try require(header != nil, "decoded \(image.width)x\(image.height) bytes whose header was refused")
        try require(image.width >= 1 && image.height >= 1, "decoded \(image.width)x\(image.height)")
        try require(
            image.width * image.height <= maximumPixels, "decoded \(image.width)x\(image.height), past the pixel limit")
        let bytesPerPixel = image.pixelFormat.channels * image.pixelFormat.bytesPerChannel
        try require(
            image.pixels.count >= image.width * image.height * bytesPerPixel,
            "\(image.pixels.count) bytes for \(image.width)x\(image.height) of \(image.pixelFormat)")
        if let header, recipe.resize == nil, recipe.frame == nil, header.frames == 1 {
            // At full size a still image is its header's size (turned upright by its orientation).
            let upright = header.orientation >= 5 ? (header.height, header.width) : (header.width, header.height)
            try require(
                (image.width, image.height) == upright || (image.width, image.height) == (header.width, header.height),
                "decoded \(image.width)x\(image.height), header \(header.width)x\(header.height) (orientation \(header.orientation))"
            )
        }
    }
}
