import CMallocInfo
import Foundation
import Imagery

/// The process's memory as the kernel counts it, and giving freed memory back to it.
public enum ProcessMemory {
    /// Resident bytes (`/proc/self/statm`); `nil` where there is no procfs.
    static var residentBytes: Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// glibc's own count (`mallinfo2`): bytes in use by the program (heap and mmapped blocks), and
    /// bytes it has freed that the allocator keeps (resident until trimmed); `nil` with another C library.
    static var allocator: (inUse: Int, free: Int)? {
        var inUse = 0
        var free = 0
        guard imagery_malloc_counts(&inUse, &free) == 0 else { return nil }
        return (inUse, free)
    }

    /// Returns the allocator's free memory to the kernel (glibc's `malloc_trim`, every arena),
    /// unless the process did within `interval` (several servers in one process, as in tests, each
    /// run a reclaimer); does nothing elsewhere.
    /// - Returns: Whether it trimmed (not skipped for an earlier trim).
    @discardableResult
    static func trim(notWithin interval: Duration = .zero) -> Bool {
        let now = ContinuousClock.now
        let due = lastTrim.withLock { last in
            guard last.map({ now - $0 >= interval }) ?? true else { return false }
            last = now
            return true
        }
        if due { _ = mallocTrim?(0) }
        return due
    }

    private static let lastTrim = Locked<ContinuousClock.Instant?>(nil)

    /// Limits glibc to `count` malloc arenas (`M_ARENA_MAX`), unless `MALLOC_ARENA_MAX` is set in
    /// the environment; call before threads start. glibc's default (8 per core) spreads a burst's
    /// garbage over many heaps that are each trimmed only from their top; measured on a burst of 64
    /// large requests with admission: peak 722 → 675 MB, 20 s later 413 → 326 MB, with no change
    /// in the cold-sources throughput (80.4 and 82.4 req/s before, 80.0 and 77.1 after: noise).
    public static func limitArenas(to count: Int) {
        guard ProcessInfo.processInfo.environment["MALLOC_ARENA_MAX"] == nil else { return }
        _ = mallopt?(-8, Int32(count))  // M_ARENA_MAX
    }

    /// Lets glibc keep and reuse the memory requests free, instead of giving each large block back
    /// to the kernel and faulting fresh zeroed pages in for the next request: large blocks (up to
    /// 32 MiB: a decode's pixels, a source's bytes) come from the heap rather than from `mmap`
    /// (`M_MMAP_THRESHOLD`), and a heap's free top is kept up to `trimThreshold` bytes
    /// (`M_TRIM_THRESHOLD`; glibc's own follows the largest block freed, 64 MiB at most).
    /// What this keeps is given back by the server's memory reclaimer: when the server falls idle, and under
    /// load whenever resident memory passes its ceiling. Does nothing when the environment already
    /// tunes glibc's malloc (`GLIBC_TUNABLES`, `MALLOC_MMAP_THRESHOLD_`, `MALLOC_TRIM_THRESHOLD_`).
    ///
    /// Measured on the proxy benchmark's cold-sources path (every request a new JPEG source): glibc's
    /// own thresholds cost ~1 500 page faults a request (6 MB of fresh pages), these (with 256 MiB)
    /// ~500–750, and the server's CPU time a request fell 13–20% (BENCHMARKS.md, issue 8, session 13).
    /// `serve` sets a quarter of its memory limit (128 MiB by default); its reclaimer trims what is
    /// kept past an eighth while work goes on (`MemoryReclaimer`), so that what a burst frees stays
    /// within the resident ceiling.
    public static func keepFreedMemory(trimThreshold: Int) {
        let environment = ProcessInfo.processInfo.environment
        guard environment["GLIBC_TUNABLES"] == nil, environment["MALLOC_MMAP_THRESHOLD_"] == nil,
            environment["MALLOC_TRIM_THRESHOLD_"] == nil
        else { return }
        _ = mallopt?(-3, 32 << 20)  // M_MMAP_THRESHOLD (glibc's largest)
        _ = mallopt?(-1, Int32(clamping: trimThreshold))  // M_TRIM_THRESHOLD
        topTrimming.withLock { $0.kept = trimThreshold }
    }

    /// While `eager`, each heap's free top is given back as soon as a free leaves more than 1 MiB
    /// there (`M_TRIM_THRESHOLD`), instead of the threshold ``keepFreedMemory(trimThreshold:)`` set;
    /// `false` sets that one again. Does nothing unless ``keepFreedMemory(trimThreshold:)`` set it
    /// (the environment's tuning is left alone), nor when the state does not change.
    ///
    /// Why: `malloc_trim` gives back the free chunks of every arena but the free top of the main
    /// arena only; another arena's top (a heap of up to 64 MiB) shrinks only at a free, and only past
    /// the trim threshold, which at 128 MiB it never reaches. With `MALLOC_ARENA_MAX=32`, measured on
    /// bursts of 64 and 256 large sources (2 cores): resident memory after a trim stayed 9–23 MiB over
    /// the 612 MiB ceiling (the allocator counting 435 MiB in use), 15 and 22 episodes held
    /// admission back, 643 and 600 MB resident 20 s after the burst; with a 16 MiB threshold: none, and 364 MB.
    static func trimsHeapTopsEagerly(_ eager: Bool) {
        let threshold: Int? = topTrimming.withLock { state in
            guard let kept = state.kept, state.eager != eager else { return nil }
            state.eager = eager
            return eager ? 1 << 20 : kept
        }
        if let threshold { _ = mallopt?(-1, Int32(clamping: threshold)) }  // M_TRIM_THRESHOLD
    }

    /// The trim threshold ``keepFreedMemory(trimThreshold:)`` set, and whether it is lowered now.
    private static let topTrimming = Locked<(kept: Int?, eager: Bool)>((nil, false))

    private static let mallopt: (@convention(c) (Int32, Int32) -> Int32)? = {
        #if os(Linux)
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return nil }
            return unsafeBitCast(symbol, to: (@convention(c) (Int32, Int32) -> Int32).self)
        #else
            return nil
        #endif
    }()

    /// glibc's `malloc_trim` (in `<malloc.h>`, which Swift's Glibc module does not export), looked
    /// up once; `nil` with another C library.
    private static let mallocTrim: (@convention(c) (Int) -> Int32)? = {
        #if os(Linux)
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return nil }
            return unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
        #else
            return nil
        #endif
    }()
}
