import Foundation
import Hummingbird
import HummingbirdTesting
import Imagery
import ImageryS3
import ImageryTestSupport
import Testing

@testable import ImageryServer

/// The tier every instance shares (a real S3 store: SeaweedFS on 127.0.0.1), and `s3://` sources.
@Suite(
    "Shared S3 tier and S3 sources",
    .enabled(if: SeaweedFS.isAvailable, "needs weed (scripts/install-dependencies installs it)"))
struct SharedTierTests {
    /// The run's bucket (one for every test: a store makes room for each new bucket on its first
    /// write), a credentials file for it, and a client. Each test keeps to keys and prefixes of its own.
    static func withBucket(_ body: (SeaweedFS, String, URL, S3Client) async throws -> Void) async throws {
        let store = try await SeaweedFS.shared()
        let credentials = S3Credentials(accessKeyID: store.accessKeyID, secretAccessKey: store.secretAccessKey)
        // The test's own client waits as long as the hang guard (the store runs niced with the tests).
        var configuration = S3Client.Configuration(endpoint: store.endpoint, credentials: credentials)
        (configuration.timeout, configuration.writeTimeout, configuration.connectTimeout) = (
            hangGuard, hangGuard, hangGuard
        )
        let client = try S3Client(configuration: configuration)
        let bucket = "imagery-tests"
        do {
            try await client.createBucket(bucket)
            // SeaweedFS lets writes into a new bucket a moment after it says it made it (later on a loaded
            // machine: writes then fail with NoSuchBucket): the first write it takes is awaited.
            try await waitUntil("the new bucket takes a write") {
                do {
                    try await client.put(bucket: bucket, key: "probe/\(UUID().uuidString)", data: Data("probe".utf8))
                    return true
                } catch let error as S3Error {
                    guard case .status(404, _) = error else { throw error }
                    return false
                }
            }
            try await withTemporaryDirectory { directory in
                let file = directory.appendingPathComponent("credentials")
                try
                    "[default]\naws_access_key_id = \(store.accessKeyID)\naws_secret_access_key = \(store.secretAccessKey)\n"
                    .write(to: file, atomically: true, encoding: .utf8)
                try await body(store, bucket, file, client)
            }
        } catch {
            try? await client.shutdown()
            throw error
        }
        try await client.shutdown()
    }

    /// Waits until the server's shared store has stored `count` objects (its writes run in the background).
    static func waitForSharedWrites(_ client: any TestClientProtocol, count: Double) async throws {
        try await waitUntil("the shared store has stored \(count) objects") {
            (try await metrics(client)[#"imagery_shared_store_requests_total{operation="put",outcome="stored"}"#] ?? 0)
                >= count
        }
    }

    @Test func aSecondInstanceAnswersFromTheSharedTierWithoutTheOriginOrADecode() async throws {
        try await Self.withBucket { store, bucket, credentials, _ in
            let prefix = "second-instance-\(UUID().uuidString)/"
            try await withOriginAndDirectory { origin, directory in
                let configure = { (instance: String) in
                    { (configuration: inout ServerConfiguration) in
                        configuration.useSharedTier(
                            store.endpoint, bucket: bucket, credentials: credentials,
                            cache: directory.appendingPathComponent(instance))
                        configuration.s3.prefix = prefix
                    }
                }
                let uri = imageURI(origin, "rocket.jpg?cc=max-age%3D600", "w=200")
                let first = Box<(Data, String)>()
                try await serve(origin: origin, configure: configure("a")) { client in
                    let response = try await get(client, uri)
                    #expect(response.status == .ok)
                    first.value = (response.body, try #require(response.headers[.eTag]))
                    try await Self.waitForSharedWrites(client, count: 2)  // the original and the response
                }
                #expect(origin.requestCount == 1)
                let (body, etag) = try #require(first.value)
                // Another instance, its own disk empty: the stored response comes from S3 as it was sent.
                try await serve(origin: origin, configure: configure("b")) { client in
                    let again = try await get(client, uri)
                    #expect(again.status == .ok)
                    #expect(again.body == body)
                    #expect(again.headers[.eTag] == etag)
                    #expect(again.headers[.cacheControl]?.contains("max-age=") == true)
                    var counters = try await metrics(client)
                    #expect(lookups(counters, "shared", "hit") == 1)
                    #expect(counters[#"imagery_decode_duration_seconds_count{result="ok"}"#] ?? 0 == 0)
                    // A new size: the original from S3, a decode, no origin fetch.
                    let other = try await get(client, imageURI(origin, "rocket.jpg?cc=max-age%3D600", "w=150"))
                    #expect(other.status == .ok)
                    counters = try await metrics(client)
                    #expect(lookups(counters, "shared", "hit") == 2)
                    #expect(counters[#"imagery_decode_duration_seconds_count{result="ok"}"#] ?? 0 == 1)
                    #expect(counters[#"imagery_origin_fetch_duration_seconds_count{result="ok"}"#] ?? 0 == 0)
                }
                #expect(origin.requestCount == 1, "one origin fetch for both instances")
            }
        }
    }

    /// What a `no-store` source gives is never written to the shared tier: the max-age source's two
    /// objects are, and another instance (its own disk empty) must fetch the no-store source again.
    @Test func noStoreSourcesAreNotShared() async throws {
        try await Self.withBucket { store, bucket, credentials, _ in
            try await withOriginAndDirectory { origin, directory in
                let prefix = "no-store-\(UUID().uuidString)/"
                let configure = { (instance: String) in
                    { (configuration: inout ServerConfiguration) in
                        configuration.useSharedTier(
                            store.endpoint, bucket: bucket, credentials: credentials,
                            cache: directory.appendingPathComponent(instance))
                        configuration.s3.prefix = prefix
                    }
                }
                try await serve(origin: origin, configure: configure("a")) { client in
                    #expect(try await get(client, imageURI(origin, "rocket.jpg?cc=no-store", "w=90")).status == .ok)
                    #expect(try await get(client, imageURI(origin, "rocket.jpg?cc=max-age%3D60", "w=91")).status == .ok)
                    try await Self.waitForSharedWrites(client, count: 2)
                    let stored = try await metrics(client)[
                        #"imagery_shared_store_requests_total{operation="put",outcome="stored"}"#]
                    #expect(stored == 2, "the max-age source's original and response; nothing of the no-store one")
                }
                // The first instance has stopped, its shared writes done: a second one finds nothing of the
                // no-store source in the shared tier.
                let noStore = { origin.requests.filter { $0.query["cc"] == "no-store" }.count }
                #expect(noStore() == 1)
                try await serve(origin: origin, configure: configure("b")) { client in
                    let again = try await get(client, imageURI(origin, "rocket.jpg?cc=no-store", "w=90"))
                    #expect(again.status == .ok)
                }
                #expect(noStore() == 2, "fetched again: neither its original nor its response was shared")
            }
        }
    }

    @Test func aStoreThatIsDownDegradesToTheOrigin() async throws {
        try await withTemporaryDirectory { directory in
            let credentials = directory.appendingPathComponent("credentials")
            try "[default]\naws_access_key_id = a\naws_secret_access_key = b\n".write(
                to: credentials, atomically: true, encoding: .utf8)
            let log = CapturedLog()
            try await withOriginAndDirectory { origin, cache in
                try await serve(
                    origin: origin, logger: log.logger,
                    configure: {
                        // Nothing listens on port 9 (discard): every connection is refused.
                        $0.useSharedTier(
                            URL(string: "http://127.0.0.1:9")!, bucket: "shared", credentials: credentials, cache: cache
                        )
                        // What is tested is the fall back to the origin, not admission: a machine loaded by the
                        // rest of the suite must not turn the refused connects' waits into a 503.
                        $0.limits.admissionTimeout = .seconds(60)
                    }
                ) { client in
                    for width in 100..<106 {
                        let response = try await get(
                            client, imageURI(origin, "rocket.jpg?cc=max-age%3D600", "w=\(width)"))
                        #expect(
                            response.status == .ok,
                            "w=\(width): \(String(decoding: response.body, as: UTF8.self).prefix(200))")
                    }
                    let counters = try await metrics(client)
                    #expect(
                        (counters[#"imagery_shared_store_requests_total{operation="get",outcome="failed"}"#] ?? 0) >= 1)
                    #expect(
                        (counters[#"imagery_shared_store_requests_total{operation="get",outcome="skipped"}"#] ?? 0)
                            >= 1, "paused after failures in a row")
                    let check = try await log.waitForLines(withMetadata: "shared_store", "check_failed")
                    #expect(
                        check.count == 1 && check.first?.contains("bucket shared at http://127.0.0.1:9") == true,
                        "\(check)")
                    #expect(log.lines(withMetadata: "shared_store", "paused").count == 1)
                }
                #expect(origin.requestCount == 1, "the original on local disk served the other sizes")
            }
        }
    }

    /// A wrong secret: the check at start logs the store's own refusal with the bucket and
    /// endpoint; requests still answer, and the pause is one line, not one per request.
    @Test func aWrongSecretIsSaidAtStartAndOnceWhenTheTierPauses() async throws {
        try await Self.withBucket { store, bucket, _, _ in
            try await withTemporaryDirectory { directory in
                let credentials = directory.appendingPathComponent("credentials")
                try "[default]\naws_access_key_id = \(store.accessKeyID)\naws_secret_access_key = wrong\n".write(
                    to: credentials, atomically: true, encoding: .utf8)
                let log = CapturedLog()
                try await withOriginAndDirectory { origin, cache in
                    try await serve(
                        origin: origin, logger: log.logger,
                        configure: {
                            $0.useSharedTier(store.endpoint, bucket: bucket, credentials: credentials, cache: cache)
                            $0.limits.admissionTimeout = .seconds(60)
                        }
                    ) { client in
                        let check = try await log.waitForLines(withMetadata: "shared_store", "check_failed")
                        #expect(check.count == 1, "\(check)")
                        let line = check.first ?? ""
                        #expect(line.contains("403") && line.contains("SignatureDoesNotMatch"), "\(line)")
                        #expect(
                            line.contains("bucket \(bucket)") && line.contains(store.endpoint.absoluteString), "\(line)"
                        )
                        for width in 100..<110 {
                            let response = try await get(
                                client, imageURI(origin, "rocket.jpg?cc=max-age%3D600", "w=\(width)"))
                            #expect(response.status == .ok)
                        }
                        let paused = log.lines(withMetadata: "shared_store", "paused")
                        #expect(paused.count == 1, "\(paused)")
                        #expect(paused.first?.contains("SignatureDoesNotMatch") == true)
                    }
                }
            }
        }
    }

    /// A bucket that does not exist: said at start (NoSuchBucket); once it is created, the tier
    /// answers again and says so once.
    @Test func aMissingBucketIsSaidAndItsCreationEndsThePause() async throws {
        try await Self.withBucket { store, _, credentials, s3 in
            let bucket = "imagery-missing-\(UInt32.random(in: 0...UInt32.max))"
            let log = CapturedLog()
            try await withOriginAndDirectory { origin, cache in
                try await serve(
                    origin: origin, logger: log.logger,
                    configure: {
                        $0.useSharedTier(store.endpoint, bucket: bucket, credentials: credentials, cache: cache)
                        $0.limits.admissionTimeout = .seconds(60)
                    }
                ) { client in
                    let check = try await log.waitForLines(withMetadata: "shared_store", "check_failed")
                    #expect(check.first?.contains("NoSuchBucket") == true, "\(check)")
                    for width in 100..<104 {
                        #expect(
                            try await get(client, imageURI(origin, "rocket.jpg?cc=max-age%3D600", "w=\(width)")).status
                                == .ok)
                    }
                    #expect(log.lines(withMetadata: "shared_store", "paused").count == 1)
                    try await s3.createBucket(bucket)
                    // Each new size asks the tier, once its pause (5 s, the server's) has passed: the
                    // end of the pause is waited for as that event, by asking until it happens.
                    let width = Counter()
                    try await waitUntil("the tier answers again", every: .milliseconds(200)) {
                        width.increment()
                        let response = try await get(
                            client, imageURI(origin, "rocket.jpg?cc=max-age%3D600", "w=\(120 + width.value)"))
                        #expect(response.status == .ok)
                        return !log.lines(withMetadata: "shared_store", "recovered").isEmpty
                    }
                    let recovered = log.lines(withMetadata: "shared_store", "recovered")
                    #expect(recovered.count == 1, "\(recovered)")
                }
            }
        }
    }

    @Test func aDamagedSharedObjectIsAMissAndIsDeleted() async throws {
        try await Self.withBucket { store, bucket, _, client in
            let shared = SharedStore(
                client: client, bucket: bucket, prefix: "damaged-\(UUID().uuidString)/", observer: nil)
            let data = try Fixtures.data("chelsea.webp")
            shared.store(data, for: "original:x", metadata: CacheMetadata(contentType: "image/webp"))
            await shared.waitUntilIdle()
            #expect(await shared.checkedEntry(for: "original:x")?.entry.data == data)
            // The same metadata over other bytes: the checksum no longer matches.
            let name = shared.objectKey(for: "original:x")
            let head = try #require(try await client.head(bucket: bucket, key: name))
            var damaged = data
            damaged[damaged.count / 2] ^= 0xFF
            try await client.put(bucket: bucket, key: name, data: damaged, metadata: head.metadata)
            #expect(await shared.checkedEntry(for: "original:x") == nil)
            try await waitUntil("the damaged object is deleted (in the background)") {
                try await client.head(bucket: bucket, key: name) == nil
            }
        }
    }

    /// Many writes and reads at once, from many tasks: every write lands or is counted as dropped, the
    /// bytes in flight return to zero, and what was stored reads back whole.
    @Test func concurrentWritesAndReadsKeepTheCountsRight() async throws {
        try await Self.withBucket { _, bucket, _, client in
            let shared = SharedStore(
                client: client, bucket: bucket, prefix: "stress-\(UUID().uuidString)/", maximumPendingBytes: 256 << 10,
                observer: nil
            )
            let data = try Fixtures.data("chelsea.webp")  // ~20 KB: about 12 fit in the bound at once
            await withTaskGroup(of: Void.self) { group in
                for index in 0..<200 {
                    group.addTask {
                        shared.store(
                            data + Data([UInt8(index % 256)]), for: "k\(index % 50)",
                            metadata: CacheMetadata(contentType: "image/webp"))
                        _ = await shared.checkedEntry(for: "k\((index + 25) % 50)")
                    }
                }
            }
            await shared.waitUntilIdle()
            #expect(shared.pending == (0, 0))
            var found = 0
            for index in 0..<50 {
                guard let entry = await shared.checkedEntry(for: "k\(index)")?.entry else { continue }
                found += 1
                #expect(
                    entry.data.count == data.count + 1 && entry.data.prefix(data.count) == data, "whole, never torn")
            }
            #expect(found > 0)
        }
    }

    @Test func s3SourcesFromListedBucketsOnly() async throws {
        try await Self.withBucket { store, bucket, credentials, client in
            let key = "sources-\(UUID().uuidString)/chelsea.png"
            try await client.put(
                bucket: bucket, key: key, data: try Fixtures.data("chelsea.png"), contentType: "image/png")
            try await withServer(configure: {
                ($0.s3.endpoint, $0.s3.credentialsFile, $0.s3.sourceBuckets) = (store.endpoint, credentials, [bucket])
            }) { client, _ in
                let image = try await get(client, "/image?url=s3://\(bucket)/\(key)&w=100&format=png")
                #expect(image.status == .ok)
                #expect(ImageFormat(sniffing: image.body) == .png)
                #expect(try await get(client, "/image?url=s3://\(bucket)/cats/missing.png&w=100").status == .notFound)
                let other = try await get(client, "/image?url=s3://not-\(bucket)/\(key)&w=100")
                #expect(other.status == .forbidden)
            }
            // A server with no S3 endpoint reads no s3:// source.
            try await withServer { client, _ in
                let response = try await get(client, "/image?url=s3://\(bucket)/\(key)&w=100")
                #expect(response.status == .forbidden)
            }
        }
    }
}

/// The shared store's pause after failures in a row, on time moved by hand: an S3 endpoint that
/// answers 503 (or, once mended, 404), counting what it is asked.
@Suite("Shared store pause")
struct SharedStorePauseTests {
    @Test func failuresInARowPauseTheStoreUntilThePauseHasPassed() async throws {
        let failing = Flag()
        failing.set()
        let origin = try await TestOrigin.start { _ in
            failing.isSet
                ? TestOrigin.Response(status: 503, body: Data("<Error><Code>SlowDown</Code></Error>".utf8))
                : TestOrigin.Response(status: 404, body: Data("<Error><Code>NoSuchKey</Code></Error>".utf8))
        }
        var configuration = S3Client.Configuration(
            endpoint: URL(string: "http://127.0.0.1:\(origin.port)")!,
            credentials: S3Credentials(accessKeyID: "a", secretAccessKey: "b")
        )
        configuration.maximumAttempts = 1
        (configuration.timeout, configuration.writeTimeout, configuration.connectTimeout) = (
            hangGuard, hangGuard, hangGuard
        )
        let client = try S3Client(configuration: configuration)
        let time = ManualTime()
        let log = CapturedLog()
        let store = SharedStore(
            client: client, bucket: "shared", prefix: "pause/", observer: nil, logger: log.logger, pause: .seconds(5),
            time: time.source
        )
        let paused = { log.lines(withMetadata: "shared_store", "paused").count }
        #expect(await store.checkedEntry(for: "a") == nil)
        #expect(paused() == 0, "one failure is not an outage")
        #expect(await store.checkedEntry(for: "a") == nil)
        #expect(origin.requestCount == 2)
        #expect(paused() == 1)
        // Paused: neither lookups nor writes ask it.
        time.advance(by: .seconds(4))
        #expect(await store.checkedEntry(for: "a") == nil)
        store.store(Data([1]), for: "b", metadata: CacheMetadata())
        await store.waitUntilIdle()
        #expect(origin.requestCount == 2)
        // The pause over: one lookup tries again; it fails: paused again, not said again.
        time.advance(by: .seconds(1))
        #expect(await store.checkedEntry(for: "a") == nil)
        #expect(origin.requestCount == 3)
        #expect(await store.checkedEntry(for: "a") == nil)
        #expect(origin.requestCount == 3)
        #expect(paused() == 1)
        // Mended: after the pause, the lookup that tries is answered (a miss), and that is said once.
        failing.set(false)
        time.advance(by: .seconds(5))
        #expect(await store.checkedEntry(for: "a") == nil)
        #expect(origin.requestCount == 4)
        #expect(log.lines(withMetadata: "shared_store", "recovered").count == 1)
        #expect(await store.checkedEntry(for: "a") == nil)
        #expect(origin.requestCount == 5, "asked again at once: no longer paused")
        try await client.shutdown()
        try await origin.shutdown()
    }
}

extension ServerConfiguration {
    /// Caches in `cache` and shares through `bucket` of the S3 store at `endpoint`, read with `credentials`.
    fileprivate mutating func useSharedTier(_ endpoint: URL, bucket: String, credentials: URL, cache: URL) {
        caching.directory = cache
        (s3.endpoint, s3.bucket, s3.credentialsFile) = (endpoint, bucket, credentials)
    }
}
