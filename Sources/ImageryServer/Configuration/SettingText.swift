import Configuration
import Foundation

/// The one reader of settings' text: numbers, byte counts, seconds, switches, lists and
/// `NAME=VALUE` entries, each refused with what it takes.
package enum SettingText {
    static func string(_ content: ConfigContent) throws(ConfigurationFileError) -> String {
        switch content {
        case .string(let text): return text.trimmingCharacters(in: .whitespaces)
        case .stringArray(let items) where items.count == 1: return items[0].trimmingCharacters(in: .whitespaces)
        default: throw ConfigurationFileError(message: "takes one value, not a list")
        }
    }

    static func strings(_ content: ConfigContent) throws(ConfigurationFileError) -> [String] {
        switch content {
        case .stringArray(let items):
            return items.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        case .string(let text): return text.isEmpty ? [] : [text.trimmingCharacters(in: .whitespaces)]
        default: throw ConfigurationFileError(message: "takes a list of strings")
        }
    }

    static func integer(_ text: String) throws(ConfigurationFileError) -> Int {
        guard let number = Int(text) else {
            throw ConfigurationFileError(message: "takes a whole number, not '\(text)'")
        }
        return number
    }

    static func number(_ text: String) throws(ConfigurationFileError) -> Double {
        guard let number = Double(text), number.isFinite else {
            throw ConfigurationFileError(message: "takes a number, not '\(text)'")
        }
        return number
    }

    /// A byte count: digits, or a number with K, M or G (binary units: `256M` is 268435456).
    static func bytes(_ text: String) throws(ConfigurationFileError) -> Int {
        guard let bytes = byteCount(text) else {
            throw ConfigurationFileError(message: "takes a byte count such as 268435456 or 256M, not '\(text)'")
        }
        return bytes
    }

    /// `text` as bytes (`1048576`, `500K`, `500M`, `2G`: powers of 1024), `nil` unless a count of 0 or more.
    /// The one reader of byte counts: settings and `imagery cache trim --size`.
    package static func byteCount(_ text: String) -> Int? {
        let trimmed = text.trimmingCharacters(in: .whitespaces).uppercased()
        let units: [Character: Double] = ["K": 0x1p10, "M": 0x1p20, "G": 0x1p30]
        if let last = trimmed.last, let unit = units[last] {
            guard let number = Double(trimmed.dropLast()), number >= 0, number * unit < 1e18 else { return nil }
            return Int(number * unit)
        }
        return Int(trimmed).flatMap { $0 >= 0 ? $0 : nil }
    }

    static func seconds(_ text: String) throws(ConfigurationFileError) -> Duration {
        guard let value = Double(text), let duration = ServerConfiguration.duration(seconds: value) else {
            throw ConfigurationFileError(message: "takes a number of seconds from 0 to a year, not '\(text)'")
        }
        return duration
    }

    /// Seconds as the shortest text that reads back the same (`30`, `2.5`).
    static func show(_ duration: Duration) -> String {
        let milliseconds = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        return milliseconds % 1000 == 0 ? String(milliseconds / 1000) : String(Double(milliseconds) / 1000)
    }

    static func boolean(_ text: String) throws(ConfigurationFileError) -> Bool {
        switch text.lowercased() {
        case "1", "true", "yes", "on": return true
        case "0", "false", "no", "off": return false
        default: throw ConfigurationFileError(message: "takes true or false, not '\(text)'")
        }
    }

    /// `NAME=VALUE` items as a dictionary (the first `=` separates).
    static func entries(_ items: [String]) throws(ConfigurationFileError) -> [String: String] {
        var entries: [String: String] = [:]
        for item in items {
            guard let equals = item.firstIndex(of: "="), equals != item.startIndex else {
                throw ConfigurationFileError(message: "takes NAME=VALUE items, not '\(item)'")
            }
            entries[String(item[..<equals])] = String(item[item.index(after: equals)...])
        }
        return entries
    }
}
