import Foundation
import Testing

@testable import Imagery

@Suite("MemoryCache")
struct MemoryCacheTests {
    @Test func storesReadsAndRemovesThroughSubscriptAndMethods() {
        let cache = MemoryCache<String, Int>()
        cache["a"] = 1
        cache.insert(2, for: "b", cost: 5)
        #expect(cache["a"] == 1)
        #expect(cache.value(for: "b") == 2)
        #expect(cache.count == 2)
        #expect(cache.totalCost == 6)  // 1 (default cost) + 5
        cache["a"] = nil
        #expect(cache["a"] == nil)
        #expect(cache.removeValue(for: "b") == 2)
        #expect(cache.count == 0 && cache.totalCost == 0)
        cache.checkInvariants()
    }

    @Test func replacingAValueUpdatesItsCost() {
        let cache = MemoryCache<String, Int>(costLimit: 100)
        cache.insert(1, for: "a", cost: 40)
        cache.insert(2, for: "a", cost: 10)
        #expect(cache.totalCost == 10)
        #expect(cache.count == 1)
        #expect(cache["a"] == 2)
        cache.checkInvariants()
    }

    @Test func evictsLeastRecentlyUsedFirst() {
        // Given a full cache of a, b, c where a was read last
        let cache = MemoryCache<String, Int>(countLimit: 3)
        cache["a"] = 1
        cache["b"] = 2
        cache["c"] = 3
        _ = cache["a"]
        #expect(cache.keysByRecency == ["a", "c", "b"])
        // When d is inserted
        cache["d"] = 4
        // Then b, the least recently used, is gone
        #expect(cache["b"] == nil)
        #expect(cache.keysByRecency == ["d", "a", "c"])
        cache.checkInvariants()
    }

    @Test func keepsTotalCostUnderTheLimitByEvictingOldest() {
        let cache = MemoryCache<Int, Int>(costLimit: 100)
        for key in 0..<10 { cache.insert(key, for: key, cost: 30) }
        #expect(cache.totalCost == 90)
        #expect(cache.count == 3)
        #expect(cache.keysByRecency == [9, 8, 7])
        cache.checkInvariants()
    }

    @Test func refusesAValueCostlierThanTheWholeLimit() {
        let cache = MemoryCache<String, Int>(costLimit: 10)
        cache.insert(1, for: "small", cost: 5)
        cache.insert(2, for: "huge", cost: 11)
        #expect(cache["huge"] == nil)
        #expect(cache["small"] == 1)
        cache.checkInvariants()
    }

    @Test func loweringALimitEvictsAtOnce() {
        let cache = MemoryCache<Int, Int>()
        for key in 0..<10 { cache.insert(key, for: key, cost: 10) }
        cache.costLimit = 35
        #expect(cache.count == 3)
        cache.countLimit = 1
        #expect(cache.keysByRecency == [9])
        cache.checkInvariants()
    }

    @Test func expiresEntriesAfterTheirTimeToLive() {
        let time = ManualTime()
        let cache = MemoryCache<String, Int>(ttl: 60, time: time.source)
        cache["a"] = 1
        time.advance(by: .seconds(59))
        #expect(cache["a"] == 1)
        time.advance(by: .seconds(1))  // 60 s after it was stored: gone
        #expect(cache["a"] == nil)
        #expect(cache.count == 0)
        cache.checkInvariants()
    }

    @Test func reusesFreedSlotsAfterRemoveAll() {
        let cache = MemoryCache<Int, Int>(countLimit: 1000)
        for round in 0..<3 {
            for key in 0..<1000 { cache[key] = key + round }
            cache.checkInvariants()
            cache.removeAll()
            #expect(cache.count == 0 && cache.totalCost == 0)
        }
    }

    @Test func usesImageAndDataCostsByDefault() {
        let images = MemoryCache<String, Image>()
        let image = Image(width: 2, height: 3, pixelFormat: .rgba8, pixels: Data(count: 24), sourceFormat: .png)
        images["x"] = image
        #expect(images.totalCost == 24)
        let data = MemoryCache<String, Data>()
        data["y"] = Data(count: 1000)
        #expect(data.totalCost == 1000)
    }

    @Test func neverExceedsItsLimitsUnderFourConcurrentWriters() async {
        let cache = MemoryCache<Int, Int>(costLimit: 5_000, countLimit: 300)
        let violations = Counter()
        await withTaskGroup(of: Void.self) { group in
            for writer in 0..<4 {
                group.addTask {
                    var random = SystemRandomNumberGenerator()
                    for step in 0..<20_000 {
                        let key = Int.random(in: 0..<2_000, using: &random)
                        switch step % 4 {
                        case 0, 1: cache.insert(writer, for: key, cost: Int.random(in: 1...40, using: &random))
                        case 2: _ = cache.value(for: key)
                        default: cache.removeValue(for: key)
                        }
                        if step % 500 == 0 {
                            if cache.totalCost > 5_000 || cache.count > 300 { violations.increment() }
                            cache.checkInvariants()
                        }
                    }
                }
            }
        }
        #expect(violations.value == 0)
        #expect(cache.totalCost <= 5_000)
        #expect(cache.count <= 300)
        cache.checkInvariants()
    }
}
