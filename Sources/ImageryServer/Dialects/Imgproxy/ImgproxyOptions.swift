import Foundation
import Imagery

/// imgproxy's processing options, read as imgproxy 3/4 reads them (each option's arguments, in the
/// URL's order, a later one overriding an earlier one; presets expanded where they are named), before
/// they are turned into Imagery's recipe (``ImgproxyOptions/parameters(source:maximumSide:negotiates:)``).
/// Options with no equivalent here are refused with a 400 that names them, as imgproxy refuses
/// options it does not know.
struct ImgproxyOptions {
    /// The geometry (size, dpr, zoom, minimum sides, crop, gravity, extension, padding, largest
    /// result side): laid out by the recipe as imgproxy lays it out.
    var sizing = ImageRecipe.Sizing()
    /// `crop`'s own gravity (`nil`: ``ImageRecipe/Sizing/gravity``, as imgproxy falls back to it).
    var cropGravity: ImageRecipe.OffsetGravity?
    var trim: ImageRecipe.Trim?
    var rotate = 0
    var flipHorizontal = false
    var flipVertical = false
    var background: ImageRecipe.Color?
    var blur = 0.0
    var pixelate: Int?
    /// `max_src_resolution`, `max_src_file_size`, `max_animation_frames`, `max_animation_frame_resolution`.
    var sourceLimits = ImageRecipe.SourceLimits()
    /// Whether any of those was given (imgproxy's "security options": allowed only when the server says so).
    var setsSourceLimits = false
    /// `watermark`: opacity (0 to 1), position (a gravity or `re`), offsets, scale (`nil`: its own size).
    var watermark: (opacity: Double, position: Substring, x: Double, y: Double, scale: Double?)?
    var sharpen = 0.0
    var quality = 0
    var formatQualities: [ImageFormat: Int] = [:]
    var maximumBytes = 0
    /// `autoquality`: a per-image quality (`none`: a fixed one, even when the server's default is a search).
    var autoQuality: AutoQualityChoice?
    var format: ImageFormat?
    /// `strip_color_profile` (inverted), `auto_rotate` (`nil`: the server's `IMGPROXY_STRIP_COLOR_PROFILE`, `IMGPROXY_AUTO_ROTATE`).
    var keepsColorProfile: Bool?
    /// `preserve_hdr`: keep a 16-bit source's depth (`nil`: the server's `IMGPROXY_PRESERVE_HDR`).
    var preservesHDR: Bool?
    /// `skip_processing`: source formats answered as they are (with the server's `IMGPROXY_SKIP_PROCESSING_FORMATS`).
    var skipProcessing: Set<ImageFormat> = []
    /// `raw`: the source answered as it is, whatever else the URL asks.
    var raw = false
    /// `strip_metadata`, `keep_copyright` (`nil`: the server's `IMGPROXY_STRIP_METADATA`, `IMGPROXY_KEEP_COPYRIGHT`).
    var stripsMetadata: Bool?
    var keepsCopyright: Bool?
    /// `auto_rotate`: whether the source's EXIF orientation is applied (`nil`: the server's `IMGPROXY_AUTO_ROTATE`, default yes).
    var autoRotate: Bool?
    var cacheBuster: String?
    var expires: Int?

    /// Every option name and short form this reads (those that are refused included: they are imgproxy's).
    static let names: Set<String> = [
        "resize", "rs", "size", "s", "resizing_type", "rt", "width", "w", "height", "h", "min-width", "mw",
        "min-height", "mh",
        "zoom", "z", "dpr", "enlarge", "el", "extend", "ex", "extend_aspect_ratio", "extend_ar", "exar", "gravity", "g",
        "crop", "c", "trim", "t", "padding", "pd", "auto_rotate", "ar", "rotate", "rot", "flip", "fl", "background",
        "bg",
        "blur", "bl", "sharpen", "sh", "pixelate", "pix", "watermark", "wm", "strip_metadata", "sm", "keep_copyright",
        "kcr",
        "strip_color_profile", "scp", "preserve_hdr", "ph", "enforce_thumbnail", "eth", "quality", "q",
        "format_quality", "fq",
        "max_bytes", "mb", "format", "f", "ext", "skip_processing", "skp", "raw", "cachebuster", "cb", "expires", "exp",
        "filename", "fn", "return_attachment", "att", "preset", "pr", "max_src_resolution", "msr", "max_src_file_size",
        "msfs",
        "max_animation_frames", "maf", "max_animation_frame_resolution", "mafr", "max_result_dimension", "mrd",
        "autoquality", "aq",
    ]

    /// imgproxy Pro's option names and short forms (its documentation's), refused with a 400 that says
    /// so: a URL that starts with one is still read as imgproxy's.
    static let proNames: Set<String> = [
        "resizing_algorithm", "ra", "objects_position", "obj_pos", "op", "crop_aspect_ratio", "crop_ar", "car",
        "crop_objects", "co",
        "background_alpha", "bga", "adjust", "a", "brightness", "br", "contrast", "saturation", "sa", "monochrome",
        "mc",
        "duotone", "dt", "colorize", "col", "gradient", "gr", "unsharp_masking", "ush", "blur_areas", "ba",
        "progressive_blur", "pbl",
        "blur_detections", "bd", "draw_detections", "dd", "watermark_url", "wmu", "watermark_text", "wmt",
        "watermark_size", "wms",
        "watermark_rotate", "wm_rot", "wmr", "watermark_shadow", "wmsh", "style", "st", "dpi", "color_profile", "cp",
        "icc",
        "jpeg_options", "jpgo", "png_options", "pngo", "webp_options", "webpo", "avif_options", "avifo",
        "page", "pg", "pages", "pgs", "disable_animation", "da", "video_thumbnail_second", "vts",
        "video_thumbnail_keyframes", "vtk",
        "video_thumbnail_tile", "vtt", "video_thumbnail_animation", "vta", "fallback_image_url", "fiu", "bypass_cache",
        "bc",
        "cache_tags", "ct", "hashsum", "hs",
    ]

    /// The options of a URL, after the `default` preset (as imgproxy applies it to every URL).
    /// - Parameters:
    ///   - presets: imgproxy's presets, by name (`IMGPROXY_PRESETS`), each a list of options.
    ///   - now: The time `expires` is compared with (seconds since 1970).
    /// - Throws: A 400 ``ServerError`` with imgproxy's option name for what is wrong or not supported;
    ///   404 for an expired URL (as imgproxy answers).
    init(
        _ options: [ImgproxyURL.Option], presets: [String: [ImgproxyURL.Option]] = [:],
        now: Int = Int(Date().timeIntervalSince1970)
    ) throws {
        if let defaults = presets["default"] { try apply(defaults, presets: presets, used: ["default"], now: now) }
        try apply(options, presets: presets, used: [], now: now)
    }

    private mutating func apply(
        _ options: [ImgproxyURL.Option], presets: [String: [ImgproxyURL.Option]], used: Set<String>, now: Int
    ) throws {
        for option in options {
            if option.name == "preset" || option.name == "pr" {
                // recursion is skipped, as imgproxy does
                for name in option.arguments.map(String.init) where !used.contains(name) {
                    guard let preset = presets[name] else {
                        let known =
                            presets.isEmpty
                            ? "none are configured" : "one of \(presets.keys.sorted().joined(separator: ", "))"
                        throw ServerError.badParameter("imgproxy preset \(name) is unknown (\(known))")
                    }
                    try apply(preset, presets: presets, used: used.union([name]), now: now)
                }
            } else {
                try apply(option, now: now)
            }
        }
    }

    // swiftlint:disable:next cyclomatic_complexity function_body_length
    private mutating func apply(_ option: ImgproxyURL.Option, now: Int) throws {
        let reader = Reader(option: option)
        switch option.name {
        case "resize", "rs":
            try reader.count(1...8)
            if !reader[0].isEmpty { sizing.mode = try reader.resizingType(0) }
            try applySize(reader, from: 1)
        case "size", "s":
            try reader.count(1...7)
            try applySize(reader, from: 0)
        case "resizing_type", "rt":
            try reader.count(1...1)
            sizing.mode = try reader.resizingType(0)
        case "width", "w":
            try reader.count(1...1)
            sizing.width = try reader.integer(0)
        case "height", "h":
            try reader.count(1...1)
            sizing.height = try reader.integer(0)
        case "min-width", "mw":
            try reader.count(1...1)
            sizing.minimumWidth = try reader.integer(0)
        case "min-height", "mh":
            try reader.count(1...1)
            sizing.minimumHeight = try reader.integer(0)
        case "zoom", "z":
            try reader.count(1...2)
            sizing.zoomX = try reader.number(0, "a number above 0") { $0 > 0 }
            sizing.zoomY =
                reader.arguments.count > 1 ? try reader.number(1, "a number above 0") { $0 > 0 } : sizing.zoomX
        case "dpr":
            try reader.count(1...1)
            sizing.dpr = try reader.number(0, "a number above 0, at most 100") { $0 > 0 && $0 <= 100 }
        case "enlarge", "el":
            try reader.count(1...1)
            sizing.enlarge = reader.bool(0)
        case "extend", "ex":
            sizing.extend = try reader.extend(from: 0)
        case "extend_aspect_ratio", "extend_ar", "exar":
            sizing.extendAspectRatio = try reader.extend(from: 0)
        case "gravity", "g":
            sizing.gravity = try reader.gravity(from: 0, smart: true)
        case "crop", "c":
            try reader.count(1...5)
            let width = try reader.number(0, "a number, 0 or more") { $0 >= 0 }
            let height = reader.arguments.count > 1 ? try reader.number(1, "a number, 0 or more") { $0 >= 0 } : 0
            sizing.crop = ImageRecipe.Sizing.Crop(width: width, height: height)
            cropGravity = reader.arguments.count > 2 ? try reader.gravity(from: 2, smart: true) : nil
        case "max_result_dimension", "mrd":
            try reader.count(1...1)
            sizing.maximumResultSide = try reader.integer(0)
        case "trim", "t":
            try reader.count(1...4)
            guard !reader[0].isEmpty else {
                trim = nil
                return
            }
            var trim = ImageRecipe.Trim(threshold: min(255, try reader.number(0, "a number, 0 or more") { $0 >= 0 }))
            if reader.arguments.count > 1, !reader[1].isEmpty {
                guard let color = ImageRecipe.Color(hex: String(reader[1])), [3, 6].contains(reader[1].count),
                    !reader[1].hasPrefix("#")
                else {
                    throw reader.invalid(1, "a hex colour (RGB or RRGGBB)")
                }
                trim.color = color
            }
            trim.equalHorizontal = reader.arguments.count > 2 && reader.bool(2)
            trim.equalVertical = reader.arguments.count > 3 && reader.bool(3)
            self.trim = trim
        case "padding", "pd":
            try reader.count(1...4)
            func side(_ index: Int, else fallback: Int) throws -> Int {
                index < reader.arguments.count && !reader[index].isEmpty ? try reader.integer(index) : fallback
            }
            let top = try side(0, else: 0)
            let right = try side(1, else: top)
            let bottom = try side(2, else: top)
            sizing.padding = ImageRecipe.Insets(top: top, right: right, bottom: bottom, left: try side(3, else: right))
        case "auto_rotate", "ar":
            try reader.count(1...1)
            autoRotate = reader.bool(0)
        case "rotate", "rot":
            try reader.count(1...1)
            guard let angle = Int(reader[0]), angle % 90 == 0 else { throw reader.invalid(0, "a multiple of 90") }
            rotate = (angle % 360 + 360) % 360
        case "flip", "fl":
            try reader.count(1...2)
            if !reader[0].isEmpty { flipHorizontal = reader.bool(0) }
            if reader.arguments.count > 1, !reader[1].isEmpty { flipVertical = reader.bool(1) }
        case "background", "bg":
            background = try reader.color()
        case "watermark", "wm":
            try reader.count(1...7)
            let opacity = try reader.number(0, "an opacity from 0 to 1") { (0...1).contains($0) }
            let position = reader.arguments.count > 1 && !reader[1].isEmpty ? reader[1] : "ce"
            guard position == "re" || Reader.placement(position) != nil else {
                throw reader.invalid(1, "a watermark position (\(Reader.placementNames), re)")
            }
            func number(_ index: Int) throws -> Double? {
                index < reader.arguments.count && !reader[index].isEmpty
                    ? try reader.number(index, "a number") { $0.isFinite } : nil
            }
            let scale = try number(4)
            if let scale, scale <= 0 { throw reader.invalid(4, "a scale above 0") }
            watermark = opacity > 0 ? (opacity, position, try number(2) ?? 0, try number(3) ?? 0, scale) : nil
        case "max_src_resolution", "msr":
            setsSourceLimits = true
            try reader.count(1...1)
            sourceLimits.pixels = Int(try reader.number(0, "megapixels, 0 or more") { $0 >= 0 && $0 < 1e9 } * 1_000_000)
        case "max_src_file_size", "msfs":
            setsSourceLimits = true
            try reader.count(1...1)
            guard let bytes = Int(reader[0]) else { throw reader.invalid(0, "a number of bytes") }
            sourceLimits.bytes = bytes > 0 ? bytes : nil
        case "max_animation_frames", "maf":
            setsSourceLimits = true
            try reader.count(1...1)
            sourceLimits.frames = Int(
                try reader.number(0, "a whole number above 0") { $0 >= 1 && $0 == $0.rounded() && $0 < 1e9 })
        case "max_animation_frame_resolution", "mafr":
            setsSourceLimits = true
            try reader.count(1...1)
            let pixels = Int(try reader.number(0, "megapixels, 0 or more") { $0 >= 0 && $0 < 1e9 } * 1_000_000)
            sourceLimits.framePixels = pixels > 0 ? pixels : nil
        case "filename", "fn":
            _ = try reader.fileName()  // the response's header (ImgproxyURL.disposition), not the image
        case "return_attachment", "att":
            try reader.count(1...1)
        case "pixelate", "pix":
            try reader.count(1...1)
            let size = try reader.integer(0)
            pixelate = size > 1 ? size : nil
        case "blur", "bl":
            try reader.count(1...1)
            blur = try reader.number(0, "a number, 0 or more") { $0 >= 0 }
        case "sharpen", "sh":
            try reader.count(1...1)
            sharpen = try reader.number(0, "a number, 0 or more") { $0 >= 0 }
        case "quality", "q":
            try reader.count(1...1)
            quality = try reader.quality(0)
        case "autoquality", "aq":
            try reader.count(1...5)
            autoQuality = try reader.autoQuality()
        case "format_quality", "fq":
            guard reader.arguments.count % 2 == 0 else {
                throw ServerError.badParameter(
                    "imgproxy format_quality takes pairs of a format and a quality (fq:jpeg:80:webp:70)")
            }
            for index in stride(from: 0, to: reader.arguments.count, by: 2) {
                formatQualities[try reader.format(index)] = try reader.quality(index + 1)
            }
        case "max_bytes", "mb":
            try reader.count(1...1)
            maximumBytes = try reader.integer(0)
        case "format", "f", "ext":
            try reader.count(1...1)
            format = try reader.format(0)
        case "strip_metadata", "sm":
            try reader.count(1...1)
            stripsMetadata = reader.bool(0)
        case "keep_copyright", "kcr":
            try reader.count(1...1)
            keepsCopyright = reader.bool(0)
        case "strip_color_profile", "scp":
            try reader.count(1...1)
            keepsColorProfile = !reader.bool(0)
        case "preserve_hdr", "ph":
            try reader.count(1...1)
            preservesHDR = reader.bool(0)
        case "skip_processing", "skp":
            for index in reader.arguments.indices {
                skipProcessing.insert(try reader.format(index))
            }
        case "raw":
            try reader.count(1...1)
            raw = reader.bool(0)
        case "cachebuster", "cb":
            try reader.count(1...1)
            cacheBuster = reader[0].isEmpty ? nil : String(reader[0])
        case "expires", "exp":
            try reader.count(1...1)
            guard let timestamp = Int(reader[0]) else { throw reader.invalid(0, "a Unix timestamp") }
            if timestamp > 0, timestamp < now { throw ServerError(.notFound, "expired", "this imgproxy URL expired") }
            expires = timestamp > 0 ? timestamp : nil
        default:
            let name = String(option.name)
            if Self.proNames.contains(name) {
                throw ServerError.badParameter("imgproxy option \(name) is an imgproxy Pro option, not supported here")
            }
            guard Self.names.contains(name) else {
                throw ServerError.badParameter("imgproxy option \(name) is unknown")
            }
            throw ServerError.badParameter("imgproxy option \(name) is not supported here (see the README's table)")
        }
    }

    /// `WIDTH:HEIGHT:ENLARGE:EXTEND:GRAVITY...` from argument `start` of `reader`: empty arguments leave values as they are.
    private mutating func applySize(_ reader: Reader, from start: Int) throws {
        let count = reader.arguments.count
        if start < count, !reader[start].isEmpty { sizing.width = try reader.integer(start) }
        if start + 1 < count, !reader[start + 1].isEmpty { sizing.height = try reader.integer(start + 1) }
        if start + 2 < count, !reader[start + 2].isEmpty { sizing.enlarge = reader.bool(start + 2) }
        if start + 3 < count, !reader[start + 3].isEmpty { sizing.extend = try reader.extend(from: start + 3) }
    }
}
