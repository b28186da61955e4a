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
            The URL is http://HOST:PORT/health with the address serve reads from the same places: IMAGERY_HOST \
            and IMAGERY_PORT (or their keys' variables), imgproxy's IMGPROXY_BIND, IMAGERY_CONFIG's file, the \
            --defaults file given here (the one serve was given); else 127.0.0.1:8080. A server listening on \
            every interface is asked on the loopback. --url names another.
            """
    )

    @Option(help: "The URL to ask (default: /health where serve listens, read as serve reads it).")
    var url: String?

    @Option(help: "The --defaults file serve was given: where it listens is read from it too.")
    var defaults: String?

    @Option(help: "Seconds to wait for the answer (default 3).")
    var timeout = 3

    func validate() throws {
        guard (1...300).contains(timeout) else { throw ValidationError("--timeout takes 1 to 300 seconds") }
        if let url, URL(string: url)?.scheme.map({ ["http", "https"].contains($0) }) != true {
            throw ValidationError("--url takes an http or https URL, not '\(url)'")
        }
    }

    /// The URL asked: `--url`, else `/health` where `serve` listens given `environment` and `--defaults`
    /// (serve's own reading of them: ``ImageryCommand/arguments(_:environment:note:)`` and
    /// ``ServeCommand/loadConfiguration(environment:note:)``).
    /// - Throws: `ValidationError` when serve could not start with these settings either.
    func healthURL(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> URL {
        if let url, let parsed = URL(string: url) { return parsed }
        let given = ["serve"] + (defaults.map { ["--defaults", $0] } ?? [])
        let arguments = try ImageryCommand.arguments(given, environment: environment, note: { _ in })
        let serve = try ServeCommand.parse(Array(arguments.dropFirst()))
        let listener = try serve.loadConfiguration(environment: environment, note: { _ in }).configuration.listener
        let host =
            switch listener.host {
            case "", "0.0.0.0": "127.0.0.1"
            case "::", "[::]": "[::1]"
            case let host where host.contains(":") && !host.hasPrefix("["): "[\(host)]"
            case let host: host
            }
        guard let url = URL(string: "http://\(host):\(listener.port)/health") else {
            throw ValidationError("no health URL for the listening address \(listener.host):\(listener.port)")
        }
        return url
    }

    func run() async throws {
        var configuration = HTTPDataLoader.Configuration()
        (configuration.timeout, configuration.connectTimeout) = (.seconds(timeout), .seconds(timeout))
        configuration.maximumSize = 1 << 20
        let loader = HTTPDataLoader(configuration: configuration)
        let target: URL
        do {
            target = try healthURL()
        } catch {
            FileHandle.standardError.write(Data("imagery health: \(error)\n".utf8))
            throw ExitCode(1)
        }
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
