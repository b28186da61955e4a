import Foundation
import Imagery
import ImageryTestSupport
import ImageryVips
import Testing

/// Colour: sources with an embedded ICC profile are converted to sRGB by it.
@Suite("Colour management")
struct ColourManagementTests {
    let decoder = VipsImageDecoder()

    /// A Display P3 copy of an sRGB source decodes to (nearly) the sRGB source's pixels; its P3 values
    /// taken as sRGB (what ignoring the profile gives) are much further off.
    @Test(arguments: [("rocket.jpg", "Colour/rocket-p3.jpg", 640), ("chelsea.png", "Colour/chelsea-p3.png", 200)])
    func aDisplayP3SourceKeepsItsColours(original: String, p3: String, width: Int) throws {
        let box = ImageRecipe(resize: .init(width: width / 2, height: 1000, fit: .inside))
        let reference = try decoder.decode(Fixtures.data(original), recipe: box)
        let converted = try decoder.decode(Fixtures.data(p3), recipe: box)
        #expect((converted.width, converted.height) == (reference.width, reference.height))
        let difference = GeneratedImages.meanDifference(converted, reference)
        // The same bytes with the profile cut out: the P3 numbers read as sRGB.
        let unprofiled = try decoder.decode(Self.removingICC(Fixtures.data(p3)), recipe: box)
        let ignored = GeneratedImages.meanDifference(unprofiled, reference)
        #expect(difference < 2, "\(p3): \(difference) levels from the sRGB source")
        #expect(
            ignored > 2 * difference, "\(p3): ignoring the profile is \(ignored) levels off, converting \(difference)")
    }

    /// `data` without its ICC profile: a JPEG's APP2 `ICC_PROFILE` segments, or a PNG's `iCCP` chunk.
    static func removingICC(_ data: Data) -> Data {
        let bytes = [UInt8](data)
        var output: [UInt8] = []
        if bytes.starts(with: [0xFF, 0xD8]) {
            output = [0xFF, 0xD8]
            var index = 2
            while index + 4 <= bytes.count, bytes[index] == 0xFF, bytes[index + 1] != 0xDA {
                let length = Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
                let segment = bytes[index..<index + 2 + length]
                let isICC = bytes[index + 1] == 0xE2 && bytes[(index + 4)...].starts(with: Array("ICC_PROFILE".utf8))
                if !isICC { output += segment }
                index += 2 + length
            }
            output += bytes[index...]
        } else {
            output = Array(bytes[0..<8])
            var index = 8
            while index + 12 <= bytes.count {
                let length =
                    Int(bytes[index]) << 24 | Int(bytes[index + 1]) << 16 | Int(bytes[index + 2]) << 8
                    | Int(bytes[index + 3])
                let chunk = bytes[index..<index + 12 + length]
                if !bytes[(index + 4)...].starts(with: Array("iCCP".utf8)) { output += chunk }
                index += 12 + length
            }
        }
        return Data(output)
    }
}
