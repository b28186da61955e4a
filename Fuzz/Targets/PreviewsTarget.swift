import Foundation
import Imagery
import ImageryVips

/// A body read as it arrives for progressive previews (`VipsImageDecoder`'s scan counter, Imagery's
/// own parser of JPEG markers), and the preview of its scans so far decoded (`CJPEG` or libvips on
/// data cut short on purpose). Input: a byte (the size of the parts the body arrives in, and the
/// recipe), then the file.
enum PreviewsTarget {
    static let decoder = DecodeTarget.decoder
    /// The most prefixes also counted from scratch (each is a whole read).
    static let checkpoints = 32

    static func run(_ bytes: [UInt8]) throws(FuzzFailure) {
        guard let mode = bytes.first else { return }
        let data = Data(bytes.dropFirst())
        let step = 1 << Int(mode & 15)
        let recipe = mode & 16 == 0 ? ImageRecipe(resize: ImageRequest.Thumbnail(width: 64, height: 64)) : ImageRecipe()
        var counter = decoder.makeScanCounter()
        var last: CompletedScans?
        var ended = false
        var end = 0
        var part = 0
        while end < data.count {
            end = min(data.count, end + step)
            part += 1
            let prefix = data.prefix(end)
            let counted = counter.count(prefix)
            if part % max(1, data.count / step / checkpoints) == 0 || end == data.count {
                var fresh = decoder.makeScanCounter()
                let once = fresh.count(prefix)
                try require(
                    counted == once,
                    "read in parts: \(String(describing: counted)), at once: \(String(describing: once))")
            }
            guard let counted else {
                ended = true
                continue
            }
            try require(!ended, "scans counted after the counter said there would be none")
            try require(counted.byteCount <= end, "\(counted.byteCount) bytes of scans in a body of \(end)")
            if counted.count == 0 {
                try require(counted.byteCount == 0, "no scan, but \(counted.byteCount) bytes of them")
            } else {
                try require(data[counted.byteCount] == 0xFF, "the scans end at \(counted.byteCount), not at a marker")
            }
            if let last {
                try require(
                    counted.count >= last.count && counted.byteCount >= last.byteCount,
                    "scans went back from \(last) to \(counted)")
            }
            last = counted
        }
        guard let last, last.count > 0 else { return }
        let preview: Image
        do {
            preview = try decoder.decodePreview(data.prefix(last.byteCount), recipe: recipe)
        } catch is ImageDecodingError {
            return
        } catch is ImageProcessingError {
            return
        } catch {
            throw FuzzFailure("decodePreview threw \(type(of: error)): \(error)")
        }
        try require(
            preview.width >= 1 && preview.height >= 1 && preview.width * preview.height <= DecodeTarget.maximumPixels,
            "a preview of \(preview.width)x\(preview.height)")
        // The whole image, when it decodes (leniently, as the preview), has the preview's size.
        var lenient = decoder
        lenient.rejectsCorruptData = false
        if let whole = try? lenient.decode(data, recipe: recipe) {
            try require(
                (whole.width, whole.height) == (preview.width, preview.height),
                "a preview of \(preview.width)x\(preview.height), the image \(whole.width)x\(whole.height)")
        }
    }
}
