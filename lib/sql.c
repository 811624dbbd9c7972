/*
 * sql.c - SQL over a store through SQLite: read-only virtual tables over
 * the mapped store (nothing is imported or copied), and a few functions.
 *
 *   objects(address, type, class, name, memsize, retained,
 *           retained_count, file, line, method, generation, length, size,
 *           bytesize, value, refs, referrers)
 *   refs("from", "to", name, k, inferred)
 *   roots(category, object, name)
 *   path(address), retained(address), addr(text), hexaddr(integer),
 *   hd_rows_visited()
 *
 * The tables are eponymous-only modules (no CREATE VIRTUAL TABLE, so the
 * schema of the in-memory database stays empty and the database can be
 * opened read-only) without xUpdate. xBestIndex plans on the store's
 * indexes: objects.address = (hd_store_find, a binary search),
 * objects.class = and objects.type = (a per-connection permutation of
 * the node ids grouped by class display name or by type, built on first
 * use by one pass and a counting sort), ORDER BY / GROUP BY class and
 * type (the same permutations, in name order, so SQLite does not sort;
 * the cursor knows its group, so the class or type of such a row is one
 * static text a group, not a lookup a row), refs."from" = (the forward
 * CSR) and refs."to" = (the reverse CSR). hd_rows_visited() counts the
 * rows the tables produced, so a test can see that an indexed filter
 * does not scan. The store keeps no values: the value column reads the
 * node's record back from the source dump (a plain file, unchanged since
 * indexing) at its offset, and is NULL otherwise.
 *
 * Addresses are SQL integers (the u64 bit pattern as a signed 64-bit
 * integer; Ruby's heap addresses are below 2^63). An equality on an
 * address column also takes '0x...' text; addr() converts text to an
 * integer and hexaddr() an integer to '0x...'.
 *
 * It lives in lib/, not cli/, so that the gem's console and a web UI
 * open the same tables (hd_sql_open gives them a sqlite3 *).
 */
#include "hd_int.h"
#include "store_format.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef HD_SQLITE_SONAME
#error "HD_SQLITE_SONAME: the file name of libsqlite3 to load (the Makefile's)"
#endif

/*
 * SQLite's functions this file calls, with the types of sqlite3.h:
 * libsqlite3 is loaded at the first hd_sql_open (dynload.c), so that a
 * program linking libheapdump does not map it at each start. Every other
 * function here runs on a database hd_sql_open made, so after the load.
 */
#define SQ_FUNCS(X)                                                       \
	X(sqlite3_close) \
	X(sqlite3_context_db_handle) \
	X(sqlite3_create_function) \
	X(sqlite3_create_module_v2) \
	X(sqlite3_db_config) \
	X(sqlite3_declare_vtab) \
	X(sqlite3_errmsg) \
	X(sqlite3_exec) \
	X(sqlite3_free) \
	X(sqlite3_limit) \
	X(sqlite3_malloc) \
	X(sqlite3_malloc64) \
	X(sqlite3_mprintf) \
	X(sqlite3_open_v2) \
	X(sqlite3_result_double) \
	X(sqlite3_result_error) \
	X(sqlite3_result_error_nomem) \
	X(sqlite3_result_int) \
	X(sqlite3_result_int64) \
	X(sqlite3_result_null) \
	X(sqlite3_result_text) \
	X(sqlite3_result_text64) \
	X(sqlite3_set_authorizer) \
	X(sqlite3_str_append) \
	X(sqlite3_str_appendall) \
	X(sqlite3_str_appendchar) \
	X(sqlite3_str_appendf) \
	X(sqlite3_str_errcode) \
	X(sqlite3_str_finish) \
	X(sqlite3_str_new) \
	X(sqlite3_stricmp) \
	X(sqlite3_user_data) \
	X(sqlite3_value_bytes) \
	X(sqlite3_value_int64) \
	X(sqlite3_value_text) \
	X(sqlite3_value_type) \
	X(sqlite3_vtab_collation)

#define SQ_MEMBER(f) HD__DYNFN(f);
static struct sq_api {
	SQ_FUNCS(SQ_MEMBER)
} sq;
#undef SQ_MEMBER
#define SQ_SYM(f) HD__DYNSYM(sq_api, f),
static const struct hd__dynsym sq_syms[] = { SQ_FUNCS(SQ_SYM) };
#undef SQ_SYM
static struct hd__dynlib sq_lib = {
	HD_SQLITE_SONAME, "libsqlite3-0", sq_syms,
	sizeof(sq_syms) / sizeof(sq_syms[0]), &sq, 0,
};

/* ---- the connection's state ---- */

/* Array sizes: at least one element, freed with the same count. */
#define NZ(n) ((size_t)(n) ? (size_t)(n) : 1)

struct grouping {             /* nodes grouped by a key, sorted */
	int built;
	uint32_t ngroups;
	uint32_t *start;      /* [ngroups + 1] offsets into perm, by rank */
	uint32_t *perm;       /* node ids, group by group, ascending ids */
};

struct hd_sql_ctx {
	const hd_store *s;
	uint32_t n;
	uint64_t visited;     /* rows produced by the tables */
	/* class display names */
	struct grouping cls;
	struct hd__intern names; /* group id -> name */
	int names_init;
	uint32_t *gid;        /* [n] node -> its class name's rank (a group
			       * id while the grouping is built) */
	uint32_t *rank;       /* [ngroups] group id -> rank by name */
	uint32_t *by_rank;    /* [ngroups] rank -> group id */
	/* types, grouped by name (BINARY order) like the classes */
	struct grouping typ;
	uint8_t type_rank[HD_T__COUNT];    /* type -> rank by name */
	uint8_t type_by_rank[HD_T__COUNT]; /* rank -> type */
	int type_len[HD_T__COUNT];         /* strlen(hd_type_name(type)) */
	const unsigned char *memsize;      /* the MEMSIZE column or NULL */
	/* graph queries, computed on first use */
	hd_reach *reach;
	hd_domtree *dom;      /* for retained() */
	hd_domtree *stored;   /* the store's own tree, for the column */
	int stored_checked;
	int declaring;        /* in sq.sqlite3_declare_vtab() */
	/* the source dump, for values: 0 not tried, 1 open, -1 none */
	int src;
	int fd;
	char *line, *val;
	size_t line_cap, val_cap;
	struct hd__scan sc;
};

static void grouping_free(struct grouping *g, uint32_t n)
{
	HD_FREE(g->start, g->built ? (size_t)g->ngroups + 1 : 0);
	HD_FREE(g->perm, g->built ? NZ(n) : 0);
	memset(g, 0, sizeof(*g));
}

static void ctx_free(void *p)
{
	struct hd_sql_ctx *c = p;

	if (!c)
		return;
	HD_FREE(c->rank, c->cls.built ? NZ(c->cls.ngroups) : 0);
	HD_FREE(c->by_rank, c->cls.built ? NZ(c->cls.ngroups) : 0);
	grouping_free(&c->cls, c->n);
	grouping_free(&c->typ, c->n);
	HD_FREE(c->gid, c->gid ? NZ(c->n) : 0);
	if (c->names_init)
		hd__intern_free(&c->names);
	hd_reach_free(c->reach);
	hd_domtree_free(c->dom);
	hd_domtree_free(c->stored);
	if (c->src == 1)
		close(c->fd);
	hd__free(c->line, c->line_cap);
	hd__free(c->val, c->val_cap);
	hd__scan_free(&c->sc);
	hd__free(c, sizeof(*c));
}

/* The key of each node: k32[id], or map[k8[id]]. */
struct group_keys {
	const uint32_t *k32;
	const unsigned char *k8;
	const uint8_t *map;
};

static inline uint32_t group_key(const struct group_keys *ks, uint32_t id)
{
	return ks->k32 ? ks->k32[id] : ks->map[ks->k8[id]];
}

/* A grouping's arrays for n nodes in k groups, start[] zeroed. */
static int group_alloc(struct grouping *g, uint32_t n, uint32_t k)
{
	HD_ALLOC(g->start, (size_t)k + 1);
	HD_ALLOC(g->perm, NZ(n));
	if (!g->start || !g->perm) {
		HD_FREE(g->start, (size_t)k + 1);
		HD_FREE(g->perm, NZ(n));
		g->start = g->perm = NULL;
		return HD_ENOMEM;
	}
	memset(g->start, 0, ((size_t)k + 1) * sizeof(*g->start));
	return 0;
}

/* start[r + 1] holding the size of group r: the groups' offsets. */
static void group_offsets(struct grouping *g, uint32_t k)
{
	uint32_t r;

	for (r = 0; r < k; r++)
		g->start[r + 1] += g->start[r];
}

/* After perm[start[r]++] placed every node: start[] back to the groups'
 * starts, and the grouping complete. */
static void group_done(struct grouping *g, uint32_t k)
{
	uint32_t r;

	for (r = k; r > 0; r--)
		g->start[r] = g->start[r - 1];
	g->start[0] = 0;
	g->ngroups = k;
	g->built = 1;
}

/* Counting sort of the node ids by their key (< k): start and perm. */
static int group_sort(struct grouping *g, uint32_t n, uint32_t k,
		      const struct group_keys *ks)
{
	uint32_t i;

	if (group_alloc(g, n, k))
		return HD_ENOMEM;
	for (i = 0; i < n; i++)
		g->start[group_key(ks, i) + 1]++;
	group_offsets(g, k);
	for (i = 0; i < n; i++)
		g->perm[g->start[group_key(ks, i)]++] = i;
	group_done(g, k);
	return 0;
}

static int cmp_type_names(const void *a, const void *b)
{
	return strcmp(hd_type_name(*(const uint8_t *)a),
		      hd_type_name(*(const uint8_t *)b));
}

/* The type grouping: the nodes grouped by type name in BINARY order,
 * so that ORDER BY / GROUP BY type needs no sorter. */
static int types_build(struct hd_sql_ctx *c)
{
	struct group_keys ks = { NULL, NULL, NULL };
	uint8_t map[256];
	uint64_t len;
	int t;

	if (c->typ.built)
		return 0;
	for (t = 0; t < HD_T__COUNT; t++)
		c->type_by_rank[t] = (uint8_t)t;
	qsort(c->type_by_rank, HD_T__COUNT, 1, cmp_type_names);
	for (t = 0; t < HD_T__COUNT; t++)
		c->type_rank[c->type_by_rank[t]] = (uint8_t)t;
	/* the type column's bytes, out-of-range ones read as UNKNOWN */
	for (t = 0; t < 256; t++)
		map[t] = c->type_rank[t < HD_T__COUNT ? t : HD_T_UNKNOWN];
	ks.k8 = hd__store_section(c->s, HD__SEC_TYPE, &len);
	ks.map = map;
	if (c->n && (!ks.k8 || len < c->n))
		return HD_EFORMAT;
	return group_sort(&c->typ, c->n, HD_T__COUNT, &ks);
}

/* Whether a node of type t with a class node is a plain instance: its
 * display name is its class's name. */
static int plain_type(int t)
{
	return t != HD_T_IMEMO && t != HD_T_NODE && t != HD_T_DATA &&
	       t != HD_T_NONE;
}

/* The class display name of id interned: a class node's plain instances
 * share one lookup (cache[class node], the group id + 1, which the
 * caller reads first); the names that depend on more (IMEMO, NODE, DATA,
 * hidden, unresolved) are formatted and interned. */
static int class_gid(struct hd_sql_ctx *c, uint32_t *cache, uint32_t id,
		     hd_node_id k, int t, uint32_t *out)
{
	char small[256], *p = small;
	int plain = k != HD_NODE_NONE && plain_type(t), rc;
	size_t n;

	n = hd_store_class_name(small, sizeof(small), c->s, id);
	if (n >= sizeof(small)) {
		if (!(p = hd__malloc(n + 1)))
			return HD_ENOMEM;
		hd_store_class_name(p, n + 1, c->s, id);
	}
	rc = hd__intern_put(&c->names, p, n, out);
	if (p != small)
		hd__free(p, n + 1);
	if (!rc && plain)
		cache[k] = *out + 1;
	return rc;
}

/* A class name and its group id, for sorting the names. */
struct name_ref {
	const char *p;
	size_t len;
	uint32_t id;
};

/* Bytewise, a prefix first: SQLite's BINARY collation. */
static int cmp_names(const void *a, const void *b)
{
	const struct name_ref *x = a, *y = b;
	int r = memcmp(x->p, y->p, x->len < y->len ? x->len : y->len);

	return r ? r : (x->len > y->len) - (x->len < y->len);
}

/* The class grouping: every node's display name interned, the names
 * sorted bytewise (SQLite's BINARY collation), the nodes grouped. */
static int classes_build(struct hd_sql_ctx *c)
{
	const unsigned char *kc, *kt;
	struct name_ref *refs;
	uint32_t *cache = NULL, *cnt = NULL, i, r, k, g = 0;
	size_t cnt_cap = 0, old;
	uint64_t lc, lt;
	unsigned char plain[256];
	int rc = 0, t;

	if (c->cls.built)
		return 0;
	/* the class and type columns, read in place (hd_store_class() and
	 * hd_store_type() without the calls) */
	kc = hd__store_section(c->s, HD__SEC_CLASS, &lc);
	kt = hd__store_section(c->s, HD__SEC_TYPE, &lt);
	if (c->n && (!kc || !kt || lc / 4 < c->n || lt < c->n))
		return HD_EFORMAT;
	if (!c->names_init) {
		if ((rc = hd__intern_init(&c->names)))
			return rc;
		c->names_init = 1;
	}
	HD_ALLOC(c->gid, NZ(c->n));
	/* group id + 1 of a class node's plain instances, 0 unknown */
	cache = hd__calloc(NZ(c->n), sizeof(*cache));
	if (!c->gid || !cache) {
		rc = HD_ENOMEM;
		goto out;
	}
	for (t = 0; t < 256; t++)
		plain[t] = (unsigned char)plain_type(t);
	for (i = 0; i < c->n && !rc; i++) {
		k = hd__le32(kc + (size_t)i * 4);
		if (k != HD_NODE_NONE && plain[kt[i]] && cache[k])
			c->gid[i] = cache[k] - 1;
		else if ((rc = class_gid(c, cache, i, k, kt[i], &c->gid[i])))
			break;
		/* the nodes of each group id, grown with the names */
		if (c->gid[i] >= cnt_cap) {
			old = cnt_cap;
			if ((rc = hd__grow((void **)&cnt, &cnt_cap,
					   (size_t)c->gid[i] + 1, sizeof(*cnt))))
				break;
			memset(cnt + old, 0, (cnt_cap - old) * sizeof(*cnt));
		}
		cnt[c->gid[i]]++;
	}
	if (rc)
		goto out;
	g = (uint32_t)c->names.count;
	HD_ALLOC(c->rank, NZ(g));
	HD_ALLOC(c->by_rank, NZ(g));
	if (!c->rank || !c->by_rank) {
		rc = HD_ENOMEM;
		goto out;
	}
	HD_ALLOC(refs, NZ(g));
	if (!refs) {
		rc = HD_ENOMEM;
		goto out;
	}
	for (i = 0; i < g; i++) {
		refs[i].p = hd__intern_str(&c->names, i, &refs[i].len);
		refs[i].id = i;
	}
	qsort(refs, g, sizeof(*refs), cmp_names);
	for (i = 0; i < g; i++) {
		c->by_rank[i] = refs[i].id;
		c->rank[refs[i].id] = i;
	}
	HD_FREE(refs, NZ(g));
	/* the counting sort by rank, in the same pass as each node's group
	 * id becomes its rank */
	if ((rc = group_alloc(&c->cls, c->n, g)))
		goto out;
	for (r = 0; r < g; r++)
		c->cls.start[r + 1] = cnt[c->by_rank[r]];
	group_offsets(&c->cls, g);
	for (i = 0; i < c->n; i++) {
		r = c->rank[c->gid[i]];
		c->gid[i] = r;
		c->cls.perm[c->cls.start[r]++] = i;
	}
	group_done(&c->cls, g);
out:
	HD_FREE(cache, NZ(c->n));
	hd__free(cnt, cnt_cap * sizeof(*cnt));
	if (rc) {
		HD_FREE(c->gid, NZ(c->n));
		HD_FREE(c->rank, NZ(g));
		HD_FREE(c->by_rank, NZ(g));
		c->gid = c->rank = c->by_rank = NULL;
	}
	return rc;
}

/* The rank of the class named (p, n), or UINT32_MAX. */
static uint32_t class_rank(const struct hd_sql_ctx *c, const char *p,
			   size_t n)
{
	uint32_t lo = 0, hi = c->cls.ngroups, mid;
	size_t l;
	const char *x;
	int r;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		x = hd__intern_str(&c->names, c->by_rank[mid], &l);
		r = memcmp(x, p, l < n ? l : n);
		if (!r)
			r = (l > n) - (l < n);
		if (!r)
			return mid;
		if (r < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return UINT32_MAX;
}

/* The store's own dominator tree, or NULL (never computed here). */
static const hd_domtree *stored_tree(struct hd_sql_ctx *c)
{
	const unsigned char *info;
	uint64_t len;

	if (!c->stored_checked) {
		c->stored_checked = 1;
		info = hd__store_section(c->s, HD__SEC_DOM_INFO, &len);
		if (info && len >= 8 * (HD__DI_FLAGS + 1))
			hd_domtree_new(&c->stored, c->s,
				       (unsigned)hd__le64(info + 8 * HD__DI_FLAGS),
				       NULL);
		if (c->stored && !hd_domtree_is_stored(c->stored)) {
			hd_domtree_free(c->stored);
			c->stored = NULL;
		}
	}
	return c->stored;
}

/* ---- the value column: read back from the source dump ---- */

/* Opens the source dump once: a plain file, unchanged since indexing
 * (hd_store_check_source); otherwise there are no values. */
static int source_open(struct hd_sql_ctx *c)
{
	hd_store_info si;
	unsigned char m[2];

	if (c->src)
		return c->src;
	c->src = -1;
	hd_store_info_get(&si, c->s);
	if (!si.source_path || !*si.source_path ||
	    strcmp(si.source_path, "-") == 0 ||
	    hd_store_check_source(c->s, si.source_path, NULL))
		return c->src;
	if ((c->fd = open(si.source_path, O_RDONLY | O_CLOEXEC)) < 0)
		return c->src;
	if (pread(c->fd, m, 2, 0) == 2 && m[0] == 0x1f && m[1] == 0x8b) {
		close(c->fd); /* gzip: no offsets to read at */
		return c->src;
	}
	return c->src = 1;
}

/* The physical line at off into c->line; its length, or -1. */
static ssize_t source_line(struct hd_sql_ctx *c, uint64_t off)
{
	size_t have = 0;
	ssize_t k;
	char *nl;

	for (;;) {
		if (have == c->line_cap &&
		    hd__grow((void **)&c->line, &c->line_cap,
			     c->line_cap ? c->line_cap * 2 : 4096, 1))
			return -1;
		do
			k = pread(c->fd, c->line + have, c->line_cap - have,
				  (off_t)(off + have));
		while (k < 0 && errno == EINTR);
		if (k <= 0)
			return have ? (ssize_t)have : -1;
		nl = memchr(c->line + have, '\n', (size_t)k);
		have += (size_t)k;
		if (nl)
			return nl - c->line;
	}
}

/* The value of a STRING, SYMBOL or FLOAT as Ruby had it (JSON escapes
 * undone), or NULL: no source dump, a record that needed repair, or a
 * record whose address is not id's (the dump changed). */
static const char *node_value(struct hd_sql_ctx *c, uint32_t id,
			      size_t *len)
{
	hd_record rec;
	ssize_t n;

	if (source_open(c) != 1 ||
	    (n = source_line(c, hd_store_offset(c->s, id))) < 0)
		return NULL;
	while (n && c->line[n - 1] == '\r')
		n--;
	if (hd__scan_line(&c->sc, c->line, (size_t)n, &rec) != HD__SCAN_OK ||
	    c->sc.repaired || rec.kind != HD_REC_OBJECT ||
	    rec.address != hd_store_address(c->s, id) || !rec.value.ptr)
		return NULL;
	if (rec.value.len + 1 > c->val_cap &&
	    hd__grow((void **)&c->val, &c->val_cap, rec.value.len + 1, 1))
		return NULL;
	*len = hd_json_unescape(c->val, rec.value.ptr, rec.value.len);
	return c->val;
}

/* ---- values ---- */

/* An address from an SQL value: an integer, or '0x...' / decimal text.
 * 0 and -1 when it is neither. */
static int value_address(sqlite3_value *v, uint64_t *out)
{
	const unsigned char *t;
	char *end;
	unsigned long long a;
	int n;

	switch (sq.sqlite3_value_type(v)) {
	case SQLITE_INTEGER:
		*out = (uint64_t)sq.sqlite3_value_int64(v);
		return 0;
	case SQLITE_TEXT:
		t = sq.sqlite3_value_text(v);
		n = sq.sqlite3_value_bytes(v);
		if (!t || n == 0 || n > 24 || t[0] == '-' || t[0] == '+' ||
		    t[0] == ' ')
			return -1;
		errno = 0;
		a = strtoull((const char *)t, &end,
			     t[0] == '0' && (t[1] == 'x' || t[1] == 'X') ? 16 :
									    10);
		/* past 2^64 - 1 is no address (strtoull saturates) */
		if (errno == ERANGE || *end || end != (const char *)t + n)
			return -1;
		*out = a;
		return 0;
	default:
		return -1;
	}
}

static void result_text(sqlite3_context *ctx, const char *p, size_t n)
{
	if (p)
		sq.sqlite3_result_text64(ctx, p, n, SQLITE_TRANSIENT,
					 SQLITE_UTF8);
	else
		sq.sqlite3_result_null(ctx);
}

static void result_u64(sqlite3_context *ctx, uint64_t v)
{
	sq.sqlite3_result_int64(ctx, (sqlite3_int64)v);
}

/* ---- the tables' common parts ---- */

struct vtab {
	sqlite3_vtab base;
	struct hd_sql_ctx *c;
};

static int vt_connect(sqlite3 *db, void *aux, int argc,
		      const char *const *argv, sqlite3_vtab **out, char **errp,
		      const char *schema)
{
	struct vtab *t;
	int rc;

	(void)argc;
	(void)argv;
	/* the authorizer sees this CREATE TABLE: let it through */
	((struct hd_sql_ctx *)aux)->declaring = 1;
	rc = sq.sqlite3_declare_vtab(db, schema);
	((struct hd_sql_ctx *)aux)->declaring = 0;
	if (rc != SQLITE_OK) {
		*errp = sq.sqlite3_mprintf("%s", sq.sqlite3_errmsg(db));
		return rc;
	}
	if (!(t = sq.sqlite3_malloc(sizeof(*t))))
		return SQLITE_NOMEM;
	memset(t, 0, sizeof(*t));
	t->c = aux;
	*out = &t->base;
	return SQLITE_OK;
}

static int vt_disconnect(sqlite3_vtab *v)
{
	sq.sqlite3_free(v);
	return SQLITE_OK;
}

/* An EQ constraint on column col that can be used, or -1. */
static int find_eq(const sqlite3_index_info *info, int col)
{
	int i;

	for (i = 0; i < info->nConstraint; i++)
		if (info->aConstraint[i].usable &&
		    info->aConstraint[i].iColumn == col &&
		    info->aConstraint[i].op == SQLITE_INDEX_CONSTRAINT_EQ)
			return i;
	return -1;
}

static int binary_coll(sqlite3_index_info *info, int i)
{
	const char *coll = sq.sqlite3_vtab_collation(info, i);

	return !coll || sq.sqlite3_stricmp(coll, "BINARY") == 0;
}

/* ---- objects ---- */

enum {
	O_ADDRESS, O_TYPE, O_CLASS, O_NAME, O_MEMSIZE, O_RETAINED,
	O_RETAINED_COUNT, O_FILE, O_LINE, O_METHOD, O_GENERATION, O_LENGTH,
	O_SIZE, O_BYTESIZE, O_VALUE, O_REFS, O_REFERRERS
};

static const char objects_schema[] =
	"CREATE TABLE objects(address INTEGER, type TEXT, class TEXT, "
	"name TEXT, memsize INTEGER, retained INTEGER, retained_count "
	"INTEGER, file TEXT, line INTEGER, method TEXT, generation INTEGER, "
	"length INTEGER, size INTEGER, bytesize INTEGER, value TEXT, "
	"refs INTEGER, "
	"referrers INTEGER)";

/* plans (idxNum) */
enum { P_SCAN, P_ADDRESS, P_CLASS, P_TYPE, P_BY_CLASS, P_BY_TYPE };

struct obj_cursor {
	sqlite3_vtab_cursor base;
	struct hd_sql_ctx *c;
	const uint32_t *perm; /* NULL: the ids pos..end themselves */
	uint32_t pos, end;
	/* walking a grouping (perm is its perm): the rank of the group
	 * that pos is in and where that group ends, so that the class or
	 * type of a row is known without looking the node up */
	const struct grouping *grp;
	uint32_t rank, rank_end;
	int gcol;             /* its column: O_CLASS or O_TYPE */
	const char *gtext;    /* and that column's text in the group */
	int glen;
	char *buf;            /* class and name text */
	size_t cap;
};

static int objects_connect(sqlite3 *db, void *aux, int argc,
			   const char *const *argv, sqlite3_vtab **out,
			   char **errp)
{
	return vt_connect(db, aux, argc, argv, out, errp, objects_schema);
}

static int objects_best(sqlite3_vtab *v, sqlite3_index_info *info)
{
	struct hd_sql_ctx *c = ((struct vtab *)v)->c;
	double n = (double)c->n + 1;
	int a = find_eq(info, O_ADDRESS), k = find_eq(info, O_CLASS);
	int t = find_eq(info, O_TYPE), plan = P_SCAN, use = -1;
	int ob = info->nOrderBy == 1 && !info->aOrderBy[0].desc ?
			 info->aOrderBy[0].iColumn :
			 -1;

	if (a >= 0) {
		plan = P_ADDRESS;
		use = a;
		info->estimatedCost = 1;
		info->estimatedRows = 1;
		info->idxFlags = SQLITE_INDEX_SCAN_UNIQUE;
	} else if (k >= 0 && binary_coll(info, k)) {
		plan = P_CLASS;
		use = k;
		info->estimatedCost = 10 + n / 100;
		info->estimatedRows = (sqlite3_int64)(n / 100) + 1;
	} else if (t >= 0 && binary_coll(info, t)) {
		plan = P_TYPE;
		use = t;
		info->estimatedCost = 10 + n / 10;
		info->estimatedRows = (sqlite3_int64)(n / 10) + 1;
	} else {
		info->estimatedCost = n;
		info->estimatedRows = (sqlite3_int64)n;
		if (ob == O_CLASS || ob == O_TYPE) {
			plan = ob == O_CLASS ? P_BY_CLASS : P_BY_TYPE;
			info->estimatedCost = n * 1.05;
		}
	}
	if (use >= 0) {
		info->aConstraintUsage[use].argvIndex = 1;
		info->aConstraintUsage[use].omit = 1;
	}
	/* the rows come in address order within a class or a type, in
	 * name order (BINARY) across them */
	if (ob == O_ADDRESS && plan != P_BY_CLASS && plan != P_BY_TYPE)
		info->orderByConsumed = 1;
	if (ob == O_CLASS && (plan == P_ADDRESS || plan == P_CLASS ||
			      plan == P_BY_CLASS))
		info->orderByConsumed = 1;
	if (ob == O_TYPE && (plan == P_ADDRESS || plan == P_TYPE ||
			     plan == P_BY_TYPE))
		info->orderByConsumed = 1;
	info->idxNum = plan;
	return SQLITE_OK;
}

static int obj_open(sqlite3_vtab *v, sqlite3_vtab_cursor **out)
{
	struct obj_cursor *cur = sq.sqlite3_malloc(sizeof(*cur));

	if (!cur)
		return SQLITE_NOMEM;
	memset(cur, 0, sizeof(*cur));
	cur->gcol = -1;
	cur->c = ((struct vtab *)v)->c;
	*out = &cur->base;
	return SQLITE_OK;
}

static int obj_close(sqlite3_vtab_cursor *vc)
{
	struct obj_cursor *cur = (struct obj_cursor *)vc;

	sq.sqlite3_free(cur->buf);
	sq.sqlite3_free(cur);
	return SQLITE_OK;
}

static int nomem(sqlite3_vtab_cursor *vc)
{
	sq.sqlite3_free(vc->pVtab->zErrMsg);
	vc->pVtab->zErrMsg = sq.sqlite3_mprintf("out of memory");
	return SQLITE_NOMEM;
}

/* The text of the cursor's grouping column in its current group: the
 * class name from the interned names, the type name; SQLITE_STATIC for
 * SQLite (they live as long as the connection), one pointer a group. */
static void group_text(struct obj_cursor *cur)
{
	const struct hd_sql_ctx *c = cur->c;
	size_t len = 0;
	int t;

	cur->gtext = NULL;
	if (cur->rank >= cur->grp->ngroups)
		return;
	if (cur->grp == &c->typ) {
		t = c->type_by_rank[cur->rank];
		cur->gcol = O_TYPE;
		cur->gtext = hd_type_name(t);
		len = (size_t)c->type_len[t];
	} else {
		cur->gcol = O_CLASS;
		cur->gtext = hd__intern_str(&c->names, c->by_rank[cur->rank],
					    &len);
	}
	if (len > INT_MAX)
		cur->gtext = NULL;
	cur->glen = (int)len;
}

/* The group that cur->pos is in (at or after cur->rank): its rank and
 * end. A binary search from the start, a step forward after that. */
static void group_seek(struct obj_cursor *cur)
{
	const struct grouping *g = cur->grp;
	uint32_t lo = cur->rank, hi = g->ngroups, mid;

	if (cur->rank_end == 0) {      /* first: start[lo + 1] > pos */
		while (lo < hi) {
			mid = lo + (hi - lo) / 2;
			if (g->start[mid + 1] > cur->pos)
				hi = mid;
			else
				lo = mid + 1;
		}
	} else {                       /* next: skip empty groups */
		while (lo < hi && g->start[lo + 1] <= cur->pos)
			lo++;
	}
	cur->rank = lo;
	cur->rank_end = lo < g->ngroups ? g->start[lo + 1] : cur->end;
	group_text(cur);
}

static int obj_filter(sqlite3_vtab_cursor *vc, int plan, const char *idx,
		      int argc, sqlite3_value **argv)
{
	struct obj_cursor *cur = (struct obj_cursor *)vc;
	struct hd_sql_ctx *c = cur->c;
	const unsigned char *p;
	uint64_t a;
	hd_node_id id;
	uint32_t r;
	int t;

	(void)idx;
	cur->perm = NULL;
	cur->grp = NULL;
	cur->gcol = -1;
	cur->gtext = NULL;
	cur->pos = cur->end = 0;
	switch (plan) {
	case P_ADDRESS:
		if (argc < 1 || value_address(argv[0], &a))
			break;
		if ((id = hd_store_find(c->s, a)) != HD_NODE_NONE) {
			cur->pos = id;
			cur->end = id + 1;
		}
		break;
	case P_CLASS:
	case P_BY_CLASS:
		if (classes_build(c))
			return nomem(vc);
		cur->perm = c->cls.perm;
		cur->grp = &c->cls;
		if (plan == P_BY_CLASS) {
			cur->end = c->n;
			break;
		}
		if (argc < 1 || sq.sqlite3_value_type(argv[0]) != SQLITE_TEXT)
			break;
		p = sq.sqlite3_value_text(argv[0]);
		r = class_rank(c, (const char *)p,
			       (size_t)sq.sqlite3_value_bytes(argv[0]));
		if (r != UINT32_MAX) {
			cur->pos = c->cls.start[r];
			cur->end = c->cls.start[r + 1];
		}
		break;
	case P_TYPE:
	case P_BY_TYPE:
		if (types_build(c))
			return nomem(vc);
		cur->perm = c->typ.perm;
		cur->grp = &c->typ;
		if (plan == P_BY_TYPE) {
			cur->end = c->n;
			break;
		}
		if (argc < 1 || sq.sqlite3_value_type(argv[0]) != SQLITE_TEXT)
			break;
		p = sq.sqlite3_value_text(argv[0]);
		for (t = 0; t < HD_T__COUNT; t++)
			if (strcmp(hd_type_name(t), (const char *)p) == 0)
				break;
		if (t < HD_T__COUNT) {
			r = c->type_rank[t];
			cur->pos = c->typ.start[r];
			cur->end = c->typ.start[r + 1];
		}
		break;
	default:
		cur->end = c->n;
	}
	if (cur->pos < cur->end) {
		c->visited++;
		if (cur->grp) {
			cur->rank = 0;
			cur->rank_end = 0;
			group_seek(cur);
		}
	}
	return SQLITE_OK;
}

static int obj_next(sqlite3_vtab_cursor *vc)
{
	struct obj_cursor *cur = (struct obj_cursor *)vc;

	if (++cur->pos < cur->end) {
		cur->c->visited++;
		if (cur->pos >= cur->rank_end && cur->grp)
			group_seek(cur);
	}
	return SQLITE_OK;
}

static int obj_eof(sqlite3_vtab_cursor *vc)
{
	struct obj_cursor *cur = (struct obj_cursor *)vc;

	return cur->pos >= cur->end;
}

static uint32_t obj_id(const struct obj_cursor *cur)
{
	return cur->perm ? cur->perm[cur->pos] : cur->pos;
}

static int obj_rowid(sqlite3_vtab_cursor *vc, sqlite3_int64 *out)
{
	*out = obj_id((const struct obj_cursor *)vc);
	return SQLITE_OK;
}

/* A name written by fn into the cursor's buffer, as the result. */
static int name_result(struct obj_cursor *cur, sqlite3_context *ctx,
		       size_t (*fn)(char *, size_t, const hd_store *,
				    hd_node_id),
		       uint32_t id)
{
	size_t n = fn(cur->buf, cur->cap, cur->c->s, id);

	if (n >= cur->cap) {
		sq.sqlite3_free(cur->buf);
		cur->cap = n + 64;
		if (!(cur->buf = sq.sqlite3_malloc64(cur->cap))) {
			cur->cap = 0;
			sq.sqlite3_result_error_nomem(ctx);
			return SQLITE_NOMEM;
		}
		fn(cur->buf, cur->cap, cur->c->s, id);
	}
	sq.sqlite3_result_text64(ctx, cur->buf, n, SQLITE_TRANSIENT,
			      SQLITE_UTF8);
	return SQLITE_OK;
}

static int sized_type(int t)
{
	return t == HD_T_ARRAY || t == HD_T_HASH || t == HD_T_STRING ||
	       t == HD_T_SYMBOL || t == HD_T_OBJECT;
}

/* The columns a scan reads most, without the others' stack frame: the
 * class or type of a grouped walk from the cursor's group, the memsize
 * from its column in place; the rest in obj_column_more(). */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static int obj_column_more(struct obj_cursor *cur, sqlite3_context *ctx,
			   int col, uint32_t id);

static int obj_column(sqlite3_vtab_cursor *vc, sqlite3_context *ctx, int col)
{
	struct obj_cursor *cur = (struct obj_cursor *)vc;
	const unsigned char *m = cur->c->memsize;
	uint32_t id, v;

	/* the group's text (sqlite3_result_text64() would only add a
	 * check to sqlite3_result_text()) */
	if (col == cur->gcol && cur->gtext) {
		sq.sqlite3_result_text(ctx, cur->gtext, cur->glen,
				       SQLITE_STATIC);
		return SQLITE_OK;
	}
	id = obj_id(cur);
	if (col == O_MEMSIZE && m &&
	    (v = hd__le32(m + (size_t)id * 4)) != HD__ESC) {
		sq.sqlite3_result_int64(ctx, v);
		return SQLITE_OK;
	}
	return obj_column_more(cur, ctx, col, id);
}

static int obj_column_more(struct obj_cursor *cur, sqlite3_context *ctx,
			   int col, uint32_t id)
{
	struct hd_sql_ctx *c = cur->c;
	const hd_store *s = c->s;
	const hd_domtree *d;
	hd_edge_iter it;
	hd_site site;
	uint64_t g, m;
	const char *p;
	size_t len;
	int t;

	switch (col) {
	case O_ADDRESS:
		result_u64(ctx, hd_store_address(s, id));
		break;
	case O_TYPE:
		t = hd_store_type(s, id);
		p = hd_type_name(t);
		sq.sqlite3_result_text(ctx, p, t >= 0 && t < HD_T__COUNT ?
						    c->type_len[t] : -1,
				    SQLITE_STATIC);
		break;
	case O_CLASS:
		if (c->cls.built) {
			p = hd__intern_str(&c->names, c->by_rank[c->gid[id]],
					   &len);
			sq.sqlite3_result_text64(ctx, p, len, SQLITE_STATIC,
					      SQLITE_UTF8);
			break;
		}
		return name_result(cur, ctx, hd_store_class_name, id);
	case O_NAME:
		return name_result(cur, ctx, hd_store_node_name, id);
	case O_MEMSIZE:
		result_u64(ctx, hd_store_memsize(s, id));
		break;
	case O_RETAINED:
	case O_RETAINED_COUNT:
		if (!(d = stored_tree(c)) ||
		    hd_domtree_idom(d, id) == HD_NODE_NONE) {
			sq.sqlite3_result_null(ctx);
			break;
		}
		g = hd_domtree_retained(d, id, &m);
		result_u64(ctx, col == O_RETAINED ? m : g);
		break;
	case O_FILE:
	case O_LINE:
	case O_METHOD:
		if (hd_store_site(&site, s, id) != 0) {
			sq.sqlite3_result_null(ctx);
			break;
		}
		if (col == O_FILE)
			result_text(ctx, site.file, site.file_len);
		else if (col == O_METHOD)
			result_text(ctx, site.method, site.method_len);
		else if (site.line)
			result_u64(ctx, site.line);
		else
			sq.sqlite3_result_null(ctx);
		break;
	case O_GENERATION:
		g = hd_store_generation(s, id);
		if (g == UINT64_MAX)
			sq.sqlite3_result_null(ctx);
		else
			result_u64(ctx, g);
		break;
	case O_LENGTH:
	case O_SIZE:
	case O_BYTESIZE:
		t = hd_store_type(s, id);
		if ((col == O_LENGTH && t != HD_T_ARRAY) ||
		    (col == O_BYTESIZE && t != HD_T_STRING &&
		     t != HD_T_SYMBOL) ||
		    (col == O_SIZE && !sized_type(t)))
			sq.sqlite3_result_null(ctx);
		else
			result_u64(ctx, hd_store_size(s, id));
		break;
	case O_VALUE:
		t = hd_store_type(s, id);
		p = NULL;
		if (t == HD_T_STRING || t == HD_T_SYMBOL || t == HD_T_FLOAT)
			p = node_value(c, id, &len);
		if (t == HD_T_FLOAT && p)
			sq.sqlite3_result_double(ctx, strtod(p, NULL));
		else
			result_text(ctx, p, len);
		break;
	case O_REFS:
		hd_store_refs(s, id, &it);
		result_u64(ctx, hd_edge_iter_count(&it));
		break;
	case O_REFERRERS:
		hd_store_referrers(s, id, &it);
		result_u64(ctx, hd_edge_iter_count(&it));
		break;
	default:
		sq.sqlite3_result_null(ctx);
	}
	return SQLITE_OK;
}

/* ---- refs ---- */

enum { R_FROM, R_TO, R_NAME, R_K, R_INFERRED };

static const char refs_schema[] =
	"CREATE TABLE refs(\"from\" INTEGER, \"to\" INTEGER, name TEXT, "
	"k INTEGER, inferred INTEGER)";

enum { RP_SCAN, RP_FROM, RP_TO };

struct ref_cursor {
	sqlite3_vtab_cursor base;
	struct hd_sql_ctx *c;
	int plan;
	uint32_t node, last;  /* the node whose list is walked; last + 1 */
	hd_edge_iter it;
	uint32_t k;           /* position in the list */
	hd_node_id other;     /* the current item */
	int eof;
};

static int refs_connect(sqlite3 *db, void *aux, int argc,
			const char *const *argv, sqlite3_vtab **out,
			char **errp)
{
	return vt_connect(db, aux, argc, argv, out, errp, refs_schema);
}

static int refs_best(sqlite3_vtab *v, sqlite3_index_info *info)
{
	struct hd_sql_ctx *c = ((struct vtab *)v)->c;
	int f = find_eq(info, R_FROM), t = find_eq(info, R_TO);
	double n = (double)c->n + 1;

	(void)v;
	if (f >= 0 || t >= 0) {
		int use = f >= 0 ? f : t;

		info->idxNum = f >= 0 ? RP_FROM : RP_TO;
		info->aConstraintUsage[use].argvIndex = 1;
		info->aConstraintUsage[use].omit = 1;
		info->estimatedCost = 10;
		info->estimatedRows = 10;
	} else {
		info->idxNum = RP_SCAN;
		info->estimatedCost = n * 2;
		info->estimatedRows = (sqlite3_int64)(n * 2);
	}
	return SQLITE_OK;
}

static int ref_open(sqlite3_vtab *v, sqlite3_vtab_cursor **out)
{
	struct ref_cursor *cur = sq.sqlite3_malloc(sizeof(*cur));

	if (!cur)
		return SQLITE_NOMEM;
	memset(cur, 0, sizeof(*cur));
	cur->c = ((struct vtab *)v)->c;
	cur->eof = 1;
	*out = &cur->base;
	return SQLITE_OK;
}

static int ref_close(sqlite3_vtab_cursor *vc)
{
	sq.sqlite3_free(vc);
	return SQLITE_OK;
}

static void ref_start(struct ref_cursor *cur)
{
	if (cur->plan == RP_TO)
		hd_store_referrers(cur->c->s, cur->node, &cur->it);
	else
		hd_store_refs(cur->c->s, cur->node, &cur->it);
	cur->k = 0;
}

/* Steps to the next item, over the next nodes' lists in a scan. */
static void ref_step(struct ref_cursor *cur)
{
	for (;;) {
		if (hd_edge_iter_next(&cur->it, &cur->other) == 0) {
			cur->c->visited++;
			return;
		}
		if (++cur->node >= cur->last) {
			cur->eof = 1;
			return;
		}
		ref_start(cur);
	}
}

static int ref_filter(sqlite3_vtab_cursor *vc, int plan, const char *idx,
		      int argc, sqlite3_value **argv)
{
	struct ref_cursor *cur = (struct ref_cursor *)vc;
	hd_node_id id = 0;
	uint64_t a;

	(void)idx;
	cur->plan = plan;
	cur->eof = 0;
	cur->node = 0;
	cur->last = cur->c->n;
	if (plan != RP_SCAN) {
		if (argc < 1 || value_address(argv[0], &a) ||
		    (id = hd_store_find(cur->c->s, a)) == HD_NODE_NONE) {
			cur->eof = 1;
			return SQLITE_OK;
		}
		cur->node = id;
		cur->last = id + 1;
	}
	if (cur->node >= cur->last) {
		cur->eof = 1;
		return SQLITE_OK;
	}
	ref_start(cur);
	ref_step(cur);
	return SQLITE_OK;
}

static int ref_next(sqlite3_vtab_cursor *vc)
{
	struct ref_cursor *cur = (struct ref_cursor *)vc;
	hd_edge_iter save = cur->it;
	hd_node_id prev = cur->other;
	uint32_t node = cur->node;

	(void)save;
	ref_step(cur);
	if (cur->eof)
		return SQLITE_OK;
	if (cur->node != node)
		cur->k = 0;
	else if (cur->plan != RP_TO || cur->other == prev)
		cur->k++;
	else
		cur->k = 0;
	return SQLITE_OK;
}

static int ref_eof(sqlite3_vtab_cursor *vc)
{
	return ((struct ref_cursor *)vc)->eof;
}

static int ref_rowid(sqlite3_vtab_cursor *vc, sqlite3_int64 *out)
{
	struct ref_cursor *cur = (struct ref_cursor *)vc;

	*out = ((sqlite3_int64)cur->node << 32) | cur->k;
	return SQLITE_OK;
}

/* The position of the reference in from's list: for the reverse list,
 * the k-th occurrence of from among to's referrers is from's k-th
 * reference to to. */
static uint32_t ref_index(const struct ref_cursor *cur, hd_node_id *from,
			  hd_node_id *to)
{
	hd_edge_iter it;
	hd_node_id x;
	uint32_t i = 0, seen = 0;

	if (cur->plan != RP_TO) {
		*from = cur->node;
		*to = cur->other;
		return cur->k;
	}
	*from = cur->other;
	*to = cur->node;
	hd_store_refs(cur->c->s, *from, &it);
	while (hd_edge_iter_next(&it, &x) == 0) {
		if (x == *to && seen++ == cur->k)
			return i;
		i++;
	}
	return 0;
}

static int ref_column(sqlite3_vtab_cursor *vc, sqlite3_context *ctx, int col)
{
	struct ref_cursor *cur = (struct ref_cursor *)vc;
	const hd_store *s = cur->c->s;
	hd_node_id from, to;
	uint32_t k = ref_index(cur, &from, &to);

	switch (col) {
	case R_FROM:
		result_u64(ctx, hd_store_address(s, from));
		break;
	case R_TO:
		result_u64(ctx, hd_store_address(s, to));
		break;
	case R_K:
		result_u64(ctx, k);
		break;
	case R_NAME:
	case R_INFERRED: {
#ifdef HD_NAME_INFERRED
		size_t len = 0;
		unsigned flags = 0;
		const char *p = hd_store_ref_name_at(s, from, k, &len, &flags);

		if (col == R_NAME)
			result_text(ctx, p, len);
		else if (p)
			sq.sqlite3_result_int(ctx,
					      (flags & HD_NAME_INFERRED) != 0);
		else
			sq.sqlite3_result_null(ctx);
#else
		sq.sqlite3_result_null(ctx);
#endif
		break;
	}
	default:
		sq.sqlite3_result_null(ctx);
	}
	return SQLITE_OK;
}

/* ---- roots ---- */

enum { T_CATEGORY, T_OBJECT, T_NAME };

static const char roots_schema[] =
	"CREATE TABLE roots(category TEXT, object INTEGER, name TEXT)";

struct root_cursor {
	sqlite3_vtab_cursor base;
	struct hd_sql_ctx *c;
	uint32_t cat, ncat, k;
	hd_edge_iter it;
	hd_node_id obj;
	int eof;
};

static int roots_connect(sqlite3 *db, void *aux, int argc,
			 const char *const *argv, sqlite3_vtab **out,
			 char **errp)
{
	return vt_connect(db, aux, argc, argv, out, errp, roots_schema);
}

static int roots_best(sqlite3_vtab *v, sqlite3_index_info *info)
{
	(void)v;
	info->idxNum = 0;
	info->estimatedCost = 1000;
	info->estimatedRows = 1000;
	return SQLITE_OK;
}

static int root_open(sqlite3_vtab *v, sqlite3_vtab_cursor **out)
{
	struct root_cursor *cur = sq.sqlite3_malloc(sizeof(*cur));

	if (!cur)
		return SQLITE_NOMEM;
	memset(cur, 0, sizeof(*cur));
	cur->c = ((struct vtab *)v)->c;
	cur->eof = 1;
	*out = &cur->base;
	return SQLITE_OK;
}

static void root_step(struct root_cursor *cur)
{
	for (;;) {
		if (cur->cat < cur->ncat &&
		    hd_edge_iter_next(&cur->it, &cur->obj) == 0) {
			cur->c->visited++;
			return;
		}
		if (cur->cat >= cur->ncat || ++cur->cat >= cur->ncat) {
			cur->eof = 1;
			return;
		}
		cur->k = 0;
		hd_store_root_refs(cur->c->s, cur->cat, &cur->it);
	}
}

static int root_filter(sqlite3_vtab_cursor *vc, int plan, const char *idx,
		       int argc, sqlite3_value **argv)
{
	struct root_cursor *cur = (struct root_cursor *)vc;

	(void)plan;
	(void)idx;
	(void)argc;
	(void)argv;
	cur->cat = 0;
	cur->k = 0;
	cur->ncat = hd_store_root_count(cur->c->s);
	cur->eof = 0;
	if (cur->ncat)
		hd_store_root_refs(cur->c->s, 0, &cur->it);
	root_step(cur);
	return SQLITE_OK;
}

static int root_next(sqlite3_vtab_cursor *vc)
{
	struct root_cursor *cur = (struct root_cursor *)vc;
	uint32_t cat = cur->cat;

	root_step(cur);
	cur->k = cur->cat == cat ? cur->k + 1 : 0;
	return SQLITE_OK;
}

static int root_eof(sqlite3_vtab_cursor *vc)
{
	return ((struct root_cursor *)vc)->eof;
}

static int root_rowid(sqlite3_vtab_cursor *vc, sqlite3_int64 *out)
{
	struct root_cursor *cur = (struct root_cursor *)vc;

	*out = ((sqlite3_int64)cur->cat << 32) | cur->k;
	return SQLITE_OK;
}

static int root_column(sqlite3_vtab_cursor *vc, sqlite3_context *ctx,
		       int col)
{
	struct root_cursor *cur = (struct root_cursor *)vc;
	const hd_store *s = cur->c->s;
	const char *p;

	switch (col) {
	case T_CATEGORY:
		p = hd_store_root_name(s, cur->cat);
		result_text(ctx, p, p ? strlen(p) : 0);
		break;
	case T_OBJECT:
		result_u64(ctx, hd_store_address(s, cur->obj));
		break;
	case T_NAME: {
#ifdef HD_NAME_INFERRED
		size_t len = 0;

		p = hd_store_root_ref_name(s, cur->cat, cur->obj, &len);
		result_text(ctx, p, len);
#else
		sq.sqlite3_result_null(ctx);
#endif
		break;
	}
	default:
		sq.sqlite3_result_null(ctx);
	}
	return SQLITE_OK;
}

/* ---- the modules: eponymous-only (xCreate NULL), read-only (no
 * xUpdate) ---- */

#define MODULE(connect, best, open, close, filter, next, eof, column,     \
	       rowid)                                                     \
	{ 1, NULL, connect, best, vt_disconnect, NULL, open, close, filter, \
	  next, eof, column, rowid, NULL, NULL, NULL, NULL, NULL, NULL, \
	  NULL, NULL, NULL, NULL, NULL }

static const sqlite3_module objects_module =
	MODULE(objects_connect, objects_best, obj_open, obj_close,
	       obj_filter, obj_next, obj_eof, obj_column, obj_rowid);
static const sqlite3_module refs_module =
	MODULE(refs_connect, refs_best, ref_open, ref_close, ref_filter,
	       ref_next, ref_eof, ref_column, ref_rowid);
static const sqlite3_module roots_module =
	MODULE(roots_connect, roots_best, root_open, ref_close, root_filter,
	       root_next, root_eof, root_column, root_rowid);

/* ---- functions ---- */

static struct hd_sql_ctx *fn_ctx(sqlite3_context *ctx)
{
	return sq.sqlite3_user_data(ctx);
}

/* The node of argv[0], or HD_NODE_NONE (the result is then NULL). */
static hd_node_id fn_node(sqlite3_context *ctx, sqlite3_value **argv)
{
	uint64_t a;

	if (value_address(argv[0], &a))
		return HD_NODE_NONE;
	return hd_store_find(fn_ctx(ctx)->s, a);
}

static void fn_error(sqlite3_context *ctx, const hd_error *err, int rc)
{
	if (rc == HD_ENOMEM)
		sq.sqlite3_result_error_nomem(ctx);
	else
		sq.sqlite3_result_error(ctx, err->msg[0] ? err->msg :
							    "failed",
				     -1);
}

/* Appends "Name 0xaddr" (and " name" of the reference to next) to str. */
static void path_hop(sqlite3_str *str, const hd_store *s, hd_node_id v,
		     hd_node_id next)
{
	char small[256], *p = small;
	size_t n = hd_store_node_name(small, sizeof(small), s, v);

	if (n >= sizeof(small) && (p = sq.sqlite3_malloc64(n + 1)))
		hd_store_node_name(p, n + 1, s, v);
	sq.sqlite3_str_append(str, p ? p : small,
			      (int)(p ? n : sizeof(small) - 1));
	if (p != small)
		sq.sqlite3_free(p);
	sq.sqlite3_str_appendf(str, " 0x%llx",
			    (unsigned long long)hd_store_address(s, v));
#ifdef HD_NAME_INFERRED
	if (next != HD_NODE_NONE) {
		size_t len = 0;
		const char *nm = hd_store_ref_name(s, v, next, &len, NULL);

		if (nm) {
			sq.sqlite3_str_appendchar(str, 1, ' ');
			sq.sqlite3_str_append(str, nm, (int)len);
		}
	}
#else
	(void)next;
#endif
}

static void fn_path(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct hd_sql_ctx *c = fn_ctx(ctx);
	hd_node_id id = fn_node(ctx, argv);
	hd_root_path p = { 0 };
	hd_error err = { 0 };
	sqlite3_str *str;
	const char *root;
	size_t i;
	int rc;

	(void)argc;
	if (id == HD_NODE_NONE) {
		sq.sqlite3_result_null(ctx);
		return;
	}
	if (!c->reach && (rc = hd_reach_new(&c->reach, c->s, 0, &err))) {
		fn_error(ctx, &err, rc);
		return;
	}
	if ((rc = hd_reach_path(&p, c->reach, id, &err))) {
		if (rc == HD_ENOTFOUND)
			sq.sqlite3_result_null(ctx);
		else
			fn_error(ctx, &err, rc);
		hd_root_path_free(&p);
		return;
	}
	str = sq.sqlite3_str_new(sq.sqlite3_context_db_handle(ctx));
	root = hd_store_root_name(c->s, p.root);
	sq.sqlite3_str_appendall(str, root ? root : "?");
#ifdef HD_NAME_INFERRED
	if (p.n) {
		size_t len = 0;
		const char *nm = hd_store_root_ref_name(c->s, p.root,
							p.nodes[0], &len);

		if (nm) {
			sq.sqlite3_str_appendchar(str, 1, ' ');
			sq.sqlite3_str_append(str, nm, (int)len);
		}
	}
#endif
	for (i = 0; i < p.n; i++) {
		sq.sqlite3_str_appendall(str, " -> ");
		path_hop(str, c->s, p.nodes[i],
			 i + 1 < p.n ? p.nodes[i + 1] : HD_NODE_NONE);
	}
	hd_root_path_free(&p);
	if (sq.sqlite3_str_errcode(str)) {
		sq.sqlite3_free(sq.sqlite3_str_finish(str));
		sq.sqlite3_result_error_nomem(ctx);
		return;
	}
	sq.sqlite3_result_text(ctx, sq.sqlite3_str_finish(str), -1,
			       sq.sqlite3_free);
}

static void fn_retained(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct hd_sql_ctx *c = fn_ctx(ctx);
	hd_node_id id = fn_node(ctx, argv);
	const hd_domtree *d;
	hd_error err = { 0 };
	uint64_t m;
	int rc;

	(void)argc;
	if (id == HD_NODE_NONE) {
		sq.sqlite3_result_null(ctx);
		return;
	}
	if (!(d = stored_tree(c))) {
		/* as top computes it by default: without dump_all's own */
		if (!c->dom && (rc = hd_domtree_new(&c->dom, c->s,
						    HD_DOMTREE_SKIP_DUMPER,
						    &err))) {
			fn_error(ctx, &err, rc);
			return;
		}
		d = c->dom;
	}
	if (hd_domtree_idom(d, id) == HD_NODE_NONE) {
		sq.sqlite3_result_null(ctx);
		return;
	}
	hd_domtree_retained(d, id, &m);
	result_u64(ctx, m);
}

static void fn_addr(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	uint64_t a;

	(void)argc;
	if (value_address(argv[0], &a))
		sq.sqlite3_result_null(ctx);
	else
		result_u64(ctx, a);
}

static void fn_hexaddr(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	char buf[24];
	uint64_t a;

	(void)argc;
	if (value_address(argv[0], &a)) {
		sq.sqlite3_result_null(ctx);
		return;
	}
	snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)a);
	sq.sqlite3_result_text(ctx, buf, -1, SQLITE_TRANSIENT);
}

static void fn_visited(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	(void)argv;
	result_u64(ctx, fn_ctx(ctx)->visited);
}

/* ---- read-only: what the authorizer lets through ---- */

/*
 * The functions a statement may call: SQLite's own that compute on
 * their arguments only (core scalars, aggregates, window functions,
 * math, dates, JSON) and ours. Anything else is refused when the
 * statement is prepared: load_extension, fts3_tokenizer (it hands out a
 * library pointer and replaces a tokenizer), fts5 (a pointer), the
 * full-text and R*Tree helpers, sqlite_compileoption_*, changes() and
 * the like, and any function an extension or a later SQLite adds.
 * Sorted, for bsearch with sqlite3_stricmp.
 */
static const char *const sql_functions[] = {
	"->", "->>", "abs", "acos", "acosh", "addr", "asin", "asinh", "atan",
	"atan2", "atanh", "avg", "ceil", "ceiling", "char", "coalesce",
	"concat", "concat_ws", "cos", "cosh", "count", "cume_dist", "date",
	"datetime", "degrees", "dense_rank", "exp", "first_value", "floor",
	"format", "glob", "group_concat", "hd_rows_visited", "hex",
	"hexaddr", "ifnull", "iif", "instr", "json", "json_array",
	"json_array_length", "json_error_position", "json_extract",
	"json_group_array", "json_group_object", "json_insert",
	"json_object", "json_patch", "json_pretty", "json_quote",
	"json_remove", "json_replace", "json_set", "json_type", "json_valid",
	"julianday", "lag", "last_value", "lead", "length", "like",
	"likelihood", "likely", "ln", "log", "log10", "log2", "lower",
	"ltrim", "max", "min", "mod", "nth_value", "ntile", "nullif",
	"octet_length", "path", "percent_rank", "pi", "pow", "power",
	"printf", "quote", "radians", "rank", "replace", "retained", "round",
	"row_number", "rtrim", "sign", "sin", "sinh", "soundex", "sqrt",
	"strftime", "string_agg", "substr", "substring", "sum", "tan", "tanh",
	"time", "timediff", "total", "trim", "trunc", "typeof", "unhex",
	"unicode", "unixepoch", "unlikely", "upper",
};

static int cmp_function(const void *key, const void *elem)
{
	return sq.sqlite3_stricmp(key, *(const char *const *)elem);
}

static int function_allowed(const char *name)
{
	return name && bsearch(name, sql_functions,
			       sizeof(sql_functions) / sizeof(sql_functions[0]),
			       sizeof(sql_functions[0]), cmp_function) != NULL;
}

static int authorize(void *p, int action, const char *a, const char *b,
		     const char *db, const char *trigger)
{
	static const char *const pragmas[] = { "table_info", "table_xinfo",
					       "function_list", "module_list",
					       NULL };
	size_t i;

	if (((const struct hd_sql_ctx *)p)->declaring)
		return SQLITE_OK;
	(void)b;
	(void)db;
	(void)trigger;
	switch (action) {
	case SQLITE_SELECT:
	case SQLITE_READ:
	case SQLITE_RECURSIVE:
		return SQLITE_OK;
	case SQLITE_FUNCTION:
		return function_allowed(b) ? SQLITE_OK : SQLITE_DENY;
	case SQLITE_PRAGMA:
		for (i = 0; a && pragmas[i]; i++)
			if (sq.sqlite3_stricmp(a, pragmas[i]) == 0)
				return SQLITE_OK;
		return SQLITE_DENY;
	default: /* writes, schema changes, ATTACH, transactions */
		return SQLITE_DENY;
	}
}

static const struct {
	const char *name;
	int nargs;
	void (*fn)(sqlite3_context *, int, sqlite3_value **);
	int flags;
} functions[] = {
	{ "path", 1, fn_path, 0 },
	{ "retained", 1, fn_retained, 0 },
	{ "addr", 1, fn_addr, SQLITE_DETERMINISTIC },
	{ "hexaddr", 1, fn_hexaddr, SQLITE_DETERMINISTIC },
	{ "hd_rows_visited", 0, fn_visited, 0 },
};

const char *hd_sql_table(unsigned i)
{
	static const char *const names[] = { "objects", "refs", "roots" };

	return i < sizeof(names) / sizeof(names[0]) ? names[i] : NULL;
}

int hd_sql_open(struct sqlite3 **out, const hd_store *s, hd_error *err)
{
	struct hd_sql_ctx *c, *shared;
	sqlite3 *db = NULL;
	uint64_t len;
	size_t i;
	int rc;

	HD_ASSERT_ARG(out && s);
	*out = NULL;
	if ((rc = hd__dynload(&sq_lib, err)))
		return rc;
	if (!(c = hd__calloc(1, sizeof(*c))))
		return hd__error(err, HD_ENOMEM, "out of memory");
	c->s = s;
	c->n = hd_store_node_count(s);
	for (i = 0; i < HD_T__COUNT; i++)
		c->type_len[i] = (int)strlen(hd_type_name((int)i));
	c->memsize = hd__store_section(s, HD__SEC_MEMSIZE, &len);
	if (c->memsize && len / 4 < c->n)
		c->memsize = NULL;
	rc = sq.sqlite3_open_v2(":memory:", &db,
			     SQLITE_OPEN_READONLY | SQLITE_OPEN_MEMORY |
				     SQLITE_OPEN_NOMUTEX,
			     NULL);
	if (rc != SQLITE_OK)
		goto fail;
	/* owned by the database from here: freed with it */
	rc = sq.sqlite3_create_module_v2(db, "objects", &objects_module, c,
				      ctx_free);
	if (rc != SQLITE_OK) {
		c = NULL;
		goto fail;
	}
	shared = c;
	c = NULL;
	if (sq.sqlite3_create_module_v2(db, "refs", &refs_module, shared,
				     NULL) ||
	    sq.sqlite3_create_module_v2(db, "roots", &roots_module, shared,
				     NULL))
		goto fail;
	for (i = 0; i < sizeof(functions) / sizeof(functions[0]); i++)
		if (sq.sqlite3_create_function(db, functions[i].name,
					    functions[i].nargs,
					    SQLITE_UTF8 | functions[i].flags,
					    shared, functions[i].fn,
					    NULL, NULL))
			goto fail;
	sq.sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 0);
	sq.sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0,
			     NULL);
	sq.sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
	sq.sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
	if (sq.sqlite3_exec(db, "PRAGMA temp_store = MEMORY", NULL, NULL,
			    NULL) ||
	    sq.sqlite3_set_authorizer(db, authorize, shared))
		goto fail;
	*out = db;
	return 0;
fail:
	rc = hd__error(err, HD_ENOMEM, "cannot open SQLite: %s",
		       db ? sq.sqlite3_errmsg(db) : "out of memory");
	if (c)
		ctx_free(c);
	sq.sqlite3_close(db);
	return rc;
}

void hd_sql_close(struct sqlite3 *db)
{
	if (db) /* else SQLite may never have been loaded */
		sq.sqlite3_close(db);
}
