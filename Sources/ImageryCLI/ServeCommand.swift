import ArgumentParser
import Configuration
import Foundation
import Hummingbird
import ImageryServer
import Logging

/// `imagery serve`: the image proxy.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract:
            "Run the image proxy: GET /image?url=...&w=...&h=...&fit=...&format=...&q=..., a gallery at /, /health, /metrics.",
        discussion: """
            Sources on loopback, private, link-local and multicast addresses are refused unless their host \
            is named with --allow-private-host. Limits on source bytes, pixels and origin time are on by default.

            Every setting has one key (--print-config lists them with their values), read from the first of: \
            the command line (its options, and --set KEY=VALUE for any key); the environment (IMAGERY_ and the key \
            in capitals, IMAGERY_LIMITS_MEMORY_LIMIT=1G, or the option's name, IMAGERY_MEMORY_LIMIT=1G; a list's \
            items separated by commas, IMAGERY_ALLOW_HOST=a.example,b.example); imgproxy's IMGPROXY_* variables; \
            --thumbor-config's file; --config's file; --defaults' file. A key none of them sets keeps its default.
            """
    )

    @Option(
        help:
            "A JSON or YAML (.yaml, .yml) configuration file: the configuration keys in parts ({\"limits\": {\"memoryLimit\": \"1G\"}}; --print-config lists them); options and variables given override it."
    )
    var config: String?

    @Option(
        help:
            "A configuration file as --config's, read below every other source: defaults for a deployment (the container image's: listen on 0.0.0.0:8080, the cache in its volume), which variables, imgproxy's too, and --config override."
    )
    var defaults: String?

    @Option(help: "The address to listen on (default 127.0.0.1).")
    var host: String?

    @Option(help: "The port to listen on (default 8080).")
    var port: Int?

    @Option(help: "The disk cache directory (default .imagery-cache).")
    var cacheDir: String?

    @Flag(help: "Run without a disk cache.")
    var noDiskCache = false

    @Option(
        help:
            "Memory for the caches and the work in flight together: bytes, or with K, M, G (default 128M a usable processor, at least 512M, at most half the memory the process may use)."
    )
    var memoryLimit: String?

    @Option(
        help:
            "Of --memory-limit, the bytes downloads and decodes in flight may hold at once (default: half); more waits, or is answered 503 with Retry-After."
    )
    var maxInflightMemory: String?

    @Option(
        help:
            "The most requests waiting for memory or a decode at once; more are answered 503 (default 32 a usable processor, at least 64)."
    )
    var admissionQueue: Int?

    @Option(
        help:
            "The longest, in seconds, a request waits for memory before it is answered 503 (default: as long as it can still be answered within --request-timeout at the pace decodes go; what cannot is answered 503 at once)."
    )
    var admissionTimeout: Double?

    @Option(
        help:
            "Close a connection that sends no complete request for this many seconds: idle, or dripping its headers (default 30)."
    )
    var idleTimeout: Double?

    @Option(
        help:
            "The longest, in seconds, an image may take to make; past it the work is cancelled and the answer is 504 (default 30)."
    )
    var requestTimeout: Double?

    @Option(help: "The most connections open at once (default 10000).")
    var maxConnections: Int?

    @Option(help: "Disk cache size: bytes, or with K, M, G (default 2G).")
    var diskLimit: String?

    @Option(
        name: .customLong("allow-host"), help: "Only fetch from this host (repeatable; *.example.com for subdomains).")
    var allowedHosts: [String] = []

    @Option(
        name: .customLong("allow-private-host"),
        help: "Fetch from this host even if it resolves to a private or loopback address (repeatable).")
    var privateNetworkHosts: [String] = []

    @Option(
        help:
            "Require every /image query to be signed: &sig=base64url(HMAC-SHA256(key, query before &sig=)). Better given as $IMAGERY_SIGNING_KEY (ps shows arguments to every user)."
    )
    var signingKey: String?

    @Option(
        help:
            "thumbor's SECURITY_KEY: thumbor URLs must be signed with it (HMAC-SHA1, as libthumbor signs them); /unsafe/ is refused. Better given as $IMAGERY_THUMBOR_KEY."
    )
    var thumborKey: String?

    @Option(
        help:
            "A thumbor configuration file (thumbor.conf): its SECURITY_KEY, ALLOW_UNSAFE_URL, QUALITY, AUTO_WEBP, MAX_AGE, ALLOWED_SOURCES, RESPECT_ORIENTATION, MAX_WIDTH, MAX_HEIGHT, FILTERS and more are applied, with thumbor's defaults for what it leaves out; the rest is listed at start. Read after --config, before the other options."
    )
    var thumborConfig: String?

    @Option(
        help:
            "imgproxy's IMGPROXY_KEY: hex keys, comma-separated; imgproxy URLs must be signed (HMAC-SHA256 of salt + path). Default: $IMGPROXY_KEY if set."
    )
    var imgproxyKey: String?

    @Option(help: "imgproxy's IMGPROXY_SALT: hex salts, comma-separated, one per key. Default: $IMGPROXY_SALT if set.")
    var imgproxySalt: String?

    @Option(
        help:
            "The longest Cache-Control max-age of image responses, in seconds; less when the source's freshness runs out sooner (default 86400)."
    )
    var maxAge: Int?

    @Option(
        help:
            "Freshness, in seconds, given to sources whose origin states no expiry (no max-age, no Expires); explicit headers are followed (default 3600)."
    )
    var minimumFreshness: Int?

    @Option(help: "Show the images of this directory on the gallery page at / and serve them at /files/NAME.")
    var galleryDir: String?

    @Option(name: .customLong("gallery-url"), help: "An image URL to show on the gallery page (repeatable).")
    var galleryURLs: [String] = []

    @Option(
        name: .customLong("preset"),
        help:
            "A named set of /image parameters, NAME=QUERY (thumb='w=200&h=200&format=webp'); /image?preset=thumb uses it (repeatable)."
    )
    var presets: [String] = []

    @Flag(help: "Accept only presets on /image (url, preset and sig; any other parameter is a 400).")
    var onlyPresets = false

    @Option(
        name: .customLong("watermark"),
        help:
            "A watermark image, NAME=FILE (a PNG with alpha, usually); /image?watermark=NAME lays it over the output (repeatable)."
    )
    var watermarks: [String] = []

    @Option(
        help:
            "An S3-compatible store (http://127.0.0.1:8333, https://s3.eu-west-1.amazonaws.com) for --s3-bucket and --s3-source-bucket. Credentials: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or --s3-credentials-file."
    )
    var s3Endpoint: String?

    @Option(help: "The S3 store's region (default us-east-1).")
    var s3Region: String?

    @Option(
        help:
            "A bucket shared by every instance: originals and stored responses, looked up after this instance's memory and disk, before the origin."
    )
    var s3Bucket: String?

    @Option(help: "The prefix of the shared objects' names (default imagery/).")
    var s3Prefix: String?

    @Option(
        help:
            "An AWS shared credentials file ([default] with aws_access_key_id and aws_secret_access_key); default: the environment."
    )
    var s3CredentialsFile: String?

    @Option(
        name: .customLong("s3-source-bucket"),
        help: "A bucket url=s3://BUCKET/KEY sources may be read from (repeatable; any other bucket is 403).")
    var s3SourceBuckets: [String] = []

    @Option(
        name: .customLong("cluster-instance"),
        help:
            "HOST:PORT of every instance of the cluster, this one included, as given to `imagery cluster nginx-config --instance` (repeatable): a request whose source another instance owns is sent there. Needs --cluster-self."
    )
    var clusterInstances: [String] = []

    @Option(help: "This instance's HOST:PORT among --cluster-instance.")
    var clusterSelf: String?

    @Option(
        name: .customLong("set"),
        help:
            "Any configuration key, KEY=VALUE (limits.maximumFrames=200; a list's items separated by commas); repeatable."
    )
    var settings: [String] = []

    @Flag(
        help: "Print the effective configuration (each key, its value, where it came from; secrets redacted) and exit.")
    var printConfig = false

    @Flag(help: "Print every configuration key as a Markdown table (the README's) and exit.")
    var printSettings = false

    @Option(
        help:
            "Log lines as text (default) or json (one object a line: time, level, label, message and the request's fields)."
    )
    var logFormat: ServerLogHandler.Format = .text

    func run() async throws {
        // First: NIO's shared threads are sized at their first use.
        ServerThreads.fitToUsableProcessors(environment: ProcessInfo.processInfo.environment)
        if printSettings {
            print(ServerConfiguration.settingsTable(), terminator: "")
            return
        }
        let loaded = try loadConfiguration()
        if printConfig {
            print(loaded.printed(), terminator: "")
            return
        }
        var configuration = loaded.configuration
        let logFormat = logFormat
        LoggingSystem.bootstrap { label in
            ServerLogHandler.standardOutput(label: label, metadataProvider: nil, format: logFormat)
        }
        raiseDescriptorLimit()
        ProcessMemory.limitArenas(to: 2)
        ProcessMemory.keepFreedMemory(trimThreshold: configuration.limits.memoryLimit / 4)
        let application: any ApplicationProtocol
        do {
            configuration = try await configuration.downloadingRemoteImages()  // imgproxy's *_URL images, once
            application = try buildApplication(configuration: configuration)
        } catch {
            throw CommandFailure(message: "\(error)")
        }
        try await application.runService()
    }

    /// The server's configuration these options make: ``configurationLayers(environment:note:)`` read
    /// through swift-configuration (``ConfigurationLoader``) and validated. Starts nothing: ``run()``
    /// serves what it returns.
    /// - Parameters:
    ///   - environment: Where the `IMAGERY_*` and `IMGPROXY_*` variables are read. Default: the process's environment.
    ///   - note: Told what was read but is not applied (a setting not supported, a name unknown).
    ///     Default: standard error, each line after `imagery serve: `.
    /// - Throws: `ValidationError` naming the key, where its value came from and what it takes (what the
    ///   user sees, after `Error: `).
    func serverConfiguration(
        environment: [String: String] = ProcessInfo.processInfo.environment,
        note: (String) -> Void = ServeCommand.writeNote
    ) throws -> ServerConfiguration {
        try loadConfiguration(environment: environment, note: note).configuration
    }

    /// ``serverConfiguration(environment:note:)`` with where each value came from (`--print-config`).
    func loadConfiguration(
        environment: [String: String] = ProcessInfo.processInfo.environment,
        note: (String) -> Void = ServeCommand.writeNote
    ) throws -> ConfigurationLoader.Result {
        let layers = try configurationLayers(environment: environment, note: note)
        do {
            return try ConfigurationLoader.load(layers)
        } catch {
            throw ValidationError(error.message)
        }
    }

    /// Writes `line` to standard error after `imagery serve: `.
    static func writeNote(_ line: String) {
        FileHandle.standardError.write(Data("imagery serve: \(line)\n".utf8))
    }
}

/// Raises the soft limit on open descriptors to the hard limit (as nginx's `worker_rlimit_nofile`
/// and Go's runtime do): a server holds a descriptor per connection and keeps hot cache files
/// open (``DiskCache/Configuration/openFileLimit`` is half of this limit), and the soft
/// default of many systems (1 024) is far below what the hard limit allows.
private func raiseDescriptorLimit() {
    #if os(Linux)
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
        let resource = RLIMIT_NOFILE
    #endif
    var limit = rlimit()
    guard getrlimit(resource, &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
    limit.rlim_cur = limit.rlim_max
    _ = setrlimit(resource, &limit)
}

extension ServerLogHandler.Format: ExpressibleByArgument {}
