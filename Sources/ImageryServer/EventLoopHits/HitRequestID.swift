import Synchronization

/// The `hb.request.id` of a request ``HitHandler`` answers: written as Hummingbird's `RequestID`
/// writes a route's (a random 64-bit prefix in hex, then a count as 16 hex digits), from a count of
/// its own (another prefix: never one of the router's ids), without building it from two strings.
enum HitRequestID {
    private static let prefix = Array(String(UInt64.random(in: .min ... .max), radix: 16).utf8)
    private static let count = Atomic<UInt64>(UInt64.random(in: .min ... .max))

    static func next() -> String {
        let value = count.wrappingAdd(1, ordering: .relaxed).oldValue
        return String(unsafeUninitializedCapacity: prefix.count + 16) { bytes in
            _ = bytes.initialize(fromContentsOf: prefix)
            let digits: StaticString = "0123456789abcdef"
            for position in 0..<16 {
                let nibble = Int((value >> UInt64(60 - 4 * position)) & 0xF)
                bytes[prefix.count + position] = digits.utf8Start[nibble]
            }
            return prefix.count + 16
        }
    }
}
