/// The elements of a comma-separated header list (RFC 9110 5.6.1): `Vary`, `If-None-Match`.
///
/// Split and trimmed by bytes, not by `Character`: in a Swift string a comma followed by a
/// combining mark is one character, so splitting on `","` would let a client or an origin glue
/// two elements together.
package enum HTTPHeaderList {
    /// The non-empty elements of `header`, without the spaces and tabs around them.
    package static func elements(_ header: String) -> [Substring] {
        let bytes = header.utf8
        var elements: [Substring] = []
        var start = bytes.startIndex
        while start <= bytes.endIndex {
            let end = bytes[start...].firstIndex(of: UInt8(ascii: ",")) ?? bytes.endIndex
            var lower = start
            var upper = end
            while lower < upper, bytes[lower] == 0x20 || bytes[lower] == 0x09 { lower = bytes.index(after: lower) }
            while upper > lower, bytes[bytes.index(before: upper)] == 0x20 || bytes[bytes.index(before: upper)] == 0x09
            {
                upper = bytes.index(before: upper)
            }
            if lower < upper { elements.append(Substring(bytes[lower..<upper])) }
            guard end < bytes.endIndex else { break }
            start = bytes.index(after: end)
        }
        return elements
    }
}
