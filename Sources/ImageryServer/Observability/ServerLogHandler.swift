import Foundation
import Logging
import NIOCore
import NIOPosix

/// A swift-log handler for `imagery serve`'s standard output, built for a line per request:
/// `2026-11-21T10:40:35Z info imagery.server: request method=GET path=/image status=200 ...`.
///
/// Each line goes out whole in one `write(2)` (no lock, since one write of a line is never
/// interleaved with another): at once from any thread but the server's event loops; on an event
/// loop, with the other lines of the loop's turn (`LineBatch`: one write for the requests a turn
/// answers; the log line of a hit answered on the loop cost 12% of it, half of that the write).
/// The timestamp (UTC) is formatted once per second, and metadata is written sorted by key.
/// Measured with the proxy's warm benchmark, swift-log's `StreamLogHandler` cost about 15%
/// of the throughput (a `strftime` and a time-zone file check per line, dictionary merging);
/// this handler costs about a third of that.
///
/// In ``Format/json`` each line is one JSON object instead, for log collectors:
/// `{"time":"2026-11-21T10:40:35Z","level":"info","label":"imagery.server","message":"request","method":"GET","status":200,...}`
/// (a metadata value that is a plain decimal number is written as a number).
public struct ServerLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    public var metadataProvider: Logger.MetadataProvider?
    private let label: String
    private let descriptor: Int32
    private let format: Format

    /// How a line is written.
    public enum Format: String, Sendable, CaseIterable {
        /// `TIME LEVEL LABEL: MESSAGE key=value ...`
        case text
        /// One JSON object a line.
        case json
    }

    /// A handler writing to standard output, for `LoggingSystem.bootstrap`.
    public static func standardOutput(label: String, metadataProvider: Logger.MetadataProvider?, format: Format = .text)
        -> ServerLogHandler
    {
        ServerLogHandler(label: label, descriptor: STDOUT_FILENO, metadataProvider: metadataProvider, format: format)
    }

    init(label: String, descriptor: Int32, metadataProvider: Logger.MetadataProvider?, format: Format = .text) {
        self.label = label
        self.descriptor = descriptor
        self.metadataProvider = metadataProvider
        self.format = format
    }

    /// The same handler writing to another open file descriptor (which it does not close).
    public func writing(to descriptor: Int32) -> ServerLogHandler {
        var handler = ServerLogHandler(
            label: label, descriptor: descriptor, metadataProvider: metadataProvider, format: format)
        handler.metadata = metadata
        handler.logLevel = logLevel
        return handler
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        // The handler's, the provider's, then the event's metadata, a later key replacing an earlier
        // one, kept sorted by key as they are added: a few fields a line, so an insertion into a
        // small array of a concrete type is cheapest (no dictionary merging, no generic sort of tuples).
        var fields: [Field] = []
        fields.reserveCapacity(metadata.count + (event.metadata?.count ?? 0))
        for (key, value) in metadata { Self.insert(Field(key: key, value: value), into: &fields) }
        if let provided = metadataProvider?.get() {
            for (key, value) in provided { Self.insert(Field(key: key, value: value), into: &fields) }
        }
        if let explicit = event.metadata {
            for (key, value) in explicit { Self.insert(Field(key: key, value: value), into: &fields) }
        }
        var bytes = format == .json ? jsonLine(event, fields) : textLine(event, fields)
        emit(&bytes)
    }

    /// A request's line (`RequestObservation`): its fields, already in key order.
    package struct RequestLine {
        let bytes: String
        /// `hb.request.id`; `nil`: the handler's metadata has it (a route's logger).
        let requestID: String?
        let method: String
        let milliseconds: String
        let path: String
        let status: String

        package init(
            bytes: String, requestID: String?, method: String, milliseconds: String, path: String, status: String
        ) {
            (self.bytes, self.requestID, self.method, self.milliseconds, self.path, self.status) = (
                bytes, requestID, method, milliseconds, path, status
            )
        }
    }

    /// Writes `request`'s line as ``log(event:)`` writes an `info` `request` event with those fields,
    /// without swift-log's metadata dictionary (the line of a hit cost 11% of it so); `false` when the
    /// line needs the general way (metadata beyond `hb.request.id`, a metadata provider) and nothing was written.
    package func logRequest(_ request: RequestLine) -> Bool {
        guard metadataProvider == nil else { return false }
        var requestID = request.requestID
        for (key, value) in metadata {
            guard key == "hb.request.id" else { return false }
            if requestID == nil { requestID = value.description }
        }
        guard logLevel <= .info else { return true }
        if format == .text {
            // Written as bytes where they go (an event loop's batch), not as a string first.
            if MultiThreadedEventLoopGroup.currentEventLoop != nil {
                LineBatch.append(to: descriptor) { appendTextLine(request, requestID: requestID, to: &$0) }
            } else {
                var bytes: [UInt8] = []
                appendTextLine(request, requestID: requestID, to: &bytes)
                bytes.withUnsafeBufferPointer { Self.write($0, to: descriptor) }
            }
            return true
        }
        let fields: [(String, String)] = [
            ("bytes", request.bytes), ("hb.request.id", requestID ?? ""), ("method", request.method),
            ("ms", request.milliseconds),
            ("path", request.path), ("status", request.status),
        ]
        var line = "{\"time\":\""
        line.reserveCapacity(256)
        line += Self.timestamps.current()
        line += "\",\"level\":\"info\",\"label\":"
        Self.appendJSONString(label, to: &line)
        line += ",\"message\":\"request\""
        for (key, value) in fields where key != "hb.request.id" || requestID != nil {
            line += ",\""
            line += key
            line += "\":"
            if Self.isJSONNumber(value) { line += value } else { Self.appendJSONString(value, to: &line) }
        }
        line += "}\n"
        emit(&line)
        return true
    }

    /// `request`'s line in ``Format/text``, as ``textLine(_:_:)`` writes it.
    private func appendTextLine(_ request: RequestLine, requestID: String?, to bytes: inout [UInt8]) {
        bytes.append(contentsOf: Self.timestamps.current().utf8)
        bytes.append(contentsOf: " info ".utf8)
        bytes.append(contentsOf: label.utf8)
        bytes.append(contentsOf: ": request bytes=".utf8)
        bytes.append(contentsOf: request.bytes.utf8)
        if let requestID {
            bytes.append(contentsOf: " hb.request.id=".utf8)
            bytes.append(contentsOf: requestID.utf8)
        }
        bytes.append(contentsOf: " method=".utf8)
        bytes.append(contentsOf: request.method.utf8)
        bytes.append(contentsOf: " ms=".utf8)
        bytes.append(contentsOf: request.milliseconds.utf8)
        bytes.append(contentsOf: " path=".utf8)
        bytes.append(contentsOf: request.path.utf8)
        bytes.append(contentsOf: " status=".utf8)
        bytes.append(contentsOf: request.status.utf8)
        bytes.append(UInt8(ascii: "\n"))
    }

    /// One metadata field of a line.
    struct Field {
        let key: String
        let value: Logger.MetadataValue
    }

    /// Inserts `field` into `fields` (sorted by key), replacing a field of the same key.
    static func insert(_ field: Field, into fields: inout [Field]) {
        var index = fields.endIndex
        while index > fields.startIndex, field.key < fields[index - 1].key { index -= 1 }
        if index > fields.startIndex, fields[index - 1].key == field.key {
            fields[index - 1] = field
        } else {
            fields.insert(field, at: index)
        }
    }

    private func textLine(_ event: LogEvent, _ fields: [Field]) -> String {
        var line = ""
        line.reserveCapacity(256)  // a request's line, grown once at most
        line += Self.timestamps.current()
        line += " "
        line += event.level.rawValue
        line += " "
        line += label
        line += ": "
        line += event.message.description
        for field in fields {
            line += " "
            line += field.key
            line += "="
            line += field.value.description
        }
        line += "\n"
        return line
    }

    private func jsonLine(_ event: LogEvent, _ fields: [Field]) -> String {
        var line = "{\"time\":\""
        line += Self.timestamps.current()
        line += "\",\"level\":\""
        line += event.level.rawValue
        line += "\",\"label\":"
        Self.appendJSONString(label, to: &line)
        line += ",\"message\":"
        Self.appendJSONString(event.message.description, to: &line)
        for field in fields where !["time", "level", "label", "message"].contains(field.key) {
            line += ","
            Self.appendJSONString(field.key, to: &line)
            line += ":"
            let text = field.value.description
            if Self.isJSONNumber(text) { line += text } else { Self.appendJSONString(text, to: &line) }
        }
        line += "}\n"
        return line
    }

    /// `text` as a JSON string literal: quotes, backslashes and control characters escaped.
    static func appendJSONString(_ text: String, to line: inout String) {
        line += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": line += "\\\""
            case "\\": line += "\\\\"
            case "\n": line += "\\n"
            case "\r": line += "\\r"
            case "\t": line += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                let hex = String(scalar.value, radix: 16)
                line += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: line.unicodeScalars.append(scalar)
            }
        }
        line += "\""
    }

    /// Whether `text` is a JSON number written plainly: `-?(0|[1-9][0-9]*)(\.[0-9]+)?`.
    static func isJSONNumber(_ text: String) -> Bool {
        var bytes = Substring(text).utf8[...]
        if bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
        let isDigit = { (byte: UInt8) in (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
        let integer = bytes.prefix(while: isDigit)
        guard !integer.isEmpty, integer.count == 1 || integer.first != UInt8(ascii: "0") else { return false }
        let rest = bytes.dropFirst(integer.count)
        if rest.isEmpty { return true }
        guard rest.first == UInt8(ascii: "."), rest.count > 1 else { return false }
        return rest.dropFirst().allSatisfy(isDigit)
    }

    /// One `write(2)` of the line (more only if the kernel takes part of it); on an event loop, one
    /// `write(2)` of the lines of the loop's turn (`LineBatch`).
    private func emit(_ line: inout String) {
        if MultiThreadedEventLoopGroup.currentEventLoop != nil {
            LineBatch.append(line, to: descriptor)
            return
        }
        line.withUTF8 { Self.write($0, to: descriptor) }
    }

    /// Writes all of `bytes` (standard output gone: dropped rather than failing the request).
    static func write(_ bytes: UnsafeBufferPointer<UInt8>, to descriptor: Int32) {
        var offset = 0
        while offset < bytes.count {
            let written = Foundation.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written <= 0 {
                if written < 0, errno == EINTR { continue }
                return
            }
            offset += written
        }
    }

    /// `YYYY-MM-DDTHH:MM:SSZ`, formatted when the second changes.
    private static let timestamps = TimestampCache()

    private final class TimestampCache: @unchecked Sendable {
        // @unchecked: `second` and `text` are guarded by `lock`.
        private let lock = NSLock()
        private var second = 0
        private var text = ""

        func current() -> String {
            var now = time(nil)
            return lock.withLock {
                if now != second {
                    var parts = tm()
                    gmtime_r(&now, &parts)
                    text = Self.format(parts)
                    second = now
                }
                return text
            }
        }

        private static func format(_ t: tm) -> String {
            func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
            return
                "\(t.tm_year + 1900)-\(two(t.tm_mon + 1))-\(two(t.tm_mday))T\(two(t.tm_hour)):\(two(t.tm_min)):\(two(t.tm_sec))Z"
        }
    }
}
