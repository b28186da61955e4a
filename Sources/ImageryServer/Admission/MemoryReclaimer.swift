import Foundation
import Imagery
import ServiceLifecycle

/// Gives memory back after a burst: once the in-flight budget has been idle (nothing held, nothing
/// waiting) for a second after some work, the allocator returns its free pages to the kernel; and
/// under sustained load, whenever resident memory is above `residentCeiling` (at most four times a
/// second), when the budget also holds admission back until it is under again
/// (``MemoryBudget/setResidentPressure(_:)``).
///
/// Why: glibc keeps what a burst freed (in up to 8 × cores arenas, and in heaps it trims only
/// from their top), so resident memory stayed near the burst's peak. Measured on a burst of 64
/// large distinct requests: 1 313 MB twenty seconds after the last answer with glibc as it is,
/// 925 MB with `MALLOC_ARENA_MAX=2`, 497 MB after one `malloc_trim(0)`, 308 MB with jemalloc
/// (which was 18% slower on new sources). Trimming when idle keeps glibc's speed under load.
/// Under sustained overload (64 clients asking for new large sources for 30 s) resident memory
/// still climbed to 823 MB with a 512 MB limit: freed pages inside the arenas, never idle to be
/// trimmed. A fixed 1 MB `M_MMAP_THRESHOLD` held it at 599 MB but cost 19% on new sources (page
/// faults on every large buffer); trimming when over the ceiling costs nothing until then.
struct MemoryReclaimer: Service {
    let budget: MemoryBudget
    /// Resident bytes above which free memory is trimmed even while work goes on.
    let residentCeiling: Int
    /// How often to look at resident memory (for pressure); trims are considered every fifth look,
    /// and follow a second of idle looks after work.
    var interval: Duration = .milliseconds(50)

    func run() async throws {
        var lastAdmitted = budget.snapshot.admitted
        var idleLooks = 0
        var looks = 0
        var pending = false  // work happened since the last trim
        while !Task.isShuttingDownGracefully, !Task.isCancelled {
            try? await Task.sleep(for: interval)
            let overCeiling = (ProcessMemory.residentBytes ?? 0) > residentCeiling
            // Over the ceiling, admission waits for the work in flight (measured: a burst of 256 at
            // 2048 px with 30 s admission windows peaked at 715 MB without it, 657 MB with it).
            budget.setResidentPressure(overCeiling)
            looks += 1
            guard looks % 5 == 0 else { continue }
            let now = budget.snapshot
            if now.admitted != lastAdmitted { pending = true }
            lastAdmitted = now.admitted
            idleLooks = now.used == 0 && now.queued == 0 ? idleLooks + 1 : 0
            let idleAfterWork = pending && idleLooks >= 4
            guard idleAfterWork || overCeiling else { continue }
            pending = false
            // malloc_trim walks every arena (tens of ms after a large burst): not on the cooperative pool.
            await withCheckedContinuation { continuation in
                Thread.detachNewThread {
                    ProcessMemory.trim()
                    continuation.resume()
                }
            }
        }
    }
}
