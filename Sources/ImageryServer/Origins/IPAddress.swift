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

    /// False for loopback, private, shared (CGNAT), link-local, multicast, unspecified, reserved and
    /// documentation ranges, and for every IPv6 address that carries such an IPv4 address
    /// (``embeddedV4``): the rule is decided on the IPv4 address a packet would reach.
    package var isPublic: Bool {
        switch self {
        case .v4(let address):
            return !Self.blockedV4.contains { address & $0.mask == $0.network }
        case .v6(let bytes):
            // The IPv4 address a form carries decides first; then only global unicast (2000::/3) is public:
            // loopback, unspecified, unique-local, link- and site-local, multicast, discard and the
            // unassigned rest are all outside it.
            if let embedded = embeddedV4 {
                guard IPAddress.v4(embedded).isPublic else { return false }
                if bytes.starts(with: [0x00, 0x64, 0xFF, 0x9B]) || bytes[0..<10].allSatisfy({ $0 == 0 }) {
                    return true  // NAT64 and the mapped and compatible forms: the IPv4 address is where it goes
                }
            }
            guard bytes[0] & 0xE0 == 0x20 else { return false }
            return !bytes.starts(with: [0x20, 0x01, 0x0D, 0xB8])  // 2001:db8::/32 documentation
        }
    }

    /// The IPv4 address an IPv6 address carries, for every form that carries one: IPv4-mapped
    /// (`::ffff:a.b.c.d`) and IPv4-compatible (`::a.b.c.d`, RFC 4291), 6to4 (`2002:AABB:CCDD::/16`,
    /// RFC 3056), NAT64's well-known prefix (`64:ff9b::/96`, RFC 6052) and its local-use prefix
    /// (`64:ff9b:1::/48`, RFC 8215, the address in bits 48–63 and 72–87), Teredo (`2001::/32`, the
    /// client's address in the last 32 bits, inverted: RFC 4380) and ISATAP (an interface identifier
    /// `0000:5efe:a.b.c.d` or `0200:5efe:a.b.c.d`, RFC 5214). `nil` for IPv4 and for other IPv6 addresses.
    package var embeddedV4: UInt32? {
        guard case .v6(let bytes) = self, bytes.count == 16 else { return nil }
        let last = Self.v4(bytes[12...])
        if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == bytes[11], bytes[10] == 0 || bytes[10] == 0xFF {
            return last  // ::ffff:a.b.c.d and ::a.b.c.d (:: and ::1 too: 0.0.0.0 and 0.0.0.1, both refused)
        }
        if bytes[0] == 0x20, bytes[1] == 0x02 { return Self.v4(bytes[2..<6]) }  // 6to4
        if bytes.starts(with: [0x00, 0x64, 0xFF, 0x9B, 0, 0, 0, 0, 0, 0, 0, 0]) { return last }  // NAT64 /96
        if bytes.starts(with: [0x00, 0x64, 0xFF, 0x9B, 0x00, 0x01]) {  // NAT64 local use, RFC 6052's /48 layout
            return Self.v4([bytes[6], bytes[7], bytes[9], bytes[10]][...])
        }
        if bytes.starts(with: [0x20, 0x01, 0x00, 0x00]) { return ~last }  // Teredo
        if bytes[8] & 0xFD == 0, bytes[9] == 0, bytes[10] == 0x5E, bytes[11] == 0xFE { return last }  // ISATAP
        return nil
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
