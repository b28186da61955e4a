import Foundation
import Testing

@testable import ImageryServer

/// The lookup's race (the resolver's answer, the time limit, the caller's cancellation) under load: each
/// lookup gets exactly one of them, and none waits forever or resumes twice (the suite also runs under
/// ThreadSanitizer: `scripts/test-tsan`).
@Suite("Source guard: the lookup's time limit under load")
struct SourceGuardLookupTests {
    @Test func manyLookupsRacingTheirLimitEachGetOneAnswer() async throws {
        let address = try #require(IPAddress("8.8.8.8"))
        // Answers at once, or after a yield or two: some lookups win, some lose to a 1 ms limit.
        let sourceGuard = SourceGuard(
            allowedHosts: [], privateNetworkHosts: [], lookupTimeout: .milliseconds(1),
            resolver: { host, _ in
                for _ in 0..<(host.count % 3) { await Task.yield() }
                return [address]
            })
        let outcomes = await withTaskGroup(of: String.self) { group in
            for index in 0..<400 {
                group.addTask {
                    do {
                        let addresses = try await sourceGuard.lookUp(String(repeating: "a", count: index % 7), port: 80)
                        return addresses == [address] ? "answer" : "wrong"
                    } catch let error as ServerError {
                        return error.code
                    } catch {
                        return "other"
                    }
                }
            }
            var outcomes: [String: Int] = [:]
            for await outcome in group { outcomes[outcome, default: 0] += 1 }
            return outcomes
        }
        #expect(outcomes.values.reduce(0, +) == 400)
        #expect(Set(outcomes.keys).isSubset(of: ["answer", "origin_timeout"]), "\(outcomes)")
    }

    @Test func aCancelledLookupEndsAtOnce() async throws {
        let sourceGuard = SourceGuard(
            allowedHosts: [], privateNetworkHosts: [], lookupTimeout: .seconds(3600),
            resolver: { _, _ in
                try await Task.sleep(for: .seconds(3600))
                return []
            })
        let lookup = Task { try await sourceGuard.lookUp("example.com", port: 80) }
        lookup.cancel()
        await #expect(throws: CancellationError.self) { try await lookup.value }
    }
}
