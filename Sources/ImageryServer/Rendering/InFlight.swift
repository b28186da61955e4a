import Foundation

/// One computation per key at a time; concurrent callers share its result.
final class InFlight<Value: Sendable>: @unchecked Sendable {
    // @unchecked: `tasks` is guarded by `lock`.
    private let lock = NSLock()
    private var tasks: [String: Task<Value, any Error>] = [:]

    func value(for key: String, _ compute: @escaping @Sendable () async throws -> Value) async throws -> Value {
        let task = lock.withLock {
            if let existing = tasks[key] { return existing }
            let task = Task { try await compute() }
            tasks[key] = task
            return task
        }
        defer { lock.withLock { if tasks[key] == task { tasks[key] = nil } } }
        return try await task.value
    }
}
