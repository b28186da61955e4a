import Foundation
import Imagery

/// The disk cache's persistent index: one SQLite row per entry. Used from the
/// cache's single writer thread only; reads never touch it (the cache keeps the
/// index in memory, loaded from here at open).
package final class IndexStore {
    struct Row {
        var key: String
        var fileID: UInt64
        var size: Int
        var checksum: UInt64
        var accessOrder: Int64
        /// The entry's place in the eviction order (``EntryIndex``): lower goes first.
        var priority: Int64
        var metadata: CacheMetadata
    }

    package let database: SQLiteDatabase
    private let upsertStatement: SQLiteDatabase.Statement
    private let deleteStatement: SQLiteDatabase.Statement
    private let touchStatement: SQLiteDatabase.Statement
    private let metadataStatement: SQLiteDatabase.Statement

    package init(path: String) throws {
        database = try SQLiteDatabase(path: path)
        try database.execute(
            """
            CREATE TABLE IF NOT EXISTS entries (
                key TEXT PRIMARY KEY NOT NULL,
                file_id INTEGER NOT NULL,
                size INTEGER NOT NULL,
                checksum INTEGER NOT NULL,
                stored_at REAL NOT NULL,
                access_order INTEGER NOT NULL,
                content_type TEXT,
                metadata TEXT NOT NULL
            );
            CREATE INDEX IF NOT EXISTS entries_by_access ON entries(access_order);
            """)
        // Indexes written before eviction was size-aware have no priority: theirs is 0 (first to go).
        var hasPriority = false
        try database.prepare("PRAGMA table_info(entries)").run { row in
            hasPriority = hasPriority || row.text(1) == "priority"
        }
        if !hasPriority { try database.execute("ALTER TABLE entries ADD COLUMN priority INTEGER NOT NULL DEFAULT 0") }
        upsertStatement = try database.prepare(
            """
            INSERT OR REPLACE INTO entries (key, file_id, size, checksum, stored_at, access_order, content_type, metadata, priority)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        deleteStatement = try database.prepare("DELETE FROM entries WHERE key = ? AND file_id = ?")
        touchStatement = try database.prepare("UPDATE entries SET access_order = ?, priority = ? WHERE key = ?")
        metadataStatement = try database.prepare(
            "UPDATE entries SET metadata = ?, stored_at = ? WHERE key = ? AND file_id = ?")
    }

    private static let columns = "key, file_id, size, checksum, access_order, priority, metadata"

    /// Every row, first to be evicted first. Rows whose metadata cannot be read are skipped.
    func loadAll() throws -> [Row] {
        var rows: [Row] = []
        try database.prepare("SELECT \(Self.columns) FROM entries ORDER BY priority, access_order").run { row in
            if let row = Self.row(row) { rows.append(row) }
        }
        return rows
    }

    /// The rows a damaged database still gives: the table read from its start up to the first
    /// damaged page, then from its end back to the last one. (SQLite stops a query at the first
    /// page it cannot read; the index by access order may be the damaged part, so it is not used.)
    /// - Returns: The rows in eviction order, and SQLite's message for the damage.
    func salvage() -> (rows: [Row], damage: String?) {
        var rows: [String: Row] = [:]
        var damage: String?
        for order in ["ASC", "DESC"] {
            do {
                try database.prepare("SELECT \(Self.columns) FROM entries ORDER BY rowid \(order)").run { row in
                    if let row = Self.row(row), rows[row.key] == nil { rows[row.key] = row }
                }
            } catch {
                damage = damage ?? "\(error)"
            }
        }
        return (rows.values.sorted { ($0.priority, $0.accessOrder) < ($1.priority, $1.accessOrder) }, damage)
    }

    /// SQLite's own check of every page and index (`PRAGMA quick_check`): nil when sound, else its first complaint.
    func damage() -> String? {
        var result: String?
        do {
            try database.prepare("PRAGMA quick_check(1)").run { row in result = row.text(0) }
        } catch {
            return "\(error)"
        }
        return result == "ok" ? nil : result ?? "no answer"
    }

    private static func row(_ row: SQLiteDatabase.Row) -> Row? {
        guard let key = row.text(0), let json = row.text(6),
            let metadata = try? JSONDecoder().decode(CacheMetadata.self, from: Data(json.utf8))
        else { return nil }
        return Row(
            key: key, fileID: UInt64(bitPattern: row.integer(1)), size: Int(row.integer(2)),
            checksum: UInt64(bitPattern: row.integer(3)), accessOrder: row.integer(4), priority: row.integer(5),
            metadata: metadata
        )
    }

    /// One transaction: rows to write, (key, file) pairs to delete, access orders to record, metadata to replace.
    func apply(
        upserts: [Row] = [],
        deletes: [(key: String, fileID: UInt64)] = [],
        touches: [(key: String, order: Int64, priority: Int64)] = [],
        metadataUpdates: [(key: String, fileID: UInt64, metadata: CacheMetadata)] = []
    ) throws {
        guard !(upserts.isEmpty && deletes.isEmpty && touches.isEmpty && metadataUpdates.isEmpty) else { return }
        try database.transaction {
            try write(upserts: upserts, deletes: deletes, touches: touches, metadataUpdates: metadataUpdates)
        }
    }

    private func write(
        upserts: [Row],
        deletes: [(key: String, fileID: UInt64)] = [],
        touches: [(key: String, order: Int64, priority: Int64)] = [],
        metadataUpdates: [(key: String, fileID: UInt64, metadata: CacheMetadata)] = []
    ) throws {
        for row in upserts {
            try upsertStatement.run([
                .text(row.key), .integer(Int64(bitPattern: row.fileID)), .integer(Int64(row.size)),
                .integer(Int64(bitPattern: row.checksum)), .real(row.metadata.storedAt.timeIntervalSince1970),
                .integer(row.accessOrder), row.metadata.contentType.map { .text($0) } ?? .null,
                .text(try Self.json(row.metadata)), .integer(row.priority),
            ])
        }
        for delete in deletes {
            try deleteStatement.run([.text(delete.key), .integer(Int64(bitPattern: delete.fileID))])
        }
        for touch in touches {
            try touchStatement.run([.integer(touch.order), .integer(touch.priority), .text(touch.key)])
        }
        for update in metadataUpdates {
            try metadataStatement.run([
                .text(try Self.json(update.metadata)), .real(update.metadata.storedAt.timeIntervalSince1970),
                .text(update.key), .integer(Int64(bitPattern: update.fileID)),
            ])
        }
    }

    func deleteAll() throws {
        try database.execute("DELETE FROM entries")
    }

    /// Makes the table exactly `rows`, in one transaction: after writes to it failed (a full or
    /// read-only disk), the entries in memory are the truth.
    func replaceAll(with rows: [Row]) throws {
        try database.transaction {
            try database.execute("DELETE FROM entries")
            try write(upserts: rows)
        }
    }

    private static func json(_ metadata: CacheMetadata) throws -> String {
        String(decoding: try JSONEncoder().encode(metadata), as: UTF8.self)
    }
}
