import Foundation
import Imagery

/// Chooses a quality by encoding: the highest that fits a size, or the lowest whose output meets a
/// perceived quality (`PerceivedQuality`). Every encode is a candidate output, so the one chosen is
/// never encoded twice. Deterministic: the same image and bounds give the same probes and bytes.
enum QualitySearch {
    typealias Encode = (Int) throws -> Data

    /// The highest quality in `range` whose output has at most `limit` bytes, by bisection below the
    /// upper bound (at most 7 more encodes); the smallest output when none fits.
    /// - Parameter first: The output at `range.upperBound`, when made already.
    static func largest(fitting limit: Int, in range: ClosedRange<Int>, first: Data? = nil, encode: Encode) throws
        -> EncodedImage
    {
        let top = try first ?? encode(range.upperBound)
        if top.count <= limit { return EncodedImage(data: top, quality: range.upperBound) }
        var (low, high) = (range.lowerBound, range.upperBound - 1)
        var best: EncodedImage?
        var smallest = EncodedImage(data: top, quality: range.upperBound)
        while low <= high {
            let middle = (low + high) / 2
            let data = try encode(middle)
            if data.count < smallest.data.count { smallest = EncodedImage(data: data, quality: middle) }
            if data.count <= limit {
                best = EncodedImage(data: data, quality: middle)
                low = middle + 1
            } else {
                high = middle - 1
            }
        }
        return best ?? smallest
    }

    /// The median SSIMULACRA2 score of JPEG by quality (the 40 corpus photos at 256 px, this encoder;
    /// the jump at 90 is chroma at full resolution): the search's model of how a score grows with the
    /// quality. An image's own curve is taken to be this one moved up or down by what its first probe
    /// measures.
    static let medianCurve: [(quality: Double, score: Double)] = [
        (30, 49.7), (34, 51.9), (38, 54.2), (42, 55.7), (46, 58.4), (50, 59.1), (54, 59.5), (58, 60.7), (62, 61.8),
        (66, 62.7), (70, 64.1), (74, 65.6), (78, 66.7), (82, 68.0), (86, 69.5), (90, 85.3), (94, 88.4),
    ]

    /// The quality at which an image whose score at `quality` is `score` is expected to score `target`.
    static func expectedQuality(reaching target: Double, from quality: Int, scoring score: Double) -> Double {
        let curve = medianCurve
        func median(at quality: Double) -> Double {
            guard quality > curve[0].quality else { return curve[0].score }
            guard let upper = curve.firstIndex(where: { $0.quality >= quality }) else {
                return curve[curve.count - 1].score
            }
            let (a, b) = (curve[upper - 1], curve[upper])
            return a.score + (quality - a.quality) * (b.score - a.score) / (b.quality - a.quality)
        }
        let seek = target - (score - median(at: Double(quality)))
        guard seek > curve[0].score else { return 1 }
        guard let upper = curve.firstIndex(where: { $0.score >= seek }) else { return 100 }
        let (a, b) = (curve[upper - 1], curve[upper])
        return a.quality + (seek - a.score) * (b.quality - a.quality) / (b.score - a.score)
    }

    /// The encodes a perceived-quality search may make: 3 over 10 qualities or fewer, else 5. On the
    /// corpus at 256 px (JPEG, target 70), 3 probes over 70–80 end within one quality of the lowest
    /// that meets the target for every image, 1.5 probes on average (the maximum falls short for most).
    static func probeLimit(_ range: ClosedRange<Int>) -> Int {
        range.count <= 11 ? 3 : 5
    }

    /// The lowest quality in `range` whose output scores at least `target` against `quality`'s
    /// reference; the upper bound's output when even that falls short (the maximum is a cap).
    ///
    /// The upper bound is encoded first (the answer for an image that needs it all); then where the
    /// image's curve (``expectedQuality(reaching:from:scoring:)``) reaches the target; then, between the
    /// probes that bracket the target, the secant's guess, but never below the bracket's middle (a
    /// score can jump between qualities: JPEG's chroma at 90). It stops at ``probeLimit(_:)`` encodes,
    /// or when a probe meets the target within `tolerance`.
    static func lowest(
        meeting target: Double, tolerance: Double, in range: ClosedRange<Int>, quality: PerceivedQuality, encode: Encode
    ) throws -> EncodedImage {
        var probes: [Int: (data: Data, score: Double)] = [:]
        func probe(_ value: Int) throws -> Double {
            let data = try encode(value)
            let score = try quality.score(data)
            probes[value] = (data, score)
            return score
        }
        var good = range.upperBound
        var bad: Int?
        if try probe(good) >= target {
            while probes.count < probeLimit(range), good > range.lowerBound, bad.map({ good - $0 > 1 }) ?? true {
                let goodScore = probes[good]!.score
                if goodScore - target <= tolerance { break }
                var guess = expectedQuality(reaching: target, from: good, scoring: goodScore)
                if let bad {
                    let slope = max(0.05, (goodScore - probes[bad]!.score) / Double(good - bad))
                    guess = max(Double(good) - (goodScore - target) / slope, Double(good + bad) / 2)
                }
                let lower = bad.map { $0 + 1 } ?? range.lowerBound
                let next = max(lower, min(good - 1, Int(guess.rounded(.down))))
                if try probe(next) >= target { good = next } else { bad = next }
            }
        }
        return EncodedImage(data: probes[good]!.data, quality: good)
    }
}
