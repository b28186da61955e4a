import Foundation
import ImageryDiskCache
import ImageryTestSupport
import Testing

/// `imagery prefetch` (the real executable) against a real origin: what it stores, what it
/// prints, its exit codes, and Ctrl-C.
@Suite("imagery prefetch", .enabled(if: FileManager.default.isExecutableFile(atPath: ServerCrashTests.executable.path)))
struct PrefetchCommandTests {
    struct Run {
        let status: Int32
        let output: String
        let errors: String
    }

    /// Runs `imagery prefetch` with `arguments`, the URL list on standard input; with `interruptWhen`,
    /// sends it SIGINT once that holds (waited for under the hang guard: a slow machine only waits longer).
    static func prefetch(_ arguments: [String], input: String, interruptWhen: (@Sendable () -> Bool)? = nil)
        async throws -> Run
    {
        let process = try await runBlocking {
            let process = try ChildProcess(
                ServerCrashTests.executable.path, ["prefetch", "-"] + arguments, input: .pipe, output: .pipe,
                error: .pipe)
            process.standardInput!.write(Data(input.utf8))
            try process.standardInput!.close()
            return process
        }
        if let interruptWhen {
            // Watched from a thread of its own, not the test's task: under a full suite the cooperative
            // threads can be busy for longer than the loader's 30-s timeout, which then fails the held
            // requests before the interrupt. (The hang guard still bounds the wait.)
            let sent = Flag()
            let watcher = Thread {
                let deadline = ContinuousClock.now + hangGuard
                while !interruptWhen(), ContinuousClock.now < deadline { usleep(2_000) }
                process.send(SIGINT)
                sent.set()
            }
            watcher.start()
            try await waitUntil("the moment to interrupt imagery prefetch") { sent.isSet }
        }
        return try await runBlocking {
            let output = process.standardOutput!.readDataToEndOfFile()
            let errors = process.standardError!.readDataToEndOfFile()
            return Run(
                status: process.wait().status, output: String(decoding: output, as: UTF8.self),
                errors: String(decoding: errors, as: UTF8.self))
        }
    }

    @Test func storesOriginalsListsFailuresByReasonAndExitsNonZero() async throws {
        let origin = try await TestOrigin.serving(directory: Fixtures.directory)
        try await withTemporaryDirectory { directory in
            let good = ["rocket.jpg", "chelsea.png", "chelsea.webp"].map { origin.url($0).absoluteString }
            let list =
                (good + [origin.url("missing.jpg").absoluteString, "# a comment", "", "ftp://example.com/a.jpg"])
                .joined(separator: "\n")
            let run = try await Self.prefetch(["--cache-dir", directory.path], input: list)
            #expect(run.status == 1, "\(run.output)\(run.errors)")
            #expect(run.output.contains("prefetched 3 of 4"), "\(run.output)")
            #expect(
                run.output.contains(
                    "failed (1): the origin answered HTTP 404\n  \(origin.url("missing.jpg").absoluteString)"),
                "\(run.output)")
            #expect(run.output.contains("failed (1): not an http(s) URL\n  ftp://example.com/a.jpg"), "\(run.output)")
            #expect(run.errors.contains("4/4  1 failed"), "plain progress lines off a terminal: \(run.errors)")
            #expect(origin.requestCount == 4)
            // Again, only what is in the cache: nothing downloaded, exit 0.
            let again = try await Self.prefetch(["--cache-dir", directory.path], input: good.joined(separator: "\n"))
            #expect(again.status == 0, "\(again.output)")
            #expect(again.output.contains("prefetched 3 of 3"), "\(again.output)")
            #expect(origin.requestCount == 4)
            // Thumbnails at two sizes: decoded and stored beside the originals, no download.
            let sized = try await Self.prefetch(
                ["--cache-dir", directory.path, "--sizes", "64x64,100x0"], input: good[0])
            #expect(sized.status == 0, "\(sized.output)")
            #expect(sized.output.contains("prefetched 2 of 2 (1 URLs × 2 sizes)"), "\(sized.output)")
            #expect(origin.requestCount == 4)
            let disk = try DiskCache(directory: directory)
            #expect(disk.count == 5, "3 originals, 2 thumbnails")
        }
        try await origin.shutdown()
    }

    @Test func ctrlCStopsCleanlyAndLeavesTheCacheUsable() async throws {
        let origin = try await TestOrigin.serving(directory: Fixtures.directory)
        try await withTemporaryDirectory { directory in
            let list =
                (0..<20).map { origin.url("chelsea.png?n=\($0)&held=1").absoluteString }
                + [origin.url("rocket.jpg").absoluteString]
            let run = try await Self.prefetch(
                ["--cache-dir", directory.path, "--concurrency", "2"],
                input: ([list.last!] + list.dropLast()).joined(separator: "\n"),
                interruptWhen: { origin.requestCount >= 3 }
            )
            #expect(run.status == 130, "\(run.output)\(run.errors)")
            #expect(run.output.contains("interrupted: 20 not prefetched"), "\(run.output)")
            #expect(origin.requestCount == 3, "nothing queued started after Ctrl-C")
            let disk = try DiskCache(directory: directory)
            #expect(disk.count == 1, "the one finished before Ctrl-C")
        }
        try await origin.shutdown()
    }
}
