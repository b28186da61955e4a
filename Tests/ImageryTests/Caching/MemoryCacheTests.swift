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

    @Test func insertReturnsWhatLeftTheCache() {
        let cache = MemoryCache<String, Int>(costLimit: 10)
        #expect(cache.insert(1, for: "a", cost: 4).isEmpty)
        #expect(cache.insert(2, for: "b", cost: 4).isEmpty)
        #expect(cache.insert(3, for: "a", cost: 4) == [1], "the value replaced")
        #expect(cache.insert(4, for: "c", cost: 4) == [2], "the least recently used, evicted")
        #expect(cache.insert(5, for: "d", cost: 11) == [], "too costly: not stored, nothing evicted")
        #expect(cache.insert(6, for: "a", cost: 11) == [3], "too costly: the old value goes")
        #expect(cache.keysByRecency == ["c"])
        cache.checkInvariants()
    }

    @Test func aValueCostingTheWholeLimitPushesOutEverythingElse() {
        let cache = MemoryCache<Int, Int>(costLimit: 100)
        for key in 0..<5 { cache.insert(key, for: key, cost: 10) }
        #expect(cache.insert(99, for: 99, cost: 100).count == 5)
        #expect(cache.keysByRecency == [99] && cache.totalCost == 100)
    }

    @Test func trimmingToACostEvictsTheOldestAndKeepsTheLimit() {
        let cache = MemoryCache<Int, Int>(costLimit: 100)
        for key in 0..<5 { cache.insert(key, for: key, cost: 10) }
        _ = cache[0]  // now the most recently used
        #expect(cache.trim(toCost: 25) == [1, 2, 3])
        #expect(cache.keysByRecency == [0, 4] && cache.costLimit == 100)
        for key in 5..<13 { cache.insert(key, for: key, cost: 10) }
        #expect(cache.totalCost == 100, "the limit is as it was")
        #expect(cache.trim(toCost: -1).count == 10 && cache.count == 0)
        cache.checkInvariants()
    }

    @Test func aCountLimitOfZeroKeepsNothing() {
        let cache = MemoryCache<String, Int>(countLimit: 0)
        cache["a"] = 1
        #expect(cache["a"] == nil && cache.count == 0)
    }

    @Test func negativeCostsAndLimitsAreZero() {
        let cache = MemoryCache<String, Int>(costLimit: 10)
        cache.insert(2, for: "paid", cost: 3)
        cache.insert(1, for: "free", cost: -50)
        #expect(cache.totalCost == 3 && cache["free"] == 1)
        cache.costLimit = -1
        #expect(cache.costLimit == 0 && cache.keysByRecency == ["free"], "what costs nothing fits a limit of 0")
        cache.countLimit = -5
        #expect(cache.countLimit == 0 && cache.count == 0)
        cache.checkInvariants()
    }

    @Test func theSubscriptUsesTheCostFunctionGiven() {
        let cache = MemoryCache<String, String>(costLimit: 10, cost: { $0.count })
        cache["a"] = "12345"
        cache["b"] = "123456"  // 11 in all: the oldest goes
        #expect(cache.totalCost == 6 && cache.keysByRecency == ["b"])
        let counted = MemoryCache<String, String>()
        counted["a"] = "a long string"
        #expect(counted.totalCost == 1, "a value that reports no cost costs 1")
    }

    @Test func removingAKeyThatIsNotThereReturnsNil() {
        let cache = MemoryCache<String, Int>()
        #expect(cache.removeValue(for: "missing") == nil)
        cache["a"] = 1
        #expect(cache.removeValue(for: "a") == 1 && cache.removeValue(for: "a") == nil)
    }

    @Test func dataCachingStoresBytesWithTheirMetadata() async {
        let cache = MemoryCache<String, CacheEntry>(costLimit: 10)
        let metadata = CacheMetadata(contentType: "image/png", storedAt: Date(timeIntervalSince1970: 5))
        await cache.store(Data(count: 6), for: "a", metadata: metadata)
        #expect(await cache.entry(for: "a") == CacheEntry(data: Data(count: 6), metadata: metadata))
        #expect(await cache.metadata(for: "a") == metadata && cache.totalCost == 6)
        let refreshed = CacheMetadata(contentType: "image/png", storedAt: Date(timeIntervalSince1970: 9))
        await cache.updateMetadata(refreshed, for: "a")
        #expect(await cache.data(for: "a") == Data(count: 6))
        #expect(await cache.metadata(for: "a") == refreshed)
        await cache.updateMetadata(refreshed, for: "missing")
        #expect(await cache.entry(for: "missing") == nil)
        await cache.store(Data(count: 6), for: "b", metadata: metadata)  // 12 bytes: a goes
        #expect(await cache.entry(for: "a") == nil && cache.count == 1)
        await cache.remove(for: "b")
        #expect(cache.count == 0)
        await cache.store(Data(count: 1), for: "c", metadata: metadata)
        await (cache as any DataCaching).removeAll()
        #expect(cache.count == 0)
    }

    @Test func imageCachingStoresResponsesByKey() {
        let cache: any ImageCaching = MemoryCache<ImageCacheKey, ImageResponse>()
        let key = ImageCacheKey(source: .id("a"), thumbnail: .init(width: 10, height: 10))
        let image = Image(width: 1, height: 1, pixelFormat: .gray8, pixels: Data([7]), sourceFormat: .png)
        cache[key] = ImageResponse(image: image, source: CacheMetadata(), freshUntil: .distantFuture)
        #expect(cache[key]?.image == image)
        #expect(cache[ImageCacheKey(source: .id("a"), thumbnail: nil)] == nil)
        cache.removeAll()
        #expect(cache[key] == nil)
    }

    /// Random operations from fixed seeds against a plain array kept in recency order: the cache
    /// holds the same keys in the same order at the same cost after every step.
    @Test(arguments: [11, 12, 13, 14] as [UInt64])
    func behavesLikeAPlainLeastRecentlyUsedList(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        let cache = MemoryCache<Int, Int>(costLimit: 200, countLimit: 12)
        var model: [(key: Int, cost: Int)] = []  // most recent first
        var (costLimit, countLimit) = (200, 12)
        func trimModel() {
            while !model.isEmpty, model.reduce(0, { $0 + $1.cost }) > costLimit || model.count > countLimit {
                model.removeLast()
            }
        }
        for _ in 0..<3_000 {
            let key = Int.random(in: 0..<30, using: &random)
            switch Int.random(in: 0..<20, using: &random) {
            case 0..<8:
                let cost = Int.random(in: 0...60, using: &random)
                cache.insert(key, for: key, cost: cost)
                model.removeAll { $0.key == key }
                if cost <= costLimit, countLimit > 0 {
                    model.insert((key, cost), at: 0)
                    trimModel()
                }
            case 8..<15:
                let value = cache.value(for: key)
                if let index = model.firstIndex(where: { $0.key == key }) {
                    #expect(value == key)
                    model.insert(model.remove(at: index), at: 0)
                } else {
                    #expect(value == nil)
                }
            case 15..<18:
                #expect((cache.removeValue(for: key) != nil) == model.contains { $0.key == key })
                model.removeAll { $0.key == key }
            case 18:
                costLimit = Int.random(in: 0...300, using: &random)
                cache.costLimit = costLimit
                trimModel()
            default:
                countLimit = Int.random(in: 0...15, using: &random)
                cache.countLimit = countLimit
                trimModel()
            }
            #expect(cache.keysByRecency == model.map(\.key))
            #expect(cache.totalCost == model.reduce(0) { $0 + $1.cost })
        }
        cache.checkInvariants()
    }
}
