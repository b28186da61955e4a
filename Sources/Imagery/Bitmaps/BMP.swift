import Foundation

/// Windows bitmaps (BMP), read and written by Imagery itself: libvips reads them only through
/// ImageMagick, whose loaders are not among those trusted with bytes from anyone.
///
/// Reads what browsers and imgproxy read: the OS/2 1.x core header and the Windows 3.x to V5 info
/// headers; 1, 2, 4 and 8 bits per pixel through a palette (uncompressed, RLE8, RLE4), 16 bits
/// (5-5-5, or any masks), 24 and 32 bits (uncompressed, or any masks, alpha included); rows bottom-up
/// or top-down. Everything is checked against the bytes before it is read: the size against a pixel
/// limit before any pixel buffer exists, every row, palette entry and run within the data; a file
/// that does not hold what it declares is refused (``ImageDecodingError/corrupt(format:reason:)``),
/// never read past.
public enum BMP {
    /// What a bitmap's headers say.
    public struct Header: Sendable, Equatable {
        public var width: Int
        public var height: Int
        /// Bits per pixel (1, 2, 4, 8, 16, 24 or 32).
        public var bitsPerPixel: Int
        /// Whether the pixels may hold alpha (32 bits, or an alpha mask); a file whose alpha is all 0
        /// is read as opaque (as browsers do: many writers leave that byte empty).
        public var mayHaveAlpha: Bool
    }

    /// Reads the headers of a BMP file.
    /// - Throws: ``ImageDecodingError/corrupt(format:reason:)`` for headers that are not a bitmap Imagery reads.
    public static func header(of data: Data) throws -> Header {
        try data.withUnsafeBytes { buffer in
            let bytes = Bytes(buffer)
            return try DIB.parse(bytes, at: 14, fileHeader: true, pixelOffset: Int(try bytes.uint32(10))).header
        }
    }

    /// Decodes a BMP file to 8-bit pixels: grey when its palette is grey, alpha only when a pixel is not opaque.
    /// - Parameters:
    ///   - data: The file.
    ///   - maximumPixels: The most pixels the bitmap may declare, checked before any pixel is read.
    /// - Throws: ``ImageDecodingError/tooManyPixels(width:height:limit:)`` over the limit,
    ///   ``ImageDecodingError/corrupt(format:reason:)`` for a file that is not a bitmap Imagery reads or does not hold its pixels.
    public static func decode(_ data: Data, maximumPixels: Int) throws -> Image {
        try data.withUnsafeBytes { buffer in
            let bytes = Bytes(buffer)
            let offset = Int(try bytes.uint32(10))
            let dib = try DIB.parse(bytes, at: 14, fileHeader: true, pixelOffset: offset)
            try dib.check(maximumPixels: maximumPixels)
            let pixels = try dib.pixels(bytes, at: offset, iconMask: false)
            return pixels.image(width: dib.header.width, height: dib.header.height, format: .bmp)
        }
    }
}

/// Little-endian reads within a buffer, each one checked: a read past the end is a corrupt file, not a crash.
struct Bytes {
    let buffer: UnsafeRawBufferPointer
    let format: ImageFormat

    init(_ buffer: UnsafeRawBufferPointer, format: ImageFormat = .bmp) {
        self.buffer = buffer
        self.format = format
    }

    var count: Int { buffer.count }

    func corrupt(_ reason: String) -> ImageDecodingError { .corrupt(format: format, reason: reason) }

    func require(_ offset: Int, _ length: Int, _ what: @autoclosure () -> String) throws {
        guard offset >= 0, length >= 0, offset <= buffer.count, length <= buffer.count - offset else {
            throw corrupt("the file ends before its \(what())")
        }
    }

    func uint8(_ offset: Int) throws -> UInt8 {
        try require(offset, 1, "data")
        return buffer[offset]
    }

    func uint16(_ offset: Int) throws -> Int {
        try require(offset, 2, "headers")
        return Int(buffer[offset]) | Int(buffer[offset + 1]) << 8
    }

    func uint32(_ offset: Int) throws -> UInt32 {
        try require(offset, 4, "headers")
        return UInt32(buffer[offset]) | UInt32(buffer[offset + 1]) << 8 | UInt32(buffer[offset + 2]) << 16 | UInt32(
            buffer[offset + 3]) << 24
    }

    func int32(_ offset: Int) throws -> Int { Int(Int32(bitPattern: try uint32(offset))) }
}

extension BMP {
    /// `image` as a BMP file: 8-bit grey through a grey palette, 24-bit colour, or 32-bit colour with
    /// alpha (a V4 header with bit fields, as browsers read it); bottom-up rows; 16-bit images reduced
    /// to 8 bits, an animation to its first frame.
    public static func encode(_ image: Image) -> Data {
        let image = image.frame(0).withEightBitChannels()
        let format = image.pixelFormat
        let (width, height) = (image.width, image.height)
        let bits = format == .gray8 ? 8 : format.hasAlpha ? 32 : 24
        let headerSize = bits == 32 ? 108 : 40
        let paletteSize = bits == 8 ? 256 * 4 : 0
        let stride = DIB.stride(width: width, bits: bits)
        let offset = 14 + headerSize + paletteSize
        var data = Data(capacity: offset + stride * height)
        data.append(contentsOf: [0x42, 0x4D])  // BM
        data.append(littleEndian: UInt32(truncatingIfNeeded: offset + stride * height))
        data.append(littleEndian: UInt32(0))
        data.append(littleEndian: UInt32(offset))
        data.append(littleEndian: UInt32(headerSize))
        data.append(littleEndian: Int32(width))
        data.append(littleEndian: Int32(height))  // positive: bottom-up
        data.append(littleEndian: UInt16(1))  // planes
        data.append(littleEndian: UInt16(bits))
        data.append(littleEndian: UInt32(bits == 32 ? 3 : 0))  // bit fields, or uncompressed
        data.append(littleEndian: UInt32(truncatingIfNeeded: stride * height))
        data.append(littleEndian: UInt32(2835))  // 72 dpi
        data.append(littleEndian: UInt32(2835))
        data.append(littleEndian: UInt32(bits == 8 ? 256 : 0))
        data.append(littleEndian: UInt32(0))
        if bits == 32 {
            for mask: UInt32 in [0x00FF_0000, 0x0000_FF00, 0x0000_00FF, 0xFF00_0000] { data.append(littleEndian: mask) }
            data.append(contentsOf: Array("BGRs".utf8))  // LCS_sRGB, stored little-endian
            data.append(Data(count: 36 + 12))  // endpoints and gamma: unused for sRGB
        }
        if bits == 8 {
            for level in 0...255 { data.append(contentsOf: [UInt8(level), UInt8(level), UInt8(level), 0]) }
        }
        let channels = format.channels
        let padding = [UInt8](repeating: 0, count: stride - width * bits / 8)
        image.pixels.withUnsafeBytes { pixels in
            var row = [UInt8](repeating: 0, count: width * bits / 8)
            for y in (0..<height).reversed() {
                let line = y * width * channels
                for x in 0..<width {
                    let source = line + x * channels
                    let (red, green, blue) =
                        format.isGray
                        ? (pixels[source], pixels[source], pixels[source])
                        : (pixels[source], pixels[source + 1], pixels[source + 2])
                    switch bits {
                    case 8: row[x] = red
                    case 24: (row[3 * x], row[3 * x + 1], row[3 * x + 2]) = (blue, green, red)
                    default:
                        (row[4 * x], row[4 * x + 1], row[4 * x + 2], row[4 * x + 3]) = (
                            blue, green, red, pixels[source + channels - 1]
                        )
                    }
                }
                data.append(contentsOf: row)
                data.append(contentsOf: padding)
            }
        }
        return data
    }
}
