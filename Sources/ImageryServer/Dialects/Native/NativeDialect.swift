import Foundation

/// Imagery's own syntax: the query of `GET /image` (an image, ``ImageParameters/init(query:maximumSide:gallery:watermarks:)``)
/// and of `GET /info` (a source's description), signed with `sig` where a signing key is configured,
/// presets expanded.
struct NativeDialect: Dialect {
    let signer: RequestSigner?
    let presets: Presets
    let gallery: Gallery
    let maximumSide: Int
    /// The configured watermarks' recipe names by the names `watermark=` takes.
    let watermarks: [String: String]

    /// - Throws: ``ConfigurationFileError`` when the configuration's presets are not valid.
    init(configuration: ServerConfiguration, gallery: Gallery, watermarks: [String: String] = [:])
        throws(ConfigurationFileError)
    {
        signer = configuration.requests.signingKey.map(RequestSigner.init(key:))
        presets = try Presets(configuration.requests.presets, onlyPresets: configuration.requests.onlyPresets)
        self.gallery = gallery
        maximumSide = configuration.limits.maximumOutputSide
        self.watermarks = watermarks
    }

    /// `/image`'s or `/info`'s query; `nil` for another path.
    func read(_ request: DialectRequest) throws -> DialectReading? {
        let endpoint = request.path.split(separator: "/").last
        guard endpoint == "image" || endpoint == "info" else { return nil }
        if let signer, !signer.isValid(rawQuery: request.query) {
            throw ServerError(.forbidden, "bad_signature", "the request's sig parameter is missing or wrong")
        }
        let query = request.parameters
        guard endpoint == "image" else {
            return DialectReading(kind: .info(try ImageParameters.sourceURL(query, gallery: gallery)))
        }
        let parameters = try ImageParameters(
            query: try presets.expand(query), maximumSide: maximumSide, gallery: gallery, watermarks: watermarks)
        return DialectReading(kind: .image(parameters))
    }
}
