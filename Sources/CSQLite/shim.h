// The system SQLite (Debian: libsqlite3-dev). Used by tests to read fixture stores until the SQLite store
// layer (GRDB, issue 5) exists.
#include <sqlite3.h>
