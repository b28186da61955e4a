import Configuration
import Foundation
import Imagery
import Testing

@testable import ImageryServer

/// The one key namespace: every setting read the same from every provider, under its key and under the
/// names it had before (flat file keys, `imagery serve` options and their variables).
@Suite struct ConfigurationSettingsTests {
    /// A configuration in which every setting differs from its default (and reads back from its own text).
    static let sample: ServerConfiguration = {
        var sample = ServerConfiguration()
        sample.listener.host = "0.0.0.0"
        sample.listener.port = 9001
        sample.listener.idleTimeout = .milliseconds(2500)
        sample.listener.maximumConnections = 77
        sample.listener.maximumHeaderBytes = 4096
        sample.listener.answersHitsOnEventLoop = false
        sample.limits.memoryLimit = 3 << 30
        sample.limits.maximumInflightMemory = 1 << 30
        sample.limits.admissionQueueLength = 9
        sample.limits.admissionTimeout = .seconds(4)
        sample.limits.requestTimeout = .seconds(12)
        sample.limits.maximumSourceBytes = 1234
        sample.limits.maximumSourcePixels = 5678
        sample.limits.maximumFrames = 12
        sample.limits.maximumFramePixels = 999
        sample.limits.maximumOutputSide = 2000
        sample.caching.directory = URL(fileURLWithPath: "/var/cache/imagery")
        sample.caching.diskLimit = 5 << 20
        sample.caching.responseMaxAge = 600
        sample.caching.minimumFreshness = 60
        sample.origins.allowedHosts = ["a.example", "*.b.example"]
        sample.origins.privateNetworkHosts = ["intranet"]
        sample.origins.timeout = .seconds(3)
        sample.origins.maximumConcurrentFetches = 5
        sample.origins.maximumAttempts = 3
        sample.origins.localFilesystemRoot = FileManager.default.temporaryDirectory
        sample.requests.signingKey = "signing-secret"
        sample.requests.presets = ["thumb": "w=200&h=200", "wide": "w=800"]
        sample.requests.onlyPresets = true
        sample.rendering.formatQualities = [.jpeg: 70, .webp: 71, .avif: 50, .jxl: 72]
        sample.rendering.autoQuality.isDefault = true
        sample.rendering.autoQuality.target = .bytes(20_000)
        sample.rendering.autoQuality.minimum = 40
        sample.rendering.autoQuality.maximum = 90
        sample.rendering.autoQuality.formatMinimums = [.webp: 45]
        sample.rendering.autoQuality.formatMaximums = [.avif: 80]
        sample.rendering.autoQuality.tolerance = 1.5
        sample.rendering.autoQuality.maximumPixels = 4000
        sample.rendering.watermarkFiles = [
            "logo": URL(fileURLWithPath: "/etc/logo.png"), "imgproxy": URL(string: "https://example.com/w.png")!,
        ]
        sample.s3.endpoint = URL(string: "http://127.0.0.1:8333")
        sample.s3.region = "eu-west-1"
        sample.s3.bucket = "shared"
        sample.s3.prefix = "p/"
        sample.s3.credentialsFile = URL(fileURLWithPath: "/etc/aws")
        sample.s3.sourceBuckets = ["photos", "art"]
        sample.cluster.instances = ["10.0.0.1:8080", "10.0.0.2:8080"]
        sample.cluster.selfAddress = "10.0.0.1:8080"
        sample.gallery.directory = URL(fileURLWithPath: "/")
        sample.gallery.urls = [URL(string: "https://example.com/a.jpg")!]
        sample.fallback.image = URL(fileURLWithPath: "/etc/fallback.png")
        sample.fallback.status = 404
        sample.fallback.maxAge = 5
        sample.imgproxy.enabled = false
        sample.imgproxy.keys = ["aa"]
        sample.imgproxy.salts = ["bb"]
        sample.imgproxy.signatureSize = 8
        sample.imgproxy.trustedSignatures = ["sig"]
        sample.imgproxy.pathPrefix = "/img"
        sample.imgproxy.argumentsSeparator = "~"
        sample.imgproxy.base64URLIncludesFilename = true
        sample.imgproxy.baseURL = "https://origin.example/"
        sample.imgproxy.urlReplacements = ["a=b"]
        sample.imgproxy.allowedSources = ["https://origin.example/"]
        sample.imgproxy.allowedOptions = ["rs", "q"]
        sample.imgproxy.watermarkOpacity = 0.5
        sample.imgproxy.allowsSecurityOptions = true
        sample.imgproxy.preservesHDR = true
        sample.imgproxy.skipProcessingFormats = [.gif]
        sample.imgproxy.stripsMetadata = false
        sample.imgproxy.keepsCopyright = false
        sample.imgproxy.preferredFormats = [.webp, .png]
        sample.imgproxy.enforcedFormats = [.avif]
        sample.imgproxy.stripsColorProfile = false
        sample.imgproxy.autoRotates = false
        sample.imgproxy.alwaysRasterizesSVG = true
        sample.imgproxy.usesLinearColorspace = true
        sample.imgproxy.presets = ["small": "rs:fit:100:100"]
        sample.imgproxy.autoFormat = true
        sample.imgproxy.autoFormats = [.webp]
        sample.imgproxy.usesETag = false
        sample.imgproxy.usesLastModified = false
        sample.imgproxy.etagBuster = "v2"
        sample.imgproxy.lastModifiedBuster = Date(timeIntervalSince1970: 1_750_000_000)
        sample.imgproxy.setsCanonicalHeader = true
        sample.imgproxy.cacheControlPassthrough = true
        sample.imgproxy.ttl = 600
        sample.thumbor.enabled = false
        sample.thumbor.securityKey = "thumbor-secret"
        sample.thumbor.allowsUnsafeURLs = false
        sample.thumbor.refusesUnknownFilters = true
        sample.thumbor.refusesBadFilterArguments = true
        sample.thumbor.autoWebP = true
        sample.thumbor.autoPNGToJPEG = true
        sample.thumbor.filters = ["blur", "quality"]
        sample.thumbor.respectsOrientation = false
        sample.thumbor.maximumWidth = 1000
        sample.thumbor.maximumHeight = 900
        sample.thumbor.metaCallback = "callback"
        return sample
    }()

    static func dump(_ configuration: ServerConfiguration) -> [String: String] {
        Dictionary(uniqueKeysWithValues: ServerConfiguration.settings.map { ($0.key, $0.show(configuration)) })
    }

    @Test func keysAndTheirVariablesAreUniqueAndInParts() {
        let settings = ServerConfiguration.settings
        #expect(Set(settings.map(\.key)).count == settings.count)
        // A key's own variable may be its option's (`IMAGERY_S3_REGION`), never another key's.
        let variables = settings.flatMap { Set([$0.variable] + ($0.optionVariable.map { [$0] } ?? [])) }
        #expect(Set(variables).count == variables.count)
        #expect(
            ServerConfiguration.settingParts == [
                "listener", "limits", "caching", "origins", "requests", "rendering", "s3", "cluster", "gallery",
                "fallback", "imgproxy", "thumbor",
            ])
        #expect(ServerConfiguration.settingsByKey["limits.memoryLimit"]?.variable == "IMAGERY_LIMITS_MEMORY_LIMIT")
        #expect(
            ServerConfiguration.settingsByKey["thumbor.allowsUnsafeURLs"]?.variable
                == "IMAGERY_THUMBOR_ALLOWS_UNSAFE_URLS")
        #expect(ServerConfiguration.settingsByKey["thumbor.autoWebP"]?.variable == "IMAGERY_THUMBOR_AUTO_WEBP")
        #expect(
            ServerConfiguration.settingsByKey["thumbor.autoPNGToJPEG"]?.variable == "IMAGERY_THUMBOR_AUTO_PNG_TO_JPEG")
        #expect(
            ServerConfiguration.settingsByKey["imgproxy.base64URLIncludesFilename"]?.variable
                == "IMAGERY_IMGPROXY_BASE64_URL_INCLUDES_FILENAME")
    }

    /// The sample differs from the defaults in every setting, so that each test below shows each key is read.
    @Test func theSampleSetsEverySetting() {
        let defaults = Self.dump(ServerConfiguration())
        let sample = Self.dump(Self.sample)
        for setting in ServerConfiguration.settings {
            #expect(defaults[setting.key] != sample[setting.key], "\(setting.key)")
        }
        #expect(throws: Never.self) { try Self.sample.validate() }
    }

    /// Every setting's text reads back to the same value: `--print-config`, the peers' layers and the
    /// README show what would be read.
    @Test(arguments: [ServerConfiguration(), sample])
    func everySettingsTextReadsBackTheSame(_ configuration: ServerConfiguration) throws {
        var values: [String: ConfigContent] = [:]
        for setting in ServerConfiguration.settings { values[setting.key] = setting.write(configuration) }
        let read = try ConfigurationLoader.load([.values(name: "test", values)], validating: false)
        #expect(Self.dump(read.configuration) == Self.dump(configuration))
    }

    /// A file's value: under the key in parts, under the dotted key, and under the flat key files had before.
    static func jsonValue(_ content: ConfigContent) -> Any {
        switch content {
        case .stringArray(let items): items
        case .string(let text): text
        default: ""
        }
    }

    static func fileConfiguration(_ object: [String: Any], yaml: Bool = false) throws -> ServerConfiguration {
        let data = try JSONSerialization.data(withJSONObject: object)
        // YAML is a superset of JSON: the same bytes read as YAML.
        let (layer, notes) = try ConfigurationFile.layer(data, name: yaml ? "test.yaml" : "test.json", yaml: yaml)
        #expect(notes.isEmpty, "\(notes)")
        return try ConfigurationLoader.load([layer], validating: false).configuration
    }

    @Test(arguments: ServerConfiguration.settings.map(\.key))
    func aFileSetsEachKeyUnderEveryNameItHas(_ key: String) throws {
        let setting = try #require(ServerConfiguration.settingsByKey[key])
        let value = Self.jsonValue(setting.write(Self.sample))
        let expected = setting.show(Self.sample)
        let parts = key.split(separator: ".").map(String.init)
        var nested: Any = value
        for part in parts.reversed() { nested = [part: nested] }
        let nestedObject = try #require(nested as? [String: Any])
        #expect(setting.show(try Self.fileConfiguration(nestedObject)) == expected)
        #expect(setting.show(try Self.fileConfiguration([key: value])) == expected)
        #expect(setting.show(try Self.fileConfiguration(nestedObject, yaml: true)) == expected)
        if let fileKey = setting.fileKey {
            var flat: Any = value
            for part in fileKey.split(separator: ".").reversed() { flat = [String(part): flat] }
            #expect(setting.show(try Self.fileConfiguration(try #require(flat as? [String: Any]))) == expected)
        }
    }

    /// `IMAGERY_` and the key, and `IMAGERY_` and the option's name, read as the same text (a list: commas).
    @Test(arguments: ServerConfiguration.settings.map(\.key))
    func theEnvironmentSetsEachKeyUnderEveryNameItHas(_ key: String) throws {
        let setting = try #require(ServerConfiguration.settingsByKey[key])
        let text: String =
            switch setting.write(Self.sample) {
            case .stringArray(let items): items.joined(separator: ",")
            case .string(let value): value
            default: ""
            }
        let expected = setting.show(Self.sample)
        for variable in [setting.variable] + (setting.optionVariable.map { [$0] } ?? []) {
            let loaded = try ConfigurationLoader.load(
                ConfigurationLayer.environment([variable: text]), validating: false)
            #expect(setting.show(loaded.configuration) == expected, "\(variable)")
            #expect(loaded.sources[key] == ConfigurationLoader.Source(layer: "environment", origin: variable))
        }
    }

    /// The first layer that has a key wins; the others keep theirs.
    @Test func theFirstLayerThatSetsAKeyWins() throws {
        let commandLine = ConfigurationLayer.values(
            name: "command line", ["listener.port": .string("9001")], origins: ["listener.port": "--port"])
        let environment = ConfigurationLayer.environment([
            "IMAGERY_LISTENER_PORT": "9002", "IMAGERY_MEMORY_LIMIT": "1G", "IMAGERY_HOST": "0.0.0.0",
        ])
        let (file, _) = try ConfigurationFile.layer(
            Data(#"{"port": 9003, "memoryLimit": "2G", "diskLimit": "1G"}"#.utf8), name: "imagery.json")
        let loaded = try ConfigurationLoader.load([commandLine] + environment + [file])
        #expect(loaded.configuration.listener.port == 9001)
        #expect(loaded.configuration.limits.memoryLimit == 1 << 30)
        #expect(loaded.configuration.listener.host == "0.0.0.0")
        #expect(loaded.configuration.caching.diskLimit == 1 << 30)
        #expect(loaded.sources["listener.port"]?.description == "--port, command line")
        #expect(loaded.sources["limits.memoryLimit"]?.description == "IMAGERY_MEMORY_LIMIT, environment")
        #expect(loaded.sources["caching.diskLimit"]?.description == "diskLimit, imagery.json")
        #expect(loaded.sources["listener.maximumConnections"] == nil)
    }

    @Test func aBadValueNamesTheKeyAndWhereItCameFrom() {
        #expect {
            try ConfigurationLoader.load(ConfigurationLayer.environment(["IMAGERY_LIMITS_MEMORY_LIMIT": "lots"]))
        } throws: { error in
            (error as? ConfigurationFileError)?.message
                == "limits.memoryLimit (IMAGERY_LIMITS_MEMORY_LIMIT, environment): takes a byte count such as 268435456 or 256M, not 'lots'"
        }
        #expect {
            try ConfigurationLoader.load([
                ConfigurationFile.layer(Data("listener:\n  port: 70000\n".utf8), name: "imagery.yaml", yaml: true).layer
            ])
        } throws: { error in
            (error as? ConfigurationFileError)?.message
                == "listener.port (listener.port, imagery.yaml): must be from 0 to 65535"
        }
    }

    @Test func keysThatAreNoSettingAreReported() throws {
        let (_, notes) = try ConfigurationFile.layer(
            Data(
                #"{"limits": {"memoryLimit": "1G", "memoryLimt": "1G"}, "prot": 1, "autoQuality": {"tagret": 1}}"#.utf8),
            name: "imagery.json"
        )
        #expect(
            notes == [
                "imagery.json: autoQuality.tagret is no configuration key: not read",
                "imagery.json: limits.memoryLimt is no configuration key: not read",
                "imagery.json: prot is no configuration key: not read",
            ])
    }

    @Test func thePrintedConfigurationRedactsSecretsAndSaysWhereEachValueCameFrom() throws {
        let commandLine = ConfigurationLayer.values(
            name: "command line", ["requests.signingKey": .string("hunter2"), "listener.port": .string("9001")],
            origins: ["requests.signingKey": "--signing-key", "listener.port": "--port"]
        )
        let printed = try ConfigurationLoader.load([commandLine]).printed()
        #expect(!printed.contains("hunter2"))
        let lines = printed.split(separator: "\n").map(String.init)
        #expect(
            lines.contains {
                $0.hasPrefix("requests.signingKey ") && $0.hasSuffix("<redacted>  # --signing-key, command line")
            })
        #expect(lines.contains { $0.hasPrefix("listener.port ") && $0.hasSuffix("9001  # --port, command line") })
        #expect(lines.contains { $0.hasPrefix("listener.host ") && $0.hasSuffix("127.0.0.1  # default") })
        #expect(lines.filter { $0.hasPrefix("# ") }.count == ServerConfiguration.settingParts.count)
        // Secrets are secret to swift-configuration too (its access logs redact them).
        let environment = ConfigurationLayer.environment(["IMAGERY_SIGNING_KEY": "hunter2"])
        let value = try environment[1].provider.value(
            forKey: AbsoluteConfigKey(ConfigKey("requests.signingKey")), type: .string
        ).value
        #expect(value?.isSecret == true)
    }

    /// imgproxy's variables and a `thumbor.conf` are layers under Imagery's keys: Imagery's own settings win.
    @Test func thePeersSettingsAreLayersUnderImagerysKeys() throws {
        let (imgproxy, _) = try ImgproxyEnvironment.layer([
            "IMGPROXY_QUALITY": "70", "IMGPROXY_BIND": ":9100", "IMGPROXY_MAX_SRC_RESOLUTION": "20",
        ])
        let (thumbor, _) = try ThumborConfigurationFile.layer(
            "QUALITY = 60\nMAX_PIXELS = 1000\nRESPECT_ORIENTATION = True\n", name: "thumbor.conf")
        let environment = ConfigurationLayer.environment(["IMAGERY_PORT": "9200"])
        let loaded = try ConfigurationLoader.load(environment + [imgproxy, thumbor])
        #expect(loaded.configuration.listener.port == 9200)
        #expect(loaded.configuration.listener.host == "0.0.0.0")
        #expect(loaded.configuration.rendering.formatQualities[.jpeg] == 70)
        #expect(loaded.configuration.limits.maximumSourcePixels == 20_000_000)
        #expect(loaded.configuration.thumbor.respectsOrientation)
        #expect(loaded.configuration.caching.responseMaxAge == 86_400)
        #expect(loaded.sources["listener.host"]?.description == "IMGPROXY_BIND, imgproxy's variables")
        #expect(loaded.sources["rendering.formatQualities"]?.description == "IMGPROXY_QUALITY, imgproxy's variables")
        #expect(loaded.sources["thumbor.respectsOrientation"]?.description == "RESPECT_ORIENTATION, thumbor.conf")
        #expect(loaded.sources["caching.responseMaxAge"]?.description == "MAX_AGE (thumbor's default), thumbor.conf")
        #expect(loaded.sources["limits.maximumSourceBytes"] == nil)
    }

    @Test func theREADMEsTableListsEveryKey() {
        let table = ServerConfiguration.settingsTable()
        for setting in ServerConfiguration.settings { #expect(table.contains("| `\(setting.key)` |")) }
        #expect(table.contains("`--memory-limit`, `IMAGERY_MEMORY_LIMIT`, `IMAGERY_LIMITS_MEMORY_LIMIT`"))
    }
}

extension ConfigurationSettingsTests {
    /// The README's table is `imagery serve --print-settings`: regenerated whenever a setting changes.
    @Test func theREADMEHoldsTheSettingsTableOfToday() throws {
        let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "../../../README.md"
        ).standardized
        let text = try String(contentsOf: readme, encoding: .utf8)
        let begin = try #require(text.range(of: "<!-- settings:begin -->\n"))
        let end = try #require(text.range(of: "<!-- settings:end -->"))
        #expect(
            String(text[begin.upperBound..<end.lowerBound]) == ServerConfiguration.settingsTable(),
            "run imagery serve --print-settings")
    }
}
