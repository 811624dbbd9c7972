/*
 * stats.c - counts and memsize of objects grouped by keys.
 *
 * Records are streamed in, so memory grows with the number of distinct
 * groups (classes, sites), never with the number of objects. A group key
 * is a tuple of up to four components. Most components are interned
 * strings at once; the class component of a streamed record stays a class
 * address until hd_stats_finish(), because a dump may list an instance
 * before its class. Finishing resolves every component to a string and
 * merges the groups whose strings coincide (two singleton classes of Foo
 * objects both count as Foo).
 */
#include "util/keycache.h"
#include "store_format.h"

#include <stddef.h>

#include <stdio.h>
#include <stdlib.h>

/* One key component: two words whose meaning depends on the key. */
struct comp {
	uint64_t a;
	uint64_t b;
};

/* Class component kinds, in comp.b >> 32. */
#define CK_TYPED 0  /* a = class address; low b = the object's type */
#define CK_DATA 1   /* a = class address of a DATA; low b = struct sid */
#define CK_STR 2    /* low b = a final string id */

/* log2 of the entries of a grouping's cache of recent groups */
#define RECENT_BITS 10
/* log2 of the entries of the cache of fixed class names (fixed_name()) */
#define FIXED_BITS 6
/* log2 of the entries of the features seen (hd_stats_add()) */
#define FEAT_BITS 5

struct group {
	struct comp k[HD_STATS_MAX_KEYS];
	uint64_t count;
	uint64_t memsize;
	uint32_t used;    /* slot in use */
};

struct grouping {
	unsigned nkeys;
	int keys[HD_STATS_MAX_KEYS];
	struct group *slots;
	size_t cap, count;
	struct hd__hkey hkey;  /* keyed hash (hash.c): keys hold addresses */
	/* a key cache (keycache.h) of slots in front of the keyed table,
	 * 1 << RECENT_BITS of them (recent_mix()) */
	uint32_t *recent;
	/* a grouping by type alone counts known types here, without a key
	 * or a table, until finish or merge folds them in (fold_types()) */
	int by_type;
	int by_class; /* one key: the class */
	struct {
		uint64_t count, memsize;
	} types[HD_T__COUNT];
	hd_stats_row *rows;
	size_t nrows;
	int sorted;       /* the sort rows are in, or -1 */
};

struct hd_stats {
	hd_stats_options opts;
	struct hd__intern strs;
	struct hd__classtab ct;
	struct hd__map gems;      /* file sid -> gem sid */
	struct hd__map rootnames; /* root category sid -> 1 */
	struct grouping g[HD_STATS_MAX_GROUPINGS];
	hd_stats_totals t;
	int finished;
	int fed;          /* something was added or merged */
	uint32_t sid_untraced, sid_none;
	/* which record strings some grouping needs (HD_KEY_ bits) */
	unsigned need;
	/* strings' caches (keycache.h) of the files and type strings */
	struct hd__strcache files, auxs;
	/* hd__record_features_key()s whose features are in t.features, by
	 * a hash of the key (0: none): most records reveal nothing new */
	uint64_t feat_seen[1u << FEAT_BITS];
	/* the fixed class names of make_comp(), by (type, class address,
	 * aux sid): a direct-mapped cache whose hits are checked */
	struct {
		uint64_t klass;
		uint32_t aux, sid;
		int type, used;
	} fixed[1u << FIXED_BITS];
	/* the merge sort's scratch, made by finish: sorting cannot fail */
	hd_stats_row *sort_tmp;
	size_t sort_tmp_n;
};

#define NEED(k) (1u << (k))

static const char *const key_names[] = {
	NULL, "type", "class", "file", "location", "method", "gem",
	"generation", "imemo", "length",
};

const char *hd_key_name(int key)
{
	if (key < HD_KEY_TYPE || key > HD_KEY_LENGTH)
		return NULL;
	return key_names[key];
}

int hd_key_from_name(const char *name, size_t len)
{
	int k;

	for (k = HD_KEY_TYPE; k <= HD_KEY_LENGTH; k++)
		if (strlen(key_names[k]) == len &&
		    memcmp(key_names[k], name, len) == 0)
			return k;
	if (len == 4 && memcmp(name, "site", 4) == 0)
		return HD_KEY_LOCATION;
	return 0;
}

int hd_stats_new(hd_stats **out, const hd_stats_options *opts,
		 hd_error *err)
{
	hd_stats *st;
	unsigned i, j;

	HD_ASSERT_ARG(out && opts);
	HD_ASSERT_ARG(opts->version == HD_STATS_OPTIONS_VERSION);
	HD_ASSERT_ARG(opts->ngroupings <= HD_STATS_MAX_GROUPINGS);
	for (i = 0; i < opts->ngroupings; i++) {
		HD_ASSERT_ARG(opts->nkeys[i] >= 1 &&
			      opts->nkeys[i] <= HD_STATS_MAX_KEYS);
		for (j = 0; j < opts->nkeys[i]; j++)
			HD_ASSERT_ARG(hd_key_name(opts->keys[i][j]) != NULL);
	}
	st = hd__calloc(1, sizeof(*st));
	if (!st)
		return hd__error(err, HD_ENOMEM, "out of memory");
	st->opts = *opts;
	if (hd__intern_init(&st->strs) || hd__map_init(&st->gems, 64) ||
	    hd__map_init(&st->rootnames, 16) ||
	    hd__classtab_init(&st->ct, &st->strs) ||
	    hd__intern_put(&st->strs, "(untraced)", 10, &st->sid_untraced) ||
	    hd__intern_put(&st->strs, "(none)", 6, &st->sid_none))
		goto nomem;
	for (i = 0; i < opts->ngroupings; i++) {
		for (j = 0; j < opts->nkeys[i]; j++)
			st->need |= NEED(opts->keys[i][j]);
		st->g[i].nkeys = opts->nkeys[i];
		st->g[i].by_type = opts->nkeys[i] == 1 &&
				   opts->keys[i][0] == HD_KEY_TYPE;
		st->g[i].by_class = opts->nkeys[i] == 1 &&
				    opts->keys[i][0] == HD_KEY_CLASS;
		memcpy(st->g[i].keys, opts->keys[i], sizeof(st->g[i].keys));
		st->g[i].cap = 64;
		st->g[i].sorted = -1;
		hd__hash_key_new(&st->g[i].hkey);
		st->g[i].slots = hd__calloc(st->g[i].cap, sizeof(struct group));
		st->g[i].recent = hd__calloc((size_t)1 << RECENT_BITS,
					     sizeof(uint32_t));
		if (!st->g[i].slots || !st->g[i].recent)
			goto nomem;
	}
	st->t.gen_min = UINT64_MAX;
	*out = st;
	return 0;
nomem:
	hd_stats_free(st);
	return hd__error(err, HD_ENOMEM, "out of memory");
}

/* ---- the group tables ---- */

static uint64_t comp_hash(const struct hd__hkey *hk, const struct comp *k,
			  unsigned n)
{
	return hd__hash_keyed(hk, k, n * sizeof(*k));
}

static inline int same_key(const struct comp *x, const struct comp *y,
			   unsigned n)
{
	unsigned i;

	if (n == 1) /* the most common grouping, without a loop */
		return x->a == y->a && x->b == y->b;
	for (i = 0; i < n; i++)
		if (x[i].a != y[i].a || x[i].b != y[i].b)
			return 0;
	return 1;
}

static struct group *slot_for(const struct hd__hkey *hk, struct group *slots,
			      size_t cap, const struct comp *k, unsigned n)
{
	size_t i = comp_hash(hk, k, n) & (cap - 1);

	while (slots[i].used && !same_key(slots[i].k, k, n))
		i = (i + 1) & (cap - 1);
	return &slots[i];
}

/*
 * Most objects fall in a group seen a moment ago (String, Array, a few
 * hot classes), so accumulate() looks first in g->recent, a key cache
 * (keycache.h) of the slots, indexed by a multiply-mix of the key with
 * no secret: a hit is verified against the slot's own key, and a miss
 * takes the keyed table as before. Keys crafted to collide in the cache
 * therefore only miss: one multiply and one key comparison more an
 * object, while the table itself, and so the worst case, stays under
 * SipHash's random key.
 */
static uint64_t recent_mix(const struct comp *k, unsigned n)
{
	uint64_t h = 0;
	unsigned i;

	for (i = 0; i < n; i++)
		h = hd__kc_mix(h, k[i].a) ^ k[i].b;
	return h;
}

/* The slot g->recent's slot i holds if its key is k (n components, of
 * 1 to HD_STATS_MAX_KEYS), else HD__NONE. */
static inline uint32_t recent_find(const struct grouping *g, size_t i,
				   const struct comp *k, unsigned n)
{
#define RECENT_FIND(n)                                                     \
	hd__kc_find(g->recent, i, g->slots, g->cap, sizeof(*g->slots),     \
		    offsetof(struct group, k), k, (n) * sizeof(*k))
	switch (n) { /* constant sizes: the comparison inline */
	case 1:
		return RECENT_FIND(1);
	case 2:
		return RECENT_FIND(2);
	case 3:
		return RECENT_FIND(3);
	default:
		return RECENT_FIND(HD_STATS_MAX_KEYS);
	}
#undef RECENT_FIND
}

static int grow_groups(struct grouping *g)
{
	size_t ncap = g->cap * 2, i;
	struct group *ns = hd__calloc(ncap, sizeof(*ns));

	if (!ns)
		return HD_ENOMEM;
	for (i = 0; i < g->cap; i++)
		if (g->slots[i].used)
			*slot_for(&g->hkey, ns, ncap, g->slots[i].k,
				  g->nkeys) =
				g->slots[i];
	hd__free(g->slots, g->cap * sizeof(*g->slots));
	g->slots = ns;
	g->cap = ncap;
	if (g->recent) /* the slots moved */
		hd__kc_clear(g->recent, RECENT_BITS);
	return 0;
}

/* *a += b, stopping at UINT64_MAX (and saying so in *sat). */
static void sat_add(uint64_t *a, uint64_t b, uint32_t *sat)
{
	*sat |= (uint32_t)hd__sat_add(a, b);
}

/* accumulate() past g->recent: r its slot there for k */
static int accumulate_slow(struct grouping *g, const struct comp *k,
			   size_t r, uint64_t count, uint64_t memsize,
			   uint32_t *sat)
{
	struct group *s;

	if ((g->count + 1) * 4 > g->cap * 3 && grow_groups(g))
		return HD_ENOMEM;
	s = slot_for(&g->hkey, g->slots, g->cap, k, g->nkeys);
	if (g->recent && (size_t)(s - g->slots) < UINT32_MAX)
		hd__kc_put(g->recent, r, (uint32_t)(s - g->slots));
	if (!s->used) {
		s->used = 1;
		memcpy(s->k, k, sizeof(s->k));
		g->count++;
	}
	s->count += count;
	sat_add(&s->memsize, memsize, sat);
	return 0;
}

/* accumulate() of one object for a grouping of one key, (a, b): the
 * slot in g->recent is recent_mix()'s */
HD__KC_INLINE int accumulate1(struct grouping *g, uint64_t a, uint64_t b,
			      uint64_t memsize, uint32_t *sat)
{
	size_t r = hd__kc_slot(hd__kc_mix(0, a) ^ b, RECENT_BITS);
	struct comp k[HD_STATS_MAX_KEYS];
	struct group *s;
	uint32_t id;

	k[0].a = a;
	k[0].b = b;
	if (g->recent && (id = recent_find(g, r, k, 1)) != HD__NONE) {
		s = &g->slots[id];
		s->count++;
		sat_add(&s->memsize, memsize, sat);
		return 0;
	}
	memset(k + 1, 0, sizeof(k) - sizeof(k[0]));
	return accumulate_slow(g, k, r, 1, memsize, sat);
}

/* Adds count objects of memsize bytes to the group of key k; a hit in
 * g->recent, the common case, inline. */
HD__KC_INLINE int accumulate(struct grouping *g, const struct comp *k,
			     uint64_t count, uint64_t memsize, uint32_t *sat)
{
	size_t r = hd__kc_slot(recent_mix(k, g->nkeys), RECENT_BITS);
	struct group *s;
	uint32_t id;

	if (g->recent && (id = recent_find(g, r, k, g->nkeys)) != HD__NONE) {
		s = &g->slots[id];
		s->count += count;
		sat_add(&s->memsize, memsize, sat);
		return 0;
	}
	return accumulate_slow(g, k, r, count, memsize, sat);
}

/* Moves the per-type counts of a grouping by type into its table, as
 * make_comp() keys them: a = the type, b = 0. */
static int fold_types(struct grouping *g, uint32_t *sat)
{
	struct comp k[HD_STATS_MAX_KEYS];
	int t;

	if (!g->by_type)
		return 0;
	for (t = 0; t < HD_T__COUNT; t++) {
		if (!g->types[t].count)
			continue;
		memset(k, 0, sizeof(k));
		k[0].a = (uint64_t)t;
		if (accumulate(g, k, g->types[t].count, g->types[t].memsize,
			       sat))
			return HD_ENOMEM;
		g->types[t].count = g->types[t].memsize = 0;
	}
	return 0;
}

/* ---- gems ---- */

static const char *find_sub(const char *h, size_t n, const char *needle)
{
	size_t m = strlen(needle), i;

	for (i = 0; i + m <= n; i++)
		if (memcmp(h + i, needle, m) == 0)
			return h + i;
	return NULL;
}

/* The last occurrence: /usr/lib/ruby/gems/3.1.0/gems/rack-2.2.3/ */
static const char *find_last(const char *h, size_t n, const char *needle)
{
	const char *last = NULL, *p = h;

	while ((p = find_sub(p, n - (size_t)(p - h), needle))) {
		last = p;
		p++;
	}
	return last;
}

/* Bundler's git checkouts: NAME-<hex revision of 7+ digits>. */
static size_t git_suffix(const char *g, size_t len)
{
	size_t i = len;

	while (i > 0 && ((g[i - 1] >= '0' && g[i - 1] <= '9') ||
			 (g[i - 1] >= 'a' && g[i - 1] <= 'f')))
		i--;
	return i > 1 && g[i - 1] == '-' && len - i >= 7 ? i - 1 : 0;
}

/*
 * The gem a file belongs to: NAME for .../gems/NAME-VERSION/... (the last
 * "gems" folder of the path) or a bundler git checkout NAME-REVISION, and
 * (stdlib), (ruby internal), (eval) or (app) otherwise.
 */
static int gem_of(hd_stats *st, uint32_t file_sid, uint32_t *out)
{
	size_t n, i, dash = 0;
	const char *f = hd__intern_str(&st->strs, file_sid, &n);
	const char *g;
	uint32_t v;
	int found;

	if (hd__map_get(&st->gems, file_sid, &v)) {
		*out = v;
		return 0;
	}
	if ((g = find_last(f, n, "/gems/"))) {
		g += 6;
		for (i = 0; g + i < f + n && g[i] != '/'; i++)
			if (g[i] == '-' && g + i + 1 < f + n &&
			    g[i + 1] >= '0' && g[i + 1] <= '9')
				dash = i;
		if (!dash)
			dash = git_suffix(g, i);
		if (hd__intern_put(&st->strs, g, dash ? dash : i, &v))
			return HD_ENOMEM;
	} else {
		const char *label = "(app)";

		if (n >= 10 && memcmp(f, "<internal:", 10) == 0)
			label = "(ruby internal)";
		else if (find_sub(f, n, "/lib/ruby/") &&
			 !find_sub(f, n, "/site_ruby/"))
			label = "(stdlib)";
		else if ((n >= 5 && memcmp(f, "(eval", 5) == 0) ||
			 (n == 4 && memcmp(f, "eval", 4) == 0))
			label = "(eval)";
		if (hd__intern_put(&st->strs, label, strlen(label), &v))
			return HD_ENOMEM;
	}
	if (hd__map_put(&st->gems, file_sid, v, out, &found))
		return HD_ENOMEM;
	return 0;
}

/* ---- adding objects ---- */

/* An object reduced to what grouping needs; strings already decoded. */
struct obj {
	int type;
	hd_str type_name;   /* for UNKNOWN types */
	uint64_t klass;     /* 0: none */
	uint32_t class_sid; /* HD_STR_NONE: resolve klass later */
	uint32_t aux_sid;   /* DATA struct or imemo_type, or NONE */
	uint32_t file_sid;  /* NONE: untraced */
	uint32_t method_sid;
	uint64_t line;
	uint64_t generation;
	int has_gen;
	uint64_t memsize;
	int has_len;        /* hd_record_length */
	uint64_t len;
	/* the class key is CK_TYPED: klass and type (see make_comp()) */
	int typed;
};

/* hd_record_length(), inline for hd_stats_add() */
static inline int record_length(uint64_t *len, const hd_record *rec)
{
	if (!(rec->has & HD_HAS_SIZE))
		return 0;
	switch (rec->type) {
	case HD_T_STRING:
		if (rec->bits & HD_B_SHARED)
			return 0;
		break;
	case HD_T_ARRAY:
	case HD_T_HASH:
		break;
	case HD_T_STRUCT:
		if (!rec->size)
			return 0;
		break;
	default:
		return 0;
	}
	*len = rec->size;
	return 1;
}

int hd_record_length(uint64_t *len, const hd_record *rec)
{
	return record_length(len, rec);
}

size_t hd_length_bucket(char *buf, size_t size, int known, uint64_t len)
{
	uint64_t lo;
	int n;

	if (!known)
		n = snprintf(buf, size, "-");
	else if (len < 2)
		n = snprintf(buf, size, "%llu", (unsigned long long)len);
	else {
		lo = (uint64_t)1 << hd__log2_floor(len);
		n = snprintf(buf, size, "%llu-%llu", (unsigned long long)lo,
			     (unsigned long long)(lo - 1 + lo));
	}
	return n < 0 ? 0 : (size_t)n;
}

/*
 * The class name of an object whose class needs no late resolution (an
 * IMEMO, NODE or free slot, or an object of no class): a function of its
 * type, class address and aux string alone, so remembered in st->fixed,
 * whose hits are checked against all three. Keys crafted to collide
 * there only miss, and take hd__object_class_name() and the interner as
 * before.
 */
static int fixed_name(hd_stats *st, const struct obj *o, uint32_t *sid)
{
	size_t i = hd__kc_slot(hd__kc_mix(o->klass, o->aux_sid) ^
				       (uint64_t)(unsigned)o->type,
			       FIXED_BITS);
	hd_str aux = { NULL, 0 };

	if (st->fixed[i].used && st->fixed[i].klass == o->klass &&
	    st->fixed[i].aux == o->aux_sid && st->fixed[i].type == o->type) {
		*sid = st->fixed[i].sid;
		return 0;
	}
	if (o->aux_sid != HD_STR_NONE)
		aux.ptr = hd__intern_str(&st->strs, o->aux_sid, &aux.len);
	if (hd__object_class_name(&st->ct, &st->strs, o->type, o->klass, aux,
				  sid))
		return HD_ENOMEM;
	st->fixed[i].used = 1;
	st->fixed[i].klass = o->klass;
	st->fixed[i].aux = o->aux_sid;
	st->fixed[i].type = o->type;
	st->fixed[i].sid = *sid;
	return 0;
}

static int make_comp(hd_stats *st, int key, const struct obj *o,
		     struct comp *c)
{
	/* traced: any allocation information; a traced object without a
	 * file, method or generation has "(none)" of it (a macro: the
	 * class and type keys, the most asked, need neither) */
#define nofile \
	(o->has_gen || o->file_sid != HD_STR_NONE ? st->sid_none : \
						     st->sid_untraced)
	char buf[96];
	uint32_t sid;
	int n, rc;

	c->a = c->b = 0;
	switch (key) {
	case HD_KEY_TYPE:
		/* a type id, named at finish; unknown types keep their name */
		if (o->type != HD_T_UNKNOWN || !o->type_name.len) {
			c->a = (uint64_t)o->type;
			return 0;
		}
		rc = hd__intern_json(&st->strs, o->type_name, &sid);
		c->a = sid;
		c->b = 1;
		return rc;
	case HD_KEY_CLASS:
		if (o->class_sid != HD_STR_NONE) {
			c->b = (uint64_t)CK_STR << 32 | o->class_sid;
			return 0;
		}
		c->a = o->klass;
		if (o->type == HD_T_DATA)
			c->b = (uint64_t)CK_DATA << 32 | o->aux_sid;
		else if (o->type == HD_T_IMEMO || o->type == HD_T_NODE ||
			 o->type == HD_T_NONE || !o->klass) {
			/* fixed names need no late resolution */
			if (fixed_name(st, o, &sid))
				return HD_ENOMEM;
			c->a = 0;
			c->b = (uint64_t)CK_STR << 32 | sid;
		} else {
			c->b = (uint64_t)CK_TYPED << 32 | (uint32_t)o->type;
		}
		return 0;
	case HD_KEY_FILE:
		c->a = o->file_sid == HD_STR_NONE ? nofile : o->file_sid;
		return 0;
	case HD_KEY_LOCATION:
		c->a = o->file_sid == HD_STR_NONE ? nofile : o->file_sid;
		c->b = o->file_sid == HD_STR_NONE ? 0 : o->line;
		return 0;
	case HD_KEY_METHOD:
		c->a = o->method_sid == HD_STR_NONE ? nofile : o->method_sid;
		return 0;
	case HD_KEY_GEM:
		if (o->file_sid == HD_STR_NONE) {
			c->a = nofile;
			return 0;
		}
		rc = gem_of(st, o->file_sid, &sid);
		c->a = sid;
		return rc;
	case HD_KEY_GENERATION:
		if (!o->has_gen) {
			c->a = nofile;
			return 0;
		}
		n = snprintf(buf, sizeof(buf), "%llu",
			     (unsigned long long)o->generation);
		rc = hd__intern_put(&st->strs, buf, (size_t)n, &sid);
		c->a = sid;
		return rc;
	case HD_KEY_IMEMO:
		/* 2.3 and 2.4 wrote IMEMOs without an imemo_type */
		c->a = o->aux_sid == HD_STR_NONE ? st->sid_none : o->aux_sid;
		return 0;
	case HD_KEY_LENGTH:
		/* the bucket, named at finish: 0 "-", 1 "0", k + 2 2^k.. */
		c->a = o->has_len ? hd__length_bucket(o->len) : 0;
		return 0;
	}
#undef nofile
	return HD_EINVAL;
}

/* The key of o in grouping g (k: HD_STATS_MAX_KEYS components): 0, 1
 * when g does not count o (only IMEMOs are grouped by imemo type), or
 * HD_ENOMEM. */
static inline int group_key(hd_stats *st, const struct grouping *g,
			    const struct obj *o, struct comp *k)
{
	unsigned j;
	int skip = 0;

	memset(k, 0, HD_STATS_MAX_KEYS * sizeof(*k));
	for (j = 0; j < g->nkeys; j++) {
		if (g->keys[j] == HD_KEY_IMEMO && o->type != HD_T_IMEMO)
			skip = 1;
		if (g->keys[j] == HD_KEY_CLASS && o->typed) {
			/* make_comp()'s most common case, inline */
			k[j].a = o->klass;
			k[j].b = (uint64_t)CK_TYPED << 32 | (uint32_t)o->type;
		} else if (make_comp(st, g->keys[j], o, &k[j])) {
			return HD_ENOMEM;
		}
	}
	return skip;
}

static int add_obj(hd_stats *st, const struct obj *o, uint64_t nrefs,
		   int dumper)
{
	struct comp k[HD_STATS_MAX_KEYS];
	unsigned i;

	if (dumper && !(st->opts.flags & HD_STATS_ALL)) {
		st->t.excluded++;
		sat_add(&st->t.excluded_memsize, o->memsize,
			&st->t.saturated);
		return 0;
	}
	st->t.objects++;
	sat_add(&st->t.memsize, o->memsize, &st->t.saturated);
	st->t.edges += nrefs;
	if (o->has_gen) {
		st->t.traced++;
		if (o->generation < st->t.gen_min)
			st->t.gen_min = o->generation;
		if (o->generation > st->t.gen_max)
			st->t.gen_max = o->generation;
	}
	for (i = 0; i < st->opts.ngroupings; i++) {
		struct grouping *g = &st->g[i];
		int skip;

		if (g->by_type && o->type >= 0 && o->type < HD_T__COUNT &&
		    (o->type != HD_T_UNKNOWN || !o->type_name.len)) {
			g->types[o->type].count++;
			sat_add(&g->types[o->type].memsize, o->memsize,
				&st->t.saturated);
			continue;
		}
		if (g->by_class && o->typed) {
			/* the default grouping's common case: make_comp()'s
			 * key without the loops */
			if (accumulate1(g, o->klass,
					(uint64_t)CK_TYPED << 32 |
						(uint32_t)o->type,
					o->memsize, &st->t.saturated))
				return HD_ENOMEM;
			continue;
		}
		if ((skip = group_key(st, g, o, k)) < 0)
			return HD_ENOMEM;
		if (!skip && accumulate(g, k, 1, o->memsize, &st->t.saturated))
			return HD_ENOMEM;
	}
	return 0;
}

static int intern_opt(hd_stats *st, hd_str s, int present, uint32_t *id)
{
	*id = HD_STR_NONE;
	if (!present)
		return 0;
	return hd__intern_json(&st->strs, s, id);
}

/* intern_opt() of an IMEMO's, NODE's or DATA's type string, or of a
 * file (as the store interns it), through the strings' cache c. */
HD__KC_INLINE int cached_sid(hd_stats *st, struct hd__strcache *c, hd_str s,
		      int present, int json, uint32_t *id)
{
	*id = HD_STR_NONE;
	if (!present)
		return 0;
	return hd__intern_cached(c, &st->strs, s, json, id);
}

int hd_stats_add(hd_stats *st, const hd_record *rec, hd_error *err)
{
	struct obj o;
	uint32_t sid;
	int found;

	uint64_t fk, *seen;

	HD_ASSERT_ARG(st && rec && !st->finished);
	st->fed = 1;
	fk = hd__record_features_key(rec);
	seen = &st->feat_seen[(fk * 0x9e3779b97f4a7c15ULL) >>
			      (64 - FEAT_BITS)];
	if (!fk || *seen != fk) {
		st->t.features |= hd__record_features_new(rec, st->t.features);
		*seen = fk;
	}
	if (rec->kind == HD_REC_SHAPE) {
		st->t.shapes++;
		return 0;
	}
	if (rec->kind == HD_REC_ROOT) {
		st->t.roots += rec->nrefs;
		if (hd__intern_json(&st->strs, rec->root, &sid) ||
		    hd__map_put(&st->rootnames, sid, 1, &sid, &found))
			goto nomem;
		if (!found)
			st->t.root_categories++;
		return 0;
	}
	if (rec->kind != HD_REC_OBJECT)
		return 0;
	if (hd__classtab_add(&st->ct, rec))
		goto nomem;
	o.type = rec->type;
	o.type_name = rec->type_name;
	o.klass = (rec->has & HD_HAS_CLASS) ? rec->class_addr : 0;
	o.class_sid = HD_STR_NONE;
	o.memsize = (rec->has & HD_HAS_MEMSIZE) ? rec->memsize : 0;
	/* as from a store, where 2^64-1 means untraced */
	o.has_gen = (rec->has & HD_HAS_GENERATION) &&
		    rec->generation != UINT64_MAX;
	o.generation = rec->generation;
	o.line = (rec->has & HD_HAS_LINE) ? rec->line : 0;
	o.file_sid = o.method_sid = o.aux_sid = HD_STR_NONE;
	o.len = 0;
	o.has_len = (st->need & NEED(HD_KEY_LENGTH)) &&
		    record_length(&o.len, rec);
	o.typed = o.klass && o.type != HD_T_DATA && o.type != HD_T_IMEMO &&
		  o.type != HD_T_NODE && o.type != HD_T_NONE;
	if ((st->need & (NEED(HD_KEY_FILE) | NEED(HD_KEY_LOCATION) |
			 NEED(HD_KEY_GEM) | NEED(HD_KEY_METHOD))) &&
	    cached_sid(st, &st->files, rec->file,
		       (rec->has & HD_HAS_FILE) != 0, 0, &o.file_sid))
		goto nomem;
	if ((st->need & NEED(HD_KEY_METHOD)) &&
	    intern_opt(st, rec->method, (rec->has & HD_HAS_METHOD) != 0,
		       &o.method_sid))
		goto nomem;
	if ((st->need & (NEED(HD_KEY_CLASS) | NEED(HD_KEY_IMEMO))) &&
	    (rec->type == HD_T_IMEMO || rec->type == HD_T_NODE ||
	     rec->type == HD_T_DATA) &&
	    cached_sid(st, &st->auxs, rec->type == HD_T_IMEMO ? rec->imemo_type :
			   rec->type == HD_T_NODE ? rec->node_type :
						    rec->struct_name,
		       rec->imemo_type.ptr || rec->node_type.ptr ||
			       rec->struct_name.ptr,
		       1, &o.aux_sid))
		goto nomem;
	if (add_obj(st, &o, rec->nrefs, hd__is_dumper_object(rec)))
		goto nomem;
	return 0;
nomem:
	return hd__error(err, HD_ENOMEM, "out of memory");
}

/* Store node id as a streamed object (its strings interned); class
 * names are final already, cut to bufsize - 1 bytes. */
static int node_obj(hd_stats *st, const hd_store *s, hd_node_id id,
		    char *buf, size_t bufsize, struct obj *o)
{
	hd_site site;
	size_t n;
	const char *aux;

	memset(o, 0, sizeof(*o));
	o->type = hd_store_type(s, id);
	o->klass = hd_store_class_address(s, id);
	o->memsize = hd_store_memsize(s, id);
	o->generation = hd_store_generation(s, id);
	o->has_gen = o->generation != UINT64_MAX;
	o->has_len = hd_store_length(&o->len, s, id);
	o->file_sid = o->method_sid = o->aux_sid = HD_STR_NONE;
	n = hd_store_class_name(buf, bufsize, s, id);
	if (hd__intern_put(&st->strs, buf, n < bufsize ? n : bufsize - 1,
			   &o->class_sid))
		return HD_ENOMEM;
	aux = hd_store_aux(s, id, &n);
	if (aux && (o->type == HD_T_IMEMO || o->type == HD_T_DATA ||
		    o->type == HD_T_NODE) &&
	    hd__intern_put(&st->strs, aux, n, &o->aux_sid))
		return HD_ENOMEM;
	if (hd_store_site(&site, s, id) == 0) {
		o->line = site.line;
		if (site.file &&
		    hd__intern_put(&st->strs, site.file, site.file_len,
				   &o->file_sid))
			return HD_ENOMEM;
		if (site.method &&
		    hd__intern_put(&st->strs, site.method, site.method_len,
				   &o->method_sid))
			return HD_ENOMEM;
	}
	return 0;
}

/* add_obj() of r->count objects at once, all grouped as o is (r->name
 * unused): the sums are r's. */
static int add_sums(hd_stats *st, const struct obj *o,
		    const struct hd__ss_row *r)
{
	struct comp k[HD_STATS_MAX_KEYS];
	unsigned i;

	st->t.saturated |= (uint32_t)r->saturated;
	if (r->dumper && !(st->opts.flags & HD_STATS_ALL)) {
		st->t.excluded += r->count;
		sat_add(&st->t.excluded_memsize, r->memsize,
			&st->t.saturated);
		return 0;
	}
	st->t.objects += r->count;
	sat_add(&st->t.memsize, r->memsize, &st->t.saturated);
	st->t.edges += r->edges;
	if (r->traced) {
		st->t.traced += r->traced;
		if (r->gen_min < st->t.gen_min)
			st->t.gen_min = r->gen_min;
		if (r->gen_max > st->t.gen_max)
			st->t.gen_max = r->gen_max;
	}
	for (i = 0; i < st->opts.ngroupings; i++) {
		struct grouping *g = &st->g[i];
		int skip;

		if ((skip = group_key(st, g, o, k)) < 0)
			return HD_ENOMEM;
		if (!skip &&
		    accumulate(g, k, r->count, r->memsize, &st->t.saturated))
			return HD_ENOMEM;
	}
	return 0;
}

/*
 * The nodes of s (all, or ids[0..nids)) in groups of the integers that
 * st's keys depend on (hd__store_groups), each group named once through
 * its first node: what a pass node by node adds, without formatting and
 * interning every node's class name, site and aux.
 */
static int add_groups(hd_stats *st, const hd_store *s, const hd_node_id *ids,
		      size_t nids)
{
	struct hd__sgroup *v;
	struct hd__ss_row r;
	struct obj o;
	size_t n, i;
	unsigned what = 0;
	char buf[1024];
	int rc = 0;

	if (st->need & (NEED(HD_KEY_FILE) | NEED(HD_KEY_LOCATION) |
			NEED(HD_KEY_METHOD) | NEED(HD_KEY_GEM)))
		what |= HD__SG_SITE;
	if (st->need & NEED(HD_KEY_GENERATION))
		what |= HD__SG_GEN;
	if (st->need & NEED(HD_KEY_LENGTH))
		what |= HD__SG_LEN;
	if (hd__store_groups(&v, &n, s, ids, nids, what))
		return HD_ENOMEM;
	memset(&r, 0, sizeof(r));
	for (i = 0; i < n && !rc; i++) {
		r.type = (int)hd_store_type(s, v[i].rep);
		r.dumper = v[i].dumper;
		r.saturated = v[i].saturated;
		r.count = v[i].count;
		r.memsize = v[i].memsize;
		r.edges = v[i].edges;
		r.traced = v[i].traced;
		r.gen_min = v[i].gen_min;
		r.gen_max = v[i].gen_max;
		rc = node_obj(st, s, v[i].rep, buf, sizeof(buf), &o);
		if (!rc)
			rc = add_sums(st, &o, &r);
	}
	hd__store_groups_free(v, n);
	return rc;
}

/* Does every grouping group by type and class only, what the store's
 * stats summary (store_stats.c) holds? */
static int summary_serves(const hd_stats *st)
{
	unsigned i, j;

	for (i = 0; i < st->opts.ngroupings; i++)
		for (j = 0; j < st->g[i].nkeys; j++)
			if (st->g[i].keys[j] != HD_KEY_TYPE &&
			    st->g[i].keys[j] != HD_KEY_CLASS)
				return 0;
	return 1;
}

/* A summary row: add_obj() of its r->count nodes at once. */
static int add_row(hd_stats *st, const struct hd__ss_row *r,
		   size_t bufsize)
{
	struct obj o;

	memset(&o, 0, sizeof(o));
	o.type = r->type;
	o.file_sid = o.method_sid = o.aux_sid = HD_STR_NONE;
	/* node_obj's buffer cuts a class name as this does */
	if (hd__intern_put(&st->strs, r->name,
			   r->name_len < bufsize ? r->name_len : bufsize - 1,
			   &o.class_sid))
		return HD_ENOMEM;
	return add_sums(st, &o, r);
}

int hd_stats_add_store(hd_stats *st, const hd_store *s, hd_error *err)
{
	hd_store_info info;
	struct hd__ss_row r;
	uint64_t k, rows;
	char buf[1024];
	unsigned char *img = NULL;
	size_t len = 0;

	HD_ASSERT_ARG(st && s && !st->finished);
	st->fed = 1;
	hd_store_info_get(&info, s);
	rows = summary_serves(st) ? hd__store_stats_rows(s) : 0;
	/* a store without the summary (an older build's): the same rows,
	 * made in memory by the writer's one pass of integer keys */
	if (!rows && summary_serves(st) &&
	    hd__store_stats_image(s, &img, &len, NULL) == 0)
		rows = hd__stats_image_rows(img);
	if (rows) {
		for (k = 0; k < rows; k++) {
			if (img)
				hd__stats_image_row(&r, img, k);
			else
				hd__store_stats_row(&r, s, k);
			if (add_row(st, &r, sizeof(buf))) {
				hd__free(img, len);
				return hd__error(err, HD_ENOMEM,
						 "out of memory");
			}
		}
	} else if (add_groups(st, s, NULL, 0)) {
		return hd__error(err, HD_ENOMEM, "out of memory");
	}
	hd__free(img, len);
	st->t.edges += info.dangling;
	st->t.roots += info.root_refs;
	st->t.root_categories += info.root_categories;
	st->t.shapes += info.shapes;
	st->t.features |= info.features;
	return 0;
}

int hd_stats_add_nodes(hd_stats *st, const hd_store *s, const hd_nodes *set,
		       hd_error *err)
{
	uint32_t n;
	size_t i;

	HD_ASSERT_ARG(st && s && set && !st->finished);
	st->fed = 1;
	n = hd_store_node_count(s);
	for (i = 0; i < set->n; i++)
		HD_ASSERT_ARG(set->ids[i] < n);
	if (set->n && add_groups(st, s, set->ids, set->n))
		return hd__error(err, HD_ENOMEM, "out of memory");
	return 0;
}

/* ---- finishing ---- */

/* The final string of a component. */
static int comp_string(hd_stats *st, int key, const struct comp *c,
		       uint32_t *sid)
{
	char buf[64];
	size_t n;
	const char *f;
	char *tmp;
	int len, rc;

	switch (key) {
	case HD_KEY_TYPE:
		if (c->b) {
			*sid = (uint32_t)c->a;
			return 0;
		}
		return hd__intern_put(&st->strs, hd_type_name((int)c->a),
				      strlen(hd_type_name((int)c->a)), sid);
	case HD_KEY_CLASS: {
		uint32_t kind = (uint32_t)(c->b >> 32);
		hd_str aux = { NULL, 0 };

		if (kind == CK_STR) {
			*sid = (uint32_t)c->b;
			return 0;
		}
		if (kind == CK_DATA && (uint32_t)c->b != HD_STR_NONE)
			aux.ptr = hd__intern_str(&st->strs, (uint32_t)c->b,
						 &aux.len);
		return hd__object_class_name(&st->ct, &st->strs,
					     kind == CK_DATA ? HD_T_DATA :
							       (int)(uint32_t)c->b,
					     c->a, aux, sid);
	}
	case HD_KEY_LENGTH:
		len = (int)hd_length_bucket(buf, sizeof(buf), c->a != 0,
					    c->a < 2 ? 0 :
						       (uint64_t)1 << (c->a - 2));
		return hd__intern_put(&st->strs, buf, (size_t)len, sid);
	case HD_KEY_LOCATION:
		if ((uint32_t)c->a == st->sid_untraced ||
		    (uint32_t)c->a == st->sid_none) {
			*sid = (uint32_t)c->a;
			return 0;
		}
		f = hd__intern_str(&st->strs, (uint32_t)c->a, &n);
		tmp = hd__malloc(n + 32);
		if (!tmp)
			return HD_ENOMEM;
		memcpy(tmp, f, n);
		len = snprintf(buf, sizeof(buf), ":%llu",
			       (unsigned long long)c->b);
		memcpy(tmp + n, buf, (size_t)len);
		rc = hd__intern_put(&st->strs, tmp, n + (size_t)len, sid);
		hd__free(tmp, n + 32);
		return rc;
	default:
		*sid = (uint32_t)c->a;
		return 0;
	}
}

/* Re-keys a grouping by final strings, merging groups that coincide. */
static int finish_grouping(hd_stats *st, struct grouping *g)
{
	struct grouping merged;
	struct comp k[HD_STATS_MAX_KEYS];
	size_t i;
	unsigned j;
	uint32_t sid;

	if (fold_types(g, &st->t.saturated))
		return HD_ENOMEM;
	memset(&merged, 0, sizeof(merged));
	merged.nkeys = g->nkeys;
	merged.cap = g->cap;
	merged.hkey = g->hkey;
	merged.slots = hd__calloc(merged.cap, sizeof(struct group));
	if (!merged.slots)
		return HD_ENOMEM;
	for (i = 0; i < g->cap; i++) {
		if (!g->slots[i].used)
			continue;
		memset(k, 0, sizeof(k));
		for (j = 0; j < g->nkeys; j++) {
			if (comp_string(st, g->keys[j], &g->slots[i].k[j],
					&sid))
				goto nomem;
			k[j].a = sid;
		}
		if (accumulate(&merged, k, g->slots[i].count,
			       g->slots[i].memsize, &st->t.saturated))
			goto nomem;
	}
	hd__free(g->slots, g->cap * sizeof(*g->slots));
	g->slots = merged.slots;
	g->cap = merged.cap;
	g->count = merged.count;
	if (g->recent)
		hd__kc_clear(g->recent, RECENT_BITS);
	return 0;
nomem:
	hd__free(merged.slots, merged.cap * sizeof(struct group));
	return HD_ENOMEM;
}

/* Points the rows at their strings: only once no string is added any
 * more, since the interner moves its bytes when it grows. */
static int make_rows(hd_stats *st, struct grouping *g)
{
	size_t i, r;
	unsigned j;

	g->rows = hd__calloc(g->count ? g->count : 1, sizeof(*g->rows));
	if (!g->rows)
		return HD_ENOMEM;
	for (i = 0, r = 0; i < g->cap; i++) {
		if (!g->slots[i].used)
			continue;
		for (j = 0; j < g->nkeys; j++)
			g->rows[r].key[j] = hd__intern_str(
				&st->strs, (uint32_t)g->slots[i].k[j].a,
				&g->rows[r].key_len[j]);
		g->rows[r].count = g->slots[i].count;
		g->rows[r].memsize = g->slots[i].memsize;
		r++;
	}
	g->nrows = r;
	return 0;
}

int hd_stats_finish(hd_stats *st, hd_error *err)
{
	unsigned i;

	HD_ASSERT_ARG(st && !st->finished);
	if (hd__classtab_resolve(&st->ct))
		return hd__error(err, HD_ENOMEM, "out of memory");
	for (i = 0; i < st->opts.ngroupings; i++)
		if (finish_grouping(st, &st->g[i]))
			return hd__error(err, HD_ENOMEM, "out of memory");
	for (i = 0; i < st->opts.ngroupings; i++)
		if (make_rows(st, &st->g[i]))
			return hd__error(err, HD_ENOMEM, "out of memory");
	st->sort_tmp_n = 1;
	for (i = 0; i < st->opts.ngroupings; i++)
		if (st->g[i].nrows > st->sort_tmp_n)
			st->sort_tmp_n = st->g[i].nrows;
	st->sort_tmp = hd__array_alloc(st->sort_tmp_n, sizeof(hd_stats_row));
	if (!st->sort_tmp)
		return hd__error(err, HD_ENOMEM, "out of memory");
	if (!st->t.traced)
		st->t.gen_min = 0;
	if (!st->t.root_categories && st->t.objects)
		st->t.features |= HD_FEAT_PARTIAL;
	st->finished = 1;
	return 0;
}

void hd_stats_totals_get(hd_stats_totals *out, const hd_stats *st)
{
	*out = st->t;
}

static int cmp_keys(const hd_stats_row *x, const hd_stats_row *y,
		    unsigned n)
{
	unsigned j;

	for (j = 0; j < n; j++) {
		size_t m = x->key_len[j] < y->key_len[j] ? x->key_len[j] :
							   y->key_len[j];
		int c = m ? memcmp(x->key[j], y->key[j], m) : 0;

		if (c)
			return c;
		if (x->key_len[j] != y->key_len[j])
			return x->key_len[j] < y->key_len[j] ? -1 : 1;
	}
	return 0;
}

static int row_before(const hd_stats_row *x, const hd_stats_row *y,
		      int sort, unsigned nkeys)
{
	uint64_t p = sort == HD_SORT_MEMSIZE ? x->memsize : x->count;
	uint64_t q = sort == HD_SORT_MEMSIZE ? y->memsize : y->count;

	if (p != q)
		return p > q;
	p = sort == HD_SORT_MEMSIZE ? x->count : x->memsize;
	q = sort == HD_SORT_MEMSIZE ? y->count : y->memsize;
	if (p != q)
		return p > q;
	return cmp_keys(x, y, nkeys) < 0;
}

/* A stable bottom-up merge sort: reentrant, unlike qsort with globals.
 * tmp holds n rows. */
static void sort_rows(hd_stats_row *v, size_t n, int sort, unsigned nkeys,
		      hd_stats_row *tmp)
{
	size_t w, i;

	for (w = 1; w < n; w *= 2) {
		for (i = 0; i < n; i += 2 * w) {
			size_t lo = i, mid = i + w < n ? i + w : n;
			size_t hi = i + 2 * w < n ? i + 2 * w : n;
			size_t a = lo, b = mid, o = lo;

			while (a < mid && b < hi)
				tmp[o++] = row_before(&v[b], &v[a], sort,
						      nkeys) ?
						   v[b++] :
						   v[a++];
			while (a < mid)
				tmp[o++] = v[a++];
			while (b < hi)
				tmp[o++] = v[b++];
		}
		memcpy(v, tmp, n * sizeof(*v));
	}
}

const hd_stats_row *hd_stats_rows(hd_stats *st, unsigned int g, int sort,
				  size_t *n_out)
{
	struct grouping *gr;

	if (!st || !st->finished || g >= st->opts.ngroupings) {
		if (n_out)
			*n_out = 0;
		return NULL;
	}
	gr = &st->g[g];
	if (gr->sorted != sort) {
		sort_rows(gr->rows, gr->nrows, sort, gr->nkeys, st->sort_tmp);
		gr->sorted = sort;
	}
	*n_out = gr->nrows;
	return gr->rows;
}

void hd_stats_free(hd_stats *st)
{
	unsigned i;

	if (!st)
		return;
	for (i = 0; i < HD_STATS_MAX_GROUPINGS; i++) {
		hd__free(st->g[i].slots, st->g[i].cap * sizeof(struct group));
		hd__free(st->g[i].recent,
			 st->g[i].recent ? sizeof(uint32_t) << RECENT_BITS : 0);
		hd__free(st->g[i].rows,
			 (st->g[i].count ? st->g[i].count : 1) *
				 sizeof(hd_stats_row));
	}
	hd__free(st->sort_tmp, st->sort_tmp_n * sizeof(hd_stats_row));
	hd__classtab_free(&st->ct);
	hd__intern_free(&st->strs);
	hd__map_free(&st->gems);
	hd__map_free(&st->rootnames);
	hd__free(st, sizeof(*st));
}

/* ---- the parallel scan: one accumulator a chunk, merged in order ---- */

int hd__stats_new_like(hd_stats **out, const hd_stats *st)
{
	return hd_stats_new(out, &st->opts, NULL);
}

int hd__stats_take(hd_stats *dst, hd_stats *src)
{
	hd_stats t;

	if (dst->fed || dst->finished || src->finished ||
	    memcmp(&dst->opts, &src->opts, sizeof(dst->opts)) != 0)
		return 0;
	t = *dst;
	*dst = *src;
	*src = t;
	/* the class table borrows its own stats' interner */
	dst->ct.strs = &dst->strs;
	src->ct.strs = &src->strs;
	dst->fed = 1;
	return 1;
}

static int move_sid(hd_stats *dst, const hd_stats *src, uint32_t sid,
		    uint32_t *out)
{
	const char *s;
	size_t n;

	if (sid == HD_STR_NONE) {
		*out = sid;
		return 0;
	}
	s = hd__intern_str(&src->strs, sid, &n);
	return hd__intern_put(&dst->strs, s, n, out);
}

/* A key component of src in dst's string ids. */
static int move_comp(hd_stats *dst, const hd_stats *src, int key,
		     struct comp *c)
{
	uint32_t sid, kind;

	switch (key) {
	case HD_KEY_TYPE:
		if (!c->b)
			return 0;
		break;
	case HD_KEY_CLASS:
		kind = (uint32_t)(c->b >> 32);
		if (kind == CK_TYPED)
			return 0;
		if (move_sid(dst, src, (uint32_t)c->b, &sid))
			return HD_ENOMEM;
		c->b = (uint64_t)kind << 32 | sid;
		return 0;
	case HD_KEY_LENGTH:
		return 0;
	default:
		break;
	}
	if (move_sid(dst, src, (uint32_t)c->a, &sid))
		return HD_ENOMEM;
	c->a = sid;
	return 0;
}

int hd__stats_merge(hd_stats *dst, const hd_stats *src)
{
	struct comp k[HD_STATS_MAX_KEYS];
	const struct hd__map *rn = &src->rootnames;
	uint32_t sid, v;
	size_t i;
	unsigned g, j;
	int found;

	if (dst->finished || src->finished)
		return HD_EINVAL;
	dst->fed = 1;
	if (hd__classtab_merge(&dst->ct, &src->ct))
		return HD_ENOMEM;
	for (i = 0; i < rn->cap; i++) {
		if (!rn->keys[i])
			continue;
		if (move_sid(dst, src, (uint32_t)(rn->keys[i] - 1), &sid) ||
		    hd__map_put(&dst->rootnames, sid, 1, &v, &found))
			return HD_ENOMEM;
		if (!found)
			dst->t.root_categories++;
	}
	for (g = 0; g < src->opts.ngroupings; g++) {
		const struct grouping *sg = &src->g[g];
		struct grouping *dg = &dst->g[g];
		int t;

		for (t = 0; sg->by_type && t < HD_T__COUNT; t++) {
			dg->types[t].count += sg->types[t].count;
			sat_add(&dg->types[t].memsize, sg->types[t].memsize,
				&dst->t.saturated);
		}

		for (i = 0; i < sg->cap; i++) {
			if (!sg->slots[i].used)
				continue;
			memcpy(k, sg->slots[i].k, sizeof(k));
			for (j = 0; j < sg->nkeys; j++)
				if (move_comp(dst, src, sg->keys[j], &k[j]))
					return HD_ENOMEM;
			if (accumulate(&dst->g[g], k, sg->slots[i].count,
				       sg->slots[i].memsize,
				       &dst->t.saturated))
				return HD_ENOMEM;
		}
	}
	dst->t.objects += src->t.objects;
	sat_add(&dst->t.memsize, src->t.memsize, &dst->t.saturated);
	dst->t.edges += src->t.edges;
	dst->t.roots += src->t.roots;
	dst->t.shapes += src->t.shapes;
	dst->t.traced += src->t.traced;
	if (src->t.gen_min < dst->t.gen_min)
		dst->t.gen_min = src->t.gen_min;
	if (src->t.gen_max > dst->t.gen_max)
		dst->t.gen_max = src->t.gen_max;
	dst->t.excluded += src->t.excluded;
	sat_add(&dst->t.excluded_memsize, src->t.excluded_memsize,
		&dst->t.saturated);
	dst->t.features |= src->t.features;
	dst->t.saturated |= src->t.saturated;
	return 0;
}
