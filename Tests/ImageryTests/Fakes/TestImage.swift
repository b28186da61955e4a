import Foundation

@testable import Imagery

/// A tiny image format of the tests' own, which ``MockImageDecoder`` reads and ``MockImageEncoder``
/// writes, so that the pipeline's tests need no codec: `"TIMG"`, the width and height (16 bits
/// each, big-endian), a tag byte (every pixel of the decoded image has it: a version of a source
/// can be told from another), the format the image stands for, then any padding (a size for
/// progress and budgets).
enum TestImage {
    static let magic = Data("TIMG".utf8)
    static let headerSize = 10

    /// The encoded bytes of a `width` × `height` image whose pixels are `tag`, padded to at least `size` bytes.
    static func data(
        width: Int = 64, height: Int = 48, tag: UInt8 = 1, format: ImageFormat = .jpeg, size: Int = 0
    ) -> Data {
        precondition((1...0xFFFF).contains(width) && (1...0xFFFF).contains(height))
        var data = magic
        data.append(contentsOf: [UInt8(width >> 8), UInt8(width & 0xFF), UInt8(height >> 8), UInt8(height & 0xFF), tag])
        data.append(UInt8(ImageFormat.allCases.firstIndex(of: format)!))
        if data.count < size { data.append(Data(repeating: 0xEE, count: size - data.count)) }
        return data
    }

    /// What the header of `data` says.
    struct Header: Equatable {
        var width: Int
        var height: Int
        var tag: UInt8
        var format: ImageFormat
    }

    /// Reads the header.
    /// - Throws: ``ImageDecodingError/empty``, ``ImageDecodingError/unsupportedFormat`` (no magic),
    ///   ``ImageDecodingError/corrupt(format:reason:)`` (a header cut short).
    static func header(of data: Data) throws -> Header {
        guard !data.isEmpty else { throw ImageDecodingError.empty }
        guard data.starts(with: magic) else { throw ImageDecodingError.unsupportedFormat }
        guard data.count >= headerSize else {
            throw ImageDecodingError.corrupt(format: nil, reason: "header cut short")
        }
        let bytes = [UInt8](data.prefix(headerSize))
        let width = Int(bytes[4]) << 8 | Int(bytes[5])
        let height = Int(bytes[6]) << 8 | Int(bytes[7])
        guard width > 0, height > 0 else { throw ImageDecodingError.invalidSize(width: width, height: height) }
        let formats = ImageFormat.allCases
        guard Int(bytes[9]) < formats.count else {
            throw ImageDecodingError.corrupt(format: nil, reason: "no such format")
        }
        return Header(width: width, height: height, tag: bytes[8], format: formats[Int(bytes[9])])
    }

    /// The size `recipe` makes of a `width` × `height` source: the source without a resize; the box
    /// for `cover`, `fill` and `contain` (and the other fits that fill the box); the whole image
    /// within the box for `inside`; covering it for `outside`.
    static func size(of recipe: ImageRecipe, width: Int, height: Int) -> (width: Int, height: Int) {
        guard let box = recipe.resize else { return (width, height) }
        switch box.fit {
        case .inside, .outside:
            let (x, y) = (Double(box.width) / Double(width), Double(box.height) / Double(height))
            let scale = box.fit == .inside ? min(x, y) : max(x, y)
            return (max(1, Int((Double(width) * scale).rounded())), max(1, Int((Double(height) * scale).rounded())))
        default:
            return (box.width, box.height)
        }
    }

    /// A `width` × `height` grey image whose every pixel is `tag`, standing for `format`.
    static func image(width: Int, height: Int, tag: UInt8, format: ImageFormat = .jpeg) -> Image {
        Image(
            width: width, height: height, pixelFormat: .gray8, pixels: Data(repeating: tag, count: width * height),
            sourceFormat: format
        )
    }
}

extension Image {
    /// The tag of a test image: the value of its first pixel.
    var testTag: UInt8 { pixels.first ?? 0 }
}
