import Foundation
import Synchronization

/// A counter tasks can share.
final class Counter: Sendable {
    private let atomic = Atomic<Int>(0)
    func increment() { atomic.add(1, ordering: .relaxed) }
    var value: Int { atomic.load(ordering: .relaxed) }
}

/// A flag tasks can share.
final class Flag: Sendable {
    private let atomic = Atomic<Bool>(false)
    func set() { atomic.store(true, ordering: .relaxed) }
    var isSet: Bool { atomic.load(ordering: .relaxed) }
}

/// A seeded generator (SplitMix64): the same seed gives the same "random" cases on every run and
/// machine, so a failure can be replayed.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// `bytes` with each byte repeated `count` times: grey pixels as colour ones (`[1, 2]`, 3: `[1, 1, 1, 2, 2, 2]`).
func repeatingEachByte(_ bytes: Data, _ count: Int) -> Data {
    var result = Data(capacity: bytes.count * count)
    for byte in bytes { result.append(contentsOf: [UInt8](repeating: byte, count: count)) }
    return result
}
