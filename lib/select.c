/*
 * select.c - selections of objects: the one grammar every graph command
 * takes (--address, --class, --name, --type, --file, --location,
 * --generation, --from). Values of one key are alternatives; different
 * keys must all hold. Evaluated over a store in one pass, with the
 * per-node work that repeats (class names, file names) cached. When a
 * selection picks nothing, hd_select_explain says which condition failed
 * and suggests the nearest names of the dump. Also the one rule of what
 * every command leaves out unless --all (hd_store_is_dumper).
 */
#include "hd_int.h"

#include <ctype.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

enum { K_ADDRESS, K_CLASS, K_TYPE, K_FILE, K_LOCATION, K_GENERATION,
       K_FROM, K_NAME, K__COUNT };

static const char *const key_names[K__COUNT] = {
	"address", "class", "type", "file", "location", "generation", "from",
	"name",
};

struct pattern {
	char *text;        /* the value as given: a name, or /regex/ */
	int is_re;
	regex_t re;
};

struct range {
	uint64_t lo, hi;
};

struct location {
	char *file;
	uint64_t line;
};

struct hd_select {
	unsigned used;             /* bit per key */
	uint64_t *addrs;           /* --address and --from, sorted at use */
	size_t naddrs, addrs_cap;
	struct pattern *classes;
	size_t nclasses, classes_cap;
	struct pattern *names;     /* --name */
	size_t nnames, names_cap;
	uint64_t from_skipped, from_first; /* of the last --from file */
	uint32_t types;            /* bit per hd_type */
	char **files;
	size_t nfiles, files_cap;
	struct location *locs;
	size_t nlocs, locs_cap;
	struct range *gens;
	size_t ngens, gens_cap;
};

int hd_select_new(hd_select **out, hd_error *err)
{
	HD_ASSERT_ARG(out);
	*out = hd__calloc(1, sizeof(**out));
	return *out ? 0 : hd__error(err, HD_ENOMEM, "out of memory");
}

int hd_select_empty(const hd_select *sel)
{
	return !sel || !sel->used;
}

static char *dup_n(const char *s, size_t n)
{
	char *d = hd__malloc(n + 1);

	if (d) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

static int add_addr(hd_select *sel, uint64_t a)
{
	if (hd__grow((void **)&sel->addrs, &sel->addrs_cap, sel->naddrs + 1,
		     sizeof(*sel->addrs)))
		return HD_ENOMEM;
	sel->addrs[sel->naddrs++] = a;
	return 0;
}

static void skip_line(hd_select *sel, uint64_t line)
{
	if (!sel->from_skipped++)
		sel->from_first = line;
}

/* A line the reader skips: it carries no address (with
 * HD_READ_ADDRESSES a line with one is returned). */
static void from_problem(const hd_problem *p, void *payload)
{
	if (!p->repaired)
		skip_line(payload, p->line);
}

/*
 * The addresses an NDJSON file carries: of its object records, and of
 * any line with an "address" member, with or without a "type" (jq's
 * output). The other lines are counted, blank and ROOT lines aside.
 */
static int add_from(hd_select *sel, const char *path, hd_error *err)
{
	hd_read_options o = HD_READ_OPTIONS_INIT;
	hd_reader *r = NULL;
	const hd_record *rec;
	int rc;

	/* an empty selection (diff -o with nothing new) is no error; a
	 * line with an address but no type is one (jq's '{address}') */
	o.flags = HD_READ_ALLOW_EMPTY | HD_READ_ADDRESSES;
	o.problem = from_problem;
	o.payload = sel;
	sel->from_skipped = sel->from_first = 0;
	if ((rc = hd_reader_open(&r, path, &o, err)))
		return rc;
	while ((rc = hd_reader_next(r, &rec, err)) == 0) {
		if (rec->kind == HD_REC_ROOT || rec->kind == HD_REC_SHAPE)
			continue;
		if (!(rec->has & HD_HAS_ADDRESS)) {
			skip_line(sel, rec->lineno);
			continue;
		}
		if (add_addr(sel, rec->address)) {
			rc = hd__error(err, HD_ENOMEM, "out of memory");
			break;
		}
	}
	hd_reader_free(r);
	return rc == HD_ITEROVER ? 0 : rc;
}

uint64_t hd_select_address_count(const hd_select *sel)
{
	return sel ? sel->naddrs : 0;
}

uint64_t hd_select_from_skipped(const hd_select *sel, uint64_t *first_line)
{
	if (first_line)
		*first_line = sel ? sel->from_first : 0;
	return sel ? sel->from_skipped : 0;
}

static int parse_u64(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (!n)
		return -1;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9' || v > (UINT64_MAX - 9) / 10)
			return -1;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*out = v;
	return 0;
}

/* N, N..M, N.. or ..M */
static int add_gen(hd_select *sel, const char *v, hd_error *err)
{
	const char *dots = strstr(v, "..");
	struct range r = { 0, UINT64_MAX };
	size_t n = strlen(v);

	if (!dots) {
		if (parse_u64(v, n, &r.lo))
			goto bad;
		r.hi = r.lo;
	} else {
		if (dots > v && parse_u64(v, (size_t)(dots - v), &r.lo))
			goto bad;
		if (dots[2] && parse_u64(dots + 2, strlen(dots + 2), &r.hi))
			goto bad;
		if ((dots == v && !dots[2]) || r.lo > r.hi)
			goto bad;
	}
	if (hd__grow((void **)&sel->gens, &sel->gens_cap, sel->ngens + 1,
		     sizeof(*sel->gens)))
		return hd__error(err, HD_ENOMEM, "out of memory");
	sel->gens[sel->ngens++] = r;
	return 0;
bad:
	return hd__error(err, HD_EINVAL,
			 "generation '%s': want N, N..M, N.. or ..M", v);
}

/*
 * Regexes are compiled and run by the C library, and a short one can
 * still hurt glibc's: its parser recurses once per nested group (a deep
 * one overflows the stack); it copies the operand of every x+ and
 * x{n,m}, so that nested repetitions multiply (23 nested "+" in 70
 * bytes took 13 GB and 44 s, found by fuzz_select) and starred copies
 * grow its closures quadratically; and a back-reference can send its
 * matcher into a recursion that never ends ("(|)(\1\1)*" crashes it:
 * CVE-2019-9192, not fixed in glibc). So a /regex/ is walked first, in
 * one pass with no recursion: at most RE_MAX_LEN bytes, RE_MAX_DEPTH
 * levels of groups, no back-reference, and at most RE_MAX_NODES nodes
 * once every repetition is expanded (an upper bound of what regcomp
 * builds; the worst found at the bound, "((a*)*){580}", compiles in a
 * third of a second and 12 MB).
 */
#define RE_MAX_LEN 1024
#define RE_MAX_DEPTH 32
#define RE_MAX_NODES 4096
#define RE_DUP_CAP 100000 /* past RE_DUP_MAX: regcomp refuses it anyway */

/* One level of groups: its nodes so far, those of its last item (what a
 * repetition that follows applies to; 0 after "|" or at its start). */
struct re_level {
	uint64_t sum, last;
};

/* The index just past the bracket expression opened before re[i]. */
static size_t re_bracket_end(const char *re, size_t n, size_t i)
{
	if (i < n && re[i] == '^')
		i++;
	if (i < n && re[i] == ']') /* a leading ']' is a member */
		i++;
	while (i < n && re[i] != ']') {
		char t = i + 1 < n ? re[i + 1] : 0;

		if (re[i] == '[' && (t == ':' || t == '=' || t == '.')) {
			/* [:class:], [=equiv=], [.coll.] up to "t]" */
			for (i += 2; i + 1 < n; i++)
				if (re[i] == t && re[i + 1] == ']')
					break;
			i += 2;
		} else {
			i++;
		}
	}
	return i < n ? i + 1 : n;
}

static size_t re_number(const char *re, size_t n, size_t *i, int *any)
{
	size_t v = 0;

	*any = 0;
	for (; *i < n && re[*i] >= '0' && re[*i] <= '9'; (*i)++) {
		*any = 1;
		v = v * 10 + (size_t)(re[*i] - '0');
		if (v > RE_DUP_CAP)
			v = RE_DUP_CAP;
	}
	return v;
}

/* An interval {n}, {n,}, {n,m} or {,m} opened before re[*i]: the copies
 * of its operand regcomp makes (at least 1), *i moved past it; 0 when it
 * is no interval ("{" is then an ordinary character). */
static size_t re_interval(const char *re, size_t n, size_t *i)
{
	size_t j = *i, lo, hi, copies;
	int has_lo, has_hi = 0, comma = 0;

	lo = re_number(re, n, &j, &has_lo);
	hi = lo;
	if (j < n && re[j] == ',') {
		comma = 1;
		j++;
		hi = re_number(re, n, &j, &has_hi);
	}
	if (j >= n || re[j] != '}' || (!has_lo && !has_hi))
		return 0;
	*i = j + 1;
	copies = !comma || has_hi ? hi : lo + 1; /* {n,}: n, then x* */
	return copies ? copies : 1;
}

/* Refuses re[0..n) when it would hurt the C library (see above); key
 * names the option in messages. */
static int re_check(const char *key, const char *re, size_t n,
		    hd_error *err)
{
	struct re_level lv[RE_MAX_DEPTH + 1];
	unsigned d = 0;
	size_t i = 0, copies;
	uint64_t w;
	char c;

	if (n > RE_MAX_LEN)
		return hd__error(err, HD_EINVAL,
				 "%s /regex/: longer than %d bytes",
				 key, RE_MAX_LEN);
	lv[0].sum = lv[0].last = 0;
	while (i < n) {
		c = re[i++];
		w = 1; /* an ordinary character, ".", "^", "$" */
		switch (c) {
		case '\\':
			if (i < n && re[i] >= '1' && re[i] <= '9')
				return hd__error(err, HD_EINVAL,
						 "%s /regex/: back-references "
						 "(\\1 to \\9) are not supported",
						 key);
			i += i < n;
			break;
		case '[':
			i = re_bracket_end(re, n, i);
			break;
		case '(':
			if (d == RE_MAX_DEPTH)
				return hd__error(err, HD_EINVAL,
						 "%s /regex/: groups nested "
						 "deeper than %d",
						 key, RE_MAX_DEPTH);
			d++;
			lv[d].sum = lv[d].last = 0;
			continue;
		case ')':
			if (d) /* else an ordinary character */
				w = lv[d--].sum + 1;
			break;
		case '|':
			lv[d].last = 0;
			break;
		case '*':
		case '?':
			w = lv[d].last + 1;
			lv[d].sum -= lv[d].last;
			break;
		case '+': /* x x* */
			w = 2 * lv[d].last + 2;
			lv[d].sum -= lv[d].last;
			break;
		case '{':
			if (!(copies = re_interval(re, n, &i)))
				break;
			w = (uint64_t)copies * (lv[d].last + 2);
			lv[d].sum -= lv[d].last;
			break;
		}
		lv[d].sum += w;
		lv[d].last = c == '|' ? 0 : w;
		if (lv[d].sum > RE_MAX_NODES)
			return hd__error(err, HD_EINVAL,
					 "%s /regex/: more than %d nodes "
					 "once its repetitions are expanded "
					 "(x+ and x{n,m} copy x)",
					 key, RE_MAX_NODES);
	}
	return 0;
}

static void pattern_free(struct pattern *p)
{
	if (p->is_re)
		regfree(&p->re);
	hd__free(p->text, strlen(p->text) + 1);
}

/* A name or a /regex/ of key ("class", "name") onto *v. */
static int add_pattern(struct pattern **v, size_t *nv, size_t *cap,
		       const char *key, const char *value, hd_error *err)
{
	size_t n = strlen(value);
	struct pattern p;
	char msg[128];
	int rc;

	memset(&p, 0, sizeof(p));
	if (n >= 2 && value[0] == '/' && value[n - 1] == '/') {
		char *re;

		if ((rc = re_check(key, value + 1, n - 2, err)))
			return rc;
		if (!(re = dup_n(value + 1, n - 2)))
			return hd__error(err, HD_ENOMEM, "out of memory");
		rc = regcomp(&p.re, re, REG_EXTENDED | REG_NOSUB);
		hd__free(re, n - 1);
		if (rc) {
			regerror(rc, &p.re, msg, sizeof(msg));
			return hd__error(err, HD_EINVAL, "%s %s: %s", key,
					 value, msg);
		}
		p.is_re = 1;
	}
	if (!(p.text = dup_n(value, n)) ||
	    hd__grow((void **)v, cap, *nv + 1, sizeof(**v))) {
		if (p.text)
			hd__free(p.text, n + 1);
		if (p.is_re)
			regfree(&p.re);
		return hd__error(err, HD_ENOMEM, "out of memory");
	}
	(*v)[(*nv)++] = p;
	return 0;
}

static int add_string(char ***v, size_t *n, size_t *cap, const char *s)
{
	char *d = dup_n(s, strlen(s));

	if (!d || hd__grow((void **)v, cap, *n + 1, sizeof(**v))) {
		if (d)
			hd__free(d, strlen(s) + 1);
		return HD_ENOMEM;
	}
	(*v)[(*n)++] = d;
	return 0;
}

static int add_location(hd_select *sel, const char *v, hd_error *err)
{
	const char *colon = strrchr(v, ':');
	struct location l;

	if (!colon || colon == v ||
	    parse_u64(colon + 1, strlen(colon + 1), &l.line))
		return hd__error(err, HD_EINVAL,
				 "location '%s': want FILE:LINE", v);
	if (!(l.file = dup_n(v, (size_t)(colon - v))) ||
	    hd__grow((void **)&sel->locs, &sel->locs_cap, sel->nlocs + 1,
		     sizeof(*sel->locs))) {
		if (l.file)
			hd__free(l.file, (size_t)(colon - v) + 1);
		return hd__error(err, HD_ENOMEM, "out of memory");
	}
	sel->locs[sel->nlocs++] = l;
	return 0;
}

int hd_select_add(hd_select *sel, const char *key, const char *value,
		  hd_error *err)
{
	unsigned k;
	uint64_t a;
	int t, rc = 0;

	HD_ASSERT_ARG(sel && key && value);
	for (k = 0; k < K__COUNT; k++)
		if (strcmp(key, key_names[k]) == 0)
			break;
	switch (k) {
	case K_ADDRESS:
		if (hd__parse_hex(value, strlen(value), &a))
			return hd__error(err, HD_EINVAL,
					 "address '%s' is not hexadecimal",
					 value);
		rc = add_addr(sel, a);
		break;
	case K_CLASS:
		if ((rc = add_pattern(&sel->classes, &sel->nclasses,
				      &sel->classes_cap, key, value, err)))
			return rc;
		break;
	case K_NAME:
		if ((rc = add_pattern(&sel->names, &sel->nnames,
				      &sel->names_cap, key, value, err)))
			return rc;
		break;
	case K_TYPE:
		t = hd_type_from_name(value, strlen(value));
		if (t == HD_T_UNKNOWN && strcmp(value, "UNKNOWN") != 0)
			return hd__error(err, HD_EINVAL, "unknown type '%s'",
					 value);
		sel->types |= 1u << t;
		break;
	case K_FILE:
		rc = add_string(&sel->files, &sel->nfiles, &sel->files_cap,
				value);
		break;
	case K_LOCATION:
		if ((rc = add_location(sel, value, err)))
			return rc;
		break;
	case K_GENERATION:
		if ((rc = add_gen(sel, value, err)))
			return rc;
		break;
	case K_FROM:
		if ((rc = add_from(sel, value, err)))
			return rc;
		k = K_ADDRESS; /* --from is a list of addresses */
		break;
	default:
		return hd__error(err, HD_EINVAL, "unknown selection key '%s'",
				 key);
	}
	if (rc)
		return hd__error(err, HD_ENOMEM, "out of memory");
	sel->used |= 1u << k;
	return 0;
}

/* ---- evaluation ---- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int pattern_matches(const struct pattern *p, const char *name)
{
	return p->is_re ? regexec(&p->re, name, 0, NULL, 0) == 0 :
			  strcmp(p->text, name) == 0;
}

static int class_matches(const hd_select *sel, const char *name)
{
	size_t i;

	for (i = 0; i < sel->nclasses; i++)
		if (pattern_matches(&sel->classes[i], name))
			return 1;
	return 0;
}

/* Per-node tests with caches for what repeats: class names per (class
 * node, type), file strings per interned pointer. used: the keys tested
 * (all of the selection's, or one to explain). */
struct eval {
	const hd_select *sel;
	const hd_store *s;
	unsigned used;
	struct hd__map class_cache; /* (class id + 1) << 8 | type -> 0/1 */
	struct hd__map file_cache;  /* string pointer -> 0/1 */
	char name[1024];
};

/* --name: a CLASS or MODULE by its own name. */
static int test_name(struct eval *e, hd_node_id id)
{
	int t = hd_store_type(e->s, id);
	const char *aux;
	size_t len, i;

	if (t != HD_T_CLASS && t != HD_T_MODULE)
		return 0;
	aux = hd_store_aux(e->s, id, &len);
	if (!aux || !len || len >= sizeof(e->name))
		return 0;
	memcpy(e->name, aux, len);
	e->name[len] = '\0';
	for (i = 0; i < e->sel->nnames; i++)
		if (pattern_matches(&e->sel->names[i], e->name))
			return 1;
	return 0;
}

static int test_class(struct eval *e, hd_node_id id, int *ok)
{
	hd_node_id c = hd_store_class(e->s, id);
	int type = hd_store_type(e->s, id);
	uint64_t key = ((uint64_t)c + 1) << 8 | (uint64_t)(type & 0xff);
	uint32_t v;
	int found;

	/* unresolvable classes are named by their address: no caching */
	if (c == HD_NODE_NONE && hd_store_class_address(e->s, id)) {
		hd_store_class_name(e->name, sizeof(e->name), e->s, id);
		*ok = class_matches(e->sel, e->name);
		return 0;
	}
	if (hd__map_get(&e->class_cache, key, &v)) {
		*ok = (int)v;
		return 0;
	}
	hd_store_class_name(e->name, sizeof(e->name), e->s, id);
	*ok = class_matches(e->sel, e->name);
	return hd__map_put(&e->class_cache, key, (uint32_t)*ok, &v, &found);
}

static int test_site(struct eval *e, hd_node_id id, int *ok)
{
	const hd_select *sel = e->sel;
	hd_site site;
	size_t i;
	uint32_t v;
	int found;

	*ok = 0;
	if (hd_store_site(&site, e->s, id) || !site.file)
		return 0;
	if (e->used & (1u << K_FILE)) {
		uint64_t key = (uint64_t)(uintptr_t)site.file;

		if (!hd__map_get(&e->file_cache, key, &v)) {
			v = 0;
			for (i = 0; i < sel->nfiles && !v; i++)
				v = strlen(sel->files[i]) == site.file_len &&
				    memcmp(sel->files[i], site.file,
					   site.file_len) == 0;
			if (hd__map_put(&e->file_cache, key, v, &v, &found))
				return HD_ENOMEM;
		}
		if (!v)
			return 0;
	}
	if (e->used & (1u << K_LOCATION)) {
		for (i = 0; i < sel->nlocs; i++)
			if (sel->locs[i].line == site.line &&
			    strlen(sel->locs[i].file) == site.file_len &&
			    memcmp(sel->locs[i].file, site.file,
				   site.file_len) == 0)
				break;
		if (i == sel->nlocs)
			return 0;
	}
	*ok = 1;
	return 0;
}

static int test_node(struct eval *e, hd_node_id id, int *ok)
{
	const hd_select *sel = e->sel;
	size_t i;
	int rc;

	*ok = 0;
	if ((e->used & (1u << K_TYPE)) &&
	    !(sel->types & (1u << hd_store_type(e->s, id))))
		return 0;
	if ((e->used & (1u << K_NAME)) && !test_name(e, id))
		return 0;
	if (e->used & (1u << K_GENERATION)) {
		uint64_t g = hd_store_generation(e->s, id);

		if (g == UINT64_MAX)
			return 0;
		for (i = 0; i < sel->ngens; i++)
			if (g >= sel->gens[i].lo && g <= sel->gens[i].hi)
				break;
		if (i == sel->ngens)
			return 0;
	}
	if (e->used & ((1u << K_FILE) | (1u << K_LOCATION))) {
		if ((rc = test_site(e, id, ok)) || !*ok)
			return rc;
	}
	if (e->used & (1u << K_CLASS)) {
		if ((rc = test_class(e, id, ok)) || !*ok)
			return rc;
	}
	*ok = 1;
	return 0;
}

static int push(hd_nodes *set, hd_node_id id)
{
	if (hd__grow((void **)&set->ids, &set->cap, set->n + 1,
		     sizeof(*set->ids)))
		return HD_ENOMEM;
	set->ids[set->n++] = id;
	return 0;
}

/* Candidates from addresses: sorted, unique node ids. */
static int from_addresses(const hd_select *sel, const hd_store *s,
			  hd_nodes *cand, uint64_t *missing)
{
	size_t i;

	if (sel->naddrs > 1) /* (qsort of NULL, 0 is undefined) */
		qsort(sel->addrs, sel->naddrs, sizeof(*sel->addrs), cmp_u64);
	for (i = 0; i < sel->naddrs; i++) {
		hd_node_id id;

		if (i && sel->addrs[i] == sel->addrs[i - 1])
			continue;
		id = hd_store_find(s, sel->addrs[i]);
		if (id == HD_NODE_NONE)
			(*missing)++;
		else if (push(cand, id)) /* ascending: ids follow addresses */
			return HD_ENOMEM;
	}
	return 0;
}

static int eval_init(struct eval *e, const hd_select *sel, const hd_store *s)
{
	memset(e, 0, sizeof(*e));
	e->sel = sel;
	e->s = s;
	e->used = sel->used;
	if (hd__map_init(&e->class_cache, 256) ||
	    hd__map_init(&e->file_cache, 64))
		return HD_ENOMEM;
	return 0;
}

static void eval_free(struct eval *e)
{
	hd__map_free(&e->class_cache);
	hd__map_free(&e->file_cache);
}

/* The nodes meeting e->used, into out, or only counted in *count when
 * out is NULL; addresses that are no node counted in *miss. */
static int run(struct eval *e, hd_nodes *out, uint64_t *count,
	       uint64_t *miss)
{
	hd_nodes cand = { NULL, 0, 0 };
	uint32_t i, n = hd_store_node_count(e->s);
	int ok, rc = 0;

	*count = 0;
	if (e->used & (1u << K_ADDRESS)) {
		if ((rc = from_addresses(e->sel, e->s, &cand, miss)))
			goto out;
		n = (uint32_t)cand.n;
	}
	for (i = 0; i < n; i++) {
		hd_node_id id = cand.ids ? cand.ids[i] : i;

		if ((rc = test_node(e, id, &ok)))
			goto out;
		if (ok && out && (rc = push(out, id)))
			goto out;
		*count += ok;
	}
out:
	hd_nodes_free(&cand);
	return rc;
}

int hd_select_nodes(hd_nodes *out, uint64_t *missing, const hd_select *sel,
		    const hd_store *s, hd_error *err)
{
	struct eval e;
	uint64_t miss = 0, n;

	HD_ASSERT_ARG(sel && s && out);
	memset(out, 0, sizeof(*out));
	if (eval_init(&e, sel, s) || run(&e, out, &n, &miss)) {
		eval_free(&e);
		hd_nodes_free(out);
		return hd__error(err, HD_ENOMEM, "out of memory");
	}
	if (missing)
		*missing = miss;
	eval_free(&e);
	return 0;
}

void hd_nodes_free(hd_nodes *set)
{
	if (!set)
		return;
	hd__free(set->ids, set->cap * sizeof(*set->ids));
	set->ids = NULL;
	set->n = set->cap = 0;
}

void hd_select_free(hd_select *sel)
{
	size_t i;

	if (!sel)
		return;
	for (i = 0; i < sel->nclasses; i++)
		pattern_free(&sel->classes[i]);
	for (i = 0; i < sel->nnames; i++)
		pattern_free(&sel->names[i]);
	for (i = 0; i < sel->nfiles; i++)
		hd__free(sel->files[i], strlen(sel->files[i]) + 1);
	for (i = 0; i < sel->nlocs; i++)
		hd__free(sel->locs[i].file, strlen(sel->locs[i].file) + 1);
	hd__free(sel->addrs, sel->addrs_cap * sizeof(*sel->addrs));
	hd__free(sel->classes, sel->classes_cap * sizeof(*sel->classes));
	hd__free(sel->names, sel->names_cap * sizeof(*sel->names));
	hd__free(sel->files, sel->files_cap * sizeof(*sel->files));
	hd__free(sel->locs, sel->locs_cap * sizeof(*sel->locs));
	hd__free(sel->gens, sel->gens_cap * sizeof(*sel->gens));
	hd__free(sel, sizeof(*sel));
}

/* ---- what every command leaves out unless --all ---- */

static int span_is(const char *s, size_t n, const char *lit)
{
	return s && n == strlen(lit) && memcmp(s, lit, n) == 0;
}

int hd_store_is_dumper(const hd_store *s, hd_node_id id)
{
	hd_record fake;
	hd_site site;
	size_t n;
	const char *aux;

	if (!s || id >= hd_store_node_count(s))
		return 0;
	memset(&fake, 0, sizeof(fake));
	fake.kind = HD_REC_OBJECT;
	fake.type = hd_store_type(s, id);
	if (fake.type == HD_T_DATA) {
		aux = hd_store_aux(s, id, &n);
		if (span_is(aux, n, "ObjectTracing/allocation_info_tracer"))
			return 1;
	}
	if (hd_store_site(&site, s, id) != 0)
		return 0;
	fake.file.ptr = site.file;
	fake.file.len = site.file ? site.file_len : 0;
	fake.method.ptr = site.method;
	fake.method.len = site.method ? site.method_len : 0;
	fake.has = (site.file ? HD_HAS_FILE : 0) |
		   (site.method ? HD_HAS_METHOD : 0);
	return hd__is_dumper_object(&fake);
}

uint64_t hd_store_dumper_count(const hd_store *s, uint64_t *memsize)
{
	uint32_t i, n = s ? hd_store_node_count(s) : 0;
	uint64_t k = 0, m = 0, v;

	for (i = 0; i < n; i++)
		if (hd_store_is_dumper(s, i)) {
			k++;
			v = hd_store_memsize(s, i);
			hd__sat_add(&m, v);
		}
	if (memsize)
		*memsize = m;
	return k;
}

/* ---- names near a mistyped one ---- */

#define DIST_MAX_LEN 256

static int fold(int c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

/*
 * Optimal string alignment in a band of max around the diagonal: three
 * rows (for swaps), each cell read outside the band is max + 1, and a
 * row whose every cell is over max ends the work.
 */
unsigned hd_name_distance(const char *a, size_t n, const char *b, size_t m,
			  unsigned max)
{
	uint16_t rows[3][DIST_MAX_LEN + 2];
	uint16_t *p2 = rows[0], *p1 = rows[1], *c = rows[2], *t;
	unsigned big = max + 1, best, v;
	size_t i, j, lo, hi;

	if (!a || !b || n > DIST_MAX_LEN || m > DIST_MAX_LEN ||
	    (n > m ? n - m : m - n) > max)
		return big;
	if (big > DIST_MAX_LEN + 1)
		big = DIST_MAX_LEN + 1, max = big - 1;
	for (j = 0; j <= m; j++)
		p1[j] = (uint16_t)(j < big ? j : big);
	p1[m + 1] = (uint16_t)big;
	for (i = 1; i <= n; i++) {
		lo = i > max ? i - max : 1;
		hi = i + max < m ? i + max : m;
		c[0] = (uint16_t)(i < big ? i : big);
		if (lo > 1)
			c[lo - 1] = (uint16_t)big;
		best = c[0];
		for (j = lo; j <= hi; j++) {
			int eq = fold((unsigned char)a[i - 1]) ==
				 fold((unsigned char)b[j - 1]);

			v = p1[j - 1] + !eq;
			if (p1[j] + 1u < v)
				v = p1[j] + 1u;
			if (c[j - 1] + 1u < v)
				v = c[j - 1] + 1u;
			if (i > 1 && j > 1 &&
			    fold((unsigned char)a[i - 1]) ==
				    fold((unsigned char)b[j - 2]) &&
			    fold((unsigned char)a[i - 2]) ==
				    fold((unsigned char)b[j - 1]) &&
			    p2[j - 2] + 1u < v)
				v = p2[j - 2] + 1u;
			c[j] = (uint16_t)(v < big ? v : big);
			if (c[j] < best)
				best = c[j];
		}
		if (hi + 1 <= m + 1)
			c[hi + 1] = (uint16_t)big;
		if (best > max)
			return big;
		t = p2;
		p2 = p1;
		p1 = c;
		c = t;
	}
	return p1[m] < big ? p1[m] : big;
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

static const char *commas(uint64_t v, char buf[32])
{
	char tmp[32];
	int n = snprintf(tmp, sizeof(tmp), "%llu", (unsigned long long)v), i,
	    k = 0;

	for (i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			buf[k++] = ',';
		buf[k++] = tmp[i];
	}
	buf[k] = '\0';
	return buf;
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
		       commas(sel->naddrs, a));
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
	}
	return 0;
}

/* "class Request", "type STRING" (the first value, and how many more). */
static void sb_condition(struct sb *o, const hd_select *sel, unsigned k)
{
	size_t more = 0;
	int t;

	sb_add(o, "%s ", key_names[k]);
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
	if (eval_init(&e, sel, s))
		goto nomem;
	for (k = 0; k < K__COUNT; k++) {
		cnt[k] = 1;
		if (!(sel->used & (1u << k)))
			continue;
		e.used = 1u << k;
		miss = 0;
		if (run(&e, NULL, &cnt[k], &miss))
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
			sb_add(&o, ": %s object%s", commas(cnt[k], a),
			       cnt[k] == 1 ? "" : "s");
		}
		sb_add(&o, "), but no object meets them all");
	}
	eval_free(&e);
	return rc;
nomem:
	eval_free(&e);
	return hd__error(err, HD_ENOMEM, "out of memory");
}
