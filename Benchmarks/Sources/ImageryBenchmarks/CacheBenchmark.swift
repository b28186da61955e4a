import Foundation
import Imagery

/// MemoryCache against Foundation's NSCache (the seeds' choice), same work, same run:
/// 100 000 inserts with costs from 50 to 150 (images differ in size) under a
/// cost limit that holds about 80% of them, then 100 000 random reads.
enum CacheBenchmark {
    final class Payload: @unchecked Sendable {}

    static func run(entries: Int = 100_000, rounds: Int = 5) -> [Comparison] {
        var generator = SystemRandomNumberGenerator()
        let costs = (0..<entries).map { _ in Int.random(in: 50...150, using: &generator) }
        let costLimit = entries * 100 * 8 / 10
        let payloads = (0..<entries).map { _ in Payload() }
        let readKeys = (0..<entries).map { _ in Int.random(in: 0..<entries, using: &generator) }
        let numberKeys = (0..<entries).map { NSNumber(value: $0) }
        let numberReadKeys = readKeys.map { numberKeys[$0] }

        // Imagery's MemoryCache.
        var memoryCache = MemoryCache<Int, Payload>(costLimit: costLimit)
        let oursSet = medianSeconds(rounds: rounds) {
            memoryCache = MemoryCache<Int, Payload>(costLimit: costLimit)
            for key in 0..<entries { memoryCache.insert(payloads[key], for: key, cost: costs[key]) }
        }
        var hits = 0
        let oursGet = medianSeconds(rounds: rounds) {
            hits = 0
            for key in readKeys where memoryCache.value(for: key) != nil { hits += 1 }
        }
        memoryCache.checkInvariants()
        precondition(memoryCache.totalCost <= costLimit)
        print("MemoryCache: \(memoryCache.count) entries kept, \(hits) of \(entries) reads hit")

        // NSCache: one round (it is slow here: inserts slow down as it grows).
        let nsCache = NSCache<NSNumber, Payload>()
        nsCache.totalCostLimit = costLimit
        let peerSet = medianSeconds(rounds: 1) {
            for key in 0..<entries { nsCache.setObject(payloads[key], forKey: numberKeys[key], cost: costs[key]) }
        }
        var peerHits = 0
        let peerGet = medianSeconds(rounds: rounds) {
            peerHits = 0
            for key in numberReadKeys where nsCache.object(forKey: key) != nil { peerHits += 1 }
        }
        print("NSCache: \(peerHits) of \(entries) reads hit")

        // A cache's real use: read, and on a miss insert. Keys are skewed (a few
        // hot images, a long tail), starting from the caches filled above.
        let mixedKeys = (0..<entries).map { _ in min(entries - 1, Int(Double(entries) * pow(Double.random(in: 0..<1, using: &generator), 3))) }
        let mixedNumberKeys = mixedKeys.map { numberKeys[$0] }
        var oursMisses = 0
        let oursMixed = medianSeconds(rounds: 1) {
            for key in mixedKeys where memoryCache.value(for: key) == nil {
                oursMisses += 1
                memoryCache.insert(payloads[key], for: key, cost: costs[key])
            }
        }
        var peerMisses = 0
        let peerMixed = medianSeconds(rounds: 1) {
            for (index, key) in mixedNumberKeys.enumerated() where nsCache.object(forKey: key) == nil {
                peerMisses += 1
                nsCache.setObject(payloads[mixedKeys[index]], forKey: key, cost: costs[mixedKeys[index]])
            }
        }
        print("get-or-insert misses: MemoryCache \(oursMisses), NSCache \(peerMisses) of \(entries)")

        return [
            Comparison(name: "insert \(entries) under a cost limit", unit: "ops/s",
                       ours: Double(entries) / oursSet, peer: Double(entries) / peerSet, peerName: "NSCache"),
            Comparison(name: "\(entries) random reads", unit: "ops/s",
                       ours: Double(entries) / oursGet, peer: Double(entries) / peerGet, peerName: "NSCache"),
            Comparison(name: "\(entries) get-or-insert, skewed keys", unit: "ops/s",
                       ours: Double(entries) / oursMixed, peer: Double(entries) / peerMixed, peerName: "NSCache"),
        ]
    }
}
