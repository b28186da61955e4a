import Foundation
import Hummingbird
import HummingbirdTesting
import ImageryServer
import ImageryTestSupport
import Testing

/// The proxy must not become a relay into private networks.
@Suite("Image proxy source guard")
struct SourceGuardTests {
    /// Loopback in its spellings (the private ranges and their IPv6 forms: ``PrivateAddressTests``, in a
    /// network namespace of loopback alone).
    @Test(arguments: [
        "http://127.0.0.1:1/a.jpg", "http://localhost:1/a.jpg", "http://[::1]:1/a.jpg",
        "http://[::ffff:127.0.0.1]/a.jpg", "http://2130706433/a.jpg", "http://0.0.0.0/a.jpg",
    ])
    func loopbackSourcesAreRefused(source: String) async throws {
        // No host is allowed to be private here, not even the test origin.
        try await withServer(configure: { $0.origins.privateNetworkHosts = [] }) { client, _ in
            let uri = "/image?url=" + (source.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
            try await client.execute(uri: uri, method: .get) { response in
                #expect(response.status == .forbidden, "\(source): \(String(buffer: response.body))")
                #expect(response.errorBody?.error == "forbidden_source")
            }
        }
    }

    @Test func anAllowedHostRedirectingToAPrivateAddressIsRefused() async throws {
        let origin = try await TestOrigin.start { request in
            // 127.0.0.1 is allowed; "localhost" (which resolves to it) is not.
            TestOrigin.Response(
                status: 302, headers: [("Location", "http://localhost:\(request.query["port"] ?? "1")/rocket.jpg")])
        }
        try await withServer(origin: origin) { client, origin in
            try await client.execute(uri: imageURI(origin, "redirect?port=\(origin.port)", "w=64"), method: .get) {
                response in
                #expect(response.status == .forbidden)
                #expect(response.errorBody?.message.contains("localhost") == true)
            }
            #expect(origin.requestCount == 1)  // the redirect was never followed
        }
    }

    @Test func anAllowedNameRedirectingToTheLoopbackAddressIsRefused() async throws {
        let origin = try await TestOrigin.start { request in
            TestOrigin.Response(
                status: 302, headers: [("Location", "http://127.0.0.1:\(request.query["port"] ?? "1")/rocket.jpg")])
        }
        // "localhost" is allowed into private networks; the literal 127.0.0.1 is not.
        try await withServer(origin: origin, configure: { $0.origins.privateNetworkHosts = ["localhost"] }) {
            client, origin in
            let source = "http://localhost:\(origin.port)/redirect?port=\(origin.port)"
            let uri = "/image?w=64&url=" + (source.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
            try await client.execute(uri: uri, method: .get) { response in
                #expect(response.status == .forbidden, "\(String(buffer: response.body))")
                #expect(response.errorBody?.message.contains("127.0.0.1") == true)
            }
            #expect(origin.requestCount == 1)  // the redirect was never followed
        }
    }

    /// A name whose lookup does not answer (a scanner's bare word, a resolver that drops queries) is
    /// answered within the origin's time limit, not after the resolver's own retries.
    @Test func aLookupThatDoesNotAnswerEndsWithTheOriginsTimeLimit() async throws {
        try await withServer(configure: {
            $0.origins.timeout = .milliseconds(100)
            $0.origins.resolver = { _, _ in
                try await Task.sleep(for: .seconds(3600))  // never answers; cancelled when abandoned
                return []
            }
        }) { client, origin in
            let uri =
                "/image?w=8&url="
                + ("http://xxxx/a.jpg".addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
            try await client.execute(uri: uri, method: .get) { response in
                #expect(response.status == .gatewayTimeout, "\(String(buffer: response.body))")
                #expect(response.errorBody?.error == "origin_timeout")
                #expect(response.errorBody?.message.contains("xxxx") == true)
            }
            #expect(origin.requestCount == 0)
        }
    }

    @Test func aNameThatDoesNotResolveIsA502() async throws {
        try await withServer(configure: { $0.origins.resolver = { _, _ in [] } }) { client, _ in
            let uri =
                "/image?w=8&url="
                + ("http://xxxx/a.jpg".addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
            try await client.execute(uri: uri, method: .get) { response in
                #expect(response.status == .badGateway)
                #expect(response.errorBody?.error == "origin_unreachable")
            }
        }
    }

    @Test func theAllowListRefusesOtherHosts() async throws {
        try await withServer(configure: { $0.origins.allowedHosts = ["images.example.com", "*.cdn.example.org"] }) {
            client, origin in
            try await client.execute(uri: imageURI(origin, "rocket.jpg", "w=64"), method: .get) { response in
                #expect(response.status == .forbidden)
                #expect(response.errorBody?.message.contains("allow-list") == true)
            }
            #expect(origin.requestCount == 0)
        }
    }
}

@Suite("Image proxy signatures")
struct SignatureTests {
    @Test func withAKeyOnlySignedQueriesAreServed() async throws {
        let signer = RequestSigner(key: "test-key")
        try await withServer(configure: { $0.requests.signingKey = "test-key" }) { client, origin in
            let query = String(imageURI(origin, "rocket.jpg", "w=64").dropFirst("/image?".count))
            try await client.execute(uri: "/image?" + signer.sign(query: query), method: .get) { response in
                #expect(response.status == .ok)
            }
            try await client.execute(uri: "/image?" + query, method: .get) { response in
                #expect(response.status == .forbidden)
                #expect(response.errorBody?.error == "bad_signature")
            }
            // Signed for w=64, asked for w=65: refused.
            let tampered = signer.sign(query: query).replacingOccurrences(of: "w=64", with: "w=65")
            try await client.execute(uri: "/image?" + tampered, method: .get) { response in
                #expect(response.status == .forbidden)
            }
            let otherKey = RequestSigner(key: "other-key").sign(query: query)
            try await client.execute(uri: "/image?" + otherKey, method: .get) { response in
                #expect(response.status == .forbidden)
            }
            #expect(origin.requestCount == 1)
        }
    }

    @Test func signaturesRoundTripAndRejectGarbage() {
        let signer = RequestSigner(key: "k")
        #expect(signer.isValid(rawQuery: signer.sign(query: "url=a&w=1")))
        #expect(!signer.isValid(rawQuery: "url=a&w=1&sig=!!!"))
        #expect(!signer.isValid(rawQuery: "url=a&w=1"))
        #expect(!signer.isValid(rawQuery: ""))
    }
}

@Suite("Server configuration file")
struct ServerConfigurationFileTests {
    @Test func aFileOverridesTheDefaultsItNames() async throws {
        try await withTemporaryDirectory { directory in
            let file = directory.appendingPathComponent("imagery.json")
            try Data(
                #"{"port": 9000, "allowedHosts": ["images.example.com"], "originTimeoutSeconds": 2.5, "signingKey": "k"}"#
                    .utf8
            ).write(to: file)
            let configuration = try ServerConfiguration(contentsOf: file)
            #expect(configuration.listener.port == 9000)
            #expect(configuration.origins.allowedHosts == ["images.example.com"])
            #expect(configuration.origins.timeout == .milliseconds(2500))
            #expect(configuration.requests.signingKey == "k")
            #expect(configuration.listener.host == "127.0.0.1")  // untouched default
            #expect(configuration.limits.maximumSourcePixels == 100_000_000)
        }
    }

    @Test(arguments: [
        (
            #"{"admissionTimeoutSeconds": 1e300}"#,
            "limits.admissionTimeoutSeconds (admissionTimeoutSeconds, imagery.json)"
        ),
        (#"{"idleTimeoutSeconds": -1}"#, "listener.idleTimeoutSeconds (idleTimeoutSeconds, imagery.json)"),
        (#"{"requestTimeoutSeconds": 0}"#, "limits.requestTimeoutSeconds (requestTimeoutSeconds, imagery.json)"),
        (#"{"port": 70000}"#, "listener.port (port, imagery.json)"),
        (#"{"memoryLimit": 9223372036854775807}"#, "limits.memoryLimit (memoryLimit, imagery.json)"),
        (
            #"{"maximumInflightMemory": 600000000}"#,
            "limits.maximumInflightMemory (maximumInflightMemory, imagery.json)"
        ),
        (#"{"maximumHeaderBytes": 0}"#, "listener.maximumHeaderBytes (maximumHeaderBytes, imagery.json)"),
        (#"{"signingKey": ""}"#, "requests.signingKey (signingKey, imagery.json)"),
        (
            #"{"maximumConcurrentFetches": 0}"#,
            "origins.maximumConcurrentFetches (maximumConcurrentFetches, imagery.json)"
        ),
        (#"{"formatQualities": {"bmp": 50}}"#, "rendering.formatQualities (formatQualities, imagery.json): bmp"),
        (#"{"formatQualities": {"avif": 0}}"#, "rendering.formatQualities (formatQualities, imagery.json): avif"),
    ])
    func aValueTheServerCannotRunWithIsRefusedByName(json: String, key: String) throws {
        // Before validation, 1e300 seconds trapped converting to Duration; the rest started a broken server.
        // The message names the key, the name the file gave it, and the file.
        #expect(throws: ConfigurationFileError.self) {
            try ServerConfiguration(json: Data(json.utf8), name: "imagery.json")
        }
        do {
            _ = try ServerConfiguration(json: Data(json.utf8), name: "imagery.json")
        } catch {
            #expect("\(error)".hasPrefix(key), "\(error)")
        }
    }

    @Test func aBadFileIsAClearError() async throws {
        try await withTemporaryDirectory { directory in
            let file = directory.appendingPathComponent("bad.json")
            try Data(#"{"port": "eighty"}"#.utf8).write(to: file)
            #expect(throws: ConfigurationFileError.self) { try ServerConfiguration(contentsOf: file) }
            do {
                _ = try ServerConfiguration(contentsOf: file)
            } catch {
                #expect("\(error)".contains("port"))
            }
            #expect(throws: ConfigurationFileError.self) {
                try ServerConfiguration(contentsOf: directory.appendingPathComponent("missing.json"))
            }
        }
    }
}
