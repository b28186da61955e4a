import Testing

@testable import ImageryServer

/// Heads ``RequestHead`` does not read (the decoder's from there on: it answers, or refuses, as it
/// always has).
extension RequestHeadTests {
    /// A head the reader passes on, and why.
    struct Unsupported: Sendable, CustomTestStringConvertible {
        let testDescription: String
        let bytes: [UInt8]

        init(_ description: String, _ text: String) {
            (testDescription, bytes) = (description, Array(text.utf8))
        }

        init(_ description: String, bytes: [UInt8]) {
            (testDescription, self.bytes) = (description, bytes)
        }
    }

    static let unsupportedHeads: [Unsupported] = [
        // Methods: only GET and HEAD, spelled so.
        Unsupported("POST", "POST /image?url=a HTTP/1.1\r\nHost: h\r\n\r\n"),
        Unsupported("PUT", "PUT /image?url=a HTTP/1.1\r\n\r\n"),
        Unsupported("OPTIONS *", "OPTIONS * HTTP/1.1\r\n\r\n"),
        Unsupported("DELETE", "DELETE /image HTTP/1.1\r\n\r\n"),
        Unsupported("get in lower case", "get /image HTTP/1.1\r\n\r\n"),
        Unsupported("GETX", "GETX /image HTTP/1.1\r\n\r\n"),
        Unsupported("no method", " /image HTTP/1.1\r\n\r\n"),
        // Request lines.
        Unsupported("two spaces before the target", "GET  /image HTTP/1.1\r\n\r\n"),
        Unsupported("a space after the version", "GET /image HTTP/1.1 \r\n\r\n"),
        Unsupported("no target", "GET HTTP/1.1\r\n\r\n"),
        Unsupported("no version", "GET /image\r\n\r\n"),
        Unsupported("HTTP/1.0", "GET /image HTTP/1.0\r\n\r\n"),
        Unsupported("HTTP/2.0", "GET /image HTTP/2.0\r\n\r\n"),
        Unsupported("http/1.1 in lower case", "GET /image http/1.1\r\n\r\n"),
        Unsupported("an empty line before the request", "\r\nGET /image HTTP/1.1\r\n\r\n"),
        Unsupported("a request line and nothing else", "GET\r\n\r\n"),
        // Targets: origin form, RFC 3986's characters, no fragment.
        Unsupported("absolute form", "GET http://example.com/image HTTP/1.1\r\n\r\n"),
        Unsupported("authority form", "GET example.com:443 HTTP/1.1\r\n\r\n"),
        Unsupported("asterisk form", "GET * HTTP/1.1\r\n\r\n"),
        Unsupported("a space in the target", "GET /a b HTTP/1.1\r\n\r\n"),
        Unsupported("a fragment", "GET /image#top HTTP/1.1\r\n\r\n"),
        Unsupported("a quote in the target", "GET /a\"b HTTP/1.1\r\n\r\n"),
        Unsupported("braces in the target", "GET /a{b} HTTP/1.1\r\n\r\n"),
        Unsupported("a backslash in the target", "GET /a\\b HTTP/1.1\r\n\r\n"),
        Unsupported("a tab in the target", "GET /a\tb HTTP/1.1\r\n\r\n"),
        Unsupported("UTF-8 in the target", "GET /caf\u{E9} HTTP/1.1\r\n\r\n"),
        Unsupported(
            "a control byte in the target", bytes: Array("GET /a".utf8) + [0x01] + Array(" HTTP/1.1\r\n\r\n".utf8)),
        // Line ends: CRLF only.
        Unsupported("bare LF after the request line", "GET /image HTTP/1.1\nHost: h\r\n\r\n"),
        Unsupported("bare LF after a field", "GET /image HTTP/1.1\r\nHost: h\n\r\n"),
        Unsupported("bare LF for the empty line", "GET /image HTTP/1.1\r\nHost: h\r\n\n"),
        Unsupported("a CR inside a value", "GET /image HTTP/1.1\r\nHost: a\rb\r\n\r\n"),
        // Fields: a token, a colon, a value of visible ASCII, spaces and tabs.
        Unsupported("a line with no colon", "GET /image HTTP/1.1\r\nHost\r\n\r\n"),
        Unsupported("an empty name", "GET /image HTTP/1.1\r\n: value\r\n\r\n"),
        Unsupported("a space before the colon", "GET /image HTTP/1.1\r\nAccept : image/webp\r\n\r\n"),
        Unsupported("a space in a name", "GET /image HTTP/1.1\r\nX Y: z\r\n\r\n"),
        Unsupported(
            "a folded line (obs-fold, space)", "GET /image HTTP/1.1\r\nAccept: image/webp,\r\n image/avif\r\n\r\n"),
        Unsupported(
            "a folded line (obs-fold, tab)", "GET /image HTTP/1.1\r\nAccept: image/webp,\r\n\timage/avif\r\n\r\n"),
        Unsupported("a separator in a name", "GET /image HTTP/1.1\r\nX(Y): z\r\n\r\n"),
        Unsupported("UTF-8 in a name", "GET /image HTTP/1.1\r\nX-\u{E9}: z\r\n\r\n"),
        Unsupported("UTF-8 in a value", "GET /image HTTP/1.1\r\nX-Name: caf\u{E9}\r\n\r\n"),
        Unsupported(
            "a NUL in a value", bytes: Array("GET /image HTTP/1.1\r\nX: a".utf8) + [0x00] + Array("\r\n\r\n".utf8)),
        Unsupported(
            "DEL in a value", bytes: Array("GET /image HTTP/1.1\r\nX: a".utf8) + [0x7F] + Array("\r\n\r\n".utf8)),
        Unsupported(
            "a control byte in a value",
            bytes: Array("GET /image HTTP/1.1\r\nX: a".utf8) + [0x1B] + Array("\r\n\r\n".utf8)),
        // Bodies: where a request ends is the decoder's to find.
        Unsupported("Content-Length of a body", "GET /image HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello"),
        Unsupported("Content-Length: 00", "GET /image HTTP/1.1\r\nContent-Length: 00\r\n\r\n"),
        Unsupported("content-length: -1", "GET /image HTTP/1.1\r\ncontent-length: -1\r\n\r\n"),
        Unsupported("Transfer-Encoding: chunked", "GET /image HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
        Unsupported("transfer-encoding: identity", "GET /image HTTP/1.1\r\ntransfer-encoding: identity\r\n\r\n"),
        Unsupported(
            "a body after Content-Length: 0",
            "GET /image HTTP/1.1\r\nContent-Length: 0\r\nContent-Length: 4\r\n\r\nbody"),
    ]

    @Test(arguments: unsupportedHeads)
    func passesOnWhatItDoesNotRead(_ head: Unsupported) {
        #expect(Self.read(head.bytes) == .unsupported)
    }

    /// Once passed on, always: no byte that follows makes a whole head of it.
    @Test(arguments: unsupportedHeads)
    func moreBytesNeverMakeAWholeHeadOfWhatItPassedOn(_ head: Unsupported) {
        for following in ["\r\n", "\r\n\r\n", "GET / HTTP/1.1\r\n\r\n"] {
            #expect(
                Self.read(head.bytes + Array(following.utf8)) == .unsupported,
                "followed by \(following.debugDescription)")
        }
    }

    /// A prefix of a head it passes on is never a whole head (it is the start of one, or passed on).
    @Test(arguments: unsupportedHeads)
    func noPrefixOfWhatItPassesOnIsAWholeHead(_ head: Unsupported) {
        for count in 0..<head.bytes.count {
            let reading = Self.read(Array(head.bytes[..<count]))
            #expect(reading == .incomplete || reading == .unsupported, "\(count) bytes: \(reading)")
        }
    }

    /// What the reader passes on, the decoder still reads as it always has: a request with a body, an
    /// HTTP/1.0 request, another method (the route answers them), not refused by the reader's choice.
    @Test(arguments: [
        Unsupported("a POST with a body", "POST /image?url=a HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello"),
        Unsupported("HTTP/1.0", "GET /image HTTP/1.0\r\n\r\n"),
        Unsupported("DELETE", "DELETE /image HTTP/1.1\r\n\r\n"),
        Unsupported("a chunked body", "GET /image HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"),
        Unsupported("absolute form", "GET http://example.com/image HTTP/1.1\r\n\r\n"),
    ])
    func whatItPassesOnTheDecoderReads(_ request: Unsupported) {
        #expect(Self.read(request.bytes) == .unsupported)
        let decoded = DecoderReading.of(request.bytes, limits: Self.limits)
        #expect(decoded.error == nil && decoded.heads.count == 1 && decoded.ends == 1, "\(decoded)")
    }
}
