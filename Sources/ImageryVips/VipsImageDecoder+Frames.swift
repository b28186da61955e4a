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
        guard count <= maximumFrames, !overflow, pixels <= pixelLimit else {
            throw ImageDecodingError.tooManyFrames(
                frames: count, width: header.width, height: header.height, pixelLimit: pixelLimit, frameLimit: maximumFrames
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
}
