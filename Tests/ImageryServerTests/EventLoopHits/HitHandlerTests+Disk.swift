import Foundation
import Glibc
import Imagery
import NIOCore
import Testing

@testable import ImageryServer

/// Hits on result storage's disk (a cache directory of the test's own): a small body read in and
/// written with its head, a large one sent from its file, never a file cut short.
extension HitHandlerTests {
    static let diskText = "url=http%3A%2F%2Forigin%2Fdisk.jpg&w=640"

    /// Runs `body` with a response of `size` bytes on disk only (memory holds nothing for its text).
    static func withDiskHit(
        size: Int, _ body: (StoredHitsFixture, [UInt8], URL) throws -> Void
    ) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "hit-handler-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let fixture = try StoredHitsFixture { $0.caching.directory = directory }
        let bytes = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) }
        let response = StoredResponse(
            data: Data(bytes), contentType: "image/webp", source: CacheMetadata(contentType: "image/webp"),
            freshUntil: nil,
            policy: fixture.service.cachePolicy
        )
        let diskKey = "response:hit-handler-test|webp"
        await fixture.service.responses.keep(response, memoryKey: "written-with", diskKey: diskKey)
        await fixture.service.diskCache?.flush()
        fixture.service.responses.remember(
            ResponseStore.requestKey(rawQuery: diskText, accept: nil),
            as: .init(memoryKey: "not-in-memory", diskKey: diskKey, negotiated: false)
        )
        do {
            try body(fixture, bytes, directory)
        } catch {
            try await fixture.shutdown()
            throw error
        }
        try await fixture.shutdown()
    }

    /// The files of `size` bytes under `directory` (the disk cache's entry files).
    static func files(in directory: URL, size: Int) -> [URL] {
        let all =
            FileManager.default.enumerator(at: directory, includingPropertiesForKeys: [.fileSizeKey])?.compactMap {
                $0 as? URL
            } ?? []
        return all.filter { (try? $0.resourceValues(forKeys: [.fileSizeKey]).fileSize) == size }
    }

    static let cork = ChannelOptions.Types.SocketOption(
        level: SocketOptionLevel(IPPROTO_TCP), name: SocketOptionName(TCP_CORK))

    @Test func aSmallBodyOnDiskIsWrittenWithItsHeadInOneWrite() async throws {
        try await Self.withDiskHit(size: 5000) { fixture, bytes, _ in
            let connection = try HitChannel(fixture)
            defer { connection.finish() }
            try connection.send(Self.request("/image?" + Self.diskText))
            #expect(connection.wire.written.count == 1)
            let response = try #require(connection.wire.responses().first)
            #expect(response.statusLine == "HTTP/1.1 200 OK" && response.body == bytes)
            #expect(response.field("content-type") == "image/webp" && response.field("content-length") == "5000")
            #expect(
                fixture.metrics.exposition(of: fixture.service).contains(
                    #"imagery_cache_lookups_total{tier="response_disk",result="hit"} 1"#))
        }
    }

    /// A response answered from disk twice within a minute is hot: memory keeps it from then on.
    @Test func aBodyAnsweredTwiceFromDiskIsKeptInMemory() async throws {
        try await Self.withDiskHit(size: 5000) { fixture, bytes, _ in
            let connection = try HitChannel(fixture)
            defer { connection.finish() }
            let request = Self.request("/image?" + Self.diskText)
            try connection.send(request)
            #expect(fixture.service.responses.inMemory("not-in-memory") == nil)
            try connection.send(request)
            #expect(
                fixture.service.responses.inMemory("not-in-memory")?.body.readableBytesView.elementsEqual(bytes) == true
            )
            try connection.send(request)
            // Memory's now: its head and its body in two writes.
            #expect(connection.wire.written.count == 1 + 1 + 2)
            #expect(connection.wire.responses().map(\.body) == [bytes, bytes, bytes])
        }
    }

    /// A body past 64 KiB goes from its file (`sendfile`) after its head, corked so they leave in full
    /// frames, uncorked when the read's writes are out; the descriptor is closed once written.
    @Test func aLargeBodyIsSentFromItsFile() async throws {
        try await Self.withDiskHit(size: HitHandler.largestReadBody + 1) { fixture, _, _ in
            let connection = try HitChannel(fixture)
            defer { connection.finish() }
            try connection.send(Self.request("/image?" + Self.diskText))
            try #require(connection.wire.written.count == 2)
            guard case .bytes(let head) = connection.wire.written[0] else {
                Issue.record("no head first: \(connection.wire.written[0])")
                return
            }
            var headBytes = head[...]
            let response = try #require(WrittenResponse.parse(&headBytes, head: true))
            #expect(response.field("content-length") == String(HitHandler.largestReadBody + 1) && headBytes.isEmpty)
            #expect(connection.wire.written[1] == .file(length: HitHandler.largestReadBody + 1))
            #expect(connection.wire.files.allSatisfy { !$0.fileHandle.isOpen })
            #expect(try connection.channel.syncOptions?.getOption(Self.cork) == 0)
        }
    }

    /// A file cut short after it was stored is never sent short: the request is passed on.
    @Test(arguments: [5000, HitHandler.largestReadBody + 1])
    func aFileCutShortIsNotSent(size: Int) async throws {
        try await Self.withDiskHit(size: size) { fixture, bytes, directory in
            let connection = try HitChannel(fixture)
            defer { connection.finish() }
            let request = Self.request("/image?" + Self.diskText)
            try connection.send(request)  // the file opened (and kept open by the cache)
            #expect(connection.wire.written.count == (size > HitHandler.largestReadBody ? 2 : 1))
            let files = Self.files(in: directory, size: size)
            try #require(files.count == 1)
            #expect(truncate(files[0].path, off_t(size / 2)) == 0)
            let before = connection.wire.written.count
            try connection.send(request)
            #expect(connection.wire.written.count == before, "nothing written")
            #expect(connection.route.requests == ["GET /image?\(Self.diskText)"])
            #expect(connection.wire.responses().map(\.body) == [bytes] || size > HitHandler.largestReadBody)
        }
    }
}
