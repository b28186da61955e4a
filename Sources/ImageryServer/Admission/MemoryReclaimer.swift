import Foundation
import Imagery
import Logging
import ServiceLifecycle

/// Gives memory back after a burst: once the in-flight budget has been idle (nothing held, nothing
/// waiting) for a second after some work, the allocator returns its free pages to the kernel; and
/// under load, whenever the allocator keeps more than `retainedLimit` of freed memory resident.
/// Whenever resident memory is above `residentCeiling` after a trim, the budget also holds admission
/// back until it is under again (``MemoryBudget/setResidentPressure(_:)``), and says so (a warning when
/// it starts, a notice when it ends, rate-limited; `imagery_admission_resident_pressure_total`). What
/// it decides is ``MemoryReclaimerStateMachine``'s; this reads memory, trims, and does what it says.
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
    /// Resident bytes above which (after a trim) admission is held back.
    let residentCeiling: Int
    /// Freed bytes the allocator may keep resident (beyond what it kept after its last trim) before
    /// they are trimmed while work goes on.
    var retainedLimit: Int
    /// Told when pressure starts and ends (a warning and a notice, rate-limited).
    var logger: Logger
    /// Counts episodes of pressure, the time they held admission back, and trims.
    var metrics: ServerMetrics?
    /// Where instants are read (episodes' durations, the log's rate limit).
    var time: TimeSource = .system
    /// How often to look at resident memory (for pressure and retained memory); idle trims are
    /// considered every fifth look, and follow a second of idle looks after work.
    var interval: Duration = .milliseconds(50)

    func run() async throws {
        var machine = MemoryReclaimerStateMachine(
            configuration: .init(residentCeiling: residentCeiling, retainedLimit: retainedLimit),
            floor: Self.reading(budget: budget, time: time, allocator: true).retained ?? 0,
            admitted: budget.snapshot.admitted
        )
        while !Task.isShuttingDownGracefully, !Task.isCancelled {
            try? await Task.sleep(for: interval)
            let resident = ProcessMemory.residentBytes ?? 0
            let counts = machine.needsAllocatorCounts(resident: resident)
            let step = machine.look(Self.reading(budget: budget, time: time, resident: resident, allocator: counts))
            perform(step)
            guard let reason = step.trim else { continue }
            // malloc_trim walks every arena (tens of ms after a large burst): not on the cooperative pool.
            let trimmed = await withCheckedContinuation { continuation in
                Thread.detachNewThread {
                    continuation.resume(returning: ProcessMemory.trim(notWithin: .milliseconds(100)))
                }
            }
            if trimmed { metrics?.memoryTrimmed(reason: reason.rawValue) }
            perform(machine.lookAfterTrim(Self.reading(budget: budget, time: time, allocator: true), trimmed: trimmed))
        }
        // Pressure left on at shutdown holds nothing back any more: nothing is admitted.
    }

    /// Holds admission back or lets it go, and tells operators.
    private func perform(_ step: MemoryReclaimerStateMachine.Step) {
        // Over the ceiling after a trim, admission waits for the work in flight (measured: a burst of 256 at
        // 2048 px with 30 s admission windows peaked at 715 MB without it, 657 MB with it).
        budget.setResidentPressure(step.pressure)
        ProcessMemory.trimsHeapTopsEagerly(step.trimsHeapTops)
        for event in step.events {
            switch event {
            case .started(let start):
                metrics?.residentPressureStarted()
                if start.logged { logger.warning("\(Self.message(start))", metadata: ["memory_pressure": "started"]) }
            case .ended(let end):
                metrics?.residentPressureEnded(after: end.lasted)
                if end.logged { logger.notice("\(Self.message(end))", metadata: ["memory_pressure": "ended"]) }
            }
        }
    }

    /// The memory and the budget's counts now; the allocator's counts with `allocator` (they take its locks).
    private static func reading(
        budget: MemoryBudget, time: TimeSource, resident: Int? = nil, allocator: Bool
    ) -> MemoryReclaimerStateMachine.Reading {
        let resident = resident ?? ProcessMemory.residentBytes ?? 0
        let counts = allocator ? ProcessMemory.allocator : nil
        return MemoryReclaimerStateMachine.Reading(
            resident: resident, allocatorInUse: counts?.inUse, allocatorFree: counts?.free,
            admission: .init(budget.snapshot), now: time.instant()
        )
    }
}
