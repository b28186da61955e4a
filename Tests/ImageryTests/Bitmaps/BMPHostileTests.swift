import Foundation
import Testing

@testable import Imagery

/// Bitmaps made to hurt: cut short anywhere, sizes past any memory, offsets outside the file, headers
/// that lie, and seeded random damage. Each is refused with ``ImageDecodingError`` (or, where the damage
/// still describes a bitmap, decoded within its limit): never a crash, never a read past the data.
@Suite("BMP, hostile")
struct BMPHostileTests {
    typealias Files = BitmapFiles

    /// Valid files of every kind, to cut short and damage.
    static let valid: [(name: String, data: Data)] = {
        let colours = BMPTests.colours
        let grid = BMPTests.indices(count: 4)
        let photo = BMPTests.photo
        return [
            (
                "1 bit",
                Files.bmp(
                    dib: Files.infoHeader(width: 5, height: 3, bits: 1, colours: 2)
                        + Files.palette(Array(colours.prefix(2))),
                    pixels: Files.packed(BMPTests.indices(count: 2), bits: 1))
            ),
            (
                "4 bits",
                Files.bmp(
                    dib: Files.infoHeader(width: 5, height: 3, bits: 4, colours: 4) + Files.palette(colours),
                    pixels: Files.packed(grid, bits: 4))
            ),
            (
                "8 bits",
                Files.bmp(
                    dib: Files.infoHeader(width: 5, height: 3, bits: 8, colours: 4) + Files.palette(colours),
                    pixels: Files.packed(grid, bits: 8))
            ),
            (
                "16 bits",
                Files.bmp(
                    dib: Files.infoHeader(width: 3, height: 2, bits: 16), pixels: Files.words([[1, 2, 3], [4, 5, 6]]))
            ),
            ("24 bits", Files.bmp(dib: Files.infoHeader(width: 5, height: 3, bits: 24), pixels: Files.bgr(photo))),
            (
                "24 bits top-down",
                Files.bmp(
                    dib: Files.infoHeader(width: 5, height: -3, bits: 24), pixels: Files.bgr(photo, topDown: true))
            ),
            (
                "32 bits V4",
                BMP.encode(
                    Image(
                        width: 3, height: 2, pixelFormat: .rgba8, pixels: Data((0..<24).map { UInt8($0 * 10) }),
                        sourceFormat: .png))
            ),
            (
                "core",
                Files.bmp(
                    dib: Files.coreHeader(width: 5, height: 3, bits: 8) + Files.palette(colours, entrySize: 3),
                    pixels: Files.packed(grid, bits: 8))
            ),
            (
                "RLE8",
                Files.bmp(
                    dib: Files.infoHeader(width: 5, height: 3, bits: 8, compression: 1, colours: 4)
                        + Files.palette(colours),
                    pixels: [2, 1, 0, 3, 2, 3, 1, 0, 0, 0, 0, 4, 0, 1, 2, 3, 1, 3, 0, 0, 5, 0, 0, 1])
            ),
            (
                "RLE4",
                Files.bmp(
                    dib: Files.infoHeader(width: 4, height: 2, bits: 4, compression: 2, colours: 4)
                        + Files.palette(colours),
                    pixels: [4, 0x12, 0, 0, 0, 3, 0x30, 0x10, 1, 0x20, 0, 1])
            ),
        ]
    }()

    /// Decodes `data`: an image within the limit, or an ``ImageDecodingError``; anything else is a failure.
    static func decodeSafely(_ data: Data, maximumPixels: Int = 1 << 16) -> Result<Image, ImageDecodingError>? {
        do {
            let image = try BMP.decode(data, maximumPixels: maximumPixels)
            #expect(image.width * image.height <= maximumPixels)
            return .success(image)
        } catch let error as ImageDecodingError {
            return .failure(error)
        } catch {
            Issue.record("not an ImageDecodingError: \(error)")
            return nil
        }
    }

    @Test(arguments: valid.map(\.name))
    func everyFileCutShortIsRefused(name: String) throws {
        let data = try #require(Self.valid.first { $0.name == name }?.data)
        #expect(throws: Never.self) { try BMP.decode(data, maximumPixels: 1 << 16) }
        for length in 0..<data.count {
            let result = Self.decodeSafely(data.prefix(length))
            guard case .failure(let error) = result else {
                Issue.record("\(name) cut to \(length) of \(data.count) bytes was decoded")
                continue
            }
            if case .corrupt(let format, _) = error { #expect(format == .bmp) } else { Issue.record("\(error)") }
        }
    }

    /// A header for `width` × `height` pixels at 24 bits, and no pixels at all.
    static func claiming(width: Int, height: Int, bits: Int = 24) -> Data {
        Files.bmp(dib: Files.infoHeader(width: width, height: height, bits: bits), pixels: [0, 0, 0, 0])
    }

    @Test(
        arguments: [
            (Int(Int32.max), Int(Int32.max)), (Int(Int32.max), 1), (1, Int(Int32.max)), (1, -Int(Int32.max)),
            (65_536, 65_536), (257, 256),
        ] as [(Int, Int)])
    func hugeSizesAreRefusedBeforeAnyBufferExists(width: Int, height: Int) {
        #expect(throws: ImageDecodingError.tooManyPixels(width: width, height: abs(height), limit: 65_536)) {
            try BMP.decode(Self.claiming(width: width, height: height), maximumPixels: 65_536)
        }
    }

    @Test(arguments: [(0, 10), (-5, 10), (10, 0), (10, Int(Int32.min))] as [(Int, Int)])
    func emptyOrNegativeSizesAreCorrupt(width: Int, height: Int) {
        #expect(throws: ImageDecodingError.self) {
            try BMP.decode(Self.claiming(width: width, height: height), maximumPixels: 1 << 20)
        }
        #expect(throws: ImageDecodingError.self) { try BMP.header(of: Self.claiming(width: width, height: height)) }
    }

    @Test(arguments: [0, 3, 5, 7, 12, 48, 64, 65_535])
    func bitDepthsBMPDoesNotHaveAreRefused(bits: Int) {
        #expect(throws: ImageDecodingError.self) {
            try BMP.decode(Self.claiming(width: 1, height: 1, bits: bits), maximumPixels: 100)
        }
    }

    /// Compressions that do not go with the depth, JPEG and PNG inside a bitmap, and run-length
    /// encoding top-down or in OS/2 2.x's meaning are all refused.
    @Test(
        arguments: [
            (40, 24, 1, 1), (40, 8, 2, 1), (40, 4, 1, 1), (40, 24, 3, 1), (40, 8, 3, 1), (40, 24, 4, 1), (40, 24, 5, 1),
            (40, 32, 7, 1), (40, 8, 1, -1), (40, 4, 2, -1), (64, 24, 3, 1), (64, 8, 1, 1), (36, 8, 1, 1),
        ] as [(Int, Int, Int, Int)])
    func compressionsThatCannotBeAreRefused(headerSize: Int, bits: Int, compression: Int, heightSign: Int) {
        let dib =
            Files.infoHeader(size: headerSize, width: 2, height: 2 * heightSign, bits: bits, compression: compression)
            + [UInt8](repeating: 0, count: 1_100)
        #expect(throws: ImageDecodingError.self) { try BMP.decode(Files.bmp(dib: dib, pixels: []), maximumPixels: 100) }
    }

    @Test(arguments: [0, 1, 11, 13, 15, 125, 200, 1 << 20, Int(UInt32.max)])
    func headerSizesThatNoBitmapHasAreRefused(size: Int) {
        var bytes = [UInt8](Self.claiming(width: 1, height: 1))
        bytes.replaceSubrange(14..<18, with: Files.le32(size))
        #expect(throws: ImageDecodingError.self) { try BMP.decode(Data(bytes), maximumPixels: 100) }
    }

    @Test(arguments: [Int(UInt32.max), Int(Int32.max), 1 << 20, 70])
    func aPixelOffsetPastTheEndIsCorrupt(offset: Int) throws {
        let data = Files.bmp(
            dib: Files.infoHeader(width: 5, height: 3, bits: 24), pixels: Files.bgr(BMPTests.photo), pixelOffset: offset
        )
        #expect(throws: ImageDecodingError.self) { try BMP.decode(data, maximumPixels: 100) }
    }

    /// An offset into the headers reads them as pixels: nonsense, but within the file.
    @Test(arguments: [0, 2, 14, 30])
    func aPixelOffsetIntoTheHeadersStaysWithinTheFile(offset: Int) throws {
        let data = Files.bmp(
            dib: Files.infoHeader(width: 2, height: 2, bits: 24), pixels: [UInt8](repeating: 9, count: 16),
            pixelOffset: offset)
        let image = try BMP.decode(data, maximumPixels: 100)
        #expect((image.width, image.height) == (2, 2))
    }

    @Test func aColourCountPastEveryPaletteIsTheDepthsMostAndMustBeThere() throws {
        // 8 bits and 2^32 - 1 colours: 256 at most, and the pixels start (as the file says) inside them.
        let dib =
            Files.infoHeader(width: 2, height: 1, bits: 8, colours: Int(UInt32.max)) + Files.palette(BMPTests.colours)
        let data = Files.bmp(dib: dib, pixels: [0, 3, 0, 0])
        let image = try BMP.decode(data, maximumPixels: 10)
        #expect([UInt8](image.pixels) == [255, 0, 0, 255, 255, 0])
        // Without the pixel offset to bound it, the 256 entries must be in the file.
        var bytes = [UInt8](data)
        bytes.replaceSubrange(10..<14, with: Files.le32(0))
        #expect(throws: ImageDecodingError.self) { try BMP.decode(Data(bytes), maximumPixels: 10) }
    }

    @Test(arguments: ["", "B", "BM", "BA", "MB", "GIF89a", "<svg></svg>"])
    func whatIsNotABitmapIsRefused(text: String) {
        #expect(throws: ImageDecodingError.self) { try BMP.decode(Data(text.utf8), maximumPixels: 100) }
        #expect(throws: ImageDecodingError.self) { try BMP.header(of: Data(text.utf8)) }
    }

    @Test func runLengthRunsAndJumpsFarPastTheImageStayInside() throws {
        // Runs of 255, jumps of 255 × 255 and literal runs, in a 2 × 2 bitmap.
        let rle: [UInt8] = [255, 1, 0, 2, 255, 255, 255, 1, 0, 0, 0, 4, 1, 1, 1, 1, 0, 1]
        let data = Files.bmp(
            dib: Files.infoHeader(width: 2, height: 2, bits: 8, compression: 1, colours: 4)
                + Files.palette(BMPTests.colours), pixels: rle)
        let image = try BMP.decode(data, maximumPixels: 4)
        #expect((image.width, image.height) == (2, 2))
        // A literal run longer than the data left is corrupt.
        let short = Files.bmp(
            dib: Files.infoHeader(width: 2, height: 2, bits: 8, compression: 1, colours: 4)
                + Files.palette(BMPTests.colours), pixels: [0, 200, 1, 1])
        #expect(throws: ImageDecodingError.self) { try BMP.decode(short, maximumPixels: 4) }
    }

    /// Seeded random damage to every valid file: bytes changed (most in the headers), cut and
    /// grown. Each damaged file is decoded within its limit or refused; the process survives them all.
    @Test(arguments: valid.map(\.name))
    func randomDamageIsRefusedOrDecodedNeverACrash(name: String) throws {
        let data = try #require(Self.valid.first { $0.name == name }?.data)
        var random = SeededGenerator(seed: UInt64(name.utf8.reduce(0) { $0 &* 31 &+ Int($1) }.magnitude))
        var (decoded, refused) = (0, 0)
        for _ in 0..<1_500 {
            var bytes = [UInt8](data)
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                let inHeaders = Bool.random(using: &random)
                let index = Int.random(in: 0..<(inHeaders ? min(bytes.count, 70) : bytes.count), using: &random)
                bytes[index] =
                    Bool.random(using: &random)
                    ? UInt8.random(in: 0...255, using: &random)
                    : [0, 1, 0x7F, 0x80, 0xFF].randomElement(using: &random)!
            }
            if Int.random(in: 0..<8, using: &random) == 0 {
                bytes.removeLast(Int.random(in: 0...min(8, bytes.count), using: &random))
            }
            if Int.random(in: 0..<8, using: &random) == 0 {
                bytes += (0..<Int.random(in: 1...16, using: &random)).map { _ in
                    UInt8.random(in: 0...255, using: &random)
                }
            }
            switch Self.decodeSafely(Data(bytes), maximumPixels: 4_096) {
            case .success: decoded += 1
            case .failure: refused += 1
            case nil: break
            }
            _ = try? BMP.header(of: Data(bytes))
        }
        #expect(decoded + refused == 1_500)
    }
}
