import Foundation
import Imagery

/// `GET /info?url=…`: what a source is, from its header and one small decode (never the full image):
/// its size as displayed, format, orientation, frames, alpha, colour space and profile, file size,
/// dominant colour, BlurHash and ThumbHash. Signed and guarded like `/image`; the answer carries the
/// source's freshness and an ETag like an image.
struct ImageInfo: Encodable, Sendable {
    /// What the header says (its fields are the JSON's: width, height, format, orientation, frames,
    /// alpha, colorSpace, bitsPerChannel, profile — the ICC profile's description, absent without one).
    let header: ImageHeader
    /// The source's size in bytes.
    let bytes: Int
    /// `#rrggbb`; absent for a wholly transparent image.
    let dominantColor: String?
    let blurhash: String
    /// Base64.
    let thumbhash: String

    /// The decode the placeholders and the colour are computed from.
    static let sampleRecipe: ImageRecipe = {
        var recipe = ImageRecipe(resize: .init(width: 100, height: 100, fit: .inside))
        recipe.frame = 0  // of an animation, the first frame alone (within any frame budget)
        return recipe
    }()

    init(header: ImageHeader, bytes: Int, sample: Image) {
        self.header = header
        self.bytes = bytes
        dominantColor = DominantColor.of(sample).map { "#\($0)" }
        blurhash = BlurHash.encode(sample, componentsX: 4, componentsY: 3)
        thumbhash = Data(ThumbHash.encode(sample)).base64EncodedString()
    }

    private enum CodingKeys: String, CodingKey {
        case bytes, dominantColor, blurhash, thumbhash
    }

    /// The header's fields and this type's, in one object.
    func encode(to encoder: any Encoder) throws {
        try header.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(bytes, forKey: .bytes)
        try container.encodeIfPresent(dominantColor, forKey: .dominantColor)
        try container.encode(blurhash, forKey: .blurhash)
        try container.encode(thumbhash, forKey: .thumbhash)
    }

    /// The JSON body (keys sorted).
    func json() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try encoder.encode(self)
    }
}

extension ImageService {
    /// The `/info` answer for `url`: the source (through the caches and admission, as `/image`), its
    /// header, and a decode at most 100 pixels a side.
    /// - Throws: What loading or decoding the source throws; 415 when the decoder cannot describe it.
    func info(for url: URL) async throws -> StoredResponse {
        guard let inspector = pipeline.configuration.decoder as? any ImageInspecting else {
            throw ServerError(.unsupportedMediaType, "unsupported_source", "this server cannot describe images")
        }
        let source = try await pipeline.dataEntry(for: ImageRequest(url: url))
        let sample = try await pipeline.imageResponse(for: ImageRequest(url: url, recipe: ImageInfo.sampleRecipe))
        let data = source.data
        let body = try await encodingPool.run {
            try ImageInfo(header: inspector.inspect(data), bytes: data.count, sample: sample.image).json()
        }
        return StoredResponse(
            data: body, contentType: "application/json; charset=utf-8", source: sample.source,
            freshUntil: sample.freshUntil,
            policy: cachePolicy
        )
    }
}
