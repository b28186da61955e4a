import Foundation
import Imagery
import ImageryDiskCache
import ImageryHTTP
import ImageryTestSupport
import ImageryVips
import Testing

/// The library's encoded answers (`ImagePipeline.encodedImage(for:)`) on the real parts: an origin on
/// 127.0.0.1, the HTTP loader, libvips, a disk cache in a temporary directory.
@Suite("Encoded images")
struct EncodedImageTests {
    /// The time of the origin and the pipelines: it moves only when a test moves it.
    let time = ManualTime()

    /// A pipeline on `disk` with an empty memory.
    func makePipeline(_ loader: HTTPDataLoader, disk: DiskCache) -> ImagePipeline {
        var configuration = ImagePipeline.Configuration(decoder: VipsImageDecoder(), dataLoader: loader)
        configuration.diskCache = disk
        configuration.encoder = VipsImageEncoder()
        configuration.time = time.source
        return ImagePipeline(configuration: configuration)
    }

    /// A caching origin, an HTTP loader and a temporary directory, torn down after `body`.
    func withOrigin(_ body: (TestOrigin, HTTPDataLoader, URL) async throws -> Void) async throws {
        let origin = try await TestOrigin.caching(time: time.source)
        let loader = HTTPDataLoader(configuration: .patient)
        do {
            try await withTemporaryDirectory { directory in try await body(origin, loader, directory) }
        } catch {
            try? await loader.shutdown()
            try? await origin.shutdown()
            throw error
        }
        try await loader.shutdown()
        try await origin.shutdown()
    }

    static func thumbnail(_ url: URL, accept: String?) -> EncodedImageRequest {
        EncodedImageRequest(ImageRequest(url: url, thumbnail: .init(width: 64, height: 64)), accept: accept)
    }

    @Test func oneRequestAskedForAVIFAndWebPIsTwoVariantsEachFromDiskAfterARestart() async throws {
        try await withOrigin { origin, loader, directory in
            let url = origin.url("/rocket.jpg?cc=max-age%3D3600&etag=v1")
            let avifRequest = Self.thumbnail(url, accept: "image/avif,image/webp,*/*")
            let webpRequest = Self.thumbnail(url, accept: "image/webp,*/*")
            #expect(avifRequest.storageKey != webpRequest.storageKey)

            var first: [EncodedImageResponse] = []
            do {
                let disk = try openDiskCache(directory)
                let pipeline = makePipeline(loader, disk: disk)
                for request in [avifRequest, webpRequest] {
                    first.append(try await pipeline.encodedImage(for: request))
                }
                await pipeline.finishStoring()
            }
            #expect(first.map(\.format) == [.avif, .webp])
            #expect(first.map(\.origin) == [.encoded, .encoded])
            #expect(first.allSatisfy { $0.variesWithAccept && $0.width == 64 && $0.height == 64 })
            #expect(ImageFormat(sniffing: first[0].data) == .avif)
            #expect(ImageFormat(sniffing: first[1].data) == .webp)
            #expect(origin.requestCount == 1)  // one download for both variants

            // A restart: a new disk cache on the same directory, a new pipeline with empty memory.
            let disk = try openDiskCache(directory)
            let pipeline = makePipeline(loader, disk: disk)
            let again = [
                try await pipeline.encodedImage(for: avifRequest), try await pipeline.encodedImage(for: webpRequest),
            ]
            #expect(again.map(\.origin) == [.disk, .disk])
            #expect(again.map(\.data) == first.map(\.data))
            #expect(again.map(\.etag) == first.map(\.etag))
            #expect(again.map(\.contentType) == ["image/avif", "image/webp"])
            #expect(again.allSatisfy { $0.width == 64 && $0.height == 64 && $0.variesWithAccept })
            #expect(origin.requestCount == 1)  // nothing loaded, decoded or encoded again
            // Then from memory.
            #expect(try await pipeline.encodedImage(for: avifRequest).origin == .memory)
        }
    }

    @Test func aFormatAskedForDoesNotVaryAndNoAcceptedFormatKeepsTheSources() async throws {
        try await withOrigin { origin, loader, directory in
            let pipeline = makePipeline(loader, disk: try openDiskCache(directory))
            let url = origin.url("/rocket.jpg?cc=max-age%3D3600")
            var asked = Self.thumbnail(url, accept: "image/avif")
            asked.format = .png
            let png = try await pipeline.encodedImage(for: asked)
            #expect(png.format == .png && !png.variesWithAccept)
            let plain = try await pipeline.encodedImage(for: Self.thumbnail(url, accept: "image/jpeg,*/*"))
            #expect(plain.format == .jpeg && plain.variesWithAccept)
            #expect(ImageFormat(sniffing: plain.data) == .jpeg)
        }
    }

    @Test func validatorsAndCacheHeadersFollowTheSource() async throws {
        try await withOrigin { origin, loader, directory in
            let pipeline = makePipeline(loader, disk: try openDiskCache(directory))
            let url = origin.url("/rocket.jpg?cc=max-age%3D600&lm=3600")
            let encoded = try await pipeline.encodedImage(for: Self.thumbnail(url, accept: "image/webp"))
            #expect(
                encoded.etag.hasPrefix("\"") && encoded.etag.hasSuffix("-\(String(encoded.data.count, radix: 16))\""))
            #expect(encoded.isNotModified(ifNoneMatch: encoded.etag))
            #expect(encoded.isNotModified(ifNoneMatch: "\"other\", W/\(encoded.etag)"))
            #expect(!encoded.isNotModified(ifNoneMatch: "\"other\""))
            let lastModified = try #require(encoded.lastModified)
            #expect(encoded.isNotModified(ifNoneMatch: nil, ifModifiedSince: lastModified))
            // The origin's `Date` has whole seconds: the source may have aged by a fraction of one.
            let cacheControl = encoded.cacheHeaders.values(maximumAge: 3600, now: time.source.date()).cacheControl
            #expect(["public, max-age=600", "public, max-age=599"].contains(cacheControl))
            #expect(
                encoded.cacheHeaders.values(maximumAge: 60, now: time.source.date()).cacheControl
                    == "public, max-age=60")
        }
    }

    @Test func aStaleVariantWhoseSourceIsTheSameVersionKeepsItsBytes() async throws {
        try await withOrigin { origin, loader, directory in
            let pipeline = makePipeline(loader, disk: try openDiskCache(directory))
            let request = Self.thumbnail(origin.url("/rocket.jpg?cc=max-age%3D60&etag=v1"), accept: "image/webp")
            let first = try await pipeline.encodedImage(for: request)
            time.advance(by: .seconds(120))
            let second = try await pipeline.encodedImage(for: request)
            #expect(second.origin == .revalidated)
            #expect(second.etag == first.etag && second.isFresh(at: time.source.date()))
            #expect(origin.requests.last?.headers["if-none-match"] == "\"v1\"")
        }
    }

    @Test func identicalRequestsShareOneEncode() async throws {
        try await withOrigin { origin, loader, directory in
            let pipeline = makePipeline(loader, disk: try openDiskCache(directory))
            let request = Self.thumbnail(origin.url("/rocket.jpg?cc=max-age%3D60"), accept: "image/avif")
            let results = try await withThrowingTaskGroup(of: EncodedImageResponse.self) { group in
                for _ in 0..<8 { group.addTask { try await pipeline.encodedImage(for: request) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(Set(results.map(\.etag)).count == 1)
            #expect(origin.requestCount == 1)
        }
    }

    @Test func aPipelineWithoutAnEncoderSaysSo() async throws {
        try await withOrigin { origin, loader, _ in
            let pipeline = ImagePipeline(configuration: .init(decoder: VipsImageDecoder(), dataLoader: loader))
            await #expect(throws: ImagePipelineError.noEncoder) {
                try await pipeline.encodedImage(for: Self.thumbnail(origin.url("/rocket.jpg"), accept: nil))
            }
        }
    }
}
