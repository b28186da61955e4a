import CVips
import Foundation
import Imagery

/// libvips, started once per process.
enum Vips {
    /// Starts libvips on first use: its operation cache off, untrusted loaders
    /// blocked, one thread per operation (Imagery runs operations in parallel itself),
    /// liborc off (not thread-safe before 0.4.34: a soak crashed inside it) unless the
    /// environment sets `IMAGERY_VIPS_ORC=1` (for an orc known to be safe).
    private static let startError: String? = {
        let vector = ProcessInfo.processInfo.environment["IMAGERY_VIPS_ORC"] == "1"
        return imagery_vips_start(1, vector ? 1 : 0) == 0 ? nil : takeError()
    }()

    /// Starts libvips if needed.
    /// - Throws: ``VipsError`` if libvips cannot start.
    static func start() throws {
        if let startError { throw VipsError(message: "libvips did not start: \(startError)") }
    }

    /// libvips' pending error message, cleared, trimmed to its last line.
    static func takeError() -> String {
        let message = String(cString: imagery_vips_error_message())
        vips_error_clear()
        let lines = message.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter {
            !$0.isEmpty
        }
        return lines.last ?? "libvips could not read it"
    }

    /// Runs a libvips operation that writes a new image to `out`, releasing `input` afterwards when asked.
    static func apply(
        _ input: UnsafeMutablePointer<VipsImage>,
        releasingInput: Bool = true,
        _ operation: (UnsafeMutablePointer<VipsImage>, UnsafeMutablePointer<UnsafeMutablePointer<VipsImage>?>) -> Int32
    ) throws -> UnsafeMutablePointer<VipsImage> {
        defer { if releasingInput { imagery_vips_unref(input) } }
        var output: UnsafeMutablePointer<VipsImage>?
        guard operation(input, &output) == 0, let output else { throw VipsError(message: takeError()) }
        return output
    }
}

/// A libvips failure, with libvips' message.
struct VipsError: Error, CustomStringConvertible {
    let message: String
    /// An allocation failed, rather than the data or the operation.
    let isOutOfMemory: Bool
    var description: String { message }

    /// - Parameter outOfMemory: Whether an allocation failed; `nil`: as `message` says. libvips has no
    ///   error codes, only text: its allocator says "out of memory", libjpeg "Insufficient memory".
    init(message: String, outOfMemory: Bool? = nil) {
        self.message = message
        isOutOfMemory =
            outOfMemory
            ?? (message.localizedCaseInsensitiveContains("out of memory") || message.contains("Insufficient memory"))
    }

    /// What a decoder reports for it: ``ImageDecodingError/outOfMemory(reason:)`` when an allocation
    /// failed, else the data of `format` is taken to be corrupt.
    func decodingError(format: ImageFormat?) -> ImageDecodingError {
        isOutOfMemory ? .outOfMemory(reason: message) : .corrupt(format: format, reason: message)
    }
}

/// The memory libvips tracks (its pixel buffers and working areas; its operation cache is off),
/// for metrics.
public enum VipsMemory {
    /// Bytes libvips holds now.
    public static var current: Int { Int(vips_tracked_get_mem()) }
    /// The most bytes libvips has held at once.
    public static var peak: Int { Int(vips_tracked_get_mem_highwater()) }
    /// Allocations libvips holds now.
    public static var allocations: Int { Int(vips_tracked_get_allocs()) }
}
