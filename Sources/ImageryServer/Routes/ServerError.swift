import Foundation
import Hummingbird
import Imagery
import ImageryHTTP

/// An error the proxy answers with: an HTTP status, a stable code, and a
/// message a client can act on. Never carries internals (paths, stack traces).
public struct ServerError: Error, Sendable, Equatable, CustomStringConvertible {
    public let status: HTTPResponse.Status
    /// A stable, machine-readable code (`bad_parameter`, `forbidden_source`, ...).
    public let code: String
    public let message: String
    /// Seconds after which the request may succeed (`Retry-After` of a 503); `nil` for other errors.
    public let retryAfter: Int?

    public init(_ status: HTTPResponse.Status, _ code: String, _ message: String, retryAfter: Int? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.retryAfter = retryAfter
    }

    public var description: String { "\(status.code) \(code): \(message)" }

    static func badParameter(_ message: String) -> ServerError { ServerError(.badRequest, "bad_parameter", message) }

    /// The answer for any error thrown while serving an image.
    package static func from(_ error: any Error) -> ServerError {
        switch error {
        case let error as ServerError:
            return error
        case let error as DataLoadingError:
            switch error {
            case .badStatus(404, _), .badStatus(410, _):
                return ServerError(
                    .notFound, "origin_not_found", "the origin answered \(error.statusCode ?? 404) for the source")
            case .badStatus(let status, _):
                return ServerError(.badGateway, "origin_failed", "the origin answered HTTP \(status)")
            case .tooLarge(let limit):
                return ServerError(.contentTooLarge, "source_too_large", "the source is larger than \(limit) bytes")
            case .timedOut:
                return ServerError(.gatewayTimeout, "origin_timeout", "the origin did not answer in time")
            case .unsupportedScheme, .invalidURL:
                return badParameter("url must be an absolute http, https or s3 URL")
            case .tooManyRedirects(let limit):
                return ServerError(.badGateway, "origin_failed", "the origin redirected more than \(limit) times")
            case .transport, .fileNotFound:
                return ServerError(.badGateway, "origin_unreachable", "the origin could not be reached")
            case .empty:
                return ServerError(.unprocessableContent, "undecodable", "the source is empty")
            }
        case let error as ImageDecodingError:
            switch error {
            case .unsupportedFormat:
                return ServerError(
                    .unsupportedMediaType, "unsupported_source", "the source is not an image in a supported format")
            case .tooManyPixels(let width, let height, let limit):
                return ServerError(
                    .contentTooLarge, "source_too_large",
                    "the source is \(width)x\(height) pixels, over the limit of \(limit)")
            case .tooManyFrames(let frames, let width, let height, let pixelLimit, let frameLimit):
                return ServerError(
                    .contentTooLarge, "source_too_large",
                    "the source is an animation of \(frames) frames of \(width)x\(height) pixels, over the limit of \(frameLimit) frames "
                        + "and \(pixelLimit) pixels for all frames: take one frame with frame=N"
                )
            case .invalidSize:
                return badParameter("w and h must be positive")
            case .empty, .corrupt:
                return ServerError(
                    .unprocessableContent, "undecodable", "the source could not be decoded: it is corrupt or truncated")
            case .overRequestLimit(let reason):
                return ServerError(.unprocessableContent, "source_over_limit", reason)
            case .outOfMemory:
                // The server's fault, not the source's: the same request may succeed once memory is free.
                return ServerError(
                    .serviceUnavailable, "out_of_memory",
                    "the server had no memory to decode this source: try again in 5 s",
                    retryAfter: 5
                )
            }
        case let error as ImageProcessingError:
            switch error {
            case .failed:
                return ServerError(
                    .unprocessableContent, "unprocessable", "the image could not be processed with these parameters")
            case .cropOutsideImage, .emptyResult, .outputTooLarge, .invalidValue:
                return badParameter(error.description)
            }
        case let error as RequestTimeout:
            return ServerError(
                .gatewayTimeout, "timeout",
                "the image was not ready within \(error.limit.components.seconds) s: try again later"
            )
        case let error as MemoryBudgetError:
            switch error {
            case .overloaded(let seconds):
                return ServerError(
                    .serviceUnavailable, "overloaded",
                    "the server has too much work in flight: try again in \(seconds) s",
                    retryAfter: seconds
                )
            case .tooLarge(let bytes, let limit):
                return ServerError(
                    .contentTooLarge, "source_too_large",
                    "this source needs about \(max(1, bytes >> 20)) MiB to process, more than the server's in-flight memory of \(limit >> 20) MiB"
                )
            }
        case let error as ImageEncodingError:
            switch error {
            case .unsupportedFormat(let format):
                return ServerError(
                    .unsupportedMediaType, "unsupported_format", "this server cannot encode \(format.rawValue)")
            case .failed:
                return ServerError(.internalServerError, "internal", "the image could not be encoded")
            }
        case is CancellationError:
            // The work was cancelled because its client closed the connection: nobody reads this
            // answer, but logs and metrics say what happened (nginx's 499), not a server error.
            return ServerError(
                HTTPResponse.Status(code: 499, reasonPhrase: "Client Closed Request"), "client_closed",
                "the client closed the connection before the answer was ready"
            )
        default:
            return ServerError(.internalServerError, "internal", "internal error")
        }
    }

    /// The JSON response: `{"error": code, "message": text}`.
    package func response(headers: HTTPFields = [:]) -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        let body = (try? encoder.encode(Body(error: code, message: message))) ?? Data()
        var headers = headers
        headers[.contentType] = "application/json; charset=utf-8"
        headers[.cacheControl] = "no-store"
        if let retryAfter { headers[.retryAfter] = String(retryAfter) }
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }
}

private struct Body: Encodable {
    let error: String
    let message: String
}

extension DataLoadingError {
    var statusCode: Int? {
        if case .badStatus(let status, _) = self { return status }
        return nil
    }
}
