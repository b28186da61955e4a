import Foundation
import Hummingbird
import HummingbirdTesting
import Imagery
import ImageryHTTP
import ImageryTestSupport
import NIOConcurrencyHelpers
import Testing

/// `imagery serve` (the real executable) is killed with SIGKILL while it answers and stores
/// responses, again and again on one cache directory. Whatever it answers, in any round and
/// after, must be byte for byte what a server with a fresh cache answers.
@Suite("Proxy crash safety")
struct ServerCrashTests {
    static var executable: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("imagery")
    }

    /// 5 fixtures x 4 sizes x 3 outputs: 60 distinct responses.
    static func paths() -> [String] {
        var paths: [String] = []
        for name in ["rocket.jpg", "rocket-portrait.jpg", "camera-gray.jpg", "chelsea.png", "chelsea.webp"] {
            for width in [64, 120, 200, 333] {
                for output in ["", "&format=png", "&format=webp"] {
                    paths.append("\(name)?cc=max-age%3D600|w=\(width)\(output)")
                }
            }
        }
        return paths
    }

    /// Each killed round is killed once it has answered a number of requests drawn at random (0 to 20 of
    /// 60, so some rounds die before any write, others mid-way): when, in events, not in time. The last
    /// round is not killed: its requests go four at a time (nothing waits long enough for admission to
    /// refuse it), and each may take as long as the hang guard.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: executable.path)))
    func killedMidWriteItNeverAnswersOtherBytesThanAFreshCache() async throws {
        let rounds = Int(ProcessInfo.processInfo.environment["IMAGERY_SERVER_CRASH_ROUNDS"] ?? "") ?? 6
        // The client: released at the end, it shuts itself down.
        var loaderConfiguration = HTTPDataLoader.Configuration()
        loaderConfiguration.timeout = hangGuard
        let loader = HTTPDataLoader(configuration: loaderConfiguration)
        try await withOriginAndDirectory { origin, directory in
            let uris = Self.paths().map { path in
                let parts = path.split(separator: "|").map(String.init)
                return imageURI(origin, parts[0], parts[1])
            }
            // What a fresh cache answers.
            let expected = Box<[String: Data]>()
            try await serve(
                origin: origin, configure: { $0.caching.directory = directory.appendingPathComponent("fresh") }
            ) { client in
                var bodies: [String: Data] = [:]
                for uri in uris { bodies[uri] = try await get(client, uri).body }
                expected.value = bodies
            }
            let fresh = try #require(expected.value)
            let cache = directory.appendingPathComponent("killed")
            let settings = directory.appendingPathComponent("serve.json")
            let guardSeconds = hangGuard.components.seconds
            let timeouts = ["requestTimeoutSeconds", "originTimeoutSeconds", "idleTimeoutSeconds"]
                .map { "\"\($0)\": \(guardSeconds)" }
            try Data("{\(timeouts.joined(separator: ", "))}".utf8).write(to: settings)
            var answered = 0
            var differing: [String] = []
            for round in 0...rounds {
                let server = try await ServerProcess.start(Self.executable, cacheDirectory: cache, settings: settings)
                let last = round == rounds  // the last round is not killed: it answers everything
                let finished = NIOLockedValueBox(0)
                let killAfter = Int.random(in: 0...20)
                let results = try await withThrowingTaskGroup(of: (String, Data?).self) { group in
                    var pending = uris.shuffled()[...]
                    var results: [(String, Data?)] = []
                    func ask(_ uri: String) {
                        group.addTask {
                            let url = URL(string: "http://127.0.0.1:\(server.port)\(uri)")!
                            let response = try? await loader.load(DataRequest(url: url), progress: { _ in })
                            finished.withLockedValue { $0 += 1 }
                            return (uri, response?.statusCode == 200 ? response?.data : nil)
                        }
                    }
                    if last {
                        // Four at a time.
                        while results.count < uris.count {
                            while let uri = pending.first, uris.count - pending.count - results.count < 4 {
                                pending = pending.dropFirst()
                                ask(uri)
                            }
                            guard let result = try await group.next() else { break }
                            results.append(result)
                        }
                    } else {
                        // All at once; killed after `killAfter` answers, what is still asked then given up
                        // (the client would try to reconnect to the dead server until its connect timeout).
                        for uri in pending { ask(uri) }
                        try await waitUntil("\(killAfter) answers before the kill") {
                            finished.withLockedValue { $0 } >= killAfter
                        }
                        server.kill()
                        group.cancelAll()
                        while let result = try await group.next() { results.append(result) }
                    }
                    return results
                }
                server.kill()
                for (uri, body) in results {
                    guard let body else { continue }
                    answered += 1
                    if body != fresh[uri] { differing.append("round \(round): \(uri)") }
                }
                if last { #expect(results.allSatisfy { $0.1 != nil }, "the last round answers every request") }
            }
            #expect(differing.isEmpty, "\(differing.count) of \(answered) answers differ: \(differing.prefix(5))")
            #expect(answered >= uris.count)
        }
    }
}

/// `imagery serve` as a child process on a free port of 127.0.0.1.
final class ServerProcess: Sendable {
    let process: ChildProcess
    let port: Int

    private init(process: ChildProcess, port: Int) {
        self.process = process
        self.port = port
    }

    /// Starts it on `cacheDirectory` (127.0.0.1 allowed as a source), with the configuration file
    /// `settings` if given, and waits for the port it logs.
    static func start(_ executable: URL, cacheDirectory: URL, settings: URL? = nil) async throws -> ServerProcess {
        try await runBlocking {
            let process = try ChildProcess(
                executable.path,
                ["serve", "--port", "0", "--cache-dir", cacheDirectory.path, "--allow-private-host", "127.0.0.1"]
                    + (settings.map { ["--config", $0.path] } ?? []),
                output: .pipe
            )
            var seen = ""
            let reader = process.standardOutput!
            while !seen.contains("listening on") || !seen.hasSuffix("\n") {
                let chunk = reader.availableData
                if chunk.isEmpty { break }
                seen += String(decoding: chunk, as: UTF8.self)
            }
            guard let line = seen.split(separator: "\n").first(where: { $0.contains("listening on") }),
                let port = line.split(separator: ":").last.flatMap({ Int($0.trimmingCharacters(in: .whitespaces)) })
            else {
                process.send(SIGTERM)
                process.wait()
                throw ServerProcessError(output: seen)
            }
            // Keep reading its log so that it never blocks on a full pipe.
            Thread { while !reader.availableData.isEmpty {} }.start()
            return ServerProcess(process: process, port: port)
        }
    }

    /// SIGKILL, and wait for the process to end.
    func kill() {
        process.send(SIGKILL)
        process.wait()
    }
}

struct ServerProcessError: Error, CustomStringConvertible {
    let output: String
    var description: String { "imagery serve did not start: \(output)" }
}
