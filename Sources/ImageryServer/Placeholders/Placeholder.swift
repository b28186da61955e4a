import Foundation
import Imagery

/// `placeholder=` on `/image`: what a page shows while the image loads, made from the same source and
/// framing (the request's recipe) at a small size.
///
/// - `blurhash`: the BlurHash (4 × 3 components) as `text/plain`;
/// - `thumbhash`: the ThumbHash, base64, as `text/plain`;
/// - `lqip`: a tiny image (at most 32 pixels a side, blurred, quality 40 unless `q` says otherwise)
///   in the output format, a few hundred bytes.
///
/// Hashes are computed from a decode of at most 100 pixels a side (ThumbHash's limit; BlurHash needs
/// no more), shrunk on load, and are stored like any response (memory, disk, ETag).
package enum Placeholder: String, CaseIterable, Sendable, Hashable {
    case blurhash
    case thumbhash
    case lqip

    /// The largest side the placeholder is made at.
    var side: Int { self == .lqip ? 32 : 100 }

    /// Whether the answer is a hash (text) rather than an image.
    var isHash: Bool { self != .lqip }

    /// `recipe`'s framing at most ``side`` pixels a side: its box scaled down (a recipe without one
    /// gets `inside` ``side`` × ``side``); padding is left out of hashes and scaled for `lqip`; `lqip`
    /// is blurred (sigma 1.5) unless the recipe blurs already.
    func recipe(from recipe: ImageRecipe) -> ImageRecipe {
        var small = recipe
        small.frame = recipe.frame ?? 0  // of an animation, the first frame (or the one asked for)
        let side = Double(self.side)
        var factor = 1.0
        if var resize = recipe.resize {
            factor = min(1, side / Double(max(resize.width, resize.height)))
            resize.width = max(1, Int((Double(resize.width) * factor).rounded()))
            resize.height = max(1, Int((Double(resize.height) * factor).rounded()))
            small.resize = resize
        } else {
            small.resize = ImageRequest.Thumbnail(width: self.side, height: self.side, fit: .inside)
        }
        if isHash {
            small.padding = nil
        } else {
            small.padding = recipe.padding.map { padding in
                func scaled(_ value: Int) -> Int { Int((Double(value) * factor).rounded()) }
                return ImageRecipe.Insets(
                    top: scaled(padding.top), right: scaled(padding.right), bottom: scaled(padding.bottom),
                    left: scaled(padding.left))
            }
            if small.blur == nil { small.blur = 1.5 }
        }
        return small
    }

    /// The text of a hash placeholder of `image` (at most 100 × 100).
    func body(of image: Image) -> Data {
        switch self {
        case .blurhash: Data(BlurHash.encode(image, componentsX: 4, componentsY: 3).utf8)
        case .thumbhash: Data(Data(ThumbHash.encode(image)).base64EncodedString().utf8)
        case .lqip: Data()
        }
    }

    static let contentType = "text/plain; charset=utf-8"
}
