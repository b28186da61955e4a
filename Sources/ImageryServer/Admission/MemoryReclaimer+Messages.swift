import Foundation

/// The lines ``MemoryReclaimer`` logs when admission starts and stops holding work back for resident memory.
extension MemoryReclaimer {
    /// "resident memory stays over its ceiling after a trim: 700 MiB of 612 MiB (760 MiB before the trim; ...)".
    static func message(_ start: MemoryReclaimerStateMachine.Start) -> String {
        var allocator = ""
        if let inUse = start.allocatorInUse, let free = start.allocatorFree {
            allocator = "; the allocator counts \(mebibytes(inUse)) in use, \(mebibytes(free)) free"
        }
        var line = """
            resident memory stays over its ceiling after a trim: \(mebibytes(start.resident)) of \
            \(mebibytes(start.ceiling)) (\(mebibytes(start.residentBeforeTrim)) before the trim\(allocator)); \
            admission holds work back (one decode at a time, no new download while anything is held) until it is under
            """
        if let unlogged = start.unlogged {
            line += "; \(describe(unlogged)) since the last such line"
        }
        return line
    }

    /// "resident memory is under its ceiling again (590 MiB of 612 MiB): admission held work back for 2.3 s; ...".
    static func message(_ end: MemoryReclaimerStateMachine.End) -> String {
        var line = """
            resident memory is under its ceiling again (\(mebibytes(end.resident)) of \(mebibytes(end.ceiling))): \
            admission held work back for \(seconds(end.lasted)); meanwhile \(end.waited) reservations waited \
            and \(end.refused) were refused
            """
        if let unlogged = end.unlogged {
            line += "; \(describe(unlogged)) since the last line"
        }
        return line
    }

    private static func describe(_ unlogged: MemoryReclaimerStateMachine.Unlogged) -> String {
        let episodes = unlogged.episodes == 1 ? "1 episode" : "\(unlogged.episodes) episodes"
        return """
            \(episodes) not logged held work back for \(seconds(unlogged.held)) in all \
            (\(unlogged.waited) waited, \(unlogged.refused) refused)
            """
    }

    private static func mebibytes(_ bytes: Int) -> String { "\(bytes >> 20) MiB" }

    /// Seconds with one decimal, without String(format:).
    private static func seconds(_ duration: Duration) -> String {
        let (whole, attoseconds) = duration.components
        let tenths = whole * 10 + attoseconds / 100_000_000_000_000_000
        return "\(tenths / 10).\(tenths % 10) s"
    }
}
