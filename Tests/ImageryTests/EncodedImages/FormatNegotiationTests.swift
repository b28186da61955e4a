import Foundation
import Imagery
import Testing

@Suite("Format negotiation")
struct FormatNegotiationTests {
    let standard = FormatNegotiation.standard

    @Test func theFirstCandidateNamedWinsAndWildcardsDoNotCount() {
        #expect(
            standard.output(asked: nil, otherwise: .source, accept: "image/webp,image/avif")
                == .negotiated(.avif, animation: .webp))
        #expect(standard.output(asked: nil, otherwise: .source, accept: "image/webp,*/*") == .negotiated(.webp))
        #expect(standard.output(asked: nil, otherwise: .source, accept: "image/*,*/*") == .source)
        #expect(standard.output(asked: nil, otherwise: .source, accept: nil) == .source)
        #expect(
            standard.output(asked: nil, otherwise: .source, accept: "image/avif;q=0,image/webp") == .negotiated(.webp))
    }

    @Test func anAnimationGetsTheFirstAcceptedFormatThatAnimates() {
        let output = standard.output(asked: nil, otherwise: .source, accept: "image/avif,image/webp")
        #expect(output == .negotiated(.avif, animation: .webp))
        #expect(output.resolved(source: .gif, animated: true) == .webp)
        #expect(output.resolved(source: .gif) == .avif)
        let avifOnly = standard.output(asked: nil, otherwise: .source, accept: "image/avif")
        #expect(avifOnly.resolved(source: .gif, animated: true) == .gif)
    }

    @Test func aFormatAskedForStaysUnlessOneIsEnforced() {
        #expect(standard.output(asked: .png, otherwise: .source, accept: "image/avif") == .format(.png))
        #expect(!standard.variesWithAccept(asked: .png))
        #expect(standard.variesWithAccept(asked: nil))
        let enforcing = FormatNegotiation(candidates: [], enforced: [.webp])
        #expect(enforcing.output(asked: .png, otherwise: .source, accept: "image/webp") == .negotiated(.webp))
        #expect(enforcing.output(asked: .png, otherwise: .source, accept: "image/avif") == .format(.png))
        #expect(enforcing.variesWithAccept(asked: .png) && enforcing.variesWithAccept(asked: nil))
        #expect(!FormatNegotiation(candidates: []).variesWithAccept(asked: nil))
    }

    @Test func theSourcesFormatWhereBrowsersShowIt() {
        #expect(OutputFormat.source.resolved(source: .jpeg) == .jpeg)
        #expect(OutputFormat.source.resolved(source: .avif) == .jpeg)
        #expect(OutputFormat.source.resolved(source: .heic) == .png)
        #expect(OutputFormat.source.resolved(source: .gif, animated: true) == .gif)
        #expect(OutputFormat.preferred([.webp, .jpeg]).resolved(source: .png, transparent: true) == .webp)
        #expect(OutputFormat.opaquePNGAsJPEG.resolved(source: .png) == .jpeg)
    }

    @Test func theStorageKeySeparatesWhatSelectsTheBytes() {
        let url = URL(string: "https://example.com/a.jpg")!
        let image = ImageRequest(url: url, thumbnail: .init(width: 64, height: 64))
        let avif = EncodedImageRequest(image, accept: "image/avif")
        let webp = EncodedImageRequest(image, accept: "image/webp")
        let webpAgain = EncodedImageRequest(image, accept: "text/html, image/webp;q=0.9")
        #expect(avif.storageKey != webp.storageKey)
        #expect(webp.storageKey == webpAgain.storageKey)  // the same output, however `Accept` is written
        var quality = webp
        quality.encoding.quality = 50
        #expect(quality.storageKey != webp.storageKey)
        var perFormat = webp
        perFormat.formatEncodings[.webp] = EncodingOptions(quality: 60)
        #expect(perFormat.storageKey != webp.storageKey)
        #expect(perFormat.encoding(for: .webp).quality == 60 && perFormat.encoding(for: .jpeg).quality == nil)
        var busted = webp
        busted.variant = "cb:2"
        #expect(busted.storageKey != webp.storageKey)
        var other = webp
        other.image.cacheKey = .string("avatar-42")
        #expect(other.storageKey != webp.storageKey)
    }
}
