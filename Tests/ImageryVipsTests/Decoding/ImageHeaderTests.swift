import Foundation
import Imagery
import ImageryTestSupport
import ImageryVips
import Testing

/// Headers described without decoding, against libvips' own `vipsheader`.
@Suite("Image headers")
struct ImageHeaderTests {
    /// Every corpus image (and fixture): what `/info` reports from the header agrees with `vipsheader`
    /// on size (as displayed), orientation, frames, colour space, alpha and the presence of a profile.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/usr/bin/vipsheader")))
    func agreesWithVipsheader() throws {
        let directories = [Fixtures.directory] + (Fixtures.corpus.map { [$0] } ?? [])
        let files = directories.flatMap { Fixtures.files(in: $0) }.filter {
            ImageFormat(fileExtension: $0.pathExtension) != nil
        }
        #expect(files.count >= 7)
        let decoder = VipsImageDecoder()
        for file in files {
            let fields = try Self.vipsheader(file)
            let info = try decoder.inspect(Data(contentsOf: file))
            let (storedWidth, storedHeight) = (Int(fields["width"]!)!, Int(fields["height"]!)!)
            let orientation = Int(fields["orientation"] ?? "1") ?? 1
            let pages = Int(fields["n-pages"] ?? "1") ?? 1
            let pageHeight = Int(fields["page-height"] ?? "\(storedHeight)") ?? storedHeight
            let (width, height) = orientation >= 5 ? (storedHeight, storedWidth) : (storedWidth, storedHeight)
            #expect((info.width, info.height) == (width, height), "\(file.lastPathComponent)")
            #expect(info.orientation == orientation, "\(file.lastPathComponent)")
            #expect(info.frames == max(pages, storedHeight / max(1, pageHeight)), "\(file.lastPathComponent)")
            #expect(info.colorSpace == fields["interpretation"], "\(file.lastPathComponent)")
            let bands = Int(fields["bands"] ?? "") ?? 0
            #expect(
                info.hasAlpha == (bands == 2 || (bands == 4 && fields["interpretation"] != "cmyk")),
                "\(file.lastPathComponent)")
            #expect((info.profile != nil) == (fields["icc-profile-data"] != nil), "\(file.lastPathComponent)")
        }
    }

    /// `vipsheader`'s fields, each value's first word.
    static func vipsheader(_ file: URL) throws -> [String: String] {
        try VipsHeader.fields(of: file).mapValues { value in value.split(separator: " ").first.map(String.init) ?? value
        }
    }
}
