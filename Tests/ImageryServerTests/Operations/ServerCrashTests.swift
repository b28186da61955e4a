import Foundation
import Hummingbird
import HummingbirdTesting
import Imagery
import ImageryHTTP
import ImageryTestSupport
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

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: executable.path)))
    func killedMidWriteItNeverAnswersOtherBytesThanAFreshCache() async throws {
        let rounds = Int(ProcessInfo.processInfo.environment["IMAGERY_SERVER_CRASH_ROUNDS"] ?? "") ?? 6
        // The client: released at the end, it shuts itself down.
        let loader = HTTPDataLoader()
        try await withOriginAndDirectory { origin, directory in
            let uris = Self.paths().map { path in
                let parts = path.split(separator: "|").map(String.init)
                return imageURI(origin, parts[0], parts[1])
            }
            // What a fresh cache answers.
            let expected = Box<[String: Data]>()
            try await serve(origin: origin, configure: { $0.cacheDirectory = directory.appendingPathComponent("fresh") }) { client in
                var bodies: [String: Data] = [:]
                for uri in uris { bodies[uri] = try await get(client, uri).body }
                expected.value = bodies
            }
            let fresh = try #require(expected.value)
            let cache = directory.appendingPathComponent("killed")
            var answered = 0
            var differing: [String] = []
            for round in 0...rounds {
                let server = try await ServerProcess.start(Self.executable, cacheDirectory: cache)
                let last = round == rounds  // the last round is not killed: it answers everything
                let killer = Task {
                    guard !last else { return }
                    try await Task.sleep(for: .milliseconds(Int.random(in: 20...400)))
                    server.kill()
                }
                let results = await withTaskGroup(of: (String, Data?).self) { group in
                    for uri in uris.shuffled() {
                        group.addTask {
                            let url = URL(string: "http://127.0.0.1:\(server.port)\(uri)")!
                            let response = try? await loader.load(DataRequest(url: url), progress: { _ in })
                            return (uri, response?.statusCode == 200 ? response?.data : nil)
                        }
                    }
                    return await group.reduce(into: [(String, Data?)]()) { $0.append($1) }
                }
                _ = try? await killer.value
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

    /// Starts it on `cacheDirectory` (127.0.0.1 allowed as a source) and waits for the port it logs.
    static func start(_ executable: URL, cacheDirectory: URL) async throws -> ServerProcess {
        try await runBlocking {
            let process = try ChildProcess(
                executable.path, ["serve", "--port", "0", "--cache-dir", cacheDirectory.path, "--allow-private-host", "127.0.0.1"],
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
