import Foundation
import Testing

@testable import Imagery

/// Icons: the largest picture of the directory, a PNG passed on as stored or a bitmap with its
/// transparency mask; and icon files made to hurt.
@Suite("ICO")
struct ICOTests {
    typealias Files = BitmapFiles

    /// A 4 × 2 icon bitmap: 8 bits through a palette, its mask transparent at (1, 0) and (3, 1).
    static let paletted: [UInt8] = Files.iconBitmap(
        width: 4, height: 2, bits: 8, palette: Files.palette(BMPTests.colours),
        pixels: Files.packed([[0, 1, 2, 3], [3, 2, 1, 0]], bits: 8), mask: [[0, 1, 0, 0], [0, 0, 0, 1]]
    )

    static func colour(_ index: Int, alpha: UInt8 = 255) -> (UInt8, UInt8, UInt8, UInt8) {
        let c = BMPTests.colours[index]
        return (c.0, c.1, c.2, alpha)
    }

    @Test func aBitmapPictureTakesItsTransparencyFromTheMask() throws {
        let data = Files.ico([(4, 2, 8, Self.paletted)])
        guard case .bitmap(let image) = try ICO.largestPicture(of: data, maximumPixels: 100) else {
            Issue.record("not a bitmap")
            return
        }
        var top = (0..<4).map { Self.colour($0) }
        top[1].3 = 0
        var bottom = [3, 2, 1, 0].map { Self.colour($0) }
        bottom[3].3 = 0
        let expected = Files.expected([top, bottom])
        #expect(image.pixelFormat == expected.0 && [UInt8](image.pixels) == expected.1 && image.sourceFormat == .ico)
        #expect(try ICO.largestSize(of: data) == (4, 2))
        #expect(try ICO.largestPNG(in: data) == nil)
    }

    @Test func thirtyTwoBitPicturesKeepTheirOwnAlphaOverTheMask() throws {
        let pixels: [[(UInt8, UInt8, UInt8, UInt8)]] = [[(10, 20, 30, 40), (50, 60, 70, 255)]]
        let picture = Files.iconBitmap(width: 2, height: 1, bits: 32, pixels: Files.bgra(pixels), mask: [[1, 1]])
        guard case .bitmap(let image) = try ICO.largestPicture(of: Files.ico([(2, 1, 32, picture)]), maximumPixels: 100)
        else {
            Issue.record("not a bitmap")
            return
        }
        #expect([UInt8](image.pixels) == Files.expected(pixels).1, "the mask is not applied")
        // The same picture with its alpha left empty: the mask decides.
        let empty = pixels.map { $0.map { ($0.0, $0.1, $0.2, UInt8(0)) } }
        let masked = Files.iconBitmap(width: 2, height: 1, bits: 32, pixels: Files.bgra(empty), mask: [[0, 1]])
        guard
            case .bitmap(let maskedImage) = try ICO.largestPicture(
                of: Files.ico([(2, 1, 32, masked)]), maximumPixels: 100)
        else {
            Issue.record("not a bitmap")
            return
        }
        #expect([UInt8](maskedImage.pixels) == [10, 20, 30, 255, 50, 60, 70, 0])
    }

    @Test func aPictureWithoutItsMaskIsOpaque() throws {
        let picture = Files.iconBitmap(
            width: 4, height: 2, bits: 24,
            pixels: Files.bgr([
                [(1, 2, 3), (4, 5, 6), (7, 8, 9), (1, 1, 2)], [(9, 9, 8), (1, 2, 3), (4, 5, 6), (7, 8, 9)],
            ]), mask: nil)
        guard case .bitmap(let image) = try ICO.largestPicture(of: Files.ico([(4, 2, 24, picture)]), maximumPixels: 100)
        else {
            Issue.record("not a bitmap")
            return
        }
        #expect(image.pixelFormat == .rgb8 && image.pixels.prefix(3) == Data([1, 2, 3]))
    }

    @Test func theLargestPictureIsTakenByAreaThenDepth() throws {
        let small = Files.iconBitmap(
            width: 2, height: 1, bits: 24, pixels: Files.bgr([[(1, 1, 1), (1, 1, 1)]]), mask: nil)
        let png = Files.png(width: 256, height: 256)
        let data = Files.ico([(2, 1, 24, small), (0, 0, 32, png), (4, 2, 8, Self.paletted)])
        #expect(try ICO.largestPNG(in: data) == Data(png))
        #expect(try ICO.largestSize(of: data) == (256, 256), "0 in the directory means 256")
        #expect(
            try ICO.largestPicture(of: data, maximumPixels: 1) == .png(Data(png)),
            "a PNG is checked by whoever decodes it")
        // Of two pictures of one size, the deeper one.
        let deeper = Files.iconBitmap(
            width: 4, height: 2, bits: 24,
            pixels: Files.bgr(Array(repeating: Array(repeating: (5, 6, 7), count: 4), count: 2)), mask: nil)
        let tie = Files.ico([(4, 2, 8, Self.paletted), (4, 2, 24, deeper)])
        guard case .bitmap(let image) = try ICO.largestPicture(of: tie, maximumPixels: 100) else {
            Issue.record("not a bitmap")
            return
        }
        #expect(image.pixels.prefix(3) == Data([5, 6, 7]))
    }

    @Test func theBitmapsOwnHeaderGivesItsSizeWhateverTheDirectorySays() throws {
        let data = Files.ico([(32, 32, 8, Self.paletted)])  // listed as 32 × 32, a 4 × 2 bitmap
        #expect(try ICO.largestSize(of: data) == (4, 2))
        guard case .bitmap(let image) = try ICO.largestPicture(of: data, maximumPixels: 100) else {
            Issue.record("not a bitmap")
            return
        }
        #expect((image.width, image.height) == (4, 2))
    }

    @Test func cursorsAreReadAsIcons() throws {
        let data = Files.ico([(4, 2, 8, Self.paletted)], type: 2)
        #expect(try ICO.largestSize(of: data) == (4, 2))
        #expect(ImageFormat(sniffing: data) == .ico)
    }

    @Test(
        arguments: [(1, 1, false), (16, 16, true), (255, 3, true), (256, 256, false), (256, 1, true)]
            as [(Int, Int, Bool)])
    func whatICOWritesItReadsBack(width: Int, height: Int, hasAlpha: Bool) throws {
        let png = Data(Files.png(width: width, height: height))
        let data = ICO.encode(png: png, width: width, height: height, hasAlpha: hasAlpha)
        #expect(ImageFormat(sniffing: data) == .ico)
        #expect(try ICO.largestPNG(in: data) == png)
        #expect(try ICO.largestSize(of: data) == (width, height))
        #expect(try ICO.largestPicture(of: data, maximumPixels: 1) == .png(png))
        #expect(data.count == 22 + png.count && data[12] == (hasAlpha ? 32 : 24))
    }

    @Test func aBitmapOverTheLimitIsRefusedBeforeItsPixels() {
        let data = Files.ico([(4, 2, 8, Self.paletted)])
        #expect(throws: ImageDecodingError.tooManyPixels(width: 4, height: 2, limit: 7)) {
            try ICO.largestPicture(of: data, maximumPixels: 7)
        }
    }

    @Test(arguments: [
        ([0, 0, 1, 0, 0, 0] as [UInt8], "no picture"),
        ([0, 0, 3, 0, 1, 0], "type 3"),
        ([1, 0, 1, 0, 1, 0], "reserved not 0"),
        ([0, 0, 1, 0, 1, 0], "a directory cut short"),
        ([], "nothing"),
        ([0, 0, 1], "three bytes"),
    ])
    func directoriesThatAreNotIconsAreRefused(bytes: [UInt8], why: String) {
        #expect(throws: ImageDecodingError.self, "\(why)") { try ICO.largestSize(of: Data(bytes)) }
        #expect(throws: ImageDecodingError.self, "\(why)") {
            try ICO.largestPicture(of: Data(bytes), maximumPixels: 100)
        }
        #expect(throws: ImageDecodingError.self, "\(why)") { try ICO.largestPNG(in: Data(bytes)) }
    }

    /// A directory entry whose bytes are not in the file (past its end, wrapping, or none).
    @Test(
        arguments: [
            (Int(UInt32.max), 10), (10, Int(UInt32.max)), (22, 0), (22, 1_000), (1_000, 1),
            (Int(UInt32.max), Int(UInt32.max)),
        ] as [(Int, Int)])
    func picturesOutsideTheFileAreRefused(offset: Int, length: Int) {
        var bytes = [UInt8](Files.ico([(4, 2, 8, Self.paletted)]))
        bytes.replaceSubrange(14..<18, with: Files.le32(length))
        bytes.replaceSubrange(18..<22, with: Files.le32(offset))
        #expect(throws: ImageDecodingError.self) { try ICO.largestPicture(of: Data(bytes), maximumPixels: 100) }
        #expect(throws: ImageDecodingError.self) { try ICO.largestSize(of: Data(bytes)) }
    }

    @Test func anIconBitmapOfHeightOneIsRefused() {
        // Its header's height counts the mask: 1 leaves no row for the picture.
        var picture = Self.paletted
        picture.replaceSubrange(8..<12, with: Files.le32(1))
        #expect(throws: ImageDecodingError.self) {
            try ICO.largestPicture(of: Files.ico([(4, 1, 8, picture)]), maximumPixels: 100)
        }
    }

    @Test func everyIconCutShortIsRefusedOrOpaque() {
        let data = Files.ico([(4, 2, 8, Self.paletted)])
        let maskStart = data.count - 8  // two mask rows of 4 bytes
        for length in 0..<data.count {
            let cut = Data(data.prefix(length))
            do {
                let picture = try ICO.largestPicture(of: cut, maximumPixels: 100)
                // Only a cut into the mask (whose entry still fits: the directory's length is checked) can decode.
                Issue.record("cut to \(length) (mask at \(maskStart)) decoded: \(picture)")
            } catch {
                #expect(error is ImageDecodingError)
            }
        }
    }

    @Test func seededRandomDamageIsRefusedOrDecodedNeverACrash() {
        let files = [
            Files.ico([(4, 2, 8, Self.paletted)]),
            Files.ico([
                (
                    2, 1, 32,
                    Files.iconBitmap(width: 2, height: 1, bits: 32, pixels: [1, 2, 3, 4, 5, 6, 7, 8], mask: [[1, 0]])
                )
            ]),
            Files.ico([
                (
                    2, 1, 24,
                    Files.iconBitmap(width: 2, height: 1, bits: 24, pixels: [1, 2, 3, 4, 5, 6, 0, 0], mask: nil)
                ), (0, 0, 32, Files.png(width: 256, height: 256)),
            ]),
        ]
        var random = SeededGenerator(seed: 2024)
        for file in files {
            for _ in 0..<1_500 {
                var bytes = [UInt8](file)
                for _ in 0..<Int.random(in: 1...4, using: &random) {
                    bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
                }
                let data = Data(bytes)
                do {
                    if case .bitmap(let image) = try ICO.largestPicture(of: data, maximumPixels: 4_096) {
                        #expect(image.width * image.height <= 4_096)
                    }
                } catch {
                    #expect(error is ImageDecodingError)
                }
                _ = try? ICO.largestSize(of: data)
                _ = try? ICO.largestPNG(in: data)
            }
        }
    }
}
