import ArgumentParser
import Configuration
import Foundation
import ImageryServer

/// `imagery serve`'s configuration layers: its options, the environment, the peers' settings, the file.
extension ServeCommand {
    /// Where settings come from, the first that sets a key winning: the command line, `IMAGERY_*`
    /// variables (each key's own, then its option's), imgproxy's `IMGPROXY_*` variables, `--thumbor-config`'s
    /// file, `--config`'s file, `--defaults`' file.
    func configurationLayers(environment: [String: String], note: (String) -> Void) throws -> [ConfigurationLayer] {
        var layers = [try commandLineLayer()] + ConfigurationLayer.environment(environment)
        do {
            let (layer, report) = try ImgproxyEnvironment.layer(environment)
            for name in report.unsupported {
                note("\(name) is imgproxy's but not supported here: its setting is not applied")
            }
            for name in report.unknown { note("\(name) is no imgproxy setting: ignored") }
            layers.append(layer)
        } catch {
            throw ValidationError(error.message)
        }
        if let thumborConfig {
            guard let data = FileManager.default.contents(atPath: thumborConfig),
                let text = String(data: data, encoding: .utf8)
            else {
                throw ValidationError(
                    "the thumbor configuration \(thumborConfig) cannot be read (or is not UTF-8 text)")
            }
            do {
                let (layer, report) = try ThumborConfigurationFile.layer(text, name: thumborConfig)
                func say(_ line: String) { note("\(thumborConfig): \(line)") }
                for name in report.unsupported {
                    say("\(name) is thumbor's but not supported here: its setting is not applied")
                }
                if !report.machinery.isEmpty {
                    say(
                        "not used (thumbor's own parts, which Imagery's loader, caches and engine replace): \(report.machinery.joined(separator: ", "))"
                    )
                }
                for name in report.unknown { say("\(name) is no thumbor setting: ignored") }
                for line in report.unreadLines { say("\(line) is not a simple assignment: not read") }
                layers.append(layer)
            } catch {
                throw ValidationError("\(thumborConfig): \(error.message)")
            }
        }
        for file in [config, defaults].compactMap({ $0 }) {
            do {
                let (layer, notes) = try ConfigurationFile.layer(contentsOf: URL(fileURLWithPath: file))
                notes.forEach(note)
                layers.append(layer)
            } catch {
                throw CommandFailure(message: error.message)
            }
        }
        return layers
    }

    /// The options given on the command line, under their keys; `--set KEY=VALUE` for any key.
    func commandLineLayer() throws -> ConfigurationLayer {
        var values: [String: ConfigContent] = [:]
        var origins: [String: String] = [:]
        func set(_ key: String, _ option: String, _ value: String?) {
            guard let value else { return }
            values[key] = .string(value)
            origins[key] = "--" + option
        }
        func set(_ key: String, _ option: String, _ items: [String]) {
            guard !items.isEmpty else { return }
            values[key] = .stringArray(items)
            origins[key] = "--" + option
        }
        set("listener.host", "host", host)
        set("listener.port", "port", port.map(String.init))
        set("caching.directory", "cache-dir", cacheDir)
        if noDiskCache { set("caching.directory", "no-disk-cache", "") }
        set("limits.memoryLimit", "memory-limit", memoryLimit)
        set("limits.maximumInflightMemory", "max-inflight-memory", maxInflightMemory)
        set("limits.admissionQueueLength", "admission-queue", admissionQueue.map(String.init))
        set("limits.admissionTimeoutSeconds", "admission-timeout", admissionTimeout.map { String($0) })
        set("listener.idleTimeoutSeconds", "idle-timeout", idleTimeout.map { String($0) })
        set("limits.requestTimeoutSeconds", "request-timeout", requestTimeout.map { String($0) })
        set("listener.maximumConnections", "max-connections", maxConnections.map(String.init))
        set("caching.diskLimit", "disk-limit", diskLimit)
        set("origins.allowedHosts", "allow-host", allowedHosts)
        set("origins.privateNetworkHosts", "allow-private-host", privateNetworkHosts)
        set("requests.signingKey", "signing-key", signingKey)
        set("thumbor.securityKey", "thumbor-key", thumborKey)
        set("imgproxy.keys", "imgproxy-key", imgproxyKey.map { $0.split(separator: ",").map(String.init) } ?? [])
        set("imgproxy.salts", "imgproxy-salt", imgproxySalt.map { $0.split(separator: ",").map(String.init) } ?? [])
        set("caching.responseMaxAge", "max-age", maxAge.map(String.init))
        set("caching.minimumFreshness", "minimum-freshness", minimumFreshness.map(String.init))
        set("gallery.directory", "gallery-dir", galleryDir)
        set("gallery.urls", "gallery-url", galleryURLs)
        set("requests.presets", "preset", presets)
        if onlyPresets { set("requests.onlyPresets", "only-presets", "true") }
        set("rendering.watermarkFiles", "watermark", watermarks)
        set("s3.endpoint", "s3-endpoint", s3Endpoint)
        set("s3.region", "s3-region", s3Region)
        set("s3.bucket", "s3-bucket", s3Bucket)
        set("s3.prefix", "s3-prefix", s3Prefix)
        set("s3.credentialsFile", "s3-credentials-file", s3CredentialsFile)
        set("s3.sourceBuckets", "s3-source-bucket", s3SourceBuckets)
        set(
            "cluster.instances", "cluster-instance",
            clusterInstances.flatMap { $0.split(separator: ",").map(String.init) })
        set("cluster.self", "cluster-self", clusterSelf)
        for assignment in settings {
            guard let equals = assignment.firstIndex(of: "="),
                let setting = ServerConfiguration.settingsByKey[String(assignment[..<equals])]
            else {
                throw ValidationError(
                    "--set takes KEY=VALUE with a configuration key (imagery serve --print-config lists them), not \(assignment)"
                )
            }
            values[setting.key] = setting.content(parsing: String(assignment[assignment.index(after: equals)...]))
            origins[setting.key] = "--set"
        }
        return .values(name: "command line", values, origins: origins)
    }

    /// The options that are settings (read through ``commandLineLayer()`` and, as `IMAGERY_*`
    /// variables, through ``ConfigurationLayer/environment(_:)``), by long name.
    static var settingOptions: Set<String> { Set(ServerConfiguration.settings.compactMap(\.option)) }
}
