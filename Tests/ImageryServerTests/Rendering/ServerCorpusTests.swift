import Foundation
import Hummingbird
import HummingbirdTesting
import ImageryServer
import ImageryTestSupport
import Testing

/// Every image of ../shared/corpus through the proxy in its strict decoding mode:
/// none may be refused (strictness must not cost real images).
@Suite("Image proxy with the corpus", .enabled(if: Fixtures.corpus != nil))
struct ServerCorpusTests {
    @Test func everyCorpusImageIsServedAsAThumbnail() async throws {
        let directory = try #require(Fixtures.corpus)
        let files = Fixtures.files(in: directory).map(\.lastPathComponent)
        let origin = try await TestOrigin.serving(directory: directory)
        // What is tested is decoding, not admission: on a machine loaded by the rest of the suite a
        // large source's waits once passed the default 5 s and it was answered 503 (a hang guard now).
        try await withServer(origin: origin, configure: { $0.limits.admissionTimeout = hangGuard }) { client, origin in
            var refused: [String] = []
            for name in files {
                try await client.execute(uri: imageURI(origin, name, "w=256"), method: .get) { response in
                    if response.status != .ok {
                        refused.append("\(name): \(response.status.code) \(String(buffer: response.body))")
                    }
                }
            }
            #expect(refused.isEmpty, "\(refused)")
            #expect(files.count > 40)
        }
    }
}

/// Every hostile file of ../shared/corpus-bad through the proxy: a clear status for each,
/// and the process's memory stays bounded (the bombs are refused from their headers).
@Suite("Image proxy with hostile sources", .enabled(if: Fixtures.corpusBad != nil))
struct ServerHostileSourceTests {
    static func residentBytes() -> Int {
        let statm = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8)) ?? ""
        let pages = statm.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    @Test func everyBadCorpusFileGetsAClearStatusAndMemoryStaysBounded() async throws {
        let directory = try #require(Fixtures.corpusBad)
        let files = Fixtures.files(in: directory).map(\.lastPathComponent)
        try await withServer(origin: try await TestOrigin.serving(directory: directory)) { client, origin in
            let before = Self.residentBytes()
            var statuses: [String: Int] = [:]
            for name in files {
                let status = try await client.execute(uri: imageURI(origin, name, "w=128&h=128"), method: .get) {
                    $0.status.code
                }
                statuses[name] = status
                #expect([200, 413, 415, 422].contains(status), "\(name): \(status)")
            }
            let grown = Self.residentBytes() - before
            #expect(statuses["bomb-full-100000x100000-1bit.png"] == 413)
            #expect(statuses["bomb-header-100000x100000-rgba.png"] == 413)
            #expect(statuses["bomb-header-65500x65500.jpg"] == 413)
            #expect(statuses["text-named.jpg"] == 415)
            #expect(statuses["png-named.jpg"] == 200)
            for name in [
                "truncated-half.jpg", "truncated-half.png", "truncated-header.jpg", "corrupt-dht.jpg",
                "corrupt-scan.jpg", "bad-crc.png",
            ] {
                #expect(statuses[name] == 422, "\(name)")
            }
            // Decoding any bomb would take 1.25 to 40 GB. Resident memory is the whole process's, and
            // other suites run meanwhile (alone this test grows by ~30 MiB), so the bound is 1 GiB.
            #expect(grown < 1 << 30, "resident memory grew by \(grown >> 20) MiB")
            print("corpus-bad through the proxy: \(statuses.sorted { $0.key < $1.key }), resident +\(grown >> 20) MiB")
        }
    }
}
