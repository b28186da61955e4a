/// The C library's `random()` after `srandom(seed)` (glibc's additive feedback generator, its
/// default type 3), so that noise seeded as thumbor seeds it is thumbor's noise.
struct CRandom {
    private var state = [Int32](repeating: 0, count: 31)
    private var front = 3
    private var rear = 0

    init(seed: UInt32) {
        var word = Int64(seed == 0 ? 1 : seed)
        state[0] = Int32(truncatingIfNeeded: word)
        for i in 1..<31 {
            let (high, low) = (word / 127_773, word % 127_773)
            word = 16_807 * low - 2_836 * high
            if word < 0 { word += 2_147_483_647 }
            state[i] = Int32(truncatingIfNeeded: word)
        }
        for _ in 0..<310 { _ = next() }
    }

    /// The next value, 0...2³¹ - 1.
    mutating func next() -> UInt32 {
        state[front] = state[front] &+ state[rear]
        let value = UInt32(bitPattern: state[front]) >> 1
        front = (front + 1) % 31
        rear = (rear + 1) % 31
        return value
    }
}
