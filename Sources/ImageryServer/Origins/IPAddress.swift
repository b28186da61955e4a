import Foundation

/// An IPv4 or IPv6 address, and whether it is on the public internet.
package enum IPAddress: Sendable, Hashable, CustomStringConvertible {
    case v4(UInt32)
    case v6([UInt8])

    init?(_ socketAddress: UnsafeMutablePointer<sockaddr>?) {
        guard let socketAddress else { return nil }
        switch Int32(socketAddress.pointee.sa_family) {
        case AF_INET:
            let address = socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                $0.pointee.sin_addr.s_addr
            }
            self = .v4(UInt32(bigEndian: address))
        case AF_INET6:
            let bytes = socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                withUnsafeBytes(of: pointer.pointee.sin6_addr) { Array($0) }
            }
            self = .v6(bytes)
        default:
            return nil
        }
    }

    /// Parses a literal (`10.0.0.1`, `::1`).
    package init?(_ literal: String) {
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, literal, &v4) == 1 {
            self = .v4(UInt32(bigEndian: v4.s_addr))
        } else if inet_pton(AF_INET6, literal, &v6) == 1 {
            self = .v6(withUnsafeBytes(of: v6) { Array($0) })
        } else {
            return nil
        }
    }

    /// False for loopback, private, shared (CGNAT), link-local, multicast,
    /// unspecified, reserved and documentation ranges, and for IPv6 forms that
    /// embed such an IPv4 address.
    package var isPublic: Bool {
        switch self {
        case .v4(let address):
            return !Self.blockedV4.contains { address & $0.mask == $0.network }
        case .v6(let bytes):
            let isZeroPrefix = bytes[0..<10].allSatisfy { $0 == 0 }
            if isZeroPrefix, bytes[10] == 0xFF, bytes[11] == 0xFF {  // ::ffff:a.b.c.d
                return IPAddress.v4(Self.v4(bytes[12...])).isPublic
            }
            if bytes[0..<12] == [0x00, 0x64, 0xFF, 0x9B, 0, 0, 0, 0, 0, 0, 0, 0] {  // 64:ff9b::/96 (NAT64)
                return IPAddress.v4(Self.v4(bytes[12...])).isPublic
            }
            if bytes.allSatisfy({ $0 == 0 }) || (bytes[0..<15].allSatisfy { $0 == 0 } && bytes[15] == 1) {
                return false
            }  // :: and ::1
            if isZeroPrefix, bytes[10] == 0, bytes[11] == 0 { return false }  // ::a.b.c.d (deprecated compatible)
            if bytes[0] & 0xFE == 0xFC { return false }  // fc00::/7 unique local
            if bytes[0] == 0xFE, bytes[1] & 0xC0 == 0x80 { return false }  // fe80::/10 link-local
            if bytes[0] == 0xFE, bytes[1] & 0xC0 == 0xC0 { return false }  // fec0::/10 site-local
            if bytes[0] == 0xFF { return false }  // multicast
            // 2001:db8::/32 documentation
            if bytes[0] == 0x20, bytes[1] == 0x01, bytes[2] == 0x0D, bytes[3] == 0xB8 { return false }
            return true
        }
    }

    private static func v4(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        bytes.reduce(0) { $0 << 8 | UInt32($1) }
    }

    private static let blockedV4: [(network: UInt32, mask: UInt32)] = [
        ("0.0.0.0", 8), ("10.0.0.0", 8), ("100.64.0.0", 10), ("127.0.0.0", 8), ("169.254.0.0", 16),
        ("172.16.0.0", 12), ("192.0.0.0", 24), ("192.0.2.0", 24), ("192.88.99.0", 24), ("192.168.0.0", 16),
        ("198.18.0.0", 15), ("198.51.100.0", 24), ("203.0.113.0", 24), ("224.0.0.0", 4), ("240.0.0.0", 4),
    ].map { literal, bits in
        guard case .v4(let network)? = IPAddress(literal) else { preconditionFailure(literal) }
        let mask: UInt32 = bits == 0 ? 0 : ~UInt32(0) << (32 - UInt32(bits))
        return (network, mask)
    }

    package var description: String {
        switch self {
        case .v4(let address):
            return [24, 16, 8, 0].map { String((address >> UInt32($0)) & 0xFF) }.joined(separator: ".")
        case .v6(let bytes):
            return stride(from: 0, to: 16, by: 2).map {
                String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16)
            }
            .joined(separator: ":")
        }
    }
}
