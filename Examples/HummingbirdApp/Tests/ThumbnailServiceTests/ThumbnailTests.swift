import Foundation
import Hummingbird
import HummingbirdTesting
import Imagery
import ImageryDiskCache
import ImageryVips
import Testing
import ThumbnailService

@Suite("Negotiated thumbnails in a Hummingbird app")
struct ThumbnailTests {
    /// The repository's test images (`Tests/Fixtures`), as the folder the app's images are under.
    static let fixtures = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Tests/Fixtures", isDirectory: true)

    /// The app on a pipeline that reads files and keeps its disk cache in a temporary folder.
    static func withApp(_ test: @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("thumbnails-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = ImagePipeline.Configuration(decoder: VipsImageDecoder())  // file: URLs
        configuration.diskCache = try DiskCache(directory: directory)
        configuration.encoder = VipsImageEncoder()
        let router = Router()
        Thumbnails(pipeline: ImagePipeline(configuration: configuration), sources: fixtures).add(to: router)
        try await Application(router: router).test(.router, test)
    }

    @Test func theAcceptHeaderChoosesTheFormat() async throws {
        try await Self.withApp { client in
            var etag: String?
            try await client.execute(
                uri: "/thumbnails/rocket.jpg?w=64", method: .get, headers: [.accept: "image/avif,image/webp,*/*"]
            ) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "image/avif")
                #expect(response.headers[.vary] == "Accept")
                #expect(ImageFormat(sniffing: Data(buffer: response.body)) == .avif)
                etag = response.headers[.eTag]
            }
            try await client.execute(
                uri: "/thumbnails/rocket.jpg?w=64", method: .get, headers: [.accept: "image/webp,*/*"]
            ) { response in
                #expect(response.headers[.contentType] == "image/webp")
                #expect(response.headers[.eTag] != etag)
            }
            try await client.execute(uri: "/thumbnails/rocket.jpg?w=64", method: .get) { response in
                #expect(response.headers[.contentType] == "image/jpeg")  // nothing named: the source's
            }
            try await client.execute(
                uri: "/thumbnails/rocket.jpg?w=64", method: .get,
                headers: [.accept: "image/avif", .ifNoneMatch: try #require(etag)]
            ) { response in
                #expect(response.status == .notModified)
                #expect(response.body.readableBytes == 0)
            }
        }
    }

    @Test func badNamesAndMissingImagesAreClientErrors() async throws {
        try await Self.withApp { client in
            try await client.execute(uri: "/thumbnails/missing.jpg", method: .get) { #expect($0.status == .notFound) }
            try await client.execute(uri: "/thumbnails/..%2Fsecret", method: .get) { #expect($0.status == .badRequest) }
            try await client.execute(uri: "/thumbnails/rocket.jpg?w=0", method: .get) {
                #expect($0.status == .badRequest)
            }
        }
    }
}
