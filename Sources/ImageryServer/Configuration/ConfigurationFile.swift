import Configuration
import Foundation
import Yams

/// A configuration file, JSON or YAML, as a layer: keys in parts (`{"limits": {"memoryLimit": "1G"}}`,
/// or dotted: `{"limits.memoryLimit": "1G"}`), and the flat keys files had before the parts
/// (`{"memoryLimit": 1073741824}`, ``ConfigurationSetting/fileKey``). A list setting takes an array
/// (or one string, its items separated by commas); a `NAME=VALUE` setting an object (`{"thumb": "w=200"}`).
/// Keys that are no setting are reported, not read.
public enum ConfigurationFile {
    /// The layer of the file at `url` (YAML when its name ends in `.yaml` or `.yml`), and a note for each
    /// key that is no setting.
    /// - Throws: ``ConfigurationFileError`` when it cannot be read or is not a JSON or YAML object.
    public static func layer(contentsOf url: URL) throws(ConfigurationFileError) -> (
        layer: ConfigurationLayer, notes: [String]
    ) {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw ConfigurationFileError(message: "cannot read the configuration file \(url.path)")
        }
        return try layer(data, name: url.path, yaml: ["yaml", "yml"].contains(url.pathExtension.lowercased()))
    }

    /// The layer of a file's `data`.
    /// - Parameters:
    ///   - data: The file's bytes.
    ///   - name: What errors call it (its path).
    ///   - yaml: Whether it is YAML (else JSON).
    public static func layer(_ data: Data, name: String, yaml: Bool = false) throws(ConfigurationFileError) -> (
        layer: ConfigurationLayer, notes: [String]
    ) {
        let tree: Tree
        do {
            if yaml {
                tree = try YAMLDecoder().decode(Tree.self, from: data)
            } else {
                tree = try JSONDecoder().decode(Tree.self, from: data)
            }
        } catch {
            throw ConfigurationFileError(message: "\(name): not valid \(yaml ? "YAML" : "JSON")")
        }
        guard case .object = tree else {
            throw ConfigurationFileError(message: "\(name): not a \(yaml ? "YAML mapping" : "JSON object")")
        }
        var values: [String: ConfigContent] = [:]
        var origins: [String: String] = [:]
        for setting in ServerConfiguration.settings {
            for path in [setting.key] + (setting.fileKey.map { [$0] } ?? []) {
                guard let node = tree.node(at: path), node != .null else { continue }
                guard let content = node.content(for: setting) else {
                    throw ConfigurationFileError(
                        message: "\(setting.key) (\(path), \(name)): wrong type", key: setting.key)
                }
                values[setting.key] = content
                origins[setting.key] = path
                break
            }
        }
        let known = Set(ServerConfiguration.settings.flatMap { [$0.key] + ($0.fileKey.map { [$0] } ?? []) })
        let notes = tree.unknownPaths(known: known).map { "\(name): \($0) is no configuration key: not read" }
        return (.values(name: name, values, origins: origins), notes)
    }

    /// A JSON or YAML value.
    indirect enum Tree: Decodable, Equatable {
        case null
        case scalar(String)
        case list([Tree])
        case object([String: Tree])

        init(from decoder: any Decoder) throws {
            if var list = try? decoder.unkeyedContainer() {
                var items: [Tree] = []
                while !list.isAtEnd { items.append(try list.decode(Tree.self)) }
                self = .list(items)
                return
            }
            if let object = try? decoder.container(keyedBy: Name.self) {
                var members: [String: Tree] = [:]
                for key in object.allKeys { members[key.stringValue] = try object.decode(Tree.self, forKey: key) }
                self = .object(members)
                return
            }
            let value = try decoder.singleValueContainer()
            if value.decodeNil() {
                self = .null
            } else if let flag = try? value.decode(Bool.self) {
                self = .scalar(String(flag))
            } else if let number = try? value.decode(Int.self) {
                self = .scalar(String(number))
            } else if let number = try? value.decode(Double.self) {
                self = .scalar(String(number))
            } else {
                self = .scalar(try value.decode(String.self))
            }
        }

        struct Name: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        /// The node at a dotted path: nested objects, or a member whose name holds dots.
        func node(at path: String) -> Tree? {
            guard case .object(let members) = self else { return nil }
            if let member = members[path] { return member }
            var prefix = path[...]
            while let dot = prefix.lastIndex(of: ".") {
                prefix = prefix[..<dot]
                if let member = members[String(prefix)] {
                    return member.node(at: String(path[path.index(after: dot)...]))
                }
            }
            return nil
        }

        /// The node as a setting's text, `nil` when it has the wrong shape.
        func content(for setting: ConfigurationSetting) -> ConfigContent? {
            switch (self, setting.kind) {
            case (.scalar(let text), _): return setting.content(parsing: text)
            case (.list(let items), .list):
                var texts: [String] = []
                for item in items {
                    guard case .scalar(let text) = item else { return nil }
                    texts.append(text)
                }
                return .stringArray(texts)
            case (.object(let members), .list):
                var entries: [String] = []
                for (name, member) in members.sorted(by: { $0.key < $1.key }) {
                    guard case .scalar(let text) = member else { return nil }
                    entries.append("\(name)=\(text)")
                }
                return .stringArray(entries)
            default: return nil
            }
        }

        /// The paths of members that are neither a known key nor lead to one.
        func unknownPaths(known: Set<String>, under prefix: String = "") -> [String] {
            guard case .object(let members) = self else { return [] }
            var unknown: [String] = []
            for (name, member) in members.sorted(by: { $0.key < $1.key }) {
                let path = prefix.isEmpty ? name : prefix + "." + name
                if known.contains(path) { continue }
                if known.contains(where: { $0.hasPrefix(path + ".") }) {
                    unknown += member.unknownPaths(known: known, under: path)
                } else {
                    unknown.append(path)
                }
            }
            return unknown
        }
    }
}
