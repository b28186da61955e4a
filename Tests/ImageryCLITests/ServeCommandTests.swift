import ArgumentParser
import Foundation
import ImageryServer
import Testing

@testable import ImageryCLI

/// `imagery serve`'s options: the configuration each one makes (``ServeCommand/serverConfiguration(environment:note:)``,
/// which starts nothing), its defaults, and what a user reads when a value is wrong.
@Suite struct ServeCommandTests {
    /// The configuration `imagery serve ARGUMENTS` builds with `environment` (none of the process's
    /// variables), and the notes it writes.
    static func configuration(
        _ arguments: [String], environment: [String: String] = [:]
    ) throws -> (configuration: ServerConfiguration, notes: [String]) {
        var notes: [String] = []
        let all = try ImageryCommand.arguments(["serve"] + arguments, environment: environment) { notes.append($0) }
        guard let command = try ImageryCommand.parseAsRoot(all) as? ServeCommand else { throw ServeTestError.notServe }
        let configuration = try command.serverConfiguration(environment: environment) { notes.append($0) }
        return (configuration, notes)
    }

    /// The message a user sees for `imagery serve ARGUMENTS` (`nil`: none, the configuration is made).
    static func errorMessage(_ arguments: [String], environment: [String: String] = [:]) -> String? {
        do {
            _ = try configuration(arguments, environment: environment)
            return nil
        } catch {
            return ImageryCommand.message(for: error)
        }
    }

    enum ServeTestError: Error { case notServe }

    /// Without options: the library's defaults, which are the ones the help text states.
    @Test func withoutOptionsTheConfigurationIsTheDefault() throws {
        let (configuration, notes) = try Self.configuration([])
        let defaults = ServerConfiguration()
        #expect(notes.isEmpty)
        #expect(configuration.listener.host == "127.0.0.1" && defaults.listener.host == "127.0.0.1")
        #expect(configuration.listener.port == 8080)
        #expect(configuration.caching.directory?.lastPathComponent == ".imagery-cache")
        // Derived from the machine (MachineDefaultsTests has the rules).
        #expect(configuration.limits.memoryLimit == MachineDefaults.current.memoryLimit)
        #expect(
            configuration.limits.maximumInflightMemory == nil
                && configuration.limits.inflightMemory == configuration.limits.memoryLimit / 2)
        #expect(configuration.limits.admissionQueueLength == MachineDefaults.current.admissionQueueLength)
        #expect(configuration.limits.admissionTimeout == nil)
        #expect(
            configuration.listener.idleTimeout == .seconds(30) && configuration.limits.requestTimeout == .seconds(30))
        #expect(configuration.listener.maximumConnections == 10_000)
        #expect(configuration.caching.diskLimit == 2 << 30)
        #expect(configuration.origins.allowedHosts.isEmpty && configuration.origins.privateNetworkHosts.isEmpty)
        #expect(
            configuration.requests.signingKey == nil && configuration.thumbor.securityKey == nil
                && configuration.imgproxy.keys.isEmpty)
        #expect(configuration.caching.responseMaxAge == 86_400 && configuration.caching.minimumFreshness == 3600)
        #expect(
            configuration.requests.presets.isEmpty && !configuration.requests.onlyPresets
                && configuration.rendering.watermarkFiles.isEmpty)
        #expect(configuration.gallery.directory == nil && configuration.gallery.urls.isEmpty)
        #expect(
            configuration.s3.endpoint == nil && configuration.s3.bucket == nil && configuration.s3.region == "us-east-1"
        )
        #expect(configuration.s3.prefix == "imagery/" && configuration.s3.sourceBuckets.isEmpty)
        #expect(configuration.cluster.instances.isEmpty && configuration.cluster.selfAddress == nil)
        let command = try #require(try ImageryCommand.parseAsRoot(["serve"]) as? ServeCommand)
        #expect(command.logFormat == .text)
    }

    /// Options and what they set.
    struct OptionCase: Sendable, CustomTestStringConvertible {
        let arguments: [String]
        let check: @Sendable (ServerConfiguration) -> Bool
        var testDescription: String { arguments.joined(separator: " ") }

        init(_ arguments: String..., check: @escaping @Sendable (ServerConfiguration) -> Bool) {
            (self.arguments, self.check) = (arguments, check)
        }
    }

    static let temporary = FileManager.default.temporaryDirectory.path

    static let optionCases: [OptionCase] = [
        OptionCase("--host", "0.0.0.0") { $0.listener.host == "0.0.0.0" },
        OptionCase("--port", "9000") { $0.listener.port == 9000 },
        OptionCase("--port=9001") { $0.listener.port == 9001 },
        OptionCase("--cache-dir", "/var/cache/imagery") { $0.caching.directory?.path == "/var/cache/imagery" },
        OptionCase("--no-disk-cache") { $0.caching.directory == nil },
        OptionCase("--cache-dir", "/var/cache/imagery", "--no-disk-cache") { $0.caching.directory == nil },
        OptionCase("--memory-limit", "1G") { $0.limits.memoryLimit == 1 << 30 && $0.limits.inflightMemory == 1 << 29 },
        OptionCase("--memory-limit", "268435456") { $0.limits.memoryLimit == 268_435_456 },
        OptionCase("--memory-limit", "1.5g") { $0.limits.memoryLimit == 3 << 29 },
        OptionCase("--max-inflight-memory", "128M") {
            $0.limits.maximumInflightMemory == 128 << 20 && $0.limits.cacheMemory == 384 << 20
        },
        OptionCase("--admission-queue", "0") { $0.limits.admissionQueueLength == 0 },
        OptionCase("--admission-timeout", "2.5") { $0.limits.admissionTimeout == .milliseconds(2500) },
        OptionCase("--admission-timeout", "0") { $0.limits.admissionTimeout == .zero },
        OptionCase("--idle-timeout", "5") { $0.listener.idleTimeout == .seconds(5) },
        OptionCase("--request-timeout", "0.25") { $0.limits.requestTimeout == .milliseconds(250) },
        OptionCase("--max-connections", "7") { $0.listener.maximumConnections == 7 },
        OptionCase("--disk-limit", "10M") { $0.caching.diskLimit == 10 << 20 },
        OptionCase("--disk-limit", "0") { $0.caching.diskLimit == 0 },
        OptionCase("--allow-host", "a.example", "--allow-host", "*.b.example") {
            $0.origins.allowedHosts == ["a.example", "*.b.example"]
        },
        OptionCase("--allow-private-host", "127.0.0.1") { $0.origins.privateNetworkHosts == ["127.0.0.1"] },
        OptionCase("--signing-key", "secret") { $0.requests.signingKey == "secret" },
        OptionCase("--thumbor-key", "MY_KEY") { $0.thumbor.securityKey == "MY_KEY" },
        OptionCase("--imgproxy-key", "aa,bb", "--imgproxy-salt", "cc,dd") {
            $0.imgproxy.keys == ["aa", "bb"] && $0.imgproxy.salts == ["cc", "dd"]
        },
        OptionCase("--max-age", "60") { $0.caching.responseMaxAge == 60 },
        OptionCase("--minimum-freshness", "10") { $0.caching.minimumFreshness == 10 },
        OptionCase("--gallery-dir", temporary) { $0.gallery.directory?.path == URL(fileURLWithPath: temporary).path },
        OptionCase("--gallery-url", "https://example.com/a.jpg") {
            $0.gallery.urls == [URL(string: "https://example.com/a.jpg")!]
        },
        OptionCase("--preset", "thumb=w=200&h=200", "--preset", "big=w=2000") {
            $0.requests.presets == ["thumb": "w=200&h=200", "big": "w=2000"]
        },
        OptionCase("--preset", "thumb=w=200", "--only-presets") {
            $0.requests.onlyPresets && $0.requests.presets == ["thumb": "w=200"]
        },
        OptionCase("--watermark", "logo=/etc/imagery/logo.png") {
            $0.rendering.watermarkFiles == ["logo": URL(fileURLWithPath: "/etc/imagery/logo.png")]
        },
        OptionCase(
            "--s3-endpoint", "http://127.0.0.1:8333", "--s3-bucket", "images", "--s3-region", "eu-west-1",
            "--s3-prefix", "p/",
            "--s3-credentials-file", "/etc/aws", "--s3-source-bucket", "sources"
        ) {
            $0.s3.endpoint == URL(string: "http://127.0.0.1:8333") && $0.s3.bucket == "images"
                && $0.s3.region == "eu-west-1" && $0.s3.prefix == "p/"
                && $0.s3.credentialsFile?.path == "/etc/aws" && $0.s3.sourceBuckets == ["sources"]
        },
        OptionCase("--cluster-instance", "a:1,b:2", "--cluster-instance", "c:3", "--cluster-self", "b:2") {
            $0.cluster.instances == ["a:1", "b:2", "c:3"] && $0.cluster.selfAddress == "b:2"
        },
    ]

    @Test(arguments: optionCases)
    func eachOptionSetsItsPartOfTheConfiguration(_ option: OptionCase) throws {
        let (configuration, notes) = try Self.configuration(option.arguments)
        #expect(option.check(configuration))
        #expect(notes.isEmpty)
    }

    @Test(arguments: ServerLogHandler.Format.allCases)
    func theLogFormatIsParsed(_ format: ServerLogHandler.Format) throws {
        let command = try #require(
            try ImageryCommand.parseAsRoot(["serve", "--log-format", format.rawValue]) as? ServeCommand)
        #expect(command.logFormat == format)
    }

    /// `--config`'s JSON first, then the options over it.
    @Test func theConfigurationFileIsReadAndOptionsWinOverIt() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("serve-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(#"{"port": 9100, "host": "0.0.0.0", "maximumConnections": 50}"#.utf8).write(to: file)
        let fromFile = try Self.configuration(["--config", file.path]).configuration
        #expect(
            fromFile.listener.port == 9100 && fromFile.listener.host == "0.0.0.0"
                && fromFile.listener.maximumConnections == 50)
        let overridden = try Self.configuration(["--config", file.path, "--port", "9200"]).configuration
        #expect(overridden.listener.port == 9200 && overridden.listener.host == "0.0.0.0")
    }

    /// `--defaults`' file below everything else (the container image's defaults): `--config`'s file,
    /// `IMAGERY_CONFIG`'s and imgproxy's `IMGPROXY_BIND` override it.
    @Test func theDefaultsFileIsTheLowestLayer() throws {
        let directory = FileManager.default.temporaryDirectory
        let defaults = directory.appendingPathComponent("defaults-\(UUID().uuidString).yaml")
        let operatorFile = directory.appendingPathComponent("operator-\(UUID().uuidString).json")
        defer { for file in [defaults, operatorFile] { try? FileManager.default.removeItem(at: file) } }
        try Data("listener:\n  host: 0.0.0.0\n  port: 8080\ncaching:\n  directory: /var/cache/imagery\n".utf8)
            .write(to: defaults)
        try Data(#"{"listener": {"port": 9300}}"#.utf8).write(to: operatorFile)
        let alone = try Self.configuration(["--defaults", defaults.path]).configuration
        #expect(alone.listener.host == "0.0.0.0" && alone.listener.port == 8080)
        #expect(alone.caching.directory?.path == "/var/cache/imagery")
        for loaded in [
            try Self.configuration(["--defaults", defaults.path, "--config", operatorFile.path]).configuration,
            try Self.configuration(["--defaults", defaults.path], environment: ["IMAGERY_CONFIG": operatorFile.path])
                .configuration,
        ] {
            #expect(loaded.listener.port == 9300 && loaded.listener.host == "0.0.0.0")
        }
        let bound = try Self.configuration(
            ["--defaults", defaults.path], environment: ["IMGPROXY_BIND": "127.0.0.1:9400"]
        ).configuration
        #expect(bound.listener.host == "127.0.0.1" && bound.listener.port == 9400)
        #expect(bound.caching.directory?.path == "/var/cache/imagery")
    }

    /// `--thumbor-config`'s settings applied, and what is not applied told.
    @Test func aThumborConfigurationIsAppliedAndWhatIsNotAppliedIsTold() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("thumbor-\(UUID().uuidString).conf")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data("SECURITY_KEY = 'from-thumbor'\nNOT_A_THUMBOR_SETTING = 1\n".utf8).write(to: file)
        let (configuration, notes) = try Self.configuration(["--thumbor-config", file.path])
        #expect(configuration.thumbor.securityKey == "from-thumbor")
        #expect(notes.contains("\(file.path): NOT_A_THUMBOR_SETTING is no thumbor setting: ignored"), "\(notes)")
        // An option given wins over the file.
        #expect(
            try Self.configuration(["--thumbor-config", file.path, "--thumbor-key", "k"]).configuration
                .thumbor.securityKey == "k")
    }
}
