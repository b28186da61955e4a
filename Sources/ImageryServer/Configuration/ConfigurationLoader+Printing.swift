import Foundation

extension ConfigurationLoader.Result {
    /// The effective configuration as `imagery serve --print-config` shows it: every key, part by part,
    /// with its value (a secret as `<redacted>`) and where the value came from (`default` when nothing set it).
    /// The lines read back as a YAML file would not: it is for people.
    public func printed() -> String {
        var lines: [String] = []
        var part = ""
        let width = ServerConfiguration.settings.map(\.key.count).max() ?? 0
        for setting in ServerConfiguration.settings {
            let settingPart = String(setting.key.prefix { $0 != "." })
            if settingPart != part {
                if !lines.isEmpty { lines.append("") }
                lines.append("# \(settingPart)")
                part = settingPart
            }
            var value = setting.show(configuration)
            if setting.isSecret, !value.isEmpty { value = "<redacted>" }
            if value.isEmpty { value = "(none)" }
            let key = setting.key.padding(toLength: width, withPad: " ", startingAt: 0)
            lines.append("\(key)  \(value)  # \(sources[setting.key]?.description ?? "default")")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

extension ServerConfiguration {
    /// The README's configuration table, made from ``settings``: each key, the names it is also given
    /// by (the `imagery serve` option, its `IMAGERY_*` variable), and what it does.
    public static func settingsTable() -> String {
        var lines = ["| key | also | what it does |", "|---|---|---|"]
        for setting in settings {
            var also = ["`\(setting.variable)`"]
            if let option = setting.option, let variable = setting.optionVariable {
                also = ["`--\(option)`", "`\(variable)`"] + also
            }
            if let file = setting.fileKey, file != setting.key { also.append("file: `\(file)`") }
            let summary = setting.summary.replacingOccurrences(of: "|", with: "\\|")
            lines.append(
                "| `\(setting.key)` | \(also.joined(separator: ", ")) | \(summary)\(setting.isSecret ? " (secret)" : "") |"
            )
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
