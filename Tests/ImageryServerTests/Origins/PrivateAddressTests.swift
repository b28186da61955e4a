import Foundation
import Hummingbird
import HummingbirdTesting
import ImageryServer
import ImageryTestSupport
import Testing

/// The private-address rule on every spelling of an address: imgproxy's `privatenet` table (eef3b312,
/// its 4.0.12 fix for "CGNAT and IPv4 embedded in IPv6") and the forms it unwraps. These tests name other
/// hosts' addresses, so they run only in a network namespace with loopback alone
/// (`scripts/test-support/loopback-only`, a step of `scripts/test`): were the guard wrong, the
/// connection would fail there (502), never leave the machine, and never pass as a refusal (403).
@Suite("Private addresses, every spelling (loopback-only namespace)", .enabled(if: LoopbackOnlyNetwork.isActive))
struct PrivateAddressTests {
    /// imgproxy's rows that must be refused: private (RFC 1918, CGNAT, ULA), loopback, unspecified and
    /// link-local, bare or carried inside an IPv6 address.
    static let refused = [
        "10.0.0.1", "172.16.0.1", "192.168.1.1", "100.64.0.0", "100.64.0.1", "100.127.255.255", "fc00::1", "fd00::1",
        "::10.0.0.1", "::100.64.0.1", "::127.0.0.1", "::169.254.0.1", "2002:0a00:0001::", "2002:c0a8:0001::",
        "2002:6440:0001::", "64:ff9b::10.0.0.1", "64:ff9b::172.16.0.1", "64:ff9b::100.64.0.1",
        "127.0.0.1", "127.0.0.254", "0.0.0.0", "::1", "::", "169.254.0.1", "169.254.169.254", "fe80::1",
        // NAT64 local use (64:ff9b:1::/48, RFC 6052's layout: 10.0.0.1 and 192.168.1.1)
        "64:ff9b:1:a00:0:100::", "64:ff9b:1:c0a8:1:100::",
        // imgproxy's own rows for it, which spell the prefix 64ff:9b01::: outside global unicast, refused too
        "64ff:9b01:0:a00:0:100::", "64ff:9b01:0:c0a8:1:100::",
        // Teredo, the client's address inverted (10.0.0.1, 192.168.0.1, 100.64.0.1)
        "2001::f5ff:fffe", "2001:0:4136:e378:8000:63bf:3f57:fefe", "2001::9bbf:fffe",
        // ISATAP with a public prefix (10.0.0.1, 192.168.1.1)
        "2600::5efe:a00:1", "2600::200:5efe:c0a8:101",
        // IPv4-mapped
        "::ffff:10.0.0.1", "::ffff:127.0.0.1",
    ]

    /// imgproxy's rows that are public, bare or inside an IPv6 address: not refused by the guard.
    static let allowed = [
        "100.63.255.255", "100.128.0.0", "8.8.8.8", "1.1.1.1", "2001:4860::1", "2001:4860::8888",
        "2001:4860:4860::8888", "::8.8.8.8", "2002:0808:0808::", "2002:0101:0101::", "64:ff9b::8.8.8.8",
        "2001::f7f7:f7f7",
    ]

    @Test(arguments: refused)
    func theRowsImgproxyRefusesAreNotPublic(literal: String) throws {
        let address = try #require(IPAddress(literal))
        #expect(!address.isPublic, "\(literal)")
    }

    @Test(arguments: allowed)
    func theRowsImgproxyAllowsArePublic(literal: String) throws {
        let address = try #require(IPAddress(literal))
        #expect(address.isPublic, "\(literal)")
    }

    /// imgproxy's `Unwrap` rows: the IPv4 address each IPv6 form carries.
    @Test(arguments: [
        ("::10.0.0.1", "10.0.0.1"), ("::8.8.8.8", "8.8.8.8"), ("::127.0.0.1", "127.0.0.1"),
        ("2002:0a00:0001::", "10.0.0.1"), ("2002:0808:0808::", "8.8.8.8"), ("2002:6440:0001::", "100.64.0.1"),
        ("64:ff9b::10.0.0.1", "10.0.0.1"), ("64:ff9b::8.8.8.8", "8.8.8.8"), ("64:ff9b::100.64.0.1", "100.64.0.1"),
        ("64:ff9b:1:a00:0:100::", "10.0.0.1"), ("64:ff9b:1:c0a8:1:100::", "192.168.1.1"),
        ("2001::f5ff:fffe", "10.0.0.1"), ("2001::f7f7:f7f7", "8.8.8.8"),
        ("2001:db8::5efe:a00:1", "10.0.0.1"), ("2001:db8::200:5efe:c0a8:101", "192.168.1.1"),
    ])
    func theIPv4AddressInsideEachForm(literal: String, embedded: String) throws {
        let address = try #require(IPAddress(literal))
        let expected = try #require(IPAddress(embedded))
        #expect(address.embeddedV4.map(IPAddress.v4) == expected, "\(literal)")
    }

    @Test(arguments: ["10.0.0.1", "8.8.8.8", "2001:4860:4860::8888", "fc00::1"])
    func formsThatCarryNoIPv4AddressAreNotUnwrapped(literal: String) throws {
        #expect(try #require(IPAddress(literal)).embeddedV4 == nil)
    }

    /// Each refused row as a source URL's literal host, through the whole server: 403 from the guard.
    @Test(arguments: refused)
    func aSourceAtARefusedLiteralIsRefusedBeforeAnyConnection(literal: String) async throws {
        try await withServer(configure: { $0.origins.privateNetworkHosts = [] }) { client, origin in
            let host = literal.contains(":") ? "[\(literal)]" : literal
            let source = "http://\(host)/a.jpg"
            let uri = "/image?w=8&url=" + (source.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
            try await client.execute(uri: uri, method: .get) { response in
                #expect(response.status == .forbidden, "\(source): \(String(buffer: response.body))")
                #expect(response.errorBody?.error == "forbidden_source", "\(source)")
            }
            #expect(origin.requestCount == 0)
        }
    }

    /// A name that resolves to a refused row (the resolver is the guard's, faked): refused, whichever of
    /// its addresses is the private one.
    @Test(arguments: refused)
    func aNameResolvingToARefusedAddressIsRefused(literal: String) async throws {
        let address = try #require(IPAddress(literal))
        let public8 = try #require(IPAddress("8.8.8.8"))
        let sourceGuard = SourceGuard(
            allowedHosts: [], privateNetworkHosts: [], resolver: { _, _ in [public8, address] })
        do {
            _ = try await sourceGuard.check(URL(string: "http://images.example.com/a.jpg")!)
            Issue.record("\(literal) was not refused")
        } catch let error as ServerError {
            #expect(error.code == "forbidden_source")
            #expect(error.message.contains("non-public"))
        }
    }

    @Test(arguments: allowed)
    func aNameResolvingToAPublicRowIsCheckedAndPinned(literal: String) async throws {
        let address = try #require(IPAddress(literal))
        let sourceGuard = SourceGuard(allowedHosts: [], privateNetworkHosts: [], resolver: { _, _ in [address] })
        let pinned = try await sourceGuard.check(URL(string: "http://images.example.com/a.jpg")!)
        #expect(pinned == address.description)
    }
}

/// The step that runs ``PrivateAddressTests`` says it expects a loopback-only namespace
/// (`IMAGERY_LOOPBACK_ONLY=1`): there, their suite must not be skipped for want of one.
@Suite("Private addresses: the namespace they need")
struct LoopbackOnlyNamespaceTests {
    @Test(.enabled(if: ProcessInfo.processInfo.environment["IMAGERY_LOOPBACK_ONLY"] == "1"))
    func theStepThatRunsThemRunsInALoopbackOnlyNamespace() {
        #expect(LoopbackOnlyNetwork.isActive, "interfaces: \(LoopbackOnlyNetwork.interfaces)")
    }
}
