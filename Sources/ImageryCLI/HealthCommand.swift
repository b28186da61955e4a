import ArgumentParser
import Foundation
import Imagery
import ImageryHTTP

/// `imagery health`: asks a running `imagery serve` for `/health` and exits 0 when it answers 200, 1
/// otherwise: a container's health check, with no curl or shell in the image.
struct HealthCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "health",
        abstract: "Exit 0 when a running imagery serve answers /health with 200, 1 otherwise.",
        discussion: """
            The URL is http://127.0.0.1:PORT/health, PORT from IMAGERY_PORT (or IMAGERY_LISTENER_PORT) as \
            serve reads it, else 8080; --url names another.
            """
    )

    @Option(help: "The URL to ask (default http://127.0.0.1:PORT/health, PORT from IMAGERY_PORT, else 8080).")
    var url: String?

    @Option(help: "Seconds to wait for the answer (default 3).")
    var timeout = 3

    func validate() throws {
        guard (1...300).contains(timeout) else { throw ValidationError("--timeout takes 1 to 300 seconds") }
        if let url, URL(string: url)?.scheme.map({ ["http", "https"].contains($0) }) != true {
            throw ValidationError("--url takes an http or https URL, not '\(url)'")
        }
    }

    /// The URL asked: `--url`, else `/health` on the port `environment` gives `serve`.
    func healthURL(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        if let url, let parsed = URL(string: url) { return parsed }
        let port = (environment["IMAGERY_PORT"] ?? environment["IMAGERY_LISTENER_PORT"]).flatMap(Int.init) ?? 8080
        return URL(string: "http://127.0.0.1:\(port)/health")!
    }

    func run() async throws {
        var configuration = HTTPDataLoader.Configuration()
        (configuration.timeout, configuration.connectTimeout) = (.seconds(timeout), .seconds(timeout))
        configuration.maximumSize = 1 << 20
        let loader = HTTPDataLoader(configuration: configuration)
        let target = healthURL()
        let failure: String?
        do {
            _ = try await loader.load(DataRequest(url: target)) { _ in }
            failure = nil
        } catch {
            failure = "\(error)"
        }
        try? await loader.shutdown()
        if let failure {
            FileHandle.standardError.write(Data("imagery health: \(target.absoluteString): \(failure)\n".utf8))
            throw ExitCode(1)
        }
    }
}
