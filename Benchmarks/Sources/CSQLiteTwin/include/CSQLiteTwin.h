// The raw-SQLite twin of the store benchmarks (issue 6): each workload written directly on the system
// SQLite's C API, on Core Data's schema (Z_PK, Z_ENT, Z_OPT, Z<ATTRIBUTE> columns, Z_PRIMARYKEY.Z_MAX),
// with prepared statements and one transaction per save. The files it works on are copies of stores that
// OpenCoreData created, so the tables, indexes and metadata are Core Data's.
#ifndef CSQLITETWIN_H
#define CSQLITETWIN_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// What a workload saw: compared with the expected values on every side.
typedef struct {
    int64_t count;
    int64_t first;
    int64_t last;
    int64_t checksum;
} twin_outcome;

typedef struct twin twin;

/// Opens `path` with `PRAGMA journal_mode = WAL` and `PRAGMA synchronous = <synchronous>` (OFF, NORMAL,
/// FULL). Returns NULL and prints SQLite's message on failure.
twin *twin_open(const char *path, const char *synchronous);
void twin_close(twin *t);
/// Runs SQL (e.g. `PRAGMA wal_checkpoint(TRUNCATE)`); 1 on success.
int twin_exec(twin *t, const char *sql);
/// The last error message, or "" (for the Swift side's reports).
const char *twin_error(twin *t);

/// Z_ENT of an entity, read from Z_PRIMARYKEY (-1 when missing).
int64_t twin_entity_number(twin *t, const char *entity_name);

// Item: ZITEM with ZI0 … ZI9 (Integer 64). Item k (0-based) has ZIj = k * 16 + j.

/// Inserts items first_index ..< first_index + n in one transaction: Z_PK from Z_MAX, which is raised
/// in the same transaction. Outcome: n, ZI0 of the first and last, the sum of the ZI0 written
/// (the keys' order is each side's business; the file summary checks what was stored).
twin_outcome twin_insert_items(twin *t, int64_t first_index, int64_t n);
/// `saves` transactions of one item each (items first_index …).
twin_outcome twin_insert_items_separately(twin *t, int64_t first_index, int64_t saves);
/// SELECT Z_PK, Z_ENT, Z_OPT, ZI0 … ZI9 FROM ZITEM into an array of structs (the realized objects), then
/// reads every attribute. Outcome: count, ZI0 of the first and last row, sum of (j + 1) * ZIj.
twin_outcome twin_fetch_items(twin *t);
/// The same, reading only ZI0 of each realized row (the "fire every fault" twin).
twin_outcome twin_fetch_items_touch_first(twin *t);
/// SELECT ZI0 … ZI9 only (the dictionary-result twin). Same outcome as twin_fetch_items.
twin_outcome twin_fetch_item_values(twin *t);
/// SELECT Z_PK only (the object-ID twin). Outcome: count, first and last Z_PK, checksum = count.
twin_outcome twin_fetch_item_keys(twin *t);
/// SELECT COUNT(*). Outcome: count in every field but checksum (= count).
twin_outcome twin_count_items(twin *t);
/// Reads every item, then in one transaction UPDATE ZITEM SET ZI0 = ZI0 + 1, Z_OPT = Z_OPT + 1 WHERE
/// Z_PK = ? AND Z_OPT = ? per row (Core Data's optimistic locking). Outcome: rows updated, the new ZI0
/// of the first and last, the sum of the new ZI0.
twin_outcome twin_update_items(twin *t);
/// Reads Z_PK, Z_OPT of every item, then in one transaction DELETE … WHERE Z_PK = ? AND Z_OPT = ? per row.
/// Outcome: rows deleted, first and last Z_PK, sum of Z_PK.
twin_outcome twin_delete_items(twin *t);
/// What the file holds (for checking every side after it wrote): count, MIN(ZI0), MAX(ZI0), sum of
/// (j + 1) * ZIj; computed by SQL.
twin_outcome twin_item_summary(twin *t);

/// Loads every item into an array indexed by Z_PK (the registered objects of the existingObject twin).
int twin_load_registry(twin *t);
/// Looks up each of `n` keys in the loaded registry and sums their ZI0 (count = found).
twin_outcome twin_lookup_registry(twin *t, const int64_t *keys, int64_t n);

// Person and IndexedPerson: ZNAME (String) and ZAGE (Integer 64); IndexedPerson has an index on (name, age).

/// Inserts n people in one transaction: name names[k % name_count], age 18 + (k * 7) % 63.
twin_outcome twin_insert_people(twin *t, const char *table, const char *entity_name, const char *const *names,
                                int64_t name_count, int64_t n);
/// SELECT Z_PK, Z_ENT, Z_OPT, ZNAME, ZAGE FROM <table> WHERE ZNAME = ? ORDER BY ZAGE, into structs.
/// Outcome: count, first and last age, sum of ages (-1 if the ages are not in order).
twin_outcome twin_fetch_people_named(twin *t, const char *table, const char *name);

// Graph: Author 1-N Book N-M Tag. Author a (1-based Z_PK) has books (a-1)*per+0 … ; book b (0-based) is
// "Book b", year 1900 + b % 120, tagged with tags (b + m * 31) % tags for m = 0, 1, 2; tag k has rank k.

/// Fills the graph in one transaction (Z_MAX raised). Outcome: books, authors, -, tags (count, first, last).
twin_outcome twin_insert_graph(twin *t, int64_t authors, int64_t books_per_author, int64_t tags);
/// Reads every author, each author's books and each book's tags (strings copied, as realized objects), and
/// visits every (author, book, tag): with `prefetch`, in three bulk reads; without, one query per author
/// and one per book, as faults fire. Outcome: visits, authors, 0, sum of book year + tag rank per visit.
twin_outcome twin_traverse_graph(twin *t, int prefetch);
/// Deletes every author and, by cascade, its books (join rows first), with Core Data's Z_OPT checks, and
/// raises the tags' Z_OPT, in one transaction. Outcome: books, authors, books, books + authors.
twin_outcome twin_cascade_delete_graph(twin *t);
/// What the file holds: books, authors, join rows, tags.
twin_outcome twin_graph_summary(twin *t);

/// Makes stdout line-buffered (the harness's progress appears as it happens, even in a pipe).
void twin_line_buffered_stdout(void);

/// Bytes malloc has handed out (mallinfo2: in-use small blocks plus mmapped blocks), for memory per object.
int64_t twin_allocated_bytes(void);

#ifdef __cplusplus
}
#endif
#endif
