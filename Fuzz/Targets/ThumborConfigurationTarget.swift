import Foundation
import ImageryServer

/// A thumbor.conf (Python assignments): any bytes are either refused with a message naming the
/// setting, or applied to a configuration that validates, everything not applied reported.
enum ThumborConfigurationTarget {
    static func run(_ bytes: [UInt8]) throws(FuzzFailure) {
        var configuration = ServerConfiguration()
        let text = String(decoding: bytes, as: UTF8.self)
        let report: ThumborConfigurationFile.Report
        do {
            report = try ThumborConfigurationFile.apply(text, to: &configuration)
        } catch {
            try require(!error.message.isEmpty, "an error without a message")
            return
        }
        do {
            try configuration.validate()
        } catch {
            throw FuzzFailure("an applied thumbor configuration does not validate: \(error.message)")
        }
        try require(
            configuration.rendering.formatQualities.values.allSatisfy((1...100).contains), "a quality out of range")
        try require(
            configuration.thumbor.maximumWidth >= 0 && configuration.thumbor.maximumHeight >= 0,
            "a negative largest side"
        )
        try require(configuration.limits.maximumSourcePixels >= 1, "no pixels allowed")
        // Each unread line is reported once, by a line number the text has.
        let lineCount = text.unicodeScalars.filter { $0 == "\n" }.count + 1
        let numbers = report.unreadLines.compactMap { $0.split(separator: ":").first.flatMap { Int($0.dropFirst(5)) } }
        try require(numbers.count == report.unreadLines.count, "an unread line without its number")
        try require(numbers.allSatisfy { (1...lineCount).contains($0) }, "an unread line number outside the text")
        try require(Set(numbers).count == numbers.count, "a line reported twice")
    }
}
