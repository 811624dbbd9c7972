/*
 * query_shell.c - heapdump query without SQL: an interactive shell on a
 * terminal, with libedit's line editing and history (BSD-licensed, like
 * heapdump's MIT licence allows; GNU readline would make the program
 * GPL), or the statements of a standard input that is not a terminal.
 * History: HEAPDUMP_HISTORY, else ~/.heapdump_history; an empty
 * HEAPDUMP_HISTORY keeps none on disk.
 */
#include "common.h"
#include "dynlib.h"
#include "query.h"

#include <editline/readline.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef HD_EDIT_SONAME
#error "HD_EDIT_SONAME: the file name of libedit to load (the Makefile's)"
#endif

/* libedit's functions, with the types of its header: loaded (dynlib.h)
 * when the shell starts on a terminal, never for a script */
static struct edit_api {
	__typeof__(add_history) *add_history;
	__typeof__(read_history) *read_history;
	__typeof__(readline) *readline;
	__typeof__(stifle_history) *stifle_history;
	__typeof__(using_history) *using_history;
	__typeof__(write_history) *write_history;
} ed;
#define ED_SYM(f) { #f, offsetof(struct edit_api, f) }
static const struct cli_dynsym ed_syms[] = {
	ED_SYM(add_history),    ED_SYM(read_history),
	ED_SYM(readline),       ED_SYM(stifle_history),
	ED_SYM(using_history),  ED_SYM(write_history),
};
#undef ED_SYM

static const char help[] =
	"Statements end with ';' and may span lines. Tables:\n"
	"  objects(address, type, class, name, memsize, retained,\n"
	"          retained_count, file, line, method, generation, length,\n"
	"          size, bytesize, value, refs, referrers)\n"
	"  refs(\"from\", \"to\", name, k, inferred)\n"
	"  roots(category, object, name)\n"
	"Functions: path(address), retained(address), addr('0x...'),\n"
	"  hexaddr(address), hd_rows_visited(). Addresses are integers.\n"
	".help     this text\n"
	".tables   the tables and their columns\n"
	".quit     leave (also .exit, or end of input)\n";

/* Each table with its columns: "objects(address, type, ...)". */
static void tables(sqlite3 *db)
{
	sqlite3_stmt *st;
	char sql[64];
	const char *t;
	unsigned i;
	int k;

	for (i = 0; (t = hd_sql_table(i)); i++) {
		snprintf(sql, sizeof(sql), "SELECT * FROM %s LIMIT 0", t);
		if (qsql.sqlite3_prepare_v2(db, sql, -1, &st, NULL) !=
		    SQLITE_OK)
			continue;
		printf("%s(", t);
		for (k = 0; k < qsql.sqlite3_column_count(st); k++)
			printf("%s%s", k ? ", " : "",
			       qsql.sqlite3_column_name(st, k));
		printf(")\n");
		qsql.sqlite3_finalize(st);
	}
}

/* A dot command; 1 when it asks to leave. */
static int dot(sqlite3 *db, const char *line)
{
	char buf[256];

	if (strncmp(line, ".quit", 5) == 0 || strncmp(line, ".exit", 5) == 0)
		return 1;
	if (strncmp(line, ".help", 5) == 0)
		fputs(help, stdout);
	else if (strncmp(line, ".tables", 7) == 0)
		tables(db);
	else
		cli_error("query: unknown command '%s' (.help)",
			  cli_text(buf, sizeof(buf), line, strlen(line)));
	return 0;
}

static char *history_path(void)
{
	const char *h = getenv("HEAPDUMP_HISTORY"), *home;
	char *p;

	if (h)
		return *h ? strdup(h) : NULL;
	if (!(home = getenv("HOME")) || !*home)
		return NULL;
	if ((p = malloc(strlen(home) + 20)))
		sprintf(p, "%s/.heapdump_history", home);
	return p;
}

/* Appends line to *buf (a statement being typed), with a newline. */
static int append(char **buf, size_t *len, const char *line)
{
	size_t n = strlen(line);
	char *p = realloc(*buf, *len + n + 2);

	if (!p)
		return -1;
	memcpy(p + *len, line, n);
	*len += n;
	p[(*len)++] = '\n';
	p[*len] = '\0';
	*buf = p;
	return 0;
}

static int interactive(sqlite3 *db, enum query_format fmt)
{
	static int state;
	char *hist, *line, *stmt = NULL;
	size_t len = 0;
	int rc;

	if ((rc = cli_dynload(&state, HD_EDIT_SONAME, "libedit2", ed_syms,
			      sizeof(ed_syms) / sizeof(ed_syms[0]), &ed)))
		return rc;
	hist = history_path();
	ed.using_history();
	ed.stifle_history(1000);
	if (hist)
		ed.read_history(hist);
	printf("heapdump query: SQL over the heap; .help for help\n");
	while ((line = ed.readline(len ? "   ...> " : "heapdump> "))) {
		const char *p = line + strspn(line, " \t");

		if (!len && *p == '.') {
			ed.add_history(line);
			rc = dot(db, p);
			free(line);
			if (rc) {
				rc = EXIT_OK;
				break;
			}
			continue;
		}
		if (!*p && !len) {
			free(line);
			continue;
		}
		if (append(&stmt, &len, line)) {
			free(line);
			cli_error("query: out of memory");
			rc = EXIT_FAIL;
			break;
		}
		free(line);
		if (!qsql.sqlite3_complete(stmt))
			continue;
		stmt[len - 1] = '\0'; /* one history entry, no newline */
		ed.add_history(stmt);
		query_run(db, stmt, fmt, stdout);
		fflush(stdout);
		free(stmt);
		stmt = NULL;
		len = 0;
	}
	free(stmt);
	if (hist)
		ed.write_history(hist);
	free(hist);
	return rc;
}

/* Standard input is not a terminal: its statements, as a script; the
 * first failure ends it with that failure's exit code. */
static int script(sqlite3 *db, enum query_format fmt)
{
	char *buf = NULL, *line = NULL;
	size_t len = 0, cap = 0;
	ssize_t n;
	int rc = EXIT_OK;

	while ((n = getline(&line, &cap, stdin)) > 0) {
		const char *p = line + strspn(line, " \t");

		if (!len && *p == '.') {
			line[strcspn(line, "\r\n")] = '\0';
			if (dot(db, p))
				break;
			continue;
		}
		line[strcspn(line, "\r\n")] = '\0';
		if (append(&buf, &len, line)) {
			rc = EXIT_FAIL;
			break;
		}
		if (qsql.sqlite3_complete(buf)) {
			rc = query_run(db, buf, fmt, stdout);
			free(buf);
			buf = NULL;
			len = 0;
			if (rc)
				break;
		}
	}
	if (!rc && buf && buf[strspn(buf, " \t\n")])
		rc = query_run(db, buf, fmt, stdout);
	free(buf);
	free(line);
	return rc;
}

int query_shell(sqlite3 *db, enum query_format fmt)
{
	if (isatty(STDIN_FILENO))
		return interactive(db, fmt);
	return script(db, fmt);
}
