import Foundation
import Hummingbird
import HummingbirdTesting
import ImageryServer
import ImageryTestSupport
import Testing

/// The proxy must not become a relay into private networks.
@Suite("Image proxy source guard")
struct SourceGuardTests {
    @Test(arguments: [
        "http://127.0.0.1:1/a.jpg", "http://localhost:1/a.jpg", "http://[::1]:1/a.jpg", "http://10.1.2.3/a.jpg",
        "http://192.168.0.1/a.jpg", "http://172.16.5.4/a.jpg", "http://169.254.169.254/latest/meta-data",
        "http://100.64.0.1/a.jpg", "http://0.0.0.0/a.jpg", "http://224.0.0.1/a.jpg", "http://[fe80::1]/a.jpg",
        "http://[fd00::1]/a.jpg", "http://[::ffff:127.0.0.1]/a.jpg", "http://2130706433/a.jpg",
    ])
    func privateAndLoopbackSourcesAreRefused(source: String) async throws {
        // No host is allowed to be private here, not even the test origin.
        try await withServer(configure: { $0.privateNetworkHosts = [] }) { client, _ in
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
            TestOrigin.Response(status: 302, headers: [("Location", "http://localhost:\(request.query["port"] ?? "1")/rocket.jpg")])
        }
        try await withServer(origin: origin) { client, origin in
            try await client.execute(uri: imageURI(origin, "redirect?port=\(origin.port)", "w=64"), method: .get) { response in
                #expect(response.status == .forbidden)
                #expect(response.errorBody?.message.contains("localhost") == true)
            }
            #expect(origin.requestCount == 1)  // the redirect was never followed
        }
    }

    @Test func theAllowListRefusesOtherHosts() async throws {
        try await withServer(configure: { $0.allowedHosts = ["images.example.com", "*.cdn.example.org"] }) { client, origin in
            try await client.execute(uri: imageURI(origin, "rocket.jpg", "w=64"), method: .get) { response in
                #expect(response.status == .forbidden)
                #expect(response.errorBody?.message.contains("allow-list") == true)
            }
            #expect(origin.requestCount == 0)
        }
    }
}
