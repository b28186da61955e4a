import Foundation
import Imagery

/// The native syntax: the query of `GET /image`, validated, as ``ImageParameters``: `url` (http/https,
/// or `/files/NAME`), the recipe's parameters (``ImageParameters/recipe(from:maximumSide:watermarks:)``:
/// `w`, `h`, `fit`, `enlarge`, `gravity`, `dpr`, `crop`, `trim`, `rotate`, `flip`, `flop`, `pad`, `bg`,
/// `blur`, `sharpen`, `grayscale`, `profile`, `frame`, `watermark`), the output (`format`: jpeg, png,
/// webp, avif, gif, jxl, absent: negotiated from `Accept`; `q` 1...100 or `auto` (`AutoQuality`: the
/// server's target and bounds); `lossless`; `progressive`;
/// `max_bytes`), `placeholder`. The README has the table; every bad value is a 400 that names the
/// parameter and what it accepts.
extension ImageParameters {
    /// - Parameters:
    ///   - gallery: Resolves `url=/files/NAME` to a file of the gallery directory.
    ///   - watermarks: The configured watermarks' recipe names, by the names `watermark=` takes.
    package init(query: [String: String], maximumSide: Int, gallery: Gallery? = nil, watermarks: [String: String] = [:])
        throws
    {
        url = try Self.sourceURL(query, gallery: gallery)
        let reader = QueryReader(query)
        placeholder = try reader.choice(
            "placeholder", Dictionary(uniqueKeysWithValues: Placeholder.allCases.map { ($0.rawValue, $0) }))
        format = try reader.choice("format", Vocabulary.formats.spellings(in: .native))
        let recipe = Self.framed(
            try Self.recipe(from: reader, maximumSide: maximumSide, watermarks: watermarks), for: format)
        self.recipe = placeholder?.recipe(from: recipe) ?? recipe
        if let placeholder, placeholder.isHash, format != nil {
            throw ServerError.badParameter("placeholder=\(placeholder.rawValue) is text: leave out format")
        }
        let automatic = query["q"] == "auto"
        if automatic { autoQuality = .search(AutoQuality()) }
        encoding = EncodingOptions(
            quality: automatic ? nil : try Self.quality(query["q"]) ?? (placeholder == .lqip ? 40 : nil),
            lossless: try reader.bool("lossless") ?? false,
            progressive: try reader.bool("progressive") ?? false,
            maximumBytes: try reader.integer("max_bytes", in: 1...Int(Int32.max))
        )
    }

    /// `q`: a quality from 1 to 100 (`auto` is read before).
    private static func quality(_ text: String?) throws -> Int? {
        guard let text else { return nil }
        guard let value = Int(text), (1...100).contains(value) else {
            throw ServerError.badParameter(
                "q must be a whole number from 1 to 100, or auto (a quality chosen per image)")
        }
        return value
    }

    /// The `url` parameter: an absolute http or https URL, `s3://BUCKET/KEY`, or `/files/NAME` of the gallery.
    /// - Throws: A 400 ``ServerError`` saying what `url` must be; 404 for a gallery name that is not there.
    static func sourceURL(_ query: [String: String], gallery: Gallery?) throws -> URL {
        guard let text = query["url"], !text.isEmpty else {
            throw ServerError.badParameter("url is required: /image?url=https://example.com/photo.jpg&w=256")
        }
        if let gallery, text.hasPrefix(Gallery.filePrefix) {
            return try gallery.fileURL(forParameter: text)
        }
        guard let url = ServerConfiguration.sourceURL(text) else {
            throw ServerError.badParameter(
                "url must be an absolute http or https URL, s3://BUCKET/KEY, or /files/NAME for a gallery file")
        }
        return url
    }

    /// The recipe a query asks for. Sizes (`w`, `h`, `pad`) are output pixels, multiplied by `dpr`;
    /// a box larger than `maximumSide` after `dpr` is scaled down to it (keeping its shape).
    static func recipe(from query: QueryReader, maximumSide: Int, watermarks: [String: String] = [:]) throws
        -> ImageRecipe
    {
        var recipe = ImageRecipe()
        recipe.frame = try query.integer("frame", in: 0...99_999)
        let dpr = try query.number("dpr", in: 1...4) ?? 1
        let gravity = try query.gravity("gravity") ?? .center
        let width = try query.integer("w", in: 1...maximumSide)
        let height = try query.integer("h", in: 1...maximumSide)
        let fit = try query.choice(
            "fit", Vocabulary.fits.spellings(in: .native))
        let enlarge = try query.bool("enlarge") ?? false
        if width != nil || height != nil {
            // One side: the other follows the aspect ratio (a box that does not bound it, fit inside).
            var box = (Double(width ?? maximumSide), Double(height ?? maximumSide))
            if width != nil { box.0 *= dpr }
            if height != nil { box.1 *= dpr }
            let over = max(box.0, box.1) / Double(maximumSide)
            if over > 1 { box = (box.0 / over, box.1 / over) }
            recipe.resize = ImageRequest.Thumbnail(
                width: max(1, Int(box.0.rounded())), height: max(1, Int(box.1.rounded())),
                fit: width != nil && height != nil ? fit ?? .cover : .inside, enlarge: enlarge, gravity: gravity
            )
        }
        recipe.crop = try query.crop("crop", gravity: gravity)
        if let threshold = try query.number("trim", in: 0...255) {
            recipe.trim = ImageRecipe.Trim(threshold: threshold)
        }
        recipe.rotation =
            try query.choice("rotate", ["0": .none, "90": .quarter, "180": .half, "270": .threeQuarters]) ?? .none
        recipe.flip = try query.bool("flip") ?? false
        recipe.flop = try query.bool("flop") ?? false
        if let padding = try query.insets("pad", in: 0...maximumSide) {
            func scaled(_ side: Int) -> Int { Int((Double(side) * dpr).rounded()) }
            recipe.padding = ImageRecipe.Insets(
                top: scaled(padding.top), right: scaled(padding.right), bottom: scaled(padding.bottom),
                left: scaled(padding.left)
            )
        }
        recipe.background = try query.color("bg")
        recipe.blur = try query.number("blur", in: 0.3...100)
        recipe.sharpen = try query.number("sharpen", in: 0.3...10)
        recipe.grayscale = try query.bool("grayscale") ?? false
        recipe.keepsColorProfile = try query.choice("profile", ["srgb": false, "keep": true]) ?? false
        recipe.watermark = try watermark(from: query, dpr: dpr, watermarks: watermarks)
        return recipe
    }
}

extension ImageParameters {
    /// `watermark=NAME` (a configured image) or `watermark_text=TEXT` (drawn in `watermark_font`, default
    /// `sans bold 32`, and `watermark_color`, default white), and their `watermark_gravity` (default
    /// `southeast`), `watermark_offset` (`X,Y` pixels, × `dpr`), `watermark_opacity` (0 to 1) and
    /// `watermark_scale` (its longer side as a fraction of the output's shorter side).
    static func watermark(from query: QueryReader, dpr: Double, watermarks: [String: String]) throws -> ImageRecipe
        .Watermark?
    {
        let (name, text) = (query.query["watermark"], query.query["watermark_text"])
        for option in ["watermark_font", "watermark_color"] where query.query[option] != nil && text == nil {
            throw ServerError.badParameter("\(option) needs watermark_text=TEXT")
        }
        var watermark: ImageRecipe.Watermark
        switch (name, text) {
        case (nil, nil):
            for option in ["watermark_gravity", "watermark_offset", "watermark_opacity", "watermark_scale"]
            where query.query[option] != nil {
                throw ServerError.badParameter("\(option) needs watermark=NAME or watermark_text=TEXT")
            }
            return nil
        case (.some, .some):
            throw ServerError.badParameter("watermark and watermark_text cannot both be given: one watermark per image")
        case (let name?, nil):
            guard let id = watermarks[name] else {
                let known =
                    watermarks.isEmpty
                    ? "none are configured" : "one of \(watermarks.keys.sorted().joined(separator: ", "))"
                throw ServerError.badParameter("watermark must name a configured watermark (\(known))")
            }
            watermark = ImageRecipe.Watermark(name: id)
        case (nil, let string?):
            var mark = ImageRecipe.Watermark.Text(string)
            if let font = query.query["watermark_font"] { mark.font = font }
            if let color = try query.color("watermark_color") { mark.color = color }
            if let problem = mark.problem { throw ServerError.badParameter(problem) }
            watermark = ImageRecipe.Watermark(mark: .text(mark))
        }
        if let gravity = try query.gravity("watermark_gravity") {
            if case .smart = gravity { throw ServerError.badParameter("watermark_gravity cannot be smart or entropy") }
            watermark.gravity = gravity
        }
        if let text = query.query["watermark_offset"] {
            let parts = text.split(separator: ",", omittingEmptySubsequences: false).map { Int($0) }
            guard parts.count == 2, let x = parts[0], let y = parts[1], (0...100_000).contains(x),
                (0...100_000).contains(y)
            else {
                throw ServerError.badParameter("watermark_offset must be X,Y: whole pixels from 0 to 100000")
            }
            (watermark.offsetX, watermark.offsetY) = (
                Int((Double(x) * dpr).rounded()), Int((Double(y) * dpr).rounded())
            )
        }
        watermark.opacity = try query.number("watermark_opacity", in: 0...1) ?? 1
        if let scale = try query.number("watermark_scale", in: 0...1) {
            guard scale > 0 else {
                throw ServerError.badParameter("watermark_scale must be a number from 0 to 1, above 0")
            }
            watermark.scale = scale
        }
        return watermark
    }
}
