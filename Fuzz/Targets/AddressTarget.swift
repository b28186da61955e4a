import Foundation
import ImageryServer

/// What the source guard reads: IP literals and whether they are public, host allow-list
/// patterns, and the host and port of a source URL. Input: a literal, a newline, raw address
/// bytes (4 or 16 are used), a newline, a host, a newline, a pattern, a newline, a URL.
enum AddressTarget {
    static func run(_ bytes: [UInt8]) throws(FuzzFailure) {
        var reader = FuzzReader(bytes)
        let literal = reader.text()
        let raw = Array(reader.text().utf8)
        let host = reader.text()
        let pattern = reader.text()
        let urlText = reader.text()

        // A literal that parses prints as one that parses to the same address.
        if let address = IPAddress(literal) {
            try require(IPAddress(address.description) == address, "\(literal) -> \(address) does not parse back")
            _ = address.isPublic
        }
        // Any 4 or 16 bytes: the round trip, and IPv4 embedded in IPv6 is judged as the IPv4 address.
        if raw.count >= 4 {
            let v4 = IPAddress.v4(raw.prefix(4).reduce(0) { $0 << 8 | UInt32($1) })
            try require(IPAddress(v4.description) == v4, "\(v4) does not parse back")
            let mapped = IPAddress.v6(Array(repeating: 0, count: 10) + [0xFF, 0xFF] + raw.prefix(4))
            try require(mapped.isPublic == v4.isPublic, "::ffff:\(v4) is judged unlike \(v4)")
            let nat64 = IPAddress.v6([0x00, 0x64, 0xFF, 0x9B] + Array(repeating: 0, count: 8) + raw.prefix(4))
            try require(nat64.isPublic == v4.isPublic, "64:ff9b::\(v4) is judged unlike \(v4)")
        }
        if raw.count >= 16 {
            let v6 = IPAddress.v6(Array(raw.prefix(16)))
            try require(IPAddress(v6.description) == v6, "\(v6) does not parse back")
        }

        // Patterns: a name matches itself; `*.domain` matches only names under `.domain`.
        let lowerHost = host.lowercased()
        try require(SourceGuard.matches(lowerHost, [lowerHost]), "\(lowerHost) does not match itself")
        if SourceGuard.matches(lowerHost, [pattern]) {
            let lowerPattern = pattern.lowercased()
            if lowerPattern.hasPrefix("*.") {
                try require(lowerHost.hasSuffix(String(lowerPattern.dropFirst())), "\(lowerHost) matched \(pattern)")
            } else {
                try require(lowerHost == lowerPattern, "\(lowerHost) matched \(pattern)")
            }
        }

        // A URL the server accepts as a source has a host and a port to connect to, and only then.
        let accepted = ServerConfiguration.sourceURL(urlText)
        if let url = accepted {
            do {
                let (host, port) = try SourceGuard.endpoint(of: url)
                try require(!host.isEmpty && (1...65535).contains(port), "\(urlText): endpoint \(host):\(port)")
                try require(!host.hasPrefix("[") || !host.hasSuffix("]"), "\(urlText): host keeps its brackets")
            } catch let failure as FuzzFailure {
                throw failure
            } catch {
                throw FuzzFailure("\(urlText) was accepted as a source but has no endpoint")
            }
        } else if let url = URL(string: urlText) {
            try require(
                (try? SourceGuard.endpoint(of: url)) == nil, "\(urlText) was refused as a source but has an endpoint")
        }
    }
}
