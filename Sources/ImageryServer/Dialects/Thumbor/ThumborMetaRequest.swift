import Foundation

/// A thumbor `meta/` request, read: the URL, the parameters its image would be made with (its source
/// among them), and the JavaScript function its JSON is wrapped in (`callback=NAME`), if any.
struct ThumborMetaRequest: Sendable {
    let url: ThumborURL
    let parameters: ImageParameters
    let callback: String?
}
