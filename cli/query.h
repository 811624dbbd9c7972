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
