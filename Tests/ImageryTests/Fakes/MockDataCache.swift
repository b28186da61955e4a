import Foundation

@testable import Imagery

/// A ``DataCaching`` in a dictionary, standing for the disk cache: it records every operation the
/// pipeline makes (each an event a test can await: a thumbnail stored in the background, say), and
/// lets a test put entries in and look at them without being recorded.
final class MockDataCache: DataCaching {
    /// What the pipeline asked of the cache.
    enum Operation: Sendable, Equatable {
        case read(String)
        case store(String)
        case updateMetadata(String)
        case remove(String)
        case removeAll
    }

    private let entries = Locked<[String: CacheEntry]>([:])
    /// Every operation, in order.
    let operations = EventLog<Operation>()

    init() {}

    /// The entry for `key`, read or written by the test (not recorded).
    subscript(key: String) -> CacheEntry? {
        get { entries.withLock { $0[key] } }
        set { entries.withLock { $0[key] = newValue } }
    }

    /// The keys held.
    var keys: Set<String> { entries.withLock { Set($0.keys) } }

    /// How many times the pipeline did `operation`.
    func count(_ operation: Operation) -> Int { operations.all.filter { $0 == operation }.count }

    /// How many entries the pipeline stored, all keys together.
    var storeCount: Int { operations.all.filter { if case .store = $0 { true } else { false } }.count }

    /// Returns once the pipeline has stored an entry for `key`.
    func waitForStore(of key: String) async throws {
        try await operations.waitFor("a store of \(key)") { $0 == .store(key) }
    }

    func entry(for key: String) async -> CacheEntry? {
        operations.append(.read(key))
        return self[key]
    }

    func store(_ data: Data, for key: String, metadata: CacheMetadata) async {
        self[key] = CacheEntry(data: data, metadata: metadata)
        operations.append(.store(key))
    }

    func updateMetadata(_ metadata: CacheMetadata, for key: String) async {
        entries.withLock { $0[key]?.metadata = metadata }
        operations.append(.updateMetadata(key))
    }

    func remove(for key: String) async {
        self[key] = nil
        operations.append(.remove(key))
    }

    func removeAll() async {
        entries.withLock { $0.removeAll() }
        operations.append(.removeAll)
    }
}
