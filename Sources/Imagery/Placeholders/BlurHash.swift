import Foundation

/// BlurHash (Wolt's compact placeholder): an image's colours as a few cosine components, in a short
/// base-83 string that a client turns back into a blurred image while the real one loads.
///
/// Encode from a small image (a few dozen pixels a side is plenty: the hash keeps only the lowest
/// frequencies); the cost grows with pixels × components.
public enum BlurHash {
    /// The hash of `image` with `componentsX` × `componentsY` components (each 1...9; 4 × 3 is usual).
    /// Alpha is ignored (pixels count as opaque).
    /// - Precondition: components in 1...9.
    public static func encode(_ image: Image, componentsX: Int = 4, componentsY: Int = 3) -> String {
        precondition((1...9).contains(componentsX) && (1...9).contains(componentsY), "BlurHash components are 1 to 9")
        let (width, height) = (image.width, image.height)
        let linear = LinearPixels(image)
        var factors: [(Double, Double, Double)] = []
        for j in 0..<componentsY {
            let rows = (0..<height).map { cos(Double.pi * Double(j) * Double($0) / Double(height)) }
            for i in 0..<componentsX {
                let columns = (0..<width).map { cos(Double.pi * Double(i) * Double($0) / Double(width)) }
                var (r, g, b) = (0.0, 0.0, 0.0)
                for y in 0..<height {
                    for x in 0..<width {
                        let basis = columns[x] * rows[y]
                        let pixel = linear[x, y]
                        r += basis * pixel.0
                        g += basis * pixel.1
                        b += basis * pixel.2
                    }
                }
                let scale = (i == 0 && j == 0 ? 1.0 : 2.0) / Double(width * height)
                factors.append((r * scale, g * scale, b * scale))
            }
        }
        var hash = Base83.encode((componentsX - 1) + (componentsY - 1) * 9, length: 1)
        let ac = factors.dropFirst()
        let maximum: Double
        if ac.isEmpty {
            maximum = 1
            hash += Base83.encode(0, length: 1)
        } else {
            let actual = ac.map { max(abs($0.0), abs($0.1), abs($0.2)) }.max() ?? 0
            let quantised = max(0, min(82, Int((actual * 166 - 0.5).rounded(.down))))
            maximum = Double(quantised + 1) / 166
            hash += Base83.encode(quantised, length: 1)
        }
        let dc = factors[0]
        hash += Base83.encode(sRGB(dc.0) << 16 | sRGB(dc.1) << 8 | sRGB(dc.2), length: 4)
        for factor in ac {
            func quantise(_ value: Double) -> Int {
                max(0, min(18, Int((signedPower(value / maximum, 0.5) * 9 + 9.5).rounded(.down))))
            }
            hash += Base83.encode(
                quantise(factor.0) * 19 * 19 + quantise(factor.1) * 19 + quantise(factor.2), length: 2)
        }
        return hash
    }

    /// The image a hash stands for, `width` × `height` (RGB), or `nil` when `hash` is not a BlurHash.
    /// - Parameters:
    ///   - hash: A BlurHash.
    ///   - width: The image's width in pixels.
    ///   - height: The image's height in pixels.
    ///   - punch: Contrast of the components; default 1.
    public static func decode(_ hash: String, width: Int, height: Int, punch: Double = 1) -> Image? {
        let characters = Array(hash.utf8)
        guard characters.count >= 6, width > 0, height > 0, let size = Base83.decode(characters[0..<1]) else {
            return nil
        }
        let (componentsX, componentsY) = (size % 9 + 1, size / 9 + 1)
        guard characters.count == 4 + 2 * componentsX * componentsY,
            let quantisedMaximum = Base83.decode(characters[1..<2]), let dc = Base83.decode(characters[2..<6])
        else { return nil }
        let maximum = Double(quantisedMaximum + 1) / 166 * punch
        var colours = [(linear(dc >> 16), linear((dc >> 8) & 255), linear(dc & 255))]
        for index in 1..<componentsX * componentsY {
            guard let value = Base83.decode(characters[(4 + 2 * index)..<(6 + 2 * index)]) else { return nil }
            func component(_ quantised: Int) -> Double { signedPower(Double(quantised - 9) / 9, 2) * maximum }
            colours.append((component(value / (19 * 19)), component((value / 19) % 19), component(value % 19)))
        }
        var pixels = Data(capacity: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                var (r, g, b) = (0.0, 0.0, 0.0)
                for j in 0..<componentsY {
                    for i in 0..<componentsX {
                        let basis =
                            cos(Double.pi * Double(x) * Double(i) / Double(width))
                            * cos(Double.pi * Double(y) * Double(j) / Double(height))
                        let colour = colours[i + j * componentsX]
                        r += colour.0 * basis
                        g += colour.1 * basis
                        b += colour.2 * basis
                    }
                }
                pixels.append(contentsOf: [UInt8(sRGB(r)), UInt8(sRGB(g)), UInt8(sRGB(b))])
            }
        }
        return Image(width: width, height: height, pixelFormat: .rgb8, pixels: pixels, sourceFormat: .png)
    }

    /// sRGB 0...255 to linear 0...1.
    static func linear(_ value: Int) -> Double {
        let v = Double(value) / 255
        return v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4)
    }

    /// Linear (clamped to 0...1) to sRGB 0...255, rounded.
    static func sRGB(_ value: Double) -> Int {
        let v = max(0, min(1, value))
        return v <= 0.0031308 ? Int(v * 12.92 * 255 + 0.5) : Int((1.055 * pow(v, 1 / 2.4) - 0.055) * 255 + 0.5)
    }

    static func signedPower(_ value: Double, _ exponent: Double) -> Double {
        (value < 0 ? -1 : 1) * pow(abs(value), exponent)
    }

    /// An image's pixels as linear RGB (grey repeated; alpha dropped).
    struct LinearPixels {
        let values: [(Double, Double, Double)]
        let width: Int

        init(_ image: Image) {
            let image = image.withEightBitChannels()
            let table = (0..<256).map { BlurHash.linear($0) }
            let channels = image.pixelFormat.bytesPerPixel
            let grey = channels <= 2
            var values: [(Double, Double, Double)] = []
            values.reserveCapacity(image.width * image.height)
            let bytes = [UInt8](image.pixels)
            for index in 0..<image.width * image.height {
                let base = index * channels
                let red = table[Int(bytes[base])]
                if grey {
                    values.append((red, red, red))
                } else {
                    values.append((red, table[Int(bytes[base + 1])], table[Int(bytes[base + 2])]))
                }
            }
            self.values = values
            self.width = image.width
        }

        subscript(x: Int, y: Int) -> (Double, Double, Double) { values[y * width + x] }
    }
}

/// BlurHash's base-83 digits.
enum Base83 {
    static let digits = Array(
        "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~".utf8)
    static let values: [UInt8: Int] = Dictionary(uniqueKeysWithValues: digits.enumerated().map { ($1, $0) })

    static func encode(_ value: Int, length: Int) -> String {
        var result = [UInt8](repeating: 0, count: length)
        var remaining = value
        for index in (0..<length).reversed() {
            result[index] = digits[remaining % 83]
            remaining /= 83
        }
        return String(decoding: result, as: UTF8.self)
    }

    static func decode(_ characters: ArraySlice<UInt8>) -> Int? {
        var value = 0
        for character in characters {
            guard let digit = values[character] else { return nil }
            value = value * 83 + digit
        }
        return value
    }
}
