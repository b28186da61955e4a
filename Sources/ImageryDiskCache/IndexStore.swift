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
        var metadata: CacheMetadata
    }

    package let database: SQLiteDatabase
    private let upsertStatement: SQLiteDatabase.Statement
    private let deleteStatement: SQLiteDatabase.Statement
    private let touchStatement: SQLiteDatabase.Statement
    private let metadataStatement: SQLiteDatabase.Statement

    package init(path: String) throws {
        database = try SQLiteDatabase(path: path)
        try database.execute("""
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
        upsertStatement = try database.prepare("""
            INSERT OR REPLACE INTO entries (key, file_id, size, checksum, stored_at, access_order, content_type, metadata)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """)
        deleteStatement = try database.prepare("DELETE FROM entries WHERE key = ? AND file_id = ?")
        touchStatement = try database.prepare("UPDATE entries SET access_order = ? WHERE key = ?")
        metadataStatement = try database.prepare("UPDATE entries SET metadata = ?, stored_at = ? WHERE key = ? AND file_id = ?")
    }

    /// Every row, least recently used first. Rows whose metadata cannot be read are skipped.
    func loadAll() throws -> [Row] {
        var rows: [Row] = []
        let statement = try database.prepare(
            "SELECT key, file_id, size, checksum, access_order, metadata FROM entries ORDER BY access_order"
        )
        try statement.run { row in
            guard let key = row.text(0), let json = row.text(5),
                  let metadata = try? JSONDecoder().decode(CacheMetadata.self, from: Data(json.utf8))
            else { return }
            rows.append(Row(
                key: key, fileID: UInt64(bitPattern: row.integer(1)), size: Int(row.integer(2)),
                checksum: UInt64(bitPattern: row.integer(3)), accessOrder: row.integer(4), metadata: metadata
            ))
        }
        return rows
    }

    /// One transaction: rows to write, (key, file) pairs to delete, access orders to record, metadata to replace.
    func apply(
        upserts: [Row] = [],
        deletes: [(key: String, fileID: UInt64)] = [],
        touches: [(key: String, order: Int64)] = [],
        metadataUpdates: [(key: String, fileID: UInt64, metadata: CacheMetadata)] = []
    ) throws {
        guard !(upserts.isEmpty && deletes.isEmpty && touches.isEmpty && metadataUpdates.isEmpty) else { return }
        try database.transaction {
            for row in upserts {
                try upsertStatement.run([
                    .text(row.key), .integer(Int64(bitPattern: row.fileID)), .integer(Int64(row.size)),
                    .integer(Int64(bitPattern: row.checksum)), .real(row.metadata.storedAt.timeIntervalSince1970),
                    .integer(row.accessOrder), row.metadata.contentType.map { .text($0) } ?? .null,
                    .text(try Self.json(row.metadata)),
                ])
            }
            for delete in deletes {
                try deleteStatement.run([.text(delete.key), .integer(Int64(bitPattern: delete.fileID))])
            }
            for touch in touches {
                try touchStatement.run([.integer(touch.order), .text(touch.key)])
            }
            for update in metadataUpdates {
                try metadataStatement.run([
                    .text(try Self.json(update.metadata)), .real(update.metadata.storedAt.timeIntervalSince1970),
                    .text(update.key), .integer(Int64(bitPattern: update.fileID)),
                ])
            }
        }
    }

    func deleteAll() throws {
        try database.execute("DELETE FROM entries")
    }

    private static func json(_ metadata: CacheMetadata) throws -> String {
        String(decoding: try JSONEncoder().encode(metadata), as: UTF8.self)
    }
}
