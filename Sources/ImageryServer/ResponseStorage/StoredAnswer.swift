import Hummingbird
import HTTPTypes
import NIOCore

/// The answer to a request with a stored response, as a route sends it
/// (``ImageController/answer(_:terms:negotiated:requestHeaders:)``), before the server adds its own fields.
struct StoredAnswer: Sendable {
    var status: HTTPResponse.Status
    /// Every field but `Content-Length`, `Content-Disposition` and the server's (`Date`, `Server`).
    var headers: HTTPFields
    /// The body of a 200 (`nil`: a 304).
    var body: ByteBuffer?
    /// `Content-Disposition`'s value, sent after `Content-Length` (as a route sets it on its response).
    var disposition: String?
}

extension Response {
    init(_ answer: StoredAnswer) {
        self.init(status: answer.status, headers: answer.headers, body: answer.body.map { ResponseBody(byteBuffer: $0) } ?? ResponseBody())
        if let disposition = answer.disposition { headers[.contentDisposition] = disposition }
    }
}

/// The conditional fields of a request.
struct Validators: Sendable {
    var ifNoneMatch: String?
    var ifModifiedSince: String?
}

/// Where ``ImageController/answer(_:terms:negotiated:validators:now:fields:)`` puts the answer's
/// fields, in order: a route's `HTTPFields`, or the bytes ``HitHandler`` sends.
protocol AnswerFields {
    mutating func add(_ name: HTTPField.Name, _ value: String)
}

extension HTTPFields: AnswerFields {
    mutating func add(_ name: HTTPField.Name, _ value: String) { self[name] = value }
}

/// A response head as bytes, as the server's HTTP/1.1 encoder writes it: `Name: value` lines.
struct ResponseHeadBytes: AnswerFields {
    var buffer: ByteBuffer

    mutating func add(_ name: HTTPField.Name, _ value: String) {
        buffer.writeString(name.rawName)
        buffer.writeStaticString(": ")
        buffer.writeString(value)
        buffer.writeStaticString("\r\n")
    }
}
