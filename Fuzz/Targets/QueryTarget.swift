import Foundation
import Hummingbird
import HummingbirdCore
import Imagery
import ImageryServer

/// The `/image` query as the server reads it: the signature check on the raw query, then the
/// parameters, percent-decoded, and the gallery's file names.
enum QueryTarget {
    static let signer = RequestSigner(key: "fuzz-key")

    /// A gallery directory with one image, a hidden one, and a directory named like an image.
    static let gallery: Gallery = {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("imagery-fuzz-gallery-\(getpid())")
        try? FileManager.default.createDirectory(at: directory.appendingPathComponent("folder.jpg"), withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: directory.appendingPathComponent("photo.jpg").path, contents: Data([0xFF, 0xD8, 0xFF]))
        _ = FileManager.default.createFile(atPath: directory.appendingPathComponent(".hidden.jpg").path, contents: Data([0xFF, 0xD8, 0xFF]))
        return Gallery(directory: directory, urls: [])
    }()

    static let maximumSide = 8192

    static func run(_ bytes: [UInt8]) throws(FuzzFailure) {
        let query = String(decoding: bytes, as: UTF8.self)

        // Whatever arrives is checked without a crash; what the key signed verifies; a changed query does not.
        _ = signer.isValid(rawQuery: query)
        let signed = signer.sign(query: query)
        try require(signer.isValid(rawQuery: signed), "a signed query does not verify: \(signed)")
        if let first = query.unicodeScalars.first {
            let changed = (first == "a" ? "b" : "a") + String(query.unicodeScalars.dropFirst())
            let signature = String(signed.utf8.dropFirst(query.utf8.count))!
            try require(!signer.isValid(rawQuery: changed + signature), "a changed query verifies: \(changed + signature)")
        }

        let parameters = ImageController.parameters(of: URI("/image?" + query))
        let image: ImageParameters
        do {
            image = try ImageParameters(query: parameters, maximumSide: maximumSide, gallery: gallery)
        } catch {
            let answer = ServerError.from(error)
            try require(answer.status == .badRequest || answer.status == .notFound, "query \(query) answered \(answer)")
            try require(answer.code != "internal" && !answer.message.isEmpty, "query \(query) answered \(answer)")
            return
        }
        let range = 1...maximumSide
        try require(image.width.map(range.contains) ?? true, "w out of range: \(String(describing: image.width))")
        try require(image.height.map(range.contains) ?? true, "h out of range: \(String(describing: image.height))")
        try require(image.quality.map((1...100).contains) ?? true, "q out of range: \(String(describing: image.quality))")
        if let thumbnail = image.thumbnail(maximumSide: maximumSide) {
            try require(range.contains(thumbnail.width) && range.contains(thumbnail.height), "thumbnail out of range: \(thumbnail)")
        }
        try require(!image.responseKey.isEmpty, "empty response key")
        if image.url.isFileURL {
            // A gallery file: a regular, visible file directly in the gallery directory, nothing else.
            let folder = image.url.deletingLastPathComponent().standardizedFileURL.path
            try require(folder == gallery.directory!.standardizedFileURL.path, "a gallery name escaped: \(image.url.path)")
            try require(image.url.lastPathComponent == "photo.jpg", "a gallery name reached \(image.url.path)")
        } else {
            do {
                _ = try SourceGuard.endpoint(of: image.url)
            } catch {
                throw FuzzFailure("url \(image.url) was accepted but has no endpoint")
            }
        }
    }
}
