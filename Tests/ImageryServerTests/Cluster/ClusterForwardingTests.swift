import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Imagery
import ImageryTestSupport
import ImageryVips
import NIOConcurrencyHelpers
import Testing

@testable import ImageryServer

/// nginx's ring as the instances compute it, and requests for another instance's source sent there.
@Suite("Cluster: the owner of a source")
struct ClusterForwardingTests {
    /// Owners computed by an independent implementation of nginx's ketama (Python's zlib.crc32 over
    /// `HOST \0 PORT` and the previous point, 160 points an instance, the first point at or after the key).
    @Test(arguments: [
        ("http://127.0.0.1:9000/v1/rocket.jpg", ["127.0.0.1:8083", "127.0.0.1:8082", "127.0.0.1:8081"]),
        ("http://example.com/a.jpg", ["127.0.0.1:8083", "127.0.0.1:8081", "127.0.0.1:8082"]),
        ("s3://bucket/key.png", ["127.0.0.1:8083", "127.0.0.1:8081", "127.0.0.1:8082"]),
        ("x", ["127.0.0.1:8081", "127.0.0.1:8082", "127.0.0.1:8083"]),
    ])
    func ringOrderIsNginxs(key: String, owners: [String]) {
        #expect(
            SourceRing(instances: ["127.0.0.1:8081", "127.0.0.1:8082", "127.0.0.1:8083"]).owners(of: key) == owners)
    }

    @Test func crc32IsZlibs() {
        #expect(
            CRC32.final(CRC32.update(CRC32.initial, Array("The quick brown fox jumps over the lazy dog".utf8)))
                == 0x414F_A339)
        #expect(SourceRing.hostAndPort("10.0.0.1:8080") == (Array("10.0.0.1".utf8), Array("8080".utf8)))
        #expect(SourceRing.hostAndPort("backend") == (Array("backend".utf8), []))
    }

    /// Five spellings of a source (native plain and percent-encoded, thumbor, imgproxy plain and
    /// base64) asked of an instance that does not own it: one origin fetch, by the owner, which does
    /// not send them on although its own ring names another owner (one hop). Then, with the owner
    /// gone, the instance serves such sources itself.
    @Test func everySpellingMeetsAtTheOwnerAndAFailedOwnerIsServedHere() async throws {
        try await withTemporaryDirectory { directory in
            let jpeg = try Data(contentsOf: Fixtures.directory.appendingPathComponent("rocket.jpg"))
            for index in 0..<64 { try jpeg.write(to: directory.appendingPathComponent("v\(index).jpg")) }
            let origin = try await TestOrigin.serving(directory: directory)
            let names = (0..<64).map { "v\($0).jpg" }
            // Test servers listen on ports of their own choosing: A's and B's own names are labels
            // on the ring (A's is never dialled); B's address, known once it listens, is dialled by A.
            let (a, bLabel) = ("127.0.0.1:1", "127.0.0.1:2")
            let ringOfB = SourceRing(instances: [a, bLabel])
            let cluster: @Sendable (inout ServerConfiguration, [String], String) -> Void = {
                configuration, instances, this in
                configuration.cluster.instances = instances
                configuration.cluster.selfAddress = this
            }
            let stopped = NIOLockedValueBox("")  // B's address, once it has stopped
            do {
                try await serve(.live, origin: origin, configure: { cluster(&$0, [a, bLabel], bLabel) }) { clientB in
                    let b = "127.0.0.1:\(try #require(clientB.port))"
                    let ringOfA = SourceRing(instances: [a, b])
                    // A source A's ring gives B and B's ring gives A: B must not send it back.
                    let source = try #require(
                        names.first {
                            ringOfA.owners(of: origin.url($0).absoluteString).first == b
                                && ringOfB.owners(of: origin.url($0).absoluteString).first == a
                        })
                    let ownedByA = try #require(
                        names.first { ringOfA.owners(of: origin.url($0).absoluteString).first == a })
                    try await serve(.live, origin: origin, configure: { cluster(&$0, [a, b], a) }) { clientA in
                        for uri in Self.spellings(of: origin.url(source)) {
                            let (status, _, body) = try await get(clientA, uri)
                            #expect(status == .ok, "\(uri): \(String(decoding: body.prefix(200), as: UTF8.self))")
                            let image = try VipsImageDecoder().decode(body, recipe: ImageRecipe())
                            #expect(image.width == 64, "\(uri)")
                        }
                        #expect(origin.requestCount(path: source) == 1, "one origin fetch for five spellings")
                        let countedA = try await metrics(clientA)
                        #expect(countedA[#"imagery_cluster_forwards_total{outcome="forwarded"}"#] == 5)
                        let countedB = try await metrics(clientB)
                        #expect(
                            countedB.keys.filter { $0.hasPrefix("imagery_cluster_forwards_total") }.isEmpty,
                            "a forwarded request is not sent on")
                        // A's own source: served by A, not forwarded.
                        #expect(try await get(clientA, imageURI(origin, ownedByA, "w=64")).status == .ok)
                        #expect(
                            try await metrics(clientA)[#"imagery_cluster_forwards_total{outcome="forwarded"}"#] == 5)
                    }
                    stopped.withLockedValue { $0 = b }
                }
                // B has stopped (nothing listens at its address): A serves B's sources itself, and
                // passes B over after the first failure (for 10 s of A's time, which stands still here:
                // however slow the machine, the other spellings come within it).
                let deadOwner = stopped.withLockedValue { $0 }
                let ringOfA = SourceRing(instances: [a, deadOwner])
                let source = try #require(
                    names.first {
                        ringOfA.owners(of: origin.url($0).absoluteString).first == deadOwner
                            && origin.requestCount(path: $0) == 0
                    })
                let time = stillTime()
                let configureA = { (configuration: inout ServerConfiguration) in
                    cluster(&configuration, [a, deadOwner], a)
                    configuration.time = time.source
                }
                try await serve(.live, origin: origin, configure: configureA) { clientA in
                    for uri in Self.spellings(of: origin.url(source)) {
                        let status = try await get(clientA, uri).status
                        #expect(status == .ok, "\(uri)")
                    }
                    #expect(origin.requestCount(path: source) == 1)
                    let failed = try await metrics(clientA)[#"imagery_cluster_forwards_total{outcome="owner_failed"}"#]
                    #expect(failed == 1)
                }
            } catch {
                try? await origin.shutdown()
                throw error
            }
            try await origin.shutdown()
        }
    }

    @Test func clusterSettingsAreChecked() {
        var configuration = ServerConfiguration()
        configuration.cluster.instances = ["127.0.0.1:8081", "127.0.0.1:8082"]
        #expect(throws: ConfigurationFileError.self) { try configuration.validate() }  // no clusterSelf
        configuration.cluster.selfAddress = "127.0.0.1:8083"
        #expect(throws: ConfigurationFileError.self) { try configuration.validate() }  // not among them
        configuration.cluster.selfAddress = "127.0.0.1:8082"
        #expect(throws: Never.self) { try configuration.validate() }
        configuration.cluster.instances.append("127.0.0.1")
        #expect(throws: ConfigurationFileError.self) { try configuration.validate() }  // no port
    }

    /// The native query plain and percent-encoded, thumbor's, imgproxy's plain and base64, all 64 px wide.
    static func spellings(of source: URL) -> [String] {
        let text = source.absoluteString
        let encoded = text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let base64 = Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        return [
            "/image?w=64&url=\(text)", "/image?w=64&url=\(encoded)",
            "/unsafe/64x0/\(text.replacingOccurrences(of: "http://", with: ""))",
            "/insecure/w:64/plain/\(text)", "/insecure/w:64/\(base64)",
        ]
    }
}
