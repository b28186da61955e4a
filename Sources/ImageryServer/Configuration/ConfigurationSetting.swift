import Configuration
import Foundation
import Imagery

/// One setting of ``ServerConfiguration``: its key in Imagery's one namespace (`limits.memoryLimit`),
/// the names it had before the namespace (a flat configuration-file key, an `imagery serve` option),
/// and how its value is read from text and written back as text.
///
/// Every provider (the command line, `IMAGERY_*` variables, a JSON or YAML file, imgproxy's variables,
/// a `thumbor.conf`) hands a setting text: one string, or a list of strings for a ``Kind/list``
/// setting. The setting alone parses it, so a value means the same wherever it was given, and
/// ``show(_:)`` writes the effective value in the same syntax (`--print-config`, the README's table).
public struct ConfigurationSetting: Sendable {
    /// Whether the setting takes one value or a list.
    public enum Kind: Sendable { case value, list }

    /// The key: its part and name, `listener.port`.
    public let key: String
    public let kind: Kind
    /// Whether the value is a secret (a signing key): never printed, never logged.
    public let isSecret: Bool
    /// The key's name in configuration files before the namespace (`memoryLimit`, `autoQuality.target`);
    /// still read.
    public let fileKey: String?
    /// The `imagery serve` option that sets it (`memory-limit`), also read as `IMAGERY_MEMORY_LIMIT`.
    public let option: String?
    /// What it does, in one line, with its default.
    public let summary: String
    let read: @Sendable (inout ServerConfiguration, ConfigContent) throws(ConfigurationFileError) -> Void
    let write: @Sendable (ServerConfiguration) -> ConfigContent

    /// The variable that sets it: `IMAGERY_` and the key in capitals, `_` between words and parts
    /// (`IMAGERY_LIMITS_MEMORY_LIMIT`), as swift-configuration's environment provider spells keys.
    public var variable: String { "IMAGERY_" + ConfigurationSetting.variableWords(key) }

    /// The variable of its ``option`` (`IMAGERY_MEMORY_LIMIT`), read as well.
    public var optionVariable: String? {
        option.map { "IMAGERY_" + $0.uppercased().replacingOccurrences(of: "-", with: "_") }
    }

    /// The value of `configuration` as text (a list: one line an item; empty: none).
    public func show(_ configuration: ServerConfiguration) -> String {
        switch write(configuration) {
        case .string(let text): text
        case .stringArray(let items): items.joined(separator: ", ")
        default: ""
        }
    }

    /// `text` of the setting's kind: a list's items are separated by commas.
    public func content(parsing text: String) -> ConfigContent {
        switch kind {
        case .value: .string(text)
        case .list:
            .stringArray(
                text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })
        }
    }

    /// `key`'s words in capitals, `_` between them and between parts. A word starts at a capital after a
    /// small letter or digit (but a lone capital ending the name stays with its word: `autoWebP`), or at
    /// the last capital of a run followed by a small letter other than a plural `s`
    /// (`base64URLIncludesFilename`: `BASE64_URL_INCLUDES_FILENAME`; `allowsUnsafeURLs`: `ALLOWS_UNSAFE_URLS`).
    static func variableWords(_ key: String) -> String {
        var words = ""
        for component in key.split(separator: ".", omittingEmptySubsequences: false) {
            if !words.isEmpty { words.append("_") }
            let characters = Array(component)
            for (index, character) in characters.enumerated() {
                if index > 0, character.isUppercase {
                    let previous = characters[index - 1]
                    let next: Character? = index + 1 < characters.count ? characters[index + 1] : nil
                    let afterNext: Character? = index + 2 < characters.count ? characters[index + 2] : nil
                    let endsName = next == nil
                    let plural = next == "s" && (afterNext == nil || afterNext!.isUppercase)
                    if (previous.isLowercase || previous.isNumber) && !endsName
                        || previous.isUppercase && (next?.isLowercase ?? false) && !plural
                    {
                        words.append("_")
                    }
                }
                words.append(contentsOf: character.uppercased())
            }
        }
        return words
    }

    init(
        _ key: String, _ kind: Kind, file: String? = nil, option: String? = nil, secret: Bool = false,
        _ summary: String,
        read: @escaping @Sendable (inout ServerConfiguration, ConfigContent) throws(ConfigurationFileError) -> Void,
        write: @escaping @Sendable (ServerConfiguration) -> ConfigContent
    ) {
        self.key = key
        self.kind = kind
        self.fileKey = file
        self.option = option
        self.isSecret = secret
        self.summary = summary
        self.read = read
        self.write = write
    }
}
