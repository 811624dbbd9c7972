/*
 * select.c - selections of objects: the one grammar every graph command
 * takes (--address, --class, --type, --file, --location, --generation,
 * --from). Values of one key are alternatives; different keys must all
 * hold. Evaluated over a store in one pass, with the per-node work that
 * repeats (class names, file names) cached.
 */
#include "hd_int.h"

#include <regex.h>
#include <stdlib.h>

enum { K_ADDRESS, K_CLASS, K_TYPE, K_FILE, K_LOCATION, K_GENERATION,
       K_FROM, K__COUNT };

static const char *const key_names[K__COUNT] = {
	"address", "class", "type", "file", "location", "generation", "from",
};

struct pattern {
	char *text;        /* exact name, or NULL for a regex */
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

/* The addresses of the object records of an NDJSON file. */
static int add_from(hd_select *sel, const char *path, hd_error *err)
{
	hd_read_options ro = HD_READ_OPTIONS_INIT;
	hd_reader *r = NULL;
	const hd_record *rec;
	int rc;

	/* an empty selection (diff -o with nothing new) is no error */
	ro.flags = HD_READ_ALLOW_EMPTY;
	if ((rc = hd_reader_open(&r, path, &ro, err)))
		return rc;
	while ((rc = hd_reader_next(r, &rec, err)) == 0)
		if (rec->kind == HD_REC_OBJECT && add_addr(sel, rec->address)) {
			rc = hd__error(err, HD_ENOMEM, "out of memory");
			break;
		}
	hd_reader_free(r);
	return rc == HD_ITEROVER ? 0 : rc;
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

/* Refuses re[0..n) when it would hurt the C library (see above). */
static int re_check(const char *re, size_t n, hd_error *err)
{
	struct re_level lv[RE_MAX_DEPTH + 1];
	unsigned d = 0;
	size_t i = 0, copies;
	uint64_t w;
	char c;

	if (n > RE_MAX_LEN)
		return hd__error(err, HD_EINVAL,
				 "class /regex/: longer than %d bytes",
				 RE_MAX_LEN);
	lv[0].sum = lv[0].last = 0;
	while (i < n) {
		c = re[i++];
		w = 1; /* an ordinary character, ".", "^", "$" */
		switch (c) {
		case '\\':
			if (i < n && re[i] >= '1' && re[i] <= '9')
				return hd__error(err, HD_EINVAL,
						 "class /regex/: back-references "
						 "(\\1 to \\9) are not supported");
			i += i < n;
			break;
		case '[':
			i = re_bracket_end(re, n, i);
			break;
		case '(':
			if (d == RE_MAX_DEPTH)
				return hd__error(err, HD_EINVAL,
						 "class /regex/: groups nested "
						 "deeper than %d",
						 RE_MAX_DEPTH);
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
					 "class /regex/: more than %d nodes "
					 "once its repetitions are expanded "
					 "(x+ and x{n,m} copy x)",
					 RE_MAX_NODES);
	}
	return 0;
}

static int add_class(hd_select *sel, const char *v, hd_error *err)
{
	size_t n = strlen(v);
	struct pattern p;
	char msg[128];
	int rc;

	memset(&p, 0, sizeof(p));
	if (n >= 2 && v[0] == '/' && v[n - 1] == '/') {
		char *re;

		if ((rc = re_check(v + 1, n - 2, err)))
			return rc;
		re = dup_n(v + 1, n - 2);

		if (!re)
			return hd__error(err, HD_ENOMEM, "out of memory");
		rc = regcomp(&p.re, re, REG_EXTENDED | REG_NOSUB);
		hd__free(re, n - 1);
		if (rc) {
			regerror(rc, &p.re, msg, sizeof(msg));
			return hd__error(err, HD_EINVAL, "class %s: %s", v, msg);
		}
	} else if (!(p.text = dup_n(v, n))) {
		return hd__error(err, HD_ENOMEM, "out of memory");
	}
	if (hd__grow((void **)&sel->classes, &sel->classes_cap,
		     sel->nclasses + 1, sizeof(*sel->classes))) {
		if (p.text)
			hd__free(p.text, n + 1);
		else
			regfree(&p.re);
		return hd__error(err, HD_ENOMEM, "out of memory");
	}
	sel->classes[sel->nclasses++] = p;
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
		if ((rc = add_class(sel, value, err)))
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

static int class_matches(const hd_select *sel, const char *name)
{
	size_t i;

	for (i = 0; i < sel->nclasses; i++) {
		const struct pattern *p = &sel->classes[i];

		if (p->text ? strcmp(p->text, name) == 0 :
			      regexec(&p->re, name, 0, NULL, 0) == 0)
			return 1;
	}
	return 0;
}

/* Per-node tests with caches for what repeats: class names per (class
 * node, type), file strings per interned pointer. */
struct eval {
	const hd_select *sel;
	const hd_store *s;
	struct hd__map class_cache; /* (class id + 1) << 8 | type -> 0/1 */
	struct hd__map file_cache;  /* string pointer -> 0/1 */
	char name[1024];
};

static int test_class(struct eval *e, hd_node_id id, int *ok)
{
	hd_node_id c = hd_store_class(e->s, id);
	int type = hd_store_type(e->s, id);
	uint64_t key = ((uint64_t)c + 1) << 8 | (uint64_t)(type & 0xff);
	uint32_t v;
	int found;

	/* unresolvable classes are named by their address: no caching */
	if (c == HD_NODE_NONE && hd_store_class_address(e->s, id)) {
		hd_store_class_name(e->s, id, e->name, sizeof(e->name));
		*ok = class_matches(e->sel, e->name);
		return 0;
	}
	if (hd__map_get(&e->class_cache, key, &v)) {
		*ok = (int)v;
		return 0;
	}
	hd_store_class_name(e->s, id, e->name, sizeof(e->name));
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
	if (hd_store_site(e->s, id, &site) || !site.file)
		return 0;
	if (sel->used & (1u << K_FILE)) {
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
	if (sel->used & (1u << K_LOCATION)) {
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
	if ((sel->used & (1u << K_TYPE)) &&
	    !(sel->types & (1u << hd_store_type(e->s, id))))
		return 0;
	if (sel->used & (1u << K_GENERATION)) {
		uint64_t g = hd_store_generation(e->s, id);

		if (g == UINT64_MAX)
			return 0;
		for (i = 0; i < sel->ngens; i++)
			if (g >= sel->gens[i].lo && g <= sel->gens[i].hi)
				break;
		if (i == sel->ngens)
			return 0;
	}
	if (sel->used & ((1u << K_FILE) | (1u << K_LOCATION))) {
		if ((rc = test_site(e, id, ok)) || !*ok)
			return rc;
	}
	if (sel->used & (1u << K_CLASS)) {
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

int hd_select_nodes(const hd_select *sel, const hd_store *s, hd_nodes *out,
		    uint64_t *missing, hd_error *err)
{
	struct eval e;
	hd_nodes cand = { NULL, 0, 0 };
	uint64_t miss = 0;
	uint32_t i, n = hd_store_node_count(s);
	int ok, rc = 0;

	HD_ASSERT_ARG(sel && s && out);
	memset(out, 0, sizeof(*out));
	memset(&e, 0, sizeof(e));
	e.sel = sel;
	e.s = s;
	if (hd__map_init(&e.class_cache, 256) ||
	    hd__map_init(&e.file_cache, 64))
		goto nomem;
	if (sel->used & (1u << K_ADDRESS)) {
		if (from_addresses(sel, s, &cand, &miss))
			goto nomem;
		for (i = 0; i < cand.n; i++) {
			if ((rc = test_node(&e, cand.ids[i], &ok)))
				goto nomem;
			if (ok && push(out, cand.ids[i]))
				goto nomem;
		}
	} else {
		for (i = 0; i < n; i++) {
			if ((rc = test_node(&e, i, &ok)))
				goto nomem;
			if (ok && push(out, i))
				goto nomem;
		}
	}
	if (missing)
		*missing = miss;
	hd_nodes_free(&cand);
	hd__map_free(&e.class_cache);
	hd__map_free(&e.file_cache);
	return 0;
nomem:
	hd_nodes_free(&cand);
	hd_nodes_free(out);
	hd__map_free(&e.class_cache);
	hd__map_free(&e.file_cache);
	return hd__error(err, HD_ENOMEM, "out of memory");
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
	for (i = 0; i < sel->nclasses; i++) {
		if (sel->classes[i].text)
			hd__free(sel->classes[i].text,
				 strlen(sel->classes[i].text) + 1);
		else
			regfree(&sel->classes[i].re);
	}
	for (i = 0; i < sel->nfiles; i++)
		hd__free(sel->files[i], strlen(sel->files[i]) + 1);
	for (i = 0; i < sel->nlocs; i++)
		hd__free(sel->locs[i].file, strlen(sel->locs[i].file) + 1);
	hd__free(sel->addrs, sel->addrs_cap * sizeof(*sel->addrs));
	hd__free(sel->classes, sel->classes_cap * sizeof(*sel->classes));
	hd__free(sel->files, sel->files_cap * sizeof(*sel->files));
	hd__free(sel->locs, sel->locs_cap * sizeof(*sel->locs));
	hd__free(sel->gens, sel->gens_cap * sizeof(*sel->gens));
	hd__free(sel, sizeof(*sel));
}
