/*
 * select_explain.c - why a selection picks nothing: the condition that
 * fails, with the nearest names of the dump (a banded edit distance,
 * hd_name_distance, which the CLI also uses for mistyped commands and
 * options).
 */
#include "select_int.h"

#include <stdarg.h>
#include <stdio.h>

/* ---- names near a mistyped one ---- */

static int fold(int c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

/* At most three suggestions, best first. */
#define NSUGGEST 3

struct suggest {
	const char *q;
	size_t qn;
	unsigned cap;
	unsigned score[NSUGGEST];
	size_t len[NSUGGEST];
	char name[NSUGGEST][128];
	unsigned n;
};

static void suggest_init(struct suggest *g, const char *q)
{
	memset(g, 0, sizeof(*g));
	g->q = q;
	g->qn = strlen(q);
	g->cap = g->qn <= 4 ? 1 : g->qn <= 8 ? 2 : 3;
}

/* Does q occur in c, without case? (q short: the work is bounded) */
static int has_folded(const char *c, size_t cn, const char *q, size_t qn)
{
	size_t i, j;

	if (qn < 3 || qn > 64 || cn > 1024 || cn < qn)
		return 0;
	for (i = 0; i + qn <= cn; i++) {
		for (j = 0; j < qn; j++)
			if (fold((unsigned char)c[i + j]) !=
			    fold((unsigned char)q[j]))
				break;
		if (j == qn)
			return 1;
	}
	return 0;
}

/* Offers candidate c[0..cn) (not NUL-terminated) to the suggestions. */
static void suggest_offer(struct suggest *g, const char *c, size_t cn)
{
	unsigned d, k, at;
	size_t dl = cn > g->qn ? cn - g->qn : g->qn - cn;

	if (!cn || cn >= sizeof(g->name[0]) ||
	    (cn == g->qn && memcmp(c, g->q, cn) == 0))
		return;
	d = hd_name_distance(g->q, g->qn, c, cn, g->cap);
	if (d > g->cap && has_folded(c, cn, g->q, g->qn))
		d = g->cap; /* "HTTP" for "Net::HTTP" */
	if (d > g->cap)
		return;
	for (k = 0; k < g->n; k++)
		if (g->len[k] == cn && memcmp(g->name[k], c, cn) == 0)
			return;
	for (at = 0; at < g->n; at++) {
		size_t odl = g->len[at] > g->qn ? g->len[at] - g->qn :
						   g->qn - g->len[at];

		if (d < g->score[at] || (d == g->score[at] && dl < odl))
			break;
	}
	if (at == NSUGGEST)
		return;
	if (g->n < NSUGGEST)
		g->n++;
	for (k = g->n - 1; k > at; k--) {
		g->score[k] = g->score[k - 1];
		g->len[k] = g->len[k - 1];
		memcpy(g->name[k], g->name[k - 1], sizeof(g->name[k]));
	}
	g->score[at] = d;
	g->len[at] = cn;
	memcpy(g->name[at], c, cn);
	g->name[at][cn] = '\0';
}

enum { S_CLASSES, S_NAMES, S_FILES };

/* Offers the names of one kind the store holds, each distinct one once. */
static int suggest_scan(struct suggest *g, struct eval *e, int kind)
{
	const hd_store *s = e->s;
	uint32_t i, n = hd_store_node_count(s), v;
	struct hd__map seen;
	const char *p;
	size_t len;
	hd_site site;
	int t, found;
	uint64_t key;

	if (hd__map_init(&seen, 256))
		return HD_ENOMEM;
	for (i = 0; i < n; i++) {
		t = hd_store_type(s, i);
		if (kind == S_NAMES) {
			if (t != HD_T_CLASS && t != HD_T_MODULE)
				continue;
			p = hd_store_aux(s, i, &len);
			key = (uint64_t)(uintptr_t)p;
		} else if (kind == S_FILES) {
			if (hd_store_site(&site, s, i) || !site.file)
				continue;
			p = site.file;
			len = site.file_len;
			key = (uint64_t)(uintptr_t)p;
		} else {
			hd_node_id c = hd_store_class(s, i);

			if (c == HD_NODE_NONE && hd_store_class_address(s, i))
				continue; /* #<unknown:0x...> */
			key = ((uint64_t)c + 1) << 8 | (uint64_t)(t & 0xff);
			p = NULL;
		}
		if (!key)
			continue;
		if (hd__map_put(&seen, key, 1, &v, &found)) {
			hd__map_free(&seen);
			return HD_ENOMEM;
		}
		if (found)
			continue;
		if (!p) {
			len = hd_store_class_name(e->name, sizeof(e->name), s, i);
			if (len >= sizeof(e->name))
				continue;
			p = e->name;
		}
		suggest_offer(g, p, len);
	}
	hd__map_free(&seen);
	return 0;
}

/* ---- why a selection picks nothing ---- */

/* Text appended to a caller's buffer, truncated to fit. */
struct sb {
	char *b;
	size_t size, n;
};

static void HD_PRINTF(2, 3) sb_add(struct sb *o, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (o->n + 1 >= o->size)
		return;
	va_start(ap, fmt);
	k = vsnprintf(o->b + o->n, o->size - o->n, fmt, ap);
	va_end(ap);
	if (k > 0)
		o->n = o->n + (size_t)k < o->size ? o->n + (size_t)k :
						      o->size - 1;
}

/* A value, cut to a sane length: a hostile one may be huge
 * (suggestions are shorter than that: they are shown whole). Its bytes
 * are as they are: escaping control bytes is the printer's business. */
static void sb_text(struct sb *o, const char *v)
{
	size_t n = strlen(v);

	sb_add(o, "%.*s%s", 127, v, n > 127 ? "..." : "");
}

static void sb_value(struct sb *o, const char *v)
{
	sb_add(o, "'");
	sb_text(o, v);
	sb_add(o, "'");
}

static void sb_suggest(struct sb *o, const struct suggest *g)
{
	unsigned k;

	unsigned n = 0;

	while (n < g->n && g->score[n] == g->score[0]) /* the nearest only */
		n++;
	if (!n)
		return;
	sb_add(o, "; did you mean ");
	for (k = 0; k < n; k++) {
		if (k)
			sb_add(o, k + 1 == n ? " or " : ", ");
		sb_value(o, g->name[k]);
	}
	sb_add(o, "?");
}

static void sb_range(struct sb *o, const struct range *r)
{
	if (r->lo == r->hi)
		sb_add(o, "%llu", (unsigned long long)r->lo);
	else if (r->hi == UINT64_MAX)
		sb_add(o, "%llu..", (unsigned long long)r->lo);
	else if (r->lo == 0)
		sb_add(o, "..%llu", (unsigned long long)r->hi);
	else
		sb_add(o, "%llu..%llu", (unsigned long long)r->lo,
		       (unsigned long long)r->hi);
}

static int span_is(const char *s, size_t n, const char *lit)
{
	return s && n == strlen(lit) && memcmp(s, lit, n) == 0;
}

/* The class or module node named v, if any: its type, else 0. */
static int named_type(const hd_store *s, const char *v)
{
	uint32_t i, n = hd_store_node_count(s);
	const char *p;
	size_t len;
	int t;

	for (i = 0; i < n; i++) {
		t = hd_store_type(s, i);
		if (t != HD_T_CLASS && t != HD_T_MODULE)
			continue;
		p = hd_store_aux(s, i, &len);
		if (span_is(p, len, v))
			return t;
	}
	return 0;
}

static const char untraced[] =
	" (no object has an allocation site: the dump was written "
	"without allocation tracing)";

static int why_patterns(struct eval *e, struct sb *o, int names)
{
	const hd_select *sel = e->sel;
	const struct pattern *v = names ? sel->names : sel->classes;
	size_t i, nv = names ? sel->nnames : sel->nclasses;
	struct suggest g;
	int t;

	for (i = 0; i < nv; i++) {
		if (i)
			sb_add(o, "; ");
		if (v[i].is_re) {
			sb_add(o, "no %s matches ",
			       names ? "class or module name" : "class name");
			sb_value(o, v[i].text);
			continue;
		}
		if (!names && (t = named_type(e->s, v[i].text))) {
			sb_add(o, "no object is an instance of ");
			sb_value(o, v[i].text);
			sb_add(o, ", a %s of the dump: select the %s itself "
				  "with --name ",
			       t == HD_T_MODULE ? "module" : "class",
			       t == HD_T_MODULE ? "module" : "class");
			sb_text(o, v[i].text);
			continue;
		}
		sb_add(o, "no %s is named ",
		       names ? "class or module" : "class");
		sb_value(o, v[i].text);
		suggest_init(&g, v[i].text);
		if (suggest_scan(&g, e, names ? S_NAMES : S_CLASSES))
			return HD_ENOMEM;
		sb_suggest(o, &g);
	}
	return 0;
}

static int why_files(struct eval *e, struct sb *o, int traced)
{
	const hd_select *sel = e->sel;
	struct suggest g;
	size_t i;

	for (i = 0; i < sel->nfiles; i++) {
		if (i)
			sb_add(o, "; ");
		sb_add(o, "no object was allocated in ");
		sb_value(o, sel->files[i]);
		if (!traced)
			continue;
		suggest_init(&g, sel->files[i]);
		if (suggest_scan(&g, e, S_FILES))
			return HD_ENOMEM;
		sb_suggest(o, &g);
	}
	if (!traced)
		sb_add(o, "%s", untraced);
	return 0;
}

static void why_generations(struct eval *e, struct sb *o)
{
	const hd_select *sel = e->sel;
	uint32_t i, n = hd_store_node_count(e->s);
	uint64_t g, lo = UINT64_MAX, hi = 0;
	size_t k;

	sb_add(o, "no object was allocated in generation ");
	for (k = 0; k < sel->ngens; k++) {
		if (k)
			sb_add(o, ", ");
		sb_range(o, &sel->gens[k]);
	}
	for (i = 0; i < n; i++) {
		g = hd_store_generation(e->s, i);
		if (g == UINT64_MAX)
			continue;
		lo = g < lo ? g : lo;
		hi = g > hi ? g : hi;
	}
	if (lo > hi)
		sb_add(o, " (no object has a generation: the dump was "
			  "written without allocation tracing)");
	else if (lo == hi)
		sb_add(o, " (generation %llu only here)",
		       (unsigned long long)lo);
	else
		sb_add(o, " (generations %llu to %llu here)",
		       (unsigned long long)lo, (unsigned long long)hi);
}

static void why_addresses(const hd_select *sel, struct sb *o)
{
	size_t i, k = 0;

	if (!sel->naddrs) {
		sb_add(o, "the --from input gives no object address");
		return;
	}
	if (sel->naddrs == 1) {
		sb_add(o, "no object is at ");
	} else {
		char a[32];

		sb_add(o, "no object is at any of the %s addresses ",
		       hd__commas(sel->naddrs, a));
	}
	for (i = 0; i < sel->naddrs && k < 3; i++) {
		if (i && sel->addrs[i] == sel->addrs[i - 1])
			continue;
		sb_add(o, "%s0x%llx", k ? ", " : sel->naddrs > 1 ? "(" : "",
		       (unsigned long long)sel->addrs[i]);
		k++;
	}
	if (sel->naddrs > 1)
		sb_add(o, "%s)", sel->naddrs > k ? ", ..." : "");
}

/* One key's failure: no object meets it alone. */
static int why_key(struct eval *e, struct sb *o, unsigned k, int traced)
{
	const hd_select *sel = e->sel;
	size_t i;
	int t, first = 1;

	switch (k) {
	case K_ADDRESS:
		why_addresses(sel, o);
		return 0;
	case K_CLASS:
	case K_NAME:
		return why_patterns(e, o, k == K_NAME);
	case K_TYPE:
		sb_add(o, "no object is of type ");
		for (t = 0; t < 32; t++)
			if (sel->types & (1u << t)) {
				sb_add(o, "%s%s", first ? "" : " or ",
				       hd_type_name(t));
				first = 0;
			}
		return 0;
	case K_FILE:
		return why_files(e, o, traced);
	case K_LOCATION:
		sb_add(o, "no object was allocated at ");
		for (i = 0; i < sel->nlocs; i++) {
			sb_add(o, "%s'", i ? " or " : "");
			sb_text(o, sel->locs[i].file);
			sb_add(o, ":%llu'",
			       (unsigned long long)sel->locs[i].line);
		}
		if (!traced)
			sb_add(o, "%s", untraced);
		return 0;
	case K_GENERATION:
		why_generations(e, o);
		return 0;
	case K_VIA:
		sb_add(o, "no object is referenced through a reference named ");
		for (i = 0; i < sel->nvias; i++) {
			sb_add(o, "%s'", i ? " or " : "");
			sb_text(o, sel->vias[i].text);
			sb_add(o, "'");
		}
		if (!hd_store_has_ref_names(e->s))
			sb_add(o, " (the dump has no reference names: "
				  "HeapDump.dump writes them, dump_all does "
				  "not)");
		return 0;
	}
	return 0;
}

/* "class Request", "type STRING" (the first value, and how many more). */
static void sb_condition(struct sb *o, const hd_select *sel, unsigned k)
{
	size_t more = 0;
	int t;

	sb_add(o, "%s ", hd__select_keys[k]);
	switch (k) {
	case K_ADDRESS:
		sb_add(o, "0x%llx", (unsigned long long)sel->addrs[0]);
		more = sel->naddrs - 1;
		break;
	case K_CLASS:
		sb_text(o, sel->classes[0].text);
		more = sel->nclasses - 1;
		break;
	case K_NAME:
		sb_text(o, sel->names[0].text);
		more = sel->nnames - 1;
		break;
	case K_TYPE:
		for (t = 0; t < 32; t++)
			if (sel->types & (1u << t)) {
				sb_add(o, "%s%s", more ? "|" : "",
				       hd_type_name(t));
				more = 1;
			}
		more = 0;
		break;
	case K_FILE:
		sb_text(o, sel->files[0]);
		more = sel->nfiles - 1;
		break;
	case K_LOCATION:
		sb_text(o, sel->locs[0].file);
		sb_add(o, ":%llu", (unsigned long long)sel->locs[0].line);
		more = sel->nlocs - 1;
		break;
	case K_GENERATION:
		sb_range(o, &sel->gens[0]);
		more = sel->ngens - 1;
		break;
	case K_VIA:
		sb_text(o, sel->vias[0].text);
		more = sel->nvias - 1;
		break;
	}
	if (more)
		sb_add(o, " (and %zu more)", more);
}

int hd_select_explain(char *buf, size_t size, const hd_select *sel,
		      const hd_store *s, hd_error *err)
{
	struct sb o = { buf, size, 0 };
	uint64_t cnt[K__COUNT], miss;
	struct eval e;
	hd_store_info info;
	unsigned k, zero = 0;
	char a[32];
	int rc = 0;

	HD_ASSERT_ARG(sel && s && (buf || !size));
	if (size)
		buf[0] = '\0';
	if (!sel->used) {
		sb_add(&o, "the selection has no condition");
		return 0;
	}
	hd_store_info_get(&info, s);
	if (hd__eval_init(&e, sel, s))
		goto nomem;
	for (k = 0; k < K__COUNT; k++) {
		cnt[k] = 1;
		if (!(sel->used & (1u << k)))
			continue;
		e.used = 1u << k;
		miss = 0;
		if (hd__eval_run(&e, NULL, &cnt[k], &miss))
			goto nomem;
		zero += !cnt[k];
	}
	for (k = 0; k < K__COUNT && zero; k++) {
		if (!(sel->used & (1u << k)) || cnt[k])
			continue;
		if (o.n)
			sb_add(&o, "; ");
		if (why_key(&e, &o, k, (info.features & HD_FEAT_TRACED) != 0))
			goto nomem;
	}
	if (!zero) {
		sb_add(&o, "each condition picks objects (");
		for (k = 0; k < K__COUNT; k++) {
			if (!(sel->used & (1u << k)))
				continue;
			if (o.n && o.b[o.n - 1] != '(')
				sb_add(&o, "; ");
			sb_condition(&o, sel, k);
			sb_add(&o, ": %s object%s", hd__commas(cnt[k], a),
			       cnt[k] == 1 ? "" : "s");
		}
		sb_add(&o, "), but no object meets them all");
	}
	hd__eval_free(&e);
	return rc;
nomem:
	hd__eval_free(&e);
	return hd__error(err, HD_ENOMEM, "out of memory");
}
