import Foundation
import Testing

@testable import Imagery

/// Expiry on time moved by hand (``ManualTime``): no test here waits for a clock.
@Suite("MemoryCache time to live")
struct MemoryCacheTimeToLiveTests {
    @Test(
        arguments: [
            (60.0, 59_999, true), (60, 60_000, false), (0.5, 499, true), (0.5, 500, false), (0.001, 1, false),
            (86_400, 86_399_999, true),
        ] as [(Double, Int64, Bool)])
    func anEntryLivesForItsTimeToLiveFromWhenItWasStored(ttl: Double, elapsedMilliseconds: Int64, alive: Bool) {
        let time = ManualTime()
        let cache = MemoryCache<String, Int>(ttl: ttl, time: time.source)
        cache["k"] = 1
        time.advance(by: .milliseconds(elapsedMilliseconds))
        #expect((cache["k"] != nil) == alive, "ttl \(ttl) after \(elapsedMilliseconds) ms")
    }

    @Test func readingDoesNotExtendALifeButStoringAgainStartsANewOne() {
        let time = ManualTime()
        let cache = MemoryCache<String, Int>(ttl: 10, time: time.source)
        cache["read"] = 1
        cache["stored again"] = 1
        time.advance(by: .seconds(9))
        #expect(cache["read"] == 1)
        cache["stored again"] = 2
        time.advance(by: .seconds(1))
        #expect(cache["read"] == nil)
        #expect(cache["stored again"] == 2)
        time.advance(by: .seconds(9))
        #expect(cache["stored again"] == nil)
    }

    @Test func expiredEntriesCountUntilTouchedOrEvicted() {
        let time = ManualTime()
        let cache = MemoryCache<Int, Int>(countLimit: 3, ttl: 1, time: time.source)
        for key in 0..<3 { cache.insert(key, for: key, cost: 10) }
        time.advance(by: .seconds(2))
        #expect(cache.count == 3 && cache.totalCost == 30, "nothing reads the clock until touched")
        #expect(cache.value(for: 1) == nil)
        #expect(cache.count == 2 && cache.totalCost == 20 && cache.keysByRecency == [2, 0])
        // New entries push the expired ones out by recency, as any others.
        cache.insert(3, for: 3, cost: 10)
        cache.insert(4, for: 4, cost: 10)
        #expect(cache.keysByRecency == [4, 3, 2])
        #expect(cache[3] == 3 && cache[2] == nil)
        cache.checkInvariants()
    }

    @Test func withoutATimeToLiveNothingExpiresHoweverLongItIsKept() {
        let time = ManualTime()
        let cache = MemoryCache<String, Int>(time: time.source)
        cache["k"] = 1
        time.advance(by: .seconds(100 * 365 * 86_400))
        #expect(cache["k"] == 1)
    }

    @Test func anExpiredEntryIsGoneThroughEveryWayOfReadingIt() async {
        let time = ManualTime()
        let cache = MemoryCache<String, CacheEntry>(ttl: 5, time: time.source)
        await cache.store(Data([1, 2, 3]), for: "k", metadata: CacheMetadata(contentType: "image/png"))
        #expect(await cache.data(for: "k") == Data([1, 2, 3]))
        time.advance(by: .seconds(5))
        #expect(await cache.entry(for: "k") == nil)
        #expect(await cache.metadata(for: "k") == nil)
        #expect(cache.count == 0)
        // Updating the metadata of an expired entry does not bring it back.
        await cache.updateMetadata(CacheMetadata(contentType: "image/gif"), for: "k")
        #expect(cache.count == 0)
    }

    @Test func manyCachesShareOneManualTime() {
        let time = ManualTime()
        let short = MemoryCache<Int, Int>(ttl: 1, time: time.source)
        let long = MemoryCache<Int, Int>(ttl: 100, time: time.source)
        short[1] = 1
        long[1] = 1
        time.advance(by: .seconds(50))
        #expect(short[1] == nil && long[1] == 1)
    }
}
