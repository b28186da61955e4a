/// CRC-32 (IEEE 802.3, reflected, as zlib and nginx's `ngx_crc32` compute it), in steps.
enum CRC32 {
    static let initial: UInt32 = 0xFFFF_FFFF
    private static let table: [UInt32] = (0..<256).map { byte in
        var value = UInt32(byte)
        for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        return value
    }

    static func update(_ crc: UInt32, _ bytes: some Sequence<UInt8>) -> UInt32 {
        var crc = crc
        for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return crc
    }

    static func final(_ crc: UInt32) -> UInt32 { crc ^ 0xFFFF_FFFF }
}
