import Configuration
import Foundation
import Imagery

/// The kinds of values settings take, each with its one parser and its one way of being written.
extension ConfigurationSetting {
    typealias Path<Value> = any WritableKeyPath<ServerConfiguration, Value> & Sendable

    /// One string taken as it is.
    static func text(
        _ key: String, file: String? = nil, option: String? = nil, secret: Bool = false, _ path: Path<String>,
        _ summary: String
    ) -> Self {
        Self(key, .value, file: file, option: option, secret: secret, summary) {
            configuration, content throws(ConfigurationFileError) in
            configuration[keyPath: path] = try SettingText.string(content)
        } write: {
            .string($0[keyPath: path])
        }
    }

    /// A string that may be absent: empty is none (a secret key stays empty, for validation to refuse:
    /// an empty signing key must never turn signing off unnoticed).
    static func optionalText(
        _ key: String, file: String? = nil, option: String? = nil, secret: Bool = false, _ path: Path<String?>,
        _ summary: String
    ) -> Self {
        Self(key, .value, file: file, option: option, secret: secret, summary) {
            configuration, content throws(ConfigurationFileError) in
            let text = try SettingText.string(content)
            configuration[keyPath: path] = text.isEmpty && !secret ? nil : text
        } write: {
            .string($0[keyPath: path] ?? "")
        }
    }

    /// A whole number.
    static func integer(_ key: String, file: String? = nil, option: String? = nil, _ path: Path<Int>, _ summary: String)
        -> Self
    {
        Self(key, .value, file: file, option: option, summary) {
            configuration, content throws(ConfigurationFileError) in
            configuration[keyPath: path] = try SettingText.integer(SettingText.string(content))
        } write: {
            .string(String($0[keyPath: path]))
        }
    }

    /// A whole number that may be absent: empty is none.
    static func optionalInteger(
        _ key: String, file: String? = nil, option: String? = nil, _ path: Path<Int?>, _ summary: String
    ) -> Self {
        Self(key, .value, file: file, option: option, summary) {
            configuration, content throws(ConfigurationFileError) in
            let text = try SettingText.string(content)
            configuration[keyPath: path] = text.isEmpty ? nil : try SettingText.integer(text)
        } write: {
            .string($0[keyPath: path].map(String.init) ?? "")
        }
    }

    /// A byte count: a number, or one with K, M or G (`256M`).
    static func bytes(_ key: String, file: String? = nil, option: String? = nil, _ path: Path<Int>, _ summary: String)
        -> Self
    {
        Self(key, .value, file: file, option: option, summary) {
            configuration, content throws(ConfigurationFileError) in
            configuration[keyPath: path] = try SettingText.bytes(SettingText.string(content))
        } write: {
            .string(String($0[keyPath: path]))
        }
    }

    /// A byte count that may be absent: empty is none.
    static func optionalBytes(
        _ key: String, file: String? = nil, option: String? = nil, _ path: Path<Int?>, _ summary: String
    ) -> Self {
        Self(key, .value, file: file, option: option, summary) {
            configuration, content throws(ConfigurationFileError) in
            let text = try SettingText.string(content)
            configuration[keyPath: path] = text.isEmpty ? nil : try SettingText.bytes(text)
        } write: {
            .string($0[keyPath: path].map(String.init) ?? "")
        }
    }

    /// A duration in seconds (`2.5`).
    static func seconds(
        _ key: String, file: String? = nil, option: String? = nil, _ path: Path<Duration>, _ summary: String
    ) -> Self {
        Self(key, .value, file: file, option: option, summary) {
            configuration, content throws(ConfigurationFileError) in
            configuration[keyPath: path] = try SettingText.seconds(SettingText.string(content))
        } write: {
            .string(SettingText.show($0[keyPath: path]))
        }
    }

    /// A duration in seconds that may be absent: empty is none.
    static func optionalSeconds(
        _ key: String, file: String? = nil, option: String? = nil, _ path: Path<Duration?>, _ summary: String
    ) -> Self {
        Self(key, .value, file: file, option: option, summary) {
            configuration, content throws(ConfigurationFileError) in
            let text = try SettingText.string(content)
            configuration[keyPath: path] = text.isEmpty ? nil : try SettingText.seconds(text)
        } write: {
            .string($0[keyPath: path].map(SettingText.show) ?? "")
        }
    }

    /// A switch: `true` or `false` (also yes, no, on, off, 1, 0).
    static func flag(_ key: String, file: String? = nil, option: String? = nil, _ path: Path<Bool>, _ summary: String)
        -> Self
    {
        Self(key, .value, file: file, option: option, summary) {
            configuration, content throws(ConfigurationFileError) in
            configuration[keyPath: path] = try SettingText.boolean(SettingText.string(content))
        } write: {
            .string(String($0[keyPath: path]))
        }
    }

    /// A switch that may be unset (its default then depends on other settings): empty is unset.
    static func optionalFlag(
        _ key: String, file: String? = nil, option: String? = nil, _ path: Path<Bool?>, _ summary: String
    ) -> Self {
        Self(key, .value, file: file, option: option, summary) {
            configuration, content throws(ConfigurationFileError) in
            let text = try SettingText.string(content)
            configuration[keyPath: path] = text.isEmpty ? nil : try SettingText.boolean(text)
        } write: {
            .string($0[keyPath: path].map { String($0) } ?? "")
        }
    }

    /// A list of strings.
    static func list(
        _ key: String, file: String? = nil, option: String? = nil, secret: Bool = false, _ path: Path<[String]>,
        _ summary: String
    ) -> Self {
        Self(key, .list, file: file, option: option, secret: secret, summary) {
            configuration, content throws(ConfigurationFileError) in
            configuration[keyPath: path] = try SettingText.strings(content)
        } write: {
            .stringArray($0[keyPath: path])
        }
    }

    /// A file or directory path; empty is none.
    static func path(_ key: String, file: String? = nil, option: String? = nil, _ path: Path<URL?>, _ summary: String)
        -> Self
    {
        Self(key, .value, file: file, option: option, summary) {
            configuration, content throws(ConfigurationFileError) in
            let text = try SettingText.string(content)
            configuration[keyPath: path] = text.isEmpty ? nil : URL(fileURLWithPath: text)
        } write: {
            .string($0[keyPath: path]?.path ?? "")
        }
    }

    /// A list of format names (`jpeg`, `webp`).
    static func formats(_ key: String, file: String? = nil, _ path: Path<[ImageFormat]>, _ summary: String) -> Self {
        Self(key, .list, file: file, summary) { configuration, content throws(ConfigurationFileError) in
            configuration[keyPath: path] = try ImgproxyOptions.formats(named: SettingText.strings(content))
        } write: {
            .stringArray($0[keyPath: path].map(\.rawValue))
        }
    }

    /// Named values, `NAME=VALUE` items (an object in a file: `{"thumb": "w=200"}`).
    static func entries(
        _ key: String, file: String? = nil, option: String? = nil, _ path: Path<[String: String]>, _ summary: String
    ) -> Self {
        Self(key, .list, file: file, option: option, summary) { configuration, content throws(ConfigurationFileError) in
            configuration[keyPath: path] = try SettingText.entries(SettingText.strings(content))
        } write: {
            .stringArray($0[keyPath: path].sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" })
        }
    }
}
