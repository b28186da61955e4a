import ArgumentParser
import Foundation
import Testing

@testable import ImageryCLI

/// `imagery health`, a container's health check: its URL, and its exit status against a port nothing
/// listens on (the live answer is proven by scripts/container-test against the running image).
@Suite struct HealthCommandTests {
    @Test func theURLFollowsServesPortSetting() throws {
        let health = try #require(try ImageryCommand.parseAsRoot(["health"]) as? HealthCommand)
        #expect(try health.healthURL(environment: [:]).absoluteString == "http://127.0.0.1:8080/health")
        #expect(
            try health.healthURL(environment: ["IMAGERY_PORT": "9000"]).absoluteString
                == "http://127.0.0.1:9000/health")
        #expect(
            try health.healthURL(environment: ["IMAGERY_LISTENER_PORT": "9001"]).absoluteString
                == "http://127.0.0.1:9001/health")
        let other = try #require(
            try ImageryCommand.parseAsRoot(["health", "--url", "http://10.0.0.2:81/health"]) as? HealthCommand)
        #expect(
            try other.healthURL(environment: ["IMAGERY_PORT": "9000"]).absoluteString == "http://10.0.0.2:81/health")
    }

    /// The address as serve reads it: the `--defaults` file (the container image's), imgproxy's
    /// IMGPROXY_BIND and IMAGERY_CONFIG's file over it, IMAGERY_* over all; every interface asked on the loopback.
    @Test func theAddressIsReadAsServeReadsIt() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("health-\(UUID().uuidString).yaml")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data("listener:\n  host: 0.0.0.0\n  port: 8090\n".utf8).write(to: file)
        let health = try #require(
            try ImageryCommand.parseAsRoot(["health", "--defaults", file.path]) as? HealthCommand)
        #expect(try health.healthURL(environment: [:]).absoluteString == "http://127.0.0.1:8090/health")
        #expect(
            try health.healthURL(environment: ["IMGPROXY_BIND": ":9002"]).absoluteString
                == "http://127.0.0.1:9002/health")
        #expect(
            try health.healthURL(environment: ["IMGPROXY_BIND": "127.0.0.2:9003", "IMAGERY_PORT": "9004"])
                .absoluteString == "http://127.0.0.2:9004/health")
        #expect(
            try health.healthURL(environment: ["IMAGERY_HOST": "::"]).absoluteString == "http://[::1]:8090/health")
        let config = FileManager.default.temporaryDirectory.appendingPathComponent("health-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: config) }
        try Data(#"{"listener": {"port": 9005}}"#.utf8).write(to: config)
        #expect(
            try health.healthURL(environment: ["IMAGERY_CONFIG": config.path]).absoluteString
                == "http://127.0.0.1:9005/health")
        #expect(throws: (any Error).self) { try health.healthURL(environment: ["IMAGERY_PORT": "notaport"]) }
    }

    @Test(arguments: [["health", "--url", "ftp://x/health"], ["health", "--timeout", "0"]])
    func aWrongArgumentIsTold(_ arguments: [String]) {
        #expect(throws: (any Error).self) { try ImageryCommand.parseAsRoot(arguments) }
    }

    @Test func nothingListeningIsExitCode1() async throws {
        // Port 9 (discard) on the loopback: nothing listens there in a test sandbox; refused at once.
        var health = try #require(
            try ImageryCommand.parseAsRoot(["health", "--url", "http://127.0.0.1:9/health"]) as? HealthCommand)
        health.timeout = 5
        await #expect(throws: ExitCode(1)) { try await health.run() }
    }
}
