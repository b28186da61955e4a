import CJPEG
import Foundation
import Imagery
import ImageryTestSupport
import Testing

@testable import ImageryVips

/// Imagery's JPEG encoder (`JPEGWriter` on `CJPEG`): what libjpeg reads back, the tables and scans it
/// writes, the metadata it keeps.
@Suite("JPEG writer")
struct JPEGWriterTests {
    let encoder = VipsImageEncoder()

    func photo(width: Int = 256, height: Int = 160) throws -> Image {
        try VipsImageDecoder().decode(
            Fixtures.data("chelsea.png"), thumbnail: .init(width: width, height: height, fit: .fill))
    }

    /// Every quality and both chroma layouts decode with libjpeg in strict mode (no warning) to the
    /// size written, close to the pixels given (closer as the quality rises).
    @Test(arguments: [1, 30, 60, 80, 90, 100])
    func libjpegReadsItBackStrictly(quality: Int) throws {
        let image = try photo()
        let jpeg = try encoder.encode(image, as: .jpeg, quality: quality)
        let decoded = try StrictJPEG(jpeg)
        #expect((decoded.width, decoded.height, decoded.components) == (image.width, image.height, 3))
        let error =
            zip(decoded.pixels, image.pixels).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) } / decoded.pixels.count
        #expect(error <= (quality >= 90 ? 2 : quality >= 60 ? 4 : 20), "mean error \(error) at q\(quality)")
    }

    /// Sizes that are not whole blocks or MCUs (the edges are replicated, libjpeg adds the blocks past
    /// them): libjpeg reads each back at its size, close to the pixels.
    @Test func oddSizesAreWhole() throws {
        for (width, height) in [(1, 1), (7, 5), (9, 17), (16, 16), (17, 8), (33, 31)] {
            let image = GeneratedImages.image(width: width, height: height, format: .rgb8) { x, y in
                [UInt8(x * 7 % 256), UInt8(y * 9 % 256), 128]
            }
            let decoded = try StrictJPEG(try encoder.encode(image, as: .jpeg, quality: 90))
            #expect((decoded.width, decoded.height) == (width, height))
            let error =
                zip(decoded.pixels, image.pixels).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) } / decoded.pixels.count
            #expect(error <= 6, "\(width)x\(height): mean error \(error)")
        }
    }

    /// Trellis quantisation chooses coefficients for their bits: never more bytes than rounding them,
    /// at the same tables and quality, on every committed photo fixture.
    @Test func trellisIsNeverLargerThanRounding() throws {
        for name in ["chelsea.png", "rocket.jpg", "rocket-portrait.jpg", "camera-gray.jpg", "Colour/chelsea-p3.png"] {
            let image = try VipsImageDecoder().decode(
                Fixtures.data(name), thumbnail: .init(width: 320, height: 320, fit: .inside))
            for tables in [IMAGERY_JPEG_TABLES_STANDARD, IMAGERY_JPEG_TABLES_TUNED] {
                for quality in [20, 50, 80, 95] {
                    let plain = try CJPEGEncode(image, quality: quality, tables: Int32(tables), trellis: false)
                    let trellis = try CJPEGEncode(image, quality: quality, tables: Int32(tables), trellis: true)
                    #expect(
                        trellis.count <= plain.count,
                        "\(name) q\(quality) tables \(tables): \(trellis.count) > \(plain.count)")
                    #expect(try StrictJPEG(trellis).width == image.width)
                }
            }
        }
    }

    /// At quality 100 every quantiser is 1 and chroma is whole: what is left is the rounding of the colour
    /// conversion and the coefficients, as libjpeg's own encoder leaves it (measured: at most 4 levels,
    /// 0.43 on average, against libjpeg's 4 and 0.45). A DCT, colour conversion or scaling off by
    /// anything shows here.
    @Test func qualityHundredIsAlmostLossless() throws {
        let image = try photo()
        for trellis in [false, true] {
            let decoded = try StrictJPEG(
                try CJPEGEncode(
                    image, quality: 100, tables: Int32(IMAGERY_JPEG_TABLES_TUNED), trellis: trellis, fullChroma: true))
            let errors = zip(decoded.pixels, image.pixels).map { abs(Int($0) - Int($1)) }
            #expect(
                errors.max()! <= 5 && Double(errors.reduce(0, +)) / Double(errors.count) < 0.6, "trellis \(trellis)")
        }
    }

    @Test func greyStaysOneComponent() throws {
        let grey = try VipsImageDecoder().decode(
            Fixtures.data("camera-gray.jpg"), thumbnail: .init(width: 100, height: 100))
        #expect(grey.pixelFormat == .gray8)
        let decoded = try StrictJPEG(try encoder.encode(grey, as: .jpeg, quality: 80))
        #expect(decoded.components == 1 && (decoded.width, decoded.height) == (grey.width, grey.height))
    }

    /// The quantisation tables are the tuned ones, scaled by the quality as libjpeg scales its own
    /// (at 50 as they are; at 80 to 40 %, rounded; never 0), luma and chroma alike.
    @Test func writesTheTunedTables() throws {
        let tuned: [Int] = [
            16, 16, 16, 18, 25, 37, 56, 85, 16, 17, 20, 27, 34, 40, 53, 75, 16, 20, 24, 31, 43, 62, 91, 135,
            18, 27, 31, 40, 53, 74, 106, 156, 25, 34, 43, 53, 69, 94, 131, 189, 37, 40, 62, 74, 94, 124, 169, 238,
            56, 53, 91, 106, 131, 169, 226, 311, 85, 75, 135, 156, 189, 238, 311, 418,
        ]
        for (quality, scale) in [(50, 100), (80, 40), (95, 10)] {
            let tables = JPEGSegments(try encoder.encode(photo(), as: .jpeg, quality: quality)).quantisationTables
            let expected = tuned.map { min(255, max(1, ($0 * scale + 50) / 100)) }
            #expect(tables.count == 2 && tables.allSatisfy { $0 == expected }, "q\(quality): \(tables)")
        }
    }

    /// Huffman tables fitted to the image, not the standard's examples (which start with luma DC
    /// code lengths 0 1 5 1 1 1 1 1 1).
    @Test func huffmanTablesAreOptimised() throws {
        let segments = JPEGSegments(try encoder.encode(photo(), as: .jpeg, quality: 80))
        let standardLumaDC: [UInt8] = [0, 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0]
        #expect(!segments.huffmanTables.isEmpty && !segments.huffmanTables.contains(standardLumaDC))
    }

    /// Baseline below the progressive threshold, progressive from it, or when asked; 4:2:0 chroma below
    /// quality 90, 4:4:4 from it.
    @Test func scansAndChromaFollowSizeAndQuality() throws {
        let small = JPEGSegments(try encoder.encode(photo(), as: .jpeg, quality: 80))
        #expect(small.frameMarker == 0xC0 && small.lumaSampling == 0x22)
        let big = GeneratedImages.image(width: 600, height: 400, format: .rgb8) { x, y in
            [UInt8(x % 256), UInt8(y % 256), UInt8((x + y) % 256)]
        }
        let large = JPEGSegments(try encoder.encode(big, as: .jpeg, quality: 80))
        #expect(large.frameMarker == 0xC2 && large.scanCount > 1)
        let asked = JPEGSegments(try encoder.encode(photo(), as: .jpeg, options: .init(quality: 80, progressive: true)))
        #expect(asked.frameMarker == 0xC2)
        let fine = JPEGSegments(try encoder.encode(photo(), as: .jpeg, quality: 90))
        #expect(fine.lumaSampling == 0x11)
        #expect(600 * 400 >= JPEGWriter.progressiveFromPixels && 256 * 160 < JPEGWriter.progressiveFromPixels)
    }

    /// No JFIF segment (nothing in it is needed: as libvips writes with `strip`), no metadata unless kept.
    @Test func writesNothingButThePicture() throws {
        let segments = JPEGSegments(try encoder.encode(photo(), as: .jpeg, quality: 80))
        #expect(segments.applicationMarkers.isEmpty)
    }

    /// A kept ICC profile, XMP and EXIF read back through libvips; the EXIF orientation is 1.
    @Test func keptMetadataReadsBack() throws {
        let source = try VipsImageDecoder().decode(
            Fixtures.data("rocket-exif6.jpg"),
            recipe: {
                var r = ImageRecipe()
                r.keptMetadata = .all
                return r
            }())
        #expect(source.metadata.exif != nil)
        var image = try photo()
        image.metadata = source.metadata
        image.metadata.xmp = Data(#"<x:xmpmeta xmlns:x="adobe:ns:meta/"/>"#.utf8)
        image.metadata.iccProfile = try StrictJPEG(Fixtures.data("Colour/rocket-p3.jpg")).iccProfile
        let jpeg = try encoder.encode(image, as: .jpeg, quality: 80)
        let header = try VipsImageDecoder().inspect(jpeg)
        #expect(header.orientation == 1)
        var keepingAll = ImageRecipe()
        keepingAll.keptMetadata = .all
        let again = try VipsImageDecoder().decode(jpeg, recipe: keepingAll).metadata
        #expect(again.xmp.map { String(decoding: $0, as: UTF8.self).contains("xmpmeta") } == true)
        #expect(again.exif != nil)
        let profile = try StrictJPEG(jpeg).iccProfile
        #expect(profile != nil && profile == image.metadata.iccProfile)
    }

    /// A profile longer than one segment is split into APP2 chunks that join back to it.
    @Test func aLargeProfileIsChunked() throws {
        var image = try photo()
        image.metadata.iccProfile = Data((0..<150_000).map { UInt8(truncatingIfNeeded: $0 &* 7919) })
        let jpeg = try encoder.encode(image, as: .jpeg, quality: 80)
        #expect(JPEGSegments(jpeg).applicationMarkers == [0xE2, 0xE2, 0xE2])
        #expect(try StrictJPEG(jpeg).iccProfile == image.metadata.iccProfile)
    }

    @Test func aCopyrightAloneBecomesASmallExifBlock() throws {
        var image = try photo()
        image.metadata.copyright = "© Imagery tests 2026"
        let jpeg = try encoder.encode(image, as: .jpeg, quality: 80)
        var keepingCopyright = ImageRecipe()
        keepingCopyright.keptMetadata = .copyright
        #expect(
            try VipsImageDecoder().decode(jpeg, recipe: keepingCopyright).metadata.copyright == "© Imagery tests 2026")
        let short = ExifBlock.copyright("ab")  // fits in its entry
        #expect(short.count == 6 + 8 + 2 + 12 + 4)
    }
}

/// The EXIF block an encoder keeps: orientation and pixel size brought up to date, in either byte order.
@Suite("EXIF block")
struct ExifBlockTests {
    /// A TIFF structure: IFD0 with Orientation (SHORT) and an Exif IFD pointer; the Exif IFD with
    /// PixelXDimension (LONG) and PixelYDimension (SHORT).
    static func block(bigEndian: Bool, orientation: Int) -> Data {
        var bytes: [UInt8] = []
        func put(_ value: Int, _ size: Int) {
            for index in 0..<size { bytes.append(UInt8(value >> (8 * (bigEndian ? size - 1 - index : index)) & 0xFF)) }
        }
        bytes += bigEndian ? [0x4D, 0x4D] : [0x49, 0x49]
        put(42, 2)
        put(8, 4)
        put(2, 2)  // IFD0 at 8: two entries
        put(0x0112, 2)
        put(3, 2)
        put(1, 4)
        put(orientation, 2)
        put(0, 2)
        put(0x8769, 2)
        put(4, 2)
        put(1, 4)
        put(8 + 2 + 24 + 4, 4)
        put(0, 4)
        put(2, 2)  // Exif IFD at 38
        put(0xA002, 2)
        put(4, 2)
        put(1, 4)
        put(4000, 4)
        put(0xA003, 2)
        put(3, 2)
        put(1, 4)
        put(3000, 2)
        put(0, 2)
        put(0, 4)
        return Data(Array("Exif".utf8) + [0, 0] + bytes)
    }

    @Test(arguments: [false, true])
    func orientationAndSizeAreUpdated(bigEndian: Bool) throws {
        let original = Self.block(bigEndian: bigEndian, orientation: 6)
        let updated = try #require(ExifBlock.oriented(original, width: 300, height: 200))
        #expect(
            updated == Self.block(bigEndian: bigEndian, orientation: 1).replacingSize(bigEndian: bigEndian, 300, 200))
        // Without its header it is the same block, header added.
        #expect(ExifBlock.oriented(original.dropFirst(6), width: 300, height: 200) == updated)
    }

    @Test func unreadableBlocksAreDropped() {
        #expect(ExifBlock.oriented(Data("Exif\0\0garbage".utf8), width: 1, height: 1) == nil)
        // IFD0 past the end
        #expect(ExifBlock.oriented(Data([0x49, 0x49, 42, 0, 0xFF, 0xFF, 0, 0]), width: 1, height: 1) == nil)
        #expect(ExifBlock.oriented(Data(), width: 1, height: 1) == nil)
    }
}

extension Data {
    /// The test block with its Exif IFD's sizes set (their offsets are fixed: 6 + 38 + 2 + 8, and 12 on).
    fileprivate func replacingSize(bigEndian: Bool, _ width: Int, _ height: Int) -> Data {
        var bytes = [UInt8](self)
        let (x, y) = (6 + 38 + 2 + 8, 6 + 38 + 2 + 12 + 8)
        for index in 0..<4 { bytes[x + index] = UInt8(width >> (8 * (bigEndian ? 3 - index : index)) & 0xFF) }
        for index in 0..<2 { bytes[y + index] = UInt8(height >> (8 * (bigEndian ? 1 - index : index)) & 0xFF) }
        return Data(bytes)
    }
}

/// `CJPEG`'s encoder called directly (8-bit grey or RGB, 4:2:0 unless `fullChroma`, baseline).
func CJPEGEncode(_ image: Image, quality: Int, tables: Int32, trellis: Bool, fullChroma: Bool = false) throws -> Data {
    var settings = imagery_jpeg_encode_settings()
    (settings.quality, settings.tables, settings.trellis) = (Int32(quality), tables, trellis ? 1 : 0)
    settings.full_chroma = fullChroma ? 1 : 0
    var output: UnsafeMutablePointer<UInt8>?
    var length = 0
    var message = [CChar](repeating: 0, count: 256)
    let status = image.pixels.withUnsafeBytes { pixels in
        imagery_jpeg_encode(
            pixels.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(image.width), Int32(image.height),
            Int32(image.pixelFormat.channels),
            image.bytesPerRow, &settings, &output, &length, &message, message.count
        )
    }
    guard status == IMAGERY_JPEG_OK, let output else { throw ImageEncodingError.failed("status \(status)") }
    defer { imagery_jpeg_free_encoded(output) }
    return Data(bytes: output, count: length)
}

/// A JPEG decoded by libjpeg through `CJPEG` in strict mode: any warning is an error.
struct StrictJPEG {
    let width, height, components: Int
    let pixels: [UInt8]
    let iccProfile: Data?

    init(_ data: Data) throws {
        var image = imagery_jpeg_image()
        var message = [CChar](repeating: 0, count: 256)
        let status = data.withUnsafeBytes {
            imagery_jpeg_decode_scaled($0.baseAddress, $0.count, 1, 1, 0, &image, &message, message.count)
        }
        defer { imagery_jpeg_free(&image) }
        guard status == Int32(IMAGERY_JPEG_OK) else {
            throw ImageDecodingError.corrupt(
                format: .jpeg,
                reason: String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        (width, height, components) = (Int(image.width), Int(image.height), Int(image.components))
        pixels = Array(UnsafeBufferPointer(start: image.pixels, count: width * height * components))
        iccProfile = image.icc_profile.map { Data(bytes: $0, count: Int(image.icc_length)) }
    }
}

/// The segments of a JPEG, read far enough for the tests: tables, frame, scans, APPn markers.
struct JPEGSegments {
    var quantisationTables: [[Int]] = []  // natural order
    var huffmanTables: [[UInt8]] = []  // each table's 16 code-length counts
    var frameMarker = 0
    var lumaSampling = 0
    var scanCount = 0
    var applicationMarkers: [Int] = []

    init(_ data: Data) {
        let bytes = [UInt8](data)
        let zigzag = [
            0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5, 12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6, 7,
            14, 21, 28,
            35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51, 58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61,
            54, 47, 55, 62, 63,
        ]
        var offset = 2
        while offset + 4 <= bytes.count, bytes[offset] == 0xFF {
            let marker = Int(bytes[offset + 1])
            let length = Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            let body = Array(bytes[(offset + 4)..<min(bytes.count, offset + 2 + length)])
            switch marker {
            case 0xDB:
                var at = 0
                while at + 65 <= body.count {
                    var table = [Int](repeating: 0, count: 64)
                    for index in 0..<64 { table[zigzag[index]] = Int(body[at + 1 + index]) }
                    quantisationTables.append(table)
                    at += 65
                }
            case 0xC4:
                var at = 0
                while at + 17 <= body.count {
                    let counts = Array(body[(at + 1)..<(at + 17)])
                    huffmanTables.append(counts)
                    at += 17 + counts.reduce(0) { $0 + Int($1) }
                }
            case 0xC0...0xC3:
                frameMarker = marker
                lumaSampling = body.count > 7 ? Int(body[7]) : 0
            case 0xDA: scanCount += 1
            case 0xE0...0xEF: applicationMarkers.append(marker)
            default: break
            }
            offset += 2 + length
            // skip the entropy-coded data to the next marker that is not a restart or a stuffed byte
            if marker == 0xDA {
                while offset + 1 < bytes.count,
                    !(bytes[offset] == 0xFF && bytes[offset + 1] != 0 && !(0xD0...0xD7).contains(bytes[offset + 1]))
                {
                    offset += 1
                }
            }
        }
    }
}
