import Configuration
import Foundation

extension ImgproxyEnvironment {
    /// imgproxy's variables of `environment` as a configuration layer: each read with imgproxy's syntax
    /// and meaning (``apply(_:to:)``, onto the defaults), and offered under the keys it sets
    /// (`IMGPROXY_KEY` as `imgproxy.keys`), so that Imagery's own settings and the command line still win.
    /// - Throws: ``ConfigurationFileError`` naming the variable whose value is not valid.
    package static func layer(_ environment: [String: String]) throws(ConfigurationFileError) -> (
        layer: ConfigurationLayer, report: Report
    ) {
        var configuration = ServerConfiguration()
        let report = try apply(environment, to: &configuration)
        var values: [String: ConfigContent] = [:]
        var origins: [String: String] = [:]
        for (variable, keys) in variables.map({ ($0.key, $0.value.keys) }).sorted(by: { $0.0 < $1.0 }) {
            guard let value = environment[variable], !value.trimmingCharacters(in: .whitespaces).isEmpty else {
                continue
            }
            for key in keys {
                guard let setting = ServerConfiguration.settingsByKey[key] else { continue }
                values[key] = setting.write(configuration)
                origins[key] = origins[key].map { "\($0), \(variable)" } ?? variable
            }
        }
        return (.values(name: "imgproxy's variables", values, origins: origins), report)
    }

    /// A variable's reader: its value, the configuration, and the whole environment (for variables that
    /// change how another is read: `PRESETS_SEPARATOR`).
    typealias Reader = @Sendable (String, inout ServerConfiguration, [String: String]) throws -> Void

    /// A variable read here: the configuration keys it sets (offered under them by ``layer(_:)``) and
    /// its reader, with imgproxy's syntax.
    struct Variable: Sendable {
        let keys: [String]
        let read: Reader

        init(_ keys: [String], read: @escaping Reader) {
            self.keys = keys
            self.read = read
        }

        /// A switch (`true`, `1`, `false`, `0`...: Go's `ParseBool`) setting the value at `path`, whose key is `key`.
        static func flag(_ key: String, _ path: any WritableKeyPath<ServerConfiguration, Bool> & Sendable) -> Variable {
            Variable([key]) { value, configuration, _ in configuration[keyPath: path] = try boolean(value) }
        }

        /// A switch setting the value at `path` (`nil`: the server's own behaviour), whose key is `key`.
        static func flag(_ key: String, _ path: any WritableKeyPath<ServerConfiguration, Bool?> & Sendable) -> Variable
        {
            Variable([key]) { value, configuration, _ in configuration[keyPath: path] = try boolean(value) }
        }
    }
}
