import Configuration
import Foundation

extension ThumborConfigurationFile {
    /// A `thumbor.conf` as a configuration layer: its settings read with thumbor's meaning
    /// (``apply(_:to:)``, onto the defaults), thumbor 7.8's defaults for those that decide what a URL
    /// means and the file leaves out, offered under the keys they set (`QUALITY` as `rendering.formatQualities`).
    /// - Parameter name: The file's path, as messages name it.
    /// - Throws: ``ConfigurationFileError`` naming a setting whose value cannot be read or honoured.
    package static func layer(_ text: String, name: String) throws(ConfigurationFileError) -> (
        layer: ConfigurationLayer, report: Report
    ) {
        let defaults = ServerConfiguration()
        var configuration = defaults
        let file = PythonAssignments(text, importable: importable)
        let report = try apply(file, to: &configuration)
        let given = Set(file.values.map(\.name))
        var values: [String: ConfigContent] = [:]
        var origins: [String: String] = [:]
        for (setting, keys, always) in keysBySetting where always || given.contains(setting) {
            for key in keys {
                // A setting read only when it says something (an empty ALLOWED_SOURCES) leaves the key to others.
                guard let entry = ServerConfiguration.settingsByKey[key],
                    always || entry.write(configuration) != entry.write(defaults)
                else { continue }
                values[key] = entry.write(configuration)
                let origin = given.contains(setting) ? setting : "\(setting) (thumbor's default)"
                origins[key] = origins[key].map { "\($0), \(origin)" } ?? origin
            }
        }
        return (.values(name: name, values, origins: origins), report)
    }

    /// The keys each thumbor setting sets, and whether it sets them when the file leaves it out (thumbor's default).
    static let keysBySetting: [(setting: String, keys: [String], always: Bool)] = [
        ("SECURITY_KEY", ["thumbor.securityKey"], false), ("ALLOW_UNSAFE_URL", ["thumbor.allowsUnsafeURLs"], true),
        ("QUALITY", ["rendering.formatQualities"], true), ("WEBP_QUALITY", ["rendering.formatQualities"], false),
        ("AVIF_QUALITY", ["rendering.formatQualities"], false), ("HEIF_QUALITY", ["rendering.formatQualities"], false),
        ("AUTO_WEBP", ["thumbor.autoWebP"], true), ("AUTO_PNG_TO_JPG", ["thumbor.autoPNGToJPEG"], true),
        ("RESPECT_ORIENTATION", ["thumbor.respectsOrientation"], true), ("MAX_WIDTH", ["thumbor.maximumWidth"], true),
        ("MAX_HEIGHT", ["thumbor.maximumHeight"], true), ("MAX_PIXELS", ["limits.maximumSourcePixels"], false),
        ("FILTERS", ["thumbor.filters"], false), ("META_CALLBACK_NAME", ["thumbor.metaCallback"], true),
        ("MAX_AGE", ["caching.responseMaxAge"], true), ("ALLOWED_SOURCES", ["origins.allowedHosts"], false),
        ("HTTP_LOADER_REQUEST_TIMEOUT", ["origins.timeoutSeconds"], false),
    ]
}
