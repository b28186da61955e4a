import Foundation
import Hummingbird
import NIOCore

extension ImageController {
    /// An imgproxy URL's response: its expiry checked first (a URL answered before may have expired
    /// since), then the common path, its `Cache-Control` no longer than the URL lives.
    func respondToImgproxy(_ request: Request, path: Substring, on channel: any Channel) async -> Response {
        var maxAge: Int?
        if let expiry = ImgproxyURL.expiry(of: path), expiry > 0 {
            let left = expiry - Int(Date().timeIntervalSince1970)
            guard left > 0 else { return ServerError(.notFound, "expired", "this imgproxy URL expired").response() }
            maxAge = min(left, service.configuration.responseMaxAge)
        }
        return await respond(to: request, on: channel, requestKey: "#imgproxy " + path, maxAge: maxAge) { try dialects.parameters(path, in: .imgproxy) }
    }
}
