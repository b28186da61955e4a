/// The head of an HTTP/1.1 request read from its bytes, for the hits answered on the event loop
/// (``HitHandler``): a strict subset of what the server's HTTP decoder (llhttp) accepts, so that
/// a request read here is read the same there. Anything outside it is ``Reading/unsupported``, and
/// the connection's bytes go to the decoder from there on (which answers as it always has: its
/// limits, its 400s).
///
/// Read: `GET` or `HEAD` (another method is the decoder's), a target in origin form made of the characters RFC 3986 allows, `HTTP/1.1`;
/// fields `name: value` with a token for a name and visible ASCII, spaces and tabs in a value; CRLF
/// line ends. Kept: the target, `Accept`, `If-None-Match`, `If-Modified-Since`, and whether
/// anything asks for more than a plain answer (`Connection: close`, `Upgrade`, `Expect`, a field of
/// interest given twice): those are complete heads a route answers. A head with a body
/// (`Content-Length` not 0, `Transfer-Encoding`) is unsupported: where it ends is the decoder's to find;
/// so are a second `Content-Length` and a target longer than a field may be, which the decoder refuses.
package struct RequestHead: Sendable, Equatable {
    package enum Method: Sendable, Equatable { case get, head }

    package var method: Method = .get
    /// The request target, as written (`/image?url=...`).
    package var target = ""
    package var accept: String?
    package var ifNoneMatch: String?
    package var ifModifiedSince: String?
    /// Whether only a route may answer it (the connection to close after it, an upgrade, an
    /// expectation, a field of interest given twice).
    package var needsRoute = false
    /// The bytes of the head, CRLF CRLF included.
    package var length = 0

    /// What the start of a connection's unread bytes holds.
    package enum Reading: Sendable, Equatable {
        /// A whole head (of a request without a body).
        case complete(RequestHead)
        /// The start of one: more bytes are needed.
        case incomplete
        /// Something this reader does not read: the decoder's from here on.
        case unsupported
    }

    /// Limits as the server's decoder has them.
    package struct Limits: Sendable {
        package var maximumHeadBytes: Int
        package var maximumFieldBytes: Int
        package var maximumFieldCount: Int
        package init(maximumHeadBytes: Int, maximumFieldBytes: Int, maximumFieldCount: Int) {
            (self.maximumHeadBytes, self.maximumFieldBytes, self.maximumFieldCount) = (
                maximumHeadBytes, maximumFieldBytes, maximumFieldCount
            )
        }
    }

    /// Reads the request head at the start of `bytes`.
    package static func read(_ bytes: UnsafeRawBufferPointer, limits: Limits) -> Reading {
        var head = RequestHead()
        var index = 0
        let count = bytes.count
        /// The index of the LF of the CRLF ending the line from `start`; `nil` when not there yet.
        func lineEnd(from start: Int) -> Int?? {
            var i = start
            while i < count {
                let byte = bytes[i]
                if byte == 0x0A { return i > start && bytes[i - 1] == 0x0D ? i : .some(nil) }  // bare LF: unsupported
                i += 1
            }
            return nil
        }
        // Request line.
        guard let found = lineEnd(from: 0) else { return count > limits.maximumHeadBytes ? .unsupported : .incomplete }
        guard let lineEnd0 = found else { return .unsupported }
        let requestLine = UnsafeRawBufferPointer(rebasing: bytes[0..<(lineEnd0 - 1)])
        guard let firstSpace = requestLine.firstIndex(of: 0x20) else { return .unsupported }
        let method = UnsafeRawBufferPointer(rebasing: requestLine[0..<firstSpace])
        if method.elementsEqual("GET".utf8) {
            head.method = .get
        } else if method.elementsEqual("HEAD".utf8) {
            head.method = .head
        } else {
            return .unsupported  // the decoder knows which other methods are methods
        }
        let rest = UnsafeRawBufferPointer(rebasing: requestLine[(firstSpace + 1)...])
        guard rest.count > 9, rest.suffix(9).elementsEqual(" HTTP/1.1".utf8) else { return .unsupported }
        let target = UnsafeRawBufferPointer(rebasing: rest[rest.startIndex..<(rest.endIndex - 9)])
        // The decoder holds the target to the limit of a field too.
        guard target.first == UInt8(ascii: "/"), target.count <= limits.maximumFieldBytes,
            target.allSatisfy(isTargetByte)
        else {
            return .unsupported
        }
        head.target = String(decoding: target, as: UTF8.self)
        // Fields.
        index = lineEnd0 + 1
        var fields = 0
        var contentLength = false
        while true {
            guard let found = lineEnd(from: index) else {
                return count > limits.maximumHeadBytes ? .unsupported : .incomplete
            }
            guard let end = found else { return .unsupported }
            if end == index + 1 { break }  // the empty line
            fields += 1
            let line = UnsafeRawBufferPointer(rebasing: bytes[index..<(end - 1)])
            guard fields <= limits.maximumFieldCount, line.count <= limits.maximumFieldBytes,
                let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > line.startIndex
            else { return .unsupported }
            let name = UnsafeRawBufferPointer(rebasing: line[line.startIndex..<colon])
            guard name.allSatisfy(isTokenByte) else { return .unsupported }
            var valueStart = colon + 1
            var valueEnd = line.endIndex
            guard line[valueStart..<valueEnd].allSatisfy(isValueByte) else { return .unsupported }
            while valueStart < valueEnd, line[valueStart] == 0x20 || line[valueStart] == 0x09 { valueStart += 1 }
            while valueEnd > valueStart, line[valueEnd - 1] == 0x20 || line[valueEnd - 1] == 0x09 { valueEnd -= 1 }
            let value = UnsafeRawBufferPointer(rebasing: line[valueStart..<valueEnd])
            switch FieldOfInterest(name) {
            case .accept: head.keep(value, in: \.accept)
            case .ifNoneMatch: head.keep(value, in: \.ifNoneMatch)
            case .ifModifiedSince: head.keep(value, in: \.ifModifiedSince)
            case .contentLength:  // the decoder refuses a second Content-Length, even an equal one
                guard value.elementsEqual("0".utf8), !contentLength else { return .unsupported }
                contentLength = true
            case .transferEncoding: return .unsupported
            case .connection:
                if String(decoding: value, as: UTF8.self).lowercased().contains("close") { head.needsRoute = true }
            case .upgrade, .expect: head.needsRoute = true
            case .other: break
            }
            index = end + 1
        }
        head.length = index + 2
        guard head.length <= limits.maximumHeadBytes else { return .unsupported }
        return .complete(head)
    }

    /// A field of interest: its value, unless it was given already (then a route answers).
    private mutating func keep(_ value: UnsafeRawBufferPointer, in field: WritableKeyPath<RequestHead, String?>) {
        if self[keyPath: field] != nil { needsRoute = true }
        self[keyPath: field] = String(decoding: value, as: UTF8.self)
    }

    private enum FieldOfInterest {
        case accept, ifNoneMatch, ifModifiedSince, contentLength, transferEncoding, connection, upgrade, expect, other

        init(_ name: UnsafeRawBufferPointer) {
            func named(_ expected: StaticString) -> Bool {
                guard name.count == expected.utf8CodeUnitCount else { return false }
                let expected = UnsafeRawBufferPointer(start: expected.utf8Start, count: expected.utf8CodeUnitCount)
                return zip(name, expected).allSatisfy { $0 | 0x20 == $1 }  // `expected` is lower case; names are tokens
            }
            switch name.count {
            case 6 where named("accept"): self = .accept
            case 6 where named("expect"): self = .expect
            case 7 where named("upgrade"): self = .upgrade
            case 10 where named("connection"): self = .connection
            case 13 where named("if-none-match"): self = .ifNoneMatch
            case 14 where named("content-length"): self = .contentLength
            case 17 where named("if-modified-since"): self = .ifModifiedSince
            case 17 where named("transfer-encoding"): self = .transferEncoding
            default: self = .other
            }
        }
    }
}

/// `tchar` (RFC 9110 5.6.2).
private func isTokenByte(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"),
        UInt8(ascii: "A")...UInt8(ascii: "Z"):
        true
    case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
        UInt8(ascii: "'"), UInt8(ascii: "*"),
        UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
        UInt8(ascii: "`"), UInt8(ascii: "|"),
        UInt8(ascii: "~"):
        true
    default: false
    }
}

/// The characters of a URI (RFC 3986: unreserved, reserved, `%`) but `#` (no fragment in a request).
private func isTargetByte(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"),
        UInt8(ascii: "A")...UInt8(ascii: "Z"):
        true
    case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: ":"),
        UInt8(ascii: "/"), UInt8(ascii: "?"),
        UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: "@"), UInt8(ascii: "!"), UInt8(ascii: "$"),
        UInt8(ascii: "&"),
        UInt8(ascii: "'"), UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: "+"),
        UInt8(ascii: ","), UInt8(ascii: ";"),
        UInt8(ascii: "="), UInt8(ascii: "%"):
        true
    default: false
    }
}

/// Visible ASCII, space, tab.
private func isValueByte(_ byte: UInt8) -> Bool {
    (0x20...0x7E).contains(byte) || byte == 0x09
}
