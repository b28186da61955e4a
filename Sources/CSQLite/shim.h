// The system SQLite (libsqlite3-dev), plus the destructor constant that Swift
// cannot import as a macro.
#ifndef IMAGERY_CSQLITE_SHIM_H
#define IMAGERY_CSQLITE_SHIM_H

#include <sqlite3.h>

/// SQLITE_TRANSIENT: SQLite copies bound text and blobs before the call returns.
static inline sqlite3_destructor_type imagery_sqlite_transient(void) {
    return SQLITE_TRANSIENT;
}

#endif
