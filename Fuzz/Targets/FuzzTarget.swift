import Foundation

/// The fuzz targets: every parser of untrusted text or bytes, Imagery's own C that reads or
/// writes pixels, and the whole decode path (libvips' decoders with the server's limits).
/// Each takes any bytes; it must not crash, and it checks properties of what the parser made
/// of them (a round trip, a range, an agreement between two checks), throwing
/// ``FuzzFailure`` when one does not hold. `scripts/fuzz` runs them under libFuzzer
/// (`imagery-fuzz TARGET`); the test suite replays their seeds and regressions.
package enum FuzzTarget: String, CaseIterable, Sendable {
    /// The `/image` query: percent-decoding, the parameters, the signature check, gallery names.
    case query
    /// `Accept` negotiation and `If-None-Match`.
    case accept
    /// thumbor's and imgproxy's URL paths: the syntax, the parameters, the signatures.
    case paths
    /// IP literals, whether they are public, host patterns, source URLs' hosts and ports.
    case address
    /// HTTP cache headers: `Cache-Control`, `Expires`, `Date`, `Age`, `Vary`, and the response's own.
    case cacheHeaders = "cache-headers"
    /// The JSON configuration file.
    case configuration
    /// Opening a disk cache whose index and files are anything a crash or a hand could leave.
    case diskIndex = "disk-index"
    /// Imagery's own BMP and ICO readers (and the BMP writer, by round trip).
    case bitmaps
    /// The SVG sanitiser.
    case svg
    /// A thumbor.conf: its Python assignments, read and applied.
    case thumborConfiguration = "thumbor-conf"
    /// `CJPEG`'s scaled JPEG decode.
    case jpeg
    /// `CGIFFrames`: the area resize and the GIF writer.
    case gifFrames = "gif-frames"
    /// `CColorTransform`: ICC transforms with a hostile profile.
    case icc
    /// Metadata written into a JPEG: `ExifBlock` and `CJPEG`'s encoder with any blocks.
    case exif
    /// The whole decode path (`VipsImageDecoder`), every format, with the server's limits.
    case decode
    /// Request heads read before the server's HTTP decoder (`RequestHead`), beside that decoder.
    case requestHead = "request-head"
    /// Progressive previews: a body's scans counted as it arrives, and the preview of those decoded.
    case previews

    /// Runs the target on `bytes`.
    /// - Throws: ``FuzzFailure`` when a property does not hold.
    package func run(_ bytes: [UInt8]) throws(FuzzFailure) {
        switch self {
        case .query: try QueryTarget.run(bytes)
        case .accept: try AcceptTarget.run(bytes)
        case .paths: try PathsTarget.run(bytes)
        case .address: try AddressTarget.run(bytes)
        case .cacheHeaders: try CacheHeadersTarget.run(bytes)
        case .configuration: try ConfigurationTarget.run(bytes)
        case .diskIndex: try DiskIndexTarget.run(bytes)
        case .bitmaps: try BitmapsTarget.run(bytes)
        case .svg: try SVGTarget.run(bytes)
        case .thumborConfiguration: try ThumborConfigurationTarget.run(bytes)
        case .jpeg: try JPEGTarget.run(bytes)
        case .gifFrames: try GIFFramesTarget.run(bytes)
        case .icc: try ICCTarget.run(bytes)
        case .exif: try ExifTarget.run(bytes)
        case .decode: try DecodeTarget.run(bytes)
        case .requestHead: try RequestHeadTarget.run(bytes)
        case .previews: try PreviewsTarget.run(bytes)
        }
    }
}

/// A property of a fuzz target that an input broke.
package struct FuzzFailure: Error, CustomStringConvertible {
    package let description: String

    init(_ description: String) {
        self.description = description
    }
}

/// Throws a ``FuzzFailure`` with `message` unless `condition` holds.
func require(_ condition: Bool, _ message: @autoclosure () -> String) throws(FuzzFailure) {
    if !condition { throw FuzzFailure(message()) }
}

/// Reads structured values out of fuzz bytes (as libFuzzer's FuzzedDataProvider does):
/// every read succeeds, with zeros once the bytes run out.
struct FuzzReader {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    var isAtEnd: Bool { offset >= bytes.count }

    mutating func byte() -> UInt8 {
        guard offset < bytes.count else { return 0 }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func integer(below bound: Int) -> Int {
        guard bound > 1 else { return 0 }
        let value = Int(byte()) << 8 | Int(byte())
        return value % bound
    }

    mutating func bytes(_ count: Int) -> [UInt8] {
        let end = min(bytes.count, offset + count)
        defer { offset = max(offset, end) }
        return offset < end ? Array(bytes[offset..<end]) : []
    }

    /// Bytes up to the next `separator` (consumed, not returned) or the end, as text (invalid UTF-8 repaired).
    mutating func text(until separator: UInt8 = 0x0A) -> String {
        guard offset < bytes.count else { return "" }
        let start = offset
        while offset < bytes.count, bytes[offset] != separator { offset += 1 }
        defer { offset += 1 }
        return String(decoding: bytes[start..<min(offset, bytes.count)], as: UTF8.self)
    }

    /// The rest of the bytes.
    mutating func rest() -> [UInt8] {
        defer { offset = bytes.count }
        return offset < bytes.count ? Array(bytes[offset...]) : []
    }
}
