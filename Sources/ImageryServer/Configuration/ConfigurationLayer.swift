import Configuration
import Foundation

/// One place settings come from, as a swift-configuration provider over Imagery's key namespace:
/// the command line, `IMAGERY_*` variables, a JSON or YAML file, imgproxy's variables, a `thumbor.conf`.
/// ``ConfigurationLoader`` reads every setting through all of them, the first that has a key winning.
public struct ConfigurationLayer: Sendable {
    /// What the source is, as messages and `--print-config` name it (`command line`, `environment`, a file's path).
    public let name: String
    let provider: any ConfigProvider
    /// For each key, what in the source set it (`--memory-limit`, `IMGPROXY_KEY`, `QUALITY`), where the
    /// provider's own key does not say.
    let origins: [String: String]

    init(name: String, provider: any ConfigProvider, origins: [String: String] = [:]) {
        self.name = name
        self.provider = provider
        self.origins = origins
    }

    /// Values already in the setting's text (the command line's options, a file's keys, a peer's settings).
    /// - Parameters:
    ///   - name: What messages and `--print-config` call the layer.
    ///   - values: Each key's value: a string, or a list of strings for a list setting.
    ///   - origins: What set each key.
    public static func values(name: String, _ values: [String: ConfigContent], origins: [String: String] = [:]) -> Self
    {
        let secret = Set(ServerConfiguration.settings.filter(\.isSecret).map(\.key))
        var entries: [AbsoluteConfigKey: ConfigValue] = [:]
        for (key, content) in values {
            entries[AbsoluteConfigKey(ConfigKey(key))] = ConfigValue(content, isSecret: secret.contains(key))
        }
        return Self(name: name, provider: InMemoryProvider(name: name, values: entries), origins: origins)
    }

    /// The `IMAGERY_*` variables of `environment`: each key's own (`IMAGERY_LIMITS_MEMORY_LIMIT`), then its
    /// `imagery serve` option's (`IMAGERY_MEMORY_LIMIT`). A list's items are separated by commas.
    public static func environment(_ environment: [String: String]) -> [Self] {
        let settings = ServerConfiguration.settingsByKey
        let secrets = Set(
            ServerConfiguration.settings.filter(\.isSecret).flatMap {
                [$0.variable] + ($0.optionVariable.map { [$0] } ?? [])
            })
        let variables = EnvironmentVariablesProvider(
            environmentVariables: environment, secretsSpecifier: .specific(secrets))
        let own = KeyMappingProvider(upstream: variables) { key in
            AbsoluteConfigKey([settings[key.description]?.variable ?? "IMAGERY_"])
        }
        let options = KeyMappingProvider(upstream: variables) { key in
            AbsoluteConfigKey([settings[key.description]?.optionVariable ?? "IMAGERY_"])
        }
        return [Self(name: "environment", provider: own), Self(name: "environment", provider: options)]
    }
}
