import Foundation
import Imagery
import Synchronization

/// The progress of a long command on standard error: a bar redrawn in place on a terminal
/// (done/total, failures, bytes, rate, time left), a plain line now and then otherwise.
final class ProgressDisplay: Sendable {
    let total: Int
    let terminal: Bool
    private let lastLine = Mutex("")

    init(total: Int, terminal: Bool) {
        self.total = total
        self.terminal = terminal
    }

    /// Shows `progress` after `elapsed`, `bytes` downloaded so far.
    func show(_ progress: ImagePrefetcher.Progress, bytes: Int, elapsed: Duration) {
        let line = Self.line(progress, total: total, bytes: bytes, elapsed: elapsed, bar: terminal)
        let changed = lastLine.withLock { last in
            defer { last = line }
            return last != line
        }
        guard changed else { return }
        // On a terminal: back to the line's start, the line, and clear what a longer one left.
        FileHandle.standardError.write(Data((terminal ? "\r" + line + "\u{1B}[K" : line + "\n").utf8))
    }

    /// The last state, and the end of the bar's line.
    func finish(_ progress: ImagePrefetcher.Progress, bytes: Int, elapsed: Duration) {
        show(progress, bytes: bytes, elapsed: elapsed)
        if terminal { FileHandle.standardError.write(Data("\n".utf8)) }
    }

    /// `[#####-----] 123/1000 2 failed  45.2 MB  3.1 MB/s  ETA 0:42`
    static func line(_ progress: ImagePrefetcher.Progress, total: Int, bytes: Int, elapsed: Duration, bar: Bool)
        -> String
    {
        let done = progress.completed + progress.failed
        let fraction = total == 0 ? 1 : Double(done) / Double(total)
        let seconds = max(0.001, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
        var parts: [String] = []
        if bar {
            let width = 24
            let filled = min(width, Int(fraction * Double(width)))
            parts.append(
                "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled) + "]")
        }
        parts.append("\(done)/\(total)")
        if progress.failed > 0 { parts.append("\(progress.failed) failed") }
        parts.append("\(ByteCount(bytes))")
        parts.append("\(ByteCount(Int(Double(bytes) / seconds)))/s")
        if done > 0, done < total {
            let left = seconds / Double(done) * Double(total - done)
            parts.append("ETA \(Seconds(.seconds(left)))")
        }
        return parts.joined(separator: "  ")
    }
}

/// Bytes for people: `512 B`, `45.2 KB`, `3.1 MB`, `1.20 GB` (powers of 1000).
struct ByteCount: CustomStringConvertible {
    let bytes: Int
    init(_ bytes: Int) { self.bytes = bytes }

    var description: String {
        let value = Double(bytes)
        switch bytes {
        case ..<1000: return "\(bytes) B"
        case ..<1_000_000: return Self.decimal(value / 1e3, 1) + " KB"
        case ..<1_000_000_000: return Self.decimal(value / 1e6, 1) + " MB"
        default: return Self.decimal(value / 1e9, 2) + " GB"
        }
    }

    /// `value` with `places` decimals (without `String(format:)`).
    static func decimal(_ value: Double, _ places: Int) -> String {
        let scale = places == 1 ? 10.0 : 100.0
        let scaled = Int((value * scale).rounded())
        let whole = scaled / Int(scale)
        let fraction = String(scaled % Int(scale))
        return "\(whole)." + String(repeating: "0", count: places - fraction.count) + fraction
    }
}

/// A duration for people: `0:42`, `12:05`, `1:02:03`.
struct Seconds: CustomStringConvertible {
    let duration: Duration
    init(_ duration: Duration) { self.duration = duration }

    var description: String {
        let total = Int(duration.components.seconds)
        let (hours, minutes, seconds) = (total / 3600, total / 60 % 60, total % 60)
        let padded = { (value: Int) in value < 10 ? "0\(value)" : "\(value)" }
        return hours > 0 ? "\(hours):\(padded(minutes)):\(padded(seconds))" : "\(minutes):\(padded(seconds))"
    }
}
