import Foundation
import Imagery
import ImageryTestSupport
import ImageryVips
import Testing

/// SVG sources: sanitised (``SVGSanitizer``) before anything reads them, then rasterised by libvips.
@Suite("SVG")
struct SVGTests {
    static let hostile = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!-- a comment -->
        <svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="100" height="50" onload="alert(1)">
          <script>alert(2)</script>
          <defs><rect id="r" width="40" height="50" fill="#ff0000"/></defs>
          <use xlink:href="#r"/>
          <use href="https://tracker.example/sprite.svg#x"/>
          <a xlink:href="javascript:alert(3)"><rect x="40" width="10" height="10" fill="blue"/></a>
          <a href=" JaVa&#x0A;Script:alert(4)"><circle r="1"/></a>
          <image href="http://tracker.example/pixel.png" width="1" height="1"/>
          <image href="data:image/png;base64,iVBORw0KGgo=" width="1" height="1"/>
          <image href="data:image/svg+xml;base64,PHN2Zz48L3N2Zz4=" width="1" height="1"/>
          <foreignObject><div xmlns="http://www.w3.org/1999/xhtml" onclick="alert(5)">html</div></foreignObject>
          <set attributeName="href" to="javascript:alert(6)"/>
          <animate attributeName="opacity" from="0" to="1" dur="1s"/>
          <style>@import url(https://tracker.example/a.css);</style>
          <style>rect { stroke: url(#g) }</style>
          <rect x="50" width="50" height="50" fill="#00ff00" style="fill: url(https://tracker.example/f)"/>
          <rect x="60" width="10" height="10" style="opacity: 1"/>
          <text x="1" y="45">a &amp; b &lt; c</text>
        </svg>
        """

    @Test func nothingThatRunsOrFetchesSurvives() throws {
        let clean = String(decoding: try SVGSanitizer.sanitized(Data(Self.hostile.utf8)), as: UTF8.self)
        for gone in [
            "script", "alert", "onload", "onclick", "tracker.example", "foreignObject", "javascript", "<set", "@import",
            "svg+xml", "<!--",
        ] {
            #expect(!clean.lowercased().contains(gone.lowercased()), "\(gone) survived: \(clean)")
        }
        for kept in [
            ##"xlink:href="#r""##, "data:image/png;base64", "<animate", "url(#g)", #"style="opacity: 1""#,
            "a &amp; b &lt; c", ##"fill="#00ff00""##,
        ] {
            #expect(clean.contains(kept), "\(kept) was dropped: \(clean)")
        }
        // Sanitising is stable: once clean, it stays as it is.
        #expect(try SVGSanitizer.sanitized(Data(clean.utf8)) == Data(clean.utf8))
    }

    @Test(arguments: [
        #"<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY x SYSTEM "file:///etc/passwd">]><svg xmlns="http://www.w3.org/2000/svg"><text>&x;</text></svg>"#,
        #"<!DOCTYPE svg [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><svg xmlns="http://www.w3.org/2000/svg"><text>&b;</text></svg>"#,
        #"<html><svg xmlns="http://www.w3.org/2000/svg"/></html>"#,
        #"<svg xmlns="http://www.w3.org/2000/svg"><rect></svg>"#,
        #"<?xml version="1.0" encoding="ISO-8859-1"?><svg xmlns="http://www.w3.org/2000/svg"/>"#,
    ])
    func entitiesOtherRootsAndBrokenXMLAreRefused(svg: String) {
        #expect(throws: ImageDecodingError.self) { try SVGSanitizer.sanitized(Data(svg.utf8)) }
        #expect(throws: ImageDecodingError.self) {
            try VipsImageDecoder().decode(Data(svg.utf8), recipe: ImageRecipe())
        }
    }

    /// A byte that is not UTF-8 in an element's name made FoundationXML trap (the `svg` fuzz target found it).
    @Test func bytesThatAreNotUTF8AreRefused() {
        var data = Data(#"<svg xmlns="http://www.w3.org/2000/svg"><rect/></svg>"#.utf8)
        data.insert(0xC9, at: 44)
        #expect(throws: ImageDecodingError.corrupt(format: .svg, reason: "an SVG must be UTF-8 or UTF-16 text")) {
            try SVGSanitizer.sanitized(data)
        }
    }

    @Test func aSanitisedSVGIsRasterisedAtTheSizeAsked() throws {
        let data = Data(Self.hostile.utf8)
        #expect(ImageFormat(sniffing: data) == .svg)
        let decoder = VipsImageDecoder(rejectsCorruptData: true)
        let whole = try decoder.decode(data, recipe: ImageRecipe())
        #expect((whole.width, whole.height, whole.sourceFormat) == (100, 50, .svg))
        #expect(GeneratedImages.pixel(whole, 10, 25).prefix(3) == [255, 0, 0])  // the rect <use> drew
        // its fill kept, the style pointing out dropped
        #expect(GeneratedImages.pixel(whole, 80, 25).prefix(3) == [0, 255, 0])
        let header = try decoder.inspect(data)
        #expect((header.width, header.height, header.format) == (100, 50, .svg))
        let small = try decoder.decode(
            data, recipe: ImageRecipe(resize: ImageRequest.Thumbnail(width: 40, height: 40, fit: .inside)))
        #expect((small.width, small.height) == (40, 20))
    }

    @Test func anSVGThatDeclaresTooManyPixelsIsRefusedBeforeRendering() {
        let huge =
            #"<svg xmlns="http://www.w3.org/2000/svg" width="100000" height="100000"><rect width="10" height="10"/></svg>"#
        #expect(throws: ImageDecodingError.tooManyPixels(width: 100_000, height: 100_000, limit: 100_000_000)) {
            try VipsImageDecoder().decode(Data(huge.utf8), recipe: ImageRecipe())
        }
    }
}
