import ImageryServer

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

        let etag = "\"0123456789abcdef-42\""
        _ = ImageAnswers.matches(ifNoneMatch, etag)
        try require(
            ImageAnswers.matches(ifNoneMatch + ", " + etag, etag),
            "a list ending in the ETag does not match: \(ifNoneMatch)")
        try require(
            ImageAnswers.matches("W/" + etag + "," + ifNoneMatch, etag), "a weak form of the ETag does not match")
        if !ifNoneMatch.contains(etag), !ifNoneMatch.contains("*") {
            try require(!ImageAnswers.matches(ifNoneMatch, etag), "\(ifNoneMatch) matches an ETag it does not name")
        }
    }
}
