import Foundation

/// The entries the crash writer stores: each key's bytes follow from its index,
/// so a reader can tell good bytes from bad without any record of the writes.
public enum CrashPayload {
    public static func key(for index: Int) -> String { "entry-\(index)" }

    /// The index a key names, if it is one of these keys.
    public static func index(of key: String) -> Int? {
        key.hasPrefix("entry-") ? Int(key.dropFirst("entry-".count)) : nil
    }

    /// 1 KB to 256 KB of pseudo-random bytes seeded by `index`.
    public static func bytes(for index: Int) -> Data {
        var state = UInt64(truncatingIfNeeded: index) &* 0x9E37_79B9_7F4A_7C15 | 1
        let size = 1024 + Int(state % (255 * 1024))
        var bytes = [UInt8](repeating: 0, count: size)
        for position in 0..<size {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            bytes[position] = UInt8(truncatingIfNeeded: state)
        }
        return Data(bytes)
    }
}
