/*
 * query_shell.c - heapdump query without SQL: an interactive shell on a
 * terminal, with libedit's line editing and history (BSD-licensed, like
 * heapdump's MIT licence allows; GNU readline would make the program
 * GPL), or the statements of a standard input that is not a terminal.
 * History: HEAPDUMP_HISTORY, else ~/.heapdump_history; an empty
 * HEAPDUMP_HISTORY keeps none on disk.
 */
#include "common.h"
#include "query.h"

#include <editline/readline.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
		if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
			continue;
		printf("%s(", t);
		for (k = 0; k < sqlite3_column_count(st); k++)
			printf("%s%s", k ? ", " : "", sqlite3_column_name(st, k));
		printf(")\n");
		sqlite3_finalize(st);
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
	char *hist = history_path(), *line, *stmt = NULL;
	size_t len = 0;
	int rc = EXIT_OK;

	using_history();
	stifle_history(1000);
	if (hist)
		read_history(hist);
	printf("heapdump query: SQL over the heap; .help for help\n");
	while ((line = readline(len ? "   ...> " : "heapdump> "))) {
		const char *p = line + strspn(line, " \t");

		if (!len && *p == '.') {
			add_history(line);
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
		if (!sqlite3_complete(stmt))
			continue;
		stmt[len - 1] = '\0'; /* one history entry, no newline */
		add_history(stmt);
		query_run(db, stmt, fmt, stdout);
		fflush(stdout);
		free(stmt);
		stmt = NULL;
		len = 0;
	}
	free(stmt);
	if (hist)
		write_history(hist);
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
		if (sqlite3_complete(buf)) {
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
