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
    if (sqlite3_open_v2(path, &t->db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
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
