import Foundation
import Imagery
import ImageryTestSupport

/// libvips' own `vipsheader -a`, when installed: every field of a file's header, values whole.
enum VipsHeader {
    static var isInstalled: Bool { FileManager.default.fileExists(atPath: "/usr/bin/vipsheader") }

    static func fields(of file: URL) throws -> [String: String] {
        let (_, output) = try ChildProcess.run("/usr/bin/vipsheader", ["-a", file.path])
        var fields: [String: String] = [:]
        for line in String(decoding: output, as: UTF8.self).split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[String(line[..<colon])] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return fields
    }

    /// The fields of encoded `data` (written to a temporary file named for `format`); `nil` without `vipsheader`.
    static func read(_ data: Data, format: ImageFormat) throws -> [String: String]? {
        guard isInstalled else { return nil }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "vipsheader-\(UUID().uuidString).\(format.fileExtension)")
        try data.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        return try fields(of: file)
    }
}
