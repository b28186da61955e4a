import Foundation
import Imagery

/// thumbor's `meta/` answer: the JSON of what thumbor 7.8's transformer would do to a source of a
/// given size (its crops, resizes and flips, its target size, the focal points it centred on), worked
/// out with thumbor's own arithmetic (Python's rounding, its int and float values written as Python
/// writes them), from the source's header alone: nothing is decoded.
///
/// What it leaves out, as thumbor's meta has nothing for them: pixels (filters other than `rotate`
/// and `proportion` do not change the answer; `smart` finds nothing without thumbor's detectors,
/// so its alignment decides, as in a thumbor without detectors). A `trim/` crop needs the pixels
/// and is not in the answer.
struct ThumborMeta {
    let url: ThumborURL
    /// The source's size as displayed (EXIF orientation applied, as thumbor's `RESPECT_ORIENTATION`).
    let sourceWidth: Int
    let sourceHeight: Int
    let frames: Int

    /// A Python number: thumbor's JSON writes ints and floats differently (`300` and `300.0`).
    enum Number: Equatable, CustomStringConvertible {
        case int(Int)
        case float(Double)

        var value: Double {
            switch self {
            case .int(let value): Double(value)
            case .float(let value): value
            }
        }

        /// Python's `or 1`: a zero becomes 1.
        var orOne: Number { value == 0 ? .int(1) : self }

        var description: String {
            switch self {
            case .int(let value): "\(value)"
            case .float(let value):
                value.isFinite && value == value.rounded() && abs(value) < 1e16 ? "\(Int(value)).0" : "\(value)"
            }
        }
    }

    /// thumbor's `FocalPoint`, as `to_dict` writes it.
    struct FocalPoint {
        var x: Int
        var y: Int
        var weight: Number
        var width: Int
        var height: Int
        var origin: String

        /// `FocalPoint.from_square`: the centre (integer halves), weighted by the area.
        static func square(left: Int, top: Int, width: Int, height: Int, origin: String) -> FocalPoint {
            FocalPoint(
                x: left + width / 2, y: top + height / 2, weight: .int(width * height), width: width, height: height,
                origin: origin)
        }

        var json: String {
            #"{"x": \#(x), "y": \#(y), "z": \#(weight), "height": \#(height), "width": \#(width), "origin": \#(ThumborMeta.quoted(origin))}"#
        }
    }

    /// Python's `round(x)` and `round(x, 0)`: halves to even.
    static func round(_ value: Double) -> Double { value.rounded(.toNearestOrEven) }

    /// The JSON (or `callback(JSON);` with a callback name, as thumbor's `callback=`).
    func json(callback: String? = nil) -> String {
        var (width, height) = (sourceWidth, sourceHeight)
        var operations: [String] = []
        func crop(_ left: Int, _ top: Int, _ right: Int, _ bottom: Int) {
            operations.append(
                #"{"type": "crop", "left": \#(left), "top": \#(top), "right": \#(right), "bottom": \#(bottom)}"#)
            (width, height) = (right - left, bottom - top)
            lastSize = (.int(width), .int(height))
        }
        var lastSize: (Number, Number)?  // what thumbor's get_target_dimensions ends with
        func resize(_ newWidth: Number, _ newHeight: Number) {
            operations.append(#"{"type": "resize", "width": \#(newWidth), "height": \#(newHeight)}"#)
            (width, height) = (Int(newWidth.value), Int(newHeight.value))
            lastSize = (newWidth, newHeight)
        }
        // Explicit focal points (focal(), extract_focal()), in source pixels.
        var focal: [FocalPoint] = []
        var image = url.image
        for filter in url.filters {
            if filter.name == "focal", let region = filter.arguments.first.flatMap({ ThumborURL.crop(Substring($0)) }),
                region.right > region.left, region.bottom > region.top
            {
                focal.append(
                    .square(
                        left: region.left, top: region.top, width: region.right - region.left,
                        height: region.bottom - region.top, origin: "Explicit"
                    ))
            } else if filter.name == "extract_focal", let (inner, region) = ThumborURL.focalExtraction(of: image) {
                image = inner
                focal.append(
                    .square(
                        left: region.left, top: region.top, width: region.width, height: region.height,
                        origin: "Original Extraction"))
            }
        }
        // The manual crop, kept within the image.
        var manualCrop: (left: Int, top: Int, right: Int, bottom: Int)?
        if let requested = url.crop {
            let limited = (
                left: min(max(requested.left, 0), width), top: min(max(requested.top, 0), height),
                right: min(max(requested.right, 0), width), bottom: min(max(requested.bottom, 0), height)
            )
            if limited.left < limited.right, limited.top < limited.bottom {
                manualCrop = limited
                crop(limited.left, limited.top, limited.right, limited.bottom)
            }
        }
        // The target size.
        func requested(_ side: ThumborURL.Side) -> Number? {
            switch side {
            case .pixels(0): nil
            case .pixels(let value): .float(Double(value))
            case .original: .float(-1)  // resolved below
            }
        }
        var targetWidth: Number
        var targetHeight: Number
        var (askedWidth, askedHeight) = (requested(url.width), requested(url.height))
        if url.filters.contains(where: { $0.name == "no_upscale" }) {  // after loading: at most the source's sides
            if case .float(let value) = askedWidth, value >= 0 { askedWidth = .float(min(value, Double(sourceWidth))) }
            if case .float(let value) = askedHeight, value >= 0 {
                askedHeight = .float(min(value, Double(sourceHeight)))
            }
        }
        // The request's sides as thumbor keeps them (fit-in grows them to what it resized to), for upscale().
        var requestSides = (
            Int(askedWidth.map { $0.value < 0 ? Double(width) : $0.value } ?? 0),
            Int(askedHeight.map { $0.value < 0 ? Double(height) : $0.value } ?? 0)
        )
        if askedWidth == nil, askedHeight == nil {
            (targetWidth, targetHeight) = (.float(Double(width)), .float(Double(height)))
        } else {
            let widthValue = url.width == .original ? .float(Double(width)) : askedWidth
            let heightValue = url.height == .original ? .float(Double(height)) : askedHeight
            targetWidth = widthValue ?? .float(Self.round((heightValue?.value ?? 0) * Double(width) / Double(height)))
            targetHeight = heightValue ?? .float(Self.round((widthValue?.value ?? 0) * Double(height) / Double(width)))
        }
        // Focal points: the explicit ones within the crop (moved with it), else the alignment's.
        if let manualCrop, !focal.isEmpty {
            focal = focal.compactMap { point in
                guard point.x >= manualCrop.left, point.x <= manualCrop.right, point.y >= manualCrop.top,
                    point.y <= manualCrop.bottom
                else { return nil }
                var moved = point
                (moved.x, moved.y) = (point.x - manualCrop.left, point.y - manualCrop.top)
                return moved
            }
        }
        if focal.isEmpty {
            let percentages = ["left": 0.0, "center": 0.5, "right": 1.0, "top": 0.0, "middle": 0.5, "bottom": 1.0]
            focal = [
                FocalPoint(
                    x: Int(Double(width) * (percentages[url.horizontalAlign] ?? 0.5)),
                    y: Int(Double(height) * (percentages[url.verticalAlign] ?? 0.5)),
                    weight: .float(1), width: 1, height: 1, origin: "alignment"
                )
            ]
        }
        let stretch = url.filters.contains { $0.name == "stretch" }
        if let fitIn = url.fitIn {
            let adaptive = fitIn == .adaptive || fitIn == .adaptiveFull
            if adaptive,
                (width < height && targetWidth.value > targetHeight.value)
                    || (width > height && targetWidth.value < targetHeight.value)
            {
                (targetWidth, targetHeight) = (targetHeight, targetWidth)
                requestSides = (requestSides.1, requestSides.0)
            }
            let sign: Double = fitIn == .full || fitIn == .adaptiveFull ? -1 : 1
            if !(sign == 1 && targetWidth.value >= Double(width) && targetHeight.value >= Double(height)) {
                let (w, h) = (Double(width), Double(height))
                if w / targetWidth.value * sign >= h / targetHeight.value * sign {
                    resize(targetWidth, .int(Int(Self.round(h * targetWidth.value / w + 1e-5))))
                } else {
                    resize(.int(Int(Self.round(w * targetHeight.value / h + 1e-5))), targetHeight)
                }
                requestSides = (max(requestSides.0, width), max(requestSides.1, height))
            }
        } else {
            if !stretch {  // auto_crop: to the target's aspect ratio, around the focal points' centre of mass
                let (w, h) = (Double(width), Double(height))
                let (tw, th) = (targetWidth.orOne.value, targetHeight.orOne.value)
                if Self.round2(w / h) != Self.round2(tw / th) {
                    let totalWeight = focal.reduce(0) { $0 + $1.weight.value }
                    let focalX = (focal.reduce(0) { $0 + Double($1.x) * $1.weight.value } / totalWeight).rounded(.down)
                    let focalY = (focal.reduce(0) { $0 + Double($1.y) * $1.weight.value } / totalWeight).rounded(.down)
                    let (cropWidth, cropHeight): (Int, Int)
                    if targetWidth.value / w > targetHeight.value / h {
                        (cropWidth, cropHeight) = (width, Int(Self.round(w * targetHeight.value / tw)))
                    } else {
                        (cropWidth, cropHeight) = (Int(Self.round((targetWidth.value * h / th).rounded(.up))), height)
                    }
                    let left = Int(Self.round(min(max(focalX - Double(cropWidth) / 2, 0), Double(width - cropWidth))))
                    let top = Int(Self.round(min(max(focalY - Double(cropHeight) / 2, 0), Double(height - cropHeight))))
                    crop(left, top, min(left + cropWidth, width), min(top + cropHeight, height))
                }
            }
            if !(targetWidth.value == Double(width) && targetHeight.value == Double(height)) {
                resize(targetWidth.orOne, targetHeight.orOne)
            }
        }
        if url.horizontalFlip { operations.append(#"{"type": "flip_horizontally"}"#) }
        if url.verticalFlip { operations.append(#"{"type": "flip_vertically"}"#) }
        // The filters that change the size: they work on thumbor's engine itself, not on the JSON
        // engine that records operations, so only the source's size shows them.
        for filter in url.filters {
            if filter.name == "rotate", let angle = filter.arguments.first.flatMap({ Int($0) }), angle % 90 == 0,
                abs(angle / 90) % 2 == 1
            {
                (width, height) = (height, width)
            } else if filter.name == "proportion", let factor = filter.arguments.first.flatMap({ Double($0) }),
                factor > 0, factor <= 1
            {
                let (newWidth, newHeight) = (Double(width) * factor, Double(height) * factor)
                if newWidth >= 1, newHeight >= 1 { (width, height) = (Int(newWidth), Int(newHeight)) }
            } else if filter.name == "upscale", requestSides.0 > 0, requestSides.1 > 0, width < requestSides.0,
                height < requestSides.1
            {
                let (w, h, tw, th) = (width, height, requestSides.0, requestSides.1)
                (width, height) = Double(w) / Double(tw) >= Double(h) / Double(th) ? (tw, h * tw / w) : (w * th / h, th)
            }
        }
        // The target: the last crop's or resize's size, else the image's.
        let target = lastSize ?? (Number.int(width), Number.int(height))
        let shown = String(image).removingPercentEncoding ?? String(image)
        let source =
            #"{"url": \#(Self.quoted(Self.pythonQuote(shown))), "width": \#(width), "height": \#(height), "frameCount": \#(frames)}"#
        let body =
            #"{"thumbor": {"source": \#(source), "operations": [\#(operations.joined(separator: ", "))], "target": {"width": \#(target.0), "height": \#(target.1)}, "focal_points": [\#(focal.map(\.json).joined(separator: ", "))]}}"#
        return callback.map { "\($0)(\(body));" } ?? body
    }

    /// Python's `round(x, 2)`.
    static func round2(_ value: Double) -> Double { (value * 100).rounded(.toNearestOrEven) / 100 }

    /// `urllib.parse.quote(text)`: every byte but letters, digits, `_.-~` and `/` as %XX.
    static func pythonQuote(_ text: String) -> String {
        let allowed = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-~/")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }

    /// A JSON string, escaped as Python's `json.dumps` escapes it (ASCII only).
    static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value > 0x7e {
                    for unit in String(scalar).utf16 { result += String(format: "\\u%04x", unit) }
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result + "\""
    }
}

extension ImageService {
    /// thumbor's `meta/` answer for `url`, whose image is `source`: the source through the caches (as
    /// `/image` loads it), its header read, nothing decoded.
    /// - Throws: What loading the source throws; 415 when it cannot be described.
    func thumborMeta(_ url: ThumborURL, source: URL, callback: String?) async throws -> StoredResponse {
        guard let inspector = pipeline.configuration.decoder as? any ImageInspecting else {
            throw ServerError(.unsupportedMediaType, "unsupported_source", "this server cannot describe images")
        }
        let entry = try await pipeline.dataEntry(for: ImageRequest(url: source))
        let data = entry.data
        let header = try await encodingPool.run { try inspector.inspect(data) }
        let meta = ThumborMeta(url: url, sourceWidth: header.width, sourceHeight: header.height, frames: header.frames)
        return StoredResponse(
            data: Data(meta.json(callback: callback).utf8),
            contentType: callback == nil ? "application/json" : "text/javascript",
            source: entry.metadata, freshUntil: nil, policy: cachePolicy
        )
    }
}

extension PathDialects {
    /// The `meta/` JSON of a thumbor URL path for a source of this size, or `nil` when the path is no
    /// thumbor `meta/` URL (for the fuzz target: any path, any size, must give JSON).
    package static func thumborMetaJSON(_ path: Substring, sourceWidth: Int, sourceHeight: Int) -> String? {
        guard let url = try? ThumborURL(path: path), url.meta else { return nil }
        return ThumborMeta(url: url, sourceWidth: sourceWidth, sourceHeight: sourceHeight, frames: 1).json()
    }
}
