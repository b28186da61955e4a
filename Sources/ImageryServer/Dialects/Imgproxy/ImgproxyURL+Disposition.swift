import Foundation
import Imagery

extension ImgproxyURL {
    /// The `Content-Disposition` of the URL's image, as imgproxy sends with every image: `inline`
    /// and the source's file name unless `filename`/`fn` or `return_attachment`/`att` say otherwise;
    /// read from the path's text alone, so that a response answered from result storage has it too.
    var disposition: ContentDisposition {
        var (attachment, name) = (false, String?.none)
        for option in options {
            let reader = ImgproxyOptions.Reader(option: option)
            switch option.name {
            case "filename", "fn": name = try? reader.fileName()
            case "return_attachment", "att": attachment = !option.arguments.isEmpty && reader.bool(0)
            default: continue
            }
        }
        return ContentDisposition(
            attachment: attachment, stem: name.flatMap { $0.isEmpty ? nil : $0 } ?? Self.sourceStem(source))
    }

    /// The source's file name (after its last `/`, its query included, as imgproxy takes it) without
    /// its extension; `image` when that leaves nothing.
    static func sourceStem(_ source: String) -> String {
        let last = source.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? ""
        let stem = last.lastIndex(of: ".").map { String(last[..<$0]) } ?? last
        return stem.isEmpty ? "image" : stem
    }
}

extension ImgproxyOptions.Reader {
    /// `filename`'s `NAME[:ENCODED]`: the name as written, or base64url-decoded when `ENCODED` is true.
    func fileName() throws -> String {
        try count(1...2)
        guard arguments.count > 1, bool(1) else { return String(self[0]) }
        guard let data = ImgproxySigner.data(base64URL: self[0]), let name = String(data: data, encoding: .utf8) else {
            throw invalid(0, "base64url of a file name")
        }
        return name
    }
}
