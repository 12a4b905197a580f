#include "CSQLiteTwin.h"

#include <malloc.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct twin {
    sqlite3 *db;
    char error[512];
    int64_t item_entity;
    // The existingObject twin's registry: rows indexed by Z_PK.
    int64_t *registry_i0;
    int64_t registry_size;
};

typedef struct {
    int64_t pk, ent, opt;
    int64_t i[10];
} item_row;

static int fail(twin *t, const char *what) {
    snprintf(t->error, sizeof t->error, "%s: %s", what, sqlite3_errmsg(t->db));
    return 0;
}

static int exec(twin *t, const char *sql) {
    char *message = NULL;
    if (sqlite3_exec(t->db, sql, NULL, NULL, &message) != SQLITE_OK) {
        snprintf(t->error, sizeof t->error, "%s: %s", sql, message ? message : "?");
        sqlite3_free(message);
        return 0;
    }
    return 1;
}

static sqlite3_stmt *prepare(twin *t, const char *sql) {
    sqlite3_stmt *statement = NULL;
    if (sqlite3_prepare_v2(t->db, sql, -1, &statement, NULL) != SQLITE_OK) {
        fail(t, sql);
        return NULL;
    }
    return statement;
}

static const twin_outcome failed = {-1, -1, -1, -1};

twin *twin_open(const char *path, const char *synchronous) {
    twin *t = calloc(1, sizeof *t);
    /* NOMUTEX, as OpenCoreData's connection opens: one thread uses the twin, and the default (serialized)
       mode would lock a mutex around every sqlite3_* call, slowing the twin and flattering the ratios. */
    if (sqlite3_open_v2(path, &t->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
        fprintf(stderr, "twin_open %s: %s\n", path, sqlite3_errmsg(t->db));
        sqlite3_close(t->db);
        free(t);
        return NULL;
    }
    char pragma[128];
    snprintf(pragma, sizeof pragma, "PRAGMA journal_mode = WAL; PRAGMA synchronous = %s;", synchronous);
    if (!exec(t, pragma)) {
        fprintf(stderr, "twin_open: %s\n", t->error);
        twin_close(t);
        return NULL;
    }
    t->item_entity = twin_entity_number(t, "Item");
    return t;
}

void twin_close(twin *t) {
    if (!t) return;
    free(t->registry_i0);
    sqlite3_close(t->db);
    free(t);
}

int twin_exec(twin *t, const char *sql) { return exec(t, sql); }

const char *twin_error(twin *t) { return t ? t->error : "no twin"; }

int64_t twin_entity_number(twin *t, const char *entity_name) {
    sqlite3_stmt *s = prepare(t, "SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = ?");
    if (!s) return -1;
    sqlite3_bind_text(s, 1, entity_name, -1, SQLITE_STATIC);
    int64_t result = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : -1;
    sqlite3_finalize(s);
    return result;
}

/// Reads Z_MAX of `entity`: call inside the transaction.
static int64_t read_max(twin *t, int64_t entity) {
    sqlite3_stmt *s = prepare(t, "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = ?");
    if (!s) return -1;
    sqlite3_bind_int64(s, 1, entity);
    int64_t result = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : -1;
    sqlite3_finalize(s);
    return result;
}

static int write_max(twin *t, int64_t entity, int64_t max) {
    sqlite3_stmt *s = prepare(t, "UPDATE Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_ENT = ?");
    if (!s) return 0;
    sqlite3_bind_int64(s, 1, max);
    sqlite3_bind_int64(s, 2, entity);
    int ok = sqlite3_step(s) == SQLITE_DONE;
    sqlite3_finalize(s);
    return ok || fail(t, "UPDATE Z_PRIMARYKEY");
}

static const char *insert_item_sql =
    "INSERT INTO ZITEM (Z_PK, Z_ENT, Z_OPT, ZI0, ZI1, ZI2, ZI3, ZI4, ZI5, ZI6, ZI7, ZI8, ZI9) "
    "VALUES (?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";

static int insert_item(twin *t, sqlite3_stmt *s, int64_t pk, int64_t index) {
    sqlite3_bind_int64(s, 1, pk);
    sqlite3_bind_int64(s, 2, t->item_entity);
    for (int j = 0; j < 10; j++) sqlite3_bind_int64(s, 3 + j, index * 16 + j);
    int ok = sqlite3_step(s) == SQLITE_DONE;
    sqlite3_reset(s);
    return ok || fail(t, "INSERT INTO ZITEM");
}

twin_outcome twin_insert_items(twin *t, int64_t first_index, int64_t n) {
    twin_outcome outcome = {0, 0, 0, 0};
    if (!exec(t, "BEGIN IMMEDIATE")) return failed;
    int64_t max = read_max(t, t->item_entity);
    sqlite3_stmt *s = prepare(t, insert_item_sql);
    if (max < 0 || !s) { exec(t, "ROLLBACK"); return failed; }
    for (int64_t k = 0; k < n; k++) {
        int64_t pk = max + 1 + k;
        if (!insert_item(t, s, pk, first_index + k)) { sqlite3_finalize(s); exec(t, "ROLLBACK"); return failed; }
        if (k == 0) outcome.first = (first_index + k) * 16;
        outcome.last = (first_index + k) * 16;
        outcome.checksum += (first_index + k) * 16;
        outcome.count++;
    }
    sqlite3_finalize(s);
    if (!write_max(t, t->item_entity, max + n) || !exec(t, "COMMIT")) { exec(t, "ROLLBACK"); return failed; }
    return outcome;
}

twin_outcome twin_insert_items_separately(twin *t, int64_t first_index, int64_t saves) {
    twin_outcome outcome = {0, 0, 0, 0};
    sqlite3_stmt *s = prepare(t, insert_item_sql);
    sqlite3_stmt *read = prepare(t, "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = ?");
    sqlite3_stmt *write = prepare(t, "UPDATE Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_ENT = ?");
    if (!s || !read || !write) return failed;
    for (int64_t k = 0; k < saves; k++) {
        if (!exec(t, "BEGIN IMMEDIATE")) return failed;
        sqlite3_bind_int64(read, 1, t->item_entity);
        int64_t max = sqlite3_step(read) == SQLITE_ROW ? sqlite3_column_int64(read, 0) : -1;
        sqlite3_reset(read);
        int64_t pk = max + 1;
        sqlite3_bind_int64(write, 1, pk);
        sqlite3_bind_int64(write, 2, t->item_entity);
        int ok = max >= 0 && sqlite3_step(write) == SQLITE_DONE;
        sqlite3_reset(write);
        if (!ok || !insert_item(t, s, pk, first_index + k) || !exec(t, "COMMIT")) { exec(t, "ROLLBACK"); return failed; }
        if (k == 0) outcome.first = (first_index + k) * 16;
        outcome.last = (first_index + k) * 16;
        outcome.checksum += (first_index + k) * 16;
        outcome.count++;
    }
    sqlite3_finalize(s);
    sqlite3_finalize(read);
    sqlite3_finalize(write);
    return outcome;
}

/// Every row of ZITEM as structs; *count set. NULL on failure.
static item_row *read_items(twin *t, int64_t *count) {
    sqlite3_stmt *s = prepare(t, "SELECT Z_PK, Z_ENT, Z_OPT, ZI0, ZI1, ZI2, ZI3, ZI4, ZI5, ZI6, ZI7, ZI8, ZI9 FROM ZITEM");
    if (!s) return NULL;
    int64_t capacity = 1024, n = 0;
    item_row *rows = malloc(capacity * sizeof *rows);
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (n == capacity) { capacity *= 2; rows = realloc(rows, capacity * sizeof *rows); }
        item_row *row = &rows[n++];
        row->pk = sqlite3_column_int64(s, 0);
        row->ent = sqlite3_column_int64(s, 1);
        row->opt = sqlite3_column_int64(s, 2);
        for (int j = 0; j < 10; j++) row->i[j] = sqlite3_column_int64(s, 3 + j);
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) { free(rows); fail(t, "SELECT FROM ZITEM"); return NULL; }
    *count = n;
    return rows;
}

twin_outcome twin_fetch_items(twin *t) {
    int64_t n = 0;
    item_row *rows = read_items(t, &n);
    if (!rows) return failed;
    twin_outcome outcome = {n, n ? rows[0].i[0] : 0, n ? rows[n - 1].i[0] : 0, 0};
    for (int64_t k = 0; k < n; k++)
        for (int j = 0; j < 10; j++) outcome.checksum += (j + 1) * rows[k].i[j];
    free(rows);
    return outcome;
}

twin_outcome twin_fetch_items_touch_first(twin *t) {
    int64_t n = 0;
    item_row *rows = read_items(t, &n);
    if (!rows) return failed;
    twin_outcome outcome = {n, n ? rows[0].i[0] : 0, n ? rows[n - 1].i[0] : 0, 0};
    for (int64_t k = 0; k < n; k++) outcome.checksum += rows[k].i[0];
    free(rows);
    return outcome;
}

twin_outcome twin_fetch_item_values(twin *t) {
    sqlite3_stmt *s = prepare(t, "SELECT ZI0, ZI1, ZI2, ZI3, ZI4, ZI5, ZI6, ZI7, ZI8, ZI9 FROM ZITEM");
    if (!s) return failed;
    twin_outcome outcome = {0, 0, 0, 0};
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        int64_t values[10];
        for (int j = 0; j < 10; j++) values[j] = sqlite3_column_int64(s, j);
        if (outcome.count == 0) outcome.first = values[0];
        outcome.last = values[0];
        for (int j = 0; j < 10; j++) outcome.checksum += (j + 1) * values[j];
        outcome.count++;
    }
    sqlite3_finalize(s);
    return rc == SQLITE_DONE ? outcome : failed;
}

twin_outcome twin_fetch_item_keys(twin *t) {
    sqlite3_stmt *s = prepare(t, "SELECT Z_PK FROM ZITEM");
    if (!s) return failed;
    int64_t capacity = 1024, n = 0;
    int64_t *keys = malloc(capacity * sizeof *keys);
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (n == capacity) { capacity *= 2; keys = realloc(keys, capacity * sizeof *keys); }
        keys[n++] = sqlite3_column_int64(s, 0);
    }
    sqlite3_finalize(s);
    twin_outcome outcome = {n, n ? keys[0] : 0, n ? keys[n - 1] : 0, n};
    free(keys);
    return rc == SQLITE_DONE ? outcome : failed;
}

twin_outcome twin_count_items(twin *t) {
    sqlite3_stmt *s = prepare(t, "SELECT COUNT(*) FROM ZITEM");
    if (!s) return failed;
    int64_t n = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : -1;
    sqlite3_finalize(s);
    twin_outcome outcome = {n, n, n, n};
    return outcome;
}

twin_outcome twin_update_items(twin *t) {
    int64_t n = 0;
    item_row *rows = read_items(t, &n);
    if (!rows) return failed;
    twin_outcome outcome = {0, 0, 0, 0};
    if (!exec(t, "BEGIN IMMEDIATE")) { free(rows); return failed; }
    sqlite3_stmt *s = prepare(t, "UPDATE ZITEM SET Z_OPT = ?, ZI0 = ? WHERE Z_PK = ? AND Z_OPT = ?");
    if (!s) { free(rows); exec(t, "ROLLBACK"); return failed; }
    for (int64_t k = 0; k < n; k++) {
        int64_t value = rows[k].i[0] + 1;
        sqlite3_bind_int64(s, 1, rows[k].opt + 1);
        sqlite3_bind_int64(s, 2, value);
        sqlite3_bind_int64(s, 3, rows[k].pk);
        sqlite3_bind_int64(s, 4, rows[k].opt);
        int ok = sqlite3_step(s) == SQLITE_DONE && sqlite3_changes(t->db) == 1;
        sqlite3_reset(s);
        if (!ok) { fail(t, "UPDATE ZITEM"); sqlite3_finalize(s); free(rows); exec(t, "ROLLBACK"); return failed; }
        if (k == 0) outcome.first = value;
        outcome.last = value;
        outcome.checksum += value;
        outcome.count++;
    }
    sqlite3_finalize(s);
    free(rows);
    if (!exec(t, "COMMIT")) { exec(t, "ROLLBACK"); return failed; }
    return outcome;
}

twin_outcome twin_delete_items(twin *t) {
    sqlite3_stmt *read = prepare(t, "SELECT Z_PK, Z_OPT FROM ZITEM");
    if (!read) return failed;
    int64_t capacity = 1024, n = 0;
    int64_t *keys = malloc(2 * capacity * sizeof *keys);
    while (sqlite3_step(read) == SQLITE_ROW) {
        if (n == capacity) { capacity *= 2; keys = realloc(keys, 2 * capacity * sizeof *keys); }
        keys[2 * n] = sqlite3_column_int64(read, 0);
        keys[2 * n + 1] = sqlite3_column_int64(read, 1);
        n++;
    }
    sqlite3_finalize(read);
    twin_outcome outcome = {0, 0, 0, 0};
    if (!exec(t, "BEGIN IMMEDIATE")) { free(keys); return failed; }
    sqlite3_stmt *s = prepare(t, "DELETE FROM ZITEM WHERE Z_PK = ? AND Z_OPT = ?");
    if (!s) { free(keys); exec(t, "ROLLBACK"); return failed; }
    for (int64_t k = 0; k < n; k++) {
        sqlite3_bind_int64(s, 1, keys[2 * k]);
        sqlite3_bind_int64(s, 2, keys[2 * k + 1]);
        int ok = sqlite3_step(s) == SQLITE_DONE && sqlite3_changes(t->db) == 1;
        sqlite3_reset(s);
        if (!ok) { fail(t, "DELETE FROM ZITEM"); sqlite3_finalize(s); free(keys); exec(t, "ROLLBACK"); return failed; }
        if (k == 0) outcome.first = keys[0];
        outcome.last = keys[2 * k];
        outcome.checksum += keys[2 * k];
        outcome.count++;
    }
    sqlite3_finalize(s);
    free(keys);
    if (!exec(t, "COMMIT")) { exec(t, "ROLLBACK"); return failed; }
    return outcome;
}

twin_outcome twin_item_summary(twin *t) {
    sqlite3_stmt *s = prepare(t,
        "SELECT COUNT(*), "
        "MIN(ZI0), MAX(ZI0), "
        "TOTAL(ZI0 + 2 * ZI1 + 3 * ZI2 + 4 * ZI3 + 5 * ZI4 + 6 * ZI5 + 7 * ZI6 + 8 * ZI7 + 9 * ZI8 + 10 * ZI9) "
        "FROM ZITEM");
    if (!s) return failed;
    twin_outcome outcome = failed;
    if (sqlite3_step(s) == SQLITE_ROW) {
        outcome.count = sqlite3_column_int64(s, 0);
        outcome.first = sqlite3_column_int64(s, 1);
        outcome.last = sqlite3_column_int64(s, 2);
        outcome.checksum = (int64_t)sqlite3_column_double(s, 3);
    }
    sqlite3_finalize(s);
    return outcome;
}

int twin_load_registry(twin *t) {
    int64_t n = 0;
    item_row *rows = read_items(t, &n);
    if (!rows) return 0;
    int64_t size = 0;
    for (int64_t k = 0; k < n; k++) if (rows[k].pk + 1 > size) size = rows[k].pk + 1;
    free(t->registry_i0);
    t->registry_i0 = malloc((size ? size : 1) * sizeof(int64_t));
    for (int64_t k = 0; k < size; k++) t->registry_i0[k] = INT64_MIN;
    for (int64_t k = 0; k < n; k++) t->registry_i0[rows[k].pk] = rows[k].i[0];
    t->registry_size = size;
    free(rows);
    return 1;
}

twin_outcome twin_lookup_registry(twin *t, const int64_t *keys, int64_t n) {
    twin_outcome outcome = {0, 0, 0, 0};
    for (int64_t k = 0; k < n; k++) {
        int64_t key = keys[k];
        if (key < 0 || key >= t->registry_size || t->registry_i0[key] == INT64_MIN) continue;
        int64_t value = t->registry_i0[key];
        if (outcome.count == 0) outcome.first = value;
        outcome.last = value;
        outcome.checksum += value;
        outcome.count++;
    }
    return outcome;
}

twin_outcome twin_insert_people(twin *t, const char *table, const char *entity_name, const char *const *names,
                                int64_t name_count, int64_t n) {
    int64_t entity = twin_entity_number(t, entity_name);
    char sql[256];
    snprintf(sql, sizeof sql, "INSERT INTO %s (Z_PK, Z_ENT, Z_OPT, ZNAME, ZAGE) VALUES (?, ?, 1, ?, ?)", table);
    if (entity < 0 || !exec(t, "BEGIN IMMEDIATE")) return failed;
    int64_t max = read_max(t, entity);
    sqlite3_stmt *s = prepare(t, sql);
    if (max < 0 || !s) { exec(t, "ROLLBACK"); return failed; }
    twin_outcome outcome = {0, 0, 0, 0};
    for (int64_t k = 0; k < n; k++) {
        int64_t age = 18 + (k * 7) % 63;
        sqlite3_bind_int64(s, 1, max + 1 + k);
        sqlite3_bind_int64(s, 2, entity);
        sqlite3_bind_text(s, 3, names[k % name_count], -1, SQLITE_STATIC);
        sqlite3_bind_int64(s, 4, age);
        int ok = sqlite3_step(s) == SQLITE_DONE;
        sqlite3_reset(s);
        if (!ok) { fail(t, sql); sqlite3_finalize(s); exec(t, "ROLLBACK"); return failed; }
        outcome.count++;
        outcome.checksum += age;
    }
    sqlite3_finalize(s);
    if (!write_max(t, entity, max + n) || !exec(t, "COMMIT")) { exec(t, "ROLLBACK"); return failed; }
    return outcome;
}

typedef struct {
    int64_t pk, ent, opt, age;
    char *name;
} person_row;

twin_outcome twin_fetch_people_named(twin *t, const char *table, const char *name) {
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT Z_PK, Z_ENT, Z_OPT, ZNAME, ZAGE FROM %s WHERE ZNAME = ? ORDER BY ZAGE", table);
    sqlite3_stmt *s = prepare(t, sql);
    if (!s) return failed;
    sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
    int64_t capacity = 256, n = 0;
    person_row *rows = malloc(capacity * sizeof *rows);
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (n == capacity) { capacity *= 2; rows = realloc(rows, capacity * sizeof *rows); }
        person_row *row = &rows[n++];
        row->pk = sqlite3_column_int64(s, 0);
        row->ent = sqlite3_column_int64(s, 1);
        row->opt = sqlite3_column_int64(s, 2);
        row->name = strdup((const char *)sqlite3_column_text(s, 3));
        row->age = sqlite3_column_int64(s, 4);
    }
    sqlite3_finalize(s);
    twin_outcome outcome = {n, n ? rows[0].age : 0, n ? rows[n - 1].age : 0, 0};
    int sorted = 1;
    for (int64_t k = 0; k < n; k++) {
        if (k > 0 && rows[k].age < rows[k - 1].age) sorted = 0;
        if (strcmp(rows[k].name, name) != 0) sorted = 0;
        outcome.checksum += rows[k].age;
        free(rows[k].name);
    }
    free(rows);
    if (!sorted) outcome.checksum = -1;
    return rc == SQLITE_DONE ? outcome : failed;
}

int64_t twin_allocated_bytes(void) {
    struct mallinfo2 info = mallinfo2();
    return (int64_t)(info.uordblks + info.hblkhd);
}

// MARK: Graph: Author 1-N Book N-M Tag (ZAUTHOR, ZBOOK with ZAUTHOR, ZTAG, and Core Data's join table).

typedef struct {
    int64_t author_entity, book_entity, tag_entity;
    char join_table[64], join_book[64], join_tag[64];
} graph_names;

/// Entity numbers from Z_PRIMARYKEY; the join table and its two columns from the schema (the one ending
/// in BOOKS holds the book's key), so the twin never guesses Core Data's numbering.
static int graph_discover(twin *t, graph_names *g) {
    g->author_entity = twin_entity_number(t, "Author");
    g->book_entity = twin_entity_number(t, "Book");
    g->tag_entity = twin_entity_number(t, "Tag");
    if (g->author_entity < 0 || g->book_entity < 0 || g->tag_entity < 0) { snprintf(t->error, sizeof t->error, "no graph entities"); return 0; }
    sqlite3_stmt *s = prepare(t, "SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB 'Z_[0-9]*TAGS'");
    if (!s) return 0;
    int found = sqlite3_step(s) == SQLITE_ROW;
    if (found) snprintf(g->join_table, sizeof g->join_table, "%s", (const char *)sqlite3_column_text(s, 0));
    sqlite3_finalize(s);
    if (!found) { snprintf(t->error, sizeof t->error, "no join table"); return 0; }
    char sql[160];
    snprintf(sql, sizeof sql, "SELECT name FROM pragma_table_info('%s')", g->join_table);
    s = prepare(t, sql);
    if (!s) return 0;
    g->join_book[0] = g->join_tag[0] = 0;
    while (sqlite3_step(s) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(s, 0);
        size_t length = strlen(name);
        if (length > 5 && strcmp(name + length - 5, "BOOKS") == 0) snprintf(g->join_book, sizeof g->join_book, "%s", name);
        else if (length > 4 && strcmp(name + length - 4, "TAGS") == 0) snprintf(g->join_tag, sizeof g->join_tag, "%s", name);
    }
    sqlite3_finalize(s);
    if (!g->join_book[0] || !g->join_tag[0]) { snprintf(t->error, sizeof t->error, "join table columns not found"); return 0; }
    return 1;
}

twin_outcome twin_insert_graph(twin *t, int64_t authors, int64_t books_per_author, int64_t tags) {
    graph_names g;
    if (!graph_discover(t, &g)) return failed;
    if (!exec(t, "BEGIN IMMEDIATE")) return failed;
    char sql[256];
    sqlite3_stmt *author = prepare(t, "INSERT INTO ZAUTHOR (Z_PK, Z_ENT, Z_OPT, ZNAME) VALUES (?, ?, 1, ?)");
    sqlite3_stmt *book = prepare(t, "INSERT INTO ZBOOK (Z_PK, Z_ENT, Z_OPT, ZAUTHOR, ZTITLE, ZYEAR) VALUES (?, ?, 1, ?, ?, ?)");
    sqlite3_stmt *tag = prepare(t, "INSERT INTO ZTAG (Z_PK, Z_ENT, Z_OPT, ZNAME, ZRANK) VALUES (?, ?, 1, ?, ?)");
    snprintf(sql, sizeof sql, "INSERT INTO %s (%s, %s) VALUES (?, ?)", g.join_table, g.join_book, g.join_tag);
    sqlite3_stmt *join = prepare(t, sql);
    twin_outcome outcome = {0, 0, 0, 0};
    int ok = author && book && tag && join;
    char text[64];
    for (int64_t k = 0; ok && k < tags; k++) {
        snprintf(text, sizeof text, "Tag %lld", (long long)k);
        sqlite3_bind_int64(tag, 1, k + 1);
        sqlite3_bind_int64(tag, 2, g.tag_entity);
        sqlite3_bind_text(tag, 3, text, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int64(tag, 4, k);
        ok = sqlite3_step(tag) == SQLITE_DONE;
        sqlite3_reset(tag);
    }
    for (int64_t a = 0; ok && a < authors; a++) {
        snprintf(text, sizeof text, "Author %lld", (long long)a);
        sqlite3_bind_int64(author, 1, a + 1);
        sqlite3_bind_int64(author, 2, g.author_entity);
        sqlite3_bind_text(author, 3, text, -1, SQLITE_TRANSIENT);
        ok = sqlite3_step(author) == SQLITE_DONE;
        sqlite3_reset(author);
        for (int64_t j = 0; ok && j < books_per_author; j++) {
            int64_t b = a * books_per_author + j;
            snprintf(text, sizeof text, "Book %lld", (long long)b);
            sqlite3_bind_int64(book, 1, b + 1);
            sqlite3_bind_int64(book, 2, g.book_entity);
            sqlite3_bind_int64(book, 3, a + 1);
            sqlite3_bind_text(book, 4, text, -1, SQLITE_TRANSIENT);
            sqlite3_bind_int64(book, 5, 1900 + b % 120);
            ok = sqlite3_step(book) == SQLITE_DONE;
            sqlite3_reset(book);
            for (int64_t m = 0; ok && m < 3 && m < tags; m++) {
                sqlite3_bind_int64(join, 1, b + 1);
                sqlite3_bind_int64(join, 2, (b + m * 31) % tags + 1);
                ok = sqlite3_step(join) == SQLITE_DONE;
                sqlite3_reset(join);
            }
            outcome.count++;
        }
    }
    if (!ok) fail(t, "graph insert");
    sqlite3_finalize(author);
    sqlite3_finalize(book);
    sqlite3_finalize(tag);
    sqlite3_finalize(join);
    ok = ok && write_max(t, g.author_entity, authors) && write_max(t, g.book_entity, authors * books_per_author)
        && write_max(t, g.tag_entity, tags) && exec(t, "COMMIT");
    if (!ok) { exec(t, "ROLLBACK"); return failed; }
    outcome.first = authors;
    outcome.last = tags;
    return outcome;
}

typedef struct { int64_t pk, ent, opt; char *name; } author_row;
typedef struct { int64_t pk, ent, opt, author; char *title; int64_t year; int64_t tag_start, tag_count; } book_row;
typedef struct { int64_t pk, ent, opt; char *name; int64_t rank; } tag_row;

static void read_tag(sqlite3_stmt *s, tag_row *row) {
    row->pk = sqlite3_column_int64(s, 0);
    row->ent = sqlite3_column_int64(s, 1);
    row->opt = sqlite3_column_int64(s, 2);
    row->name = strdup((const char *)sqlite3_column_text(s, 3));
    row->rank = sqlite3_column_int64(s, 4);
}

static void read_book(sqlite3_stmt *s, book_row *row) {
    row->pk = sqlite3_column_int64(s, 0);
    row->ent = sqlite3_column_int64(s, 1);
    row->opt = sqlite3_column_int64(s, 2);
    row->author = sqlite3_column_int64(s, 3);
    row->title = strdup((const char *)sqlite3_column_text(s, 4));
    row->year = sqlite3_column_int64(s, 5);
}

twin_outcome twin_traverse_graph(twin *t, int prefetch) {
    graph_names g;
    if (!graph_discover(t, &g)) return failed;
    twin_outcome outcome = {0, 0, 0, 0};
    // Authors, realized (name copied).
    sqlite3_stmt *s = prepare(t, "SELECT Z_PK, Z_ENT, Z_OPT, ZNAME FROM ZAUTHOR");
    if (!s) return failed;
    int64_t author_count = 0, author_capacity = 256;
    author_row *authors = malloc(author_capacity * sizeof *authors);
    while (sqlite3_step(s) == SQLITE_ROW) {
        if (author_count == author_capacity) { author_capacity *= 2; authors = realloc(authors, author_capacity * sizeof *authors); }
        author_row *row = &authors[author_count++];
        row->pk = sqlite3_column_int64(s, 0);
        row->ent = sqlite3_column_int64(s, 1);
        row->opt = sqlite3_column_int64(s, 2);
        row->name = strdup((const char *)sqlite3_column_text(s, 3));
    }
    sqlite3_finalize(s);
    char sql[512];
    if (prefetch) {
        // Three bulk reads, as a prefetching fetch does: books, join rows with their tags, then walk.
        int64_t max_pk = 0;
        s = prepare(t, "SELECT MAX(Z_PK) FROM ZBOOK");
        if (s && sqlite3_step(s) == SQLITE_ROW) max_pk = sqlite3_column_int64(s, 0);
        sqlite3_finalize(s);
        book_row *books = calloc(max_pk + 1, sizeof *books);
        s = prepare(t, "SELECT Z_PK, Z_ENT, Z_OPT, ZAUTHOR, ZTITLE, ZYEAR FROM ZBOOK ORDER BY ZAUTHOR");
        while (s && sqlite3_step(s) == SQLITE_ROW) {
            book_row row;
            read_book(s, &row);
            if (row.pk <= max_pk) books[row.pk] = row;
        }
        sqlite3_finalize(s);
        snprintf(sql, sizeof sql, "SELECT j.%s, t.Z_PK, t.Z_ENT, t.Z_OPT, t.ZNAME, t.ZRANK FROM %s j JOIN ZTAG t ON t.Z_PK = j.%s ORDER BY j.%s",
                 g.join_book, g.join_table, g.join_tag, g.join_book);
        s = prepare(t, sql);
        int64_t link_count = 0, link_capacity = 1024;
        tag_row *links = malloc(link_capacity * sizeof *links);
        int64_t *link_book = malloc(link_capacity * sizeof *link_book);
        while (s && sqlite3_step(s) == SQLITE_ROW) {
            if (link_count == link_capacity) {
                link_capacity *= 2;
                links = realloc(links, link_capacity * sizeof *links);
                link_book = realloc(link_book, link_capacity * sizeof *link_book);
            }
            link_book[link_count] = sqlite3_column_int64(s, 0);
            tag_row *row = &links[link_count];
            row->pk = sqlite3_column_int64(s, 1);
            row->ent = sqlite3_column_int64(s, 2);
            row->opt = sqlite3_column_int64(s, 3);
            row->name = strdup((const char *)sqlite3_column_text(s, 4));
            row->rank = sqlite3_column_int64(s, 5);
            int64_t b = link_book[link_count];
            if (b <= max_pk) {
                if (books[b].tag_count == 0) books[b].tag_start = link_count;
                books[b].tag_count++;
            }
            link_count++;
        }
        sqlite3_finalize(s);
        // Walk author by author: books of an author found by their ZAUTHOR (an index from author to books).
        int64_t *first_book = malloc((author_count + 2) * sizeof(int64_t));
        for (int64_t a = 0; a < author_count + 2; a++) first_book[a] = -1;
        int64_t *next_book = malloc((max_pk + 1) * sizeof(int64_t));
        for (int64_t b = max_pk; b >= 1; b--) {
            next_book[b] = -1;
            int64_t a = books[b].author;
            if (books[b].pk && a >= 1 && a <= author_count + 1) { next_book[b] = first_book[a]; first_book[a] = b; }
        }
        for (int64_t i = 0; i < author_count; i++) {
            int64_t a = authors[i].pk;
            if (a > author_count + 1) continue;
            for (int64_t b = first_book[a]; b >= 0; b = next_book[b]) {
                for (int64_t m = 0; m < books[b].tag_count; m++) {
                    outcome.count++;
                    outcome.checksum += books[b].year + links[books[b].tag_start + m].rank;
                }
            }
        }
        for (int64_t b = 0; b <= max_pk; b++) free(books[b].title);
        for (int64_t k = 0; k < link_count; k++) free(links[k].name);
        free(books); free(links); free(link_book); free(first_book); free(next_book);
    } else {
        // Per object, as faults fire: the books of each author, then the tags of each book.
        sqlite3_stmt *books = prepare(t, "SELECT Z_PK, Z_ENT, Z_OPT, ZAUTHOR, ZTITLE, ZYEAR FROM ZBOOK WHERE ZAUTHOR = ?");
        snprintf(sql, sizeof sql, "SELECT t.Z_PK, t.Z_ENT, t.Z_OPT, t.ZNAME, t.ZRANK FROM %s j JOIN ZTAG t ON t.Z_PK = j.%s WHERE j.%s = ?",
                 g.join_table, g.join_tag, g.join_book);
        sqlite3_stmt *tags = prepare(t, sql);
        if (!books || !tags) { sqlite3_finalize(books); sqlite3_finalize(tags); return failed; }
        for (int64_t i = 0; i < author_count; i++) {
            sqlite3_bind_int64(books, 1, authors[i].pk);
            while (sqlite3_step(books) == SQLITE_ROW) {
                book_row book;
                read_book(books, &book);
                sqlite3_bind_int64(tags, 1, book.pk);
                while (sqlite3_step(tags) == SQLITE_ROW) {
                    tag_row tag;
                    read_tag(tags, &tag);
                    outcome.count++;
                    outcome.checksum += book.year + tag.rank;
                    free(tag.name);
                }
                sqlite3_reset(tags);
                free(book.title);
            }
            sqlite3_reset(books);
        }
        sqlite3_finalize(books);
        sqlite3_finalize(tags);
    }
    outcome.first = author_count;
    for (int64_t i = 0; i < author_count; i++) free(authors[i].name);
    free(authors);
    return outcome;
}

twin_outcome twin_cascade_delete_graph(twin *t) {
    graph_names g;
    if (!graph_discover(t, &g)) return failed;
    if (!exec(t, "BEGIN IMMEDIATE")) return failed;
    char sql[256];
    sqlite3_stmt *authors = prepare(t, "SELECT Z_PK, Z_OPT FROM ZAUTHOR");
    sqlite3_stmt *books = prepare(t, "SELECT Z_PK, Z_OPT FROM ZBOOK WHERE ZAUTHOR = ?");
    snprintf(sql, sizeof sql, "DELETE FROM %s WHERE %s = ?", g.join_table, g.join_book);
    sqlite3_stmt *unlink = prepare(t, sql);
    sqlite3_stmt *delete_book = prepare(t, "DELETE FROM ZBOOK WHERE Z_PK = ? AND Z_OPT = ?");
    sqlite3_stmt *delete_author = prepare(t, "DELETE FROM ZAUTHOR WHERE Z_PK = ? AND Z_OPT = ?");
    int ok = authors && books && unlink && delete_book && delete_author;
    twin_outcome outcome = {0, 0, 0, 0};
    // Read first (the objects and their books are loaded before anything is deleted), then write.
    int64_t n = 0, capacity = 1024;
    int64_t (*author_keys)[2] = malloc(capacity * sizeof *author_keys);
    while (ok && sqlite3_step(authors) == SQLITE_ROW) {
        if (n == capacity) { capacity *= 2; author_keys = realloc(author_keys, capacity * sizeof *author_keys); }
        author_keys[n][0] = sqlite3_column_int64(authors, 0);
        author_keys[n][1] = sqlite3_column_int64(authors, 1);
        n++;
    }
    for (int64_t i = 0; ok && i < n; i++) {
        sqlite3_bind_int64(books, 1, author_keys[i][0]);
        // An author has 10 books in these files; more than 64 fails the run rather than being cut off.
        int64_t book_keys[64][2];
        int64_t count = 0;
        while (ok && sqlite3_step(books) == SQLITE_ROW) {
            if (count == 64) { ok = 0; snprintf(t->error, sizeof t->error, "an author has more than 64 books"); break; }
            book_keys[count][0] = sqlite3_column_int64(books, 0);
            book_keys[count][1] = sqlite3_column_int64(books, 1);
            count++;
        }
        sqlite3_reset(books);
        for (int64_t k = 0; ok && k < count; k++) {
            sqlite3_bind_int64(unlink, 1, book_keys[k][0]);
            ok = sqlite3_step(unlink) == SQLITE_DONE;
            sqlite3_reset(unlink);
            sqlite3_bind_int64(delete_book, 1, book_keys[k][0]);
            sqlite3_bind_int64(delete_book, 2, book_keys[k][1]);
            ok = ok && sqlite3_step(delete_book) == SQLITE_DONE && sqlite3_changes(t->db) == 1;
            sqlite3_reset(delete_book);
            outcome.count++;
        }
        sqlite3_bind_int64(delete_author, 1, author_keys[i][0]);
        sqlite3_bind_int64(delete_author, 2, author_keys[i][1]);
        ok = ok && sqlite3_step(delete_author) == SQLITE_DONE && sqlite3_changes(t->db) == 1;
        sqlite3_reset(delete_author);
        outcome.first++;
    }
    // The tags lost books: their version goes up, as for any object whose relationship changed.
    ok = ok && exec(t, "UPDATE ZTAG SET Z_OPT = Z_OPT + 1");
    if (!ok) fail(t, "cascade delete");
    free(author_keys);
    sqlite3_finalize(authors);
    sqlite3_finalize(books);
    sqlite3_finalize(unlink);
    sqlite3_finalize(delete_book);
    sqlite3_finalize(delete_author);
    if (!ok || !exec(t, "COMMIT")) { exec(t, "ROLLBACK"); return failed; }
    outcome.last = outcome.count;
    outcome.checksum = outcome.count + outcome.first;
    return outcome;
}

twin_outcome twin_graph_summary(twin *t) {
    graph_names g;
    if (!graph_discover(t, &g)) return failed;
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT (SELECT COUNT(*) FROM ZBOOK), (SELECT COUNT(*) FROM ZAUTHOR), (SELECT COUNT(*) FROM %s), (SELECT COUNT(*) FROM ZTAG)", g.join_table);
    sqlite3_stmt *s = prepare(t, sql);
    if (!s) return failed;
    twin_outcome outcome = failed;
    if (sqlite3_step(s) == SQLITE_ROW) {
        outcome.count = sqlite3_column_int64(s, 0);
        outcome.first = sqlite3_column_int64(s, 1);
        outcome.last = sqlite3_column_int64(s, 2);
        outcome.checksum = sqlite3_column_int64(s, 3);
    }
    sqlite3_finalize(s);
    return outcome;
}

void twin_line_buffered_stdout(void) { setvbuf(stdout, NULL, _IOLBF, 0); }
