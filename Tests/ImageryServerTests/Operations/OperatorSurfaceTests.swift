import Foundation
import Imagery
import ImageryTestSupport
import Logging
import Testing

@testable import ImageryServer

/// What an operator configures and reads: `IMAGERY_*` variables (the real executable), JSON log lines,
/// and the nginx configuration of a cluster.
@Suite("Operator surface")
struct OperatorSurfaceTests {
    struct Run {
        let status: Int32
        let output: String
        let errors: String
    }

    /// Runs `imagery ARGUMENTS` with `environment` added to this process's, until it exits or
    /// `until` says so (then it is sent SIGTERM; waited for under the hang guard).
    static func imagery(
        _ arguments: [String], environment: [String: String], until: (@Sendable (String) -> Bool)? = nil
    ) async throws -> Run {
        try await runBlocking {
            let process = try ChildProcess(
                ServerCrashTests.executable.path, arguments,
                environment: ProcessInfo.processInfo.environment.merging(environment) { $1 },
                output: .pipe, error: .pipe
            )
            let (stdout, stderr) = (process.standardOutput!, process.standardError!)
            var output = Data()
            if let until {
                let deadline = ContinuousClock.now + hangGuard
                while ContinuousClock.now < deadline, process.isRunning {
                    output += stdout.availableData
                    if until(String(decoding: output, as: UTF8.self)) { break }
                }
                process.send(SIGTERM)
            }
            output += stdout.readDataToEndOfFile()
            let errors = stderr.readDataToEndOfFile()
            return Run(
                status: process.wait().status, output: String(decoding: output, as: UTF8.self),
                errors: String(decoding: errors, as: UTF8.self))
        }
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: ServerCrashTests.executable.path)))
    func everyServeOptionFromTheEnvironment() async throws {
        // A bad value is reported under its key and the variable that gave it.
        let bad = try await Self.imagery(["serve"], environment: ["IMAGERY_MEMORY_LIMIT": "lots"])
        #expect(bad.status != 0)
        #expect(
            bad.errors.contains("limits.memoryLimit (IMAGERY_MEMORY_LIMIT, environment): takes a byte count"),
            "\(bad.errors)")
        let flag = try await Self.imagery(["serve"], environment: ["IMAGERY_NO_DISK_CACHE": "maybe"])
        #expect(flag.status != 0)
        #expect(flag.errors.contains("IMAGERY_NO_DISK_CACHE must be true or false"), "\(flag.errors)")
        // The command line wins over the environment.
        let overridden = try await Self.imagery(
            ["serve", "--memory-limit", "lots-too"], environment: ["IMAGERY_MEMORY_LIMIT": "1G"])
        #expect(
            overridden.errors.contains("limits.memoryLimit (--memory-limit, command line): takes a byte count"),
            "\(overridden.errors)")
        // A whole server from the environment: port, no disk cache, repeatable hosts, JSON logs; an unknown name is reported.
        // Below the ports other tests' stores take (SeaweedFS: 12 000 to 32 003) and Linux's ephemeral
        // range (32 768 and up), where the suite's own servers listen: 30 000-40 000 met one in CI.
        let port = Int.random(in: 2_000..<9_000)
        let run = try await Self.imagery(
            ["serve"],
            environment: [
                "IMAGERY_PORT": "\(port)", "IMAGERY_NO_DISK_CACHE": "true",
                "IMAGERY_ALLOW_HOST": "a.example, *.b.example",
                "IMAGERY_LOG_FORMAT": "json", "IMAGERY_MEMORY_LIMT": "1G",
            ],
            until: { $0.contains("\"startup\":\"settings\"") }
        )
        #expect(run.errors.contains("ignoring IMAGERY_MEMORY_LIMT"), "\(run.errors)")
        let line = try #require(
            run.output.split(separator: "\n").first { $0.contains("Server started") }, "\(run.output)\(run.errors)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["level"] as? String == "info")
        #expect((object["message"] as? String)?.contains("127.0.0.1:\(port)") == true, "\(line)")
        // Then what it derived: its event loops sized before NIO's first use (NIO stops a process that resizes them later).
        let settings = try #require(run.output.split(separator: "\n").first { $0.contains("\"startup\":\"settings\"") })
        let message =
            try #require(try JSONSerialization.jsonObject(with: Data(settings.utf8)) as? [String: Any])["message"]
            as? String
        let processors = UsableProcessors.current.count
        #expect(
            message?.contains("at once: \(processors) decodes, \(processors) encodes, \(processors) event loops")
                == true, "\(settings)")
        let defaults = ServerConfiguration()
        let memory =
            "memory limit \(defaults.limits.memoryLimit >> 20) MiB (in flight \(defaults.limits.inflightMemory >> 20) MiB; "
            + "admission held back over \(defaults.limits.residentCeiling >> 20) MiB"
        #expect(message?.contains(memory) == true, "\(settings)")
        #expect(message?.contains("at most \(defaults.listener.maximumConnections) connections") == true, "\(settings)")
    }

    /// At start the server says what it derived from the machine and runs with (one line after Hummingbird's
    /// "Server started"), and `/metrics` counts episodes of admission held back for resident memory (none
    /// here: a 4 GiB limit is far over what the test process holds).
    @Test func theServerSaysWhatItRunsWithAndCountsResidentPressure() async throws {
        let log = CapturedLog()
        let origin = try await TestOrigin.serving(directory: Fixtures.directory)
        let configure = { (configuration: inout ServerConfiguration) in
            configuration.limits.memoryLimit = 4 << 30
            configuration.listener.maximumConnections = 77
        }
        do {
            try await serve(.live, origin: origin, logger: log.logger, configure: configure) { client in
                let lines = log.lines(withMetadata: "startup", "settings")
                #expect(lines.count == 1, "\(lines)")
                let line = lines.first ?? ""
                #expect(line.contains("usable processors: \(UsableProcessors.current);"), "\(line)")
                #expect(line.contains("at once: \(UsableProcessors.current.count) decodes"), "\(line)")
                #expect(
                    line.contains("memory limit 4096 MiB (in flight 2048 MiB; admission held back over 4196 MiB"),
                    "\(line)")
                #expect(
                    line.contains(
                        "at most 77 connections, \(ServerConfiguration().origins.maximumConcurrentFetches) origin fetches at once"
                    ), "\(line)")
                let figures = try await metrics(client)
                #expect(figures["imagery_admission_resident_pressure_total"] == 0)
                #expect(figures["imagery_admission_resident_pressure_seconds_total"] == 0)
            }
        } catch {
            try? await origin.shutdown()
            throw error
        }
        try await origin.shutdown()
    }

    @Test func jsonLogLinesAreOneObjectEach() throws {
        let pipe = Pipe()
        var handler = ServerLogHandler(
            label: "imagery.server", descriptor: pipe.fileHandleForWriting.fileDescriptor, metadataProvider: nil,
            format: .json)
        handler.metadata["instance"] = "a"
        handler.log(
            event: LogEvent(
                level: .info, message: "request \"quoted\"\n",
                metadata: ["status": "200", "ms": "1.5", "path": "/image", "odd": "007", "tab": "a\tb\u{1}"],
                source: "test", file: #fileID, function: #function, line: #line
            ))
        try pipe.fileHandleForWriting.close()
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(text.hasSuffix("}\n"))
        #expect(text.split(separator: "\n").count == 1)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(object["message"] as? String == "request \"quoted\"\n")
        #expect(object["status"] as? Int == 200)
        #expect(object["ms"] as? Double == 1.5)
        #expect(object["odd"] as? String == "007", "not a JSON number: kept a string")
        #expect(object["tab"] as? String == "a\tb\u{1}")
        #expect(object["instance"] as? String == "a")
        #expect(object["label"] as? String == "imagery.server")
    }

    /// A text line: metadata sorted by key, the handler's, then the provider's, then the event's,
    /// a later one replacing an earlier one of the same key.
    @Test func textLogLinesSortMetadataAndLaterSourcesWin() throws {
        let pipe = Pipe()
        let provider = Logger.MetadataProvider { ["trace": "p", "zone": "provided"] }
        var handler = ServerLogHandler(
            label: "imagery.server", descriptor: pipe.fileHandleForWriting.fileDescriptor, metadataProvider: provider)
        handler.metadata["zone"] = "handler"
        handler.metadata["instance"] = "a"
        handler.metadata["status"] = "0"
        handler.log(
            event: LogEvent(
                level: .info, message: "request", metadata: ["status": "200", "method": "GET", "bytes": "12"],
                source: "test", file: #fileID, function: #function, line: #line
            ))
        try pipe.fileHandleForWriting.close()
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let fields = try #require(text.split(separator: ": ", maxSplits: 1).last)
        #expect(fields == "request bytes=12 instance=a method=GET status=200 trace=p zone=provided\n")
        #expect(text.contains(" info imagery.server: "))
    }

    /// The source each URL syntax is sharded by, read by the patterns nginx is given.
    @Test(arguments: [
        ("/image?w=200&url=https%3A%2F%2Fexample.com%2Fa.jpg", "$arg_url"),
        ("/info?url=https://example.com/b.jpg", "$arg_url"),
        ("/unsafe/300x200/smart/example.com/a.jpg", "http://example.com/a.jpg"),  // as the instances key it
        ("/unsafe/fit-in/300x200/filters:quality(80)/https://example.com/a%20b.jpg", "https://example.com/a%20b.jpg"),
        (
            "/unsafe/meta/trim/10x10:200x200/-300x-200/left/top/smart/filters:blur(2):format(webp)/example.com/c.png",
            "http://example.com/c.png"
        ),
        ("/AbCdEfGhIjKlMnOpQrStUvWxYz0=/300x0/example.com/a.jpg", "http://example.com/a.jpg"),
        ("/unsafe/300x200/localhost:8000/a.jpg", "http://localhost:8000/a.jpg"),  // a port is not a scheme
        ("/unsafe/300x200/https%3A%2F%2Fexample.com/a.jpg", "https%3A%2F%2Fexample.com/a.jpg"),
        ("/unsafe/rs:fill:300:200/plain/https://example.com/a.jpg@webp", "https://example.com/a.jpg"),
        ("/sig/rs:fill:300:200/g:sm/aHR0cHM6Ly9leGFtcGxlLmNvbS9hLmpwZw.webp", "aHR0cHM6Ly9leGFtcGxlLmNvbS9hLmpwZw"),
        ("/health", "$request_uri"),
    ])
    func theSourceEachSyntaxIsShardedBy(uri: String, source: String) throws {
        var found = "$request_uri"
        for (_, pattern, value) in NginxClusterConfiguration.sourcePatterns {
            let expression = try NSRegularExpression(pattern: pattern)
            guard let match = expression.firstMatch(in: uri, range: NSRange(uri.startIndex..., in: uri)) else {
                continue
            }
            if let variable = value.range(of: #"\$imagery[a-z]+"#, options: .regularExpression) {
                let group = match.range(withName: String(value[variable].dropFirst()))
                found = value.replacingCharacters(in: variable, with: uri[Range(group, in: uri)!])
            } else {
                found = value
            }
            break
        }
        #expect(found == source)
    }

    @Test func theGeneratedConfigurationIsOneNginxTakes() async throws {
        var configuration = NginxClusterConfiguration(
            instances: ["127.0.0.1:8081", "127.0.0.1:8082"], listen: "127.0.0.1:8080")
        #expect(configuration.renderServerBlocks().contains("hash $imagery_source consistent;"))
        configuration.balance = .roundRobin
        #expect(!configuration.renderServerBlocks().contains("hash "))
        guard
            let nginx = ["/usr/sbin/nginx", "/usr/local/sbin/nginx"].first(
                where: FileManager.default.isExecutableFile(atPath:))
        else { return }
        try await withTemporaryDirectory { directory in
            configuration.balance = .consistent
            let file = directory.appendingPathComponent("nginx.conf")
            try configuration.renderStandalone(directory: directory.path).write(
                to: file, atomically: true, encoding: .utf8)
            let check = try await runBlocking { () -> (Int32, String) in
                let (status, output) = try ChildProcess.run(
                    nginx, ["-t", "-c", file.path, "-p", directory.path], mergingErrors: true)
                return (status, String(decoding: output, as: UTF8.self))
            }
            #expect(check.0 == 0, "\(check.1)")
        }
    }
}
