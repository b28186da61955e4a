import ArgumentParser
import Foundation
import Testing

@testable import ImageryCLI

/// `imagery health`, a container's health check: its URL, and its exit status against a port nothing
/// listens on (the live answer is proven by scripts/container-test against the running image).
@Suite struct HealthCommandTests {
    @Test func theURLFollowsServesPortSetting() throws {
        let health = try #require(try ImageryCommand.parseAsRoot(["health"]) as? HealthCommand)
        #expect(health.healthURL(environment: [:]).absoluteString == "http://127.0.0.1:8080/health")
        #expect(
            health.healthURL(environment: ["IMAGERY_PORT": "9000"]).absoluteString == "http://127.0.0.1:9000/health")
        #expect(
            health.healthURL(environment: ["IMAGERY_LISTENER_PORT": "9001"]).absoluteString
                == "http://127.0.0.1:9001/health")
        let other = try #require(
            try ImageryCommand.parseAsRoot(["health", "--url", "http://10.0.0.2:81/health"]) as? HealthCommand)
        #expect(other.healthURL(environment: ["IMAGERY_PORT": "9000"]).absoluteString == "http://10.0.0.2:81/health")
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
