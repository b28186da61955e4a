import CVips
import Foundation
import Imagery

/// Animated images in libvips: frames (pages) stacked top to bottom in one image, each
/// `page-height` rows, with a `delay` per frame (milliseconds) and a `loop` count.
extension Vips {
    /// How many frames `image` stacks: 1 unless its `page-height` divides its height.
    static func frameCount(of image: UnsafeMutablePointer<VipsImage>) -> Int {
        let pageHeight = Int(imagery_vips_page_height(image))
        let height = Int(vips_image_get_height(image))
        return pageHeight > 0 && pageHeight < height && height % pageHeight == 0 ? height / pageHeight : 1
    }

    /// The timing of `image`'s frames; `nil` when it is one frame. A missing or short `delay` list
    /// is completed with 100 ms (what browsers show a GIF frame without a delay for).
    static func animation(of image: UnsafeMutablePointer<VipsImage>) -> Image.Animation? {
        let frames = frameCount(of: image)
        guard frames > 1 else { return nil }
        var count: Int32 = 0
        let values = imagery_vips_delays(image, &count)
        let delays = (0..<frames).map { index in
            guard let values, index < Int(count) else { return 100 }
            return max(0, Int(values[index]))
        }
        return Image.Animation(frameDelays: delays, loopCount: max(0, Int(imagery_vips_loop(image))))
    }

    /// Marks `image` (fresh, not shared) as `animation`'s frames, each `frameHeight` rows.
    static func setAnimation(_ animation: Image.Animation, on image: UnsafeMutablePointer<VipsImage>, frameHeight: Int)
    {
        let delays = animation.frameDelays.map { Int32(clamping: $0) }
        delays.withUnsafeBufferPointer { buffer in
            imagery_vips_set_animation(
                image, Int32(frameHeight), buffer.baseAddress, Int32(buffer.count), Int32(clamping: animation.loopCount)
            )
        }
    }

    /// `frames` (all one width; consumed, released on failure too) stacked into one animated image
    /// with `animation`'s timing.
    static func stack(_ frames: [UnsafeMutablePointer<VipsImage>], animation: Image.Animation) throws
        -> UnsafeMutablePointer<VipsImage>
    {
        defer { frames.forEach { imagery_vips_unref($0) } }
        var inputs: [UnsafeMutablePointer<VipsImage>?] = frames
        var joined: UnsafeMutablePointer<VipsImage>?
        guard imagery_vips_stack(&inputs, Int32(inputs.count), &joined) == 0, let joined else {
            throw VipsError(message: takeError())
        }
        let result = try apply(joined) { imagery_vips_copy($0, $1) }  // its own header, to set the timing on
        setAnimation(animation, on: result, frameHeight: Int(vips_image_get_height(frames[0])))
        return result
    }
}
