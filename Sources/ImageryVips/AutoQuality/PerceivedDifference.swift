import CQuality
import Foundation
import Imagery

/// How different an image looks from another of the same size: SSIMULACRA2 (`CQuality`), 100 for
/// identical, about 90 visually lossless, 70 high quality, 50 medium. Within two points of the
/// reference implementations on the corpus (0.3 on average). Pixels with alpha are compared as laid
/// on black, 16-bit ones at 8 bits, an animation by its first frame.
public enum PerceivedDifference {
    /// The SSIMULACRA2 score of `distorted` against `reference`; `nil` when their sizes differ.
    public static func ssimulacra2(_ reference: Image, _ distorted: Image) -> Double? {
        guard (reference.width, reference.height) == (distorted.width, distorted.height) else { return nil }
        let (a, b) = (comparable(reference), comparable(distorted))
        let components = a.pixelFormat.isGray && b.pixelFormat.isGray ? 1 : 3
        let (left, right) = components == 1 ? (a, b) : (a.rgb, b.rgb)
        let score = left.pixels.withUnsafeBytes { first in
            right.pixels.withUnsafeBytes { second in
                imagery_ssimulacra2(
                    first.baseAddress?.assumingMemoryBound(to: UInt8.self),
                    second.baseAddress?.assumingMemoryBound(to: UInt8.self),
                    Int32(left.width), Int32(left.height), Int32(components), left.bytesPerRow
                )
            }
        }
        return score.isNaN ? nil : score
    }

    private static func comparable(_ image: Image) -> Image {
        image.frame(0).withEightBitChannels().flattenedOntoBlack()
    }
}

extension Image {
    /// Grey 8-bit pixels repeated into RGB; others as they are.
    fileprivate var rgb: Image {
        guard pixelFormat == .gray8 else { return self }
        var output = Data(count: width * height * 3)
        let count = width * height
        pixels.withUnsafeBytes { (input: UnsafeRawBufferPointer) in
            output.withUnsafeMutableBytes { (target: UnsafeMutableRawBufferPointer) in
                for index in 0..<count {
                    let value = input[index]
                    target[3 * index] = value
                    target[3 * index + 1] = value
                    target[3 * index + 2] = value
                }
            }
        }
        return Image(
            width: width, height: height, pixelFormat: .rgb8, pixels: output, sourceFormat: sourceFormat,
            metadata: metadata)
    }
}
