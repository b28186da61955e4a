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
        try await client.execute(uri: "/info?url=" + (origin.url(name).absoluteString.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""), method: .get) { response in
            #expect(response.status == .ok, "\(name): \(String(buffer: response.body))")
            #expect(response.headers[.contentType] == "application/json; charset=utf-8")
            #expect(response.headers[.eTag] != nil && response.headers[.cacheControl]?.contains("max-age") == true)
            return try JSONDecoder().decode(Info.self, from: response.data)
        }
    }

    @Test func describesTheFixtures() async throws {
        try await withServer { client, origin in
            let rocket = try await Self.info(client, origin, "rocket.jpg")
            #expect((rocket.width, rocket.height, rocket.format, rocket.orientation, rocket.frames) == (640, 427, "jpeg", 1, 1))
            #expect(!rocket.alpha && rocket.colorSpace == "srgb" && rocket.bitsPerChannel == 8 && rocket.bytes == 112_525)
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

    /// Every corpus image: `/info` agrees with `vipsheader` on size (as displayed), frames, bands and depth.
    @Test(.enabled(if: Fixtures.corpus != nil && FileManager.default.fileExists(atPath: "/usr/bin/vipsheader")))
    func agreesWithVipsheaderOnTheCorpus() async throws {
        let corpus = try #require(Fixtures.corpus)
        let files = Fixtures.files(in: corpus).filter { ImageFormat(fileExtension: $0.pathExtension) != nil }
        try await withServer(origin: try await TestOrigin.serving(directory: corpus), configure: { $0.memoryLimit = 1 << 30 }) { client, origin in
            for file in files {
                let fields = try Self.vipsheader(file)
                let info = try await Self.info(client, origin, file.lastPathComponent)
                let (storedWidth, storedHeight) = (Int(fields["width"]!)!, Int(fields["height"]!)!)
                let orientation = Int(fields["orientation"] ?? "1") ?? 1
                let pages = Int(fields["n-pages"] ?? "1") ?? 1
                let pageHeight = Int(fields["page-height"] ?? "\(storedHeight)") ?? storedHeight
                let (width, height) = orientation >= 5 ? (storedHeight, storedWidth) : (storedWidth, storedHeight)
                #expect((info.width, info.height) == (width, height), "\(file.lastPathComponent)")
                #expect(info.orientation == orientation, "\(file.lastPathComponent)")
                #expect(info.frames == max(pages, storedHeight / max(1, pageHeight)), "\(file.lastPathComponent)")
                #expect(info.colorSpace == fields["interpretation"], "\(file.lastPathComponent)")
                let bands = Int(fields["bands"] ?? "") ?? 0
                #expect(info.alpha == (bands == 2 || (bands == 4 && fields["interpretation"] != "cmyk")), "\(file.lastPathComponent)")
                #expect((info.profile != nil) == (fields["icc-profile-data"] != nil), "\(file.lastPathComponent)")
            }
        }
    }

    static func vipsheader(_ file: URL) throws -> [String: String] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/vipsheader")
        process.arguments = ["-a", file.path]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        var fields: [String: String] = [:]
        for line in String(decoding: output, as: UTF8.self).split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            fields[String(line[..<colon])] = value.split(separator: " ").first.map(String.init) ?? value
        }
        return fields
    }

    @Test func placeholdersComeFromTheSameFraming() async throws {
        try await withServer { client, origin in
            let blurhash = try await client.execute(uri: imageURI(origin, "rocket.jpg", "w=400&h=200&placeholder=blurhash"), method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "text/plain; charset=utf-8")
                #expect(response.headers[.vary] == nil)
                return String(buffer: response.body)
            }
            #expect(blurhash.count == 28)
            // Decoded back, it is close to the thumbnail it stands for (mean difference bound: 40 levels).
            let thumbnail = try await client.execute(uri: imageURI(origin, "rocket.jpg", "w=32&h=16&fit=fill&format=png"), method: .get) {
                try VipsImageDecoder().decode($0.data, thumbnail: nil)
            }
            let expanded = try #require(BlurHash.decode(blurhash, width: 32, height: 16))
            #expect(GeneratedImages.meanDifference(expanded, thumbnail) < 40)

            let thumbhash = try await client.execute(uri: imageURI(origin, "rocket.jpg", "w=400&h=200&placeholder=thumbhash"), method: .get) {
                String(buffer: $0.body)
            }
            let bytes = try #require(Data(base64Encoded: thumbhash))
            #expect(abs((ThumbHash.aspectRatio([UInt8](bytes)) ?? 0) - 2) < 0.35)  // 400x200's shape, not the source's
            let preview = try #require(ThumbHash.decode([UInt8](bytes)))
            #expect(preview.width == 32)

            let lqip = try await client.execute(uri: imageURI(origin, "rocket.jpg", "w=400&h=200&placeholder=lqip&format=webp"), method: .get) { response in
                #expect(response.headers[.contentType] == "image/webp")
                return response.data
            }
            let tiny = try VipsImageDecoder().decode(lqip, thumbnail: nil)
            #expect((tiny.width, tiny.height) == (32, 16) && lqip.count < 1000)
            try await client.execute(uri: imageURI(origin, "rocket.jpg", "placeholder=blurhash&format=png"), method: .get) { response in
                #expect(response.status == .badRequest)
            }
        }
    }
}
