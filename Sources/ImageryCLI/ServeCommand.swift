import ArgumentParser
import Foundation
import Hummingbird
import ImageryServer

/// `imagery serve`: the image proxy.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the image proxy: GET /image?url=...&w=...&h=...&fit=...&format=...&q=..., GET /health.",
        discussion: """
            Sources on loopback, private, link-local and multicast addresses are refused unless their host \
            is named with --allow-private-host. Limits on source bytes, pixels and origin time are on by default.
            """
    )

    @Option(help: "The address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "The port to listen on.")
    var port = 8080

    @Option(help: "The disk cache directory.")
    var cacheDir = ".imagery-cache"

    @Flag(help: "Run without a disk cache.")
    var noDiskCache = false

    @Option(help: "Memory for cached responses and images: bytes, or with K, M, G (e.g. 256M).")
    var memoryLimit = "256M"

    @Option(help: "Disk cache size: bytes, or with K, M, G (e.g. 2G).")
    var diskLimit = "2G"

    @Option(name: .customLong("allow-host"), help: "Only fetch from this host (repeatable; *.example.com for subdomains).")
    var allowedHosts: [String] = []

    @Option(name: .customLong("allow-private-host"), help: "Fetch from this host even if it resolves to a private or loopback address (repeatable).")
    var privateNetworkHosts: [String] = []

    @Option(help: "Require every /image query to be signed: &sig=base64url(HMAC-SHA256(key, query before &sig=)). Default: $IMAGERY_SIGNING_KEY if set.")
    var signingKey: String?

    @Option(help: "Cache-Control max-age of image responses, in seconds.")
    var maxAge = 86_400

    func run() async throws {
        guard let memory = parseBytes(memoryLimit), let disk = parseBytes(diskLimit) else {
            throw ValidationError("--memory-limit and --disk-limit take a byte count such as 268435456, 256M or 2G")
        }
        var configuration = ServerConfiguration()
        configuration.host = host
        configuration.port = port
        configuration.cacheDirectory = noDiskCache ? nil : URL(fileURLWithPath: cacheDir)
        configuration.memoryLimit = memory
        configuration.diskLimit = disk
        configuration.allowedHosts = allowedHosts
        configuration.privateNetworkHosts = privateNetworkHosts
        configuration.responseMaxAge = maxAge
        configuration.signingKey = signingKey ?? ProcessInfo.processInfo.environment["IMAGERY_SIGNING_KEY"]
        let application: any ApplicationProtocol
        do {
            application = try buildApplication(configuration: configuration)
        } catch {
            throw CommandFailure(message: "\(error)")
        }
        try await application.runService()
    }
}
