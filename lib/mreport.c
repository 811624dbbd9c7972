/*
 * mreport.c - what malloc snapshots say (man 1 heapdump-malloc): the
 * sites of one snapshot or several of one process, by live bytes or by
 * growth; mwrap's estimate of the live bytes (bytes per allocation x
 * (allocations - frees)) and of their growth; the least-squares slope
 * of each site's live bytes against the snapshots' times; the join
 * with a heap dump by allocation site; the last snapshot's leak scan;
 * and the verdict, the one sentence every front end prints.
 *
 * Sites are keyed by kind and name in an open-addressed table; each
 * snapshot keeps the four counters of every site it saw in an array
 * indexed by site (32 bytes a site and snapshot).
 */
#include "hd_int.h"

#include <math.h>
#include <stdio.h>

struct counters {
	uint64_t allocs, frees, bytes_allocated, live_bytes;
};

struct snap {
	hd_msnap_header hdr;
	char *name;
	uint64_t skipped;
	struct counters *c; /* by site id, nc of them (later sites: 0) */
	size_t nc;
};

struct msite {
	hd_mreport_site pub;
	uint64_t hash;
	size_t last_seen;    /* snapshot index + 1 of the gen figures */
};

struct hd_mreport {
	hd_mreport_options opts;
	struct snap snaps[HD_MREPORT_MAX_SNAPS];
	size_t nsnaps;
	struct msite *sites;
	size_t nsites, cap;
	uint32_t *slots;     /* site id + 1, 0 empty */
	size_t nslots;
	size_t *order;       /* after finish */
	int finished;
	hd_msnap_item leakscan;
	int has_leakscan;
	char *ls_allocator, *ls_blind;
	int judgement;
	size_t verdict_site;
	char verdict[512];
};

int hd_mreport_new(hd_mreport **out, const hd_mreport_options *opts,
		   hd_error *err)
{
	static const hd_mreport_options defaults = HD_MREPORT_OPTIONS_INIT;
	hd_mreport *r;

	HD_ASSERT_ARG(out);
	*out = NULL;
	if (opts && opts->version != HD_MREPORT_OPTIONS_VERSION)
		return hd__error(err, HD_EINVAL,
				 "unknown hd_mreport_options version %u",
				 opts->version);
	if (!(r = hd__calloc(1, sizeof(*r))))
		return hd__error(err, HD_ENOMEM, "out of memory");
	r->opts = opts ? *opts : defaults;
	*out = r;
	return 0;
}

/* ---- the site table ---- */

static uint64_t site_hash(int kind, const char *s, size_t n)
{
	return hd__hash_bytes(s, n, (uint64_t)kind * 0x9e3779b97f4a7c15ull);
}

static int rehash(hd_mreport *r)
{
	size_t n = r->nslots ? r->nslots * 2 : 1024, i, k;
	uint32_t *t = hd__calloc(n, sizeof(*t));

	if (!t)
		return -1;
	for (i = 0; i < r->nsites; i++) {
		k = (size_t)r->sites[i].hash & (n - 1);
		while (t[k])
			k = (k + 1) & (n - 1);
		t[k] = (uint32_t)(i + 1);
	}
	hd__free(r->slots, r->nslots * sizeof(*t));
	r->slots = t;
	r->nslots = n;
	return 0;
}

/* the id of site (kind, s[0..n)), SIZE_MAX when absent */
static size_t find_site(const hd_mreport *r, int kind, const char *s,
			size_t n)
{
	uint64_t h = site_hash(kind, s, n);
	size_t k;

	if (!r->nslots)
		return SIZE_MAX;
	for (k = (size_t)h & (r->nslots - 1); r->slots[k];
	     k = (k + 1) & (r->nslots - 1)) {
		const struct msite *m = &r->sites[r->slots[k] - 1];

		if (m->hash == h && m->pub.kind == kind &&
		    m->pub.site_len == n && !memcmp(m->pub.site, s, n))
			return r->slots[k] - 1;
	}
	return SIZE_MAX;
}

/* the id of the site, made when new; SIZE_MAX when out of memory */
static size_t site_id(hd_mreport *r, int kind, const char *s, size_t n)
{
	size_t id = find_site(r, kind, s, n), k;
	struct msite *m;
	char *name;

	if (id != SIZE_MAX)
		return id;
	if (r->nsites >= UINT32_MAX - 1)
		return SIZE_MAX;
	if ((r->nsites + 1) * 2 > r->nslots && rehash(r))
		return SIZE_MAX;
	if (hd__grow((void **)&r->sites, &r->cap, r->nsites + 1,
		     sizeof(*r->sites)))
		return SIZE_MAX;
	if (!(name = hd__malloc(n + 1)))
		return SIZE_MAX;
	memcpy(name, s, n);
	name[n] = '\0';
	m = &r->sites[r->nsites];
	memset(m, 0, sizeof(*m));
	m->pub.site = name;
	m->pub.site_len = n;
	m->pub.kind = kind;
	m->hash = site_hash(kind, s, n);
	for (k = (size_t)m->hash & (r->nslots - 1); r->slots[k];
	     k = (k + 1) & (r->nslots - 1))
		;
	r->slots[k] = (uint32_t)(r->nsites + 1);
	return r->nsites++;
}

/* ---- adding snapshots ---- */

static int keep_leakscan(hd_mreport *r, const hd_msnap_item *it)
{
	char *a = hd__strdup(it->allocator), *b = hd__strdup(it->blind);

	if (!a || !b) {
		hd__free(a, a ? strlen(a) + 1 : 0);
		hd__free(b, b ? strlen(b) + 1 : 0);
		return -1;
	}
	if (r->ls_allocator)
		hd__free(r->ls_allocator, strlen(r->ls_allocator) + 1);
	if (r->ls_blind)
		hd__free(r->ls_blind, strlen(r->ls_blind) + 1);
	r->leakscan = *it;
	r->leakscan.allocator = r->ls_allocator = a;
	r->leakscan.blind = r->ls_blind = b;
	r->has_leakscan = 1;
	return 0;
}

static int count_item(hd_mreport *r, struct snap *sn, const hd_msnap_item *it)
{
	size_t id = site_id(r, it->kind, it->site, it->site_len), cap;
	struct msite *m;
	struct counters *c;
	int sat = 0;

	if (id == SIZE_MAX)
		return -1;
	m = &r->sites[id];
	if (it->type == HD_MSNAP_LEAKED) {
		m->pub.leaked_blocks =
			hd_u64_sat_add(m->pub.leaked_blocks, it->blocks, &sat);
		m->pub.leaked_bytes =
			hd_u64_sat_add(m->pub.leaked_bytes, it->bytes, &sat);
		return 0;
	}
	if (id >= sn->nc) {
		cap = sn->nc;
		if (hd__grow((void **)&sn->c, &cap, id + 1, sizeof(*sn->c)))
			return -1;
		memset(sn->c + sn->nc, 0, (cap - sn->nc) * sizeof(*sn->c));
		sn->nc = cap;
	}
	c = &sn->c[id];
	/* a site twice in one snapshot: its lines add up */
	c->allocs = hd_u64_sat_add(c->allocs, it->allocs, &sat);
	c->frees = hd_u64_sat_add(c->frees, it->frees, &sat);
	c->bytes_allocated =
		hd_u64_sat_add(c->bytes_allocated, it->bytes_allocated, &sat);
	c->live_bytes = hd_u64_sat_add(c->live_bytes, it->live_bytes, &sat);
	m->pub.live_blocks = (m->last_seen == r->nsnaps + 1 ?
				      m->pub.live_blocks :
				      0) + it->live_blocks;
	if (it->has_gen && (m->last_seen != r->nsnaps + 1 || !m->pub.has_gen ||
			    it->gen_oldest < m->pub.gen_oldest)) {
		m->pub.gen_oldest = it->gen_oldest;
		m->pub.gen_mean = it->gen_mean;
	}
	m->pub.has_gen = it->has_gen ||
			 (m->last_seen == r->nsnaps + 1 && m->pub.has_gen);
	m->last_seen = r->nsnaps + 1;
	return 0;
}

int hd_mreport_add(hd_mreport *r, hd_msnap *m, const char *name,
		   hd_error *err)
{
	const hd_msnap_header *h;
	struct snap *sn;
	hd_msnap_item it;
	size_t i;
	int rc;

	HD_ASSERT_ARG(r && m && name && !r->finished);
	h = hd_msnap_header_get(m);
	if (r->nsnaps >= HD_MREPORT_MAX_SNAPS)
		return hd__error(err, HD_ELIMIT,
				 "more than %d malloc snapshots",
				 HD_MREPORT_MAX_SNAPS);
	if (r->nsnaps) {
		const hd_msnap_header *p = &r->snaps[r->nsnaps - 1].hdr;

		if (h->pid && p->pid && h->pid != p->pid)
			return hd__error(err, HD_EINVAL,
					 "a snapshot of pid %lld after one "
					 "of pid %lld: snapshots of one "
					 "process, please",
					 (long long)h->pid,
					 (long long)p->pid);
		if (h->time && p->time && h->time < p->time)
			return hd__error(err, HD_EINVAL,
					 "taken %.3f s before the snapshot "
					 "given before it: give them in the "
					 "order taken",
					 p->time - h->time);
	}
	sn = &r->snaps[r->nsnaps];
	memset(sn, 0, sizeof(*sn));
	if (!(sn->name = hd__strdup(name)))
		return hd__error(err, HD_ENOMEM, "out of memory");
	sn->hdr = *h;
	/* the leak scan is the last snapshot's */
	for (i = 0; i < r->nsites; i++)
		r->sites[i].pub.leaked_blocks = r->sites[i].pub.leaked_bytes =
			0;
	r->has_leakscan = 0;
	while (!(rc = hd_msnap_next(m, &it, err))) {
		if (it.type == HD_MSNAP_LEAKSCAN)
			rc = keep_leakscan(r, &it);
		else
			rc = count_item(r, sn, &it);
		if (rc) {
			r->nsnaps++;
			return hd__error(err, HD_ENOMEM, "out of memory");
		}
	}
	sn->skipped = hd_msnap_skipped(m);
	r->nsnaps++;
	return rc == HD_ITEROVER ? 0 : rc;
}

/* ---- the join with a heap dump ---- */

int hd_mreport_join(hd_mreport *r, const hd_store *s, hd_error *err)
{
	uint32_t n, v;
	char *key = NULL;
	size_t cap = 0, id, len, i;
	hd_site site;
	int sat = 0;

	HD_ASSERT_ARG(r && s && !r->finished);
	n = hd_store_node_count(s);
	for (i = 0; i < r->nsites; i++)
		r->sites[i].pub.joined = 1;
	for (v = 0; v < n; v++) {
		if (hd_store_is_dumper(s, v) || hd_store_site(&site, s, v) ||
		    !site.file || !site.line)
			continue;
		if (hd__grow((void **)&key, &cap, site.file_len + 24, 1)) {
			hd__free(key, cap);
			return hd__error(err, HD_ENOMEM, "out of memory");
		}
		memcpy(key, site.file, site.file_len);
		len = site.file_len +
		      (size_t)snprintf(key + site.file_len, 24, ":%llu",
				       (unsigned long long)site.line);
		id = find_site(r, HD_MSITE_RUBY, key, len);
		if (id == SIZE_MAX)
			continue;
		{
			hd_mreport_site *p = &r->sites[id].pub;
			uint64_t ms = hd_store_memsize(s, v);
			size_t al;
			const char *aux;

			p->dump_objects++;
			p->dump_memsize = hd_u64_sat_add(p->dump_memsize, ms,
							 &sat);
			if (hd_store_type(s, v) == HD_T_IMEMO &&
			    (aux = hd_store_aux(s, v, &al)) && al == 4 &&
			    !memcmp(aux, "iseq", 4))
				p->dump_iseq_memsize = hd_u64_sat_add(
					p->dump_iseq_memsize, ms, &sat);
		}
	}
	hd__free(key, cap);
	return 0;
}

/* ---- finishing: figures, order, verdict ---- */

static const struct counters *snap_c(const hd_mreport *r, size_t k,
				     size_t id)
{
	static const struct counters zero;

	return id < r->snaps[k].nc ? &r->snaps[k].c[id] : &zero;
}

static int64_t diff64(uint64_t a, uint64_t b)
{
	if (a >= b)
		return a - b > (uint64_t)INT64_MAX ? INT64_MAX :
						     (int64_t)(a - b);
	return b - a > (uint64_t)INT64_MAX ? -INT64_MAX : -(int64_t)(b - a);
}

/* v as an integer, saturated at the range's ends (NaN: 0) */
static uint64_t to_u64(double v)
{
	if (!(v > 0))
		return 0;
	return v >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)v;
}

static int64_t to_i64(double v)
{
	if (v != v)
		return 0;
	if (v >= 9223372036854775807.0)
		return INT64_MAX;
	if (v <= -9223372036854775807.0)
		return -INT64_MAX;
	return (int64_t)v;
}

/* bytes per allocation x (allocations - frees) */
static uint64_t estimate(const struct counters *c)
{
	double per;

	if (!c->allocs || c->frees >= c->allocs)
		return 0;
	per = (double)c->bytes_allocated / (double)c->allocs;
	return to_u64(per * (double)(c->allocs - c->frees) + 0.5);
}

static void site_figures(hd_mreport *r, size_t id)
{
	hd_mreport_site *p = &r->sites[id].pub;
	const struct counters *a = snap_c(r, 0, id),
			      *z = snap_c(r, r->nsnaps - 1, id);
	double sx = 0, sy = 0, sxx = 0, sxy = 0, x, y, nn, den, per;
	uint64_t da, db;
	int64_t dn;
	size_t k;

	p->allocs = z->allocs;
	p->frees = z->frees;
	p->bytes_allocated = z->bytes_allocated;
	p->live_bytes = z->live_bytes;
	if (r->sites[id].last_seen != r->nsnaps) {
		p->live_blocks = 0;
		p->has_gen = 0;
	}
	p->estimate = estimate(z);
	if (r->nsnaps < 2)
		return;
	p->growth = diff64(z->live_bytes, a->live_bytes);
	da = z->allocs >= a->allocs ? z->allocs - a->allocs : 0;
	db = z->bytes_allocated >= a->bytes_allocated ?
		     z->bytes_allocated - a->bytes_allocated :
		     0;
	dn = diff64(z->allocs, a->allocs) - diff64(z->frees, a->frees);
	per = da ? (double)db / (double)da :
		   z->allocs ? (double)z->bytes_allocated / (double)z->allocs :
			       0;
	p->growth_estimate = to_i64(per * (double)dn);
	p->grows_every_step = 1;
	for (k = 0; k < r->nsnaps; k++) {
		x = r->snaps[k].hdr.time - r->snaps[0].hdr.time;
		y = (double)snap_c(r, k, id)->live_bytes;
		sx += x;
		sy += y;
		sxx += x * x;
		sxy += x * y;
		if (k && snap_c(r, k, id)->live_bytes <=
				 snap_c(r, k - 1, id)->live_bytes)
			p->grows_every_step = 0;
	}
	nn = (double)r->nsnaps;
	den = nn * sxx - sx * sx;
	p->slope = den > 1e-9 ? (nn * sxy - sx * sy) / den : 0;
	if (!isfinite(p->slope))
		p->slope = 0;
}

/* a site's sort keys, copied so that qsort needs no context */
struct skey {
	int64_t growth;      /* 0 when sorting by live bytes */
	uint64_t live;
	int kind;
	const char *site;
	size_t len, id;
};

static int cmp_sites(const void *pa, const void *pb)
{
	const struct skey *a = pa, *b = pb;
	size_t n;
	int c;

	if (a->growth != b->growth)
		return a->growth > b->growth ? -1 : 1;
	if (a->live != b->live)
		return a->live > b->live ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind - b->kind;
	n = a->len < b->len ? a->len : b->len;
	if ((c = memcmp(a->site, b->site, n)))
		return c;
	return a->len < b->len ? -1 : a->len > b->len;
}

/* r->order: by growth with several snapshots, else by live bytes */
static int sort_sites(hd_mreport *r)
{
	size_t n = r->nsites ? r->nsites : 1, i;
	struct skey *k = hd__array_alloc(n, sizeof(*k));

	if (!(r->order = hd__array_alloc(n, sizeof(*r->order)))) {
		hd__free(k, k ? n * sizeof(*k) : 0);
		return -1;
	}
	if (!k)
		return -1;
	for (i = 0; i < r->nsites; i++) {
		const hd_mreport_site *p = &r->sites[i].pub;

		k[i].growth = r->nsnaps > 1 ? p->growth : 0;
		k[i].live = p->live_bytes;
		k[i].kind = p->kind;
		k[i].site = p->site;
		k[i].len = p->site_len;
		k[i].id = i;
	}
	qsort(k, r->nsites, sizeof(*k), cmp_sites);
	for (i = 0; i < r->nsites; i++)
		r->order[i] = k[i].id;
	hd__free(k, n * sizeof(*k));
	return 0;
}

/* s[0..n) with its control bytes as \u00XX (as the commands' text
 * escaper writes them), cut to fit buf */
static void escaped(char *buf, size_t size, const char *s, size_t n)
{
	static const char hx[] = "0123456789abcdef";
	size_t o = 0, i;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c < 0x20 || c == 0x7f) {
			if (o + 7 > size - 4)
				break;
			buf[o++] = '\\';
			buf[o++] = 'u';
			buf[o++] = '0';
			buf[o++] = '0';
			buf[o++] = hx[c >> 4];
			buf[o++] = hx[c & 15];
		} else {
			if (o + 2 > size - 4)
				break;
			buf[o++] = (char)c;
		}
	}
	if (i < n)
		memcpy(buf + o, "...", 3), o += 3;
	buf[o] = '\0';
}

static void verdict_inactive(hd_mreport *r, size_t k)
{
	char why[300];

	escaped(why, sizeof(why), r->snaps[k].hdr.why,
		strlen(r->snaps[k].hdr.why));
	r->judgement = HD_MREPORT_INACTIVE;
	snprintf(r->verdict, sizeof(r->verdict),
		 "the tracker was not active (snapshot %zu of %zu, pid %lld)"
		 "%s%s: it recorded no allocation",
		 k + 1, r->nsnaps, (long long)r->snaps[k].hdr.pid,
		 *why ? ": " : "", why);
}

static void verdict_one(hd_mreport *r, uint64_t total)
{
	const hd_mreport_site *p;
	char site[300], live[32], all[32], blocks[32];

	if (!r->nsites || !(p = &r->sites[r->order[0]].pub)->live_bytes) {
		r->judgement = HD_MREPORT_EMPTY;
		snprintf(r->verdict, sizeof(r->verdict),
			 "no tracked native memory is live");
		return;
	}
	r->judgement = HD_MREPORT_ONE;
	r->verdict_site = r->order[0];
	escaped(site, sizeof(site), p->site, p->site_len);
	hd_bytes_text(live, sizeof(live), p->live_bytes);
	hd_bytes_text(all, sizeof(all), total);
	snprintf(r->verdict, sizeof(r->verdict),
		 "the most native memory is held at %s: %s live in %s "
		 "blocks (%.0f%% of the %s tracked); one snapshot shows no "
		 "growth",
		 site, live, hd__commas(p->live_blocks, blocks),
		 total ? 100.0 * (double)p->live_bytes / (double)total : 0,
		 all);
}

static void verdict_many(hd_mreport *r, uint64_t first, uint64_t last)
{
	const hd_mreport_site *p = r->nsites ? &r->sites[r->order[0]].pub :
					       NULL;
	double secs = r->snaps[r->nsnaps - 1].hdr.time - r->snaps[0].hdr.time;
	char site[300], g[32], a[32], z[32], min[32], rate[64] = "",
		share[64] = "";
	int64_t total = diff64(last, first);

	hd_bytes_text(min, sizeof(min), r->opts.min_growth);
	if (p && p->growth > 0 && (uint64_t)p->growth < r->opts.min_growth &&
	    total > 0 && (uint64_t)total >= r->opts.min_growth) {
		/* many small sites: the whole grows, no one site does */
		escaped(site, sizeof(site), p->site, p->site_len);
		hd_bytes_text(z, sizeof(z), (uint64_t)total);
		hd_bytes_text(g, sizeof(g), (uint64_t)p->growth);
		r->judgement = HD_MREPORT_GROWS;
		r->verdict_site = r->order[0];
		snprintf(r->verdict, sizeof(r->verdict),
			 "native memory grows by %s over %zu snapshots, spread "
			 "over sites (none grew by %s or more; the most at %s: "
			 "+%s)",
			 z, r->nsnaps, min, site, g);
		return;
	}
	if (!p || p->growth < 0 || (uint64_t)p->growth < r->opts.min_growth) {
		hd_bytes_text(a, sizeof(a), first);
		hd_bytes_text(z, sizeof(z), last);
		r->judgement = HD_MREPORT_FLAT;
		snprintf(r->verdict, sizeof(r->verdict),
			 "no native growth: the tracked live bytes went from "
			 "%s to %s over %zu snapshots (no site grew by %s or "
			 "more)",
			 a, z, r->nsnaps, min);
		return;
	}
	r->judgement = HD_MREPORT_GROWS;
	r->verdict_site = r->order[0];
	escaped(site, sizeof(site), p->site, p->site_len);
	hd_bytes_text(g, sizeof(g), (uint64_t)p->growth);
	if (secs > 0 && p->slope > 0) {
		hd_bytes_text(a, sizeof(a), to_u64(p->slope));
		snprintf(rate, sizeof(rate), " over %.1f s, %s/s", secs, a);
	}
	if (total > 0) {
		hd_bytes_text(z, sizeof(z), (uint64_t)total);
		snprintf(share, sizeof(share), "; %.0f%% of the %s tracked "
			 "growth", 100.0 * (double)p->growth / (double)total,
			 z);
	}
	snprintf(r->verdict, sizeof(r->verdict),
		 "native memory grows at %s: +%s live from the first "
		 "snapshot to the last (%zu snapshots%s%s)%s",
		 site, g, r->nsnaps, rate,
		 p->grows_every_step && r->nsnaps > 2 ?
			 ", at every snapshot" :
			 "",
		 share);
}

/* the totals of snapshot k: its header's, else its sites' sum */
static uint64_t snap_live(const hd_mreport *r, size_t k)
{
	uint64_t sum = 0;
	size_t i;
	int sat = 0;

	if (r->snaps[k].hdr.live_bytes)
		return r->snaps[k].hdr.live_bytes;
	for (i = 0; i < r->snaps[k].nc; i++)
		sum = hd_u64_sat_add(sum, r->snaps[k].c[i].live_bytes, &sat);
	return sum;
}

int hd_mreport_finish(hd_mreport *r, hd_error *err)
{
	size_t i;

	HD_ASSERT_ARG(r && !r->finished);
	if (!r->nsnaps)
		return hd__error(err, HD_EINVAL, "no malloc snapshot");
	for (i = 0; i < r->nsites; i++) {
		hd_mreport_site *p = &r->sites[i].pub;

		site_figures(r, i);
		if (p->joined)
			p->unexplained = p->live_bytes > p->dump_memsize ?
						 p->live_bytes - p->dump_memsize :
						 0;
	}
	if (sort_sites(r))
		return hd__error(err, HD_ENOMEM, "out of memory");
	r->finished = 1;
	r->verdict_site = SIZE_MAX;
	for (i = 0; i < r->nsnaps; i++)
		if (!r->snaps[i].hdr.tracking) {
			verdict_inactive(r, i);
			return 0;
		}
	if (r->nsnaps == 1)
		verdict_one(r, snap_live(r, 0));
	else
		verdict_many(r, snap_live(r, 0), snap_live(r, r->nsnaps - 1));
	return 0;
}

/* ---- accessors ---- */

size_t hd_mreport_snap_count(const hd_mreport *r)
{
	return r ? r->nsnaps : 0;
}

size_t hd_mreport_site_count(const hd_mreport *r)
{
	return r ? r->nsites : 0;
}

const hd_msnap_header *hd_mreport_snap(const hd_mreport *r, size_t i,
				       const char **name, uint64_t *skipped)
{
	if (!r || i >= r->nsnaps)
		return NULL;
	if (name)
		*name = r->snaps[i].name;
	if (skipped)
		*skipped = r->snaps[i].skipped;
	return &r->snaps[i].hdr;
}

static size_t site_index(const hd_mreport *r, size_t i)
{
	return r->finished ? r->order[i] : i;
}

const hd_mreport_site *hd_mreport_site_get(const hd_mreport *r, size_t i)
{
	if (!r || i >= r->nsites)
		return NULL;
	return &r->sites[site_index(r, i)].pub;
}

uint64_t hd_mreport_site_live(const hd_mreport *r, size_t i, size_t k)
{
	if (!r || i >= r->nsites || k >= r->nsnaps)
		return 0;
	return snap_c(r, k, site_index(r, i))->live_bytes;
}

const hd_msnap_item *hd_mreport_leakscan(const hd_mreport *r)
{
	return r && r->has_leakscan ? &r->leakscan : NULL;
}

const char *hd_mreport_verdict(const hd_mreport *r, int *judgement,
			       size_t *site)
{
	size_t i;

	if (judgement)
		*judgement = r && r->finished ? r->judgement : 0;
	if (site) {
		*site = SIZE_MAX;
		if (r && r->finished && r->verdict_site != SIZE_MAX)
			for (i = 0; i < r->nsites; i++)
				if (r->order[i] == r->verdict_site)
					*site = i;
	}
	return r && r->finished ? r->verdict : "";
}

void hd_mreport_free(hd_mreport *r)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; i < r->nsnaps; i++) {
		hd__free(r->snaps[i].name, strlen(r->snaps[i].name) + 1);
		hd__free(r->snaps[i].c, r->snaps[i].nc * sizeof(struct counters));
	}
	for (i = 0; i < r->nsites; i++)
		hd__free((char *)r->sites[i].pub.site,
			 r->sites[i].pub.site_len + 1);
	hd__free(r->sites, r->cap * sizeof(*r->sites));
	hd__free(r->slots, r->nslots * sizeof(*r->slots));
	hd__free(r->order,
		 (r->nsites ? r->nsites : 1) * sizeof(*r->order));
	if (r->ls_allocator)
		hd__free(r->ls_allocator, strlen(r->ls_allocator) + 1);
	if (r->ls_blind)
		hd__free(r->ls_blind, strlen(r->ls_blind) + 1);
	hd__free(r, sizeof(*r));
}
