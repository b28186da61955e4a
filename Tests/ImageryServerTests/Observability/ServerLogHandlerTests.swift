import Foundation
import Hummingbird
import HummingbirdTesting
import Imagery
import ImageryServer
import ImageryTestSupport
import ImageryVips
import Logging
import Testing

@Suite("Server log handler")
struct ServerLogHandlerTests {
    @Test func writesOneWholeLinePerEventWithSortedMetadata() throws {
        var descriptors: [Int32] = [0, 0]
        #expect(pipe(&descriptors) == 0)
        defer { close(descriptors[0]) }
        var logger = Logger(label: "imagery.test") { _ in
            ServerLogHandler.standardOutput(label: "imagery.test", metadataProvider: nil).writing(to: descriptors[1])
        }
        logger[metadataKey: "hb.request.id"] = "7"
        logger.info("request", metadata: ["status": "200", "method": "GET"])
        logger.debug("not at the default level")
        close(descriptors[1])
        let output = try #require(
            String(data: FileHandle(fileDescriptor: descriptors[0]).readDataToEndOfFile(), encoding: .utf8))
        let lines = output.split(separator: "\n")
        #expect(lines.count == 1)
        #expect(
            lines.first?.wholeMatch(
                of:
                    /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ info imagery\.test: request hb\.request\.id=7 method=GET status=200/
            ) != nil, "\(output)")
    }

    /// A request's line written straight from its fields is the line swift-log's event makes, in both formats.
    @Test func aRequestLineIsTheEventsLine() throws {
        for format in ServerLogHandler.Format.allCases {
            for requestID in ["8857e393a5080a68", "12345", nil] as [String?] {
                var descriptors: [Int32] = [0, 0]
                #expect(pipe(&descriptors) == 0)
                defer { close(descriptors[0]) }
                var handler = ServerLogHandler.standardOutput(
                    label: "imagery.test", metadataProvider: nil, format: format
                ).writing(to: descriptors[1])
                var metadata: Logger.Metadata = [
                    "method": "HEAD", "path": "/a \"b\"\u{1}", "status": "304", "ms": "12.5", "bytes": "0",
                ]
                if let requestID {
                    metadata["hb.request.id"] = .string(requestID)
                } else {
                    handler.metadata["hb.request.id"] = "99"
                }
                let line = ServerLogHandler.RequestLine(
                    bytes: "0", requestID: requestID, method: "HEAD", milliseconds: "12.5", path: "/a \"b\"\u{1}",
                    status: "304"
                )
                for _ in 0..<2 {  // the second pair if the first straddled a second
                    Logger(label: "imagery.test") { _ in handler }.info("request", metadata: metadata)
                    #expect(handler.logRequest(line))
                }
                close(descriptors[1])
                let output = try #require(
                    String(data: FileHandle(fileDescriptor: descriptors[0]).readDataToEndOfFile(), encoding: .utf8))
                let lines = output.split(separator: "\n")
                try #require(lines.count == 4)
                #expect(lines[0] == lines[1] || lines[2] == lines[3], "\(output)")
            }
        }
        var handler = ServerLogHandler.standardOutput(label: "imagery.test", metadataProvider: nil)
        handler.metadata["other"] = "1"
        #expect(
            !handler.logRequest(
                .init(bytes: "0", requestID: nil, method: "GET", milliseconds: "0.1", path: "/", status: "200")))
    }

    @Test func anEventsMetadataReplacesTheLoggersAndThenTheProvidersForTheSameKey() throws {
        var descriptors: [Int32] = [0, 0]
        #expect(pipe(&descriptors) == 0)
        defer { close(descriptors[0]) }
        let provider = Logger.MetadataProvider { ["b": "provided", "c": "provided"] }
        var logger = Logger(label: "imagery.test") { _ in
            ServerLogHandler.standardOutput(label: "imagery.test", metadataProvider: provider).writing(
                to: descriptors[1])
        }
        logger[metadataKey: "a"] = "logger"
        logger[metadataKey: "b"] = "logger"
        logger[metadataKey: "d"] = "logger"
        logger.info("event", metadata: ["c": "event", "d": "event", "e": "event"])
        close(descriptors[1])
        let output = try #require(
            String(data: FileHandle(fileDescriptor: descriptors[0]).readDataToEndOfFile(), encoding: .utf8))
        #expect(output.hasSuffix(" event a=logger b=provided c=event d=event e=event\n"), "\(output)")
    }
}
