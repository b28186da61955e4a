import Foundation

/// What imgproxy does to a source URL before fetching it, and what it allows: its URL replacements
/// (`IMGPROXY_URL_REPLACEMENTS`), its base URL (`IMGPROXY_BASE_URL`) and its allowed sources
/// (`IMGPROXY_ALLOWED_SOURCES`), read with imgproxy's pattern syntax: a prefix in which `*` stands
/// for any run of characters but `/`.
struct ImgproxySourceRules: Sendable {
    /// A prefix pattern (`https://*.example.com/`), matched at the start of a URL.
    struct Pattern: Sendable, Hashable {
        /// The literal parts between the `*`s.
        let parts: [String]

        init(_ text: String) {
            parts = text.split(separator: "*", omittingEmptySubsequences: false).map(String.init)
        }

        /// The end of the prefix of `text` this pattern matches and what each `*` took, or `nil`.
        /// Each `*` takes as much as it can first and gives back as needed (as Go's regexp `([^/]*)`).
        func match(_ text: Substring) -> (end: Substring.Index, captures: [Substring])? {
            func match(_ part: Int, from start: Substring.Index) -> (Substring.Index, [Substring])? {
                guard text[start...].hasPrefix(parts[part]) else { return nil }
                let after = text.index(start, offsetBy: parts[part].count)
                guard part + 1 < parts.count else { return (after, []) }
                // A wildcard: the longest run without `/` first.
                var end = text[after...].firstIndex(of: "/") ?? text.endIndex
                while true {
                    if let (matched, captures) = match(part + 1, from: end) {
                        return (matched, [text[after..<end]] + captures)
                    }
                    guard end > after else { return nil }
                    end = text.index(before: end)
                }
            }
            return match(0, from: text.startIndex)
        }
    }

    /// A replacement: the matched prefix becomes `replacement`, `${N}` (or `$N`) the Nth wildcard's text.
    struct Replacement: Sendable, Hashable {
        let pattern: Pattern
        let replacement: String

        func apply(to url: String) -> String {
            let text = Substring(url)
            guard let (end, captures) = pattern.match(text) else { return url }
            return expanded(captures) + text[end...]
        }

        private func expanded(_ captures: [Substring]) -> String {
            var result = ""
            var rest = Substring(replacement)
            while let dollar = rest.firstIndex(of: "$") {
                result += rest[..<dollar]
                var name = rest[rest.index(after: dollar)...]
                if name.first == "{", let close = name.firstIndex(of: "}") {
                    rest = name[name.index(after: close)...]
                    name = name[name.index(after: name.startIndex)..<close]
                } else {
                    let word = name.prefix { $0.isLetter || $0.isNumber || $0 == "_" }
                    rest = name[word.endIndex...]
                    name = word
                }
                if let number = Int(name), number >= 1, number <= captures.count { result += captures[number - 1] }
            }
            return result + rest
        }
    }

    var replacements: [Replacement] = []
    var baseURL = ""
    var allowed: [Pattern] = []

    /// `url` after the replacements, then with the base URL before it when it does not start with it.
    func rewritten(_ url: String) -> String {
        let replaced = replacements.reduce(url) { $1.apply(to: $0) }
        return baseURL.isEmpty || replaced.hasPrefix(baseURL) ? replaced : baseURL + replaced
    }

    /// Whether `url` may be fetched: no allowed sources configured, or one of them matches.
    func allows(_ url: String) -> Bool {
        allowed.isEmpty || allowed.contains { $0.match(Substring(url)) != nil }
    }
}
