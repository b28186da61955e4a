import Foundation
import Imagery
import ImageryTestSupport
import ImageryVips
import Testing

/// Thumbnails made from a kept base must be the thumbnails decoding gives: same size,
/// same pixels up to resampling noise, orientation and colour handled the same way.
@Suite("Thumbnails from a kept base")
struct ThumbnailBaseTests {
    let decoder = VipsImageDecoder()

    /// Mean absolute difference per channel value, 0...255.
    static func meanDifference(_ a: Image, _ b: Image) -> Double {
        precondition(a.pixels.count == b.pixels.count)
        var total = 0
        for (x, y) in zip(a.pixels, b.pixels) { total += abs(Int(x) - Int(y)) }
        return Double(total) / Double(a.pixels.count)
    }

    static var sources: [URL] {
        var files = ["rocket.jpg", "rocket-portrait.jpg", "camera-gray.jpg"].map(Fixtures.url)
        if let corpus = Fixtures.corpus {
            files += ["drv-exif-orient6-GreenMeadow.jpg", "drv-cmyk-Dune.jpg", "lomiri16-Dragonfly_by_Bolly.jpg"]
                .map { corpus.appendingPathComponent($0) }
        }
        return files
    }

    static let thumbnails: [ImageRequest.Thumbnail] = [
        .init(width: 64, height: 64, fit: .cover), .init(width: 100, height: 8192, fit: .inside),
        .init(width: 120, height: 80, fit: .contain), .init(width: 50, height: 90, fit: .fill),
        .init(width: 300, height: 300, fit: .inside), .init(width: 257, height: 8192, fit: .inside),
    ]

    /// A DCT-scaled decode (1/2 to 1/8) then a resize, against the reference: the full-size
    /// decode resized with the same filter. Prints the differences (BENCHMARKS.md quotes them).
    @Test(arguments: sources)
    func dctScaledThumbnailsMatchResizingTheFullImage(source: URL) throws {
        let data = try Data(contentsOf: source)
        let full = try decoder.decode(data, thumbnail: nil)
        let fullBase = ThumbnailBase(image: full, scale: 1, sourceWidth: full.width, sourceHeight: full.height)
        var report: [String] = []
        for thumbnail in Self.thumbnails {
            let name = "\(source.lastPathComponent) \(thumbnail.width)x\(thumbnail.height) \(thumbnail.fit)"
            let (image, base) = try decoder.decodeKeepingBase(data, thumbnail: thumbnail)
            let reference = try decoder.resize(fullBase, to: thumbnail)
            #expect((image.width, image.height) == (reference.width, reference.height), "\(name)")
            #expect(image.pixelFormat == reference.pixelFormat, "\(name)")
            #expect(
                image == (try decoder.decode(data, thumbnail: thumbnail)),
                "\(name): decode and decodeKeepingBase differ")
            let kept = try #require(base, "\(name)")
            #expect(kept.image.width >= image.width || kept.image.height >= image.height, "\(name)")
            guard image.pixels.count == reference.pixels.count else { continue }
            let difference = Self.meanDifference(image, reference)
            #expect(difference < 2.5, "\(name): mean difference \(difference)")
            report.append(
                "\(thumbnail.width)x\(thumbnail.height) \(thumbnail.fit) 1/\(kept.scale): \(String(format: "%.2f", difference))"
            )
        }
        print(
            "DCT-scaled vs full-size resize, mean |difference| per channel (0-255), \(source.lastPathComponent): \(report.joined(separator: ", "))"
        )
    }

    @Test(arguments: sources)
    func sizesAtTheBasesScaleComeFromItExactlyAndOthersAreRefused(source: URL) throws {
        let data = try Data(contentsOf: source)
        let (_, base) = try decoder.decodeKeepingBase(data, thumbnail: .init(width: 128, height: 128, fit: .cover))
        let kept = try #require(base)
        // Sizes a decode would make at the base's scale come from it, byte for byte what a decode gives.
        var derivedCount = 0
        for thumbnail in [
            ImageRequest.Thumbnail(width: 128, height: 128, fit: .cover), .init(width: 100, height: 60, fit: .contain),
            .init(width: 120, height: 8192, fit: .inside), .init(width: 96, height: 96, fit: .cover),
        ] {
            let scale = VipsImageDecoder.decodeScale(
                sourceWidth: kept.sourceWidth, sourceHeight: kept.sourceHeight, for: thumbnail)
            let derived = try decoder.thumbnail(thumbnail, from: kept)
            guard scale == kept.scale else {
                #expect(derived == nil, "\(thumbnail): scale 1/\(scale), base 1/\(kept.scale)")
                continue
            }
            derivedCount += 1
            #expect(derived == (try decoder.decode(data, thumbnail: thumbnail)), "\(thumbnail)")
        }
        #expect(derivedCount >= 1)
        // Finer or coarser scales than the base's are refused: a decode at their own scale gives other pixels.
        if kept.scale > 1 {
            let finer = ImageRequest.Thumbnail(
                width: kept.sourceWidth / kept.scale * 2, height: kept.sourceHeight / kept.scale * 2, fit: .cover)
            #expect(try decoder.thumbnail(finer, from: kept) == nil)
        }
    }

    /// `keepsPartialDecodeBlocks` (thumbor's recipes): the base keeps the partial last row of 8x8 blocks
    /// a 1/2 decode of a 640x427 JPEG has (320x214, as Pillow's draft; libvips' size is 320x213), the
    /// output is the same size, and a base serves only recipes that ask what it kept.
    @Test func partialDecodeBlocksAreKeptWhenAskedAndBasesServeTheirOwnKind() throws {
        let data = try Fixtures.data("rocket.jpg")
        var pillow = ImageRecipe(resize: .init(width: 300, height: 200, fit: .inside))
        pillow.keepsPartialDecodeBlocks = true
        let libvips = ImageRecipe(resize: .init(width: 300, height: 200, fit: .inside))
        let (kept, keptBase) = try decoder.decodeKeepingBase(data, recipe: pillow)
        let (dropped, droppedBase) = try decoder.decodeKeepingBase(data, recipe: libvips)
        let (keeping, dropping) = (try #require(keptBase), try #require(droppedBase))
        #expect((keeping.scale, keeping.image.width, keeping.image.height) == (2, 320, 214))
        #expect((dropping.scale, dropping.image.width, dropping.image.height) == (2, 320, 213))
        #expect((kept.width, kept.height) == (dropped.width, dropped.height))
        #expect(kept != dropped)
        #expect(try decoder.image(pillow, from: keeping) == kept)
        #expect(try decoder.image(libvips, from: keeping) == nil)
        #expect(try decoder.image(pillow, from: dropping) == nil)
    }

    @Test func otherFormatsKeepNoBaseAndBrokenJPEGsAreTypedErrors() throws {
        let (image, base) = try decoder.decodeKeepingBase(
            try Fixtures.data("chelsea.png"), thumbnail: .init(width: 40, height: 40))
        #expect(image.width == 40 && base == nil)
        let jpeg = try Fixtures.data("rocket.jpg")
        let truncated = jpeg.prefix(jpeg.count / 2)
        let strict = VipsImageDecoder(rejectsCorruptData: true)
        #expect(throws: ImageDecodingError.self) {
            try strict.decodeKeepingBase(Data(truncated), thumbnail: .init(width: 40, height: 40))
        }
        #expect(throws: ImageDecodingError.self) {
            try VipsImageDecoder(maximumPixels: 1000).decodeKeepingBase(jpeg, thumbnail: .init(width: 40, height: 40))
        }
    }
}
