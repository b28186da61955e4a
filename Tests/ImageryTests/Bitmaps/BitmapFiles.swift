import Foundation

@testable import Imagery

/// Windows bitmaps and icons written byte by byte for tests: every header, depth and compression the
/// readers take, built from pixels given top row first, so a test states what a decode must give.
enum BitmapFiles {
    static func le16(_ value: Int) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF)] }

    static func le32(_ value: Int) -> [UInt8] {
        let bits = UInt32(truncatingIfNeeded: value)
        return [UInt8(bits & 0xFF), UInt8(bits >> 8 & 0xFF), UInt8(bits >> 16 & 0xFF), UInt8(bits >> 24)]
    }

    /// A BITMAPINFOHEADER of `size` bytes (16, 40, 52, 56, 64, 108 or 124): the fields of the 40-byte
    /// header as far as they fit, then `masks` (red, green, blue, alpha) where the larger headers hold them.
    static func infoHeader(
        size: Int = 40, width: Int, height: Int, bits: Int, compression: Int = 0, colours: Int = 0, masks: [UInt32] = []
    ) -> [UInt8] {
        var header = le32(size) + le32(width) + le32(height) + le16(1) + le16(bits)
        header += le32(compression) + le32(0) + le32(2835) + le32(2835) + le32(colours) + le32(0)
        if size >= 52 {
            let count = size >= 56 ? 4 : 3
            for index in 0..<count { header += le32(Int(index < masks.count ? masks[index] : 0)) }
        }
        header += [UInt8](repeating: 0, count: max(0, size - header.count))
        return Array(header.prefix(size))
    }

    /// An OS/2 1.x core header (12 bytes: 16-bit sizes).
    static func coreHeader(width: Int, height: Int, bits: Int) -> [UInt8] {
        le32(12) + le16(width) + le16(height) + le16(1) + le16(bits)
    }

    /// A BMP file: "BM", the file header, `dib` (headers, masks after a 40-byte header, palette) and the pixels.
    /// - Parameter pixelOffset: Where the file header says the pixels start; default: right after `dib`.
    static func bmp(dib: [UInt8], pixels: [UInt8], pixelOffset: Int? = nil) -> Data {
        let offset = pixelOffset ?? 14 + dib.count
        return Data(Array("BM".utf8) + le32(14 + dib.count + pixels.count) + le32(0) + le32(offset) + dib + pixels)
    }

    /// Palette entries (blue, green, red, reserved), or three bytes each for a core header.
    static func palette(_ colours: [(UInt8, UInt8, UInt8)], entrySize: Int = 4) -> [UInt8] {
        colours.flatMap { entrySize == 4 ? [$0.2, $0.1, $0.0, 0] : [$0.2, $0.1, $0.0] }
    }

    /// `indices` (top row first) packed at `bits` a pixel into rows padded to 4 bytes, bottom row first
    /// unless `topDown`.
    static func packed(_ indices: [[Int]], bits: Int, topDown: Bool = false) -> [UInt8] {
        let rows = topDown ? indices : indices.reversed()
        return rows.flatMap { row -> [UInt8] in
            var bytes = [UInt8](repeating: 0, count: DIB.stride(width: row.count, bits: bits))
            for (x, index) in row.enumerated() {
                let bit = x * bits
                bytes[bit / 8] |= UInt8(index << (8 - bits - bit % 8) & 0xFF)
            }
            return bytes
        }
    }

    /// Pixels (top row first) as 24-bit BGR rows, padded, bottom row first unless `topDown`.
    static func bgr(_ pixels: [[(UInt8, UInt8, UInt8)]], topDown: Bool = false) -> [UInt8] {
        let rows = topDown ? pixels : pixels.reversed()
        return rows.flatMap { row -> [UInt8] in
            var bytes = row.flatMap { [$0.2, $0.1, $0.0] }
            bytes += [UInt8](repeating: 0, count: DIB.stride(width: row.count, bits: 24) - bytes.count)
            return bytes
        }
    }

    /// Pixels (top row first) as 32-bit words in the byte order BGRA (the default masks), bottom row first.
    static func bgra(_ pixels: [[(UInt8, UInt8, UInt8, UInt8)]], topDown: Bool = false) -> [UInt8] {
        (topDown ? pixels : pixels.reversed()).flatMap { row in row.flatMap { [$0.2, $0.1, $0.0, $0.3] } }
    }

    /// 16-bit words (top row first), little-endian, rows padded, bottom row first.
    static func words(_ values: [[Int]]) -> [UInt8] {
        values.reversed().flatMap { row -> [UInt8] in
            var bytes = row.flatMap { le16($0) }
            bytes += [UInt8](repeating: 0, count: DIB.stride(width: row.count, bits: 16) - bytes.count)
            return bytes
        }
    }

    /// 8-bit pixels of an image, as a decode gives them (grey when every pixel is, alpha only when one is not opaque).
    static func expected(_ pixels: [[(UInt8, UInt8, UInt8, UInt8)]]) -> (PixelFormat, [UInt8]) {
        let flat = pixels.flatMap { $0 }
        let grey = flat.allSatisfy { $0.0 == $0.1 && $0.1 == $0.2 }
        let opaque = flat.allSatisfy { $0.3 == 255 }
        let format = PixelFormat(channels: (grey ? 1 : 3) + (opaque ? 0 : 1))!
        let bytes = flat.flatMap { pixel -> [UInt8] in
            (grey ? [pixel.0] : [pixel.0, pixel.1, pixel.2]) + (opaque ? [] : [pixel.3])
        }
        return (format, bytes)
    }

    /// An ICO (or, `type` 2, CUR) file of `pictures`: each its directory's width and height (256 as 0),
    /// bits per pixel and bytes, stored one after another after the directory.
    static func ico(_ pictures: [(width: Int, height: Int, bits: Int, bytes: [UInt8])], type: Int = 1) -> Data {
        var data = le16(0) + le16(type) + le16(pictures.count)
        var offset = 6 + 16 * pictures.count
        for picture in pictures {
            data += [UInt8(picture.width % 256), UInt8(picture.height % 256), 0, 0] + le16(1) + le16(picture.bits)
            data += le32(picture.bytes.count) + le32(offset)
            offset += picture.bytes.count
        }
        for picture in pictures { data += picture.bytes }
        return Data(data)
    }

    /// An icon's bitmap: a 40-byte header of twice the height (the AND mask counts), the palette, the
    /// pixels (XOR) and, unless left out, the 1-bit AND mask (1: transparent), rows bottom first.
    static func iconBitmap(
        width: Int, height: Int, bits: Int, palette: [UInt8] = [], pixels: [UInt8], mask: [[Int]]?
    ) -> [UInt8] {
        infoHeader(width: width, height: 2 * height, bits: bits, colours: palette.count / 4) + palette + pixels
            + (mask.map { packed($0, bits: 1) } ?? [])
    }

    /// A small PNG (8-bit RGBA, `width` × `height`) whose header says its size: what an icon holds.
    static func png(width: Int, height: Int) -> [UInt8] {
        var bytes: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        bytes += [0, 0, 0, 13] + Array("IHDR".utf8)
        bytes += [UInt8(width >> 24), UInt8(width >> 16 & 0xFF), UInt8(width >> 8 & 0xFF), UInt8(width & 0xFF)]
        bytes += [UInt8(height >> 24), UInt8(height >> 16 & 0xFF), UInt8(height >> 8 & 0xFF), UInt8(height & 0xFF)]
        bytes += [8, 6, 0, 0, 0, 0, 0, 0, 0]  // depth, colour type, methods, a CRC not checked here
        return bytes
    }
}
