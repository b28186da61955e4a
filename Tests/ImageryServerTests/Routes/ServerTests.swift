import Foundation
import Hummingbird
import HummingbirdTesting
import Imagery
import ImageryServer
import ImageryTestSupport
import ImageryVips
import Logging
import Testing

@Suite("Image proxy")
struct ServerTests {
    @Test func servesAThumbnailWithCacheHeaders() async throws {
        let time = stillTime()  // the fetch's own time would count in the source's age
        try await withServer(configure: { $0.time = time.source }) { client, origin in
            try await client.execute(uri: imageURI(origin, "rocket.jpg", "w=200&h=100"), method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "image/jpeg")
                #expect(response.headers[.contentLength] == String(response.body.readableBytes))
                // The origin states no expiry: the operator's floor (--minimum-freshness, an hour).
                #expect(response.headers[.cacheControl] == "public, max-age=3600")
                #expect(response.headers[.eTag]?.hasPrefix("\"") == true)
                #expect(response.headers[.vary] == "Accept")
                let image = try VipsImageDecoder().decode(response.data, thumbnail: nil)
                #expect((image.width, image.height) == (200, 100))
            }
        }
    }

    @Test(arguments: [
        ("w=120", 120, 80), ("h=80", 120, 80), ("w=100&h=100&fit=contain", 100, 100),
        ("w=100&h=100&fit=fill", 100, 100), ("w=100&h=100&fit=inside", 100, 67), ("w=100&h=50", 100, 50),
    ])
    func eachSizeParameterGivesTheRightDimensions(query: String, width: Int, height: Int) async throws {
        try await withServer { client, origin in
            try await client.execute(uri: imageURI(origin, "rocket.jpg", query), method: .get) { response in
                #expect(response.status == .ok)
                let image = try VipsImageDecoder().decode(response.data, thumbnail: nil)
                #expect(
                    abs(image.width - width) <= 1 && abs(image.height - height) <= 1, "\(image.width)x\(image.height)")
            }
        }
    }

    @Test func headAnswersTheHeadersOfAGetWithoutTheBody() async throws {
        try await withServer(.live) { client, origin in
            let uri = imageURI(origin, "rocket.jpg", "w=64&format=png")
            let get = try await client.execute(uri: uri, method: .get) { ($0.headers, $0.body.readableBytes) }
            try await client.execute(uri: uri, method: .head) { response in
                #expect(response.status == .ok)
                #expect(response.body.readableBytes == 0)
                #expect(response.headers[.eTag] == get.0[.eTag])
                #expect(response.headers[.contentType] == "image/png")
                #expect(response.headers[.contentLength] == String(get.1))
            }
        }
    }

    @Test func otherMethodsAre405WithAllowAndUnknownPaths404AsJSON() async throws {
        try await withServer(.live) { client, origin in
            for path in ["/health", "/metrics", "/"] {
                try await client.execute(uri: path, method: .head) { response in
                    #expect(response.status == .ok, "HEAD \(path)")
                    #expect(response.body.readableBytes == 0)
                }
            }
            for (path, allowed) in [
                ("/image?url=x", "GET, HEAD"), ("/health", "GET, HEAD"), ("/files/a.jpg", "GET, HEAD"),
            ] {
                try await client.execute(uri: path, method: .delete) { response in
                    #expect(response.status == .methodNotAllowed, "DELETE \(path)")
                    #expect(response.headers[.allow] == allowed)
                    #expect(response.headers[.cacheControl] == "no-store")
                    #expect(String(buffer: response.body).contains(#""error":"method_not_allowed""#))
                }
            }
            try await client.execute(uri: "/nothing/here", method: .get) { response in
                #expect(response.status == .notFound)
                #expect(String(buffer: response.body).contains(#""error":"not_found""#))
            }
        }
    }

    @Test func aWeightOfZeroRefusesAFormatAndACommaBeforeACombiningMarkStillSeparatesETags() async throws {
        try await withServer { client, origin in
            let uri = imageURI(origin, "rocket.jpg", "w=64")
            try await client.execute(uri: uri, method: .get, headers: [.accept: "image/webp;q=0, image/avif;q=0, */*"])
            { response in
                #expect(response.headers[.contentType] == "image/jpeg")
            }
            try await client.execute(uri: uri, method: .get, headers: [.accept: "IMAGE/WEBP; Q=0.5"]) { response in
                #expect(response.headers[.contentType] == "image/webp")
            }
            let tag = try #require(
                try await client.execute(uri: uri, method: .get, headers: [.accept: "image/webp"]) { $0.headers[.eTag] }
            )
            try await client.execute(
                uri: uri, method: .get, headers: [.accept: "image/webp", .ifNoneMatch: "\(tag),\u{353}\"x\""]
            ) { response in
                #expect(response.status == .notModified)
            }
        }
    }

    @Test func aMatchingIfNoneMatchGets304() async throws {
        try await withServer { client, origin in
            let uri = imageURI(origin, "rocket.jpg", "w=64&h=64&format=png")
            let etag = try await client.execute(uri: uri, method: .get) { $0.headers[.eTag] }
            let tag = try #require(etag)
            try await client.execute(uri: uri, method: .get, headers: [.ifNoneMatch: "\"other\", \(tag)"]) { response in
                #expect(response.status == .notModified)
                #expect(response.body.readableBytes == 0)
                #expect(response.headers[.eTag] == tag)
            }
            try await client.execute(uri: uri, method: .get, headers: [.ifNoneMatch: "\"other\""]) { response in
                #expect(response.status == .ok)
            }
        }
    }

    @Test func theFormatIsNegotiatedFromAcceptUnlessAsked() async throws {
        try await withServer { client, origin in
            // AVIF first (the fewest bytes at the same perceived quality), then WebP, then JPEG XL.
            for (accept, format) in [
                ("image/avif,image/webp,*/*", ImageFormat.avif), ("image/webp,image/jxl", .webp),
                ("image/jxl,*/*", .jxl),
            ] {
                try await client.execute(
                    uri: imageURI(origin, "rocket.jpg", "w=64"), method: .get, headers: [.accept: accept]
                ) { response in
                    #expect(response.headers[.contentType] == format.mimeType, "\(accept)")
                    #expect(response.headers[.vary] == "Accept")
                    #expect(ImageFormat(sniffing: response.data) == format, "\(accept)")
                }
            }
            try await client.execute(
                uri: imageURI(origin, "chelsea.gif", "w=64"), method: .get, headers: [.accept: "image/*"]
            ) { response in
                #expect(response.headers[.contentType] == "image/png")
            }
            try await client.execute(
                uri: imageURI(origin, "rocket.jpg", "w=64&format=png&q=50"), method: .get,
                headers: [.accept: "image/webp"]
            ) { response in
                #expect(response.headers[.contentType] == "image/png")
                #expect(response.headers[.vary] == nil)
                #expect(ImageFormat(sniffing: response.data) == .png)
            }
        }
    }

    @Test(arguments: [
        ("", "url is required"), ("url=ftp%3A%2F%2Fexample.com%2Fa.jpg", "http or https"),
        ("url=not%20a%20url", "http or https"),
        ("W", "w must be"), ("w=0", "w must be"), ("w=99999", "w must be"), ("h=abc", "h must be"),
        ("fit=squash", "fit must be"), ("format=svg", "format must be"), ("q=0", "q must be"), ("q=101", "q must be"),
    ])
    func badParametersAre400WithAMessage(query: String, message: String) async throws {
        try await withServer { client, origin in
            let uri: String =
                switch query {
                case "": "/image"
                case "W": imageURI(origin, "rocket.jpg", "w=-5")
                case let query where query.hasPrefix("url="): "/image?" + query
                default: imageURI(origin, "rocket.jpg", query)
                }
            try await client.execute(uri: uri, method: .get) { response in
                #expect(response.status == .badRequest)
                #expect(response.headers[.contentType] == "application/json; charset=utf-8")
                #expect(response.errorBody?.error == "bad_parameter")
                #expect(
                    response.errorBody?.message.contains(message) == true, "\(String(describing: response.errorBody))")
            }
        }
    }

    /// 404 and 5xx from the origin, and an origin that never answers: 504 at the origin timeout. The
    /// answered failures go to a server whose origin timeout is a hang guard (however slow the machine,
    /// they are not timeouts); the 504 to one with a 1-s timeout, from an origin that holds its answer
    /// until the test ends (only the timeout can end that request).
    @Test func originFailuresMapToGatewayStatuses() async throws {
        try await withServer { client, origin in
            try await client.execute(uri: imageURI(origin, "missing.jpg"), method: .get) { response in
                #expect(response.status == .notFound)
                #expect(response.errorBody?.error == "origin_not_found")
            }
            try await client.execute(uri: imageURI(origin, "rocket.jpg?status=500"), method: .get) { response in
                #expect(response.status == .badGateway)
                #expect(response.errorBody?.message.contains("500") == true)
            }
        }
        try await withServer(configure: { $0.origins.timeout = .seconds(1) }) { client, origin in
            try await client.execute(uri: imageURI(origin, "rocket.jpg?held=never"), method: .get) { response in
                #expect(response.status == .gatewayTimeout)
            }
        }
    }

    @Test func outOfMemoryIsA503WithRetryAfterNotACorruptSource() {
        let error = ServerError.from(
            ImageDecodingError.outOfMemory(reason: "vips__malloc: out of memory --- size == 2048MB"))
        #expect(error.status == .serviceUnavailable)
        #expect(error.retryAfter == 5)
        let response = error.response()
        #expect(response.headers[.retryAfter] == "5")
        #expect(!error.message.contains("vips"))  // no internals
        #expect(
            ServerError.from(ImageDecodingError.corrupt(format: .jpeg, reason: "x")).status == .unprocessableContent)
    }

    @Test func badImagesGet415Or422Or413AndNoInternals() async throws {
        let broken = try BrokenImages.all()
        let origin = try await TestOrigin.start { request in
            TestOrigin.Response(body: broken.first { "/" + $0.name == request.path }?.data ?? Data())
        }
        try await withServer(origin: origin) { client, origin in
            let expected: [(String, HTTPResponse.Status)] = [
                ("text-named-jpg", .unsupportedMediaType), ("truncated-header.jpg", .unprocessableContent),
                ("truncated-ihdr.png", .unprocessableContent), ("bomb-header-100000x100000.png", .contentTooLarge),
                ("empty", .unprocessableContent),
            ]
            for (name, status) in expected {
                try await client.execute(uri: imageURI(origin, name, "w=64&h=64"), method: .get) { response in
                    #expect(response.status == status, "\(name)")
                    let text = String(buffer: response.body)
                    #expect(
                        !text.contains("/work") && !text.contains("Sources/") && !text.contains("libvips"),
                        "\(name): \(text)")
                }
            }
        }
    }

    @Test func aSourceOverTheByteLimitIs413() async throws {
        try await withServer(configure: { $0.limits.maximumSourceBytes = 50_000 }) { client, origin in
            try await client.execute(uri: imageURI(origin, "rocket.jpg", "w=64"), method: .get) { response in
                #expect(response.status == .contentTooLarge)
                #expect(response.errorBody?.error == "source_too_large")
            }
        }
    }

    @Test func sixtyFourConcurrentIdenticalRequestsFetchTheOriginOnce() async throws {
        try await withServer { client, origin in
            let uri = imageURI(origin, "rocket.jpg?delay_ms=100", "w=96&h=96")
            try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for _ in 0..<64 { group.addTask { try await client.execute(uri: uri, method: .get) { $0.status } } }
                for try await status in group { #expect(status == .ok) }
            }
            #expect(origin.requestCount == 1)
        }
    }

    @Test func servesLiveOnAPortWithTheDiskCache() async throws {
        try await withTemporaryDirectory { directory in
            try await withServer(.live, configure: { $0.caching.directory = directory }) { client, origin in
                for _ in 0..<2 {
                    try await client.execute(
                        uri: imageURI(origin, "chelsea.png", "w=100&h=100&fit=cover"), method: .get
                    ) { response in
                        #expect(response.status == .ok)
                        #expect(response.headers[.contentType] == "image/png")
                    }
                }
                #expect(origin.requestCount == 1)
            }
        }
    }

    @Test func healthAnswers() async throws {
        try await withServer { client, _ in
            try await client.execute(uri: "/health", method: .get) { response in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body) == #"{"status":"ok"}"#)
            }
        }
    }
}

@Suite("Image proxy metrics")
struct ServerMetricsTests {
    @Test func metricsCountRequestsByStatusInPrometheusFormat() async throws {
        try await withTemporaryDirectory { directory in
            try await withServer(configure: { $0.caching.directory = directory }) { client, origin in
                try await client.execute(uri: imageURI(origin, "rocket.jpg", "w=32"), method: .get) {
                    #expect($0.status == .ok)
                }
                try await client.execute(uri: "/image", method: .get) { #expect($0.status == .badRequest) }
                try await client.execute(uri: "/metrics", method: .get) { response in
                    #expect(response.status == .ok)
                    let text = String(buffer: response.body)
                    #expect(text.contains(#"imagery_requests_total{route="/image",status="200"} 1"#), "\(text)")
                    #expect(text.contains(#"imagery_requests_total{route="/image",status="400"} 1"#))
                    #expect(text.contains("imagery_request_duration_seconds_bucket"))
                    #expect(text.contains("imagery_disk_cache_misses"))
                    #expect(text.contains("imagery_response_cache_entries 1"))
                }
            }
        }
    }

    /// Lookups per tier, origin fetch and decode durations, bytes: each request below
    /// takes a known path through the tiers, and the counters must say exactly that.
    @Test func metricsFollowEachRequestThroughTheCacheTiers() async throws {
        try await withTemporaryDirectory { directory in
            try await withServer(configure: { $0.caching.directory = directory }) { client, origin in
                var sent = 0
                // 1: nothing cached: every tier misses, one fetch, one decode.
                try await client.execute(uri: imageURI(origin, "rocket.jpg", "w=32"), method: .get) {
                    sent += $0.data.count
                }
                // 2: the same response again, from the response cache.
                try await client.execute(uri: imageURI(origin, "rocket.jpg", "w=32"), method: .get) {
                    sent += $0.data.count
                }
                // 3: a new size the kept base (rocket.jpg at 1/8) has pixels for: resized from it.
                try await client.execute(uri: imageURI(origin, "rocket.jpg", "w=48"), method: .get) {
                    sent += $0.data.count
                }
                // 4: a size the base is too small for: the original is in memory, one more decode.
                try await client.execute(uri: imageURI(origin, "rocket.jpg", "w=400"), method: .get) {
                    sent += $0.data.count
                }
                // 5: not an image: fetched, then the decode fails.
                try await client.execute(uri: imageURI(origin, "README.md", "w=48"), method: .get) {
                    #expect($0.status == .unsupportedMediaType)
                    sent += $0.data.count  // error bodies count as bytes sent too
                }
                let metrics = try await client.execute(uri: "/metrics", method: .get) {
                    Metric.parse(String(buffer: $0.body))
                }
                let lookups = { (tier: String, result: String) in
                    metrics[#"imagery_cache_lookups_total{tier="\#(tier)",result="\#(result)"}"#] ?? 0
                }
                #expect(lookups("response", "hit") == 1)
                #expect(lookups("response", "miss") == 4)
                #expect(lookups("memory_image", "miss") == 4)
                // No thumbnail variants on disk (the disk keeps final responses): never looked up.
                #expect(lookups("disk_variant", "miss") == 0)
                #expect(lookups("memory_base", "hit") == 1)
                #expect(lookups("memory_base", "miss") == 3)
                #expect(lookups("memory_data", "hit") == 1)
                #expect(lookups("memory_data", "miss") == 2)
                #expect(lookups("disk_data", "miss") == 2)
                #expect(metrics[#"imagery_origin_fetch_duration_seconds_count{result="ok"}"#] == 2)
                #expect(metrics[#"imagery_decode_duration_seconds_count{result="ok"}"#] == 2)
                #expect(metrics[#"imagery_decode_duration_seconds_count{result="error"}"#] == 1)
                #expect(metrics[#"imagery_decode_duration_seconds_count{result="derived"}"#] == 1)
                let originBytes = try Fixtures.data("rocket.jpg").count + Fixtures.data("README.md").count
                #expect(metrics["imagery_origin_bytes_total"] == Double(originBytes))
                #expect(metrics["imagery_response_bytes_total"] == Double(sent))
                #expect((metrics[#"imagery_origin_fetch_duration_seconds_sum{result="ok"}"#] ?? 0) > 0)
                #expect(metrics["imagery_origin_fetches_in_flight"] == 0)
            }
        }
    }
}

/// Prometheus text exposition, as `name{labels}` → value.
enum Metric {
    static func parse(_ text: String) -> [String: Double] {
        var values: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else {
                continue
            }
            values[String(line[..<space])] = value
        }
        return values
    }
}
