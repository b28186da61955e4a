import Foundation
import NIOCore
import NIOPosix

/// The log lines of one event loop's turn, written together when the turn's I/O is done: the loop
/// answers many requests a turn (each connection's ready request), and one `write(2)` for all their
/// lines costs what one line's did. A line waits at most for the turn to end (microseconds; a
/// crash loses at most those), and a batch past 64 KiB is written at once.
final class LineBatch: @unchecked Sendable {
    // @unchecked: a batch is only touched by the thread that made it (each thread has its own, and
    // its flush runs as a task of that thread's loop).
    private var bytes: [UInt8] = []
    private var descriptor: Int32 = -1
    private var scheduled = false

    /// The calling event loop thread's batch.
    private static let current = ThreadSpecificVariable<LineBatch>()

    /// Adds `line` to the batch of the calling thread, an event loop's; written after the loop's turn.
    static func append(_ line: String, to descriptor: Int32) {
        append(to: descriptor) { $0.append(contentsOf: line.utf8) }
    }

    /// Adds what `write` appends (a line) to the batch of the calling thread, an event loop's.
    static func append(to descriptor: Int32, _ write: (inout [UInt8]) -> Void) {
        let batch: LineBatch
        if let existing = current.currentValue {
            batch = existing
        } else {
            batch = LineBatch()
            batch.bytes.reserveCapacity(64 * 1024)
            current.currentValue = batch
        }
        if batch.descriptor != descriptor {
            batch.flush()
            batch.descriptor = descriptor
        }
        write(&batch.bytes)
        if batch.bytes.count >= 64 * 1024 {
            batch.flush()
        } else if !batch.scheduled, let loop = MultiThreadedEventLoopGroup.currentEventLoop {
            batch.scheduled = true
            // Tasks run after the turn's I/O events, on this thread.
            loop.execute {
                batch.scheduled = false
                batch.flush()
            }
        }
    }

    private func flush() {
        guard !bytes.isEmpty else { return }
        bytes.withUnsafeBufferPointer { ServerLogHandler.write($0, to: descriptor) }
        bytes.removeAll(keepingCapacity: true)
    }

}
