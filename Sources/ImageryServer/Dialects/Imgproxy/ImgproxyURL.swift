import Foundation

/// An imgproxy URL path, split as imgproxy 3/4 splits it, before any meaning is given to its options
/// (``ImgproxyOptions``):
///
///     /SIGNATURE/OPTION:ARG:ARG/.../plain/SOURCE_URL[@EXTENSION]
///     /SIGNATURE/OPTION:ARG:ARG/.../BASE64URL_SOURCE[.EXTENSION]
///
/// Options are the segments holding a `:`; the first segment without one starts the source
/// (`plain`, then the URL percent-encoded where it has `?`, `#` or `@`; else base64url, possibly
/// split by `/`). The signature signs everything after it, from its `/`, as sent.
struct ImgproxyURL {
    /// The first segment: an HMAC (with keys) or any string (without).
    let signature: Substring
    /// The path after the signature, as sent (what the signature signs), starting with `/`.
    let signed: Substring
    /// The options in their order, as written (`rs`, [`fill`, `300`, `200`]).
    let options: [Option]
    /// The source URL, decoded.
    let source: String
    /// The extension after `@` (plain) or `.` (base64): the output format; `nil`: none given.
    let fileExtension: String?

    struct Option: Equatable {
        let name: Substring
        let arguments: [Substring]
    }

    /// How URLs are written on a server (imgproxy's settings for it).
    struct Syntax: Sendable {
        /// Between an option's name and its arguments (`IMGPROXY_ARGUMENTS_SEPARATOR`).
        var separator: Character = ":"
        /// The segment after the signature names presets (`thumb:small`), as imgproxy's `IMGPROXY_ONLY_PRESETS`.
        var onlyPresets = false
        /// A base64 source split by `/` ends with a file name (`IMGPROXY_BASE64_URL_INCLUDES_FILENAME`).
        var base64IncludesFilename = false
    }

    /// - Throws: A 400 ``ServerError`` naming what is malformed.
    init(path: Substring, syntax: Syntax = Syntax()) throws {
        DialectParses.count()
        (signature, signed) = try Self.signature(of: path)
        var options: [Option] = []
        var segments = signed.dropFirst().split(separator: "/", omittingEmptySubsequences: false)[...]
        if syntax.onlyPresets, let names = segments.first, segments.count > 1 {
            options.append(
                Option(
                    name: "preset",
                    arguments: names.split(separator: syntax.separator, omittingEmptySubsequences: false)))
            segments = segments.dropFirst()
        }
        while !syntax.onlyPresets, let segment = segments.first, segment.contains(syntax.separator) {
            let parts = segment.split(separator: syntax.separator, omittingEmptySubsequences: false)
            options.append(Option(name: parts[0], arguments: Array(parts.dropFirst())))
            segments = segments.dropFirst()
        }
        self.options = options
        if syntax.base64IncludesFilename, segments.first != "plain", segments.count > 1 {
            segments = segments.dropLast()
        }
        (source, fileExtension) = try Self.source(segments)
    }

    /// The source and its extension from the segments after the options.
    static func source(_ segments: ArraySlice<Substring>) throws -> (String, String?) {
        guard let first = segments.first, !first.isEmpty else {
            throw ServerError.badParameter("an imgproxy URL ends with the source: plain/URL or its base64url")
        }
        if first == "plain", segments.count > 1 {
            let text = segments.dropFirst().joined(separator: "/")
            let parts = text.split(separator: "@", omittingEmptySubsequences: false)
            guard parts.count <= 2 else {
                throw ServerError.badParameter(
                    "an imgproxy plain source has at most one @ (the extension): percent-encode the URL's own")
            }
            guard !parts[0].isEmpty, let decoded = String(parts[0]).removingPercentEncoding else {
                throw ServerError.badParameter("the imgproxy plain source is empty or wrongly percent-encoded")
            }
            return (decoded, parts.count == 2 && !parts[1].isEmpty ? String(parts[1]) : nil)
        }
        let text = segments.joined()
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count <= 2 else {
            throw ServerError.badParameter("an imgproxy base64 source has at most one . (the extension)")
        }
        guard !parts[0].isEmpty, let data = ImgproxySigner.data(base64URL: parts[0]),
            let decoded = String(data: data, encoding: .utf8)
        else {
            throw ServerError.badParameter("the imgproxy source is not base64url of a URL (or plain/URL)")
        }
        return (decoded, parts.count == 2 && !parts[1].isEmpty ? String(parts[1]) : nil)
    }

    /// Whether `path` has the shape of an imgproxy URL, so that it is not taken for a thumbor URL
    /// (whose `trim:10` or `10x20:30x40` also hold colons) or a stray path: a signature, imgproxy
    /// options (the first one a name imgproxy has), then `plain/...` or base64url with at most one
    /// `.` (with `onlyPresets`: a signature, preset names and a source).
    static func mayBe(_ path: Substring, syntax: Syntax = Syntax()) -> Bool {
        guard let (_, signed) = try? signature(of: path) else { return false }
        let segments = signed.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
        guard segments.count >= 2 else { return false }
        if syntax.onlyPresets { return true }
        var rest = segments[...]
        if let colon = rest.first?.firstIndex(of: syntax.separator), !names.contains(rest.first![..<colon]) {
            return false
        }
        // thumbor's `trim:top-left` and `trim:bottom-right` (imgproxy's trim takes a number first).
        if let first = rest.first, first.hasPrefix("trim:top-left") || first.hasPrefix("trim:bottom-right") {
            return false
        }
        while let segment = rest.first, segment.contains(syntax.separator) { rest = rest.dropFirst() }
        guard let first = rest.first, !first.isEmpty else { return false }
        if first == "plain" { return rest.count > 1 }
        if syntax.base64IncludesFilename, rest.count > 1 { rest = rest.dropLast() }
        let base64 = rest.joined()
        return base64.utf8.allSatisfy { Self.base64URLBytes.contains($0) }
            && base64.utf8.filter({ $0 == UInt8(ascii: ".") }).count <= 1
    }

    private static let names = Set(ImgproxyOptions.names.union(ImgproxyOptions.proNames).map { Substring($0) })
    private static let base64URLBytes = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_=.".utf8)

    /// The signature and the signed rest of `path` (from its `/`, normalised as imgproxy normalises
    /// it: ``normalized(_:)``), before anything else is read: a forged URL is refused before its options are.
    static func signature(of path: Substring) throws -> (signature: Substring, signed: Substring) {
        let path = path.drop { $0 == "/" }
        guard let slash = path.firstIndex(of: "/"), slash > path.startIndex, path.index(after: slash) < path.endIndex
        else {
            throw ServerError.badParameter(
                "an imgproxy URL is /SIGNATURE/OPTIONS/plain/SOURCE_URL or /SIGNATURE/OPTIONS/BASE64URL_SOURCE")
        }
        return (path[..<slash], normalized(path[slash...]))
    }

    /// What proxies and browsers may have done to an imgproxy path, undone as imgproxy undoes it
    /// (its `RedenormalizePath`): `%3A` in the options back to `:`, a plain source's `scheme:/host`
    /// back to `scheme://host` (`local:///`), and an empty segment before `plain/` dropped. `signed`
    /// starts with `/`; most paths are returned as they are, without a copy.
    static func normalized(_ signed: Substring) -> Substring {
        let rest = signed.dropFirst()
        var options: Substring
        var plain: Substring?
        if rest.hasPrefix("plain/") {
            (options, plain) = ("", rest.dropFirst(6))
        } else if let range = rest.firstRange(of: "/plain/") {
            (options, plain) = (rest[..<range.lowerBound], rest[range.upperBound...])
        } else {
            options = rest
        }
        let escaped = options.contains("%3A")
        let repair = plain.flatMap(schemeRepair(_:))
        guard escaped || repair != nil || rest.first == "/" else { return signed }
        if escaped { options = Substring(options.replacingOccurrences(of: "%3A", with: ":")) }
        guard var plain else { return "/" + options.drop { $0 == "/" } }
        if let (colon, scheme) = repair {
            let after = plain.index(colon, offsetBy: 2)
            plain = plain[..<colon] + (scheme == "local" ? ":///" : "://") + plain[after...]
        }
        let joined = options + "/plain/" + plain
        return "/" + joined.drop { $0 == "/" }
    }

    /// In a plain source, the `:/` of `scheme:/x` (one slash, then not a slash) that imgproxy's
    /// `^(\S+):/([^/])` finds (the last one after a run without white space) and the scheme before it.
    private static func schemeRepair(_ plain: Substring) -> (colon: Substring.Index, scheme: Substring)? {
        let run = plain.prefix { !$0.isWhitespace }
        var found: Substring.Index?
        var index = run.startIndex
        while index < run.endIndex {
            let next = run.index(after: index)
            if run[index] == ":", index > run.startIndex, next < plain.endIndex, plain[next] == "/" {
                let third = plain.index(after: next)
                if third < plain.endIndex, plain[third] != "/" { found = index }
            }
            index = next
        }
        return found.map { ($0, plain[..<$0]) }
    }
}
