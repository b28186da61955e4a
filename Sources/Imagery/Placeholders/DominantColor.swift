import Foundation

/// The colour an image shows most of, for a placeholder background.
public enum DominantColor {
    /// The most common colour of `image`: its pixels grouped by the top 4 bits of each channel
    /// (mostly transparent ones left out), the mean of the largest group. `nil` when every pixel is transparent.
    /// - Complexity: O(pixels); decode small first (100 × 100 is plenty).
    public static func of(_ image: Image) -> ImageRecipe.Color? {
        let image = image.withEightBitChannels()
        let channels = image.pixelFormat.bytesPerPixel
        let bytes = [UInt8](image.pixels)
        var counts = [Int](repeating: 0, count: 4096)
        var sums = [(Int, Int, Int)](repeating: (0, 0, 0), count: 4096)
        for index in 0..<image.width * image.height {
            let base = index * channels
            let (r, g, b): (UInt8, UInt8, UInt8)
            if image.pixelFormat.isGray {
                (r, g, b) = (bytes[base], bytes[base], bytes[base])
            } else {
                (r, g, b) = (bytes[base], bytes[base + 1], bytes[base + 2])
            }
            if image.pixelFormat.hasAlpha, bytes[base + channels - 1] < 128 { continue }
            let bucket = Int(r >> 4) << 8 | Int(g >> 4) << 4 | Int(b >> 4)
            counts[bucket] += 1
            sums[bucket].0 += Int(r)
            sums[bucket].1 += Int(g)
            sums[bucket].2 += Int(b)
        }
        guard let largest = counts.indices.max(by: { counts[$0] < counts[$1] }), counts[largest] > 0 else { return nil }
        let (count, sum) = (counts[largest], sums[largest])
        return ImageRecipe.Color(red: UInt8(sum.0 / count), green: UInt8(sum.1 / count), blue: UInt8(sum.2 / count))
    }
}
