import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Imagery
import ImageryServer
import ImageryTestSupport
import NIOConcurrencyHelpers
import Testing

/// Memory-aware admission through the real server (HTTP on 127.0.0.1) and a real origin. The origin
/// holds its answers (`held`) for as long as a test needs work in flight or waiting; no test depends on
/// how long anything takes.
@Suite("Admission")
struct AdmissionTests {
    /// A budget that holds a few decodes of the fixtures, four fetches at a time and a short line.
    /// Waits of an hour: the budget refuses at once a request that the pace of decodes says cannot be
    /// served within its wait, and no pace a loaded machine measures makes that an hour. The memory
    /// limit is large and the budget set apart from it, so that the test process's resident memory (the
    /// whole suite's) never holds admission back.
    static func small(_ configuration: inout ServerConfiguration) {
        configuration.limits.memoryLimit = 4 << 30
        configuration.limits.maximumInflightMemory = 3 << 20
        configuration.origins.maximumConcurrentFetches = 4
        configuration.limits.admissionQueueLength = 6
        configuration.limits.admissionTimeout = .seconds(3600)
    }

    static let refusedOverloaded = #"imagery_admission_refused{reason="overloaded"}"#

    /// A connection per request in flight (the test client has one; AsyncHTTPClient's shared one, 8).
    static func withHTTPClient(connections: Int, _ body: (HTTPClient) async throws -> Void) async throws {
        var pool = HTTPClient.Configuration.ConnectionPool()
        pool.concurrentHTTP1ConnectionsPerHostSoftLimit = connections
        let http = HTTPClient(
            eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: .init(connectionPool: pool))
        do {
            try await body(http)
        } catch {
            try? await http.shutdown()
            throw error
        }
        try await http.shutdown()
    }

    /// `GET` on a connection of its own: status, fields, body (waited for under the hang guard).
    static func fetch(
        _ http: HTTPClient, port: Int, _ uri: String
    ) async throws -> (HTTPResponse.Status, HTTPFields, Data) {
        let request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(uri)")
        let response = try await http.execute(request, timeout: .seconds(hangGuard.components.seconds))
        let body = try await response.body.collect(upTo: 10 << 20)
        var headers = HTTPFields()
        for header in response.headers { headers[HTTPField.Name(header.name)!] = header.value }
        return (HTTPResponse.Status(code: Int(response.status.code)), headers, Data(buffer: body))
    }

    /// A page's burst at the default admission (no fixed wait: as long as the request timeout allows):
    /// 12 new sources at once on a budget that holds a couple of decodes, 4 fetched at a time, are all
    /// answered 200, none refused, however long the last wait for a fetch (the origin holds the first 4
    /// until all 12 have arrived); the budget's peak stays within its limit and one decode. (A fixed
    /// 5 s wait, the default before, refused those that waited longer: a browser shows a broken image
    /// for each 503.)
    @Test func aPageOfNewImagesIsServedInFullAtTheDefaults() async throws {
        try await Self.withHTTPClient(connections: 64) { http in
            try await withServer(
                .live,
                configure: {
                    Self.small(&$0)
                    ($0.limits.admissionTimeout, $0.limits.admissionQueueLength) = (nil, 64)
                    // The default admission waits as long as the request timeout leaves (less the request's
                    // own work at the pace measured): an hour, which no loaded machine's pace uses up.
                    $0.limits.requestTimeout = .seconds(3600)
                }
            ) { client, origin in
                let port = try #require(client.port)
                let names = ["chelsea.png", "rocket.jpg", "camera-gray.jpg", "chelsea.webp"]
                let uris = (0..<12).map {
                    imageURI(origin, "\(names[$0 % names.count])?held=page&page=\($0)", "w=100&format=jpeg")
                }
                let statuses = NIOLockedValueBox<[HTTPResponse.Status]>([])
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for uri in uris {
                        group.addTask {
                            let status = try await Self.fetch(http, port: port, uri).0
                            statuses.withLockedValue { $0.append(status) }
                        }
                    }
                    try await waitUntil("4 downloads held by the origin, 8 waiting for a download slot") {
                        let queued = try await metrics(client)["imagery_origin_fetches_queued"]
                        return origin.requestCount == 4 && queued == 8
                    }
                    origin.release("page")
                    try await group.waitForAll()
                }
                let answered = statuses.withLockedValue { $0 }
                #expect(answered.count == 12 && answered.allSatisfy { $0 == .ok }, "\(answered)")
                let figures = try await metrics(client)
                #expect(figures[Self.refusedOverloaded] == 0)
                let peak = figures["imagery_inflight_memory_peak_bytes"] ?? .infinity
                #expect(
                    peak <= Double(3 << 20) + 1.5 * Double(1 << 20),
                    "the limit and at most one decode's estimate past it: \(peak)")
            }
        }
    }

    /// 20 new sources at once, each fetched at once (20 download slots), their bodies held by the origin
    /// after the head: every download announces its size and asks the 3 MB budget for it. What fits is
    /// admitted, 6 wait in line, the rest are refused at once: 503 with `Retry-After`. Meanwhile `/health`
    /// and a memory hit, which never meet the line, are answered. Once the origin lets the bodies go,
    /// every request is an image or a 503 (a decode that finds the line still full is refused too), and
    /// afterwards every source is served.
    @Test func aBurstIsAnsweredWithImagesOr503sWithRetryAfterAndCheapRequestsSkipTheLine() async throws {
        let burstSize = 20
        try await Self.withHTTPClient(connections: 128) { http in
            let configure = { (configuration: inout ServerConfiguration) in
                Self.small(&configuration)
                configuration.origins.maximumConcurrentFetches = burstSize
            }
            try await withServer(.live, configure: configure) { client, origin in
                let port = try #require(client.port)
                let get = { @Sendable (uri: String) in try await Self.fetch(http, port: port, uri) }
                // A cheap request (a memory hit) made before the burst, asked again during it.
                let hit = imageURI(origin, "rocket.jpg?warm=1", "w=64")
                let warm = try await get(hit)
                #expect(warm.0 == .ok, "\(warm.0): \(String(decoding: warm.2, as: UTF8.self))")
                try await waitUntil("the warm request's memory given back") {
                    try await metrics(client)["imagery_inflight_memory_bytes"] == 0
                }
                let before = try await metrics(client)
                func delta(_ figures: [String: Double], _ name: String) -> Double {
                    (figures[name] ?? 0) - (before[name] ?? 0)
                }
                let uris = (0..<burstSize).map {
                    imageURI(origin, "chelsea.png?held_at=1&held=burst&n=\($0)", "w=64&format=png")
                }
                let answers = NIOLockedValueBox<[(HTTPResponse.Status, HTTPFields, Data)]>([])
                var refused = 0
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for uri in uris {
                        group.addTask {
                            let answer = try await get(uri)
                            answers.withLockedValue { $0.append(answer) }
                        }
                    }
                    // Every request of the burst has asked for its source's bytes: admitted, waiting or refused.
                    let settled = try await waitFor("every request of the burst admitted, waiting or refused") {
                        () async throws -> [String: Double]? in
                        let figures = try await metrics(client)
                        let asked =
                            delta(figures, "imagery_admission_admitted")
                            + (figures["imagery_admission_queue_length"] ?? 0) + delta(figures, Self.refusedOverloaded)
                        return asked == Double(burstSize) ? figures : nil
                    }
                    #expect(settled["imagery_admission_queue_length"] == 6, "the line is full")
                    refused = Int(delta(settled, Self.refusedOverloaded))
                    #expect(refused >= 1, "a burst of 20 into a line of 6 must refuse some")
                    // Those were answered at once; the others wait for the origin.
                    try await waitUntil("the refused requests answered") {
                        answers.withLockedValue { $0.count } == refused
                    }
                    #expect(answers.withLockedValue { $0.allSatisfy { $0.0 == .serviceUnavailable } })
                    // Meanwhile: /health and the hit. Had they gone into the admission line, which is
                    // full, they would be refused with 503.
                    for _ in 0..<5 {
                        for uri in ["/health", hit] {
                            let (status, _, body) = try await get(uri)
                            #expect(status == .ok, "\(uri): \(status) \(String(decoding: body, as: UTF8.self))")
                        }
                    }
                    origin.release("burst")
                    try await group.waitForAll()
                }
                let burst = answers.withLockedValue { $0 }
                let refusedInAll = burst.filter { $0.0 == .serviceUnavailable }
                #expect(burst.count == burstSize, "\(burst.map(\.0))")
                #expect(burst.allSatisfy { $0.0 == .ok || $0.0 == .serviceUnavailable }, "\(burst.map(\.0))")
                #expect(refusedInAll.count >= refused && refusedInAll.count < burstSize, "and admit some")
                for (_, headers, body) in refusedInAll {
                    #expect(Int(headers[.retryAfter] ?? "") ?? 0 >= 1)
                    #expect(headers[.cacheControl] == "no-store")
                    #expect((try? JSONDecoder().decode(ErrorBody.self, from: body))?.error == "overloaded")
                }
                for (status, headers, _) in burst where status == .ok { #expect(headers[.contentType] == "image/png") }
                let counted = try await metrics(client)
                #expect(delta(counted, Self.refusedOverloaded) == Double(refusedInAll.count))
                #expect(counted["imagery_inflight_memory_bytes"] == 0)
                #expect(counted["imagery_admission_queue_length"] == 0)
                #expect(counted["imagery_inflight_memory_limit_bytes"] == Double(3 << 20))
                // A memory hit reserves nothing: it never meets the line at all.
                for _ in 0..<5 { #expect(try await get(hit).0 == .ok) }
                let afterHits = try await metrics(client)
                #expect(afterHits["imagery_admission_admitted"] == counted["imagery_admission_admitted"])
                #expect(afterHits["imagery_admission_waited"] == counted["imagery_admission_waited"])
                // Afterwards, every source is served, and right (one at a time: nothing waits).
                for uri in uris {
                    let (status, headers, body) = try await get(uri)
                    #expect(status == .ok && headers[.contentType] == "image/png")
                    #expect(body.starts(with: [0x89, 0x50, 0x4E, 0x47]))
                }
            }
        }
    }

    @Test func aSourceLargerThanTheWholeBudgetIs413() async throws {
        try await withServer(
            .live,
            configure: {
                Self.small(&$0)
                $0.limits.maximumInflightMemory = 100_000  // chelsea.png is 240 KB
                // (The refusal must not wait: were it put in line, the client would give up at the hang guard.)
            }
        ) { client, origin in
            let (status, headers, body) = try await get(client, imageURI(origin, "chelsea.png", "w=64"))
            #expect(status == .contentTooLarge)
            #expect(headers[.retryAfter] == nil)
            let error = try JSONDecoder().decode(ErrorBody.self, from: body)
            #expect(error.error == "source_too_large" && error.message.contains("in-flight memory"), "\(error)")
            let counted = try await metrics(client)
            #expect(counted[#"imagery_admission_refused{reason="too_large"}"#] == 1)
            #expect(counted["imagery_inflight_memory_bytes"] == 0)
        }
    }

    /// Resident memory that stays over the ceiling after a trim (memory in use: 160 MiB the test holds,
    /// over a 2 MiB limit's ceiling of 102 MiB) holds admission back, and says so: a warning line and
    /// the counter. (Whether it ends depends on what the rest of the suite holds: not asserted.)
    @Test func residentMemoryOverTheCeilingAfterATrimIsLoggedAndCounted() async throws {
        let log = CapturedLog()
        let held = UnsafeMutableRawPointer.allocate(byteCount: 160 << 20, alignment: 16)
        held.initializeMemory(as: UInt8.self, repeating: 1, count: 160 << 20)  // resident, in use
        defer { held.deallocate() }
        let origin = try await TestOrigin.serving(directory: Fixtures.directory)
        do {
            try await serve(.live, origin: origin, logger: log.logger, configure: { $0.limits.memoryLimit = 2 << 20 }) {
                client in
                // (The trim before it may have been another server's, just before: it is not counted here.)
                let lines = try await log.waitForLines(withMetadata: "memory_pressure", "started")
                #expect(lines.first?.contains("stays over its ceiling after a trim") == true, "\(lines)")
                #expect(lines.first?.contains("of 102 MiB") == true, "\(lines)")
                let figures = try await metrics(client)
                #expect((figures["imagery_admission_resident_pressure_total"] ?? 0) >= 1)
            }
        } catch {
            try? await origin.shutdown()
            throw error
        }
        try await origin.shutdown()
    }

    @Test func theMemoryLimitIsSharedAndTheBudgetMustLeaveRoomForTheCaches() throws {
        var configuration = ServerConfiguration()
        #expect(configuration.limits.inflightMemory == configuration.limits.memoryLimit / 2)
        #expect(
            configuration.limits.inflightMemory + configuration.limits.cacheMemory == configuration.limits.memoryLimit)
        // nothing left for the caches: refused
        configuration.limits.maximumInflightMemory = configuration.limits.memoryLimit
        #expect(throws: ConfigurationFileError.self) { _ = try buildApplication(configuration: configuration) }
    }
}
