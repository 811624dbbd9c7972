/*
 * store_build.c - reading a dump into an in-memory store.
 *
 * One pass over the dump appends every object's fields to compact
 * record-order columns (nothing is allocated per object) and its
 * references, as addresses, to one array. Then the addresses are sorted
 * in place by a radix sort that carries record numbers, duplicates are
 * dropped (the first record wins), references are resolved through a
 * bucket index over the sorted addresses, the forward CSR is laid out in
 * node order, each column is permuted into node order one at a time and
 * the reverse CSR is built in place. Peak memory is about the finished
 * store plus one column.
 *
 * A regular, plain dump is read on opts->jobs threads (pscan.c): each
 * chunk into an accumulator of its own (a struct bld with its own
 * interner, sites, class dictionary and class table, so ids are local),
 * then the accumulators are merged in file order into the first one: a
 * chunk's strings, sites, class pointers and root categories are added
 * to the first's in their local order, which is the order one reader
 * would have met them in, and its columns appended with the local ids
 * translated. The store is byte-identical to one reader's. What only one
 * reader can decide (an error, a limit, a class record whose address an
 * earlier chunk holds: one reader would not intern its names) has the
 * dump read again on one thread.
 */
#include "util/keycache.h"
#include "store_format.h"
#include "util/thread.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#define PROGRESS_EVERY 65536u

enum {
	C_ADDR, C_TYPE, C_BITS, C_CLS, C_MEM, C_GEN, C_SIZE, C_SITE, C_AUX,
	C_OFF, C_NREF, C_STK, C__N
};

static const unsigned char col_w[C__N] = { 8, 1, 2, 4, 4, 4, 4, 4, 4, 8, 4,
					   4 };

struct col {
	void *p;
	size_t cap; /* items */
};

/* A value too wide for its u32 column, by record (then node) number. */
struct wide {
	uint32_t idx;
	uint64_t v;
};

struct wlist {
	struct wide *v;
	size_t n, cap;
};

struct site {
	uint32_t file, method;
	uint64_t line;
};

/*
 * Key caches (keycache.h) in front of the keyed hash tables that the
 * reading consults for nearly every record (class pointers, sites,
 * strings): a hit returns the id the table would, checked against the
 * key the table keeps for it; a miss asks the table and fills the slot.
 * They decide nothing (every id is still made by the table, in the order
 * the records come), so the store is the same; a crafted dump only
 * misses, and pays the table as before. All zeros is empty.
 */
#define CCACHE_BITS 9   /* class pointers */
#define SCACHE_BITS 10  /* sites */

/* Sorted addresses with a bucket index on their high bits. */
struct lut {
	const uint64_t *a;
	size_t n;
	uint64_t min, max;
	unsigned shift;
	uint32_t *tab;
	size_t nb;
};

struct bld {
	const hd_index_options *opts;
	const char *path;
	hd_reader *r;
	struct hd__intern strs;
	struct hd__classtab ct;
	struct col c[C__N];
	size_t n;                    /* records */
	struct wlist wmem, wgen, wsize;
	uint64_t *refs;
	size_t nrefs, refs_cap;
	size_t refs_bytes;           /* its allocation once resolved */
	/* reference names: codes parallel to refs (then to the edges) and
	 * to raddr (then to the root references kept), NULL until a record
	 * has names */
	uint32_t *nm, *rnm, *enm, *rknm;
	size_t nm_cap, rnm_cap, enm_n, rknm_n;
	const char *limit_what;      /* the limit exceeded (HD_ELIMIT) */
	uint64_t limit_n;
	/* class pointers, as a dictionary */
	struct hd__map cmap;
	uint64_t *cdict;
	size_t ncd, cd_cap;
	uint8_t *cd_strong;          /* a non-class object was offered */
	size_t cd_strong_cap;
	uint64_t last_klass;
	uint32_t last_cd;
	/* allocation sites */
	struct site *sites;
	size_t nsites, sites_cap;
	uint32_t *sslot;             /* site id + 1, 0 empty */
	size_t sslot_cap;
	struct hd__hkey skey;        /* their hash key (hash.c) */
	struct site last_site;
	uint32_t last_sid;
	uint32_t ccache[1u << CCACHE_BITS];
	uint32_t scache[1u << SCACHE_BITS];
	struct hd__strcache files, methods, auxs;
	/* roots */
	struct hd__map rmap;         /* name sid -> category */
	uint32_t *rnames;
	size_t nroots, rnames_cap;
	uint64_t *raddr;
	uint32_t *rcat;
	size_t nraddr, raddr_cap, rcat_cap;
	uint64_t root_listed;
	uint32_t features;
	int has_gen, has_site;
	hd_read_stats rs;            /* the reader's counts, once read */
	void *task_arg;              /* what a task of par2 works on */
	/* after sorting */
	uint32_t *perm;
	size_t N;
	struct lut lut;
	uint64_t dangling, duplicates;
	/* class edges (man 5 heapdump-store, CLASS REFERENCES): the node
	 * of each class pointer whose instances hold it, else NONE; the
	 * records that get one, as a bitmap and ascending with the class
	 * node of each; how many at most, and made */
	uint32_t *cedge;
	unsigned char *cbit;
	uint32_t *ce_rec, *ce_tgt;
	size_t nce_max, nce;
	/* allocation stacks: the STACK and FRAME records (the column
	 * C_STK holds each object's "stack" as the dump numbers it) */
	struct hd__stk_acc stk;
	/* HD_INDEX_STRING_VALUES: the STRING records' entries (store_format.h,
	 * struct hd__gathered) in blocks never moved: the full ones in svc,
	 * in order, the one being filled in sv; each entry's record number */
	int gather;
	unsigned char *sv;
	size_t sv_len, sv_cap;
	struct hd__gv_chunk *svc;
	size_t svc_n, svc_cap;
	uint32_t *svr;
	size_t svn, svr_cap;
	/* HD_INDEX_SPILL: the store whose spill file takes each block of
	 * string values once full (store_spill.c), else NULL */
	hd_store *spill;
	hd_store *s;
};

/* ---- phase timing (HEAPDUMP_TIMING) ---- */

static double now_of(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double process_cpu(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* HEAPDUMP_TIMING=rss: the resident set now and its peak so far, from
 * /proc/self/status (nothing where there is none). */
static void rss_put(FILE *f)
{
	FILE *st = fopen("/proc/self/status", "r");
	char line[128];
	unsigned long rss = 0, hwm = 0;

	if (!st)
		return;
	while (fgets(line, sizeof(line), st)) {
		if (!strncmp(line, "VmRSS:", 6))
			rss = strtoul(line + 6, NULL, 10);
		else if (!strncmp(line, "VmHWM:", 6))
			hwm = strtoul(line + 6, NULL, 10);
	}
	fclose(st);
	fprintf(f, ", rss %lu MB, peak %lu MB", rss / 1024, hwm / 1024);
}

void hd__timing(const char *phase)
{
	static __thread double wall, cpu, thread; /* this thread's last */
	const char *e = getenv("HEAPDUMP_TIMING");
	double w, c, t;

	if (!e || !*e || !strcmp(e, "0"))
		return;
	w = now_of(CLOCK_MONOTONIC);
	c = process_cpu();
	t = now_of(CLOCK_THREAD_CPUTIME_ID);
	if (phase && wall > 0) {
		fprintf(stderr,
			"heapdump: timing: %-10s wall %6.3f s, cpu %6.3f s, "
			"this thread %6.3f s",
			phase, w - wall, c - cpu, t - thread);
		if (!strcmp(e, "rss"))
			rss_put(stderr);
		fputc('\n', stderr);
	}
	wall = w;
	cpu = c;
	thread = t;
}

/* ---- sections of the store being built ---- */

static const unsigned char empty_sec[8];

static int set_sec(struct bld *b, int id, void *p, size_t len, size_t cap)
{
	hd_store *s = b->s;

	hd__free(s->own[id], s->own_len[id]);
	s->own[id] = p;
	s->own_len[id] = cap;
	s->sec[id] = p ? p : empty_sec;
	s->len[id] = len;
	return 0;
}

static void *sec_alloc(struct bld *b, int id, size_t n, size_t w)
{
	void *p = hd__array_alloc(n ? n : 1, w);

	if (p)
		set_sec(b, id, p, n * w, (n ? n : 1) * w);
	return p;
}

/* Byte order: the images are little-endian; swap typed arrays if not. */
static int host_le(void)
{
	const uint16_t one = 1;

	return *(const unsigned char *)&one == 1;
}

static void to_le(void *p, size_t n, unsigned w)
{
	unsigned char *c = p, t;
	size_t i;
	unsigned j;

	if (host_le())
		return;
	for (i = 0; i < n; i++, c += w)
		for (j = 0; j < w / 2; j++) {
			t = c[j];
			c[j] = c[w - 1 - j];
			c[w - 1 - j] = t;
		}
}

/* ---- streaming ---- */

/*
 * Room for the records and references of a dump (or a part of one) of
 * bytes bytes, reserved before reading it, while b is empty: records of
 * at least RESERVE_LINE bytes a line and references of RESERVE_REF
 * bytes each (a dump_all line is 150 to 400 bytes; the bench dump's
 * hold a reference every 212 bytes) fit without the arrays growing,
 * which copied them (realloc: a quarter of index's time). Pages never
 * written are never backed, so the reservation costs address space, not
 * memory; a dump of shorter lines grows the arrays as before. It is a
 * hint: one that cannot be had is not an error. The columns are
 * reserved all or none (add_object grows them together, by C_ADDR's
 * capacity).
 */
#define RESERVE_LINE 96
#define RESERVE_REF 48

static void reserve(struct bld *b, uint64_t bytes)
{
	size_t recs = (size_t)(bytes / RESERVE_LINE) + 1;
	size_t refs = (size_t)(bytes / RESERVE_REF) + 1;
	void *p[C__N];
	int i;

	if (!bytes || b->n || b->nrefs || recs <= b->c[C_ADDR].cap)
		return;
	for (i = 0; i < C__N; i++)
		if (!(p[i] = hd__array_alloc(recs, col_w[i]))) {
			while (i--)
				hd__free(p[i], recs * col_w[i]);
			return;
		}
	for (i = 0; i < C__N; i++) {
		hd__free(b->c[i].p, b->c[i].cap * col_w[i]);
		b->c[i].p = p[i];
		b->c[i].cap = recs;
	}
	if (b->refs_cap < refs &&
	    (p[0] = hd__array_alloc(refs, sizeof(*b->refs)))) {
		hd__free(b->refs, b->refs_cap * sizeof(*b->refs));
		b->refs = p[0];
		b->refs_cap = refs;
	}
	/* the string values (HD_INDEX_STRING_VALUES): the same hint for
	 * their record numbers (their bytes go in blocks of their own) */
	if (b->gather && !b->svr &&
	    (p[0] = hd__array_alloc(recs, sizeof(*b->svr)))) {
		b->svr = p[0];
		b->svr_cap = recs;
	}
}

static int grow_cols(struct bld *b, size_t need)
{
	int i;

	for (i = 0; i < C__N; i++)
		if (hd__grow(&b->c[i].p, &b->c[i].cap, need, col_w[i]))
			return HD_ENOMEM;
	return 0;
}

static int wide_put(struct wlist *wl, uint32_t *col, size_t i, uint64_t v)
{
	if (v < HD__ESC) {
		col[i] = (uint32_t)v;
		return 0;
	}
	col[i] = HD__ESC;
	if (hd__grow((void **)&wl->v, &wl->cap, wl->n + 1, sizeof(*wl->v)))
		return HD_ENOMEM;
	wl->v[wl->n].idx = (uint32_t)i;
	wl->v[wl->n++].v = v;
	return 0;
}

static int class_id(struct bld *b, uint64_t klass, uint32_t *out)
{
	uint32_t id;
	int found;

	size_t e;

	if (klass == b->last_klass && b->ncd) {
		*out = b->last_cd;
		return 0;
	}
	e = hd__kc_slot(klass, CCACHE_BITS);
	id = hd__kc_find(b->ccache, e, b->cdict, b->ncd, sizeof(*b->cdict), 0,
			 &klass, sizeof(klass));
	if (id != HD__NONE) {
		b->last_klass = klass;
		*out = b->last_cd = id;
		return 0;
	}
	if (b->ncd >= HD_NODE_NONE - 1 ||
	    hd__grow((void **)&b->cdict, &b->cd_cap, b->ncd + 1,
		     sizeof(*b->cdict)) ||
	    hd__grow((void **)&b->cd_strong, &b->cd_strong_cap, b->ncd + 1,
		     1) ||
	    hd__map_put(&b->cmap, klass, (uint32_t)b->ncd, &id, &found))
		return HD_ENOMEM;
	if (!found) {
		b->cd_strong[b->ncd] = 0;
		b->cdict[b->ncd++] = klass;
	}
	b->last_klass = klass;
	b->last_cd = id;
	hd__kc_put(b->ccache, e, id);
	*out = id;
	return 0;
}

/* Keyed: the line numbers come from the dump. */
static uint64_t site_hash(const struct bld *b, const struct site *k)
{
	uint64_t w[2];

	w[0] = (uint64_t)k->file << 32 | k->method;
	w[1] = k->line;
	return hd__hash_keyed(&b->skey, w, sizeof(w));
}

static int same_site(const struct site *a, const struct site *b)
{
	return a->file == b->file && a->method == b->method &&
	       a->line == b->line;
}

static int site_rehash(struct bld *b)
{
	size_t ncap = b->sslot_cap ? b->sslot_cap * 2 : 1024, i, j;
	uint32_t *ns = hd__calloc(ncap, sizeof(*ns));

	if (!ns)
		return HD_ENOMEM;
	if (!b->sslot_cap)
		hd__hash_key_new(&b->skey);
	for (i = 0; i < b->nsites; i++) {
		j = site_hash(b, &b->sites[i]) & (ncap - 1);
		while (ns[j])
			j = (j + 1) & (ncap - 1);
		ns[j] = (uint32_t)i + 1;
	}
	hd__free(b->sslot, b->sslot_cap * sizeof(*b->sslot));
	b->sslot = ns;
	b->sslot_cap = ncap;
	return 0;
}

static int site_id(struct bld *b, const struct site *k, uint32_t *out)
{
	size_t e, j;
	uint32_t id;

	if (b->nsites && same_site(k, &b->last_site)) {
		*out = b->last_sid;
		return 0;
	}
	e = hd__kc_slot(((uint64_t)k->file << 32 | k->method) ^
				k->line * 0xc2b2ae3d27d4eb4fu,
			SCACHE_BITS);
	id = hd__kc_find(b->scache, e, b->sites, b->nsites, sizeof(*b->sites),
			 0, k, sizeof(*k));
	if (id != HD__NONE) {
		b->last_site = *k;
		b->last_sid = *out = id;
		return 0;
	}
	if ((b->nsites + 1) * 2 > b->sslot_cap && site_rehash(b))
		return HD_ENOMEM;
	j = site_hash(b, k) & (b->sslot_cap - 1);
	for (; b->sslot[j]; j = (j + 1) & (b->sslot_cap - 1))
		if (same_site(k, &b->sites[b->sslot[j] - 1]))
			break;
	if (!b->sslot[j]) {
		if (b->nsites >= HD_NODE_NONE - 1 ||
		    hd__grow((void **)&b->sites, &b->sites_cap, b->nsites + 1,
			     sizeof(*b->sites)))
			return HD_ENOMEM;
		b->sites[b->nsites++] = *k;
		b->sslot[j] = (uint32_t)b->nsites;
	}
	b->last_site = *k;
	b->last_sid = *out = b->sslot[j] - 1;
	hd__kc_put(b->scache, e, *out);
	return 0;
}

static int rec_site(struct bld *b, const hd_record *rec, uint32_t *out)
{
	struct site k = { HD_STR_NONE, HD_STR_NONE, 0 };

	if (!(rec->has & (HD_HAS_FILE | HD_HAS_LINE | HD_HAS_METHOD |
			  HD_HAS_GENERATION))) {
		*out = HD_NODE_NONE;
		return 0;
	}
	b->has_site = 1;
	/* file is written raw by every Ruby, escaped by HeapDump.dump:
	 * hd__intern_field keeps the path's own bytes either way */
	if ((rec->has & HD_HAS_FILE) &&
	    hd__intern_cached(&b->files, &b->strs, rec->file, 0, &k.file))
		return HD_ENOMEM;
	if ((rec->has & HD_HAS_METHOD) &&
	    hd__intern_cached(&b->methods, &b->strs, rec->method, 1,
			      &k.method))
		return HD_ENOMEM;
	if (rec->has & HD_HAS_LINE)
		k.line = rec->line;
	return site_id(b, &k, out);
}

static int rec_aux(struct bld *b, const hd_record *rec, uint32_t *out)
{
	hd_str a = { NULL, 0 };

	*out = HD_STR_NONE;
	if (rec->type == HD_T_IMEMO)
		a = rec->imemo_type;
	else if (rec->type == HD_T_NODE)
		a = rec->node_type;
	else if (rec->type == HD_T_DATA)
		a = rec->struct_name;
	if (!a.ptr)
		return 0;
	return hd__intern_cached(&b->auxs, &b->strs, a, 1, out);
}

/* The format's limits (man 5 heapdump-store, LIMITS); variables only so
 * that the tests can lower them. */
uint64_t hd__max_nodes = (uint64_t)HD_NODE_NONE - 1;
uint64_t hd__max_refs = UINT32_MAX;
uint64_t hd__max_string_bytes = UINT32_MAX;

static int over(struct bld *b, const char *what, uint64_t n)
{
	b->limit_what = what;
	b->limit_n = n;
	return HD_ELIMIT;
}

static int add_refs(struct bld *b, const uint64_t *refs, size_t n)
{
	if (b->nrefs > hd__max_refs || n > hd__max_refs - b->nrefs)
		return over(b, "references", hd__max_refs);
	if (hd__grow((void **)&b->refs, &b->refs_cap, b->nrefs + n,
		     sizeof(*b->refs)))
		return HD_ENOMEM;
	if (n)
		memcpy(b->refs + b->nrefs, refs, n * sizeof(*refs));
	b->nrefs += n;
	return 0;
}

/*
 * The name codes of rec's n references, stored at codes[at..at + n):
 * the array (allocated, zeroed up to at, on the first record with
 * names) grows with every record after that.
 */
static int add_names(struct bld *b, uint32_t **codes, size_t *cap,
		     size_t at, const hd_record *rec)
{
	size_t k, old = *cap;
	int rc;

	if (!*codes && !(rec->has & HD_HAS_REF_NAMES))
		return 0;
	if (hd__grow((void **)codes, cap, at + rec->nrefs + 1,
		     sizeof(**codes)))
		return HD_ENOMEM;
	if (old < *cap)
		memset(*codes + old, 0, (*cap - old) * sizeof(**codes));
	for (k = 0; k < rec->nrefs; k++) {
		(*codes)[at + k] = 0;
		if ((rec->has & HD_HAS_REF_NAMES) &&
		    (rc = hd__refname_intern(&b->strs, rec->ref_names[k],
					     *codes + at + k)))
			return rc == HD_ELIMIT ?
				       over(b, "distinct strings",
					    HD_STR_NONE - 1) :
				       rc;
	}
	return 0;
}

/*
 * Feeds the class table. For an ordinary object only the first offer
 * for its class pointer can matter (the first object of a class wins
 * over any later one, see class_names.c), so the rest are skipped.
 */
static int offer_class(struct bld *b, const hd_record *rec, uint32_t cd)
{
	switch (rec->type) {
	case HD_T_CLASS:
	case HD_T_MODULE:
	case HD_T_ICLASS:
		return hd__classtab_add(&b->ct, rec);
	case HD_T_NONE:
	case HD_T_IMEMO:
	case HD_T_NODE:
		return 0;
	}
	if (cd == HD_NODE_NONE || b->cd_strong[cd])
		return 0;
	b->cd_strong[cd] = 1;
	return hd__classtab_add(&b->ct, rec);
}

/* The SIZE column's value: HD__SIZE_NONE for a record of a type that
 * has a length but without one, so that hd_store_length() tells it from
 * a length of 0. */
static uint64_t size_value(const hd_record *rec)
{
	if (rec->has & HD_HAS_SIZE)
		return rec->size;
	if ((rec->type == HD_T_STRING && !(rec->bits & HD_B_SHARED)) ||
	    rec->type == HD_T_ARRAY || rec->type == HD_T_HASH)
		return HD__SIZE_NONE;
	return 0;
}

/* The blocks of the string values: new ones of GV_BLOCK bytes (or the
 * entry's size), none moved once filled, each freed once read. Above
 * the largest mmap threshold of glibc's malloc (32 MB): each its own
 * mapping, returned whole when freed, and never raising the threshold
 * (which would leave later blocks of the same size in the heap). Pages
 * never written are never backed. */
#define GV_BLOCK ((size_t)40 << 20)

/* b's block being filled (sv) appended to its full ones (svc), with room
 * for more others after it: 0 or HD_ENOMEM (b unchanged). */
static int sv_push(struct bld *b, size_t more)
{
	if (hd__grow((void **)&b->svc, &b->svc_cap, b->svc_n + 1 + more,
		     sizeof(*b->svc)))
		return HD_ENOMEM;
	/* out of memory at once, read back (mapped) by the views; where
	 * the file cannot take it (a full disk), kept here after all */
	if (b->sv && b->spill &&
	    hd__store_spill_put(b->spill, b->sv, b->sv_len,
				&b->svc[b->svc_n].at))
		b->spill = NULL;
	if (b->sv && b->spill) {
		hd__free(b->sv, b->sv_cap);
		b->svc[b->svc_n].p = NULL;
		b->svc[b->svc_n].len = b->sv_len;
		b->svc[b->svc_n++].cap = 0;
	} else if (b->sv) {
		b->svc[b->svc_n].p = b->sv;
		b->svc[b->svc_n].len = b->sv_len;
		b->svc[b->svc_n].at = 0;
		b->svc[b->svc_n++].cap = b->sv_cap;
	}
	b->sv = NULL;
	b->sv_len = b->sv_cap = 0;
	return 0;
}

/* A STRING record's value, encoding and bytesize kept (store_format.h,
 * struct hd__gathered) for the string values, so that they need not be
 * read back from the dump; its record number i beside. */
static int gather_string(struct bld *b, const hd_record *rec, uint32_t i)
{
	size_t vl = rec->value.ptr ? rec->value.len : 0;
	size_t el = rec->encoding.ptr ? rec->encoding.len : 0;
	int has_size = (rec->has & HD_HAS_SIZE) != 0;
	size_t need = 7 + (has_size ? 8 : 0) + el + vl;
	unsigned char *p;

	if (el > UINT16_MAX)
		return over(b, "bytes of a string's encoding", UINT16_MAX);
	if (vl > UINT32_MAX)
		return over(b, "bytes of a string value", UINT32_MAX);
	if (hd__grow((void **)&b->svr, &b->svr_cap, b->svn + 1,
		     sizeof(*b->svr)))
		return HD_ENOMEM;
	if (!b->sv || need > b->sv_cap - b->sv_len) {
		size_t cap = need > GV_BLOCK ? need : GV_BLOCK;

		if ((b->sv && sv_push(b, 1)) || !(b->sv = hd__malloc(cap)))
			return HD_ENOMEM;
		b->sv_cap = cap;
	}
	p = b->sv + b->sv_len;
	hd__put_le32(p, (uint32_t)vl);
	p[4] = (unsigned char)el;
	p[5] = (unsigned char)(el >> 8);
	p[6] = (unsigned char)((rec->value.ptr ? HD__GV_VALUE : 0) |
			       (has_size ? HD__GV_SIZE : 0));
	p += 7;
	if (has_size) {
		hd__put_le64(p, rec->size);
		p += 8;
	}
	if (el)
		memcpy(p, rec->encoding.ptr, el);
	if (vl)
		memcpy(p + el, rec->value.ptr, vl);
	b->sv_len += need;
	b->svr[b->svn++] = i;
	return 0;
}

static int add_object(struct bld *b, const hd_record *rec)
{
	size_t i = b->n;
	uint32_t v;
	int rc;

	if (i >= hd__max_nodes)
		return over(b, "objects", hd__max_nodes);
	if (i + 2 > b->c[C_ADDR].cap && grow_cols(b, i + 2))
		return HD_ENOMEM;
	((uint64_t *)b->c[C_ADDR].p)[i] = rec->address;
	((uint8_t *)b->c[C_TYPE].p)[i] =
		(uint8_t)(rec->type >= 0 && rec->type < HD_T__COUNT ?
				  rec->type :
				  HD_T_UNKNOWN);
	((uint16_t *)b->c[C_BITS].p)[i] = (uint16_t)rec->bits;
	v = HD_NODE_NONE;
	if ((rec->has & HD_HAS_CLASS) && rec->class_addr &&
	    (rc = class_id(b, rec->class_addr, &v)))
		return rc;
	((uint32_t *)b->c[C_CLS].p)[i] = v;
	if (wide_put(&b->wmem, b->c[C_MEM].p, i,
		     rec->has & HD_HAS_MEMSIZE ? rec->memsize : 0) ||
	    wide_put(&b->wsize, b->c[C_SIZE].p, i, size_value(rec)))
		return HD_ENOMEM;
	((uint32_t *)b->c[C_GEN].p)[i] = 0;
	if (rec->has & HD_HAS_GENERATION) {
		b->has_gen = 1;
		if (rec->generation < HD__ESC - 1)
			((uint32_t *)b->c[C_GEN].p)[i] =
				(uint32_t)rec->generation + 1;
		else if (wide_put(&b->wgen, b->c[C_GEN].p, i, UINT64_MAX))
			return HD_ENOMEM;
		else
			b->wgen.v[b->wgen.n - 1].v = rec->generation;
	}
	if ((rc = rec_site(b, rec, &v)))
		return rc;
	((uint32_t *)b->c[C_SITE].p)[i] = v;
	if ((rc = rec_aux(b, rec, &v)))
		return rc;
	((uint32_t *)b->c[C_AUX].p)[i] = v;
	((uint64_t *)b->c[C_OFF].p)[i] = rec->offset;
	if ((rc = add_names(b, &b->nm, &b->nm_cap, b->nrefs, rec)) ||
	    (rc = add_refs(b, rec->refs, rec->nrefs)))
		return rc;
	((uint32_t *)b->c[C_NREF].p)[i] = (uint32_t)rec->nrefs;
	if (b->gather && rec->type == HD_T_STRING &&
	    (rc = gather_string(b, rec, (uint32_t)i)))
		return rc;
	((uint32_t *)b->c[C_STK].p)[i] = 0;
	if (rec->has & HD_HAS_STACK) {
		((uint32_t *)b->c[C_STK].p)[i] = rec->stack;
		b->stk.used = 1;
	}
	b->n++;
	return offer_class(b, rec, ((uint32_t *)b->c[C_CLS].p)[i]);
}

static int add_root(struct bld *b, const hd_record *rec)
{
	uint32_t sid, cat;
	size_t i;
	int found, rc;

	if (hd__intern_json(&b->strs, rec->root, &sid) ||
	    hd__grow((void **)&b->rnames, &b->rnames_cap, b->nroots + 1,
		     sizeof(*b->rnames)) ||
	    hd__map_put(&b->rmap, sid, (uint32_t)b->nroots, &cat, &found))
		return HD_ENOMEM;
	if (!found)
		b->rnames[b->nroots++] = sid;
	b->root_listed += rec->nrefs;
	if (b->nraddr > hd__max_refs || rec->nrefs > hd__max_refs - b->nraddr)
		return over(b, "root references", hd__max_refs);
	if ((rc = add_names(b, &b->rnm, &b->rnm_cap, b->nraddr, rec)))
		return rc;
	if (hd__grow((void **)&b->raddr, &b->raddr_cap,
		     b->nraddr + rec->nrefs, sizeof(*b->raddr)) ||
	    hd__grow((void **)&b->rcat, &b->rcat_cap, b->nraddr + rec->nrefs,
		     sizeof(*b->rcat)))
		return HD_ENOMEM;
	for (i = 0; i < rec->nrefs; i++) {
		b->raddr[b->nraddr] = rec->refs[i];
		b->rcat[b->nraddr++] = cat;
	}
	return 0;
}

static int limit_error(const struct bld *b, hd_error *err, int rc)
{
	if (rc == HD_ELIMIT)
		return hd__error(err, HD_ELIMIT,
				 "'%s' exceeds a limit of the store: more than "
				 "%llu %s (man 5 heapdump-store, LIMITS)",
				 b->path, (unsigned long long)b->limit_n,
				 b->limit_what ? b->limit_what : "items");
	return hd__error(err, HD_ENOMEM, "out of memory");
}

/* last: the dump has been read whole; done == total says so */
static void progress(struct bld *b, int last)
{
	hd_read_stats st;

	if (!b->opts || !b->opts->progress)
		return;
	hd_reader_stats(&st, b->r);
	b->opts->progress(st.bytes, last ? st.bytes : st.total_bytes,
			  b->opts->progress_payload);
}

static int add_record(struct bld *b, const hd_record *rec)
{
	b->features |= hd__record_features(rec);
	if (rec->kind == HD_REC_OBJECT)
		return add_object(b, rec);
	if (rec->kind == HD_REC_ROOT)
		return add_root(b, rec);
	if (rec->kind == HD_REC_STACK || rec->kind == HD_REC_FRAME) {
		int rc = hd__stk_add(&b->stk, &b->strs, rec);

		return rc == HD_ELIMIT ? over(b, "stack frames", UINT32_MAX) : rc;
	}
	return 0;
}

/* The dump read by one streaming reader. */
static int read_dump(struct bld *b, hd_error *err)
{
	const hd_record *rec;
	uint64_t count = 0;
	int rc;

	if ((rc = hd_reader_open(&b->r, b->path,
				 b->opts ? &b->opts->read : NULL, err)))
		return rc;
	hd_reader_stats(&b->rs, b->r);
	reserve(b, b->rs.total_bytes); /* 0 for a pipe and gzip */
	progress(b, 0);
	while ((rc = hd_reader_next(b->r, &rec, err)) == 0) {
		if ((rc = add_record(b, rec)))
			return limit_error(b, err, rc);
		if (++count % PROGRESS_EVERY == 0)
			progress(b, 0);
	}
	if (rc == HD_ITEROVER)
		progress(b, 1);
	hd_reader_stats(&b->rs, b->r);
	return rc == HD_ITEROVER ? 0 : rc;
}

/* ---- two threads after the reading ---- */

/* A task of the build: part 0 or 1 of a job split in two (or two jobs
 * of their own), 0 or HD_ENOMEM. */
typedef int (*task_fn)(struct bld *b, unsigned part);

struct task {
	task_fn f;
	struct bld *b;
	int rc;
};

static void *task_run(void *arg)
{
	struct task *t = arg;

	t->rc = t->f(t->b, 1);
	return NULL;
}

/* f0(b, 0) on this thread and f1(b, 1) on a second one when jobs >= 2
 * (one after the other with fewer, or if no thread starts); the first
 * error. */
static int par2(struct bld *b, task_fn f0, task_fn f1)
{
	struct task t = { f1, b, 0 };
	struct hd__thread th;
	int started = 0, rc;

	if (b->opts && b->opts->version >= 2 && b->opts->jobs > 1)
		started = hd__thread_start(&th, 1, task_run, &t) == 0;
	rc = f0(b, 0);
	if (started)
		pthread_join(th.tid, NULL);
	else
		t.rc = f1(b, 1);
	return rc ? rc : t.rc;
}

/* ---- sorting ---- */

static void isort(uint64_t *k, uint32_t *v, size_t n)
{
	size_t i, j;
	uint64_t kk;
	uint32_t vv;

	for (i = 1; i < n; i++) {
		kk = k[i];
		vv = v[i];
		for (j = i; j > 0 && (k[j - 1] > kk ||
				      (k[j - 1] == kk && v[j - 1] > vv));
		     j--) {
			k[j] = k[j - 1];
			v[j] = v[j - 1];
		}
		k[j] = kk;
		v[j] = vv;
	}
}

/*
 * In-place MSD radix sort (American flag sort) of k, carrying v, from
 * the byte at shift down. It recurses once per key byte: 8 levels at most.
 */
static void rsort(uint64_t *k, uint32_t *v, size_t n, unsigned shift)
{
	uint32_t pos[256], end[256];
	size_t i, start;
	unsigned d, x;
	uint64_t kk;
	uint32_t vv, t;

	for (;;) {
		if (n <= 32) {
			isort(k, v, n);
			return;
		}
		memset(end, 0, sizeof(end));
		for (i = 0; i < n; i++)
			end[(k[i] >> shift) & 255]++;
		if (end[(k[0] >> shift) & 255] != n)
			break;
		if (!shift)
			return;
		shift -= 8;
	}
	for (t = 0, d = 0; d < 256; d++) {
		pos[d] = t;
		t += end[d];
		end[d] = t;
	}
	for (d = 0; d < 256; d++) {
		while (pos[d] < end[d]) {
			kk = k[pos[d]];
			vv = v[pos[d]];
			while ((x = (kk >> shift) & 255) != d) {
				uint64_t k2 = k[pos[x]];
				uint32_t v2 = v[pos[x]];

				k[pos[x]] = kk;
				v[pos[x]++] = vv;
				kk = k2;
				vv = v2;
			}
			k[pos[d]] = kk;
			v[pos[d]++] = vv;
		}
	}
	if (!shift)
		return;
	for (start = 0, d = 0; d < 256; start = end[d++])
		if (end[d] - start > 1)
			rsort(k + start, v + start, end[d] - start, shift - 8);
}

/* Below this many records one thread sorts them all (a variable only
 * so that the tests can lower it). */
size_t hd__par_sort_min = 65536;

/*
 * The sort on two threads: each half of the records sorted in place,
 * then the halves merged into new arrays, the first half of the output
 * by this thread and the second by the other. Every key of the output's
 * first half is at most the pivot (the second half's first key, a[i]),
 * every key of its second half at least the pivot.
 */
struct psort {
	uint64_t *k, *k2;
	uint32_t *v, *v2;
	size_t n, h;        /* records, the first half's */
	size_t i, j;        /* the output's first half: k[0, i) and k[h, h + j) */
	unsigned top;
};

static struct psort *the_psort(struct bld *b)
{
	return (struct psort *)b->task_arg;
}

static int sort_half(struct bld *b, unsigned part)
{
	struct psort *ps = the_psort(b);
	size_t from = part ? ps->h : 0, to = part ? ps->n : ps->h;

	rsort(ps->k + from, ps->v + from, to - from, ps->top);
	return 0;
}

/* Merges k[a0, a1) and k[b0, b1) into k2 from o. */
static void merge_runs(const struct psort *ps, size_t a0, size_t a1,
		       size_t b0, size_t b1, size_t o)
{
	const uint64_t *k = ps->k;
	const uint32_t *v = ps->v;

	while (a0 < a1 && b0 < b1) {
		if (k[b0] < k[a0]) {
			ps->k2[o] = k[b0];
			ps->v2[o++] = v[b0++];
		} else {
			ps->k2[o] = k[a0];
			ps->v2[o++] = v[a0++];
		}
	}
	for (; a0 < a1; a0++, o++) {
		ps->k2[o] = k[a0];
		ps->v2[o] = v[a0];
	}
	for (; b0 < b1; b0++, o++) {
		ps->k2[o] = k[b0];
		ps->v2[o] = v[b0];
	}
}

static int merge_half(struct bld *b, unsigned part)
{
	const struct psort *ps = the_psort(b);

	if (!part)
		merge_runs(ps, 0, ps->i, ps->h, ps->h + ps->j, 0);
	else
		merge_runs(ps, ps->i, ps->h, ps->h + ps->j, ps->n,
			   ps->i + ps->j);
	return 0;
}

/* k (cap items) and v (n) sorted into new arrays; NULL: out of memory,
 * nothing changed. */
static int sort_parallel(struct bld *b, uint64_t **k, uint32_t **v,
			 size_t n, unsigned top)
{
	size_t cap = b->c[C_ADDR].cap, lo, hi, mid;
	struct psort ps;

	memset(&ps, 0, sizeof(ps));
	ps.k = *k;
	ps.v = *v;
	ps.n = n;
	ps.h = n / 2;
	ps.top = top;
	if (!(ps.k2 = hd__array_alloc(cap, sizeof(*ps.k2))))
		return HD_ENOMEM;
	if (!(ps.v2 = hd__array_alloc(n, sizeof(*ps.v2)))) {
		hd__free(ps.k2, cap * sizeof(*ps.k2));
		return HD_ENOMEM;
	}
	b->task_arg = &ps;
	par2(b, sort_half, sort_half);
	/* the pivot: the first half's middle key; the second half's keys
	 * below it go to the output's first half */
	ps.i = ps.h / 2;
	for (lo = ps.h, hi = n; lo < hi;) {
		mid = lo + (hi - lo) / 2;
		if (ps.k[mid] < ps.k[ps.i])
			lo = mid + 1;
		else
			hi = mid;
	}
	ps.j = lo - ps.h;
	par2(b, merge_half, merge_half);
	b->task_arg = NULL;
	hd__free(*k, cap * sizeof(**k));
	hd__free(*v, n * sizeof(**v));
	*k = ps.k2;
	*v = ps.v2;
	return 0;
}

/* Sorts addresses carrying record numbers; keeps the first of equals. */
static int sort_nodes(struct bld *b)
{
	uint64_t *k = b->c[C_ADDR].p, lo = UINT64_MAX, hi = 0, x;
	uint32_t *v;
	size_t i, j, n = b->n, N = 0;
	unsigned top = 0;
	int sorted = 1;

	if (!(v = hd__array_alloc(n ? n : 1, sizeof(*v))))
		return HD_ENOMEM;
	b->perm = v;
	for (i = 0; i < n; i++) {
		v[i] = (uint32_t)i;
		lo = k[i] < lo ? k[i] : lo;
		hi = k[i] > hi ? k[i] : hi;
		sorted &= !i || k[i - 1] <= k[i];
	}
	if (!sorted) {
		for (x = lo ^ hi; x >> 8; x >>= 8)
			top += 8;
		/* (out of memory for the merge: one thread, in place) */
		if (n < hd__par_sort_min || n < 2 || !b->opts || b->opts->version < 2 ||
		    b->opts->jobs < 2 || sort_parallel(b, &k, &v, n, top))
			rsort(k, v, n, top);
		b->c[C_ADDR].p = k;
		b->perm = v;
	}
	for (i = 0; i < n; i = j) {
		uint32_t first = v[i];

		for (j = i + 1; j < n && k[j] == k[i]; j++)
			first = v[j] < first ? v[j] : first;
		b->duplicates += j - i - 1;
		k[N] = k[i];
		v[N++] = first;
	}
	b->N = N;
	return 0;
}

/* ---- address lookup ---- */

static int lut_init(struct lut *l, const uint64_t *a, size_t n)
{
	size_t nb = 1, b, j = 0;
	unsigned bits = 0, lb = 0;
	uint64_t range;

	memset(l, 0, sizeof(*l));
	l->a = a;
	l->n = n;
	if (!n)
		return 0;
	l->min = a[0];
	l->max = a[n - 1];
	range = l->max - l->min;
	while (nb < n && nb < ((size_t)1 << 26)) {
		nb <<= 1;
		lb++;
	}
	for (; bits < 64 && (range >> bits); bits++)
		;
	l->shift = bits > lb ? bits - lb : 0;
	l->nb = (size_t)(range >> l->shift) + 1;
	if (!(l->tab = hd__array_alloc(l->nb + 1, sizeof(*l->tab))))
		return HD_ENOMEM;
	for (b = 0; b < l->nb; b++) {
		while (j < n && ((a[j] - l->min) >> l->shift) < b)
			j++;
		l->tab[b] = (uint32_t)j;
	}
	l->tab[l->nb] = (uint32_t)n;
	return 0;
}

static void lut_free(struct lut *l)
{
	hd__free(l->tab, (l->nb + 1) * sizeof(*l->tab));
	l->tab = NULL;
}

static inline uint32_t lut_find(const struct lut *l, uint64_t x)
{
	size_t b, lo, hi, mid;

	if (!l->n || x < l->min || x > l->max)
		return HD_NODE_NONE;
	b = (size_t)((x - l->min) >> l->shift);
	lo = l->tab[b];
	hi = l->tab[b + 1];
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (l->a[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < l->n && l->a[lo] == x ? (uint32_t)lo : HD_NODE_NONE;
}

/* ---- edges ---- */

/*
 * Half of the references to node ids, in place: the first half's ids
 * go to the start of the array, the second half's to the start of its
 * own addresses (each id written where an address was already read).
 */
static int resolve_half(struct bld *b, unsigned part)
{
	size_t h = b->nrefs / 2, from = part ? h : 0,
	       to = part ? b->nrefs : h, k;
	unsigned char *out;
	uint32_t id;

	if (from >= to)
		return 0;
	out = (unsigned char *)(b->refs + from);
	for (k = from; k < to; k++) {
		id = lut_find(&b->lut, b->refs[k]);
		memcpy(out + (k - from) * 4, &id, 4);
	}
	return 0;
}

/* References (addresses, record order) to node ids, in place. */
static int resolve_refs(struct bld *b)
{
	unsigned char *out = (unsigned char *)b->refs;
	uint32_t *nref = b->c[C_NREF].p, sum = 0, c;
	size_t r, h = b->nrefs / 2;
	void *p;

	par2(b, resolve_half, resolve_half);
	if (b->nrefs)
		memmove(out + h * 4, b->refs + h, (b->nrefs - h) * 4);
	p = hd__realloc(b->refs, b->refs_cap * 8,
			(b->nrefs ? b->nrefs : 1) * 4);
	if (!p)
		return HD_ENOMEM;
	b->refs = p;
	b->refs_bytes = (b->nrefs ? b->nrefs : 1) * 4;
	b->refs_cap = 0;
	for (r = 0; r < b->n; r++) {
		c = nref[r];
		nref[r] = sum;
		sum += c;
	}
	nref[b->n] = sum;
	return 0;
}

/* The class node of record r, one of class_edges()'s records. */
static uint32_t class_edge_of(const struct bld *b, uint32_t r)
{
	size_t lo = 0, hi = b->nce_max, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (b->ce_rec[mid] < r)
			lo = mid + 1;
		else
			hi = mid;
	}
	return b->ce_tgt[lo];
}

/* The forward CSR in node order; duplicate records' references drop. */
static int forward_csr(struct bld *b)
{
	const uint32_t *ids = (const uint32_t *)(void *)b->refs;
	const uint32_t *st = b->c[C_NREF].p;
	uint32_t *off, *out, t;
	size_t i, k, e = 0;
	void *p;

	off = sec_alloc(b, HD__SEC_REFS_OFF, b->N + 1, 4);
	out = sec_alloc(b, HD__SEC_REFS, b->nrefs + b->nce_max, 4);
	if (!off || !out)
		return HD_ENOMEM;
	if (b->nm) {
		b->enm_n = b->nrefs + b->nce_max ? b->nrefs + b->nce_max : 1;
		if (!(b->enm = hd__array_alloc(b->enm_n, 4)))
			return HD_ENOMEM;
	}
	off[0] = 0;
	for (i = 0; i < b->N; i++) {
		uint32_t r = b->perm[i];

		for (k = st[r]; k < st[r + 1]; k++) {
			t = ids[k];
			if (t == HD_NODE_NONE) {
				b->dangling++;
			} else {
				/* a name moves with its kept edge */
				if (b->enm)
					b->enm[e] = b->nm[k];
				out[e++] = t;
			}
		}
		/* the class edge, last (store_class_edge() finds it so) */
		if (b->cbit && hd__bit(b->cbit, r)) {
			if (b->enm)
				b->enm[e] = 0;
			out[e++] = class_edge_of(b, r);
			b->nce++;
		}
		off[i + 1] = (uint32_t)e;
	}
	hd__free(b->refs, b->refs_bytes);
	b->refs = NULL;
	b->refs_bytes = b->nrefs = 0;
	hd__free(b->nm, b->nm_cap * 4);
	b->nm = NULL;
	b->nm_cap = 0;
	if (e < b->s->len[HD__SEC_REFS] / 4 && e) {
		p = hd__realloc(out, b->s->own_len[HD__SEC_REFS], e * 4);
		if (p) {
			b->s->own[HD__SEC_REFS] = p;
			b->s->own_len[HD__SEC_REFS] = e * 4;
			b->s->sec[HD__SEC_REFS] = p;
		}
	}
	b->s->len[HD__SEC_REFS] = e * 4;
	return 0;
}

/* The reverse CSR: counts, prefix sums, fill, shift back. */
static int reverse_csr(struct bld *b)
{
	const hd_store *s = b->s;
	const uint32_t *off = s->own[HD__SEC_REFS_OFF];
	const uint32_t *fw = s->own[HD__SEC_REFS];
	size_t E = s->len[HD__SEC_REFS] / 4, N = b->N, i, k;
	uint32_t *roff, *rev;

	roff = sec_alloc(b, HD__SEC_REV_OFF, N + 1, 4);
	rev = sec_alloc(b, HD__SEC_REV, E, 4);
	if (!roff || !rev)
		return HD_ENOMEM;
	memset(roff, 0, (N + 1) * 4);
	for (k = 0; k < E; k++)
		roff[fw[k] + 1]++;
	for (i = 1; i <= N; i++)
		roff[i] += roff[i - 1];
	for (i = 0; i < N; i++)
		for (k = off[i]; k < off[i + 1]; k++)
			rev[roff[fw[k]]++] = (uint32_t)i;
	for (i = N; i > 0; i--)
		roff[i] = roff[i - 1];
	roff[0] = 0;
	return 0;
}

/* Root references by category, in dump order within each. */
static int roots_csr(struct bld *b)
{
	size_t R = b->nroots, i, kept = 0;
	uint32_t *names, *off, *out, id;

	names = sec_alloc(b, HD__SEC_ROOT_NAMES, R, 4);
	off = sec_alloc(b, HD__SEC_ROOT_OFF, R + 1, 4);
	out = sec_alloc(b, HD__SEC_ROOT_REFS, b->nraddr, 4);
	if (!names || !off || !out)
		return HD_ENOMEM;
	if (b->rnm) {
		b->rknm_n = b->nraddr ? b->nraddr : 1;
		if (!(b->rknm = hd__array_alloc(b->rknm_n, 4)))
			return HD_ENOMEM;
	}
	if (R)
		memcpy(names, b->rnames, R * 4);
	memset(off, 0, (R + 1) * 4);
	for (i = 0; i < b->nraddr; i++) {
		id = lut_find(&b->lut, b->raddr[i]);
		b->raddr[i] = id;
		if (id != HD_NODE_NONE)
			off[b->rcat[i] + 1]++;
	}
	for (i = 1; i <= R; i++)
		off[i] += off[i - 1];
	for (i = 0; i < b->nraddr; i++)
		if (b->raddr[i] != HD_NODE_NONE) {
			if (b->rknm)
				b->rknm[off[b->rcat[i]]] = b->rnm[i];
			out[off[b->rcat[i]]++] = (uint32_t)b->raddr[i];
			kept++;
		}
	for (i = R; i > 0; i--)
		off[i] = off[i - 1];
	off[0] = 0;
	b->s->len[HD__SEC_ROOT_REFS] = kept * 4;
	return 0;
}

/*
 * The finalizer table's entries, on Rubies that do not list them as
 * roots. Ruby 3.4 moved the table into the GC implementation, and the
 * root walk that dump_all and the gem call (rb_objspace_reachable_
 * objects_from_root) no longer reaches it: an object kept alive only by
 * its finalizer (a proc made in one of its methods closes over self, the
 * classic leak) is then reached by nothing and looks like garbage. Each
 * entry is a hidden Array of the finalizers (Procs, Methods, or any
 * object with a #call), referenced by no object and no root: such Arrays
 * become the references of a root category "finalizers", the name 3.1
 * to 3.3 give the table. An Array of Procs and Methods only is an entry
 * whatever its length; one that holds plain objects (T_OBJECT: a
 * "cleaner" given the object it cleans, the other classic leak) only
 * when it holds at most FIN_OBJECTS_MAX finalizers and nothing else
 * references those objects, so that the scratch Arrays of a sort left
 * as garbage are not taken for entries. Nothing is
 * inferred when the dump names the table itself ("finalizers", or the
 * "objspace" category under which 3.4's GC marks it), nor when it is of
 * a Ruby that would have named it (lists_finalizers). Runs after the
 * reverse edges and the root references are built, before the byte
 * order is fixed (TYPE is bytes; CLASS and AUX are little-endian by
 * now, the CSR sections native).
 */
static int callable(struct bld *b, const uint8_t *type, const unsigned char *aux,
		    uint32_t v)
{
	static const hd_str names[] = { { "proc", 4 }, { "method", 6 } };
	uint32_t sid;
	size_t k, n;
	const char *p;

	if (type[v] != HD_T_DATA ||
	    (sid = hd__le32(aux + (size_t)v * 4)) == HD_STR_NONE ||
	    sid >= b->strs.count)
		return 0;
	p = hd__intern_str(&b->strs, sid, &n);
	for (k = 0; k < sizeof(names) / sizeof(names[0]); k++)
		if (n == names[k].len && !memcmp(p, names[k].ptr, n))
			return 1;
	return 0;
}

/* An entry's plain objects (finalizers that are not Procs) at most. */
#define FIN_OBJECTS_MAX 4

static int finalizer_entry(struct bld *b, const uint8_t *type,
			   const unsigned char *cls, const unsigned char *aux,
			   const uint8_t *rooted, uint32_t i)
{
	const uint32_t *roff = b->s->own[HD__SEC_REFS_OFF];
	const uint32_t *refs = b->s->own[HD__SEC_REFS];
	const uint32_t *voff = b->s->own[HD__SEC_REV_OFF];
	uint32_t e, v, objects = 0;

	if (type[i] != HD_T_ARRAY ||
	    hd__le32(cls + (size_t)i * 4) != HD_NODE_NONE ||
	    voff[i] != voff[i + 1] || rooted[i] || roff[i] == roff[i + 1])
		return 0;
	for (e = roff[i]; e < roff[i + 1]; e++) {
		v = refs[e];
		if (callable(b, type, aux, v))
			continue;
		/* a plain object: this Array its one referrer */
		if (type[v] != HD_T_OBJECT || rooted[v] ||
		    voff[v + 1] - voff[v] != 1 ||
		    ++objects > FIN_OBJECTS_MAX)
			return 0;
	}
	return 1;
}

/*
 * Is the dump of a Ruby that lists the finalizer table among its roots
 * whenever the table has entries (3.3 and before)? Its exact version
 * says so, or an object_id root (2.7 to 3.3), or the absence of shapes
 * (3.1 and before). Such a dump without the category has no entries:
 * the Arrays of finalizers no object holds are then those of objects
 * already freed, whose finalizers are about to run (a WeakMap's on 3.1),
 * garbage rather than entries.
 */
static int lists_finalizers(uint32_t f)
{
	uint32_t v = (f & HD_FEAT_VERSION_MASK) >> HD_FEAT_VERSION_SHIFT;

	if (v)
		return (v >> 12) < 3 || ((v >> 12) == 3 && ((v >> 6) & 63) < 4);
	return (f & HD_FEAT_OBJECT_ID_ROOT) ||
	       !(f & (HD_FEAT_SHAPES | HD_FEAT_MEMPROF));
}

static int finalizer_roots(struct bld *b)
{
	static const char name[] = "finalizers";
	const uint8_t *type = b->s->own[HD__SEC_TYPE];
	const unsigned char *cls = b->s->sec[HD__SEC_CLASS];
	const unsigned char *aux = b->s->sec[HD__SEC_AUX];
	uint32_t *names, *off, *refs, *kn = NULL, sid, i;
	uint8_t *rooted;
	size_t R = b->nroots, kept, n = 0, k, len;
	const char *p;

	if (!b->N || b->s->len[HD__SEC_CLASS] < (uint64_t)b->N * 4 ||
	    b->s->len[HD__SEC_AUX] < (uint64_t)b->N * 4 ||
	    lists_finalizers(b->features))
		return 0;
	for (k = 0; k < R; k++) {
		p = hd__intern_str(&b->strs, b->rnames[k], &len);
		if ((len == 10 && !memcmp(p, name, 10)) ||
		    (len == 8 && !memcmp(p, "objspace", 8)))
			return 0;
	}
	kept = b->s->len[HD__SEC_ROOT_REFS] / 4;
	if (!(rooted = hd__calloc(b->N, 1)))
		return HD_ENOMEM;
	for (k = 0; k < kept; k++)
		rooted[((const uint32_t *)b->s->own[HD__SEC_ROOT_REFS])[k]] = 1;
	for (i = 0; i < b->N; i++)
		n += finalizer_entry(b, type, cls, aux, rooted, i);
	if (!n || kept + n > hd__max_refs) {
		hd__free(rooted, b->N);
		return 0;
	}
	if (hd__intern_put(&b->strs, name, sizeof(name) - 1, &sid) ||
	    !(names = hd__array_alloc(R + 1, 4)) ||
	    !(off = hd__array_alloc(R + 2, 4)) ||
	    !(refs = hd__array_alloc(kept + n, 4)) ||
	    (b->rknm && !(kn = hd__array_alloc(kept + n, 4)))) {
		hd__free(rooted, b->N);
		return HD_ENOMEM;
	}
	memcpy(names, b->s->own[HD__SEC_ROOT_NAMES], R * 4);
	names[R] = sid;
	memcpy(off, b->s->own[HD__SEC_ROOT_OFF], (R + 1) * 4);
	off[R + 1] = (uint32_t)(kept + n);
	memcpy(refs, b->s->own[HD__SEC_ROOT_REFS], kept * 4);
	if (kn) {
		memcpy(kn, b->rknm, kept * 4);
		memset(kn + kept, 0, n * 4); /* no reference names */
		hd__free(b->rknm, b->rknm_n * 4);
		b->rknm = kn;
		b->rknm_n = kept + n;
	}
	for (i = 0, k = kept; i < b->N; i++)
		if (finalizer_entry(b, type, cls, aux, rooted, i))
			refs[k++] = i;
	hd__free(rooted, b->N);
	set_sec(b, HD__SEC_ROOT_NAMES, names, (R + 1) * 4, (R + 1) * 4);
	set_sec(b, HD__SEC_ROOT_OFF, off, (R + 2) * 4, (R + 2) * 4);
	set_sec(b, HD__SEC_ROOT_REFS, refs, (kept + n) * 4, (kept + n) * 4);
	if (hd__grow((void **)&b->rnames, &b->rnames_cap, R + 1,
		     sizeof(*b->rnames)))
		return HD_ENOMEM;
	b->rnames[b->nroots++] = sid;
	b->root_listed += n;
	return 0;
}

/* ---- columns ---- */

/* Moves record-order column ci into node order as section id. */
static void *permute(struct bld *b, int ci, int id)
{
	size_t i, N = b->N;
	unsigned w = col_w[ci];
	const uint32_t *pm = b->perm;
	void *src = b->c[ci].p, *dst = sec_alloc(b, id, N, w);

	if (!dst)
		return NULL;
	switch (w) {
	case 1:
		for (i = 0; i < N; i++)
			((uint8_t *)dst)[i] = ((const uint8_t *)src)[pm[i]];
		break;
	case 2:
		for (i = 0; i < N; i++)
			((uint16_t *)dst)[i] = ((const uint16_t *)src)[pm[i]];
		break;
	case 4:
		for (i = 0; i < N; i++)
			((uint32_t *)dst)[i] = ((const uint32_t *)src)[pm[i]];
		break;
	default:
		for (i = 0; i < N; i++)
			((uint64_t *)dst)[i] = ((const uint64_t *)src)[pm[i]];
		break;
	}
	hd__free(src, b->c[ci].cap * w);
	b->c[ci].p = NULL;
	b->c[ci].cap = 0;
	return dst;
}

static uint64_t wide_find(const struct wlist *wl, uint32_t idx)
{
	size_t lo = 0, hi = wl->n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (wl->v[mid].idx < idx)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < wl->n && wl->v[lo].idx == idx ? wl->v[lo].v : 0;
}

static void put_wide(unsigned char *p, uint32_t node, uint64_t v)
{
	hd__put_le32(p, node);
	hd__put_le32(p + 4, 0);
	hd__put_le64(p + 8, v);
}

/* A u32 column with escapes, and its wide table in node order. */
static int permute_wide(struct bld *b, int ci, int id, int wid, int meta,
			struct wlist *wl)
{
	uint32_t *col = permute(b, ci, id);
	unsigned char *w;
	size_t i, n = 0;

	if (!col)
		return HD_ENOMEM;
	for (i = 0; i < b->N; i++)
		n += col[i] == HD__ESC;
	if (!(w = sec_alloc(b, wid, n, HD__WIDE_SIZE)))
		return HD_ENOMEM;
	for (i = 0; i < b->N; i++)
		if (col[i] == HD__ESC) {
			put_wide(w, (uint32_t)i, wide_find(wl, b->perm[i]));
			w += HD__WIDE_SIZE;
		}
	b->s->meta[meta] = n;
	to_le(col, b->N, 4);
	hd__free(wl->v, wl->cap * sizeof(*wl->v));
	memset(wl, 0, sizeof(*wl));
	return 0;
}

/* Class node ids; pointers to no node go to the CLASSX table. */
static int class_column(struct bld *b)
{
	uint32_t *dn, *cls, d;
	unsigned char *x;
	size_t i, n = 0;
	int rc = HD_ENOMEM;

	if (!(dn = hd__array_alloc(b->ncd ? b->ncd : 1, sizeof(*dn))))
		return HD_ENOMEM;
	for (i = 0; i < b->ncd; i++)
		dn[i] = lut_find(&b->lut, b->cdict[i]);
	if (!(cls = permute(b, C_CLS, HD__SEC_CLASS)))
		goto out;
	for (i = 0; i < b->N; i++)
		n += cls[i] != HD_NODE_NONE && dn[cls[i]] == HD_NODE_NONE;
	if (!(x = sec_alloc(b, HD__SEC_CLASSX, n, HD__WIDE_SIZE)))
		goto out;
	for (i = 0; i < b->N; i++) {
		if ((d = cls[i]) == HD_NODE_NONE)
			continue;
		cls[i] = dn[d];
		if (dn[d] == HD_NODE_NONE) {
			put_wide(x, (uint32_t)i, b->cdict[d]);
			x += HD__WIDE_SIZE;
		}
	}
	b->s->meta[HD__M_CLASSX] = n;
	to_le(cls, b->N, 4);
	rc = 0;
out:
	hd__free(dn, (b->ncd ? b->ncd : 1) * sizeof(*dn));
	return rc;
}

/* Drops a record-order column that turned out to be all empty. */
static void drop(struct bld *b, int ci, int id)
{
	hd__free(b->c[ci].p, b->c[ci].cap * col_w[ci]);
	b->c[ci].p = NULL;
	b->c[ci].cap = 0;
	set_sec(b, id, NULL, 0, 0);
}

static int columns(struct bld *b)
{
	void *p;
	int rc;

	if (!(p = permute(b, C_TYPE, HD__SEC_TYPE)))
		return HD_ENOMEM;
	if (!(p = permute(b, C_BITS, HD__SEC_BITS)))
		return HD_ENOMEM;
	to_le(p, b->N, 2);
	if (!(p = permute(b, C_OFF, HD__SEC_OFFSET)))
		return HD_ENOMEM;
	to_le(p, b->N, 8);
	if ((rc = class_column(b)) ||
	    (rc = permute_wide(b, C_MEM, HD__SEC_MEMSIZE,
			       HD__SEC_MEMSIZE_WIDE, HD__M_MEMSIZE_WIDE,
			       &b->wmem)) ||
	    (rc = permute_wide(b, C_SIZE, HD__SEC_SIZE, HD__SEC_SIZE_WIDE,
			       HD__M_SIZE_WIDE, &b->wsize)))
		return rc;
	if (!b->has_gen) {
		drop(b, C_GEN, HD__SEC_GENERATION);
		set_sec(b, HD__SEC_GEN_WIDE, NULL, 0, 0);
	} else if ((rc = permute_wide(b, C_GEN, HD__SEC_GENERATION,
				      HD__SEC_GEN_WIDE, HD__M_GEN_WIDE,
				      &b->wgen))) {
		return rc;
	}
	if (!b->has_site) {
		drop(b, C_SITE, HD__SEC_SITE);
	} else {
		if (!(p = permute(b, C_SITE, HD__SEC_SITE)))
			return HD_ENOMEM;
		to_le(p, b->N, 4);
	}
	return permute(b, C_AUX, HD__SEC_AUX) ? 0 : HD_ENOMEM;
}

/* The allocation stacks' sections (store_stacks.c), when the dump has
 * STACK records or objects with a "stack"; else none, not even empty. */
static int stacks(struct bld *b)
{
	static const int sid[5] = { HD__SEC_STACK_INFO, HD__SEC_STACK_OFF,
				    HD__SEC_STACK_ENT, HD__SEC_STACK_FRAME,
				    HD__SEC_STACK_NODE };
	void *img[5];
	size_t len[5], cap[5];
	uint32_t *col;
	int k;

	if (!b->stk.used && !b->stk.nst) {
		hd__free(b->c[C_STK].p, b->c[C_STK].cap * col_w[C_STK]);
		b->c[C_STK].p = NULL;
		b->c[C_STK].cap = 0;
		return 0;
	}
	if (!(col = permute(b, C_STK, HD__SEC_STACK_NODE)) ||
	    hd__stk_sections(&b->stk, col, b->N, img, len, cap))
		return HD_ENOMEM;
	for (k = 0; k < 4; k++)
		set_sec(b, sid[k], img[k], len[k], cap[k]);
	if (img[4] != col) /* sparse: the column goes */
		set_sec(b, HD__SEC_STACK_NODE, img[4], len[4], cap[4]);
	return 0;
}

/* ---- tables ---- */

static int sites_table(struct bld *b)
{
	unsigned char *p = sec_alloc(b, HD__SEC_SITES, b->nsites,
				     HD__SITE_SIZE);
	size_t i;

	if (!p)
		return HD_ENOMEM;
	for (i = 0; i < b->nsites; i++, p += HD__SITE_SIZE) {
		hd__put_le32(p, b->sites[i].file);
		hd__put_le32(p + 4, b->sites[i].method);
		hd__put_le64(p + 8, b->sites[i].line);
	}
	b->s->meta[HD__M_SITES] = b->nsites;
	return 0;
}

static int is_classy(int t)
{
	return t == HD_T_CLASS || t == HD_T_MODULE || t == HD_T_ICLASS;
}

/*
 * Is e a class whose instances hold it, with a class edge each (man 5
 * heapdump-store, CLASS REFERENCES): a class or module that is a
 * singleton (flagged, or a metaclass) or anonymous (no name; before
 * Ruby 3.0 a name "#<...>")? Its instances are then its only holders,
 * or the only ones the dump shows. A named class is held by its
 * constant: an edge from each instance would change nothing but the
 * retained sizes of every class.
 */
static int held_by_instances(const struct bld *b, const struct hd__class *e)
{
	const char *name;
	size_t len;

	if (!e || (e->type != HD_T_CLASS && e->type != HD_T_MODULE))
		return 0;
	if ((e->flags & HD__CF_SINGLETON) || e->name == HD_STR_NONE)
		return 1;
	name = hd__intern_str(&b->strs, e->name, &len);
	return len >= 2 && name[0] == '#' && name[1] == '<';
}

/* Can an object of type t have a class edge: an instance, not a free
 * slot, an internal (IMEMO, NODE: whose class field is not a class) or
 * a zombie? */
static int has_instance_class(int t)
{
	return t != HD_T_UNKNOWN && t != HD_T_NONE && t != HD_T_IMEMO &&
	       t != HD_T_NODE && t != HD_T_ZOMBIE;
}

/*
 * Before the edges and the nodes are built, on one thread: the class
 * names resolved (classes_table reads them), the class node of every
 * class pointer whose instances hold it (cedge), and the records that
 * get a class edge (cbit): forward_csr adds them, last.
 */
static int class_edges(struct bld *b)
{
	const uint32_t *cls = b->c[C_CLS].p;
	const uint8_t *type = b->c[C_TYPE].p;
	const struct hd__class *e;
	size_t d, r, any = 0;
	uint32_t c;

	if (hd__classtab_resolve(&b->ct))
		return HD_ENOMEM;
	if (!(b->cedge = hd__array_alloc(b->ncd ? b->ncd : 1,
					 sizeof(*b->cedge))))
		return HD_ENOMEM;
	for (d = 0; d < b->ncd; d++) {
		b->cedge[d] = HD_NODE_NONE;
		e = hd__classtab_find(&b->ct, b->cdict[d]);
		if (held_by_instances(b, e)) {
			b->cedge[d] = lut_find(&b->lut, b->cdict[d]);
			any += b->cedge[d] != HD_NODE_NONE;
		}
	}
	if (!any)
		return 0;
	if (!(b->cbit = hd__bitmap_new((uint32_t)b->n)))
		return HD_ENOMEM;
	for (r = 0; r < b->n; r++) {
		if ((c = cls[r]) == HD_NODE_NONE ||
		    b->cedge[c] == HD_NODE_NONE || !has_instance_class(type[r]))
			continue;
		hd__bit_set(b->cbit, (uint32_t)r);
		b->nce_max++;
	}
	if (b->nrefs + b->nce_max > hd__max_refs)
		return over(b, "references", hd__max_refs);
	/* the class column is permuted (and freed) beside forward_csr:
	 * what it needs of it, apart */
	if (!(b->ce_rec = hd__array_alloc(b->nce_max ? b->nce_max : 1,
					  sizeof(*b->ce_rec))) ||
	    !(b->ce_tgt = hd__array_alloc(b->nce_max ? b->nce_max : 1,
					  sizeof(*b->ce_tgt))))
		return HD_ENOMEM;
	for (r = 0, d = 0; r < b->n; r++)
		if (hd__bit(b->cbit, (uint32_t)r)) {
			b->ce_rec[d] = (uint32_t)r;
			b->ce_tgt[d++] = b->cedge[cls[r]];
		}
	return 0;
}

/* Names classes (AUX) and lists them with their real names (CLASSES). */
static int classes_table(struct bld *b)
{
	const uint8_t *type = b->s->own[HD__SEC_TYPE];
	const uint64_t *addr = b->s->own[HD__SEC_ADDRESS];
	uint32_t *aux = b->s->own[HD__SEC_AUX];
	const struct hd__class *e;
	unsigned char *p;
	uint32_t f;
	size_t i, n = 0;

	for (i = 0; i < b->N; i++)
		n += is_classy(type[i]) &&
		     hd__classtab_find(&b->ct, addr[i]) != NULL;
	if (!(p = sec_alloc(b, HD__SEC_CLASSES, n, HD__CLASS_SIZE)))
		return HD_ENOMEM;
	for (i = 0; i < b->N; i++) {
		if (!is_classy(type[i]) ||
		    !(e = hd__classtab_find(&b->ct, addr[i])))
			continue;
		aux[i] = e->display;
		hd__put_le32(p, (uint32_t)i);
		hd__put_le32(p + 4, e->display);
		hd__put_le32(p + 8, e->real);
		f = e->flags & HD__CF_SINGLETON ? HD__CLS_SINGLETON : 0;
		if (held_by_instances(b, e))
			f |= HD__CLS_EDGE;
		hd__put_le32(p + 12, f);
		p += HD__CLASS_SIZE;
	}
	b->s->meta[HD__M_CLASSES] = n;
	to_le(aux, b->N, 4);
	return 0;
}

/* The interner becomes the STRINGS and STROFFS sections. */
static int strings(struct bld *b)
{
	struct hd__intern *t = &b->strs;
	uint32_t *off;
	size_t i;

	if (t->bytes_len > hd__max_string_bytes)
		return over(b, "bytes of distinct strings", hd__max_string_bytes);
	if (t->count >= HD_STR_NONE)
		return over(b, "distinct strings", HD_STR_NONE - 1);
	if (!(off = sec_alloc(b, HD__SEC_STROFFS, t->count + 1, 4)))
		return HD_ENOMEM;
	for (i = 0; i <= t->count; i++)
		off[i] = (uint32_t)t->offs[i];
	to_le(off, t->count + 1, 4);
	set_sec(b, HD__SEC_STRINGS, t->bytes, t->bytes_len, t->bytes_cap);
	t->bytes = NULL;
	t->bytes_cap = t->bytes_len = 0;
	b->s->meta[HD__M_STRINGS] = t->count;
	return 0;
}

/* The dump's path as the store records it: its real path, so the store
 * finds it from any directory ("-" for standard input). */
static int intern_source_path(struct bld *b, uint32_t *sid, hd_error *err)
{
	char *real = strcmp(b->path, "-") ? realpath(b->path, NULL) : NULL;
	const char *p = real ? real : b->path;
	int bad = hd__intern_put(&b->strs, p, strlen(p), sid);

	free(real);
	return bad ? hd__error(err, HD_ENOMEM, "out of memory") : 0;
}

static int meta(struct bld *b, hd_error *err)
{
	uint64_t *m = b->s->meta, fp = 0, size = 0, mtime = 0;
	uint32_t kind = HD__FP_NONE, sid;
	unsigned char *p;
	hd_read_stats st;
	int i, rc;

	if (strcmp(b->path, "-") &&
	    (rc = hd__store_fingerprint(b->path, &fp, &kind, &size, &mtime,
					err)))
		return rc;
	if ((rc = intern_source_path(b, &sid, err)))
		return rc;
	st = b->rs;
	if (!b->nroots && b->N)
		b->features |= HD_FEAT_PARTIAL;
	m[HD__M_NODES] = b->N;
	m[HD__M_EDGES] = b->s->len[HD__SEC_REFS] / 4;
	m[HD__M_DANGLING] = b->dangling;
	m[HD__M_DUPLICATES] = b->duplicates;
	m[HD__M_ROOT_REFS] = b->root_listed;
	m[HD__M_ROOT_CATEGORIES] = b->nroots;
	m[HD__M_ROOT_KEPT] = b->s->len[HD__SEC_ROOT_REFS] / 4;
	m[HD__M_SHAPES] = st.shapes;
	m[HD__M_SOURCE_SIZE] = st.bytes;
	m[HD__M_SOURCE_MTIME] = mtime;
	m[HD__M_FINGERPRINT] = fp;
	m[HD__M_FP_KIND] = kind;
	m[HD__M_SOURCE_PATH] = sid;
	m[HD__M_FEATURES] = b->features;
	m[HD__M_COLUMNS] = (b->has_gen ? HD__COL_GENERATION : 0) |
			   (b->has_site ? HD__COL_SITE : 0);
	m[HD__M_RD_BYTES] = st.bytes;
	m[HD__M_RD_TOTAL_BYTES] = st.total_bytes;
	m[HD__M_RD_LINES] = st.lines;
	m[HD__M_RD_OBJECTS] = st.objects;
	m[HD__M_RD_ROOTS] = st.roots;
	m[HD__M_RD_SHAPES] = st.shapes;
	m[HD__M_RD_OTHERS] = st.others;
	m[HD__M_RD_BLANK] = st.blank;
	m[HD__M_RD_SKIPPED] = st.skipped;
	m[HD__M_RD_REPAIRED] = st.repaired;
	m[HD__M_RD_TRUNCATED] = (uint64_t)st.truncated;
	m[HD__M_RD_GZIP] = (uint64_t)st.gzip;
	m[HD__M_RD_MEMPROF] = (uint64_t)st.memprof;
	m[HD__M_CLASS_EDGES] = b->nce;
	if ((rc = strings(b)))
		return limit_error(b, err, rc);
	if (!(p = sec_alloc(b, HD__SEC_META, HD__M_COUNT, 8)))
		return hd__error(err, HD_ENOMEM, "out of memory");
	for (i = 0; i < HD__M_COUNT; i++)
		hd__put_le64(p + (size_t)i * 8, m[i]);
	return 0;
}

/* ---- the whole build ---- */

/* Frees and empties what the reading gathered (the accumulator: all
 * but opts, path, r, s, gather and spill). */
static void acc_free(struct bld *b)
{
	struct bld keep;
	int i;

	for (i = 0; i < C__N; i++)
		hd__free(b->c[i].p, b->c[i].cap * col_w[i]);
	hd__free(b->wmem.v, b->wmem.cap * sizeof(struct wide));
	hd__free(b->wgen.v, b->wgen.cap * sizeof(struct wide));
	hd__free(b->wsize.v, b->wsize.cap * sizeof(struct wide));
	hd__free(b->refs, b->refs_cap ? b->refs_cap * 8 : b->refs_bytes);
	hd__free(b->nm, b->nm_cap * 4);
	hd__free(b->rnm, b->rnm_cap * 4);
	hd__free(b->enm, b->enm_n * 4);
	hd__free(b->rknm, b->rknm_n * 4);
	hd__map_free(&b->cmap);
	hd__free(b->cdict, b->cd_cap * sizeof(*b->cdict));
	hd__free(b->cd_strong, b->cd_strong_cap);
	hd__free(b->sites, b->sites_cap * sizeof(*b->sites));
	hd__free(b->sslot, b->sslot_cap * sizeof(*b->sslot));
	hd__map_free(&b->rmap);
	hd__free(b->rnames, b->rnames_cap * sizeof(*b->rnames));
	hd__free(b->raddr, b->raddr_cap * sizeof(*b->raddr));
	hd__free(b->rcat, b->rcat_cap * sizeof(*b->rcat));
	hd__free(b->perm, (b->n ? b->n : 1) * sizeof(*b->perm));
	hd__free(b->cedge, (b->ncd ? b->ncd : 1) * sizeof(*b->cedge));
	hd__bitmap_free(b->cbit, (uint32_t)b->n);
	hd__free(b->ce_rec, (b->nce_max ? b->nce_max : 1) * sizeof(*b->ce_rec));
	hd__free(b->ce_tgt, (b->nce_max ? b->nce_max : 1) * sizeof(*b->ce_tgt));
	lut_free(&b->lut);
	hd__stk_free(&b->stk);
	hd__classtab_free(&b->ct);
	hd__intern_free(&b->strs);
	hd__free(b->sv, b->sv_cap);
	for (i = 0; i < (int)b->svc_n; i++)
		hd__free(b->svc[i].p, b->svc[i].cap);
	hd__free(b->svc, b->svc_cap * sizeof(*b->svc));
	hd__free(b->svr, b->svr_cap * sizeof(*b->svr));
	keep = *b;
	memset(b, 0, sizeof(*b));
	b->opts = keep.opts;
	b->path = keep.path;
	b->r = keep.r;
	b->s = keep.s;
	b->gather = keep.gather;
	b->spill = keep.spill;
}

static void bld_free(struct bld *b)
{
	acc_free(b);
	hd_reader_free(b->r);
	hd__store_release(b->s);
}

/* An empty accumulator (b zeroed but for opts, path, r and s). */
static int acc_init(struct bld *b)
{
	if (hd__intern_init(&b->strs) || hd__classtab_init(&b->ct, &b->strs) ||
	    hd__map_init(&b->cmap, 1024) || hd__map_init(&b->rmap, 16))
		return HD_ENOMEM;
	return 0;
}

/* ---- the parallel reading (pscan.c) ---- */

static int part_new(void **out, void *payload, size_t bytes)
{
	struct bld *p = hd__calloc(1, sizeof(*p));

	*out = p;
	if (!p)
		return HD_ENOMEM;
	p->gather = ((const struct bld *)payload)->gather;
	p->spill = ((const struct bld *)payload)->spill;
	if (acc_init(p)) {
		acc_free(p);
		hd__free(p, sizeof(*p));
		*out = NULL;
		return HD_ENOMEM;
	}
	reserve(p, bytes);
	return 0;
}

static void part_free(void *acc)
{
	struct bld *p = acc;

	if (!p)
		return;
	acc_free(p);
	hd__free(p, sizeof(*p));
}

static int part_add(void *acc, const hd_record *rec, hd_error *err)
{
	(void)err;
	return add_record(acc, rec);
}

/* Column ci of b: room for exactly n records (and one more). */
static int col_room(struct bld *b, int ci, size_t n)
{
	void *p;

	if (n + 1 <= b->c[ci].cap)
		return 0;
	p = hd__realloc(b->c[ci].p, b->c[ci].cap * col_w[ci],
			(n + 1) * col_w[ci]);
	if (!p)
		return HD_ENOMEM;
	b->c[ci].p = p;
	b->c[ci].cap = n + 1;
	return 0;
}

/* Local ids of a part (string, site, class pointer, root category) to
 * the merged ones. */
struct idmap {
	uint32_t *str, *site, *cd, *cat;
	size_t nstr, nsite, ncd, ncat;
};

static void idmap_free(struct idmap *m)
{
	HD_FREE(m->str, m->nstr);
	HD_FREE(m->site, m->nsite);
	HD_FREE(m->cd, m->ncd);
	HD_FREE(m->cat, m->ncat);
}

static uint32_t map_id(const uint32_t *m, uint32_t id)
{
	return id == HD_STR_NONE ? id : m[id];
}

/* A name code (string id + 1, 0 for none) of p in b. */
static uint32_t map_code(const struct idmap *m, uint32_t code)
{
	return code ? m->str[code - 1] + 1 : 0;
}

/*
 * The ids of p (the records after b's) in b, added to b's tables in p's
 * local order: as if b had read p's records. HD__PSCAN_STREAM when a
 * class record of p has an address a class record of b has (one reader
 * would not have interned its names).
 */
static int merge_ids(struct bld *b, const struct bld *p, struct idmap *m)
{
	struct site k;
	const char *str;
	size_t i, n;
	uint32_t cat;
	int found;

	for (i = 0; i < p->ct.count; i++)
		if (p->ct.v[i].type &&
		    hd__classtab_find(&b->ct, p->ct.v[i].address))
			return HD__PSCAN_STREAM;
	/* (at least one item each: the sizes they are freed with) */
	m->nstr = p->strs.count ? p->strs.count : 1;
	m->nsite = p->nsites ? p->nsites : 1;
	m->ncd = p->ncd ? p->ncd : 1;
	m->ncat = p->nroots ? p->nroots : 1;
	if (!HD_ALLOC(m->str, m->nstr) || !HD_ALLOC(m->site, m->nsite) ||
	    !HD_ALLOC(m->cd, m->ncd) || !HD_ALLOC(m->cat, m->ncat))
		return HD_ENOMEM;
	for (i = 0; i < p->strs.count; i++) {
		str = hd__intern_str(&p->strs, (uint32_t)i, &n);
		if (hd__intern_put(&b->strs, str, n, &m->str[i]))
			return HD_ENOMEM;
	}
	for (i = 0; i < p->nsites; i++) {
		k = p->sites[i];
		k.file = map_id(m->str, k.file);
		k.method = map_id(m->str, k.method);
		if (site_id(b, &k, &m->site[i]))
			return HD_ENOMEM;
	}
	for (i = 0; i < p->ncd; i++)
		if (class_id(b, p->cdict[i], &m->cd[i]))
			return HD_ENOMEM;
	for (i = 0; i < p->nroots; i++) {
		if (hd__grow((void **)&b->rnames, &b->rnames_cap,
			     b->nroots + 1, sizeof(*b->rnames)) ||
		    hd__map_put(&b->rmap, m->str[p->rnames[i]],
				(uint32_t)b->nroots, &cat, &found))
			return HD_ENOMEM;
		if (!found)
			b->rnames[b->nroots++] = m->str[p->rnames[i]];
		m->cat[i] = cat;
	}
	return hd__classtab_merge(&b->ct, &p->ct) ? HD_ENOMEM : 0;
}

/* codes[at..at + n) = p's codes (or none) translated; allocated zeroed
 * when b had none. */
static int merge_codes(uint32_t **codes, size_t *cap, size_t at,
		       const uint32_t *src, size_t n, const struct idmap *m)
{
	size_t k, old = *cap;

	if (!*codes && !src)
		return 0;
	if (hd__grow((void **)codes, cap, at + n + 1, sizeof(**codes)))
		return HD_ENOMEM;
	if (old < *cap)
		memset(*codes + old, 0, (*cap - old) * sizeof(**codes));
	for (k = 0; k < n; k++)
		(*codes)[at + k] = src ? map_code(m, src[k]) : 0;
	return 0;
}

static int merge_wide(struct wlist *dst, const struct wlist *src,
		      size_t base)
{
	size_t i;

	if (hd__grow((void **)&dst->v, &dst->cap, dst->n + src->n + 1,
		     sizeof(*dst->v)))
		return HD_ENOMEM;
	for (i = 0; i < src->n; i++) {
		dst->v[dst->n].idx = (uint32_t)(src->v[i].idx + base);
		dst->v[dst->n++].v = src->v[i].v;
	}
	return 0;
}

/* p's string values after b's (its record numbers from n on): its
 * blocks taken as they are (not copied), its record numbers translated. */
static int merge_gathered(struct bld *b, struct bld *p, size_t n)
{
	size_t i;

	if (!p->svn)
		return 0;
	if (hd__grow((void **)&b->svr, &b->svr_cap, b->svn + p->svn,
		     sizeof(*b->svr)) ||
	    sv_push(b, p->svc_n + 1) || sv_push(p, 0))
		return HD_ENOMEM;
	for (i = 0; i < p->svn; i++)
		b->svr[b->svn + i] = p->svr[i] + (uint32_t)n;
	b->svn += p->svn;
	for (i = 0; i < p->svc_n; i++)
		b->svc[b->svc_n++] = p->svc[i];
	p->svc_n = 0;
	hd__free(p->svr, p->svr_cap * sizeof(*p->svr));
	p->svr = NULL;
	p->svn = p->svr_cap = 0;
	return 0;
}

/* p's records appended to b's, its local ids translated; p's columns
 * freed one by one. */
static int merge_records(struct bld *b, struct bld *p, const struct idmap *m)
{
	size_t n = b->n, pn = p->n, i;
	int ci;

	if (merge_codes(&b->nm, &b->nm_cap, b->nrefs, p->nm, p->nrefs, m) ||
	    add_refs(b, p->refs, p->nrefs) ||
	    merge_codes(&b->rnm, &b->rnm_cap, b->nraddr, p->rnm, p->nraddr,
			m) ||
	    hd__grow((void **)&b->raddr, &b->raddr_cap, b->nraddr + p->nraddr,
		     sizeof(*b->raddr)) ||
	    hd__grow((void **)&b->rcat, &b->rcat_cap, b->nraddr + p->nraddr,
		     sizeof(*b->rcat)) ||
	    merge_wide(&b->wmem, &p->wmem, n) ||
	    merge_wide(&b->wgen, &p->wgen, n) ||
	    merge_wide(&b->wsize, &p->wsize, n))
		return HD_ENOMEM;
	for (i = 0; i < p->nraddr; i++) {
		b->raddr[b->nraddr + i] = p->raddr[i];
		b->rcat[b->nraddr + i] = m->cat[p->rcat[i]];
	}
	b->nraddr += p->nraddr;
	b->root_listed += p->root_listed;
	for (ci = 0; ci < C__N; ci++) {
		unsigned w = col_w[ci];
		uint32_t *d;

		if (col_room(b, ci, n + pn))
			return HD_ENOMEM;
		d = (uint32_t *)b->c[ci].p + n;
		if (ci == C_CLS || ci == C_SITE || ci == C_AUX) {
			const uint32_t *src = p->c[ci].p;
			const uint32_t *tr = ci == C_CLS ? m->cd :
					     ci == C_SITE ? m->site : m->str;

			for (i = 0; i < pn; i++)
				d[i] = map_id(tr, src[i]);
		} else if (pn) {
			memcpy((unsigned char *)b->c[ci].p + n * w, p->c[ci].p,
			       pn * w);
		}
		hd__free(p->c[ci].p, p->c[ci].cap * w);
		p->c[ci].p = NULL;
		p->c[ci].cap = 0;
	}
	if (hd__stk_merge(&b->stk, &p->stk, m->str) ||
	    merge_gathered(b, p, n))
		return HD_ENOMEM;
	b->n += pn;
	b->features |= p->features;
	b->has_gen |= p->has_gen;
	b->has_site |= p->has_site;
	return 0;
}

/* Would b and p together pass a limit one reader stops at? */
static int merged_over(const struct bld *b, const struct bld *p)
{
	return b->n + p->n > hd__max_nodes ||
	       b->nrefs + p->nrefs > hd__max_refs ||
	       b->nraddr + p->nraddr > hd__max_refs;
}

/* The first part becomes b's accumulator (b's own, empty, is freed). */
static void take_first(struct bld *b, struct bld *p)
{
	struct bld keep;

	acc_free(b);
	keep = *b;
	*b = *p;
	b->opts = keep.opts;
	b->path = keep.path;
	b->r = keep.r;
	b->s = keep.s;
	b->gather = keep.gather;
	b->ct.strs = &b->strs;
	memset(p, 0, sizeof(*p));
}

static int merge_parts(void *payload, void *const *acc, unsigned n,
		       const hd_read_stats *rs, hd_error *err)
{
	struct bld *b = payload;
	struct idmap m;
	unsigned k;
	int rc = 0;

	(void)err;
	hd__timing("scan");
	take_first(b, acc[0]);
	for (k = 1; k < n && !rc; k++) {
		struct bld *p = acc[k];

		memset(&m, 0, sizeof(m));
		if (merged_over(b, p))
			rc = HD__PSCAN_STREAM;
		else if ((rc = merge_ids(b, p, &m)) == 0)
			rc = merge_records(b, p, &m);
		idmap_free(&m);
	}
	for (k = 0; k < n; k++)
		part_free(acc[k]);
	b->rs = *rs;
	hd__timing("merge");
	/* out of memory, too: one reader says it as it always does */
	return rc ? HD__PSCAN_STREAM : 0;
}

static const struct hd__pscan_ops build_ops = {
	part_new, part_add, merge_parts, part_free
};

/* The dump read on opts->jobs threads: 0, an error or HD__PSCAN_STREAM
 * (read it with one reader). */
static int read_parallel(struct bld *b, hd_error *err)
{
	hd_scan_options so = HD_SCAN_OPTIONS_INIT;

	if (!b->opts || b->opts->version < 2 || b->opts->jobs <= 1)
		return HD__PSCAN_STREAM;
	so.jobs = b->opts->jobs;
	so.read = b->opts->read;
	so.progress = b->opts->progress;
	so.progress_payload = b->opts->progress_payload;
	return hd__pscan(b->path, &so, &build_ops, b, NULL, err);
}

/*
 * After the references are resolved, two tasks that share nothing but
 * what they read (the permutation, the address lookup): the edges
 * (forward, then reverse CSR) and the nodes (root references, columns,
 * the site and class tables).
 */
static int edges_task(struct bld *b, unsigned part)
{
	(void)part;
	return forward_csr(b) || reverse_csr(b) ? HD_ENOMEM : 0;
}

static int nodes_task(struct bld *b, unsigned part)
{
	(void)part;
	return roots_csr(b) || columns(b) || sites_table(b) ||
			       classes_table(b) ?
		       HD_ENOMEM :
		       0;
}

/* The string values gathered handed to the store: each entry's node
 * (the node whose record it is; NONE for a later record of an address),
 * found from the permutation, whose STRING nodes' records all have one. */
static int gathered(struct bld *b)
{
	struct hd__gathered *g;
	const uint8_t *type = b->s->own[HD__SEC_TYPE];
	size_t i, lo, hi, mid;

	if (!(g = hd__calloc(1, sizeof(*g))))
		return HD_ENOMEM;
	if (sv_push(b, 0) ||
	    !(g->node = hd__array_alloc(b->svn ? b->svn : 1,
					sizeof(*g->node)))) {
		hd__free(g, sizeof(*g));
		return HD_ENOMEM;
	}
	for (i = 0; i < b->svn; i++)
		g->node[i] = HD_NODE_NONE;
	for (i = 0; i < b->N; i++) {
		if (type[i] != HD_T_STRING)
			continue;
		/* the entry of record perm[i]: svr ascends */
		for (lo = 0, hi = b->svn; lo < hi;) {
			mid = lo + (hi - lo) / 2;
			if (b->svr[mid] < b->perm[i])
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < b->svn && b->svr[lo] == b->perm[i])
			g->node[lo] = (hd_node_id)i;
	}
	g->n = b->svn;
	g->chunk = b->svc;
	g->nchunk = b->svc_n;
	g->chunk_cap = b->svc_cap;
	b->svc = NULL;
	b->svc_n = b->svc_cap = 0;
	hd__free(b->svr, b->svr_cap * sizeof(*b->svr));
	b->svr = NULL;
	b->svn = b->svr_cap = 0;
	hd__store_gathered_free(b->s);
	b->s->gathered = g;
	return 0;
}

/* Everything after the dump has been read. */
static int assemble(struct bld *b, hd_error *err)
{
	int rc;

	if (grow_cols(b, b->n + 1) || sort_nodes(b))
		return hd__error(err, HD_ENOMEM, "out of memory");
	hd__timing("sort");
	if (lut_init(&b->lut, b->c[C_ADDR].p, b->N) || resolve_refs(b))
		return hd__error(err, HD_ENOMEM, "out of memory");
	hd__timing("resolve");
	if ((rc = class_edges(b)))
		return limit_error(b, err, rc);
	hd__timing("classes");
	set_sec(b, HD__SEC_ADDRESS, b->c[C_ADDR].p, b->N * 8,
		b->c[C_ADDR].cap * 8);
	b->c[C_ADDR].p = NULL;
	b->c[C_ADDR].cap = 0;
	b->lut.a = b->s->own[HD__SEC_ADDRESS];
	if (par2(b, edges_task, nodes_task))
		return hd__error(err, HD_ENOMEM, "out of memory");
	hd__timing("build");
	if (finalizer_roots(b))
		return hd__error(err, HD_ENOMEM, "out of memory");
	if ((rc = stacks(b)))
		return limit_error(b, err, rc);
	lut_free(&b->lut);
	to_le(b->s->own[HD__SEC_ADDRESS], b->N, 8);
	to_le(b->s->own[HD__SEC_REFS_OFF], b->N + 1, 4);
	to_le(b->s->own[HD__SEC_REFS], b->s->len[HD__SEC_REFS] / 4, 4);
	to_le(b->s->own[HD__SEC_REV_OFF], b->N + 1, 4);
	to_le(b->s->own[HD__SEC_REV], b->s->len[HD__SEC_REV] / 4, 4);
	to_le(b->s->own[HD__SEC_ROOT_NAMES], b->nroots, 4);
	to_le(b->s->own[HD__SEC_ROOT_OFF], b->nroots + 1, 4);
	to_le(b->s->own[HD__SEC_ROOT_REFS], b->s->len[HD__SEC_ROOT_REFS] / 4,
	      4);
	if ((rc = hd__store_names_build(b->s, &b->strs, b->enm, b->rknm,
					err)))
		return rc;
	hd__timing("names");
	rc = meta(b, err);
	hd__timing("meta");
	if (!rc && b->gather && gathered(b))
		return hd__error(err, HD_ENOMEM, "out of memory");
	return rc;
}

int hd_store_build(hd_store **out, const char *dump_path,
		   const hd_index_options *opts, hd_error *err)
{
	struct bld b;
	int rc;

	HD_ASSERT_ARG(out && dump_path);
	HD_ASSERT_ARG(!opts || (opts->version >= 1 &&
				opts->version <= HD_INDEX_OPTIONS_VERSION));
	*out = NULL;
	memset(&b, 0, sizeof(b));
	b.opts = opts;
	b.path = dump_path;
	b.gather = opts && opts->version >= 3 &&
		   (opts->flags & HD_INDEX_STRING_VALUES);
	if (!(b.s = hd__calloc(1, sizeof(*b.s))) || acc_init(&b)) {
		rc = hd__error(err, HD_ENOMEM, "out of memory");
		goto out;
	}
	if (opts && opts->version >= 4 && (opts->flags & HD_INDEX_SPILL)) {
		if ((rc = hd__store_spill_open(b.s, opts->spill_dir, err)) < 0)
			goto out;
		b.spill = rc == 0 ? b.s : NULL;
		rc = 0;
	}
	hd__timing(NULL);
	rc = read_parallel(&b, err);
	if (rc == HD__PSCAN_STREAM) {
		/* one reader, from a clean accumulator */
		acc_free(&b);
		if (acc_init(&b)) {
			rc = hd__error(err, HD_ENOMEM, "out of memory");
			goto out;
		}
		rc = read_dump(&b, err);
		hd__timing("scan");
	}
	if (rc || (rc = assemble(&b, err)))
		goto out;
	if ((rc = hd__store_validate(b.s, 0, err)))
		goto out;
	hd__timing("validate");
	if (b.s->spilling && (rc = hd_store_spill(b.s, NULL, err)))
		goto out;
	if (b.s->spilling)
		hd__timing("spill");
	b.s->jobs = opts && opts->version >= 2 ? opts->jobs : 1;
	*out = b.s;
	b.s = NULL;
out:
	bld_free(&b);
	return rc;
}

/* Opens a store, or builds one from a dump: the one function over both
 * (here, so that store.c, the reading side, never calls the building
 * side). */
int hd_store_load(hd_store **out, const char *path,
		  const hd_index_options *opts, hd_error *err)
{
	HD_ASSERT_ARG(out && path);
	if (strcmp(path, "-") && hd_store_is_store(path))
		return hd_store_open(out, path, err);
	return hd_store_build(out, path, opts, err);
}
