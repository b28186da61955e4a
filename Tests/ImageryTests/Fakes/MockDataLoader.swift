import Foundation

@testable import Imagery

/// A ``DataLoading`` whose answers the test writes, as Nuke's `MockDataLoader`: per URL a body with
/// its status and headers, or an error; loads held at a ``Gate`` until the test opens it; bytes
/// delivered in chunks (with a pause at a gate after any chunk) so that progress, and the body so far
/// (``DataRequest/didReceiveBody``), can be watched.
///
/// It counts what it was asked and how each load ended, and reports each load's start as an event
/// the test awaits (``waitForLoads(_:)``): ordering comes from events, never from sleeping.
final class MockDataLoader: DataLoading {
    /// How to answer one load.
    struct Stub: Sendable {
        /// The body (ignored for a 304).
        var data: Data
        /// The status: a 2xx or 304 returns, anything else throws ``DataLoadingError/badStatus(_:)``.
        var statusCode: Int
        /// Response headers (names lower-case, as loaders give them).
        var headers: [String: String]
        /// Thrown instead of answering (after the gate).
        var error: (any Error)?
        /// How many pieces the body arrives in, each reported as progress.
        var chunks: Int
        /// Whether the size is announced (`willReceiveBody` and progress totals), as `Content-Length` does.
        var announcesSize: Bool
        /// Waited for once the load has started, before anything is answered.
        var gate: Gate?
        /// Waited for after the chunk of that number (1 first) has been reported.
        var pauses: [Int: Gate]
        /// Where each chunk ends (the last one at the body's end); `nil`: ``chunks`` of equal size.
        var cuts: [Int]?

        init(
            data: Data = TestImage.data(), statusCode: Int = 200, headers: [String: String] = [:],
            error: (any Error)? = nil, chunks: Int = 1, announcesSize: Bool = true, gate: Gate? = nil,
            pauses: [Int: Gate] = [:]
        ) {
            (self.data, self.statusCode, self.headers, self.error) = (data, statusCode, headers, error)
            (self.chunks, self.announcesSize, self.gate, self.pauses) = (chunks, announcesSize, gate, pauses)
        }

        /// A load that fails with `error`.
        static func failure(_ error: any Error, gate: Gate? = nil) -> Stub {
            Stub(data: Data(), error: error, gate: gate)
        }

        /// A `304 Not Modified` with `headers`.
        static func notModified(headers: [String: String] = [:]) -> Stub {
            Stub(data: Data(), statusCode: 304, headers: headers)
        }
    }

    /// How a load ended.
    enum Outcome: Sendable, Equatable {
        case answered(status: Int)
        case failed(String)
        case cancelled
    }

    /// Computes the answer to a request (a 304 when its validator matches, say).
    typealias Responder = @Sendable (DataRequest) -> Stub

    private struct State {
        var stubs: [String: Responder] = [:]
        var inFlight = 0
        var peakInFlight = 0
    }

    private let state = Locked(State())
    private let fallback: Responder?
    /// Each load's request, in the order the loads started.
    let started = EventLog<DataRequest>()
    /// Each load's end, in order.
    let ended = EventLog<(url: URL, outcome: Outcome)>()
    /// Each chunk handed over (its number, 1 first), once its progress and body were reported.
    let chunksSent = EventLog<Int>()

    /// A loader; a URL with no stub gets `fallback`'s answer, or a 404 without one.
    init(fallback: Responder? = nil) {
        self.fallback = fallback
    }

    /// Answers every load of `url` with `stub`.
    func stub(_ url: URL, _ stub: Stub) {
        state.withLock { $0.stubs[url.absoluteString] = { _ in stub } }
    }

    /// Answers every load of `url` with `data`.
    func stub(_ url: URL, data: Data, headers: [String: String] = [:], chunks: Int = 1, gate: Gate? = nil) {
        stub(url, Stub(data: data, headers: headers, chunks: chunks, gate: gate))
    }

    /// Answers each load of `url` with what `responder` says for its request.
    func respond(to url: URL, with responder: @escaping Responder) {
        state.withLock { $0.stubs[url.absoluteString] = responder }
    }

    // MARK: - What happened

    /// How many loads started.
    var loadCount: Int { started.count }

    /// How many loads of `url` started.
    func loadCount(of url: URL) -> Int { started.all.filter { $0.url == url }.count }

    /// The URLs loaded, in the order their loads started.
    var loadedURLs: [URL] { started.all.map(\.url) }

    /// The last path components of the URLs loaded, in the order their loads started.
    var loadedNames: [String] { loadedURLs.map(\.lastPathComponent) }

    /// How many loads ended by cancellation (aborted downloads).
    var cancelledCount: Int { ended.all.filter { $0.outcome == .cancelled }.count }

    /// How many loads answered with a body or a 304.
    var answeredCount: Int { ended.all.filter { if case .answered = $0.outcome { true } else { false } }.count }

    /// Loads running now, and the most that ever ran at once.
    var inFlight: Int { state.withLock { $0.inFlight } }
    var peakInFlight: Int { state.withLock { $0.peakInFlight } }

    /// Returns the first `count` loads' requests once that many have started.
    @discardableResult
    func waitForLoads(_ count: Int) async throws -> [DataRequest] {
        try await started.waitForCount(count, "loads started")
    }

    /// Returns once `count` loads have ended (answered, failed or cancelled).
    func waitForEnds(_ count: Int) async throws {
        try await ended.waitForCount(count, "loads ended")
    }

    /// Returns once `count` loads have been cancelled.
    func waitForCancellations(_ count: Int) async throws {
        try await ended.waitUntil("\(count) cancelled loads") { $0.filter { $0.outcome == .cancelled }.count >= count }
    }

    // MARK: - DataLoading

    func load(
        _ request: DataRequest, progress: @escaping @Sendable (TransferProgress) -> Void
    ) async throws -> DataResponse {
        let responder = state.withLock { state -> Responder? in
            state.inFlight += 1
            state.peakInFlight = max(state.peakInFlight, state.inFlight)
            return state.stubs[request.url.absoluteString]
        }
        let stub = responder?(request) ?? fallback?(request) ?? Stub.failure(DataLoadingError.badStatus(404))
        started.append(request)
        let outcome: Outcome
        defer {
            state.withLock { $0.inFlight -= 1 }
        }
        do {
            let response = try await answer(request, with: stub, progress: progress)
            outcome = .answered(status: response.statusCode)
            ended.append((request.url, outcome))
            return response
        } catch is CancellationError {
            ended.append((request.url, .cancelled))
            throw CancellationError()
        } catch {
            ended.append((request.url, .failed("\(error)")))
            throw error
        }
    }

    private func answer(
        _ request: DataRequest, with stub: Stub, progress: @escaping @Sendable (TransferProgress) -> Void
    ) async throws -> DataResponse {
        try await stub.gate?.wait()
        try Task.checkCancellation()
        if let error = stub.error { throw error }
        guard (200..<300).contains(stub.statusCode) || stub.statusCode == 304 else {
            let retryAfter = stub.headers["retry-after"].flatMap { RetryPolicy.retryAfter($0, now: Date()) }
            throw DataLoadingError.badStatus(stub.statusCode, retryAfter: retryAfter)
        }
        let body = stub.statusCode == 304 ? Data() : stub.data
        let total = stub.announcesSize ? Int64(body.count) : nil
        try await request.willReceiveBody?(total)
        let chunks = stub.cuts.map { $0.count + 1 } ?? max(1, min(stub.chunks, max(1, body.count)))
        var sent = 0
        for chunk in 1...chunks where !body.isEmpty {
            sent =
                chunk == chunks
                ? body.count : stub.cuts.map { min(body.count, $0[chunk - 1]) } ?? body.count * chunk / chunks
            progress(TransferProgress(completed: Int64(sent), total: total))
            request.didReceiveBody?(body.prefix(sent))
            chunksSent.append(chunk)
            if let pause = stub.pauses[chunk] { try await pause.wait() }
            try Task.checkCancellation()
        }
        return DataResponse(data: body, statusCode: stub.statusCode, headers: stub.headers)
    }
}
