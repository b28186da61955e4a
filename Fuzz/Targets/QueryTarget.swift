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
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "imagery-fuzz-gallery-\(getpid())")
        try? FileManager.default.createDirectory(
            at: directory.appendingPathComponent("folder.jpg"), withIntermediateDirectories: true)
        _ = FileManager.default.createFile(
            atPath: directory.appendingPathComponent("photo.jpg").path, contents: Data([0xFF, 0xD8, 0xFF]))
        _ = FileManager.default.createFile(
            atPath: directory.appendingPathComponent(".hidden.jpg").path, contents: Data([0xFF, 0xD8, 0xFF]))
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
            try require(
                !signer.isValid(rawQuery: changed + signature), "a changed query verifies: \(changed + signature)")
        }

        let parameters = DialectRequest.parameters(of: URI("/image?" + query))
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
        try require(
            image.quality.map((1...100).contains) ?? true, "q out of range: \(String(describing: image.quality))")
        let recipe = image.recipe
        if let resize = recipe.resize {
            try require(range.contains(resize.width) && range.contains(resize.height), "resize out of range: \(resize)")
        }
        try require(recipe.blur.map((0.3...100).contains) ?? true, "blur out of range: \(recipe)")
        try require(recipe.sharpen.map((0.3...10).contains) ?? true, "sharpen out of range: \(recipe)")
        // On any source the recipe lays out within the output limit, or is refused as a bad parameter.
        for (width, height) in [(1, 1), (640, 427), (3000, 17)] {
            switch Result(catching: {
                try recipe.layout(sourceWidth: width, sourceHeight: height, maximumSide: maximumSide)
            }) {
            case .success(let layout):
                try require(
                    (1...maximumSide).contains(layout.outputWidth) && (1...maximumSide).contains(layout.outputHeight),
                    "\(recipe) on \(width)x\(height) gave \(layout.outputWidth)x\(layout.outputHeight)"
                )
            case .failure(let error):
                try require(ServerError.from(error).status == .badRequest, "\(recipe) on \(width)x\(height): \(error)")
            }
        }
        try require(!image.responseKey.isEmpty, "empty response key")
        if image.url.isFileURL {
            // A gallery file: a regular, visible file directly in the gallery directory, nothing else.
            let folder = image.url.deletingLastPathComponent().standardizedFileURL.path
            try require(
                folder == gallery.directory!.standardizedFileURL.path, "a gallery name escaped: \(image.url.path)")
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
