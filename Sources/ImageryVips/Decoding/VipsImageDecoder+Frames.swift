import CGIFFrames
import CVips
import Foundation
import Imagery

/// Animated GIF and WebP: which frames a decode loads, within the frame budget.
///
/// Every frame is decoded and resized in one pass of libvips (`n=-1`: its GIF and WebP loaders render
/// one frame at a time at full size, and the resize reads them in order), so a decode holds one or two
/// full-size frames and the resized ones, never every frame at full size.
extension VipsImageDecoder {
    /// Which frames of a source a decode loads.
    enum Frames: Equatable {
        /// A still image: its only frame.
        case still
        /// One frame of an animation (0 first).
        case one(Int)
        /// All of an animation's frames, this many.
        case all(Int)
    }

    /// The frames `recipe` takes of a source with `header`: one when it names one (``ImageRecipe/frame``),
    /// else all of them within the budget.
    /// - Throws: ``ImageProcessingError/invalidValue(_:)`` for a frame the source does not have,
    ///   ``ImageDecodingError/tooManyFrames(frames:width:height:pixelLimit:frameLimit:)`` when all
    ///   frames are over ``maximumFrames`` or ``maximumAnimationPixels``.
    func frames(of header: Header, for recipe: ImageRecipe) throws -> Frames {
        let count = header.frames
        if let frame = recipe.frame {
            guard (0..<count).contains(frame) else {
                throw ImageProcessingError.invalidValue(
                    "frame \(frame) is not in the image: it has \(count == 1 ? "1 frame (0)" : "\(count) frames (0 to \(count - 1))")"
                )
            }
            return count > 1 ? .one(frame) : .still
        }
        guard count > 1 else { return .still }
        let pixelLimit = maximumAnimationPixels ?? maximumPixels
        let (pixels, overflow) = (header.width * header.height).multipliedReportingOverflow(by: count)
        guard count <= maximumFrames, !overflow, pixels <= pixelLimit,
            header.width * header.height <= maximumFramePixels ?? .max
        else {
            throw ImageDecodingError.tooManyFrames(
                frames: count, width: header.width, height: header.height, pixelLimit: pixelLimit,
                frameLimit: maximumFrames
            )
        }
        return .all(count)
    }

    /// The loader options (libvips' option string) for `frames`, strict when the decoder is.
    func loaderOptions(for frames: Frames) -> String {
        var options: [String] = rejectsCorruptData ? ["fail_on=warning"] : []
        switch frames {
        case .still: break
        case .one(let frame): options.append("page=\(frame)")
        case .all: options.append("n=-1")
        }
        return options.joined(separator: ",")
    }

    /// A GIF at `width` × `height` a frame, each frame resized on its own (no row of one frame blends
    /// into the next, as when the whole strip is resized at once): libnsgif's pixels are opaque, or
    /// transparent with zero colour, so they are premultiplied already and need none of the float
    /// premultiplication libvips' thumbnail does. Shrinking averages areas (`imagery_area_resize`, as
    /// gifsicle's "mix": a third of Lanczos 3's time, 0.24 levels from it on photo frames, and no ringing
    /// at the hard edges drawings have); enlarging uses Lanczos 3 in 8 bits. Frames are read once, in
    /// order, each computed on this thread before the next is begun: one full-size frame is held at a
    /// time, and no thread pool is started per frame.
    func decodeGIFResized(
        _ base: UnsafeRawPointer, _ count: Int, width: Int, height: Int, options: String
    ) throws -> UnsafeMutablePointer<VipsImage> {
        guard let opened = imagery_vips_open_sequential(base, count, options) else {
            throw VipsError(message: Vips.takeError())
        }
        defer { imagery_vips_unref(opened) }
        let frames = Vips.frameCount(of: opened)
        let (fullWidth, frameHeight) = (vips_image_get_width(opened), vips_image_get_height(opened) / Int32(frames))
        let (hscale, vscale) = (Double(width) / Double(fullWidth), Double(height) / Double(frameHeight))
        var image: UnsafeMutablePointer<VipsImage>
        if let animation = Vips.animation(of: opened) {
            // One buffer for every resized frame; each frame computed into it on this thread, one after another.
            let bands = vips_image_get_bands(opened)
            var pixels: UnsafeMutableRawPointer?
            guard let strip = imagery_vips_new_frames(Int32(width), Int32(height), bands, Int32(frames), &pixels),
                let pixels
            else {
                throw VipsError(message: Vips.takeError())
            }
            do {
                let interpretation = vips_image_get_interpretation(opened)
                image = try Vips.apply(strip) { imagery_vips_set_interpretation($0, $1, interpretation) }
            }
            // Shrinking: each frame computed whole, then area-averaged from libvips' buffer into its place.
            let shrinks = width <= Int(fullWidth) && height <= Int(frameHeight)
            do {
                for index in 0..<frames {
                    let frame = try Vips.apply(opened, releasingInput: false) {
                        imagery_vips_extract($0, $1, 0, Int32(index) * frameHeight, fullWidth, frameHeight)
                    }
                    let target = pixels + index * width * height * Int(bands)
                    if shrinks {
                        defer { imagery_vips_unref(frame) }
                        var (source, stride): (UnsafeRawPointer?, Int) = (nil, 0)
                        guard let region = imagery_vips_compute_region(frame, &source, &stride), let source else {
                            throw VipsError(message: Vips.takeError())
                        }
                        defer { imagery_vips_region_unref(region) }
                        switch imagery_area_resize(
                            source.assumingMemoryBound(to: UInt8.self), fullWidth, frameHeight, stride, bands,
                            target.assumingMemoryBound(to: UInt8.self), Int32(width), Int32(height)
                        ) {
                        case 0: break
                        case -2: throw VipsError(message: "out of memory resizing a GIF frame", outOfMemory: true)
                        default: throw VipsError(message: "a GIF frame could not be resized", outOfMemory: false)
                        }
                        continue
                    }
                    let small = try Vips.apply(frame) { imagery_vips_resize($0, $1, hscale, vscale) }
                    defer { imagery_vips_unref(small) }
                    guard (vips_image_get_width(small), vips_image_get_height(small)) == (Int32(width), Int32(height)),
                        imagery_vips_render_into(small, target) == 0
                    else { throw VipsError(message: Vips.takeError()) }
                }
            } catch {
                imagery_vips_unref(image)
                throw error
            }
            Vips.setAnimation(animation, on: image, frameHeight: height)
        } else {
            image = try Vips.apply(opened, releasingInput: false) { imagery_vips_resize($0, $1, hscale, vscale) }
        }
        if Vips.hasAlpha(image) {
            image = try Vips.apply(image) { imagery_vips_unpremultiply($0, $1) }
            image = try Vips.apply(image) { imagery_vips_cast_uchar($0, $1) }
        }
        return image
    }
}
