import Foundation
import Imagery
import ServiceLifecycle

/// Gives memory back after a burst: once the in-flight budget has been idle (nothing held, nothing
/// waiting) for a second after some work, the allocator returns its free pages to the kernel; and
/// under load, whenever the allocator keeps more than `retainedLimit` of freed memory resident.
/// Whenever resident memory is above `residentCeiling`, the budget also holds admission back
/// until it is under again (``MemoryBudget/setResidentPressure(_:)``).
///
/// Why: glibc keeps what a burst freed (in up to 8 × cores arenas, and in heaps it trims only
/// from their top), so resident memory stayed near the burst's peak. Measured on a burst of 64
/// large distinct requests: 1 313 MB twenty seconds after the last answer with glibc as it is,
/// 925 MB with `MALLOC_ARENA_MAX=2`, 497 MB after one `malloc_trim(0)`, 308 MB with jemalloc
/// (which was 18% slower on new sources). Trimming when idle keeps glibc's speed under load.
/// Under sustained overload (64 clients asking for new large sources for 30 s) resident memory
/// still climbed to 823 MB with a 512 MB limit: freed pages inside the arenas, never idle to be
/// trimmed. A fixed 1 MB `M_MMAP_THRESHOLD` held it at 599 MB but cost 19% on new sources (page
/// faults on every large buffer); trimming what is kept past a bound costs nothing until then.
///
/// And while work goes on, freed memory the allocator keeps resident past `retainedLimit` is given
/// back at once (looked at every 50 ms: resident memory less what the allocator says is in use).
/// Measured on bursts of 64 new 20 MP sources at 2048 px: in use stayed within what the budget
/// and caches count (464–491 MB at the peaks), but the allocator kept 150–250 MB of freed blocks
/// resident, and a large block (over the 32 MiB mmap threshold) took fresh pages beside them: peaks
/// of 667–687 MB against a bound of 662. Trimming at the ceiling alone came too late (one such
/// block raises resident memory by 90 MB within 100 ms).
struct MemoryReclaimer: Service {
    let budget: MemoryBudget
    /// Resident bytes above which admission is held back (and free memory trimmed).
    let residentCeiling: Int
    /// Freed bytes the allocator may keep resident (beyond what it kept after its last trim) before
    /// they are trimmed while work goes on.
    var retainedLimit: Int
    /// How often to look at resident memory (for pressure and retained memory); idle trims are
    /// considered every fifth look, and follow a second of idle looks after work.
    var interval: Duration = .milliseconds(50)

    func run() async throws {
        var lastAdmitted = budget.snapshot.admitted
        var idleLooks = 0
        var looks = 0
        var pending = false  // work happened since the last trim
        var floor = Self.retained() ?? 0  // what stays resident after a trim (code, stacks, unfreeable pages)
        while !Task.isShuttingDownGracefully, !Task.isCancelled {
            try? await Task.sleep(for: interval)
            let resident = ProcessMemory.residentBytes ?? 0
            let overCeiling = resident > residentCeiling
            // Over the ceiling, admission waits for the work in flight (measured: a burst of 256 at
            // 2048 px with 30 s admission windows peaked at 715 MB without it, 657 MB with it).
            budget.setResidentPressure(overCeiling)
            // Freed memory matters near the ceiling only (and counting it takes the allocator's locks).
            let nearCeiling = resident > residentCeiling - 2 * retainedLimit
            let keepsTooMuch = nearCeiling && (Self.retained().map { $0 - floor > retainedLimit } ?? overCeiling)
            looks += 1
            if !keepsTooMuch {
                guard looks % 5 == 0 else { continue }
                let now = budget.snapshot
                if now.admitted != lastAdmitted { pending = true }
                lastAdmitted = now.admitted
                idleLooks = now.used == 0 && now.queued == 0 ? idleLooks + 1 : 0
                guard pending && idleLooks >= 4 else { continue }
            }
            pending = false
            // malloc_trim walks every arena (tens of ms after a large burst): not on the cooperative pool.
            let trimmed = await withCheckedContinuation { continuation in
                Thread.detachNewThread {
                    continuation.resume(returning: ProcessMemory.trim(notWithin: .milliseconds(100)))
                }
            }
            // What a trim left is the new floor; a skipped trim (one ran just before) leaves it.
            if trimmed { floor = Self.retained() ?? floor }
        }
    }

    /// Resident bytes the allocator does not count as in use: freed memory it keeps, and what is
    /// not its own (code, stacks); `nil` without those counts.
    private static func retained() -> Int? {
        guard let resident = ProcessMemory.residentBytes, let allocator = ProcessMemory.allocator else { return nil }
        return resident - allocator.inUse
    }
}
