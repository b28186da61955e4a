import Imagery

/// `Content-Disposition` as imgproxy writes it: `inline` or `attachment`, and a file name (the
/// `filename` option, else the source's, its extension the output format's).
struct ContentDisposition: Sendable, Equatable {
    let attachment: Bool
    /// The name without its extension.
    let stem: String

    /// The header's value for an output of `contentType`.
    func value(contentType: String?) -> String {
        let fileExtension = contentType.flatMap(ImageFormat.init(mimeType:)).map { "." + $0.fileExtension } ?? ""
        return
            "\(attachment ? "attachment" : "inline"); filename=\"\(stem.replacingOccurrences(of: "\"", with: "%22"))\(fileExtension)\""
    }
}
