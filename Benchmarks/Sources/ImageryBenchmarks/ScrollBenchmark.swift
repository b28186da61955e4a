import Foundation
import Synchronization
import Imagery
import ImageryHTTP
import ImageryVips

/// The seeds' scroll (issue 12): a list whose images come from a slow origin (scripts/scroll/origin.py:
/// one bandwidth shared by every connection, a latency before each answer). The user flings through
/// 200 rows, each visible for 10 ms (its cell asks for its 256x256 thumbnail, then scrolls away),
/// then settles on 10 rows. Measured: the time from settling until those 10 images are ready, and
/// the bytes the origin sent until then, for
/// - **lanes**: Imagery; a cell that scrolls away says "no longer urgent" (priority `.low`);
/// - **priorities only**: Imagery, the cells never lower their priority;
/// - **FIFO**: the seeds' naive loader: one line, 6 downloads at once, nothing reprioritised or cancelled.
/// Every row is a URL of its own (`/RUN/ROW/NAME`): nothing is shared between rows or runs.
enum ScrollBenchmark {
    static let flungRows = 200
    static let settledRows = 10
    static let rowTime = Duration.milliseconds(10)
    static let thumbnail = ImageRequest.Thumbnail(width: 256, height: 256)

    struct Outcome {
        let label: String
        let settled: Duration
        let bytes: Int
        let requests: Int
    }

    static func run(origin: URL, names: [String]) async throws {
        let stats = OriginStats(origin: origin)
        var outcomes: [Outcome] = []
        for (index, variant) in [Variant.lanes, .prioritiesOnly, .fifo].enumerated() {
            try await stats.reset()
            let url = { @Sendable (row: Int) in origin.appendingPathComponent("run\(index)/\(row)/\(names[row % names.count])") }
            let settled = try await variant.fling(url)
            let (bytes, requests) = try await stats.read()
            outcomes.append(Outcome(label: variant.label, settled: settled, bytes: bytes, requests: requests))
            print("  \(variant.label): settled screen ready after \(format(settled)) s, \(bytes / 1000) KB in \(requests) requests")
            try await Task.sleep(for: .seconds(2))  // cancelled transfers end; the origin is idle again
        }
        print("\n### Time to a settled screen after a fling (\(flungRows) rows of \(rowTime), then \(settledRows) rows)\n")
        print("| loader | settled screen ready | bytes sent until then | requests until then | lanes are faster by |")
        print("|---|---:|---:|---:|---:|")
        let lanes = outcomes[0]
        for outcome in outcomes {
            let ratio = seconds(outcome.settled) / seconds(lanes.settled)
            print("| \(outcome.label) | \(format(outcome.settled)) s | \(outcome.bytes / 1000) KB | \(outcome.requests) | **\(format(ratio))x** |")
        }
        try await stats.shutdown()
    }

    enum Variant {
        case lanes, prioritiesOnly, fifo

        var label: String {
            switch self {
            case .lanes: "Imagery, lanes (no longer urgent → prefetch lane)"
            case .prioritiesOnly: "Imagery, priorities only (cells never lower theirs)"
            case .fifo: "FIFO, 6 at once, no cancellation (the seeds' naive loader)"
            }
        }

        /// The fling, then the settled rows; returns the time from settling until they are ready.
        func fling(_ url: @escaping @Sendable (Int) -> URL) async throws -> Duration {
            switch self {
            case .lanes, .prioritiesOnly: try await pipelineFling(url, demotes: self == .lanes)
            case .fifo: try await fifoFling(url)
            }
        }

        private func pipelineFling(_ url: (Int) -> URL, demotes: Bool) async throws -> Duration {
            let loader = HTTPDataLoader()
            let pipeline = ImagePipeline(configuration: .init(decoder: VipsImageDecoder(), dataLoader: loader))
            var flung: [ImageTask] = []
            for row in 0..<ScrollBenchmark.flungRows {
                let task = pipeline.imageTask(for: ImageRequest(url: url(row), thumbnail: ScrollBenchmark.thumbnail))
                flung.append(task)
                try await Task.sleep(for: ScrollBenchmark.rowTime)
                if demotes { task.priority = .low }
            }
            let start = ContinuousClock.now
            let settled = (ScrollBenchmark.flungRows..<ScrollBenchmark.flungRows + ScrollBenchmark.settledRows).map {
                pipeline.imageTask(for: ImageRequest(url: url($0), thumbnail: ScrollBenchmark.thumbnail))
            }
            for task in settled { _ = try await task.image }
            let elapsed = ContinuousClock.now - start
            for task in flung { task.cancel() }
            try await loader.shutdown()
            return elapsed
        }

        private func fifoFling(_ url: @escaping @Sendable (Int) -> URL) async throws -> Duration {
            let loader = HTTPDataLoader()
            let line = NaiveLine()
            let workers = (0..<6).map { _ in
                Task {
                    while let row = await line.next() {
                        guard let data = try? await loader.loadData(for: url(row)) else { continue }
                        _ = try? VipsImageDecoder().decode(data, thumbnail: ScrollBenchmark.thumbnail)
                        line.done(row)
                    }
                }
            }
            for row in 0..<ScrollBenchmark.flungRows {
                line.add(row)
                try await Task.sleep(for: ScrollBenchmark.rowTime)
            }
            let start = ContinuousClock.now
            let settled = Array(ScrollBenchmark.flungRows..<ScrollBenchmark.flungRows + ScrollBenchmark.settledRows)
            for row in settled { line.add(row) }
            while !line.areDone(settled) { try await Task.sleep(for: .milliseconds(5)) }
            let elapsed = ContinuousClock.now - start
            line.close()
            for worker in workers { worker.cancel() }
            try await loader.shutdown()
            return elapsed
        }
    }

    /// The naive loader's line: rows in the order asked, taken by its workers (who poll it).
    final class NaiveLine: Sendable {
        private let state = Mutex((rows: [Int](), head: 0, done: Set<Int>(), closed: false))

        func add(_ row: Int) { state.withLock { $0.rows.append(row) } }
        func done(_ row: Int) { _ = state.withLock { $0.done.insert(row) } }
        func close() { state.withLock { $0.closed = true } }
        func areDone(_ rows: [Int]) -> Bool { state.withLock { state in rows.allSatisfy { state.done.contains($0) } } }

        /// The next row, waiting for one; `nil` once closed.
        func next() async -> Int? {
            while true {
                let taken = state.withLock { state -> Int?? in
                    if state.closed { return .some(nil) }
                    guard state.head < state.rows.count else { return nil }
                    state.head += 1
                    return state.rows[state.head - 1]
                }
                if let taken { return taken }
                try? await Task.sleep(for: .milliseconds(2))
            }
        }
    }

    /// The origin's counters (`/stats`, `/reset`).
    struct OriginStats {
        let origin: URL
        let loader = HTTPDataLoader()

        func reset() async throws { _ = try await loader.loadData(for: origin.appendingPathComponent("reset")) }

        func read() async throws -> (bytes: Int, requests: Int) {
            let data = try await loader.loadData(for: origin.appendingPathComponent("stats"))
            let object = try JSONSerialization.jsonObject(with: data) as? [String: Int] ?? [:]
            return (object["bytes"] ?? 0, object["requests"] ?? 0)
        }

        func shutdown() async throws { try await loader.shutdown() }
    }

    static func format(_ value: Double) -> String { String(format: "%.2f", value) }
    static func format(_ duration: Duration) -> String { format(seconds(duration)) }
}

/// 10 000 prefetch requests queued and stopped: the time per request of each operation, at three
/// queue lengths (constant per request when the operations are O(1)).
enum PrefetchQueueBenchmark {
    static func run(origin: URL) async throws {
        print("\n### ImagePrefetcher: requests queued and stopped (time per request)\n")
        print("| queued | startPrefetching | stopPrefetching(with:) | stopPrefetching() |")
        print("|---:|---:|---:|---:|")
        for count in [100, 1_000, 10_000] {
            let loader = HTTPDataLoader()
            let pipeline = ImagePipeline(configuration: .init(decoder: VipsImageDecoder(), dataLoader: loader))
            let requests = (0..<count).map {
                ImageRequest(url: origin.appendingPathComponent("queue\(count)/\($0)/missing.jpg"), thumbnail: .init(width: 64, height: 64))
            }
            let prefetcher = ImagePrefetcher(pipeline: pipeline)
            var clock = ContinuousClock.now
            prefetcher.startPrefetching(with: requests)
            let start = ContinuousClock.now - clock
            clock = ContinuousClock.now
            prefetcher.stopPrefetching(with: Array(requests.reversed()))
            let stop = ContinuousClock.now - clock
            prefetcher.startPrefetching(with: requests)
            clock = ContinuousClock.now
            prefetcher.stopPrefetching()
            let stopAll = ContinuousClock.now - clock
            await prefetcher.waitUntilIdle()
            try await loader.shutdown()
            let perRequest = { (duration: Duration) in String(format: "%.2f µs", seconds(duration) * 1e6 / Double(count)) }
            print("| \(count) | \(perRequest(start)) | \(perRequest(stop)) | \(perRequest(stopAll)) |")
        }
    }
}
