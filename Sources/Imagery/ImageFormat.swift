import Foundation

/// An encoded image format, recognised from the bytes (never from a file name).
public enum ImageFormat: String, Sendable, Hashable, CaseIterable {
    case jpeg
    case png
    case gif
    case webp
    case avif
    case heic
    /// JPEG XL (an output here: libvips' loader for it is not among the trusted ones).
    case jxl
    /// TIFF (its first page).
    case tiff
    /// Windows bitmap (read and written by Imagery itself: ``BMP``).
    case bmp
    /// Windows icon (its largest picture; written as one PNG picture of at most 256 × 256: ``ICO``).
    case ico
    /// SVG: read only once sanitised (``SVGSanitizer``), rasterised by libvips (librsvg); never written,
    /// but passed on sanitised where asked (imgproxy URLs).
    case svg

    /// The format these bytes start with, or `nil` when they are no image
    /// format Imagery knows (an HTML error page, say).
    ///
    /// - Complexity: O(1): reads at most the first 32 bytes, or 4 KB of what starts as XML (for `<svg`).
    public init?(sniffing data: Data) {
        let bytes = [UInt8](data.prefix(32))
        func starts(_ signature: [UInt8], at offset: Int = 0) -> Bool {
            bytes.count >= offset + signature.count && Array(bytes[offset..<offset + signature.count]) == signature
        }
        if starts([0xFF, 0xD8, 0xFF]) {
            self = .jpeg
        } else if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            self = .png
        } else if starts(Array("GIF87a".utf8)) || starts(Array("GIF89a".utf8)) {
            self = .gif
        } else if starts(Array("RIFF".utf8)) && starts(Array("WEBP".utf8), at: 8) {
            self = .webp
        } else if starts(Array("BM".utf8)), bytes.count >= 18,
            [12, 16, 40, 52, 56, 64, 108, 124].contains(
                Int(bytes[14]) | Int(bytes[15]) << 8 | Int(bytes[16]) << 16 | Int(bytes[17]) << 24)
        {
            self = .bmp  // "BM" and a bitmap header's size: "BM" alone starts text too
        } else if starts([0, 0, 1, 0]) || starts([0, 0, 2, 0]), bytes.count >= 22, bytes[4] | bytes[5] != 0,
            bytes[9] == 0
        {
            self = .ico  // an icon (or cursor) directory with a picture whose reserved byte is 0
        } else if starts([0x49, 0x49, 0x2A, 0x00]) || starts([0x4D, 0x4D, 0x00, 0x2A]) {
            self = .tiff  // little- or big-endian
        } else if starts([0xFF, 0x0A]) || starts([0, 0, 0, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A]) {
            self = .jxl  // a bare codestream, or the ISO container's signature box
        } else if Self.isSVG(data) {
            self = .svg
        } else if starts(Array("ftyp".utf8), at: 4), bytes.count >= 12 {
            // ISO base media: the major brand says what the file holds.
            let brand = String(decoding: bytes[8..<12], as: UTF8.self)
            switch brand {
            case "avif", "avis": self = .avif
            case "heic", "heix", "hevc", "hevx", "mif1", "msf1": self = .heic
            default: return nil
            }
        } else {
            return nil
        }
    }

    /// The IANA media type, for `Content-Type`.
    /// Whether the format holds animations that Imagery writes (GIF and WebP; AVIF and JPEG XL
    /// sequences are not written by libvips here): an animated image encoded as another gets its first frame.
    public var canAnimate: Bool { self == .gif || self == .webp }

    /// Whether the format holds more than 8 bits per channel as Imagery writes it (16-bit PNG and TIFF,
    /// 12-bit AVIF, 16-bit JPEG XL): what ``ImageRecipe/keepsHighBitDepth`` is for (imgproxy's HDR formats).
    public var holdsHighBitDepth: Bool { self == .png || self == .avif || self == .jxl || self == .tiff }

    public var mimeType: String {
        switch self {
        case .jpeg: "image/jpeg"
        case .png: "image/png"
        case .gif: "image/gif"
        case .webp: "image/webp"
        case .avif: "image/avif"
        case .heic: "image/heic"
        case .jxl: "image/jxl"
        case .tiff: "image/tiff"
        case .bmp: "image/bmp"
        case .ico: "image/x-icon"  // what browsers and imgproxy send (IANA's is image/vnd.microsoft.icon)
        case .svg: "image/svg+xml"
        }
    }

    /// The format a media type names (`image/jpeg`, `image/png; charset=...`, ...).
    public init?(mimeType: String) {
        // The exact forms this library writes itself come first: no string work for them.
        if let format = ImageFormat.allCases.first(where: { $0.mimeType == mimeType }) {
            self = format
            return
        }
        let type =
            mimeType.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        if type == "image/vnd.microsoft.icon" {
            self = .ico
            return
        }
        guard let format = ImageFormat.allCases.first(where: { $0.mimeType == type }) else { return nil }
        self = format
    }

    /// The usual file extension, without a dot.
    public var fileExtension: String {
        switch self {
        case .jpeg: "jpg"
        default: rawValue
        }
    }

    /// The format a file extension names (`"jpg"`, `"JPEG"`, `"png"`, ...), for output file names.
    public init?(fileExtension: String) {
        switch fileExtension.lowercased() {
        case "jpg", "jpeg": self = .jpeg
        case "png": self = .png
        case "gif": self = .gif
        case "webp": self = .webp
        case "avif": self = .avif
        case "heic", "heif": self = .heic
        case "jxl": self = .jxl
        case "tif", "tiff": self = .tiff
        case "bmp": self = .bmp
        case "ico": self = .ico
        case "svg": self = .svg
        default: return nil
        }
    }

    /// Whether `data` is XML (after an optional byte-order mark and whitespace) whose first 4 KB open an
    /// `svg` element; UTF-8, or UTF-16 after its byte-order mark (either order).
    static func isSVG(_ data: Data) -> Bool {
        var head = data.prefix(4096)
        if head.starts(with: [0xFE, 0xFF]) || head.starts(with: [0xFF, 0xFE]) {
            let encoding: String.Encoding = head.first == 0xFE ? .utf16BigEndian : .utf16LittleEndian
            let units = head.dropFirst(2)
            guard let text = String(data: units.prefix(units.count & ~1), encoding: encoding) else { return false }
            head = Data(text.utf8)
        }
        var index = head.startIndex
        if head.starts(with: [0xEF, 0xBB, 0xBF]) { index += 3 }
        while index < head.endIndex, [0x20, 0x09, 0x0A, 0x0D].contains(head[index]) { index += 1 }
        guard index < head.endIndex, head[index] == UInt8(ascii: "<") else { return false }
        return head.range(of: Data("<svg".utf8)) != nil || head.range(of: Data(":svg".utf8)) != nil
    }
}
