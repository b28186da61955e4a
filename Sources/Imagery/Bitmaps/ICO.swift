import Foundation

/// Windows icons (ICO, and cursors: CUR), read and written by Imagery itself (libvips has no reader
/// of its own). An icon file holds several pictures; the largest is the image (as imgproxy and
/// browsers take it), either a PNG (read as any PNG) or a bitmap with a 1-bit transparency mask.
/// Written as one PNG picture of at most 256 × 256 (what every reader since Windows Vista takes).
public enum ICO {
    /// The largest picture of an icon file.
    public enum Picture: Sendable, Equatable {
        /// A PNG file, as stored.
        case png(Data)
        /// A bitmap, decoded.
        case bitmap(Image)
    }

    /// The size of the largest picture (the largest by the directory), as its own header gives it: what a
    /// decode gives, whatever the directory says (fuzzing found a bitmap of 32 × 23 listed as 32 × 32).
    /// For a PNG picture, the size the directory gives: read the PNG's header (``largestPNG(in:)``).
    /// - Throws: ``ImageDecodingError/corrupt(format:reason:)`` for a file that is not an icon Imagery reads.
    public static func largestSize(of data: Data) throws -> (width: Int, height: Int) {
        try data.withUnsafeBytes { buffer in
            let entry = try largestEntry(Bytes(buffer, format: .ico))
            if isPNG(buffer, entry) { return (entry.width, entry.height) }
            let picture = Bytes(
                UnsafeRawBufferPointer(rebasing: buffer[entry.offset..<entry.offset + entry.length]), format: .ico)
            let dib = try DIB.parse(picture, at: 0, fileHeader: false, icon: true)
            return (dib.header.width, dib.header.height)
        }
    }

    /// The largest picture's bytes when it is a PNG (read as any PNG); `nil` when it is a bitmap.
    /// - Throws: ``ImageDecodingError/corrupt(format:reason:)`` for a file that is not an icon Imagery reads.
    public static func largestPNG(in data: Data) throws -> Data? {
        try data.withUnsafeBytes { buffer in
            let entry = try largestEntry(Bytes(buffer, format: .ico))
            return isPNG(buffer, entry) ? Data(buffer[entry.offset..<entry.offset + entry.length]) : nil
        }
    }

    static func isPNG(_ buffer: UnsafeRawBufferPointer, _ entry: Entry) -> Bool {
        let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        return entry.length >= signature.count
            && Array(buffer[entry.offset..<entry.offset + signature.count]) == signature
    }

    /// The largest picture of an icon file.
    /// - Parameters:
    ///   - data: The file.
    ///   - maximumPixels: The most pixels a bitmap picture may declare, checked before its pixels are read
    ///     (a PNG picture is checked by whoever decodes it).
    /// - Throws: ``ImageDecodingError/corrupt(format:reason:)`` for a file that is not an icon Imagery reads,
    ///   ``ImageDecodingError/tooManyPixels(width:height:limit:)``.
    public static func largestPicture(of data: Data, maximumPixels: Int) throws -> Picture {
        try data.withUnsafeBytes { buffer in
            let bytes = Bytes(buffer, format: .ico)
            let entry = try largestEntry(bytes)
            if isPNG(buffer, entry) { return .png(Data(buffer[entry.offset..<entry.offset + entry.length])) }
            let picture = Bytes(
                UnsafeRawBufferPointer(rebasing: buffer[entry.offset..<entry.offset + entry.length]), format: .ico)
            let dib = try DIB.parse(picture, at: 0, fileHeader: false, icon: true)
            try dib.check(maximumPixels: maximumPixels)
            let pixels = try dib.pixels(picture, at: dib.end, iconMask: true)
            return .bitmap(pixels.image(width: dib.header.width, height: dib.header.height, format: .ico))
        }
    }

    struct Entry {
        let width: Int
        let height: Int
        let bitsPerPixel: Int
        let offset: Int
        let length: Int
    }

    /// The directory's largest entry (by area, then bits per pixel), its bytes within the file.
    static func largestEntry(_ bytes: Bytes) throws -> Entry {
        guard try bytes.uint16(0) == 0, [1, 2].contains(try bytes.uint16(2)) else {
            throw bytes.corrupt("an icon file starts with 0, 1 (or 2)")
        }
        let count = try bytes.uint16(4)
        guard count > 0 else { throw bytes.corrupt("an icon file with no picture") }
        var best: Entry?
        for index in 0..<count {
            let start = 6 + 16 * index
            let width = Int(try bytes.uint8(start))
            let height = Int(try bytes.uint8(start + 1))
            let entry = Entry(
                width: width == 0 ? 256 : width, height: height == 0 ? 256 : height,
                bitsPerPixel: try bytes.uint16(start + 6),
                offset: Int(try bytes.uint32(start + 12)), length: Int(try bytes.uint32(start + 8))
            )
            if let current = best,
                (current.width * current.height, current.bitsPerPixel) >= (
                    entry.width * entry.height, entry.bitsPerPixel
                )
            {
                continue
            }
            best = entry
        }
        guard let best else { throw bytes.corrupt("an icon file with no picture") }
        try bytes.require(best.offset, best.length, "picture of \(best.width)x\(best.height)")
        guard best.length > 0 else { throw bytes.corrupt("an empty picture") }
        return best
    }

    /// An icon file of one PNG picture (`png`, at most 256 × 256, as ``largestPicture(of:maximumPixels:)`` reads it).
    /// - Precondition: `width` and `height` are from 1 to 256.
    public static func encode(png: Data, width: Int, height: Int, hasAlpha: Bool) -> Data {
        precondition((1...256).contains(width) && (1...256).contains(height), "an icon is at most 256 x 256")
        var data = Data([0, 0, 1, 0, 1, 0])  // reserved, type 1 (icon), 1 picture
        data.append(contentsOf: [UInt8(width % 256), UInt8(height % 256), 0, 0])  // 0 means 256; no palette
        data.append(littleEndian: UInt16(1))  // planes
        data.append(littleEndian: UInt16(hasAlpha ? 32 : 24))
        data.append(littleEndian: UInt32(png.count))
        data.append(littleEndian: UInt32(6 + 16))
        data.append(png)
        return data
    }
}

extension Data {
    mutating func append<Value: FixedWidthInteger>(littleEndian value: Value) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }
}
