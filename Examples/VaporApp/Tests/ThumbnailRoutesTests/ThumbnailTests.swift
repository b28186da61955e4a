import Foundation
import Imagery
import ImageryDiskCache
import ImageryVips
import Testing
import ThumbnailRoutes
import VaporTesting

@Suite("Negotiated thumbnails in a Vapor app")
struct ThumbnailTests {
    /// The repository's test images (`Tests/Fixtures`), as the folder the app's images are under.
    static let fixtures = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Tests/Fixtures", isDirectory: true)

    /// The app on a pipeline that reads files and keeps its disk cache in a temporary folder.
    static func withThumbnails(_ test: (Application) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("thumbnails-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = ImagePipeline.Configuration(decoder: VipsImageDecoder())  // file: URLs
        configuration.diskCache = try DiskCache(directory: directory)
        configuration.encoder = VipsImageEncoder()
        let thumbnails = Thumbnails(pipeline: ImagePipeline(configuration: configuration), sources: fixtures)
        try await withApp(configure: { thumbnails.register(on: $0) }, test)
    }

    @Test func theAcceptHeaderChoosesTheFormat() async throws {
        try await Self.withThumbnails { app in
            var etag: String?
            try await app.testing().test(
                .GET, "thumbnails/rocket.jpg?w=64", headers: ["Accept": "image/avif,image/webp,*/*"]
            ) { response in
                #expect(response.status == .ok)
                #expect(response.headers.first(name: .contentType) == "image/avif")
                #expect(response.headers.first(name: .vary) == "Accept")
                #expect(ImageFormat(sniffing: Data(buffer: response.body)) == .avif)
                etag = response.headers.first(name: .eTag)
            }
            try await app.testing().test(.GET, "thumbnails/rocket.jpg?w=64", headers: ["Accept": "image/webp"]) {
                #expect($0.headers.first(name: .contentType) == "image/webp")
                #expect($0.headers.first(name: .eTag) != etag)
            }
            try await app.testing().test(.GET, "thumbnails/rocket.jpg?w=64") {
                #expect($0.headers.first(name: .contentType) == "image/jpeg")  // nothing named: the source's
            }
            try await app.testing().test(
                .GET, "thumbnails/rocket.jpg?w=64",
                headers: ["Accept": "image/avif", "If-None-Match": try #require(etag)]
            ) { response in
                #expect(response.status == .notModified)
                #expect(response.body.readableBytes == 0)
            }
        }
    }

    @Test func badNamesAndMissingImagesAreClientErrors() async throws {
        try await Self.withThumbnails { app in
            try await app.testing().test(.GET, "thumbnails/missing.jpg") { #expect($0.status == .notFound) }
            try await app.testing().test(.GET, "thumbnails/..%2Fsecret") { #expect($0.status == .badRequest) }
            try await app.testing().test(.GET, "thumbnails/rocket.jpg?w=0") { #expect($0.status == .badRequest) }
        }
    }
}
