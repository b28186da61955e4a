import HTTPTypes
import NIOCore

/// Where ``ImageAnswers/answer(_:terms:negotiated:validators:now:fields:)`` puts the answer's
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
