import Crypto
import Foundation
import Imagery
import ImageryDiskCache
import ImageryS3
import Logging

/// The tier shared by every instance: an S3 bucket holding originals and stored responses under the
/// keys the local disk cache uses, with the same metadata, so one ``HTTPCachePolicy`` judges both.
///
/// An object is named `PREFIX` + the SHA-256 of its cache key (hex: fixed length, any key); its
/// ``CacheMetadata`` travels as JSON in `x-amz-meta-imagery-metadata` (base64) and a checksum of the
/// bytes in `x-amz-meta-imagery-checksum`, checked on every read (a damaged object is a miss, and is
/// deleted). Writes run in the background, bounded in bytes held (past the bound they are dropped: it
/// is a cache). The store being down never fails a request: every failure is a miss, and after
/// ``failuresBeforePause`` failed operations in a row (each already retried by the client) the store
/// is not asked for ``pause``; then one request tries it again. Its requests would otherwise each wait
/// for a connect timeout. An outage is one log line when it begins (with the store's own error) and
/// one when the store answers again; ``check()`` tries the bucket once at start.
final class SharedStore: Sendable {
    let client: S3Client
    let bucket: String
    let prefix: String
    /// Bytes of writes in flight at most; default 64 MiB.
    let maximumPendingBytes: Int
    let failuresBeforePause = 2
    /// How long the store is not asked after failures in a row; default 5 s.
    let pause: Duration
    /// The clock the pause is measured on; default `TimeSource.system` (a test moves a `ManualTime`).
    private let time: TimeSource
    private let observer: ServerMetrics?
    private let logger: Logger?

    private struct State {
        var pendingBytes = 0
        var pendingWrites = 0
        var failuresInARow = 0
        var pausedUntil: ContinuousClock.Instant?
        /// Paused since the last success (the outage was logged).
        var inOutage = false
        var idleWaiters: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Locked(State())  // not Mutex: ThreadSanitizer cannot see its futex (Locked)

    init(
        client: S3Client, bucket: String, prefix: String, maximumPendingBytes: Int = 64 << 20, observer: ServerMetrics?,
        logger: Logger? = nil, pause: Duration = .seconds(5), time: TimeSource = .system
    ) {
        (self.client, self.bucket, self.prefix, self.maximumPendingBytes, self.observer) = (
            client, bucket, prefix, maximumPendingBytes, observer
        )
        (self.logger, self.pause, self.time) = (logger, pause, time)
    }

    /// The bucket and where it is, as log lines name them.
    var name: String { "bucket \(bucket) at \(client.configuration.endpoint.absoluteString)" }

    /// Looks a small object up, writes it, reads it back and deletes it, under the prefix: nil when
    /// all work, else what failed, with the store's own error (`HTTP 403 (SignatureDoesNotMatch)`,
    /// `HTTP 404 (NoSuchBucket)`, a refused connection). It is looked up first, as the tier's first
    /// requests are: some stores create a missing bucket on a write.
    func check() async -> String? {
        let key = prefix + "imagery-check"
        let data = Data("imagery \(UUID().uuidString)".utf8)
        var step = "lookup"
        do {
            _ = try await client.get(bucket: bucket, key: key)  // a GET: a HEAD's error has no body to name it
            step = "write"
            try await client.put(bucket: bucket, key: key, data: data)
            step = "read"
            let object = try await client.get(bucket: bucket, key: key)
            guard object?.data == data else {
                return "a test object written to the \(name) did not read back as written"
            }
            step = "delete"
            try await client.delete(bucket: bucket, key: key)
            return nil
        } catch {
            return "the \(name) cannot be used: \(error) (a test object's \(step))"
        }
    }

    /// The object name of a cache key.
    func objectKey(for key: String) -> String {
        prefix + hex(SHA256.hash(data: Data(key.utf8)))
    }

    /// The entry for `key` and the checksum of its bytes (checked), or `nil`: absent, damaged, or the store unreachable.
    func checkedEntry(for key: String) async -> (entry: CacheEntry, checksum: UInt64)? {
        guard isAvailable else {
            observer?.sharedStoreRequest("get", outcome: "skipped")
            return nil
        }
        let object: S3Client.Object?
        do {
            object = try await client.get(bucket: bucket, key: objectKey(for: key))
            succeeded()
        } catch {
            failed("get", error)
            return nil
        }
        guard let object, object.statusCode == 200 else {
            observer?.sharedStoreRequest("get", outcome: "miss")
            return nil
        }
        let userMetadata = object.metadata
        guard let metadata = userMetadata["imagery-metadata"].flatMap(Self.decodeMetadata),
            let stated = userMetadata["imagery-checksum"].flatMap({ UInt64($0, radix: 16) }),
            Checksum.of(object.data) == stated
        else {
            observer?.sharedStoreRequest("get", outcome: "damaged")
            let name = objectKey(for: key)
            Task { try? await client.delete(bucket: bucket, key: name) }
            return nil
        }
        observer?.sharedStoreRequest("get", outcome: "hit")
        return (CacheEntry(data: object.data, metadata: metadata), stated)
    }

    /// Stores `data` for `key` in the background (dropped when the writes in flight hold too many bytes).
    func store(_ data: Data, for key: String, metadata: CacheMetadata) {
        guard let encoded = Self.encodeMetadata(metadata), isAvailable else { return }
        let admitted = state.withLock { state -> Bool in
            guard state.pendingBytes + data.count <= maximumPendingBytes else { return false }
            state.pendingBytes += data.count
            state.pendingWrites += 1
            return true
        }
        guard admitted else {
            observer?.sharedStoreRequest("put", outcome: "dropped")
            return
        }
        let name = objectKey(for: key)
        let checksum = String(Checksum.of(data), radix: 16)
        Task {
            do {
                try await client.put(
                    bucket: bucket, key: name, data: data, contentType: metadata.contentType,
                    metadata: ["imagery-metadata": encoded, "imagery-checksum": checksum]
                )
                succeeded()
                observer?.sharedStoreRequest("put", outcome: "stored")
            } catch {
                failed("put", error)
            }
            finished(bytes: data.count)
        }
    }

    /// Replaces the metadata of `key`'s object (after a revalidation), in the background.
    func updateMetadata(_ metadata: CacheMetadata, for key: String) {
        guard let encoded = Self.encodeMetadata(metadata), isAvailable else { return }
        state.withLock { $0.pendingWrites += 1 }
        let name = objectKey(for: key)
        Task {
            do {
                // The checksum stays: the bytes do. The object's current one is read back first.
                guard let head = try await client.head(bucket: bucket, key: name),
                    let checksum = head.metadata["imagery-checksum"]
                else {
                    finished(bytes: 0)
                    return
                }
                try await client.replaceMetadata(
                    bucket: bucket, key: name, contentType: metadata.contentType,
                    metadata: ["imagery-metadata": encoded, "imagery-checksum": checksum]
                )
                succeeded()
            } catch {
                failed("update", error)
            }
            finished(bytes: 0)
        }
    }

    /// Removes `key`'s object, in the background.
    func remove(for key: String) {
        guard isAvailable else { return }
        state.withLock { $0.pendingWrites += 1 }
        let name = objectKey(for: key)
        Task {
            do { try await client.delete(bucket: bucket, key: name) } catch { failed("delete", error) }
            finished(bytes: 0)
        }
    }

    /// Returns when no write is in flight.
    func waitUntilIdle() async {
        await withCheckedContinuation { continuation in
            let idle = state.withLock { state -> Bool in
                if state.pendingWrites == 0 { return true }
                state.idleWaiters.append(continuation)
                return false
            }
            if idle { continuation.resume() }
        }
    }

    /// Writes in flight and the bytes they hold.
    var pending: (writes: Int, bytes: Int) { state.withLock { ($0.pendingWrites, $0.pendingBytes) } }

    // MARK: - Failures

    /// Whether the store is asked at all (not within a pause after failures in a row).
    private var isAvailable: Bool {
        state.withLock { state in
            guard let until = state.pausedUntil else { return true }
            if time.instant() < until { return false }
            state.pausedUntil = nil  // one request tries again; its outcome decides
            return true
        }
    }

    private func succeeded() {
        let recovered = state.withLock { state -> Bool in
            state.failuresInARow = 0
            defer { state.inOutage = false }
            return state.inOutage
        }
        if recovered {
            logger?.notice("the shared tier (\(name)) answers again", metadata: ["shared_store": "recovered"])
        }
    }

    private func failed(_ operation: String, _ error: any Error) {
        guard !(error is CancellationError) else { return }  // the request went, not the store
        observer?.sharedStoreRequest(operation, outcome: "failed")
        let paused = state.withLock { state -> Bool in
            state.failuresInARow += 1
            guard state.failuresInARow >= failuresBeforePause else { return false }
            state.pausedUntil = time.instant() + pause
            defer { state.inOutage = true }
            return !state.inOutage
        }
        if paused {
            logger?.error(
                "the shared tier (\(name)) is paused: \(error) (a \(operation), \(failuresBeforePause) failures in a row); the local disk and the origin answer meanwhile, and the store is asked again every \(pause)",
                metadata: ["shared_store": "paused"]
            )
        }
    }

    private func finished(bytes: Int) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.pendingBytes -= bytes
            state.pendingWrites -= 1
            guard state.pendingWrites == 0 else { return [] }
            defer { state.idleWaiters.removeAll() }
            return state.idleWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    // MARK: - Metadata in a header

    /// S3 allows 2 KB of user metadata in all; a source whose headers make more is not shared.
    static let metadataLimit = 1900

    static func encodeMetadata(_ metadata: CacheMetadata) -> String? {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .millisecondsSince1970
        guard let json = try? encoder.encode(metadata) else { return nil }
        let text = json.base64EncodedString()
        return text.utf8.count <= metadataLimit ? text : nil
    }

    static func decodeMetadata(_ text: String) -> CacheMetadata? {
        guard let json = Data(base64Encoded: text) else { return nil }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        return try? decoder.decode(CacheMetadata.self, from: json)
    }
}
