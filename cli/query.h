/*
 * query.h - heapdump query: the result printer (query_out.c) and the
 * interactive shell (query_shell.c) that cmd_query.c drives.
 */
#ifndef CLI_QUERY_H
#define CLI_QUERY_H

#include <sqlite3.h>
#include <stdio.h>

enum query_format { QF_TEXT, QF_JSON, QF_TSV, QF_CSV };

/*
 * SQLite's functions the query files call, with the types of sqlite3.h.
 * libsqlite3 is not linked (the library loads it for hd_sql_open): the
 * program loads it too, by dlopen (dynlib.h), before it runs a
 * statement, so that stats and every other command start without it.
 */
#define QUERY_SQL_FUNCS(X)                                                \
	X(sqlite3_column_blob)                                            \
	X(sqlite3_column_bytes)                                           \
	X(sqlite3_column_count)                                           \
	X(sqlite3_column_double)                                          \
	X(sqlite3_column_int64)                                           \
	X(sqlite3_column_name)                                            \
	X(sqlite3_column_text)                                            \
	X(sqlite3_column_type)                                            \
	X(sqlite3_complete)                                               \
	X(sqlite3_errmsg)                                                 \
	X(sqlite3_finalize)                                               \
	X(sqlite3_prepare_v2)                                             \
	X(sqlite3_step)
#define QUERY_SQL_MEMBER(f) __typeof__(f) *f;
struct query_sql {
	QUERY_SQL_FUNCS(QUERY_SQL_MEMBER)
};
#undef QUERY_SQL_MEMBER
extern struct query_sql qsql;

/* Loads libsqlite3 into qsql (once). Returns 0, or EXIT_FAIL after a
 * message saying what to install. */
int query_load_sqlite(void);

/*
 * Runs every statement of sql (several may be separated by ';') and
 * prints each result to f in format fmt, a blank line between two text
 * results. Returns 0, EXIT_USAGE (a statement that does not compile or
 * is refused: SQLite's message on stderr) or EXIT_FAIL (a statement
 * that fails while running).
 */
int query_run(sqlite3 *db, const char *sql, enum query_format fmt, FILE *f);

/* The interactive shell on a terminal (libedit), or the statements of a
 * standard input that is not a terminal. Returns an exit code. */
int query_shell(sqlite3 *db, enum query_format fmt);

#endif
