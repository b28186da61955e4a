import Foundation
import Testing

@testable import Imagery

/// Formats are told from their bytes alone, and named by media types and file extensions.
@Suite("ImageFormat")
struct ImageFormatTests {
    static func bytes(_ values: [UInt8], padTo count: Int = 32) -> Data {
        Data(values + [UInt8](repeating: 0, count: max(0, count - values.count)))
    }

    static func iso(_ brand: String) -> Data { bytes([0, 0, 0, 0x18] + Array("ftyp".utf8) + Array(brand.utf8)) }

    @Test(
        arguments: [
            (bytes([0xFF, 0xD8, 0xFF, 0xE0]), ImageFormat.jpeg),
            (bytes([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]), .png),
            (bytes(Array("GIF87a".utf8)), .gif), (bytes(Array("GIF89a".utf8)), .gif),
            (bytes(Array("RIFF".utf8) + [1, 2, 3, 4] + Array("WEBP".utf8)), .webp),
            (bytes(Array("BM".utf8) + [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 40, 0, 0, 0]), .bmp),
            (bytes(Array("BM".utf8) + [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 12, 0, 0, 0]), .bmp),
            (bytes(Array("BM".utf8) + [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 124, 0, 0, 0]), .bmp),
            (bytes([0, 0, 1, 0, 1, 0, 16, 16, 0, 0]), .ico), (bytes([0, 0, 2, 0, 3, 0, 32, 32, 0, 0]), .ico),
            (bytes([0x49, 0x49, 0x2A, 0x00]), .tiff), (bytes([0x4D, 0x4D, 0x00, 0x2A]), .tiff),
            (bytes([0xFF, 0x0A]), .jxl),
            (bytes([0, 0, 0, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A]), .jxl),
            (iso("avif"), .avif), (iso("avis"), .avif), (iso("heic"), .heic), (iso("heix"), .heic),
            (iso("hevc"), .heic),
            (iso("hevx"), .heic), (iso("mif1"), .heic), (iso("msf1"), .heic),
            (Data(#"<svg xmlns="http://www.w3.org/2000/svg"/>"#.utf8), .svg),
            (Data("\u{FEFF} \n\t<?xml version=\"1.0\"?><svg/>".utf8), .svg),
            (Data(("<?xml version=\"1.0\"?><!-- " + String(repeating: "x", count: 3000) + " --><svg/>").utf8), .svg),
            (Data(#"<svg:svg xmlns:svg="http://www.w3.org/2000/svg"/>"#.utf8), .svg),
        ] as [(Data, ImageFormat)])
    func formatsAreToldFromTheirFirstBytes(data: Data, format: ImageFormat) {
        #expect(ImageFormat(sniffing: data) == format)
    }

    @Test(arguments: [
        Data(), Data([0xFF, 0xD8]), Data("<html><body>not found</body></html>".utf8), Data("BMW is a car maker".utf8),
        bytes(Array("BM".utf8) + [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 41, 0, 0, 0]),  // no bitmap header is 41 bytes
        bytes([0, 0, 1, 0, 0, 0, 16, 16, 0, 0]),  // an icon directory of no picture
        bytes([0, 0, 1, 0, 1, 0, 16, 16, 0, 7]),  // its picture's reserved byte is not 0
        Data([0, 0, 1, 0, 1, 0]),  // too short for an entry
        iso("mp42"), iso("qt  "), Data([0, 0, 0, 0x18] + Array("ftyp".utf8) + Array("av".utf8)),
        Data(("<?xml version=\"1.0\"?>" + String(repeating: " ", count: 4100) + "<svg/>").utf8),  // past the first 4 KB
        Data("text <svg> later".utf8), Data("{\"svg\": 1}".utf8),
        bytes(Array("RIFF".utf8) + [1, 2, 3, 4] + Array("WAVE".utf8)),
    ])
    func otherBytesAreNoFormat(data: Data) {
        #expect(
            ImageFormat(sniffing: data) == nil, "\(String(decoding: data.prefix(40), as: UTF8.self).debugDescription)")
    }

    @Test func sniffingReadsASliceFromItsOwnStart() {
        let file = Data(
            [1, 2, 3] + [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + [UInt8](repeating: 0, count: 30))
        #expect(ImageFormat(sniffing: file.dropFirst(3)) == .png)
        let svg = Data("xx<svg/>".utf8)
        #expect(ImageFormat(sniffing: svg.dropFirst(2)) == .svg)
    }

    @Test func everyFormatHasAMediaTypeThatNamesItBack() {
        for format in ImageFormat.allCases {
            #expect(ImageFormat(mimeType: format.mimeType) == format)
            #expect(format.mimeType.hasPrefix("image/"))
        }
        #expect(ImageFormat.ico.mimeType == "image/x-icon" && ImageFormat.svg.mimeType == "image/svg+xml")
    }

    @Test(
        arguments: [
            ("image/jpeg", ImageFormat?.some(.jpeg)), ("IMAGE/PNG", .png), ("image/webp; q=0.9", .webp),
            (" image/gif ;charset=binary", .gif),
            ("image/vnd.microsoft.icon", .ico), ("image/x-icon", .ico), ("image/svg+xml", .svg), ("image/jpg", nil),
            ("text/html", nil),
            ("", nil), ("image/", nil),
        ] as [(String, ImageFormat?)])
    func mediaTypesAreReadWithParametersAndCase(mimeType: String, format: ImageFormat?) {
        #expect(ImageFormat(mimeType: mimeType) == format)
    }

    @Test func everyFormatHasAFileExtensionThatNamesItBack() {
        for format in ImageFormat.allCases { #expect(ImageFormat(fileExtension: format.fileExtension) == format) }
        #expect(ImageFormat.jpeg.fileExtension == "jpg" && ImageFormat.tiff.fileExtension == "tiff")
        for (text, format) in [
            ("JPEG", ImageFormat.jpeg), ("Jpg", .jpeg), ("heif", .heic), ("TIF", .tiff), ("Svg", .svg),
        ] {
            #expect(ImageFormat(fileExtension: text) == format)
        }
        for text in ["", ".png", "jfif", "png ", "gif89a"] { #expect(ImageFormat(fileExtension: text) == nil) }
    }

    @Test func onlyGIFAndWebPAnimateAndFourFormatsHoldHighBitDepth() {
        #expect(ImageFormat.allCases.filter(\.canAnimate) == [.gif, .webp])
        #expect(ImageFormat.allCases.filter(\.holdsHighBitDepth) == [.png, .avif, .jxl, .tiff])
    }
}
