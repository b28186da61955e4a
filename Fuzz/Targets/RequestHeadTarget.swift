import HTTPTypes
import ImageryServer
import NIOCore
import NIOEmbedded
import NIOHTTP1

/// `RequestHead`, the reader of request heads before the server's HTTP decoder, beside that decoder
/// (NIO's llhttp): a head it reads whole, the decoder reads too, as the same request. Input: the
/// bytes of a connection.
enum RequestHeadTarget {
    static let limits = RequestHead.Limits(maximumHeadBytes: 2048, maximumFieldBytes: 1024, maximumFieldCount: 100)

    static func run(_ bytes: [UInt8]) throws(FuzzFailure) {
        let reading = bytes.withUnsafeBytes { RequestHead.read($0, limits: limits) }
        // Fewer bytes are never a different whole head: a head's end is where it ends.
        if bytes.count > 1 {
            let shorter = bytes.withUnsafeBytes {
                RequestHead.read(UnsafeRawBufferPointer(rebasing: $0.dropLast()), limits: limits)
            }
            if case .complete(let head) = shorter {
                try require(reading == .complete(head), "a head read from a prefix is not the head read from the whole")
            }
        }
        guard case .complete(let head) = reading else { return }
        try require(
            head.length > 0 && head.length <= bytes.count && head.length <= limits.maximumHeadBytes,
            "length \(head.length) out of range")
        try require(
            bytes[head.length - 4..<head.length].elementsEqual([13, 10, 13, 10]), "the head does not end with CRLF CRLF"
        )

        // The decoder, with the server's configuration and these limits, reads the same request, with no body.
        let channel = EmbeddedChannel()
        var decoderLimits = NIOHTTPDecoderLimitConfiguration()
        decoderLimits.maxHeaderFieldSize = limits.maximumFieldBytes
        decoderLimits.maxHeaderListSize = limits.maximumHeadBytes
        decoderLimits.maxHeaderFieldCount = limits.maximumFieldCount
        var parts: [HTTPServerRequestPart] = []
        do {
            try channel.pipeline.syncOperations.addHandler(
                ByteToMessageHandler(
                    HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes, limitConfiguration: decoderLimits))
            )
            try channel.writeInbound(ByteBuffer(bytes: bytes[0..<head.length]))
            while let part = try channel.readInbound(as: HTTPServerRequestPart.self) { parts.append(part) }
            _ = try? channel.finish()
        } catch {
            _ = try? channel.finish()
            throw FuzzFailure(
                "the decoder refused a head read whole: \(error); \(String(decoding: bytes.prefix(head.length), as: UTF8.self))"
            )
        }
        guard parts.count == 2, case .head(let decoded) = parts[0], case .end = parts[1] else {
            throw FuzzFailure("the decoder did not read one request without a body: \(parts.count) parts")
        }
        try require(decoded.uri == head.target, "target \(head.target) read as \(decoded.uri)")
        try require(decoded.version == .http1_1, "version \(decoded.version)")
        switch head.method {
        case .get: try require(decoded.method == .GET, "GET read as \(decoded.method)")
        case .head: try require(decoded.method == .HEAD, "HEAD read as \(decoded.method)")
        }
        // As the router sees them: HTTP types' fields (made from the decoder's by the server's codec).
        for (name, value) in [
            ("accept", head.accept), ("if-none-match", head.ifNoneMatch), ("if-modified-since", head.ifModifiedSince),
        ] {
            let values = decoded.headers[name].map { HTTPField(name: HTTPField.Name(name)!, value: $0).value }
            try require(values.last == value, "\(name): \(value ?? "none") read as \(values)")
            if values.count > 1 { try require(head.needsRoute, "\(name) given twice, answered on the event loop") }
        }
        if decoded.headers[canonicalForm: "connection"].contains(where: { $0.lowercased() == "close" }) {
            try require(head.needsRoute, "Connection: close answered on the event loop")
        }
    }
}
