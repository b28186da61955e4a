/// The media ranges of an `Accept` header (RFC 9110 12.5.1) and their weights.
///
/// `image/webp;q=0` is a refusal, not a request; names and parameters are case-insensitive;
/// a weight that is not a valid `qvalue` (`q=2`, `q=high`) counts as `q=1`, as browsers and
/// servers read it. Only the first ``maximumRanges`` ranges are read (the header is bounded by
/// the server's header limit anyway). Reading allocates nothing: it runs on every image request.
public struct AcceptHeader: Sendable {
    public static let maximumRanges = 64

    private let header: String

    public init(_ header: String?) {
        self.header = header ?? ""
    }

    /// The weight the client gives `mediaType` (lower-case `type/subtype`) by the first range
    /// that names it exactly; `nil` when none does (wildcards do not count: a client that can
    /// show WebP says so by name).
    public func explicitWeight(of mediaType: String) -> Double? {
        var header = header
        var mediaType = mediaType
        return header.withUTF8 { header in
            mediaType.withUTF8 { wanted in Self.weight(of: wanted, in: header) }
        }
    }

    /// Whether the client names `mediaType` exactly with a weight above 0.
    public func accepts(_ mediaType: String) -> Bool {
        (explicitWeight(of: mediaType) ?? 0) > 0
    }

    private static func weight(of wanted: UnsafeBufferPointer<UInt8>, in header: UnsafeBufferPointer<UInt8>) -> Double?
    {
        var start = 0
        var count = 0
        while start <= header.count, count < maximumRanges {
            let end = header[start...].firstIndex(of: UInt8(ascii: ",")) ?? header.count
            defer { start = end + 1 }
            let element = trimmed(start..<end, in: header)
            guard !element.isEmpty else { continue }
            count += 1
            let rangeEnd = header[element].firstIndex(of: UInt8(ascii: ";")) ?? element.upperBound
            guard equalsIgnoringCase(trimmed(element.lowerBound..<rangeEnd, in: header), in: header, wanted) else {
                continue
            }
            return qvalue(parameters: rangeEnd..<element.upperBound, in: header)
        }
        return nil
    }

    /// The `q` parameter among `;name=value` parameters: 1 when absent or invalid.
    private static func qvalue(parameters: Range<Int>, in header: UnsafeBufferPointer<UInt8>) -> Double {
        var start = parameters.lowerBound
        while start < parameters.upperBound {
            start += 1  // the ';'
            let end = header[start..<parameters.upperBound].firstIndex(of: UInt8(ascii: ";")) ?? parameters.upperBound
            defer { start = end }
            let parameter = trimmed(start..<end, in: header)
            guard parameter.count >= 2, header[parameter.lowerBound] | 0x20 == UInt8(ascii: "q") else { continue }
            let afterName = trimmed(parameter.lowerBound + 1..<parameter.upperBound, in: header)
            guard afterName.first.map({ header[$0] }) == UInt8(ascii: "=") else { continue }
            return qvalue(trimmed(afterName.lowerBound + 1..<afterName.upperBound, in: header), in: header) ?? 1
        }
        return 1
    }

    /// `qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )`.
    private static func qvalue(_ range: Range<Int>, in header: UnsafeBufferPointer<UInt8>) -> Double? {
        guard let first = range.first, (1...5).contains(range.count) else { return nil }
        let lead = header[first]
        guard lead == UInt8(ascii: "0") || lead == UInt8(ascii: "1") else { return nil }
        var value = lead == UInt8(ascii: "1") ? 1.0 : 0.0
        guard range.count > 1 else { return value }
        guard header[first + 1] == UInt8(ascii: ".") else { return nil }
        var scale = 0.1
        for index in (first + 2)..<range.upperBound {
            let digit = header[index] &- UInt8(ascii: "0")
            guard digit <= 9, lead == UInt8(ascii: "0") || digit == 0 else { return nil }
            value += Double(digit) * scale
            scale /= 10
        }
        return value
    }

    private static func trimmed(_ range: Range<Int>, in header: UnsafeBufferPointer<UInt8>) -> Range<Int> {
        var lower = range.lowerBound
        var upper = range.upperBound
        while lower < upper, header[lower] == 0x20 || header[lower] == 0x09 { lower += 1 }
        while upper > lower, header[upper - 1] == 0x20 || header[upper - 1] == 0x09 { upper -= 1 }
        return lower..<upper
    }

    /// ASCII case-insensitive equality of `header[range]` and `wanted` (already lower-case).
    private static func equalsIgnoringCase(
        _ range: Range<Int>, in header: UnsafeBufferPointer<UInt8>, _ wanted: UnsafeBufferPointer<UInt8>
    ) -> Bool {
        guard range.count == wanted.count else { return false }
        for (offset, index) in range.enumerated() {
            var byte = header[index]
            if (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) { byte |= 0x20 }
            guard byte == wanted[offset] else { return false }
        }
        return true
    }
}
