import Foundation

/// EXIF blocks as an encoder writes them (the payload of a JPEG APP1 segment: `Exif\0\0` and a TIFF
/// structure): a kept block brought up to date with the pixels, or a small block holding a copyright
/// notice alone.
package enum ExifBlock {
    private static let header: [UInt8] = Array("Exif".utf8) + [0, 0]

    /// `block` (with or without its `Exif\0\0` header) with its orientation made 1 (the pixels are shown
    /// as stored: they were turned) and its pixel dimensions, where it has them, set to `width` × `height`.
    /// Everything else is kept byte for byte. `nil` when the block is not a TIFF structure whose first
    /// directory can be read: an orientation that cannot be reset must not be passed on.
    package static func oriented(_ block: Data, width: Int, height: Int) -> Data? {
        var bytes = [UInt8](block)
        if bytes.starts(with: header) { bytes.removeFirst(header.count) }
        guard var tiff = TIFF(bytes) else { return nil }
        guard let entries = tiff.entries(at: tiff.firstDirectory) else { return nil }
        for entry in entries {
            switch entry.tag {
            case 0x0112: tiff.set(entry, to: 1)  // Orientation
            case 0x8769:  // the Exif directory
                for inner in tiff.entries(at: tiff.value(of: entry)) ?? [] {
                    if inner.tag == 0xA002 { tiff.set(inner, to: width) }  // PixelXDimension
                    if inner.tag == 0xA003 { tiff.set(inner, to: height) }  // PixelYDimension
                }
            default: break
            }
        }
        return Data(header + tiff.bytes)
    }

    /// A block with one entry: `Copyright` (ASCII, NUL-terminated), little-endian.
    package static func copyright(_ notice: String) -> Data {
        let text = Array(notice.utf8.prefix(60_000).filter { $0 != 0 }) + [0]
        var bytes: [UInt8] = [0x49, 0x49, 0x2A, 0x00, 8, 0, 0, 0]  // "II", 42, first directory at 8
        func append16(_ value: Int) { bytes += [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF)] }
        func append32(_ value: Int) {
            append16(value & 0xFFFF)
            append16(value >> 16 & 0xFFFF)
        }
        append16(1)  // one entry
        append16(0x8298)  // Copyright
        append16(2)  // ASCII
        append32(text.count)
        if text.count <= 4 {
            bytes += text + [UInt8](repeating: 0, count: 4 - text.count)
            append32(0)  // no next directory
        } else {
            append32(8 + 2 + 12 + 4)  // the text follows the directory
            append32(0)
            bytes += text
        }
        return Data(header + bytes)
    }

    /// A TIFF structure's bytes, read and patched with its byte order; every offset checked.
    private struct TIFF {
        struct Entry {
            let tag: Int, type: Int, count: Int
            let offset: Int  // of the entry's value field (4 bytes)
        }

        var bytes: [UInt8]
        let bigEndian: Bool

        init?(_ bytes: [UInt8]) {
            guard bytes.count >= 8 else { return nil }
            switch (bytes[0], bytes[1]) {
            case (0x49, 0x49): bigEndian = false
            case (0x4D, 0x4D): bigEndian = true
            default: return nil
            }
            self.bytes = bytes
            guard read16(2) == 42 else { return nil }
        }

        var firstDirectory: Int { read32(4) ?? -1 }

        /// The entries of the directory at `offset`, or `nil` when it does not fit in the block.
        func entries(at offset: Int) -> [Entry]? {
            guard offset >= 8, let count = read16(offset), offset + 2 + count * 12 <= bytes.count else { return nil }
            return (0..<count).compactMap { index in
                let start = offset + 2 + index * 12
                guard let tag = read16(start), let type = read16(start + 2), let count = read32(start + 4) else {
                    return nil
                }
                return Entry(tag: tag, type: type, count: count, offset: start + 8)
            }
        }

        /// An entry's value when it is one SHORT or LONG (held in the entry itself); -1 otherwise.
        func value(of entry: Entry) -> Int {
            guard entry.count == 1 else { return -1 }
            switch entry.type {
            case 3: return read16(entry.offset) ?? -1
            case 4: return read32(entry.offset) ?? -1
            default: return -1
            }
        }

        /// Sets a one-value SHORT or LONG entry to `value` (a SHORT only when it fits).
        mutating func set(_ entry: Entry, to value: Int) {
            guard entry.count == 1, value >= 0 else { return }
            if entry.type == 3, value <= 0xFFFF {
                write(value, at: entry.offset, size: 2)
            } else if entry.type == 4, value <= 0xFFFF_FFFF {
                write(value, at: entry.offset, size: 4)
            }
        }

        private func read16(_ offset: Int) -> Int? {
            guard offset >= 0, offset + 2 <= bytes.count else { return nil }
            let (a, b) = (Int(bytes[offset]), Int(bytes[offset + 1]))
            return bigEndian ? a << 8 | b : b << 8 | a
        }

        private func read32(_ offset: Int) -> Int? {
            guard let first = read16(offset), let second = read16(offset + 2) else { return nil }
            return bigEndian ? first << 16 | second : second << 16 | first
        }

        private mutating func write(_ value: Int, at offset: Int, size: Int) {
            guard offset >= 0, offset + size <= bytes.count else { return }
            for index in 0..<size {
                let shift = 8 * (bigEndian ? size - 1 - index : index)
                bytes[offset + index] = UInt8(value >> shift & 0xFF)
            }
        }
    }
}
