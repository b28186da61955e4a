import HTTPTypes
import NIOCore
import NIOEmbedded
import NIOHTTP1

@testable import ImageryServer

/// What the server's HTTP decoder (NIO's `HTTPRequestDecoder`, llhttp) reads from a connection's
/// bytes, with the limits ``RequestHead`` is given: the oracle ``RequestHead`` must agree with on
/// every head it reads whole (the contract the request-head fuzz target checks).
struct DecoderReading {
    /// The requests' heads, in order.
    var heads: [HTTPRequestHead] = []
    /// Body bytes read, all requests together.
    var bodyBytes = 0
    /// Requests read to their end.
    var ends = 0
    /// What the decoder refused the bytes with, if it did.
    var error: (any Error)?

    /// The decoder's reading of `bytes`, given to it in one read.
    static func of(_ bytes: some Sequence<UInt8>, limits: RequestHead.Limits) -> DecoderReading {
        var reading = DecoderReading()
        let channel = EmbeddedChannel()
        defer { _ = try? channel.finish() }
        var decoderLimits = NIOHTTPDecoderLimitConfiguration()
        decoderLimits.maxHeaderFieldSize = limits.maximumFieldBytes
        decoderLimits.maxHeaderListSize = limits.maximumHeadBytes
        decoderLimits.maxHeaderFieldCount = limits.maximumFieldCount
        do {
            try channel.pipeline.syncOperations.addHandler(
                ByteToMessageHandler(
                    HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes, limitConfiguration: decoderLimits))
            )
            try channel.writeInbound(ByteBuffer(bytes: Array(bytes)))
        } catch {
            reading.error = error
        }
        while let part = try? channel.readInbound(as: HTTPServerRequestPart.self) {
            switch part {
            case .head(let head): reading.heads.append(head)
            case .body(let body): reading.bodyBytes += body.readableBytes
            case .end: reading.ends += 1
            }
        }
        return reading
    }

    /// The values of the field `name` in `head`, as the router sees them (HTTP types' fields, made
    /// from the decoder's by the server's codec: leading and trailing white space trimmed).
    static func values(of name: String, in head: HTTPRequestHead) -> [String] {
        head.headers[name].map { HTTPField(name: HTTPField.Name(name)!, value: $0).value }
    }

    /// Why the decoder's reading of `bytes` is not the request `head` (`nil`: it is): one request
    /// with no body, the same method, target and version, the last value of each field of interest
    /// the one kept, and a route to answer whatever the reader must not (`Connection: close`, a
    /// field of interest given twice).
    static func disagreement(with head: RequestHead, on bytes: [UInt8], limits: RequestHead.Limits) -> String? {
        let decoded = DecoderReading.of(bytes.prefix(head.length), limits: limits)
        if let error = decoded.error { return "the decoder refused it: \(error)" }
        guard decoded.heads.count == 1, decoded.ends == 1, decoded.bodyBytes == 0, let request = decoded.heads.first
        else {
            return
                "the decoder read \(decoded.heads.count) heads, \(decoded.ends) ends, \(decoded.bodyBytes) body bytes"
        }
        if request.uri != head.target { return "target \(head.target) read as \(request.uri)" }
        if request.version != .http1_1 { return "version read as \(request.version)" }
        if request.method != (head.method == .get ? .GET : .HEAD) { return "\(head.method) read as \(request.method)" }
        let fields = [
            ("accept", head.accept), ("if-none-match", head.ifNoneMatch), ("if-modified-since", head.ifModifiedSince),
        ]
        for (name, value) in fields {
            let values = values(of: name, in: request)
            if values.last != value { return "\(name): \(value ?? "none") read as \(values)" }
            if values.count > 1, !head.needsRoute { return "\(name) given twice, answered without a route" }
        }
        let connection = request.headers[canonicalForm: "connection"]
        if connection.contains(where: { $0.lowercased() == "close" }), !head.needsRoute {
            return "Connection: close answered without a route"
        }
        return nil
    }
}
