import HTTPTypes
import Hummingbird
import NIOCore

/// The answer to a request with a stored response, as a route sends it
/// (``ImageAnswers/answer(_:terms:negotiated:requestHeaders:)``), before the server adds its own fields.
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
        self.init(
            status: answer.status, headers: answer.headers,
            body: answer.body.map { ResponseBody(byteBuffer: $0) } ?? ResponseBody())
        if let disposition = answer.disposition { headers[.contentDisposition] = disposition }
    }
}
