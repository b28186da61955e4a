import Imagery

/// What ``MemoryReclaimer`` decides at each look at memory, apart from reading it and trimming: when to
/// give the allocator's free memory back (``Step/trim``), when admission is held back for resident
/// memory (``Step/pressure``), and what to tell operators (``Event``). Tested without memory or clocks.
///
/// Pressure starts only when resident memory is over the ceiling **after a trim**: freed memory the
/// allocator keeps (which a trim returns) never holds admission back. Measured on a 16-core machine
/// with `MALLOC_ARENA_MAX=32` (32 arenas keeping what requests freed): resident memory 926 MB against
/// 441, and new sources fell from ~250 to 45 req/s with no log line. Under pressure, a trim is tried
/// again (at most every ``Configuration/pressureRetrimInterval``) when what the allocator keeps
/// freed could bring resident memory under; pressure ends at the first look under the ceiling.
///
/// While resident memory is over the ceiling, heaps' free tops are given back at each free
/// (``Step/trimsHeapTops``): a trim does not return the tops of arenas other than the main one, and
/// with many arenas they held resident memory over the ceiling after every trim.
///
/// Each episode is an ``Event/started(_:)`` and an ``Event/ended(_:)``; at most one start is logged
/// every ``Configuration/logInterval`` (with its end), and the episodes not logged are summed in the
/// next line logged, so that a flapping state cannot flood the log.
struct MemoryReclaimerStateMachine {
    struct Configuration: Sendable {
        /// Resident bytes above which (after a trim) admission is held back.
        var residentCeiling: Int
        /// Freed bytes the allocator may keep resident beyond what it kept after its last trim (the
        /// floor) before they are trimmed while work goes on.
        var retainedLimit: Int
        /// Under pressure, the least time between trims that ask whether the allocator's freed memory
        /// is what keeps resident memory over the ceiling. Default 250 ms (five looks).
        var pressureRetrimInterval: Duration = .milliseconds(250)
        /// The least time between two logged starts of pressure. Default 10 s.
        var logInterval: Duration = .seconds(10)
    }

    /// What the reclaimer read at a look.
    struct Reading {
        /// Resident bytes.
        var resident: Int
        /// The allocator's bytes in use by the program; `nil` when not read (far from the ceiling: counting
        /// takes the allocator's locks) or not known (another C library).
        var allocatorInUse: Int?
        /// The allocator's free bytes (resident or not); `nil` as for ``allocatorInUse``.
        var allocatorFree: Int?
        /// The budget's counts now.
        var admission: Admission
        var now: ContinuousClock.Instant

        /// Resident bytes the allocator does not count as in use: freed memory it keeps, and what is not
        /// its own (code, stacks).
        var retained: Int? { allocatorInUse.map { resident - $0 } }
    }

    /// The in-flight budget's counts (``MemoryBudget/Snapshot``) that decisions read.
    struct Admission: Equatable {
        /// Bytes held, and reservations waiting, now.
        var used = 0
        var queued = 0
        /// Reservations admitted, admitted after waiting, and refused as overloaded, so far.
        var admitted = 0
        var waited = 0
        var refused = 0

        init(used: Int = 0, queued: Int = 0, admitted: Int = 0, waited: Int = 0, refused: Int = 0) {
            (self.used, self.queued, self.admitted, self.waited, self.refused) = (
                used, queued, admitted, waited, refused
            )
        }

        init(_ snapshot: MemoryBudget.Snapshot) {
            self.init(
                used: snapshot.used, queued: snapshot.queued, admitted: snapshot.admitted, waited: snapshot.waited,
                refused: snapshot.refusedOverloaded
            )
        }
    }

    /// Why a trim is asked for.
    enum TrimReason: String, Sendable, CaseIterable {
        /// Resident memory is over the ceiling: before admission is held back (or, under pressure,
        /// whether the allocator's freed memory is what keeps it there).
        case ceiling
        /// Near the ceiling, the allocator keeps more than ``Configuration/retainedLimit`` freed.
        case retained
        /// The budget has been idle for a second after work.
        case idle
    }

    /// What to do after a look: hold admission back or not (``MemoryBudget/setResidentPressure(_:)``),
    /// tell operators, and trim (then look again with ``lookAfterTrim(_:trimmed:)``).
    struct Step: Equatable {
        var pressure: Bool
        var events: [Event] = []
        var trim: TrimReason?
        /// Resident memory is over the ceiling: heaps' free tops are to be given back at each free, which
        /// no trim does for arenas but the main one (``ProcessMemory/trimsHeapTopsEagerly(_:)``).
        var trimsHeapTops = false
    }

    /// Episodes not logged, summed.
    struct Unlogged: Equatable {
        var episodes = 0
        var held: Duration = .zero
        var waited = 0
        var refused = 0
    }

    enum Event: Equatable {
        case started(Start)
        case ended(End)
    }

    /// Pressure started: resident memory stayed over the ceiling after a trim.
    struct Start: Equatable {
        /// Resident bytes after the trim, and before it.
        var resident: Int
        var residentBeforeTrim: Int
        var ceiling: Int
        var allocatorInUse: Int?
        var allocatorFree: Int?
        /// Whether a line says so (``Configuration/logInterval``).
        var logged: Bool
        /// With a logged line: the episodes not logged since the last line.
        var unlogged: Unlogged?
    }

    /// Pressure ended: resident memory is under the ceiling.
    struct End: Equatable {
        var resident: Int
        var ceiling: Int
        /// How long admission was held back.
        var lasted: Duration
        /// Reservations admitted after waiting, and refused, while it was.
        var waited: Int
        var refused: Int
        /// Whether a line says so: its start was logged, or (`unlogged`) episodes not logged are due to be summed.
        var logged: Bool
        var unlogged: Unlogged?
    }

    private struct Episode {
        var start: ContinuousClock.Instant
        var waited: Int
        var refused: Int
        var logged: Bool
    }

    let configuration: Configuration
    /// Resident bytes that are not the allocator's in use after the last trim (code, stacks, what it
    /// could not give back).
    private(set) var floor: Int
    private var episode: Episode?
    private var residentBeforeTrim = 0
    private var lastTrim: ContinuousClock.Instant?
    private var lastLine: ContinuousClock.Instant?
    private var unlogged = Unlogged()
    private var looks = 0
    private var idleLooks = 0
    private var lastAdmitted: Int
    /// Work was admitted, or held, since the last trim.
    private var pending = false
    /// Episodes of pressure so far, and how long they held admission back (ended ones).
    private(set) var episodes = 0
    private(set) var held: Duration = .zero

    init(configuration: Configuration, floor: Int, admitted: Int) {
        self.configuration = configuration
        self.floor = floor
        lastAdmitted = admitted
    }

    /// Whether admission is held back now.
    var underPressure: Bool { episode != nil }

    /// Whether a look at `resident` bytes needs the allocator's counts (near the ceiling only).
    func needsAllocatorCounts(resident: Int) -> Bool {
        resident > configuration.residentCeiling - 2 * configuration.retainedLimit
    }

    /// A look at memory (every 50 ms).
    mutating func look(_ reading: Reading) -> Step {
        looks += 1
        let ceiling = configuration.residentCeiling
        let over = reading.resident > ceiling
        var step = Step(pressure: episode != nil, trimsHeapTops: over)
        if episode != nil && !over {
            step.events.append(.ended(end(reading)))
            step.pressure = false
        }
        // Freed memory matters near the ceiling only.
        let keepsTooMuch =
            needsAllocatorCounts(resident: reading.resident)
            && (reading.retained.map { $0 - floor > configuration.retainedLimit } ?? over)
        if over && episode == nil {
            step.trim = .ceiling  // before holding anything back
        } else if over, let retained = reading.retained, reading.resident - (retained - floor) <= ceiling,
            lastTrim.map({ reading.now - $0 >= configuration.pressureRetrimInterval }) ?? true
        {
            step.trim = .ceiling  // what the allocator keeps freed may be all that is over
        } else if keepsTooMuch {
            step.trim = .retained
        } else if looks % 5 == 0 {
            // Idle trims: after a second of idle looks (four, every fifth look) following work: work
            // admitted, or still held, since the last trim (what it frees after a trim under load is kept).
            if reading.admission.admitted != lastAdmitted || reading.admission.used > 0 { pending = true }
            lastAdmitted = reading.admission.admitted
            idleLooks = reading.admission.used == 0 && reading.admission.queued == 0 ? idleLooks + 1 : 0
            if pending && idleLooks >= 4 { step.trim = .idle }
        }
        if step.trim != nil {
            pending = false
            residentBeforeTrim = reading.resident
        }
        return step
    }

    /// The look after a trim that ``look(_:)`` asked for: `trimmed` is false when the trim was skipped
    /// (another ran just before).
    mutating func lookAfterTrim(_ reading: Reading, trimmed: Bool) -> Step {
        // What a trim left is the new floor; a skipped trim (one ran just before) leaves it.
        if trimmed, let retained = reading.retained { floor = retained }
        lastTrim = reading.now
        let over = reading.resident > configuration.residentCeiling
        var step = Step(pressure: episode != nil, trimsHeapTops: over)
        if episode == nil && over {
            step.events.append(.started(start(reading)))
            step.pressure = true
        } else if episode != nil && !over {
            step.events.append(.ended(end(reading)))
            step.pressure = false
        }
        return step
    }

    private mutating func start(_ reading: Reading) -> Start {
        episodes += 1
        let logged = lastLine.map { reading.now - $0 >= configuration.logInterval } ?? true
        episode = Episode(
            start: reading.now, waited: reading.admission.waited, refused: reading.admission.refused, logged: logged
        )
        var start = Start(
            resident: reading.resident, residentBeforeTrim: residentBeforeTrim, ceiling: configuration.residentCeiling,
            allocatorInUse: reading.allocatorInUse, allocatorFree: reading.allocatorFree, logged: logged
        )
        if logged {
            lastLine = reading.now
            start.unlogged = takeUnlogged()
        }
        return start
    }

    private mutating func end(_ reading: Reading) -> End {
        guard let episode else { preconditionFailure("an end without a start") }
        self.episode = nil
        let lasted = reading.now - episode.start
        held += lasted
        var end = End(
            resident: reading.resident, ceiling: configuration.residentCeiling, lasted: lasted,
            waited: reading.admission.waited - episode.waited, refused: reading.admission.refused - episode.refused,
            logged: episode.logged
        )
        if !episode.logged {
            unlogged.episodes += 1
            unlogged.held += lasted
            unlogged.waited += end.waited
            unlogged.refused += end.refused
            // Episodes not logged are summed when a line is due, not only with the next logged start.
            if lastLine.map({ reading.now - $0 >= configuration.logInterval }) ?? true {
                lastLine = reading.now
                end.logged = true
                end.unlogged = takeUnlogged()
            }
        }
        return end
    }

    private mutating func takeUnlogged() -> Unlogged? {
        defer { unlogged = Unlogged() }
        return unlogged.episodes > 0 ? unlogged : nil
    }
}
