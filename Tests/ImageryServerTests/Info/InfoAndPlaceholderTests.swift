import Foundation
import Hummingbird
import HummingbirdTesting
import Imagery
import ImageryServer
import ImageryTestSupport
import ImageryVips
import Testing

/// `/info` and `/image?placeholder=`.
@Suite("Info and placeholders")
struct InfoAndPlaceholderTests {
    struct Info: Decodable {
        let width: Int, height: Int, format: String, orientation: Int, frames: Int, alpha: Bool
        let colorSpace: String, bitsPerChannel: Int, profile: String?, bytes: Int
        let dominantColor: String?, blurhash: String, thumbhash: String
    }

    static func info(_ client: any TestClientProtocol, _ origin: TestOrigin, _ name: String) async throws -> Info {
        try await client.execute(
            uri: "/info?url="
                + (origin.url(name).absoluteString.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""),
            method: .get
        ) { response in
            #expect(response.status == .ok, "\(name): \(String(buffer: response.body))")
            #expect(response.headers[.contentType] == "application/json; charset=utf-8")
            #expect(response.headers[.eTag] != nil && response.headers[.cacheControl]?.contains("max-age") == true)
            return try JSONDecoder().decode(Info.self, from: response.data)
        }
    }

    @Test func describesTheFixtures() async throws {
        try await withServer { client, origin in
            let rocket = try await Self.info(client, origin, "rocket.jpg")
            #expect(
                (rocket.width, rocket.height, rocket.format, rocket.orientation, rocket.frames) == (
                    640, 427, "jpeg", 1, 1
                ))
            #expect(
                !rocket.alpha && rocket.colorSpace == "srgb" && rocket.bitsPerChannel == 8 && rocket.bytes == 112_525)
            #expect(rocket.blurhash.count == 28 && rocket.dominantColor?.count == 7)
            let rotated = try await Self.info(client, origin, "rocket-exif6.jpg")
            #expect((rotated.width, rotated.height, rotated.orientation) == (640, 427, 6))
            let p3 = try await Self.info(client, origin, "Colour/rocket-p3.jpg")
            #expect(p3.profile?.contains("P3") == true, "\(String(describing: p3.profile))")
            let grey = try await Self.info(client, origin, "camera-gray.jpg")
            #expect(grey.colorSpace == "b-w" && grey.profile == nil)
            // The placeholders are those of the sample decode: a ThumbHash that decodes to the image's aspect ratio.
            let hash = try #require(Data(base64Encoded: rocket.thumbhash))
            let ratio = try #require(ThumbHash.aspectRatio([UInt8](hash)))
            #expect(abs(ratio - 640.0 / 427) < 0.3)
        }
    }

    @Test func placeholdersComeFromTheSameFraming() async throws {
        try await withServer { client, origin in
            let blurhash = try await client.execute(
                uri: imageURI(origin, "rocket.jpg", "w=400&h=200&placeholder=blurhash"), method: .get
            ) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "text/plain; charset=utf-8")
                #expect(response.headers[.vary] == nil)
                return String(buffer: response.body)
            }
            #expect(blurhash.count == 28)
            // Decoded back, it is close to the thumbnail it stands for (mean difference bound: 40 levels).
            let thumbnail = try await client.execute(
                uri: imageURI(origin, "rocket.jpg", "w=32&h=16&fit=fill&format=png"), method: .get
            ) {
                try VipsImageDecoder().decode($0.data, thumbnail: nil)
            }
            let expanded = try #require(BlurHash.decode(blurhash, width: 32, height: 16))
            #expect(GeneratedImages.meanDifference(expanded, thumbnail) < 40)

            let thumbhash = try await client.execute(
                uri: imageURI(origin, "rocket.jpg", "w=400&h=200&placeholder=thumbhash"), method: .get
            ) {
                String(buffer: $0.body)
            }
            let bytes = try #require(Data(base64Encoded: thumbhash))
            #expect(abs((ThumbHash.aspectRatio([UInt8](bytes)) ?? 0) - 2) < 0.35)  // 400x200's shape, not the source's
            let preview = try #require(ThumbHash.decode([UInt8](bytes)))
            #expect(preview.width == 32)

            let lqip = try await client.execute(
                uri: imageURI(origin, "rocket.jpg", "w=400&h=200&placeholder=lqip&format=webp"), method: .get
            ) { response in
                #expect(response.headers[.contentType] == "image/webp")
                return response.data
            }
            let tiny = try VipsImageDecoder().decode(lqip, thumbnail: nil)
            #expect((tiny.width, tiny.height) == (32, 16) && lqip.count < 1000)
            try await client.execute(
                uri: imageURI(origin, "rocket.jpg", "placeholder=blurhash&format=png"), method: .get
            ) { response in
                #expect(response.status == .badRequest)
            }
        }
    }
}
