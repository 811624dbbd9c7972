/*
 * query_out.c - heapdump query's results: an aligned text table, NDJSON,
 * TSV or CSV. Every text value goes through the text escaper (controls,
 * invalid bytes and bidi controls escaped) except in JSON, which escapes
 * by its own rules.
 */
#include "common.h"
#include "dynlib.h"
#include "query.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#ifndef HD_SQLITE_SONAME
#error "HD_SQLITE_SONAME: the file name of libsqlite3 to load (the Makefile's)"
#endif

struct query_sql qsql;

#define QUERY_SQL_SYM(f) { #f, offsetof(struct query_sql, f) },
static const struct cli_dynsym qsql_syms[] = {
	QUERY_SQL_FUNCS(QUERY_SQL_SYM)
};
#undef QUERY_SQL_SYM

int query_load_sqlite(void)
{
	static int state;

	return cli_dynload(&state, HD_SQLITE_SONAME, "libsqlite3-0",
			   qsql_syms, sizeof(qsql_syms) / sizeof(qsql_syms[0]),
			   &qsql);
}

/* ---- one cell as text ---- */

/* Writes the value of column i as people read it (NULL: nothing). */
static void cell_text(FILE *f, sqlite3_stmt *st, int i)
{
	const unsigned char *b;
	int n, k;

	switch (qsql.sqlite3_column_type(st, i)) {
	case SQLITE_NULL:
		break;
	case SQLITE_INTEGER:
		fprintf(f, "%lld", (long long)qsql.sqlite3_column_int64(st, i));
		break;
	case SQLITE_FLOAT:
		fprintf(f, "%.15g", qsql.sqlite3_column_double(st, i));
		break;
	case SQLITE_BLOB:
		b = qsql.sqlite3_column_blob(st, i);
		n = qsql.sqlite3_column_bytes(st, i);
		fputs("x'", f);
		for (k = 0; k < n; k++)
			fprintf(f, "%02x", b[k]);
		putc('\'', f);
		break;
	default:
		b = qsql.sqlite3_column_text(st, i);
		n = qsql.sqlite3_column_bytes(st, i);
		cli_text_string(f, (const char *)b, (size_t)n);
	}
}

static void cell_json(FILE *f, sqlite3_stmt *st, int i)
{
	const unsigned char *b;
	double d;
	int n, k;

	switch (qsql.sqlite3_column_type(st, i)) {
	case SQLITE_NULL:
		fputs("null", f);
		break;
	case SQLITE_INTEGER:
		fprintf(f, "%lld", (long long)qsql.sqlite3_column_int64(st, i));
		break;
	case SQLITE_FLOAT:
		d = qsql.sqlite3_column_double(st, i);
		if (isfinite(d))
			fprintf(f, "%.17g", d);
		else
			fputs("null", f);
		break;
	case SQLITE_BLOB:
		b = qsql.sqlite3_column_blob(st, i);
		n = qsql.sqlite3_column_bytes(st, i);
		putc('"', f);
		for (k = 0; k < n; k++)
			fprintf(f, "%02x", b[k]);
		putc('"', f);
		break;
	default:
		b = qsql.sqlite3_column_text(st, i);
		n = qsql.sqlite3_column_bytes(st, i);
		cli_json_string(f, (const char *)b, (size_t)n);
	}
}

/* A CSV field: the escaped text, quoted when it holds a comma, a quote
 * or a space at either end (quotes doubled). */
static void csv_field(FILE *f, const char *t, size_t n)
{
	size_t i;

	if (n && (strpbrk(t, ",\"") || t[0] == ' ' || t[n - 1] == ' ')) {
		putc('"', f);
		for (i = 0; i < n; i++) {
			if (t[i] == '"')
				putc('"', f);
			putc(t[i], f);
		}
		putc('"', f);
	} else {
		fwrite(t, 1, n, f);
	}
}

/* The escaped text of column i (or a column name) in a memory buffer. */
struct membuf {
	char *p;
	size_t n;
	FILE *f;
};

static int mem_open(struct membuf *m)
{
	m->p = NULL;
	m->n = 0;
	m->f = open_memstream(&m->p, &m->n);
	return m->f ? 0 : -1;
}

static void mem_close(struct membuf *m)
{
	if (m->f)
		fclose(m->f);
	free(m->p);
	m->f = NULL;
	m->p = NULL;
}

/* Characters on screen: UTF-8 lead bytes (the escapes are ASCII). */
static size_t width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			w++;
	return w;
}

/* ---- formats ---- */

/* The text table: every row is kept (escaped) to measure the columns,
 * then printed with a header and a rule; numbers right-aligned. */
struct table {
	struct membuf cells;  /* NUL-terminated cells, row after row */
	size_t *off;          /* start of each cell */
	unsigned char *num;   /* the cell is a number */
	size_t n, cap;
	int ncol;
	size_t *w;
};

static int table_push(struct table *t, size_t off, int num)
{
	size_t *o;
	unsigned char *u;

	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 256;
		if (!(o = realloc(t->off, t->cap * sizeof(*o))))
			return -1;
		t->off = o;
		if (!(u = realloc(t->num, t->cap)))
			return -1;
		t->num = u;
	}
	t->off[t->n] = off;
	t->num[t->n++] = (unsigned char)num;
	return 0;
}

static void pad(FILE *f, size_t n)
{
	while (n--)
		putc(' ', f);
}

static void table_print(struct table *t, FILE *f)
{
	size_t i, w;
	int c;

	fflush(t->cells.f);
	for (i = 0; i < t->n; i++) {
		c = (int)(i % (size_t)t->ncol);
		w = width(t->cells.p + t->off[i]);
		if (w > t->w[c])
			t->w[c] = w;
	}
	for (i = 0; i < t->n; i++) {
		const char *s = t->cells.p + t->off[i];

		c = (int)(i % (size_t)t->ncol);
		w = width(s);
		if (t->num[i])
			pad(f, t->w[c] - w);
		fputs(s, f);
		if (c + 1 < t->ncol) {
			if (!t->num[i])
				pad(f, t->w[c] - w);
			fputs("  ", f);
		}
		if (c + 1 == t->ncol)
			putc('\n', f);
		if (i + 1 == (size_t)t->ncol) {
			for (c = 0; c < t->ncol; c++) {
				for (w = 0; w < t->w[c]; w++)
					putc('-', f);
				fputs(c + 1 < t->ncol ? "  " : "\n", f);
			}
		}
	}
}

static int fetch_table(sqlite3_stmt *st, FILE *f, int *step_rc)
{
	struct table t;
	int i, rc = 0;
	const char *name;

	memset(&t, 0, sizeof(t));
	t.ncol = qsql.sqlite3_column_count(st);
	if (mem_open(&t.cells) || !(t.w = calloc((size_t)t.ncol, sizeof(*t.w))))
		rc = -1;
	for (i = 0; !rc && i < t.ncol; i++) {
		name = qsql.sqlite3_column_name(st, i);
		rc = table_push(&t, (size_t)ftell(t.cells.f), 0);
		cli_text_string(t.cells.f, name, strlen(name));
		putc('\0', t.cells.f);
	}
	while (!rc && (*step_rc = qsql.sqlite3_step(st)) == SQLITE_ROW) {
		for (i = 0; !rc && i < t.ncol; i++) {
			int ty = qsql.sqlite3_column_type(st, i);

			rc = table_push(&t, (size_t)ftell(t.cells.f),
					ty == SQLITE_INTEGER ||
						ty == SQLITE_FLOAT);
			cell_text(t.cells.f, st, i);
			putc('\0', t.cells.f);
		}
	}
	if (!rc)
		table_print(&t, f);
	mem_close(&t.cells);
	free(t.off);
	free(t.num);
	free(t.w);
	return rc;
}

static void header(sqlite3_stmt *st, FILE *f, enum query_format fmt)
{
	int i, n = qsql.sqlite3_column_count(st);
	const char *name;
	struct membuf m;

	for (i = 0; i < n; i++) {
		name = qsql.sqlite3_column_name(st, i);
		if (i)
			putc(fmt == QF_CSV ? ',' : '\t', f);
		if (fmt == QF_CSV && mem_open(&m) == 0) {
			cli_text_string(m.f, name, strlen(name));
			fflush(m.f);
			csv_field(f, m.p, m.n);
			mem_close(&m);
		} else {
			cli_text_string(f, name, strlen(name));
		}
	}
	putc('\n', f);
}

static void row(sqlite3_stmt *st, FILE *f, enum query_format fmt)
{
	int i, n = qsql.sqlite3_column_count(st);
	const char *name;
	struct membuf m;

	if (fmt == QF_JSON)
		putc('{', f);
	for (i = 0; i < n; i++) {
		if (i)
			putc(fmt == QF_CSV ? ',' : fmt == QF_JSON ? ',' : '\t',
			     f);
		if (fmt == QF_JSON) {
			name = qsql.sqlite3_column_name(st, i);
			cli_json_string(f, name, strlen(name));
			putc(':', f);
			cell_json(f, st, i);
		} else if (fmt == QF_CSV && mem_open(&m) == 0) {
			cell_text(m.f, st, i);
			fflush(m.f);
			csv_field(f, m.p, m.n);
			mem_close(&m);
		} else {
			cell_text(f, st, i);
		}
	}
	fputs(fmt == QF_JSON ? "}\n" : "\n", f);
}

/* Prints the rows of st; returns its last sqlite3_step() code. */
static int print_result(sqlite3_stmt *st, enum query_format fmt, FILE *f)
{
	int rc = SQLITE_DONE;

	if (fmt == QF_TEXT) {
		if (fetch_table(st, f, &rc)) {
			cli_error("query: out of memory");
			return SQLITE_NOMEM;
		}
		return rc;
	}
	if (fmt != QF_JSON)
		header(st, f, fmt);
	while ((rc = qsql.sqlite3_step(st)) == SQLITE_ROW)
		row(st, f, fmt);
	return rc;
}

static void sql_error(const char *what, sqlite3 *db)
{
	const char *m = qsql.sqlite3_errmsg(db);
	char buf[512];

	cli_error("query: %s: %s", what, cli_text(buf, sizeof(buf), m,
						   strlen(m)));
}

int query_run(sqlite3 *db, const char *sql, enum query_format fmt, FILE *f)
{
	const char *tail = sql;
	sqlite3_stmt *st;
	int rc, results = 0;

	while (*tail) {
		st = NULL;
		if (qsql.sqlite3_prepare_v2(db, tail, -1, &st, &tail) !=
		    SQLITE_OK) {
			sql_error("SQL error", db);
			return EXIT_USAGE;
		}
		if (!st) /* blanks or a comment */
			continue;
		if (qsql.sqlite3_column_count(st) && fmt == QF_TEXT &&
		    results++)
			putc('\n', f);
		rc = qsql.sqlite3_column_count(st) ? print_result(st, fmt, f) :
						qsql.sqlite3_step(st);
		if (rc != SQLITE_DONE) {
			if (rc != SQLITE_NOMEM)
				sql_error("SQL failed", db);
			qsql.sqlite3_finalize(st);
			return EXIT_FAIL;
		}
		qsql.sqlite3_finalize(st);
	}
	return EXIT_OK;
}
