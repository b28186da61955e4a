import Testing

@testable import ImageryServer

/// ``RequestHead``, the reader of request heads before the server's HTTP decoder: what it reads from
/// a whole head (and the decoder reads the same), what it leaves to the decoder, and that a head it
/// reads whole is never read from fewer bytes.
@Suite struct RequestHeadTests {
    static let limits = RequestHead.Limits(maximumHeadBytes: 2048, maximumFieldBytes: 1024, maximumFieldCount: 100)

    /// `text`'s bytes read with `limits`.
    static func read(_ text: String, limits: RequestHead.Limits = limits) -> RequestHead.Reading {
        read(Array(text.utf8), limits: limits)
    }

    static func read(_ bytes: [UInt8], limits: RequestHead.Limits = limits) -> RequestHead.Reading {
        bytes.withUnsafeBytes { RequestHead.read($0, limits: limits) }
    }

    /// A head the reader reads whole, and what it reads from it.
    struct Whole: Sendable, CustomTestStringConvertible {
        let testDescription: String
        let text: String
        let expected: RequestHead

        init(
            _ description: String, _ text: String, method: RequestHead.Method = .get,
            target: String = "/image?url=a&w=1",
            accept: String? = nil, ifNoneMatch: String? = nil, ifModifiedSince: String? = nil, needsRoute: Bool = false
        ) {
            testDescription = description
            self.text = text
            expected = RequestHead(
                method: method, target: target, accept: accept, ifNoneMatch: ifNoneMatch,
                ifModifiedSince: ifModifiedSince,
                needsRoute: needsRoute, length: text.utf8.count
            )
        }
    }

    static let wholeHeads: [Whole] = [
        Whole("GET with Host", "GET /image?url=a&w=1 HTTP/1.1\r\nHost: example.com\r\n\r\n"),
        Whole("HEAD", "HEAD /image?url=a&w=1 HTTP/1.1\r\nHost: example.com\r\n\r\n", method: .head),
        Whole("no fields at all", "GET / HTTP/1.1\r\n\r\n", target: "/"),
        Whole(
            "every character RFC 3986 allows in the target",
            "GET /a-._~:/?[]@!$&'()*+,;=%2Fz09AZ HTTP/1.1\r\n\r\n", target: "/a-._~:/?[]@!$&'()*+,;=%2Fz09AZ"
        ),
        Whole(
            "a percent-encoded source URL",
            "GET /image?url=https%3A%2F%2Fexample.com%2Fa.jpg&w=64 HTTP/1.1\r\nHost: h\r\n\r\n",
            target: "/image?url=https%3A%2F%2Fexample.com%2Fa.jpg&w=64"
        ),
        Whole(
            "an imgproxy path", "GET /_/w:64/plain/http://o/a.jpg HTTP/1.1\r\n\r\n",
            target: "/_/w:64/plain/http://o/a.jpg"),
        Whole("Accept", "GET /image?url=a&w=1 HTTP/1.1\r\nAccept: image/webp,*/*\r\n\r\n", accept: "image/webp,*/*"),
        Whole(
            "accept in lower case", "GET /image?url=a&w=1 HTTP/1.1\r\naccept: image/avif\r\n\r\n", accept: "image/avif"),
        Whole(
            "ACCEPT in capitals", "GET /image?url=a&w=1 HTTP/1.1\r\nACCEPT: image/avif\r\n\r\n", accept: "image/avif"),
        Whole(
            "aCcEpT in mixed case", "GET /image?url=a&w=1 HTTP/1.1\r\naCcEpT: image/avif\r\n\r\n", accept: "image/avif"),
        Whole(
            "white space around a value trimmed", "GET /image?url=a&w=1 HTTP/1.1\r\nAccept: \t image/webp \t \r\n\r\n",
            accept: "image/webp"
        ),
        Whole(
            "no space after the colon", "GET /image?url=a&w=1 HTTP/1.1\r\nAccept:image/png\r\n\r\n", accept: "image/png"
        ),
        Whole("an empty value", "GET /image?url=a&w=1 HTTP/1.1\r\nAccept:\r\n\r\n", accept: ""),
        Whole("a tab inside a value", "GET /image?url=a&w=1 HTTP/1.1\r\nAccept: a\tb\r\n\r\n", accept: "a\tb"),
        Whole(
            "If-None-Match", "GET /image?url=a&w=1 HTTP/1.1\r\nIf-None-Match: \"abc-12\"\r\n\r\n",
            ifNoneMatch: "\"abc-12\""),
        Whole(
            "If-None-Match, weak, in lower case", "GET /image?url=a&w=1 HTTP/1.1\r\nif-none-match: W/\"a\"\r\n\r\n",
            ifNoneMatch: "W/\"a\""),
        Whole(
            "If-None-Match: *", "HEAD /image?url=a&w=1 HTTP/1.1\r\nIf-None-Match: *\r\n\r\n", method: .head,
            ifNoneMatch: "*"),
        Whole(
            "If-Modified-Since",
            "GET /image?url=a&w=1 HTTP/1.1\r\nIf-Modified-Since: Fri, 01 Jan 2100 00:00:00 GMT\r\n\r\n",
            ifModifiedSince: "Fri, 01 Jan 2100 00:00:00 GMT"
        ),
        Whole(
            "every field of interest, among others",
            "GET /image?url=a&w=1 HTTP/1.1\r\nHost: h\r\nUser-Agent: curl/8.5\r\nAccept: */*\r\nX-Trace: a:b:c\r\n"
                + "If-None-Match: \"x\"\r\nIf-Modified-Since: Sat, 01 Jan 2000 00:00:00 GMT\r\nCookie: a=b; c=d\r\n\r\n",
            accept: "*/*", ifNoneMatch: "\"x\"", ifModifiedSince: "Sat, 01 Jan 2000 00:00:00 GMT"
        ),
        Whole("a name of every token character", "GET /image?url=a&w=1 HTTP/1.1\r\nX-!#$%&'*+-.^_`|~09az: v\r\n\r\n"),
        Whole("Content-Length: 0", "GET /image?url=a&w=1 HTTP/1.1\r\nContent-Length: 0\r\n\r\n"),
        Whole("Content-Length: 0 with white space", "GET /image?url=a&w=1 HTTP/1.1\r\nContent-Length: \t0 \r\n\r\n"),
        Whole(
            "a lone percent sign in the target", "GET /image?url=%zz&w=1% HTTP/1.1\r\n\r\n",
            target: "/image?url=%zz&w=1%"),
        Whole("a double slash and dots in the target", "GET //a/../b/./c HTTP/1.1\r\n\r\n", target: "//a/../b/./c"),
        Whole(
            "Connection: closed (close in a word)", "GET /image?url=a&w=1 HTTP/1.1\r\nConnection: closed\r\n\r\n",
            needsRoute: true),
        Whole("Host given twice (not a field it keeps)", "GET /image?url=a&w=1 HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"),
        Whole("Connection: keep-alive", "GET /image?url=a&w=1 HTTP/1.1\r\nConnection: keep-alive\r\n\r\n"),
        Whole("Connection: close", "GET /image?url=a&w=1 HTTP/1.1\r\nConnection: close\r\n\r\n", needsRoute: true),
        Whole("connection: CLOSE", "GET /image?url=a&w=1 HTTP/1.1\r\nconnection: CLOSE\r\n\r\n", needsRoute: true),
        Whole(
            "close in a list", "GET /image?url=a&w=1 HTTP/1.1\r\nConnection: keep-alive, close\r\n\r\n",
            needsRoute: true),
        Whole(
            "Upgrade", "GET /image?url=a&w=1 HTTP/1.1\r\nConnection: upgrade\r\nUpgrade: websocket\r\n\r\n",
            needsRoute: true),
        Whole("Expect", "GET /image?url=a&w=1 HTTP/1.1\r\nExpect: 100-continue\r\n\r\n", needsRoute: true),
        Whole(
            "Accept given twice: the last kept, a route answers",
            "GET /image?url=a&w=1 HTTP/1.1\r\nAccept: a/b\r\nAccept: c/d\r\n\r\n",
            accept: "c/d", needsRoute: true
        ),
        Whole(
            "If-None-Match given twice",
            "GET /image?url=a&w=1 HTTP/1.1\r\nIf-None-Match: \"a\"\r\nif-none-match: \"b\"\r\n\r\n",
            ifNoneMatch: "\"b\"", needsRoute: true
        ),
        Whole(
            "If-Modified-Since given twice",
            "GET /image?url=a&w=1 HTTP/1.1\r\nIf-Modified-Since: a\r\nIf-Modified-Since: b\r\n\r\n",
            ifModifiedSince: "b", needsRoute: true
        ),
    ]

    @Test(arguments: wholeHeads)
    func readsAWholeHead(_ head: Whole) {
        #expect(Self.read(head.text) == .complete(head.expected))
    }

    /// The contract with the server's decoder: a head read whole is the request the decoder reads.
    @Test(arguments: wholeHeads)
    func aWholeHeadIsTheRequestTheDecoderReads(_ head: Whole) {
        #expect(DecoderReading.disagreement(with: head.expected, on: Array(head.text.utf8), limits: Self.limits) == nil)
    }

    /// Every byte short of the head's end is the start of a head: more is needed, nothing is refused.
    @Test(arguments: wholeHeads)
    func everyPrefixOfAWholeHeadIsIncomplete(_ head: Whole) {
        let bytes = Array(head.text.utf8)
        for count in 0..<bytes.count {
            #expect(Self.read(Array(bytes[..<count])) == .incomplete, "\(count) of \(bytes.count) bytes")
        }
    }

    /// What follows a head (the next request, a half of one, anything) does not change it.
    @Test(arguments: wholeHeads)
    func whatFollowsAHeadDoesNotChangeIt(_ head: Whole) {
        for following in [
            "GET / HTTP/1.1\r\n\r\n", "GE", "\u{0}\u{1}garbage\n", "POST /x HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc",
        ] {
            #expect(
                Self.read(head.text + following) == .complete(head.expected),
                "followed by \(following.debugDescription)")
        }
    }

    /// The decoder refuses `Content-Length` given twice (even twice 0: llhttp's "unexpected
    /// content-length header"), so the reader must not read such a head whole (a hit would answer
    /// what a route refuses with a 400).
    @Test func contentLengthGivenTwiceIsLeftToTheDecoder() {
        let text = "GET /image?url=a&w=1 HTTP/1.1\r\nContent-Length: 0\r\ncontent-length: 0\r\n\r\n"
        #expect(DecoderReading.of(Array(text.utf8), limits: Self.limits).error != nil, "the decoder refuses it")
        #expect(Self.read(text) == .unsupported)
    }
}
