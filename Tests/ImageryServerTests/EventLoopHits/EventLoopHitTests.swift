import Foundation
import Glibc
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ImageryTestSupport
import Synchronization
import Testing

import struct HummingbirdCore.URI

@testable import ImageryServer

/// Hits answered on the event loop (`HitHandler`), through raw connections: pipelined hits and
/// misses in order, the very answers the router gives (200, 304, `HEAD`, imgproxy's headers), a client
/// that leaves mid-answer, an expired imgproxy URL.
@Suite struct EventLoopHitTests {
    /// Pipelined on one connection: hits behind a miss and an error wait their turn; every answer
    /// comes back in the order asked.
    @Test func pipelinedHitsAndMissesKeepTheirOrder() async throws {
        try await withServer(.live, configure: { $0.listener.answersHitsOnEventLoop = true }) { client, origin in
            let hit = imageURI(origin, "rocket.jpg", "w=64")
            let first = try await get(client, hit)
            #expect(first.status == .ok)
            let etag = try #require(first.headers[.eTag])
            let connection = try RawConnection(port: try #require(client.port))
            let miss = imageURI(origin, "chelsea.png", "w=48&format=png")
            let requests: [(method: String, target: String)] = [
                ("GET", hit), ("GET", miss), ("GET", hit), ("GET", "/nothing/here"), ("HEAD", hit), ("GET", hit),
            ]
            try connection.send(
                requests.map { "\($0.method) \($0.target) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" }.joined())
            let answers = try await connection.receive(responsesTo: requests.map(\.method))
            try #require(answers.count == requests.count, "\(answers.map(\.status))")
            #expect(answers.map(\.status) == [200, 200, 200, 404, 200, 200])
            #expect(answers.map { $0.headers["etag"] } == [etag, answers[1].headers["etag"], etag, nil, etag, etag])
            #expect(answers[1].headers["content-type"] == "image/png" && answers[1].headers["etag"] != etag)
            #expect(answers[4].body.isEmpty && answers[4].headers["content-length"] == String(first.body.count))
            #expect(answers[0].body == first.body && answers[5].body == first.body)
            // The first hit went by the event loop; the rest had arrived behind the miss, so the router
            // answered them in turn. Once all is answered, the event loop answers again.
            #expect(try await metrics(client)["imagery_event_loop_hits_total"] == 1)
            try connection.send("GET \(hit) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            let later = try await connection.receive(responsesTo: ["GET"])
            #expect(later.first?.headers["etag"] == etag)
            #expect(try await metrics(client)["imagery_event_loop_hits_total"] == 2)
        }
    }

    /// The same requests through both paths (one server answers hits on the event loop, one does not):
    /// the same status, fields (but `Date`, `Age` and the seconds of `max-age`) and bodies. Time stands
    /// still (the imgproxy URL's expiry never comes, `max_age(120)` is 120 exactly).
    @Test func theEventLoopAnswersAsTheRouterDoes() async throws {
        let origin = try await TestOrigin.serving(directory: Fixtures.directory)
        let transcripts = Mutex<[[RawResponse]]>([])
        let time = stillTime()
        for onLoop in [true, false] {
            let configure = { (configuration: inout ServerConfiguration) in
                (configuration.listener.answersHitsOnEventLoop, configuration.time) = (onLoop, time.source)
            }
            try await serve(.live, origin: origin, configure: configure) { client in
                let native = imageURI(origin, "rocket.jpg", "w=64")
                let thumbor =
                    "/unsafe/64x0/filters:max_age(120)/\(origin.url("rocket.jpg").absoluteString.dropFirst(7))"
                let expiry = Int(time.date.timeIntervalSince1970) + 600
                let imgproxy = "/_/w:64/fn:hello/att:1/exp:\(expiry)/plain/\(origin.url("rocket.jpg").absoluteString)"
                for target in [native, thumbor, imgproxy] { _ = try await get(client, target) }
                let etag = try #require(try await get(client, native).headers[.eTag])
                let requests: [(method: String, target: String, fields: String)] = [
                    ("GET", native, "Accept: image/webp,*/*\r\n"), ("GET", native, ""), ("HEAD", native, ""),
                    ("GET", native, "If-None-Match: W/\(etag)\r\n"), ("GET", native, "If-None-Match: \"other\"\r\n"),
                    ("GET", native, "If-Modified-Since: Fri, 01 Jan 2100 00:00:00 GMT\r\n"),
                    ("GET", thumbor, ""), ("GET", imgproxy, ""), ("HEAD", imgproxy, "If-None-Match: *\r\n"),
                ]
                // Each asked twice (the first time a spelling is seen may go through the router).
                let connection = try RawConnection(port: try #require(client.port))
                for pass in 0..<2 {
                    var answers: [RawResponse] = []
                    for request in requests {
                        try connection.send(
                            "\(request.method) \(request.target) HTTP/1.1\r\nHost: 127.0.0.1\r\n\(request.fields)\r\n")
                        answers += try await connection.receive(responsesTo: [request.method])
                    }
                    if pass == 1 { transcripts.withLock { $0.append(answers) } }
                }
                let counted = try await metrics(client)["imagery_event_loop_hits_total"] ?? 0
                #expect(
                    onLoop ? counted >= Double(requests.count) : counted == 0, "\(counted) answered on the event loop")
            }
        }
        try await origin.shutdown()
        let both = transcripts.withLock { $0 }
        try #require(both.count == 2)
        let (loop, router) = (both[0], both[1])
        // (The test origin sends no Last-Modified: If-Modified-Since is a 200 on both.)
        #expect(loop.map(\.status) == [200, 200, 200, 304, 200, 200, 200, 200, 304])
        for (a, b) in zip(loop, router) {
            #expect(a.status == b.status)
            #expect(a.comparableFields == b.comparableFields)
            #expect(a.body == b.body)
        }
        // max_age(120): 120 s from now (stated as max-age = 120 + Age when the source has aged).
        for answers in [loop, router] {
            let cacheControl = answers[6].headers["cache-control"] ?? ""
            let maxAge = cacheControl.firstMatch(of: /max-age=(\d+)/).flatMap { Int($0.1) } ?? 0
            #expect(maxAge - (Int(answers[6].headers["age"] ?? "0") ?? 0) == 120, "\(answers[6].headers)")
        }
        #expect(loop[7].headers["content-disposition"] == "attachment; filename=\"hello.jpg\"")
    }

    /// The event loop reads a target's path and query as a route's `URI` does, whatever it holds.
    @Test(arguments: [
        "/image?url=a&w=1", "/image", "/image?", "/image?#x", "/image?a=1#frag", "/unsafe/64x0/a.jpg", "/a#b?c",
        "/a?b?c", "/?", "/",
    ])
    func targetsSplitAsTheRoutersURI(_ target: String) {
        let (path, query) = StoredHits.pathAndQuery(of: target)
        let uri = URI(target)
        #expect(String(path) == uri.path)
        #expect(query.map(String.init) ?? "" == uri.query ?? "")
    }

    /// The ids of hits' log lines are written as Hummingbird's (a hex prefix, then 16 hex digits), each another.
    @Test func hitRequestIDsAreUnique() {
        let ids = (0..<1000).map { _ in HitRequestID.next() }
        #expect(Set(ids).count == ids.count)
        #expect(
            ids.allSatisfy { $0.count > 16 && $0.allSatisfy(\.isHexDigit) && $0.dropLast(16) == ids[0].dropLast(16) })
    }

    /// Clients that ask for a large stored image and leave before reading it, or halfway: the server
    /// answers the next client as before.
    @Test func aClientThatLeavesMidAnswerLeavesTheServerAnswering() async throws {
        try await withServer(.live) { client, origin in
            let large = imageURI(origin, "chelsea.png", "w=2400&enlarge=1&format=png")
            let first = try await get(client, large)
            #expect(first.status == .ok && first.body.count > 2_000_000, "\(first.body.count) bytes")
            for round in 0..<20 {
                let connection = try RawConnection(port: try #require(client.port))
                try connection.send("GET \(large) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                if round % 2 == 1 { _ = try await connection.receive() }  // some of it
                connection.close()
            }
            let after = try await get(client, large)
            #expect(after.status == .ok && after.body == first.body)
            #expect(try await get(client, "/health").status == .ok)
        }
    }

    /// After a restart, a response stored on disk is sent from its file on the event loop, not kept in
    /// memory when answered once; a file cut short is never sent short (a miss, made again whole); a
    /// file removed after it was opened is sent whole from the open file; a response answered twice
    /// from disk within a minute is hot: kept in memory, its next hits memory's. (Time stands still:
    /// every answer is within the minute, however slow the machine.)
    @Test func diskHitsAreSentFromTheirFilesAndNeverShort() async throws {
        let time = stillTime()
        try await withOriginAndDirectory(time: time.source) { origin, directory in
            let uri = imageURI(origin, "rocket.jpg?cc=max-age%3D600", "w=300")
            let configure = { (configuration: inout ServerConfiguration) in
                configuration.caching.directory = directory
                configuration.listener.answersHitsOnEventLoop = true
                configuration.time = time.source
            }
            let first = Box<Data>()
            try await serve(.live, origin: origin, configure: configure) { client in
                first.value = try await get(client, uri).body
            }
            let body = try #require(first.value)
            try await serve(.live, origin: origin, configure: configure) { client in
                for _ in 0..<2 {
                    let again = try await get(client, uri)
                    #expect(again.status == .ok && again.body == body)
                }
                var counters = try await metrics(client)
                #expect(lookups(counters, "response_disk", "hit") == 2)
                // the first after the restart is parsed by the router
                #expect(counters["imagery_event_loop_hits_total"] == 1)
                #expect(counters["imagery_response_cache_bytes"] == 0)  // sent from the file once: not kept in memory
                // Cut short on disk: not sent from the file; the router finds it damaged, and it is made again whole.
                let file = try #require(Self.entryFiles(in: directory, size: body.count).first)
                #expect(truncate(file.path, off_t(body.count / 2)) == 0)
                let written = counters["imagery_disk_cache_bytes_written"] ?? 0
                let afterCut = try await get(client, uri)
                #expect(afterCut.status == .ok && afterCut.body == body)
                counters = try await metrics(client)
                #expect(counters["imagery_disk_cache_corrupt_entries_removed"] ?? 0 >= 1)
                // Counted once, as the router's miss: the short file was not sent, so not a hit.
                #expect(lookups(counters, "response_disk", "hit") == 2)
                #expect(lookups(counters, "response_disk", "miss") == 1)
                // Removed after the event loop opened it: still sent whole, from the open file.
                try await waitUntil("the new entry written") {
                    try await metrics(client)["imagery_disk_cache_bytes_written"] ?? 0 >= written + Double(body.count)
                }
                #expect(try await get(client, uri).body == body)
                for file in Self.entryFiles(in: directory, size: body.count) {
                    try FileManager.default.removeItem(at: file)
                }
                let afterRemoval = try await get(client, uri)
                #expect(afterRemoval.status == .ok && afterRemoval.body == body)
                // That was the new entry's second answer from its file: now hot, kept in memory.
                counters = try await metrics(client)
                #expect(counters["imagery_response_cache_bytes"] == Double(body.count))
                let memoryHits = lookups(counters, "response", "hit")
                #expect(try await get(client, uri).body == body)
                #expect(lookups(try await metrics(client), "response", "hit") == memoryHits + 1)
            }
        }
    }

    /// The disk cache's entry files of `size` bytes under `directory`.
    static func entryFiles(in directory: URL, size: Int) -> [URL] {
        let blobs = directory.appendingPathComponent("blobs")
        let files =
            FileManager.default.enumerator(at: blobs, includingPropertiesForKeys: [.fileSizeKey])?.compactMap {
                $0 as? URL
            } ?? []
        return files.filter { (try? $0.resourceValues(forKeys: [.fileSizeKey]).fileSize) == size }
    }

    /// An imgproxy URL answered before its `expires` is not answered from memory after it (time moved
    /// by hand past it).
    @Test func anExpiredImgproxyURLIsNotAHit() async throws {
        let time = stillTime()
        try await withServer(.live, configure: { $0.time = time.source }) { client, origin in
            let expiry = Int(time.date.timeIntervalSince1970) + 6
            let path = "/_/w:64/exp:\(expiry)/plain/\(origin.url("rocket.jpg").absoluteString)"
            for _ in 0..<2 {  // made, then a hit
                #expect(try await get(client, path).status == .ok)
            }
            let hits = try await metrics(client)["imagery_event_loop_hits_total"] ?? 0
            time.advance(by: .seconds(6))
            let expired = try await get(client, path)
            #expect(expired.status == .notFound && expired.headers[.eTag] == nil)
            #expect(try await metrics(client)["imagery_event_loop_hits_total"] ?? 0 == hits, "not answered as a hit")
        }
    }
}

/// One response read off a raw connection.
struct RawResponse: Sendable {
    let status: Int
    /// Fields by lower-cased name (the last of a name), in order in `order`.
    let headers: [String: String]
    let order: [String]
    let body: Data

    /// The fields in order, without those that change from one second to the next.
    var comparableFields: [String] {
        order.filter { $0 != "date" && $0 != "age" }.map { name in
            let value = headers[name] ?? ""
            return name + ": " + (name == "cache-control" ? value.replacing(/max-age=\d+/, with: "max-age=N") : value)
        }
    }
}

extension RawConnection {
    /// The responses to requests of `methods` (a `HEAD`'s has no body), read under the hang guard (a
    /// miss among them is made while the whole suite loads both cores: CI once waited past 20 s).
    func receive(responsesTo methods: [String]) async throws -> [RawResponse] {
        var buffer = Data()
        var responses: [RawResponse] = []
        let deadline = ContinuousClock.now + hangGuard
        while responses.count < methods.count, ContinuousClock.now < deadline {
            while responses.count < methods.count,
                let (response, used) = RawResponse.parse(buffer, head: methods[responses.count] == "HEAD")
            {
                responses.append(response)
                buffer.removeFirst(used)
            }
            guard responses.count < methods.count else { break }
            let more = try await receiveBytes(within: deadline - ContinuousClock.now)
            if more.isEmpty { break }
            buffer.append(more)
        }
        return responses
    }
}

extension RawResponse {
    /// The response at the start of `data`, and how many bytes it took; `nil`: not all there yet.
    static func parse(_ data: Data, head isHead: Bool) -> (RawResponse, Int)? {
        guard let end = data.firstRange(of: Data("\r\n\r\n".utf8)) else { return nil }
        let text = String(decoding: data[data.startIndex..<end.lowerBound], as: UTF8.self)
        var lines = text.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { return nil }
        var headers: [String: String] = [:]
        var order: [String] = []
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            headers[name] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            order.append(name)
        }
        let length = isHead || status == 304 ? 0 : Int(headers["content-length"] ?? "0") ?? 0
        let bodyStart = end.upperBound
        guard data.endIndex - bodyStart >= length else { return nil }
        let body = Data(data[bodyStart..<(bodyStart + length)])
        return (
            RawResponse(status: status, headers: headers, order: order, body: body),
            bodyStart + length - data.startIndex
        )
    }
}
