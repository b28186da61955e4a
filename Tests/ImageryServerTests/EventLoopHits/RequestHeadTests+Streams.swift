import Testing

@testable import ImageryServer

/// ``RequestHead`` over a connection's bytes: pipelined requests in one buffer, heads arriving in
/// pieces, and the limits the server's decoder has.
extension RequestHeadTests {
    /// Three requests sent at once, as a client that pipelines writes them.
    static let pipelined = [
        "GET /image?url=a&w=1 HTTP/1.1\r\nHost: h\r\nAccept: image/webp\r\n\r\n",
        "HEAD /image?url=b&w=2 HTTP/1.1\r\nHost: h\r\nIf-None-Match: \"e\"\r\n\r\n",
        "GET /image?url=c&w=3 HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n",
    ]

    /// The heads at the start of `bytes`, one after another, as ``HitHandler`` reads them: up to the
    /// first that is not whole (returned as `rest`).
    static func heads(in bytes: [UInt8]) -> (heads: [RequestHead], rest: RequestHead.Reading) {
        var heads: [RequestHead] = []
        var start = 0
        while true {
            let reading = read(Array(bytes[start...]))
            guard case .complete(let head) = reading else { return (heads, reading) }
            heads.append(head)
            start += head.length
        }
    }

    /// The heads read from `bytes` given in `pieces` reads: each read adds to what is left unread.
    static func heads(in bytes: [UInt8], splitAt offsets: [Int]) -> [RequestHead] {
        var heads: [RequestHead] = []
        var unread: [UInt8] = []
        for (start, end) in zip([0] + offsets, offsets + [bytes.count]) {
            unread += bytes[start..<end]
            let (read, _) = Self.heads(in: unread)
            heads += read
            unread.removeFirst(read.map(\.length).reduce(0, +))
        }
        #expect(unread.isEmpty)
        return heads
    }

    @Test func readsPipelinedHeadsOneAfterAnother() throws {
        let (heads, rest) = Self.heads(in: Array(Self.pipelined.joined().utf8))
        #expect(rest == .incomplete)
        try #require(heads.count == 3)
        #expect(heads.map(\.target) == ["/image?url=a&w=1", "/image?url=b&w=2", "/image?url=c&w=3"])
        #expect(heads.map(\.method) == [.get, .head, .get])
        #expect(heads.map(\.length) == Self.pipelined.map(\.utf8.count))
        #expect(heads[0].accept == "image/webp" && heads[1].ifNoneMatch == "\"e\"" && heads[2].needsRoute)
        #expect(heads.map(\.needsRoute) == [false, false, true])
    }

    /// A request the reader passes on stops the reading there: what follows is the decoder's too.
    @Test func aHeadItPassesOnStopsThePipeline() {
        let text = Self.pipelined[0] + "POST /x HTTP/1.1\r\nContent-Length: 2\r\n\r\nok" + Self.pipelined[1]
        let (heads, rest) = Self.heads(in: Array(text.utf8))
        #expect(heads.map(\.target) == ["/image?url=a&w=1"])
        #expect(rest == .unsupported)
    }

    /// Pipelined heads split into two reads at every byte offset read as in one.
    @Test func pipelinedHeadsSplitAtEveryOffsetReadAsInOne() {
        let bytes = Array(Self.pipelined.joined().utf8)
        let whole = Self.heads(in: bytes).heads
        for offset in 0...bytes.count {
            #expect(Self.heads(in: bytes, splitAt: [offset]) == whole, "split at \(offset)")
        }
        #expect(Self.heads(in: bytes, splitAt: Array(1..<bytes.count)) == whole, "a byte a read")
    }

    /// The decoder reads the pipelined requests as the reader does.
    @Test func theDecoderReadsThePipelinedRequestsAlike() {
        let bytes = Array(Self.pipelined.joined().utf8)
        let decoded = DecoderReading.of(bytes, limits: Self.limits)
        #expect(decoded.error == nil)
        #expect(decoded.heads.map(\.uri) == Self.heads(in: bytes).heads.map(\.target))
        #expect(decoded.ends == 3 && decoded.bodyBytes == 0)
    }

    // MARK: - Limits

    /// A head of `count` bytes: `GET /image?url=a HTTP/1.1`, then fields `X-Pad-N: aaa...` of at most
    /// `fieldBytes` bytes a line (CRLF not counted), then the empty line.
    static func head(bytes count: Int, fieldBytes: Int = 1000) -> String {
        var text = "GET /image?url=a HTTP/1.1\r\n"
        var remaining = count - text.utf8.count - 2  // the field lines', CRLFs included
        var index = 0
        while remaining > 0 {
            let name = "X-Pad-\(index): "
            var line = min(fieldBytes, remaining - 2)
            let after = remaining - line - 2
            if after > 0, after < 32 { line -= 32 }  // room for one more line
            text += name + String(repeating: "a", count: line - name.utf8.count) + "\r\n"
            remaining -= line + 2
            index += 1
        }
        text += "\r\n"
        precondition(text.utf8.count == count, "\(text.utf8.count) bytes, not \(count)")
        return text
    }

    @Test func aHeadOfTheLargestSizeIsReadAndOneByteMoreIsPassedOn() throws {
        let largest = Self.head(bytes: Self.limits.maximumHeadBytes)
        let reading = Self.read(largest)
        guard case .complete(let head) = reading else {
            Issue.record("\(reading)")
            return
        }
        #expect(head.length == Self.limits.maximumHeadBytes)
        #expect(DecoderReading.disagreement(with: head, on: Array(largest.utf8), limits: Self.limits) == nil)
        #expect(Self.read(Self.head(bytes: Self.limits.maximumHeadBytes + 1)) == .unsupported)
    }

    /// Bytes with no line end: the start of a head up to the limit, passed on past it (the request
    /// line, or a field).
    @Test(arguments: ["GET /", "GET /image HTTP/1.1\r\nX-Long: "])
    func aLineWithNoEndPastTheLimitIsPassedOn(_ start: String) {
        let limit = Self.limits.maximumHeadBytes
        let atLimit = start + String(repeating: "a", count: limit - start.utf8.count)
        #expect(Self.read(atLimit) == .incomplete)
        #expect(Self.read(atLimit + "a") == .unsupported)
    }

    @Test func aFieldOfTheLargestSizeIsReadAndOneByteMoreIsPassedOn() throws {
        let start = "GET /image HTTP/1.1\r\n"
        func field(_ bytes: Int) -> String { "X-Field: " + String(repeating: "v", count: bytes - 9) }
        let largest = start + field(Self.limits.maximumFieldBytes) + "\r\n\r\n"
        guard case .complete(let head) = Self.read(largest) else {
            Issue.record("the largest field is not read")
            return
        }
        #expect(DecoderReading.disagreement(with: head, on: Array(largest.utf8), limits: Self.limits) == nil)
        #expect(Self.read(start + field(Self.limits.maximumFieldBytes + 1) + "\r\n\r\n") == .unsupported)
    }

    @Test func theMostFieldsAreReadAndOneMoreIsPassedOn() throws {
        func head(fields: Int) -> String {
            "GET /image HTTP/1.1\r\n" + (0..<fields).map { "F\($0): v\r\n" }.joined() + "\r\n"
        }
        let most = head(fields: Self.limits.maximumFieldCount)
        guard case .complete(let read) = Self.read(most) else {
            Issue.record("the most fields are not read")
            return
        }
        #expect(DecoderReading.disagreement(with: read, on: Array(most.utf8), limits: Self.limits) == nil)
        #expect(Self.read(head(fields: Self.limits.maximumFieldCount + 1)) == .unsupported)
    }

    /// The decoder counts the target against its limit of a field's bytes (as it counts each name and
    /// each value): a longer target is the decoder's to refuse, and the reader must not read it whole.
    /// The decoder holds the target to `maximumFieldBytes` as it holds a field; so does the reader.
    @Test func aTargetLongerThanAFieldIsLeftToTheDecoder() {
        let target = "/image?url=" + String(repeating: "a", count: Self.limits.maximumFieldBytes)
        let text = "GET \(target) HTTP/1.1\r\n\r\n"
        #expect(DecoderReading.of(Array(text.utf8), limits: Self.limits).error != nil, "the decoder refuses it")
        #expect(Self.read(text) == .unsupported)
        // At the limit, both read it.
        let longest = "GET /" + String(repeating: "a", count: Self.limits.maximumFieldBytes - 1) + " HTTP/1.1\r\n\r\n"
        guard case .complete(let head) = Self.read(longest) else {
            Issue.record("the longest target is not read")
            return
        }
        #expect(DecoderReading.disagreement(with: head, on: Array(longest.utf8), limits: Self.limits) == nil)
    }
}
