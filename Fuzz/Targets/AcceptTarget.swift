import Imagery

/// `Accept` negotiation and `If-None-Match` matching. Input: the `Accept` header, a newline,
/// the `If-None-Match` header.
enum AcceptTarget {
    static func run(_ bytes: [UInt8]) throws(FuzzFailure) {
        var reader = FuzzReader(bytes)
        let accept = reader.text()
        let ifNoneMatch = reader.text()

        let header = AcceptHeader(accept)
        // Media types and the `q` name are case-insensitive: upper-casing (ASCII) changes nothing.
        let upper = AcceptHeader(
            String(decoding: accept.utf8.map { (0x61...0x7A).contains($0) ? $0 - 0x20 : $0 }, as: UTF8.self))
        for type in ["image/webp", "image/avif", "image/jpeg", "image/*", "*/*"] {
            let weight = header.explicitWeight(of: type)
            try require(
                weight.map { (0...1).contains($0) } ?? true, "weight of \(type) out of range in \(accept): \(weight!)")
            try require(weight == upper.explicitWeight(of: type), "case changed the weight of \(type) in \(accept)")
            try require(
                header.accepts(type) == ((weight ?? 0) > 0), "accepts(\(type)) disagrees with its weight in \(accept)")
        }
        // A header that names WebP first, with no weight, is WebP, whatever follows.
        try require(AcceptHeader("image/webp," + accept).accepts("image/webp"), "image/webp first was not accepted")
        try require(!AcceptHeader("image/webp;q=0," + accept).accepts("image/webp"), "image/webp;q=0 was accepted")

        // The negotiation picks a candidate the header names, else the fallback; a format asked for stays.
        let negotiation = FormatNegotiation.standard
        switch negotiation.output(asked: nil, otherwise: .source, accept: accept) {
        case .negotiated(let format, let animation):
            try require(header.accepts(format.mimeType), "negotiated \(format) that \(accept) does not accept")
            try require(animation.map { header.accepts($0.mimeType) && $0.canAnimate } ?? true, "bad animation format")
        case .source:
            try require(
                !negotiation.candidates.contains { header.accepts($0.mimeType) }, "\(accept) accepts a candidate")
        default:
            try require(false, "an output neither negotiated nor the fallback")
        }
        try require(negotiation.output(asked: .png, otherwise: .source, accept: accept) == .format(.png), "asked lost")

        let etag = "\"0123456789abcdef-42\""
        _ = EncodedImageResponse.matches(ifNoneMatch, etag: etag)
        try require(
            EncodedImageResponse.matches(ifNoneMatch + ", " + etag, etag: etag),
            "a list ending in the ETag does not match: \(ifNoneMatch)")
        try require(
            EncodedImageResponse.matches("W/" + etag + "," + ifNoneMatch, etag: etag),
            "a weak form of the ETag does not match")
        if !ifNoneMatch.contains(etag), !ifNoneMatch.contains("*") {
            try require(
                !EncodedImageResponse.matches(ifNoneMatch, etag: etag),
                "\(ifNoneMatch) matches an ETag it does not name")
        }
    }
}
