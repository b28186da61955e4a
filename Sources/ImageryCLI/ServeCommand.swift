import ArgumentParser
import Foundation
import Hummingbird
import ImageryServer
import Logging

/// `imagery serve`: the image proxy.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the image proxy: GET /image?url=...&w=...&h=...&fit=...&format=...&q=..., a gallery at /, /health, /metrics.",
        discussion: """
            Sources on loopback, private, link-local and multicast addresses are refused unless their host \
            is named with --allow-private-host. Limits on source bytes, pixels and origin time are on by default.

            Every option can also be set in the environment: IMAGERY_ and its name in capitals with _ for - \
            (IMAGERY_MEMORY_LIMIT=1G, IMAGERY_NO_DISK_CACHE=true, IMAGERY_ALLOW_HOST=a.example,b.example \
            for a repeatable one). Options on the command line win over the environment, which wins over --config.
            """
    )

    @Option(help: "A JSON configuration file (keys: the ServerConfiguration property names); options given here override it.")
    var config: String?

    @Option(help: "The address to listen on (default 127.0.0.1).")
    var host: String?

    @Option(help: "The port to listen on (default 8080).")
    var port: Int?

    @Option(help: "The disk cache directory (default .imagery-cache).")
    var cacheDir: String?

    @Flag(help: "Run without a disk cache.")
    var noDiskCache = false

    @Option(help: "Memory for the caches and the work in flight together: bytes, or with K, M, G (default 128M a usable processor, at least 512M, at most half the memory the process may use).")
    var memoryLimit: String?

    @Option(help: "Of --memory-limit, the bytes downloads and decodes in flight may hold at once (default: half); more waits, or is answered 503 with Retry-After.")
    var maxInflightMemory: String?

    @Option(help: "The most requests waiting for memory or a decode at once; more are answered 503 (default 32 a usable processor, at least 64).")
    var admissionQueue: Int?

    @Option(help: "The longest, in seconds, a request waits for memory before it is answered 503 (default: as long as it can still be answered within --request-timeout at the pace decodes go; what cannot is answered 503 at once).")
    var admissionTimeout: Double?

    @Option(help: "Close a connection that sends no complete request for this many seconds: idle, or dripping its headers (default 30).")
    var idleTimeout: Double?

    @Option(help: "The longest, in seconds, an image may take to make; past it the work is cancelled and the answer is 504 (default 30).")
    var requestTimeout: Double?

    @Option(help: "The most connections open at once (default 10000).")
    var maxConnections: Int?

    @Option(help: "Disk cache size: bytes, or with K, M, G (default 2G).")
    var diskLimit: String?

    @Option(name: .customLong("allow-host"), help: "Only fetch from this host (repeatable; *.example.com for subdomains).")
    var allowedHosts: [String] = []

    @Option(name: .customLong("allow-private-host"), help: "Fetch from this host even if it resolves to a private or loopback address (repeatable).")
    var privateNetworkHosts: [String] = []

    @Option(help: "Require every /image query to be signed: &sig=base64url(HMAC-SHA256(key, query before &sig=)). Better given as $IMAGERY_SIGNING_KEY (ps shows arguments to every user).")
    var signingKey: String?

    @Option(help: "thumbor's SECURITY_KEY: thumbor URLs must be signed with it (HMAC-SHA1, as libthumbor signs them); /unsafe/ is refused. Better given as $IMAGERY_THUMBOR_KEY.")
    var thumborKey: String?

    @Option(help: "A thumbor configuration file (thumbor.conf): its SECURITY_KEY, ALLOW_UNSAFE_URL, QUALITY, AUTO_WEBP, MAX_AGE, ALLOWED_SOURCES, RESPECT_ORIENTATION, MAX_WIDTH, MAX_HEIGHT, FILTERS and more are applied, with thumbor's defaults for what it leaves out; the rest is listed at start. Read after --config, before the other options.")
    var thumborConfig: String?

    @Option(help: "imgproxy's IMGPROXY_KEY: hex keys, comma-separated; imgproxy URLs must be signed (HMAC-SHA256 of salt + path). Default: $IMGPROXY_KEY if set.")
    var imgproxyKey: String?

    @Option(help: "imgproxy's IMGPROXY_SALT: hex salts, comma-separated, one per key. Default: $IMGPROXY_SALT if set.")
    var imgproxySalt: String?

    @Option(help: "The longest Cache-Control max-age of image responses, in seconds; less when the source's freshness runs out sooner (default 86400).")
    var maxAge: Int?

    @Option(help: "Freshness, in seconds, given to sources whose origin states no expiry (no max-age, no Expires); explicit headers are followed (default 3600).")
    var minimumFreshness: Int?

    @Option(help: "Show the images of this directory on the gallery page at / and serve them at /files/NAME.")
    var galleryDir: String?

    @Option(name: .customLong("gallery-url"), help: "An image URL to show on the gallery page (repeatable).")
    var galleryURLs: [String] = []

    @Option(name: .customLong("preset"), help: "A named set of /image parameters, NAME=QUERY (thumb='w=200&h=200&format=webp'); /image?preset=thumb uses it (repeatable).")
    var presets: [String] = []

    @Flag(help: "Accept only presets on /image (url, preset and sig; any other parameter is a 400).")
    var onlyPresets = false

    @Option(name: .customLong("watermark"), help: "A watermark image, NAME=FILE (a PNG with alpha, usually); /image?watermark=NAME lays it over the output (repeatable).")
    var watermarks: [String] = []

    @Option(help: "An S3-compatible store (http://127.0.0.1:8333, https://s3.eu-west-1.amazonaws.com) for --s3-bucket and --s3-source-bucket. Credentials: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or --s3-credentials-file.")
    var s3Endpoint: String?

    @Option(help: "The S3 store's region (default us-east-1).")
    var s3Region: String?

    @Option(help: "A bucket shared by every instance: originals and stored responses, looked up after this instance's memory and disk, before the origin.")
    var s3Bucket: String?

    @Option(help: "The prefix of the shared objects' names (default imagery/).")
    var s3Prefix: String?

    @Option(help: "An AWS shared credentials file ([default] with aws_access_key_id and aws_secret_access_key); default: the environment.")
    var s3CredentialsFile: String?

    @Option(name: .customLong("s3-source-bucket"), help: "A bucket url=s3://BUCKET/KEY sources may be read from (repeatable; any other bucket is 403).")
    var s3SourceBuckets: [String] = []

    @Option(name: .customLong("cluster-instance"), help: "HOST:PORT of every instance of the cluster, this one included, as given to `imagery cluster nginx-config --instance` (repeatable): a request whose source another instance owns is sent there. Needs --cluster-self.")
    var clusterInstances: [String] = []

    @Option(help: "This instance's HOST:PORT among --cluster-instance.")
    var clusterSelf: String?

    @Option(help: "Log lines as text (default) or json (one object a line: time, level, label, message and the request's fields).")
    var logFormat: ServerLogHandler.Format = .text

    func run() async throws {
        // First: NIO's shared threads are sized at their first use.
        ServerThreads.fitToUsableProcessors(environment: ProcessInfo.processInfo.environment)
        var configuration = try serverConfiguration()
        let logFormat = logFormat
        LoggingSystem.bootstrap { label in ServerLogHandler.standardOutput(label: label, metadataProvider: nil, format: logFormat) }
        raiseDescriptorLimit()
        ProcessMemory.limitArenas(to: 2)
        ProcessMemory.keepFreedMemory(trimThreshold: configuration.memoryLimit / 4)
        let application: any ApplicationProtocol
        do {
            configuration = try await configuration.downloadingRemoteImages()  // imgproxy's *_URL images, once
            application = try buildApplication(configuration: configuration)
        } catch {
            throw CommandFailure(message: "\(error)")
        }
        try await application.runService()
    }

    /// The server's configuration these options make: `--config`'s file, then `--thumbor-config`'s,
    /// then imgproxy's `IMGPROXY_*` variables, then every other option (the command line wins).
    /// Starts nothing: ``run()`` serves what it returns.
    /// - Parameters:
    ///   - environment: Where the `IMGPROXY_*` variables are read. Default: the process's environment.
    ///   - note: Told what was read but is not applied (a setting not supported, a name unknown).
    ///     Default: standard error, each line after `imagery serve: `.
    /// - Throws: `ValidationError` naming the option or variable whose value is not valid (what the
    ///   user sees, after `Error: `); ``CommandFailure`` when `--config` cannot be read.
    func serverConfiguration(
        environment: [String: String] = ProcessInfo.processInfo.environment, note: (String) -> Void = ServeCommand.writeNote
    ) throws -> ServerConfiguration {
        var configuration: ServerConfiguration
        do {
            configuration = try config.map { try ServerConfiguration(contentsOf: URL(fileURLWithPath: $0)) } ?? ServerConfiguration()
        } catch {
            throw CommandFailure(message: "\(error)")
        }
        if let thumborConfig {
            let url = URL(fileURLWithPath: thumborConfig)
            guard let data = FileManager.default.contents(atPath: url.path), let text = String(data: data, encoding: .utf8) else {
                throw ValidationError("the thumbor configuration \(thumborConfig) cannot be read (or is not UTF-8 text)")
            }
            do {
                let report = try ThumborConfigurationFile.apply(text, to: &configuration)
                func say(_ line: String) { note("\(thumborConfig): \(line)") }
                for name in report.unsupported { say("\(name) is thumbor's but not supported here: its setting is not applied") }
                if !report.machinery.isEmpty {
                    say("not used (thumbor's own parts, which Imagery's loader, caches and engine replace): \(report.machinery.joined(separator: ", "))")
                }
                for name in report.unknown { say("\(name) is no thumbor setting: ignored") }
                for line in report.unreadLines { say("\(line) is not a simple assignment: not read") }
            } catch {
                throw ValidationError("\(thumborConfig): \(error.message)")
            }
        }
        // imgproxy's own environment names, so that a deployment's settings carry over (the command line wins: read first).
        do {
            let report = try ImgproxyEnvironment.apply(environment, to: &configuration)
            for name in report.unsupported { note("\(name) is imgproxy's but not supported here: its setting is not applied") }
            for name in report.unknown { note("\(name) is no imgproxy setting: ignored") }
        } catch {
            throw ValidationError(error.message)
        }
        if let host { configuration.host = host }
        if let port { configuration.port = port }
        if let cacheDir { configuration.cacheDirectory = URL(fileURLWithPath: cacheDir) }
        if noDiskCache { configuration.cacheDirectory = nil }
        if let memoryLimit {
            guard let bytes = parseBytes(memoryLimit) else { throw ValidationError("--memory-limit takes a byte count such as 268435456 or 256M") }
            configuration.memoryLimit = bytes
        }
        if let maxInflightMemory {
            guard let bytes = parseBytes(maxInflightMemory), bytes > 0 else {
                throw ValidationError("--max-inflight-memory takes a byte count such as 134217728 or 128M")
            }
            configuration.maximumInflightMemory = bytes
        }
        if let admissionQueue {
            guard admissionQueue >= 0 else { throw ValidationError("--admission-queue cannot be negative") }
            configuration.admissionQueueLength = admissionQueue
        }
        if let admissionTimeout {
            guard let duration = ServerConfiguration.duration(seconds: admissionTimeout) else {
                throw ValidationError("--admission-timeout takes a number of seconds from 0 to a year")
            }
            configuration.admissionTimeout = duration
        }
        if let idleTimeout {
            guard let duration = ServerConfiguration.duration(seconds: idleTimeout), idleTimeout > 0 else {
                throw ValidationError("--idle-timeout takes a positive number of seconds, at most a year")
            }
            configuration.idleTimeout = duration
        }
        if let requestTimeout {
            guard let duration = ServerConfiguration.duration(seconds: requestTimeout), requestTimeout > 0 else {
                throw ValidationError("--request-timeout takes a positive number of seconds, at most a year")
            }
            configuration.requestTimeout = duration
        }
        if let maxConnections {
            guard maxConnections > 0 else { throw ValidationError("--max-connections must be positive") }
            configuration.maximumConnections = maxConnections
        }
        guard configuration.inflightMemory < configuration.memoryLimit else {
            throw ValidationError("--max-inflight-memory must be less than --memory-limit (the caches get the rest)")
        }
        if let diskLimit {
            guard let bytes = parseBytes(diskLimit) else { throw ValidationError("--disk-limit takes a byte count such as 2147483648 or 2G") }
            configuration.diskLimit = bytes
        }
        if !allowedHosts.isEmpty { configuration.allowedHosts = allowedHosts }
        if !privateNetworkHosts.isEmpty { configuration.privateNetworkHosts = privateNetworkHosts }
        if let maxAge { configuration.responseMaxAge = maxAge }
        if let minimumFreshness { configuration.minimumFreshness = minimumFreshness }
        if let galleryDir {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: galleryDir, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw ValidationError("--gallery-dir \(galleryDir) is not a directory")
            }
            configuration.galleryDirectory = URL(fileURLWithPath: galleryDir)
        }
        if !galleryURLs.isEmpty {
            configuration.galleryURLs = try galleryURLs.map { text in
                guard let url = ServerConfiguration.sourceURL(text) else {
                    throw ValidationError("--gallery-url \(text) is not an absolute http or https URL")
                }
                return url
            }
        }
        for preset in presets {
            guard let equals = preset.firstIndex(of: "="), equals != preset.startIndex else {
                throw ValidationError("--preset takes NAME=QUERY, such as thumb='w=200&h=200&format=webp'")
            }
            configuration.presets[String(preset[..<equals])] = String(preset[preset.index(after: equals)...])
        }
        if onlyPresets { configuration.onlyPresets = true }
        if let s3Endpoint {
            guard let url = ServerConfiguration.s3EndpointURL(s3Endpoint) else {
                throw ValidationError("--s3-endpoint takes an http or https URL, such as http://127.0.0.1:8333")
            }
            configuration.s3Endpoint = url
        }
        if let s3Region { configuration.s3Region = s3Region }
        if let s3Bucket { configuration.s3Bucket = s3Bucket }
        if let s3Prefix { configuration.s3Prefix = s3Prefix }
        if let s3CredentialsFile { configuration.s3CredentialsFile = URL(fileURLWithPath: s3CredentialsFile) }
        if !s3SourceBuckets.isEmpty { configuration.s3SourceBuckets = s3SourceBuckets }
        if !clusterInstances.isEmpty { configuration.clusterInstances = clusterInstances.flatMap { $0.split(separator: ",").map(String.init) } }
        if let clusterSelf { configuration.clusterSelf = clusterSelf }
        for watermark in watermarks {
            guard let equals = watermark.firstIndex(of: "="), equals != watermark.startIndex else {
                throw ValidationError("--watermark takes NAME=FILE, such as logo=/etc/imagery/logo.png")
            }
            configuration.watermarkFiles[String(watermark[..<equals])] = URL(fileURLWithPath: String(watermark[watermark.index(after: equals)...]))
        }
        if let key = signingKey { configuration.signingKey = key }
        if let key = thumborKey { configuration.thumborSecurityKey = key }
        if let keys = imgproxyKey { configuration.imgproxyKeys = keys.split(separator: ",").map(String.init) }
        if let salts = imgproxySalt { configuration.imgproxySalts = salts.split(separator: ",").map(String.init) }
        do {
            try configuration.validate()
        } catch {
            throw ValidationError(error.message)
        }
        return configuration
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
