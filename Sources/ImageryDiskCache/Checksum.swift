import Foundation

/// A fast 64-bit checksum of an entry's bytes, to tell a torn or flipped file
/// from a good one (not a cryptographic hash). Eight bytes per step with
/// multiply-rotate mixing (after xxHash's structure): several GB/s, so checking
/// a 30 KB thumbnail costs a few microseconds.
enum Checksum {
    private static let prime1: UInt64 = 0x9E37_79B1_85EB_CA87
    private static let prime2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    private static let prime3: UInt64 = 0x1656_67B1_9E37_79F9

    static func of(_ data: Data) -> UInt64 {
        data.withUnsafeBytes { of($0) }
    }

    static func of(_ buffer: UnsafeRawBufferPointer) -> UInt64 {
        var lanes: (UInt64, UInt64, UInt64, UInt64) = (prime1 &+ prime2, prime2, 0, 0 &- prime1)
        let count = buffer.count
        var offset = 0
        @inline(__always) func round(_ lane: UInt64, _ input: UInt64) -> UInt64 {
            ((lane &+ input &* prime2) << 31 | (lane &+ input &* prime2) >> 33) &* prime1
        }
        while offset + 32 <= count {
            lanes.0 = round(lanes.0, buffer.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            lanes.1 = round(lanes.1, buffer.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self))
            lanes.2 = round(lanes.2, buffer.loadUnaligned(fromByteOffset: offset + 16, as: UInt64.self))
            lanes.3 = round(lanes.3, buffer.loadUnaligned(fromByteOffset: offset + 24, as: UInt64.self))
            offset += 32
        }
        var hash = (lanes.0 << 1 | lanes.0 >> 63) &+ (lanes.1 << 7 | lanes.1 >> 57)
            &+ (lanes.2 << 12 | lanes.2 >> 52) &+ (lanes.3 << 18 | lanes.3 >> 46)
        hash = hash &+ UInt64(count)
        while offset < count {
            hash ^= UInt64(buffer[offset]) &* prime3
            hash = (hash << 11 | hash >> 53) &* prime1
            offset += 1
        }
        hash ^= hash >> 33
        hash = hash &* prime2
        hash ^= hash >> 29
        hash = hash &* prime3
        hash ^= hash >> 32
        return hash
    }
}
