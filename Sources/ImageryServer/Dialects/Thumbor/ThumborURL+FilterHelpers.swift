import Foundation
import Imagery

extension ThumborURL {
    /// thumbor's blur: a Gaussian of `sigma`, cut at `radius` pixels (at most 150) from the centre,
    /// one row then one column of weights (normalised), each pass truncated to whole levels.
    static func blurKernels(radius: Int, sigma: Double) -> [ImageRecipe.Adjustment.Kernel] {
        let radius = min(radius, 150)
        let twoSigmaSquared = 2 * sigma * sigma
        let weights = (-radius...radius).map { x in
            exp(-Double(x * x) / twoSigmaSquared) / (twoSigmaSquared * .pi).squareRoot()
        }
        return [.init(weights: weights, columns: weights.count), .init(weights: weights, columns: 1)]
    }

    /// Every filter thumbor 7.8 has, by name (its default list, and `autojpg` and `red_eye`).
    static let builtInFilters = ServerConfiguration.thumborDefaultFilters.union(["autojpg", "red_eye"])

    /// What `extract_focal()` takes from an image that is itself a thumbor URL (`host/unsafe/LxT:RxB/IMAGE`),
    /// as thumbor reads it: the image inside, and the inner URL's crop as a focal region (left, top,
    /// width, height), looking through up to 10 nested URLs for one with a crop; `nil` when there is none.
    static func focalExtraction(of image: Substring) -> (
        image: Substring, region: (left: Int, top: Int, width: Int, height: Int)
    )? {
        let decoded = image.contains("%") ? image.removingPercentEncoding.map { Substring($0) } ?? image : image
        var url = decoded
        for _ in 0..<10 {
            var rest = url
            if rest.hasPrefix("http://") {
                rest = rest.dropFirst(7)
            } else if rest.hasPrefix("https://") {
                rest = rest.dropFirst(8)
            }
            guard let slash = rest.firstIndex(of: "/"),
                let inner = try? ThumborURL(path: rest[rest.index(after: slash)...])
            else { return nil }
            if case .hmac(let signature) = inner.signature, signature.count < 28 { return nil }
            if let crop = inner.crop {
                guard crop.right > crop.left, crop.bottom > crop.top else { return nil }
                return (inner.image, (crop.left, crop.top, crop.right - crop.left, crop.bottom - crop.top))
            }
            url = inner.image
        }
        return nil
    }

    /// The seconds of the URL's last `max_age(N)` filter (thumbor's `Cache-Control` max-age for its
    /// response), or `nil` when it has none.
    var maximumAge: Int? {
        guard let filter = filters.last(where: { $0.name == "max_age" }) else { return nil }
        return try? filter.integer(0, "seconds", negative: false)
    }
}
