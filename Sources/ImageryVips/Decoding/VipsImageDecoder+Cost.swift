import CVips
import Foundation
import Imagery

/// What a decode holds at its peak, from the header alone, for ``MemoryBudget``.
///
/// - JPEG thumbnails (decoded at a DCT scale by `CJPEG`): the pixels at that scale, three times
///   (the decoder's buffer, libvips' copy while orienting and normalising, the base kept), and for
///   a progressive JPEG libjpeg's whole-image coefficient buffer (2 bytes per coefficient of every
///   component at full size: 54 MB for an 18 MP 4:2:0 photo, usually more than the pixels);
/// - other formats through libvips' thumbnail: the full image when it cannot be read in one pass
///   (interlaced PNG, GIF, WebP, AVIF and the rest decode whole), and the rows its resize keeps in
///   flight (``thumbnailRows``);
/// - always the result (and its copy into an ``Image``);
/// - an animation's frames: two full-size frames (the loader's canvas and the one it draws on), and
///   for every frame its decoded size (held in memory to process each frame) and the result.
extension VipsImageDecoder: DecodeCostEstimating {
    public func estimatedDecodeMemory(_ data: Data, recipe: ImageRecipe) throws -> Int {
        let (data, format) = try started(data)
        let header = try data.withUnsafeBytes { buffer -> Header in
            guard let base = buffer.baseAddress else { throw ImageDecodingError.empty }
            do {
                return try checkHeader(base, buffer.count, format: format)
            } catch let error as VipsError {
                throw error.decodingError(format: format)
            }
        }
        let (width, height) = header.orientedSize
        let fullSize = header.width * header.height * header.bands * header.sampleBytes
        // The rows in flight of libvips' resize (an animation is resized as one tall strip of its frames).
        let rows =
            min(Self.thumbnailRows, 3 * header.height) * header.width
            * (header.bands % 2 == 0 ? header.bands * 4 : header.bands * header.sampleBytes)
        if case .all(let frames) = try frames(of: header, for: recipe) {
            return animationMemory(header, frames: frames, recipe: recipe) + rows
        }
        // The image, and its copy into an Image; a recipe that fails on this image costs nothing more.
        guard recipe.resizes, recipe.trim == nil else { return 2 * fullSize }
        guard let layout = try? recipe.layout(sourceWidth: width, sourceHeight: height, maximumSide: .max) else {
            return fullSize
        }
        let result = 2 * layout.outputWidth * layout.outputHeight * max(3, header.bands)
        // Decoded whole (no shrink-on-load) and resized from it: in linear light, or keeping 16 bits.
        if recipe.resizesInLinearLight || (recipe.keepsHighBitDepth && header.sampleBytes > 1) {
            return 2 * fullSize + result
        }
        switch format {
        case .jpeg:
            let scale = Self.decodeScale(sourceWidth: width, sourceHeight: height, for: recipe)
            let scaled = ((header.width + scale - 1) / scale) * ((header.height + scale - 1) / scale) * header.bands
            let coefficients = JPEGFrame(data)?.progressiveCoefficientBytes ?? 0
            return 3 * scaled + coefficients + result
        case .png where !PNGHeader.isInterlaced(data):
            return result + rows
        default:
            return fullSize + rows + result
        }
    }

    /// The source rows libvips' thumbnail holds while it resizes, measured (`--vips-leak` high-water
    /// marks, one thread): 17–27 MB for an 8-bit RGB PNG 5 120 wide whatever the output size and the
    /// source's height (1 000, 2 880 or 5 760 rows), 9 MB at 2 000 wide: about 1 900 rows. An image with
    /// alpha is premultiplied in float first (4 bytes a band): 60–111 MB for the same PNG in RGBA. A
    /// short image holds up to three times its height (5 120 × 200: up to 8.7 MB, 570 rows).
    /// Counted as 64 rows before: a burst of such PNGs held 100 MB more than the budget said.
    static let thumbnailRows = 1_900
}

extension VipsImageDecoder {
    /// What decoding all `frames` of an animation with `header` for `recipe` holds at its peak.
    func animationMemory(_ header: Header, frames: Int, recipe: ImageRecipe) -> Int {
        let frameBytes = header.width * header.height * 4  // the loaders render RGBA
        let (width, height) = header.orientedSize
        let decoded =
            Self.decodeSize(for: recipe, sourceWidth: width, sourceHeight: height).map { $0.width * $0.height * 4 }
            ?? frameBytes
        let output =
            (try? recipe.layout(sourceWidth: width, sourceHeight: height, maximumSide: .max))
            .map { $0.outputWidth * $0.outputHeight * 4 } ?? frameBytes
        return 2 * frameBytes + frames * (decoded + 2 * output)
    }
}

/// A JPEG's frame header (SOFn): its size, its components' sampling and whether it is progressive.
struct JPEGFrame {
    let width: Int
    let height: Int
    let progressive: Bool
    /// (horizontal, vertical) sampling factors per component.
    let sampling: [(h: Int, v: Int)]

    /// The frame header of `data`, or `nil` if none is found before the first scan.
    init?(_ data: Data) {
        var found: JPEGFrame?
        let parsed: Void? = data.withUnsafeBytes { bytes -> Void? in
            guard bytes.count > 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return nil }
            var offset = 2
            while offset + 4 <= bytes.count {
                guard bytes[offset] == 0xFF else { return nil }
                let marker = bytes[offset + 1]
                if marker == 0xFF {
                    offset += 1
                    continue
                }  // fill byte
                if marker == 0xD8 || marker == 0x01 || (0xD0...0xD7).contains(marker) {
                    offset += 2
                    continue
                }
                let length = Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
                guard length >= 2, offset + 2 + length <= bytes.count else { return nil }
                let segment = offset + 4
                // SOF0-3, 5-7, 9-11, 13-15 (not DHT C4, JPG C8, DAC CC).
                if (0xC0...0xCF).contains(marker), marker != 0xC4, marker != 0xC8, marker != 0xCC, length >= 8 {
                    let height = Int(bytes[segment + 1]) << 8 | Int(bytes[segment + 2])
                    let width = Int(bytes[segment + 3]) << 8 | Int(bytes[segment + 4])
                    let count = Int(bytes[segment + 5])
                    guard length >= 8 + 3 * count else { return nil }
                    let sampling = (0..<count).map { index in
                        let factors = bytes[segment + 6 + 3 * index + 1]
                        return (h: max(1, Int(factors >> 4)), v: max(1, Int(factors & 0x0F)))
                    }
                    let progressive = [0xC2, 0xC6, 0xCA, 0xCE].contains(marker)
                    found = JPEGFrame(width: width, height: height, progressive: progressive, sampling: sampling)
                    return ()
                }
                if marker == 0xDA { return nil }  // a scan before any frame header
                offset += 2 + length
            }
            return nil
        }
        guard parsed != nil, let found else { return nil }
        self = found
    }

    private init(width: Int, height: Int, progressive: Bool, sampling: [(h: Int, v: Int)]) {
        (self.width, self.height, self.progressive, self.sampling) = (width, height, progressive, sampling)
    }

    /// Bytes of libjpeg's whole-image coefficient buffer (64 coefficients of 2 bytes per 8×8 block
    /// of every component, padded to whole MCUs), which it needs for a progressive JPEG; 0 otherwise.
    var progressiveCoefficientBytes: Int {
        guard progressive, let maxH = sampling.map(\.h).max(), let maxV = sampling.map(\.v).max() else { return 0 }
        let mcuColumns = (width + 8 * maxH - 1) / (8 * maxH)
        let mcuRows = (height + 8 * maxV - 1) / (8 * maxV)
        return sampling.reduce(0) { total, factors in total + mcuColumns * factors.h * mcuRows * factors.v * 128 }
    }
}

/// The one fact of a PNG header that matters to memory: Adam7 interlacing (decoded whole).
enum PNGHeader {
    static func isInterlaced(_ data: Data) -> Bool {
        // Signature (8), IHDR length (4) and type (4), width, height (8), depth, colour type,
        // compression, filter (4): the interlace method is byte 28.
        data.count > 28 && data[data.startIndex + 28] == 1
    }
}
