import Foundation

/// Broken and hostile inputs made from the committed fixtures, so the tests
/// that need them run without `../shared/corpus-bad`.
public enum BrokenImages {
    /// Name and bytes of each broken input.
    public static func all() throws -> [(name: String, data: Data)] {
        let jpeg = try Fixtures.data("rocket.jpg")
        let png = try Fixtures.data("chelsea.png")
        let webp = try Fixtures.data("chelsea.webp")
        let gif = try Fixtures.data("chelsea.gif")
        return [
            ("empty", Data()),
            ("text-named-jpg", Data("<html><body>404 Not Found</body></html>\n".utf8)),
            ("truncated-header.jpg", jpeg.prefix(400)),
            ("truncated-half.jpg", jpeg.prefix(jpeg.count / 2)),
            ("truncated-ihdr.png", png.prefix(20)),
            ("truncated-half.png", png.prefix(png.count / 2)),
            ("truncated-half.webp", webp.prefix(webp.count / 2)),
            ("truncated-half.gif", gif.prefix(gif.count / 2)),
            ("garbled-scan.jpg", garbled(jpeg)),
            ("bomb-header-100000x100000.png", pngBomb(width: 100_000, height: 100_000)),
        ]
    }

    /// A JPEG whose entropy-coded data has 2 KB of noise (no 0xFF bytes) a third of the way in.
    static func garbled(_ jpeg: Data) -> Data {
        var bytes = [UInt8](jpeg)
        var state: UInt32 = 12345
        let start = bytes.count / 3
        for index in start..<min(bytes.count - 2, start + 2048) {
            state = state &* 1_103_515_245 &+ 12345
            bytes[index] = UInt8(truncatingIfNeeded: state >> 16) & 0x7F
        }
        return Data(bytes)
    }

    /// A PNG whose header declares `width` x `height` RGBA pixels, with valid
    /// CRCs but one tiny IDAT: a decoder that trusts the header allocates gigabytes.
    public static func pngBomb(width: UInt32, height: UInt32) -> Data {
        var png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        var header = Data()
        header.append(bigEndian: width)
        header.append(bigEndian: height)
        header.append(contentsOf: [8, 6, 0, 0, 0])  // 8-bit RGBA, deflate, no filter, no interlace
        png.appendChunk("IHDR", header)
        // zlib stream of a few zero bytes (stored block).
        png.appendChunk(
            "IDAT", Data([0x78, 0x01, 0x01, 0x05, 0x00, 0xFA, 0xFF, 0, 0, 0, 0, 0, 0x00, 0x00, 0x00, 0x01]))
        png.appendChunk("IEND", Data())
        return png
    }
}

extension Data {
    fileprivate mutating func append(bigEndian value: UInt32) {
        Swift.withUnsafeBytes(of: value.bigEndian) { append(contentsOf: $0) }
    }

    fileprivate mutating func appendChunk(_ type: String, _ payload: Data) {
        append(bigEndian: UInt32(payload.count))
        let typed = Data(type.utf8) + payload
        append(typed)
        append(bigEndian: crc32(typed))
    }
}

/// CRC-32 (ISO 3309), as PNG chunks use.
func crc32(_ data: Data) -> UInt32 {
    var crc: UInt32 = 0xFFFF_FFFF
    for byte in data {
        crc ^= UInt32(byte)
        for _ in 0..<8 { crc = (crc >> 1) ^ (0xEDB8_8320 & (0 &- (crc & 1))) }
    }
    return ~crc
}
