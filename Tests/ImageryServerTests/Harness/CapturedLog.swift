import Foundation
import ImageryTestSupport
import Logging

/// Log lines a server writes, kept (message and metadata).
final class CapturedLog: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [(level: Logger.Level, message: String, metadata: Logger.Metadata)] = []

    var logger: Logger {
        Logger(label: "imagery.server") { _ in Handler(log: self) }
    }

    func lines(withMetadata key: String, _ value: String) -> [String] {
        lock.withLock { lines.filter { $0.metadata[key] == .string(value) }.map(\.message) }
    }

    /// Waits for a line with `key` = `value` (the hang guard aside, for as long as it takes); returns the lines then.
    func waitForLines(withMetadata key: String, _ value: String) async throws -> [String] {
        try await waitUntil("a log line with \(key)=\(value)") { !lines(withMetadata: key, value).isEmpty }
        return lines(withMetadata: key, value)
    }

    fileprivate func append(_ level: Logger.Level, _ message: String, _ metadata: Logger.Metadata) {
        lock.withLock { lines.append((level, message, metadata)) }
    }

    struct Handler: LogHandler {
        let log: CapturedLog
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .info
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            log.append(event.level, "\(event.message)", metadata.merging(event.metadata ?? [:]) { $1 })
        }
    }
}
