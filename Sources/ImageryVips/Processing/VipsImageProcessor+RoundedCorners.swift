import CVips
import Foundation
import Imagery

/// thumbor's `round_corner()` (``ImageRecipe/Adjustment/roundCorners(horizontal:vertical:color:transparent:)``).
extension VipsImageProcessor {
    /// Corners outside ellipses of `horizontal` × `vertical` (at most half of each side) painted
    /// `color`, or cut out when `transparent`; the ellipses' edges anti-aliased (4 × 4 samples a pixel).
    func roundingCorners(
        _ image: UnsafeMutablePointer<VipsImage>, horizontal: Int, vertical: Int, color: ImageRecipe.Color,
        transparent: Bool
    ) throws -> UnsafeMutablePointer<VipsImage> {
        var image = try eightBitColour(image)
        let (width, height) = (Int(vips_image_get_width(image)), Int(vips_image_get_height(image)))
        let (a, b) = (min(horizontal, width / 2), min(vertical, height / 2))
        guard a > 0, b > 0 else { return image }
        if transparent, !Vips.hasAlpha(image) { image = try Vips.apply(image) { imagery_vips_add_alpha($0, $1) } }
        // The corners: RGBA, alpha where the ellipse does not cover (the top-left one's, mirrored),
        // made here as pixels: no libvips operation until the one composite.
        var coverage = [UInt8](repeating: 0, count: a * b)
        let samples = 4
        for y in 0..<b {
            for x in 0..<a {
                var outside = 0
                for sy in 0..<samples {
                    for sx in 0..<samples {
                        let dx = (Double(x) + (Double(sx) + 0.5) / Double(samples) - Double(a)) / Double(a)
                        let dy = (Double(y) + (Double(sy) + 0.5) / Double(samples) - Double(b)) / Double(b)
                        if dx * dx + dy * dy > 1 { outside += 1 }
                    }
                }
                coverage[y * a + x] = UInt8(255 * outside / (samples * samples))
            }
        }
        var overlays: [(image: Image, x: Int, y: Int)] = []
        let mirrors: [(x: Bool, y: Bool)] = [(false, false), (true, false), (false, true), (true, true)]
        for mirror in mirrors {
            var patch = Data(count: a * b * 4)
            for y in 0..<b {
                let row: Int = mirror.y ? b - 1 - y : y
                for x in 0..<a {
                    let column: Int = mirror.x ? a - 1 - x : x
                    let offset = (y * a + x) * 4
                    patch[offset] = color.red
                    patch[offset + 1] = color.green
                    patch[offset + 2] = color.blue
                    patch[offset + 3] = coverage[row * a + column]
                }
            }
            let corner = Image(width: a, height: b, pixelFormat: .rgba8, pixels: patch, sourceFormat: .png)
            overlays.append((corner, mirror.x ? width - a : 0, mirror.y ? height - b : 0))
        }
        return try blended(image, overlays, removingAlpha: transparent)  // painted on an opaque image: no alpha band
    }
}
