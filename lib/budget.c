/*
 * budget.c - budgets: the CI gate's expressions ("leak.bytes>1MB",
 * "suspect.share>50%", "growth.class[String].bytes>100KB",
 * "trend.verdict=growing"), parsed once and evaluated against what leaks,
 * diff and trend found. One grammar for every front end (the commands'
 * --fail-on and --budgets, the gem's assertions), documented in
 * heapdump-leaks(1), BUDGETS:
 *
 *   budget := metric op value
 *   metric := leak.bytes | leak.objects | leak.verdict | suspect.share
 *           | suspect.bytes | growth.class[NAME].bytes
 *           | growth.class[NAME].objects | growth.site[FILE[:LINE]].bytes
 *           | growth.site[FILE[:LINE]].objects | trend.verdict
 *   op     := > | >= | < | <= | = | == | !=
 *   value  := NUMBER [B|KB|MB|GB|TB|KiB|MiB|GiB|TiB] | NUMBER% | WORD
 *
 * A budget is exceeded when its expression holds ("fail on"). Blanks
 * around the parts are allowed; a budget file holds one per line, '#'
 * starting a comment. Sizes are in powers of 1000 as every output prints
 * them (KiB and the like in powers of 1024).
 *
 * Errors give their column (a budget file's, its line too); each result
 * carries what was measured, the excess and the sentence that explains
 * it (the leak's verdict, the trend's first group). Fuzzed by
 * tests/fuzz/fuzz_budget.c.
 */
#include "hd_int.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum metric {
	M_LEAK_BYTES,
	M_LEAK_OBJECTS,
	M_LEAK_VERDICT,
	M_SUSPECT_SHARE,
	M_SUSPECT_BYTES,
	M_CLASS_BYTES,
	M_CLASS_OBJECTS,
	M_SITE_BYTES,
	M_SITE_OBJECTS,
	M_TREND_VERDICT
};

enum unit { U_BYTES, U_COUNT, U_SHARE, U_WORD };

enum op { OP_GT, OP_GE, OP_LT, OP_LE, OP_EQ, OP_NE };

/* each metric: its name, unit and the sources it applies to */
static const struct metric_info {
	const char *name; /* with "[]" where a key goes */
	int unit;
	unsigned sources;
} metrics[] = {
	{ "leak.bytes", U_BYTES, HD_BUDGET_LEAKS | HD_BUDGET_DIFF },
	{ "leak.objects", U_COUNT, HD_BUDGET_LEAKS | HD_BUDGET_DIFF },
	{ "leak.verdict", U_WORD, HD_BUDGET_LEAKS },
	{ "suspect.share", U_SHARE, HD_BUDGET_LEAKS },
	{ "suspect.bytes", U_BYTES, HD_BUDGET_LEAKS },
	{ "growth.class[].bytes", U_BYTES,
	  HD_BUDGET_LEAKS | HD_BUDGET_DIFF | HD_BUDGET_TREND },
	{ "growth.class[].objects", U_COUNT,
	  HD_BUDGET_LEAKS | HD_BUDGET_DIFF | HD_BUDGET_TREND },
	{ "growth.site[].bytes", U_BYTES, HD_BUDGET_LEAKS | HD_BUDGET_DIFF },
	{ "growth.site[].objects", U_COUNT, HD_BUDGET_LEAKS | HD_BUDGET_DIFF },
	{ "trend.verdict", U_WORD, HD_BUDGET_TREND },
};

#define NMETRICS (sizeof(metrics) / sizeof(metrics[0]))

/* the words of the verdict metrics, by value */
static const char *const leak_words[] = { "none", "leak" };
/* trend: the hd_trend_verdict values, "growing" an alias of every-step */
static const char *const trend_words[] = { "every-step", "overall", "flat",
					   "shrinks" };

struct budget {
	char *text;   /* canonical: "leak.bytes > 1 MB" as given, no blanks */
	int metric;
	int op;
	double limit; /* bytes, objects, share 0..1, or the word's value */
	char *key;    /* class name or site file, NUL-terminated; or NULL */
	size_t key_len;
	uint64_t line; /* a site's line, 0 for any */
};

struct hd_budget {
	struct budget *b;
	size_t n, cap;
};

struct hd_budget_report {
	hd_budget_result *r;
	size_t n, exceeded;
};

int hd_budget_new(hd_budget **out, hd_error *err)
{
	*out = hd__calloc(1, sizeof(**out));
	if (!*out)
		return hd__error(err, HD_ENOMEM, "out of memory");
	return 0;
}

void hd_budget_free(hd_budget *b)
{
	size_t i;

	if (!b)
		return;
	for (i = 0; i < b->n; i++) {
		free(b->b[i].text);
		free(b->b[i].key);
	}
	free(b->b);
	free(b);
}

size_t hd_budget_count(const hd_budget *b)
{
	return b ? b->n : 0;
}

const char *hd_budget_text(const hd_budget *b, size_t i)
{
	return b && i < b->n ? b->b[i].text : NULL;
}

/* ---- parsing ---- */

struct cursor {
	const char *p, *end, *start;
};

static void skip_blanks(struct cursor *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t'))
		c->p++;
}

static int at_word(const struct cursor *c, const char *w)
{
	size_t n = strlen(w);

	return (size_t)(c->end - c->p) >= n && memcmp(c->p, w, n) == 0;
}

static int perr(hd_error *err, const struct cursor *c, const char *what)
{
	return hd__error_at(err, HD_EINVAL, 0, (uint64_t)(c->p - c->start) + 1,
			    (uint64_t)(c->p - c->start),
			    "budget: %s at column %zu", what,
			    (size_t)(c->p - c->start) + 1);
}

/* The metric at c: its index, and the key between brackets. */
static int parse_metric(struct budget *b, struct cursor *c, hd_error *err)
{
	size_t i;

	for (i = 0; i < NMETRICS; i++) {
		const char *name = metrics[i].name;
		const char *br = strchr(name, '[');
		size_t head = br ? (size_t)(br - name) + 1 : strlen(name);
		const char *tail, *close;
		struct cursor k = *c;

		if (!at_word(&k, "") || (size_t)(k.end - k.p) < head ||
		    memcmp(k.p, name, head) != 0)
			continue;
		k.p += head;
		if (!br) {
			/* a whole name, not the prefix of a longer word */
			if (k.p < k.end &&
			    (isalnum((unsigned char)*k.p) || *k.p == '.' ||
			     *k.p == '_' || *k.p == '['))
				continue;
			b->metric = (int)i;
			c->p = k.p;
			return 0;
		}
		tail = br + 2; /* "].bytes" less its ']' */
		/* the key ends at the last "]." + tail of the expression */
		close = NULL;
		{
			const char *q;

			for (q = k.p; q < k.end; q++)
				if (*q == ']' &&
				    (size_t)(k.end - q - 1) >= strlen(tail) &&
				    memcmp(q + 1, tail, strlen(tail)) == 0)
					close = q;
		}
		if (!close)
			continue;
		{
			const char *after = close + 1 + strlen(tail);

			if (after < k.end &&
			    (isalnum((unsigned char)*after) || *after == '_' ||
			     *after == '.'))
				continue;
			if (close == k.p) {
				c->p = k.p;
				return perr(err, c, "an empty name in []");
			}
			b->key_len = (size_t)(close - k.p);
			b->key = hd__malloc(b->key_len + 1);
			if (!b->key)
				return hd__error(err, HD_ENOMEM,
						 "out of memory");
			memcpy(b->key, k.p, b->key_len);
			b->key[b->key_len] = 0;
			b->metric = (int)i;
			c->p = after;
			return 0;
		}
	}
	return perr(err, c,
		    "no metric (leak.bytes, leak.objects, leak.verdict, "
		    "suspect.share, suspect.bytes, growth.class[NAME].bytes, "
		    "growth.class[NAME].objects, growth.site[FILE:LINE].bytes, "
		    "growth.site[FILE:LINE].objects, trend.verdict)");
}

static int parse_op(struct budget *b, struct cursor *c, hd_error *err)
{
	static const struct {
		const char *t;
		int op;
	} ops[] = { { ">=", OP_GE }, { "<=", OP_LE }, { "==", OP_EQ },
		    { "!=", OP_NE }, { ">", OP_GT },  { "<", OP_LT },
		    { "=", OP_EQ } };
	size_t i;

	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (at_word(c, ops[i].t)) {
			b->op = ops[i].op;
			c->p += strlen(ops[i].t);
			return 0;
		}
	return perr(err, c, "no comparison (>, >=, <, <=, =, !=)");
}

/* The byte units, case-insensitively. */
static int byte_unit(const char *p, size_t n, double *mul)
{
	static const struct {
		const char *u;
		double mul;
	} units[] = { { "b", 1 },
		      { "kb", 1e3 },
		      { "mb", 1e6 },
		      { "gb", 1e9 },
		      { "tb", 1e12 },
		      { "kib", 1024.0 },
		      { "mib", 1048576.0 },
		      { "gib", 1073741824.0 },
		      { "tib", 1099511627776.0 },
		      { "k", 1e3 },
		      { "m", 1e6 },
		      { "g", 1e9 } };
	size_t i, j;

	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strlen(units[i].u) != n)
			continue;
		for (j = 0; j < n; j++)
			if (tolower((unsigned char)p[j]) != units[i].u[j])
				break;
		if (j == n) {
			*mul = units[i].mul;
			return 1;
		}
	}
	return 0;
}

static int word_value(int metric, const char *p, size_t n, double *out)
{
	size_t i;

	if (metric == M_LEAK_VERDICT) {
		for (i = 0; i < 2; i++)
			if (strlen(leak_words[i]) == n &&
			    memcmp(leak_words[i], p, n) == 0) {
				*out = (double)i;
				return 1;
			}
		return 0;
	}
	if (n == 7 && memcmp(p, "growing", 7) == 0) {
		*out = HD_TREND_EVERY_STEP;
		return 1;
	}
	for (i = 0; i < 4; i++)
		if (strlen(trend_words[i]) == n &&
		    memcmp(trend_words[i], p, n) == 0) {
			*out = (double)i;
			return 1;
		}
	return 0;
}

static int parse_value(struct budget *b, struct cursor *c, hd_error *err)
{
	int unit = metrics[b->metric].unit;
	const char *s = c->p, *e;
	double v = 0, mul = 1;
	int digits = 0, dot = 0;

	if (unit == U_WORD) {
		for (e = s; e < c->end && (isalnum((unsigned char)*e) ||
					   *e == '-' || *e == '_');
		     e++)
			;
		if (b->op != OP_EQ && b->op != OP_NE)
			return perr(err, c, "a verdict compares with = or != "
					    "only");
		if (!word_value(b->metric, s, (size_t)(e - s), &v))
			return perr(err, c,
				    b->metric == M_LEAK_VERDICT ?
					    "no verdict (leak, none)" :
					    "no verdict (growing, every-step, "
					    "overall, flat, shrinks)");
		b->limit = v;
		c->p = e;
		return 0;
	}
	for (e = s; e < c->end; e++) {
		if (*e >= '0' && *e <= '9') {
			if (v > 1e18)
				return perr(err, c, "a number too large");
			v = v * 10 + (*e - '0');
			digits++;
			if (dot)
				dot++;
		} else if (*e == '.' && !dot) {
			dot = 1;
		} else {
			break;
		}
	}
	if (!digits)
		return perr(err, c, "no number");
	while (dot-- > 1)
		v /= 10;
	c->p = e;
	skip_blanks(c);
	s = c->p;
	for (e = s; e < c->end && (isalpha((unsigned char)*e) || *e == '%');
	     e++)
		;
	if (unit == U_SHARE) {
		if (e - s != 1 || *s != '%')
			return perr(err, c, "a share in percent (50%)");
		if (v > 100)
			return perr(err, c, "a share over 100%");
		v /= 100;
	} else if (unit == U_BYTES) {
		if (e > s && !byte_unit(s, (size_t)(e - s), &mul))
			return perr(err, c, "no byte unit (B, KB, MB, GB, "
					    "KiB, MiB, GiB)");
	} else if (e > s) {
		return perr(err, c, "objects are a plain number");
	}
	b->limit = v * mul;
	c->p = e;
	return 0;
}

/* A site key "file:line": the line apart when it ends in digits. */
static void split_site(struct budget *b)
{
	char *colon = strrchr(b->key, ':');
	uint64_t line = 0;
	const char *q;

	if (!colon || !colon[1] || colon == b->key)
		return;
	for (q = colon + 1; *q; q++) {
		if (*q < '0' || *q > '9' || line > UINT64_MAX / 20)
			return;
		line = line * 10 + (uint64_t)(*q - '0');
	}
	b->line = line;
	*colon = 0;
	b->key_len = (size_t)(colon - b->key);
}

static int canonical(struct budget *b, const char *s, size_t n,
		     hd_error *err)
{
	size_t i, k = 0;

	b->text = hd__malloc(n + 1);
	if (!b->text)
		return hd__error(err, HD_ENOMEM, "out of memory");
	for (i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t')
			b->text[k++] = s[i];
	b->text[k] = 0;
	return 0;
}

int hd_budget_add(hd_budget *bs, const char *expr, size_t len,
		  hd_error *err)
{
	struct budget b;
	struct cursor c;
	int rc;

	memset(&b, 0, sizeof(b));
	c.p = c.start = expr;
	c.end = expr + len;
	if (memchr(expr, 0, len) || memchr(expr, '\n', len))
		return hd__error(err, HD_EINVAL,
				 "budget: a NUL or newline in the expression");
	skip_blanks(&c);
	if (c.p == c.end)
		return perr(err, &c, "an empty budget");
	if ((rc = parse_metric(&b, &c, err)))
		goto fail;
	skip_blanks(&c);
	if ((rc = parse_op(&b, &c, err)))
		goto fail;
	skip_blanks(&c);
	if ((rc = parse_value(&b, &c, err)))
		goto fail;
	skip_blanks(&c);
	if (c.p != c.end) {
		rc = perr(err, &c, "unexpected text after the value");
		goto fail;
	}
	if (b.metric == M_SITE_BYTES || b.metric == M_SITE_OBJECTS)
		split_site(&b);
	if ((rc = canonical(&b, expr, len, err)))
		goto fail;
	if (bs->n == bs->cap) {
		size_t cap = bs->cap ? bs->cap * 2 : 8;
		struct budget *nb = hd__realloc(bs->b, bs->cap * sizeof(*nb),
						cap * sizeof(*nb));

		if (!nb) {
			rc = hd__error(err, HD_ENOMEM, "out of memory");
			goto fail;
		}
		bs->b = nb;
		bs->cap = cap;
	}
	bs->b[bs->n++] = b;
	return 0;
fail:
	free(b.key);
	free(b.text);
	return rc;
}

/* Says which line of a budget file an error is on. */
static void err_line(hd_error *err, uint64_t line)
{
	char msg[sizeof(err->msg)];
	int n;

	if (!err)
		return;
	err->line = line;
	n = snprintf(msg, sizeof(msg), "line %llu: ", (unsigned long long)line);
	if (n > 0 && (size_t)n < sizeof(msg)) {
		size_t room = sizeof(msg) - (size_t)n - 1;
		size_t len = strnlen(err->msg, sizeof(err->msg));

		if (len > room)
			len = room;
		memcpy(msg + n, err->msg, len);
		msg[(size_t)n + len] = 0;
		memcpy(err->msg, msg, sizeof(msg));
	}
}

int hd_budget_add_text(hd_budget *bs, const char *text, size_t len,
		       hd_error *err)
{
	const char *p = text, *end = text + len;
	uint64_t line = 0;
	int rc;

	if (memchr(text, 0, len))
		return hd__error(err, HD_EINVAL, "budgets: a NUL byte");
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *e = nl ? nl : end, *hash;

		line++;
		/* '#' starts a comment at the line's start or after a
		 * blank ("growth.class[#<Class:Foo>]" keeps its '#') */
		for (hash = p; hash < e; hash++)
			if (*hash == '#' &&
			    (hash == p || hash[-1] == ' ' || hash[-1] == '\t'))
				break;
		e = hash;
		while (e > p && (e[-1] == ' ' || e[-1] == '\t' ||
				 e[-1] == '\r'))
			e--;
		while (p < e && (*p == ' ' || *p == '\t'))
			p++;
		if (p < e && (rc = hd_budget_add(bs, p, (size_t)(e - p),
						 err))) {
			err_line(err, line);
			return rc;
		}
		p = nl ? nl + 1 : end;
	}
	return 0;
}

/* ---- where a budget applies ---- */

static const char *source_name(unsigned source)
{
	return source == HD_BUDGET_LEAKS  ? "leaks" :
	       source == HD_BUDGET_DIFF   ? "diff" :
	       source == HD_BUDGET_TREND  ? "trend" :
					    "this command";
}

int hd_budget_check(const hd_budget *b, unsigned source, hd_error *err)
{
	size_t i;

	for (i = 0; b && i < b->n; i++) {
		unsigned s = metrics[b->b[i].metric].sources;

		if (!(s & source))
			return hd__error(
				err, HD_EINVAL,
				"budget %s: no %s for %s (it applies to%s%s%s)",
				b->b[i].text, metrics[b->b[i].metric].name,
				source_name(source),
				s & HD_BUDGET_LEAKS ? " leaks and report" : "",
				s & HD_BUDGET_DIFF ? " diff" : "",
				s & HD_BUDGET_TREND ? " trend" : "");
	}
	return 0;
}

/* ---- evaluation ---- */

/* What a source measured, for every metric it has. */
struct facts {
	unsigned source;
	uint64_t bytes, objects;   /* leak.bytes, leak.objects */
	int significant;           /* leak.verdict */
	double share;              /* suspect.share */
	uint64_t suspect_bytes;
	const hd_store *s;         /* the set's store, by class and site */
	const hd_nodes *set;
	const hd_trend *t;
	int trend_verdict;
	char *detail;              /* one sentence, or NULL */
	const char *noun;          /* "the leak", "the new objects" */
};

static int cmp_name(const char *a, size_t an, const char *b, size_t bn)
{
	return an == bn && memcmp(a, b, an) == 0;
}

/* A site matches when its file is the key or ends with "/" key, and its
 * line is the key's (any line without one). */
static int site_match(const struct budget *b, const hd_site *st)
{
	size_t n = b->key_len;

	if (!st->file || (b->line && st->line != b->line))
		return 0;
	if (st->file_len == n)
		return memcmp(st->file, b->key, n) == 0;
	return st->file_len > n && st->file[st->file_len - n - 1] == '/' &&
	       memcmp(st->file + st->file_len - n, b->key, n) == 0;
}

/* The set's objects and bytes of one class or site. */
static void set_sum(const struct facts *f, const struct budget *b,
		    double *objects, double *bytes)
{
	char name[512];
	uint64_t c = 0, m = 0;
	size_t i;

	for (i = 0; f->set && i < f->set->n; i++) {
		hd_node_id v = f->set->ids[i];

		if (b->metric == M_CLASS_BYTES || b->metric == M_CLASS_OBJECTS) {
			size_t n = hd_store_class_name(name, sizeof(name),
						       f->s, v);

			if (n >= sizeof(name) ||
			    !cmp_name(name, n, b->key, b->key_len))
				continue;
		} else {
			hd_site st;

			if (hd_store_site(&st, f->s, v) || !site_match(b, &st))
				continue;
		}
		c++;
		hd__sat_add(&m, hd_store_memsize(f->s, v));
	}
	*objects = (double)c;
	*bytes = (double)m;
}

/* A trend's growth (last dump less first) of one class, summed over its
 * rows; -1 in *ok when the trend is not grouped by class. */
static void trend_sum(const struct facts *f, const struct budget *b,
		      double *objects, double *bytes, int *ok)
{
	const hd_trend_options *o = hd_trend_options_get(f->t);
	size_t n = 0, i, nd = hd_trend_ndumps(f->t);
	const hd_trend_row *rows = hd_trend_rows(f->t, &n);
	unsigned k, ck = o->nkeys;

	for (k = 0; k < o->nkeys; k++)
		if (o->keys[k] == HD_KEY_CLASS)
			ck = k;
	*objects = *bytes = 0;
	*ok = ck < o->nkeys;
	for (i = 0; *ok && nd && i < n; i++) {
		if (!cmp_name(rows[i].key[ck], rows[i].key_len[ck], b->key,
			      b->key_len))
			continue;
		*objects += (double)rows[i].count[nd - 1] -
			    (double)rows[i].count[0];
		*bytes += (double)rows[i].memsize[nd - 1] -
			  (double)rows[i].memsize[0];
	}
}

static int measure(double *v, const struct facts *f, const struct budget *b,
		   hd_error *err)
{
	double objects = 0, bytes = 0;
	int ok = 1;

	switch (b->metric) {
	case M_LEAK_BYTES:
		*v = (double)f->bytes;
		return 0;
	case M_LEAK_OBJECTS:
		*v = (double)f->objects;
		return 0;
	case M_LEAK_VERDICT:
		*v = f->significant;
		return 0;
	case M_SUSPECT_SHARE:
		*v = f->share;
		return 0;
	case M_SUSPECT_BYTES:
		*v = (double)f->suspect_bytes;
		return 0;
	case M_TREND_VERDICT:
		*v = f->trend_verdict;
		return 0;
	default:
		break;
	}
	if (f->t)
		trend_sum(f, b, &objects, &bytes, &ok);
	else
		set_sum(f, b, &objects, &bytes);
	if (!ok)
		return hd__error(err, HD_EINVAL,
				 "budget %s: the trend is not grouped by "
				 "class (--by class)",
				 b->text);
	*v = b->metric == M_CLASS_BYTES || b->metric == M_SITE_BYTES ? bytes :
								       objects;
	return 0;
}

static int holds(int op, double v, double limit)
{
	switch (op) {
	case OP_GT: return v > limit;
	case OP_GE: return v >= limit;
	case OP_LT: return v < limit;
	case OP_LE: return v <= limit;
	case OP_EQ: return v == limit;
	default: return v != limit;
	}
}

static void value_text(char *buf, size_t size, int metric, double v)
{
	int unit = metrics[metric].unit;

	if (unit == U_WORD) {
		int i = (int)v;

		snprintf(buf, size, "%s",
			 metric == M_LEAK_VERDICT ?
				 leak_words[i ? 1 : 0] :
				 (i >= 0 && i < 4 ? trend_words[i] : "?"));
	} else if (unit == U_SHARE) {
		snprintf(buf, size, "%.1f%%", v * 100);
	} else if (unit == U_BYTES) {
		if (v < 0) {
			size_t n = (size_t)snprintf(buf, size, "-");

			hd_bytes_text(buf + n, size - n, (uint64_t)-v);
		} else {
			hd_bytes_text(buf, size, (uint64_t)v);
		}
	} else {
		char c[32];

		if (v < 0) {
			snprintf(buf, size, "-%s", hd__commas((uint64_t)-v, c));
		} else {
			snprintf(buf, size, "%s", hd__commas((uint64_t)v, c));
		}
	}
}

static char *message(const struct budget *b, const struct facts *f,
		     double v, int exceeded, double over)
{
	char val[64], lim[64], by[160];
	const char *d = f->detail;
	size_t need;
	char *m;

	value_text(val, sizeof(val), b->metric, v);
	value_text(lim, sizeof(lim), b->metric, b->limit);
	by[0] = 0;
	if (exceeded && b->op != OP_EQ && b->op != OP_NE) {
		char o[64];

		value_text(o, sizeof(o), b->metric, over);
		snprintf(by, sizeof(by), ", %s %s the limit %s", o,
			 b->op == OP_GT || b->op == OP_GE ? "over" : "under",
			 lim);
	}
	need = strlen(b->text) + strlen(val) + strlen(by) +
	       (d ? strlen(d) : 0) + 96;
	m = hd__malloc(need);
	if (!m)
		return NULL;
	snprintf(m, need, "budget %s %s: %s %s%s%s%s", b->text,
		 exceeded ? "exceeded" : "kept", metrics[b->metric].unit ==
		 U_WORD ? "verdict" : "measured", val, by,
		 d && exceeded ? "; " : "", d && exceeded ? d : "");
	return m;
}

static int evaluate(hd_budget_report **out, const hd_budget *b,
		    struct facts *f, hd_error *err)
{
	hd_budget_report *r;
	size_t i;
	int rc;

	*out = NULL;
	if ((rc = hd_budget_check(b, f->source, err)))
		return rc;
	r = hd__calloc(1, sizeof(*r));
	if (!r || !(r->r = hd__calloc(b->n ? b->n : 1, sizeof(*r->r)))) {
		free(r);
		return hd__error(err, HD_ENOMEM, "out of memory");
	}
	for (i = 0; i < b->n; i++) {
		const struct budget *x = &b->b[i];
		hd_budget_result *y = &r->r[i];
		double v = 0;

		r->n = i + 1;
		if ((rc = measure(&v, f, x, err)))
			goto fail;
		y->text = x->text;
		y->value = v;
		y->limit = x->limit;
		y->exceeded = holds(x->op, v, x->limit);
		if (y->exceeded && x->op != OP_EQ && x->op != OP_NE)
			y->over = fabs(v - x->limit);
		if (!(y->message = message(x, f, v, y->exceeded, y->over))) {
			rc = hd__error(err, HD_ENOMEM, "out of memory");
			goto fail;
		}
		r->exceeded += y->exceeded != 0;
	}
	r->n = b->n;
	*out = r;
	return 0;
fail:
	hd_budget_report_free(r);
	return rc;
}

int hd_budget_eval_leaks(hd_budget_report **out, const hd_budget *b,
			 const hd_leaks *l, const hd_store *s,
			 const hd_diff_result *d, hd_error *err)
{
	struct facts f;
	hd_leaks_totals t;
	uint64_t passed = 0, skip;
	size_t i, n;
	const hd_leaks_suspect *sp;
	int rc;

	memset(&f, 0, sizeof(f));
	hd_leaks_totals_get(&t, l);
	f.source = HD_BUDGET_LEAKS;
	for (i = 0; (sp = hd_leaks_suspect_get(l, i)); i++)
		if (sp->flags & (HD_SUSPECT_TRANSIENT | HD_SUSPECT_CHURN))
			hd__sat_add(&passed, sp->retained_count);
	/* what the verdict weighs: the leak less the VM's tables, the
	 * unreached and what only running code or a bounded cache holds */
	f.bytes = t.leak_memsize;
	skip = t.vm_memsize;
	hd__sat_add(&skip, t.unreached_memsize);
	hd__sat_add(&skip, t.passed_memsize);
	f.bytes -= skip < f.bytes ? skip : f.bytes;
	f.objects = t.leak_count;
	skip = t.vm_count;
	hd__sat_add(&skip, t.unreached_count);
	hd__sat_add(&skip, passed);
	f.objects -= skip < f.objects ? skip : f.objects;
	f.significant = t.significant;
	if (t.first_kind == HD_LEAKS_FIRST_SUSPECT &&
	    (sp = hd_leaks_suspect_get(l, t.first_index))) {
		f.share = t.first_share;
		f.suspect_bytes = sp->retained_memsize;
	} else if (t.first_kind == HD_LEAKS_FIRST_CLUSTER) {
		const hd_leaks_cluster *c =
			hd_leaks_cluster_get(l, t.first_index);

		f.share = t.first_share;
		f.suspect_bytes = c ? c->retained_memsize : 0;
	}
	f.s = s;
	f.set = d->has_later ? &d->retained_later : &d->added;
	if (!(f.detail = hd__malloc(n = 1024)))
		return hd__error(err, HD_ENOMEM, "out of memory");
	if ((i = hd_leaks_verdict_text(f.detail, n, l)) >= n) {
		free(f.detail);
		if (!(f.detail = hd__malloc(i + 1)))
			return hd__error(err, HD_ENOMEM, "out of memory");
		hd_leaks_verdict_text(f.detail, i + 1, l);
	}
	rc = evaluate(out, b, &f, err);
	free(f.detail);
	return rc;
}

int hd_budget_eval_diff(hd_budget_report **out, const hd_budget *b,
			const hd_store *s, const hd_diff_result *d,
			hd_error *err)
{
	struct facts f;
	char a[32], c[32], text[160];

	memset(&f, 0, sizeof(f));
	f.source = HD_BUDGET_DIFF;
	f.set = d->has_later ? &d->retained_later : &d->added;
	f.s = s;
	f.objects = f.set->n;
	f.bytes = d->has_later ? d->retained_later_memsize : d->added_memsize;
	hd_bytes_text(a, sizeof(a), f.bytes);
	snprintf(text, sizeof(text), "%s new objects (%s)%s",
		 hd__commas(f.objects, c), a,
		 d->has_later ? " still alive in LATER" : "");
	f.detail = text;
	return evaluate(out, b, &f, err);
}

int hd_budget_eval_trend(hd_budget_report **out, const hd_budget *b,
			 const hd_trend *t, hd_error *err)
{
	struct facts f;
	size_t n = 0, nd = hd_trend_ndumps(t), k, len = 0;
	const hd_trend_row *rows = hd_trend_rows(t, &n);
	const hd_trend_options *o = hd_trend_options_get(t);
	char *text = NULL;
	int rc;

	memset(&f, 0, sizeof(f));
	f.source = HD_BUDGET_TREND;
	f.t = t;
	f.trend_verdict = n ? rows[0].verdict : HD_TREND_FLAT;
	if (n && nd) {
		/* the first row: its key and counts, "String (every-step):
		 * 10 -> 20 -> 30 objects" */
		size_t cap = 64 + 24 * nd;

		for (k = 0; k < o->nkeys; k++)
			cap += rows[0].key_len[k] + 3;
		if (!(text = hd__malloc(cap)))
			return hd__error(err, HD_ENOMEM, "out of memory");
		for (k = 0; k < o->nkeys; k++)
			len += (size_t)snprintf(text + len, cap - len, "%s%.*s",
						k ? " " : "",
						(int)rows[0].key_len[k],
						rows[0].key[k]);
		len += (size_t)snprintf(text + len, cap - len, " (%s):",
					hd_trend_verdict_name(rows[0].verdict));
		for (k = 0; k < nd; k++)
			len += (size_t)snprintf(text + len, cap - len,
						"%s %llu", k ? " ->" : "",
						(unsigned long long)rows[0]
							.count[k]);
		snprintf(text + len, cap - len, " objects");
	}
	f.detail = text;
	rc = evaluate(out, b, &f, err);
	free(text);
	return rc;
}

size_t hd_budget_report_count(const hd_budget_report *r)
{
	return r ? r->n : 0;
}

size_t hd_budget_report_exceeded(const hd_budget_report *r)
{
	return r ? r->exceeded : 0;
}

const hd_budget_result *hd_budget_report_get(const hd_budget_report *r,
					     size_t i)
{
	return r && i < r->n ? &r->r[i] : NULL;
}

void hd_budget_report_free(hd_budget_report *r)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; i < r->n; i++)
		free(r->r[i].message);
	free(r->r);
	free(r);
}
