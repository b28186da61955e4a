import Foundation
import Imagery
import ImageryHTTP
import ImageryTestSupport
import Testing

@Suite("Pipeline errors and bad input")
struct PipelineErrorTests {
    @Test func aNonSuccessStatusIsATypedErrorCarryingTheStatus() async throws {
        try await withHarness { harness in
            await #expect(throws: DataLoadingError.badStatus(404)) {
                try await harness.pipeline.image(for: ImageRequest(url: harness.origin.url("missing.jpg")))
            }
            await #expect(throws: DataLoadingError.badStatus(503)) {
                try await harness.pipeline.data(for: ImageRequest(url: harness.origin.url("rocket.jpg?status=503")))
            }
        }
    }

    /// A decode that fails for want of memory keeps its source (the bytes are not known to be bad),
    /// so the next request decodes again without the origin; a corrupt one is forgotten and fetched again.
    @Test(arguments: [
        (ImageDecodingError.outOfMemory(reason: "vips__malloc: out of memory"), 1),
        (ImageDecodingError.corrupt(format: .jpeg, reason: "Premature end of JPEG file"), 2),
    ])
    func aFailedAllocationKeepsTheSourceACorruptDecodeDoesNot(failure: ImageDecodingError, fetches: Int) async throws {
        let first = Counter()
        try await withHarness(configure: { configuration in
            configuration.decoder = FailingFirstDecoder(base: configuration.decoder, failure: failure, calls: first)
        }) { harness in
            let request = ImageRequest(url: harness.origin.url("rocket.jpg"), thumbnail: .init(width: 64, height: 64))
            await #expect(throws: failure) { try await harness.pipeline.image(for: request) }
            let image = try await harness.pipeline.image(for: request)
            #expect(image.width == 64)
            #expect(harness.origin.requestCount(path: "/rocket.jpg") == fetches)
        }
    }

    @Test func aResponseOverTheSizeCapIsRefusedFromContentLength() async throws {
        var configuration = HTTPDataLoader.Configuration.patient
        configuration.maximumSize = 50_000
        try await withHarness(loader: configuration) { harness in
            await #expect(throws: DataLoadingError.tooLarge(limit: 50_000)) {
                try await harness.pipeline.image(for: ImageRequest(url: harness.origin.url("rocket.jpg")))
            }
        }
    }

    @Test func aStreamedBodyOverTheSizeCapIsCutOff() async throws {
        // No Content-Length: the origin streams an unbounded-looking body.
        let body = Data(repeating: 0xAB, count: 400_000)
        let origin = try await TestOrigin.start { _ in
            TestOrigin.Response(
                headers: [("Transfer-Encoding", "chunked")], body: body, chunkSize: 10_000, chunkDelay: .milliseconds(1)
            )
        }
        var configuration = HTTPDataLoader.Configuration.patient
        configuration.maximumSize = 100_000
        try await withHarness(origin: origin, loader: configuration) { harness in
            await #expect(throws: DataLoadingError.tooLarge(limit: 100_000)) {
                try await harness.pipeline.data(for: ImageRequest(url: harness.origin.url("stream")))
            }
        }
    }

    /// An origin that never answers (its response held until the test ends): the timeout is the only
    /// way the load can end, however long the machine takes to reach it.
    @Test func aSlowOriginTimesOut() async throws {
        var configuration = HTTPDataLoader.Configuration.patient
        configuration.timeout = .milliseconds(300)
        try await withHarness(loader: configuration) { harness in
            await #expect(throws: DataLoadingError.timedOut) {
                try await harness.pipeline.data(for: ImageRequest(url: harness.origin.url("rocket.jpg?held=never")))
            }
            #expect(harness.origin.completedCount == 0)
        }
    }

    /// The timeout covers the body too: an origin that answers its head and 10 000 bytes at once and
    /// then sends nothing more (held until the test ends) is cut off.
    @Test func aSlowBodyTimesOutToo() async throws {
        var configuration = HTTPDataLoader.Configuration.patient
        configuration.timeout = .milliseconds(300)
        try await withHarness(loader: configuration) { harness in
            await #expect(throws: DataLoadingError.timedOut) {
                try await harness.pipeline.data(
                    for: ImageRequest(url: harness.origin.url("rocket.jpg?held_at=10000&held=never")))
            }
            #expect(harness.origin.completedCount == 0)
        }
    }

    @Test func redirectsAreFollowedAndLimited() async throws {
        let origin = try await TestOrigin.start { request in
            switch request.path {
            case "/loop": TestOrigin.Response(status: 302, headers: [("Location", "/loop")])
            case "/moved": TestOrigin.Response(status: 301, headers: [("Location", "/final")])
            default: TestOrigin.Response(body: (try? Fixtures.data("rocket.jpg")) ?? Data())
            }
        }
        try await withHarness(origin: origin) { harness in
            let data = try await harness.pipeline.data(for: ImageRequest(url: harness.origin.url("moved")))
            #expect(data.count == 112_525)
            await #expect(throws: DataLoadingError.tooManyRedirects(limit: 5)) {
                try await harness.pipeline.data(for: ImageRequest(url: harness.origin.url("loop")))
            }
        }
    }

    /// Against DNS rebinding: when the URL check returns the address it checked, the loader
    /// connects there and does not resolve the name again (`.invalid` never resolves), sending
    /// the name in `Host`; every redirect is checked and pinned the same way.
    @Test func aCheckedAddressIsConnectedToInsteadOfResolvingTheNameAgain() async throws {
        let checked = Counter()
        var configuration = HTTPDataLoader.Configuration.patient
        configuration.validateURL = { url in
            checked.increment()
            return url.host == "rebinding.invalid" ? "127.0.0.1" : nil
        }
        try await withHarness(loader: configuration) { harness in
            let port = harness.origin.port
            let data = try await harness.pipeline.data(
                for: ImageRequest(url: URL(string: "http://rebinding.invalid:\(port)/rocket.jpg")!))
            #expect(data.count == 112_525)
            #expect(harness.origin.requests.last?.headers["host"] == "rebinding.invalid:\(port)")
            #expect(checked.value == 1)
        }
    }

    @Test func refusedConnectionsAndUnsupportedSchemesAreTypedErrors() async throws {
        // AsyncHTTPClient retries a refused connection until its connect timeout.
        var configuration = HTTPDataLoader.Configuration.patient
        configuration.connectTimeout = .milliseconds(500)
        try await withHarness(loader: configuration) { harness in
            // Port 9 (discard): nothing listens there, and no test binds it (a port another test's
            // origin freed could be taken by the next one, which answers 404).
            await #expect {
                try await harness.pipeline.data(for: ImageRequest(url: URL(string: "http://127.0.0.1:9/x.jpg")!))
            } throws: { error in
                if case DataLoadingError.transport = error { return true }
                return false
            }
            await #expect(throws: DataLoadingError.unsupportedScheme("ftp")) {
                try await harness.pipeline.data(for: ImageRequest(url: URL(string: "ftp://example.com/x.jpg")!))
            }
        }
    }

    @Test func fileURLsLoadFromDisk() async throws {
        try await withHarness { harness in
            let image = try await harness.pipeline.image(
                for: ImageRequest(url: Fixtures.url("rocket.jpg"), thumbnail: .init(width: 20, height: 20)))
            #expect(image.width == 20)
            await #expect(throws: DataLoadingError.fileNotFound(Fixtures.url("nope.jpg").path)) {
                try await harness.pipeline.image(for: ImageRequest(url: Fixtures.url("nope.jpg")))
            }
        }
    }

    @Test func everyBrokenInputThroughTheOriginGivesATypedErrorNeverACrash() async throws {
        let broken = try BrokenImages.all()
        let origin = try await TestOrigin.start { request in
            let name = String(request.path.dropFirst())
            return TestOrigin.Response(body: broken.first { $0.name == name }?.data ?? Data())
        }
        try await withHarness(origin: origin) { harness in
            for (name, _) in broken {
                for thumbnail in [nil, ImageRequest.Thumbnail(width: 64, height: 64)] {
                    do {
                        let image = try await harness.pipeline.image(
                            for: ImageRequest(url: harness.origin.url(name), thumbnail: thumbnail))
                        #expect(image.pixels.count == image.width * image.height * image.pixelFormat.bytesPerPixel)
                    } catch is ImageDecodingError {
                    } catch {
                        Issue.record("\(name): untyped \(error)")
                    }
                }
            }
            // Failures are not cached: the bomb is refused again, not served from memory.
            let bomb = ImageRequest(url: harness.origin.url("bomb-header-100000x100000.png"))
            #expect(harness.pipeline.cachedImage(for: bomb) == nil)
        }
    }

    @Test(.enabled(if: Fixtures.corpusBad != nil))
    func everyBadCorpusFileThroughImageForRequestGivesATypedErrorOrAValidImage() async throws {
        let directory = try #require(Fixtures.corpusBad)
        let files = Fixtures.files(in: directory)
        #expect(files.count == 16)
        try await withHarness(origin: TestOrigin.serving(directory: directory)) { harness in
            for file in files {
                do {
                    let image = try await harness.pipeline.image(
                        for: ImageRequest(
                            url: harness.origin.url(file.lastPathComponent), thumbnail: .init(width: 96, height: 96)))
                    // At most the box: a source smaller than it is not enlarged.
                    #expect(
                        (1...96).contains(image.width) && (1...96).contains(image.height), "\(file.lastPathComponent)")
                } catch let error as ImageDecodingError {
                    #expect(!error.description.isEmpty)
                } catch {
                    Issue.record("\(file.lastPathComponent): untyped \(error)")
                }
            }
        }
    }
}

/// The real decoder, but its first decode fails with `failure` (an allocation failure cannot be
/// provoked on demand).
private struct FailingFirstDecoder: ImageDecoding {
    let base: any ImageDecoding
    let failure: ImageDecodingError
    let calls: Counter

    func decode(_ data: Data, recipe: ImageRecipe) throws -> Image {
        calls.increment()
        if calls.value == 1 { throw failure }
        return try base.decode(data, recipe: recipe)
    }
}
