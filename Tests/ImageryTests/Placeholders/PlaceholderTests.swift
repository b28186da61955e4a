import Foundation
import Testing

@testable import Imagery

/// BlurHash and ThumbHash against their reference implementations, and back to images.
///
/// The expected values were made by the reference implementations on the same generated pixels:
/// BlurHash by Wolt's C encoder (PyPI `blurhash-python` 1.2.2), ThumbHash by Evan Wallace's
/// `js/thumbhash.js` (github.com/evanw/thumbhash) under Node 20.
@Suite("Placeholders")
struct PlaceholderTests {
    /// Three generated images: A opaque 32x24, B 20x30 with alpha, C opaque 64x40.
    static func image(_ name: String) -> Image {
        switch name {
        case "A":
            return Self.generate(32, 24) { x, y in
                [UInt8((x * 8) % 256), UInt8((y * 10) % 256), UInt8(((x + y) * 5) % 256), 255]
            }
        case "B":
            return Self.generate(20, 30) { x, y in
                [UInt8((x * 13) % 256), UInt8((y * 7) % 256), 200, UInt8(((x + y) * 9) % 256)]
            }
        default:
            return Self.generate(64, 40) { x, y in
                [UInt8((x * 4) % 256), UInt8((255 - y * 6 + 512) % 256), UInt8((x * y) % 256), 255]
            }
        }
    }

    static func generate(_ width: Int, _ height: Int, _ pixel: (Int, Int) -> [UInt8]) -> Image {
        var pixels = Data()
        for y in 0..<height { for x in 0..<width { pixels.append(contentsOf: pixel(x, y)) } }
        return Image(width: width, height: height, pixelFormat: .rgba8, pixels: pixels, sourceFormat: .png)
    }

    @Test(arguments: [
        ("A", 4, 3, "LxH27+2jwzX7m9WYjvf5gIflfOfl"),
        ("A", 9, 5, "ixH27+2jwzX7a_ofWnofWnm9WYjvf5fSf5fSf5fRgIflfOflfOfkfPfkfPn,WnjvfOfRfPfRfPfRe.fSfPfRfPfRfPfRfQ"),
        ("A", 1, 1, "00H27+"),
        ("B", 4, 3, "LwH1c~2uwxbdmbWEjte=g0fjfQfj"),
        ("B", 9, 5, "iwH1c~2uwxbdWps=SMs=SMmbWEjte=fQe=a|jIa|g0fjfQfjfQfjfQfjfQnnWqjtfRfQfRa|jua|f7fQfQfQfQfQfQfQfQ"),
        ("C", 4, 3, "L-HL;m2UwuSdq3bEjsfigZfhfRfk"),
        ("C", 9, 5, "i-HL;m2UwuSdn}bEa_j=a_q3bEjsfifQfkfRfkfRgZfhfRfkfSflfSfkfRo[a{jufSfSfRfQfPfPf|fQfSfRfRfPfPfPfO"),
    ])
    func blurHashMatchesTheReference(name: String, componentsX: Int, componentsY: Int, expected: String) {
        #expect(BlurHash.encode(Self.image(name), componentsX: componentsX, componentsY: componentsY) == expected)
    }

    @Test(arguments: [
        ("A", "9f170e0d9a7077777178788787778787bfb40bf788", 32, 23, "140002ff180206ff", "b5a0aeff"),
        ("B", "6335861b0e178093986889809309d79776770a74104d5e", 19, 32, "5d4fcd1c5f4ecd1f", "c793c391"),
        ("C", "9fe809449a7076777c7787778777948f090787", 32, 18, "00ff0fff00ff11ff", "ff1680ff"),
    ])
    func thumbHashMatchesTheReference(
        name: String, expected: String, width: Int, height: Int, firstPixels: String, lastPixel: String
    ) throws {
        let hash = ThumbHash.encode(Self.image(name))
        #expect(Self.hex(hash) == expected)
        let decoded = try #require(ThumbHash.decode(hash))
        #expect((decoded.width, decoded.height) == (width, height))
        #expect(Self.hex(Array(decoded.pixels.prefix(8))) == firstPixels)
        #expect(Self.hex(Array(decoded.pixels.suffix(4))) == lastPixel)
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    @Test func garbageIsNotAHash() {
        for text in [
            "", "L", "LxH27+2jwzX7m9WYjvf5gIflfOf", "LxH27+2jwzX7m9WYjvf5gIflfOf\u{e9}",
            "\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}",
        ] {
            #expect(BlurHash.decode(text, width: 8, height: 8) == nil, "\(text)")
        }
        #expect(ThumbHash.decode([]) == nil)
        // the header promises AC bytes that are missing
        #expect(ThumbHash.decode([0x9f, 0x17, 0x0e, 0x0d, 0x9a]) == nil)
    }
}
