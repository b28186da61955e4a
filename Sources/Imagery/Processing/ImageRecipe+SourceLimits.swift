import Foundation

extension ImageRecipe {
    /// The largest source a recipe is made from; a larger one is refused
    /// (``ImageDecodingError/overRequestLimit(_:)``) before any pixel is decoded.
    public struct SourceLimits: Sendable, Hashable {
        /// Pixels: width × height × frames (for an animation with ``framePixels``, each frame's instead).
        public var pixels: Int?
        /// Pixels of each frame of an animation.
        public var framePixels: Int?
        /// Frames of an animation.
        public var frames: Int?
        /// Bytes of the encoded source.
        public var bytes: Int?

        public init(pixels: Int? = nil, framePixels: Int? = nil, frames: Int? = nil, bytes: Int? = nil) {
            (self.pixels, self.framePixels, self.frames, self.bytes) = (pixels, framePixels, frames, bytes)
        }

        /// Why a source of `bytes` bytes, `width` × `height` pixels a frame and `frames` frames is over
        /// these limits, or `nil` when it is within them (imgproxy's checks).
        public func problem(bytes count: Int, width: Int, height: Int, frames: Int) -> String? {
            if let bytes, count > bytes { return "the source is \(count) bytes, over the request's limit of \(bytes)" }
            if let limit = self.frames, frames > limit {
                return "the source has \(frames) frames, over the request's limit of \(limit)"
            }
            if frames > 1, let limit = framePixels {
                return width * height > limit
                    ? "each frame of the source is \(width)x\(height) pixels, over the request's limit of \(limit)"
                    : nil
            }
            if let limit = pixels, width * height * max(1, frames) > limit {
                return
                    "the source is \(width)x\(height) pixels\(frames > 1 ? " × \(frames) frames" : ""), over the request's limit of \(limit)"
            }
            return nil
        }
    }
}
