import Hummingbird
import HTTPTypes
import NIOCore

/// The answer to a request with a stored response (``ImageController/answer(_:terms:negotiated:requestHeaders:now:)``),
/// before a server adds its own fields: sent by a route as a ``Response``, or by ``StoredHitHandler``
/// as HTTP parts on the event loop, with the same fields in the same order.
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
