import Foundation
import Hummingbird
import HummingbirdTesting
import Imagery
import ImageryTestSupport
import Testing

@testable import ImageryServer

/// Result storage: a response's bytes are stored as first sent and answered as they are,
/// after a restart too, with no decode and no origin request.
@Suite("Proxy result storage")
struct ResultStorageTests {
    @Test func aRestartAnswersTheStoredBytesWithoutDecodeOrOriginRequest() async throws {
        try await withOriginAndDirectory { origin, directory in
            let uri = imageURI(origin, "rocket.jpg?cc=max-age%3D600", "w=200")
            let first = Box<(Data, String)>()
            try await serve(origin: origin, configure: { $0.caching.directory = directory }) { client in
                let response = try await get(client, uri)
                #expect(response.status == .ok)
                first.value = (response.body, try #require(response.headers[.eTag]))
            }
            #expect(origin.requestCount == 1)
            let (body, etag) = try #require(first.value)
            try await serve(origin: origin, configure: { $0.caching.directory = directory }) { client in
                let again = try await get(client, uri)
                #expect(again.status == .ok)
                #expect(again.body == body)
                #expect(again.headers[.eTag] == etag)
                let notModified = try await get(client, uri, headers: [.ifNoneMatch: etag])
                #expect(notModified.status == .notModified)
                let counters = try await metrics(client)
                // The 304 too comes from disk when hits are answered on the event loop (it sends files; the
                // router keeps what it read in memory otherwise).
                #expect(lookups(counters, "response_disk", "hit") == (hitsOnEventLoop ? 2 : 1))
                #expect(counters[#"imagery_decode_duration_seconds_count{result="ok"}"#] ?? 0 == 0)
                #expect(counters[#"imagery_origin_fetch_duration_seconds_count{result="ok"}"#] ?? 0 == 0)
            }
            #expect(origin.requestCount == 1)
        }
    }

    @Test func aDamagedStoredResponseIsAMissAndIsStoredAgain() async throws {
        try await withOriginAndDirectory { origin, directory in
            let uri = imageURI(origin, "rocket.jpg?cc=max-age%3D600", "w=120&format=png")
            let first = Box<Data>()
            try await serve(origin: origin, configure: { $0.caching.directory = directory }) { client in
                first.value = try await get(client, uri).body
            }
            // The smaller of the two blobs is the stored response (the other is the 112 KB original).
            let blobs = zip(blobFiles(in: directory), blobFileSizes(in: directory)).sorted { $0.1 < $1.1 }
            #expect(blobs.count == 2)
            let damaged = try #require(blobs.first)
            let handle = try FileHandle(forWritingTo: damaged.0)
            try handle.seek(toOffset: UInt64(damaged.1 / 2))
            try handle.write(contentsOf: Data(repeating: 0x5A, count: 16))
            try handle.close()
            for round in 0..<2 {
                try await serve(origin: origin, configure: { $0.caching.directory = directory }) { client in
                    let response = try await get(client, uri)
                    #expect(response.status == .ok)
                    #expect(response.body == first.value, "made again from the stored original, the same bytes")
                    let counters = try await metrics(client)
                    #expect(lookups(counters, "response_disk", round == 0 ? "miss" : "hit") == 1, "round \(round)")
                }
            }
            #expect(origin.requestCount == 1, "the original came from disk")
        }
    }

    @Test func noStoreIsNeitherReusedNorWritten() async throws {
        try await withOriginAndDirectory { origin, directory in
            let uri = imageURI(origin, "rocket.jpg?cc=no-store", "w=100")
            try await serve(origin: origin, configure: { $0.caching.directory = directory }) { client in
                for _ in 0..<2 {
                    let response = try await get(client, uri)
                    #expect(response.status == .ok)
                    #expect(response.headers[.cacheControl] == "no-store")
                }
                let other = try await get(client, imageURI(origin, "rocket.jpg?cc=no-store", "w=110"))
                #expect(other.status == .ok)
            }
            #expect(origin.requestCount == 3, "every use asks the origin")
            #expect(blobFiles(in: directory).isEmpty, "nothing of a no-store source is written")
        }
    }

    @Test func noCacheIsRevalidatedBeforeEachUseAndA304KeepsTheBytes() async throws {
        try await withOriginAndDirectory { origin, directory in
            let uri = imageURI(origin, "rocket.jpg?cc=no-cache&etag=v1", "w=100")
            try await serve(origin: origin, configure: { $0.caching.directory = directory }) { client in
                let first = try await get(client, uri)
                #expect(first.headers[.cacheControl] == "public, no-cache")
                for _ in 0..<2 {
                    let again = try await get(client, uri)
                    #expect(again.body == first.body)
                    #expect(again.headers[.eTag] == first.headers[.eTag])
                }
            }
            #expect(origin.requestCount == 3)
            #expect(origin.requests.dropFirst().allSatisfy { $0.headers["if-none-match"] == "\"v1\"" })
        }
    }

    /// Time moved by hand (the server's and the origin's): past `max-age=1`, a request revalidates
    /// the source with its ETag, and the 304's freshness holds for the response and for new sizes.
    @Test func aStaleSourceIsRevalidatedAndA304RefreshesItForNewSizes() async throws {
        let time = stillTime()
        try await withOriginAndDirectory(time: time.source) { origin, directory in
            let path = "rocket.jpg?cc=max-age%3D1&etag=v1&cc304=max-age%3D600"
            let configure = { (configuration: inout ServerConfiguration) in
                (configuration.caching.directory, configuration.time) = (directory, time.source)
            }
            try await serve(origin: origin, configure: configure) { client in
                let first = try await get(client, imageURI(origin, path, "w=100"))
                #expect(first.headers[.cacheControl] == "public, max-age=1")
                time.advance(by: .seconds(2))
                let again = try await get(client, imageURI(origin, path, "w=100"))
                #expect(again.body == first.body)
                #expect(origin.requestCount == 2)
                #expect(origin.requests.last?.headers["if-none-match"] == "\"v1\"")
                #expect(again.headers[.cacheControl] == "public, max-age=600", "the 304's freshness")
                // A new size of the refreshed source: from memory, no origin request.
                let newSize = try await get(client, imageURI(origin, path, "w=120"))
                #expect(newSize.status == .ok)
                #expect(origin.requestCount == 2)
            }
        }
    }

    /// Time moved by hand past `max-age=1`, within `stale-while-revalidate=60`: the stale response is
    /// answered as it is (its freshness spent: `max-age=0`), and a conditional request refreshes it
    /// behind; once refreshed, it is answered fresh with no further origin request.
    @Test func withinStaleWhileRevalidateTheStaleResponseIsAnsweredAtOnceAndRevalidatedBehind() async throws {
        let time = stillTime()
        try await withOriginAndDirectory(time: time.source) { origin, directory in
            let uri = imageURI(
                origin, "rocket.jpg?cc=max-age%3D1%2C%20stale-while-revalidate%3D60&etag=v1&cc304=max-age%3D600",
                "w=100")
            let configure = { (configuration: inout ServerConfiguration) in
                (configuration.caching.directory, configuration.time) = (directory, time.source)
            }
            try await serve(origin: origin, configure: configure) { client in
                let first = try await get(client, uri)
                #expect(first.headers[.cacheControl] == "public, max-age=1, stale-while-revalidate=60")
                time.advance(by: .seconds(2))
                let stale = try await get(client, uri)
                #expect(stale.status == .ok)
                #expect(stale.body == first.body)
                let staleCacheControl = stale.headers[.cacheControl]
                // The stale copy, not a refreshed one.
                #expect(staleCacheControl == "public, max-age=0, stale-while-revalidate=60")
                // The revalidation runs behind it: a conditional request, then the refreshed freshness.
                // (A request that finds the copy still stale may start another: each is conditional.)
                try await waitUntil("the conditional request") { origin.requestCount >= 2 }
                let refreshed = try await waitFor("the refreshed freshness") {
                    () async throws -> (status: HTTPResponse.Status, headers: HTTPFields, body: Data)? in
                    let response = try await get(client, uri)
                    return response.headers[.cacheControl] == "public, max-age=600" ? response : nil
                }
                #expect(refreshed.body == first.body)
                #expect(refreshed.headers[.eTag] == first.headers[.eTag])
                let asked = origin.requestCount
                #expect(try await get(client, uri).headers[.cacheControl] == "public, max-age=600")
                #expect(origin.requestCount == asked, "fresh: no more origin requests")
                #expect(origin.requests.dropFirst().allSatisfy { $0.headers["if-none-match"] == "\"v1\"" })
            }
        }
    }

    /// A request written another way (another `Accept`, another URL syntax) whose response memory holds
    /// is answered by its text from then on, as the first spelling is: not parsed again.
    @Test func anotherSpellingOfAStoredResponseIsRememberedByItsText() async throws {
        let origin = try await TestOrigin.serving(directory: Fixtures.directory)
        var configuration = ServerConfiguration()
        configuration.caching.directory = nil
        configuration.origins.privateNetworkHosts = ["127.0.0.1"]
        configuration.origins.timeout = hangGuard  // as `serve` sets it
        let service = try ImageService(configuration: configuration)
        let parameters = try ImageParameters(
            query: ["url": origin.url("rocket.jpg").absoluteString, "w": "100"], maximumSide: 1000)
        let first = RequestText("url=a&w=100", accept: "*/*")
        guard case .missing(let missing) = await service.lookUp(parameters, accept: "*/*", text: first) else {
            Issue.record("nothing was stored yet")
            return
        }
        let made = try await service.make(missing)
        #expect(await service.storedResponse(forRequestKey: first.key)?.response.etag == made.etag)
        let other = RequestText("#/unsafe/100x0/a", accept: nil)
        #expect(await service.storedResponse(forRequestKey: other.key)?.response.etag == nil)
        guard case .stored(let stored) = await service.lookUp(parameters, accept: nil, text: other) else {
            Issue.record("memory holds the response")
            return
        }
        #expect(stored.etag == made.etag)
        #expect(await service.storedResponse(forRequestKey: other.key)?.response.etag == made.etag)
        try await service.loader.shutdown()
        try await origin.shutdown()
    }

    @Test(
        arguments: [
            ("cc=max-age%3D60", "public", 60, nil),
            ("cc=private%2C%20max-age%3D600", "private", 600, nil),
            ("cc=max-age%3D600&age=100", "public", 500, 100),
            ("cc=max-age%3D9999999", "public", 86_400, nil),
            ("lm=864000", "public", 86_400, nil),  // heuristic: a tenth of ten days since Last-Modified
            ("etag=a", "public", 3600, nil),  // nothing useful: the operator's floor
        ] as [(String, String, Int, Int?)])
    /// `remaining`: the freshness a client or CDN downstream is given (`max-age` less `Age`). Time
    /// stands still (the server's and the origin's), so the fetch's own time adds nothing to the age.
    func cacheControlFollowsTheSource(query: String, visibility: String, remaining: Int, age: Int?) async throws {
        let time = stillTime()
        try await withOriginAndDirectory(time: time.source) { origin, _ in
            try await serve(origin: origin, configure: { $0.time = time.source }) { client in
                let response = try await get(client, imageURI(origin, "rocket.jpg?" + query, "w=64"))
                let cacheControl = try #require(response.headers[.cacheControl])
                let parts = cacheControl.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                #expect(parts.first == visibility, "\(cacheControl)")
                let sent = parts.last.flatMap { $0.hasPrefix("max-age=") ? Int($0.dropFirst(8)) : nil } ?? -1
                let sentAge = response.headers[.age].flatMap(Int.init)
                #expect(sentAge == age, "Age \(sentAge.map(String.init) ?? "none")")
                #expect(sent - (sentAge ?? 0) == remaining, "\(cacheControl), Age \(sentAge.map(String.init) ?? "-")")
                if query.hasPrefix("lm=") { #expect(response.headers[.lastModified] != nil) }
            }
        }
    }
}

extension ResultStorageTests {
    /// `If-Modified-Since`: 304 when the source has not changed since (the response's `Last-Modified`),
    /// 200 when it has; `If-None-Match` decides alone when both are sent (RFC 9110 13.1.3).
    @Test func ifModifiedSinceIsAnsweredFromTheSourcesLastModified() async throws {
        try await withOriginAndDirectory { origin, _ in
            try await serve(origin: origin) { client in
                let uri = imageURI(origin, "rocket.jpg?lm=864000", "w=64")
                let first = try await get(client, uri)
                let modified = try #require(first.headers[.lastModified])
                #expect(try await get(client, uri, headers: [.ifModifiedSince: modified]).status == .notModified)
                let earlier = HTTPDate.format(HTTPDate.parse(modified)!.addingTimeInterval(-60))
                #expect(try await get(client, uri, headers: [.ifModifiedSince: earlier]).status == .ok)
                #expect(
                    try await get(client, uri, headers: [.ifModifiedSince: modified, .ifNoneMatch: "\"other\""]).status
                        == .ok)
            }
        }
    }
}

/// A value a `@Sendable` closure can hand back.
final class Box<Value: Sendable>: @unchecked Sendable {
    // @unchecked: set inside one closure run, read after it returned.
    var value: Value?
}
