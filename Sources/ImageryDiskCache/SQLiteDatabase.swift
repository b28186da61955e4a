import CSQLite
import Foundation

/// A small wrapper over one SQLite connection: execute, prepare, bind, step.
/// Not thread-safe: the disk cache uses it from its single writer thread only.
package final class SQLiteDatabase {
    private var handle: OpaquePointer?

    /// Opens (creating if needed) the database at `path`, in WAL mode.
    package init(path: String) throws {
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        guard sqlite3_open_v2(path, &handle, flags, nil) == SQLITE_OK else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            let code = handle.map { sqlite3_errcode($0) } ?? SQLITE_CANTOPEN
            let systemErrno = handle.map { sqlite3_system_errno($0) }
            sqlite3_close(handle)
            throw SQLiteError(message: "\(path): \(message)", code: code, systemErrno: systemErrno)
        }
        sqlite3_busy_timeout(handle, 5_000)
        try execute("PRAGMA journal_mode = WAL")
        // A kill -9 loses nothing committed with NORMAL in WAL mode; only power loss can roll back the last commits.
        try execute("PRAGMA synchronous = NORMAL")
        // The log is checkpointed every 1 MB (not SQLite's 4 MB) and cut back to 1 MB after: on a small
        // or full filesystem its growth would take the room of entries.
        try execute("PRAGMA wal_autocheckpoint = 256")
        try execute("PRAGMA journal_size_limit = 1048576")
    }

    deinit {
        sqlite3_close_v2(handle)
    }

    package func execute(_ sql: String) throws {
        var error: UnsafeMutablePointer<CChar>?
        guard sqlite3_exec(handle, sql, nil, nil, &error) == SQLITE_OK else {
            let message = error.map { String(cString: $0) } ?? lastError
            sqlite3_free(error)
            throw self.error(message, code: errorCode)
        }
    }

    package func prepare(_ sql: String) throws -> Statement {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw error(lastError, code: errorCode)
        }
        return Statement(statement, database: self)
    }

    /// Runs `body` in one transaction, rolled back if it throws.
    func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    var lastError: String { String(cString: sqlite3_errmsg(handle)) }
    var errorCode: Int32 { sqlite3_errcode(handle) }

    /// The failure `code`, with the system's `errno` when SQLite's was an I/O failure.
    func error(_ message: String, code: Int32) -> SQLiteError {
        let systemErrno = sqlite3_system_errno(handle)
        return SQLiteError(message: message, code: code, systemErrno: systemErrno == 0 ? nil : systemErrno)
    }

    /// A prepared statement; reset and reused.
    package final class Statement {
        private let statement: OpaquePointer
        private unowned let database: SQLiteDatabase

        init(_ statement: OpaquePointer, database: SQLiteDatabase) {
            self.statement = statement
            self.database = database
        }

        deinit {
            sqlite3_finalize(statement)
        }

        /// Binds `values` to the parameters in order (after resetting), runs to
        /// completion, and returns each row through `row`.
        package func run(_ values: [Value] = [], row: ((Row) throws -> Void)? = nil) throws {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
            for (offset, value) in values.enumerated() {
                let index = Int32(offset + 1)
                let status: Int32 =
                    switch value {
                    case .integer(let integer): sqlite3_bind_int64(statement, index, integer)
                    case .real(let real): sqlite3_bind_double(statement, index, real)
                    case .text(let text): sqlite3_bind_text(statement, index, text, -1, imagery_sqlite_transient())
                    case .null: sqlite3_bind_null(statement, index)
                    }
                guard status == SQLITE_OK else { throw database.error(database.lastError, code: status) }
            }
            while true {
                switch sqlite3_step(statement) {
                case SQLITE_ROW: try row?(Row(statement: statement))
                case SQLITE_DONE: return
                case let status: throw database.error(database.lastError, code: status)
                }
            }
        }
    }

    /// One result row: columns by index.
    package struct Row {
        let statement: OpaquePointer

        func integer(_ column: Int32) -> Int64 { sqlite3_column_int64(statement, column) }
        func real(_ column: Int32) -> Double { sqlite3_column_double(statement, column) }
        func text(_ column: Int32) -> String? {
            sqlite3_column_text(statement, column).map { String(cString: $0) }
        }
    }

    package enum Value {
        case integer(Int64)
        case real(Double)
        case text(String)
        case null
    }
}

/// An SQLite failure, with SQLite's message and result code.
struct SQLiteError: Error, CustomStringConvertible {
    let message: String
    /// SQLite's result code (`SQLITE_FULL`, `SQLITE_READONLY`, ...), extended codes included.
    let code: Int32
    /// The system's `errno` behind an I/O failure, if SQLite kept one.
    var systemErrno: Int32? = nil
    var description: String { "SQLite: \(message)" }
}
