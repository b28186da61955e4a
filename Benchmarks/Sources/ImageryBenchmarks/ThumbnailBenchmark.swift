import Foundation
import Imagery
import ImageryVips

/// Decode-at-size of the corpus JPEGs to fit 256x256 (or, `smart`, 256x256 smart crops: cover with
/// libvips' attention strategy), against libvips' own `vipsthumbnail` on the same files in the same
/// run (`--smartcrop attention` for smart crops).
///
/// vipsthumbnail reads each file, shrinks on load, encodes a JPEG and writes it;
/// the comparable Imagery row does the same (read, decode at size, encode, write).
enum ThumbnailBenchmark {
    static func run(corpus: URL, smart: Bool = false, rounds: Int = 3) throws -> [Comparison] {
        let files = try FileManager.default.contentsOfDirectory(atPath: corpus.path)
            .filter { $0.hasSuffix(".jpg") }.sorted().map { corpus.appendingPathComponent($0) }
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("imagery-bench-\(getpid())")
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: output) }
        let decoder = VipsImageDecoder()
        let encoder = VipsImageEncoder(defaultQuality: 75)
        let box = smart
            ? ImageRequest.Thumbnail(width: 256, height: 256, fit: .cover, gravity: .smart(.attention))
            : ImageRequest.Thumbnail(width: 256, height: 256, fit: .inside)
        let count = Double(files.count)
        print("\(files.count) JPEGs from \(corpus.path)")

        @Sendable func thumbnail(_ file: URL) throws {
            let image = try decoder.decode(Data(contentsOf: file), thumbnail: box)
            let data = try encoder.encode(image, as: .jpeg, quality: 75)
            try data.write(to: output.appendingPathComponent(file.lastPathComponent))
        }

        func parallel(_ threads: Int) throws {
            let work = SharedWork(count: files.count)
            DispatchQueue.concurrentPerform(iterations: threads) { _ in
                while let index = work.next() {
                    do { try thumbnail(files[index]) } catch { work.fail(error) }
                }
            }
            if let failure = work.failure { throw failure }
        }

        func vipsthumbnail(threads: Int?) throws {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/vipsthumbnail")
            process.arguments = (smart ? ["-s", "256x256", "--smartcrop", "attention"] : ["-s", "256"])
                + ["-o", output.path + "/%s-vt.jpg[Q=75]"] + files.map(\.path)
            var environment = ProcessInfo.processInfo.environment
            if let threads { environment["VIPS_CONCURRENCY"] = String(threads) }
            process.environment = environment
            try process.run()
            process.waitUntilExit()
            precondition(process.terminationStatus == 0, "vipsthumbnail failed")
        }

        let cores = ProcessInfo.processInfo.activeProcessorCount
        // Warm the page cache and both code paths once.
        try parallel(cores)
        try vipsthumbnail(threads: nil)

        let decodeOnly = try medianSeconds(rounds: rounds) {
            for file in files { _ = try decoder.decode(Data(contentsOf: file), thumbnail: box) }
        }
        let oursSerial = try medianSeconds(rounds: rounds) { for file in files { try thumbnail(file) } }
        let peerSerial = try medianSeconds(rounds: rounds) { try vipsthumbnail(threads: 1) }
        let oursParallel = try medianSeconds(rounds: rounds) { try parallel(cores) }
        let peerParallel = try medianSeconds(rounds: rounds) { try vipsthumbnail(threads: nil) }
        print(String(format: "decode at size only (1 thread): %.1f images/s", count / decodeOnly))

        return [
            Comparison(name: "1 thread: read, shrink-on-load, encode JPEG, write", unit: "img/s",
                       ours: count / oursSerial, peer: count / peerSerial, peerName: "vipsthumbnail, VIPS_CONCURRENCY=1"),
            Comparison(name: "\(cores) threads: same work", unit: "img/s",
                       ours: count / oursParallel, peer: count / peerParallel, peerName: "vipsthumbnail, default threads"),
        ]
    }
}

/// Hands out indices to threads and keeps the first failure.
private final class SharedWork: @unchecked Sendable {
    private let lock = NSLock()
    private var index = 0
    private let count: Int
    private(set) var failure: (any Error)?

    init(count: Int) { self.count = count }

    func next() -> Int? {
        lock.lock()
        defer { lock.unlock() }
        guard index < count else { return nil }
        index += 1
        return index - 1
    }

    func fail(_ error: any Error) {
        lock.lock()
        failure = failure ?? error
        lock.unlock()
    }
}
