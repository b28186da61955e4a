import Foundation
import HummingbirdCore

/// Named sets of `/image` parameters (``ServerConfiguration/Requests/presets``): `preset=NAME` (or `A,B`,
/// applied in order) stands for them, and the request's own parameters override them. In
/// only-presets mode (``ServerConfiguration/Requests/onlyPresets``) a request may name presets and nothing
/// else: the operator fixes every output, and an unsigned URL cannot ask for another.
struct Presets: Sendable {
    /// Each preset's parameters, percent-decoded.
    private let definitions: [String: [String: String]]
    private let onlyPresets: Bool

    /// The parameters a request may give in only-presets mode.
    static let allowedWithOnlyPresets: Set<String> = ["url", "preset", "sig"]

    /// - Parameter definitions: Name to query (`w=200&h=200&format=webp`).
    /// - Throws: ``ConfigurationFileError`` for a name or a query that cannot be one.
    init(_ definitions: [String: String], onlyPresets: Bool) throws(ConfigurationFileError) {
        var parsed: [String: [String: String]] = [:]
        for (name, query) in definitions {
            guard !name.isEmpty, name.utf8.allSatisfy({ Self.nameBytes.contains($0) }) else {
                throw ConfigurationFileError(
                    message: "presets: \(name) is not a preset name (letters, digits, - and _)")
            }
            let parameters = Dictionary(
                URI("/?" + query).queryParameters.map { (String($0.key), String($0.value)) },
                uniquingKeysWith: { first, _ in first }
            )
            for forbidden in ["url", "preset", "sig"] where parameters[forbidden] != nil {
                throw ConfigurationFileError(message: "presets: \(name) cannot set \(forbidden)")
            }
            parsed[name] = parameters
        }
        self.definitions = parsed
        self.onlyPresets = onlyPresets
    }

    private static let nameBytes = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_".utf8)

    /// The names, sorted.
    var names: [String] { definitions.keys.sorted() }

    /// `query` with its presets expanded: their parameters, then the request's over them.
    /// - Throws: A 400 ``ServerError`` for an unknown preset, or in only-presets mode for any other parameter.
    func expand(_ query: [String: String]) throws -> [String: String] {
        if onlyPresets {
            let others = query.keys.filter { !Self.allowedWithOnlyPresets.contains($0) }.sorted()
            guard others.isEmpty else {
                throw ServerError.badParameter(
                    "only presets are allowed here: use preset=NAME (one of \(names.joined(separator: ", "))), not \(others.joined(separator: ", "))"
                )
            }
            guard query["preset"] != nil else {
                throw ServerError.badParameter("preset is required: one of \(names.joined(separator: ", "))")
            }
        }
        guard let list = query["preset"] else { return query }
        var expanded: [String: String] = [:]
        for name in list.split(separator: ",", omittingEmptySubsequences: false).map(String.init) {
            guard let parameters = definitions[name] else {
                let known = names.isEmpty ? "none are configured" : "one of \(names.joined(separator: ", "))"
                throw ServerError.badParameter("preset must name configured presets (\(known)), separated by commas")
            }
            expanded.merge(parameters) { _, later in later }
        }
        expanded.merge(query.filter { $0.key != "preset" }) { _, request in request }
        return expanded
    }
}
