/*
 * preload/table.c - the two tables of the tracker, in memory of its own
 * (mmap), so that growing them never calls the allocator it wraps:
 *
 * - sites: an array reserved once (entries never move: their counters are
 *   updated with atomics) and an open-addressing index of it, read
 *   without a lock and replaced whole, under the insert lock, when it
 *   fills; Ruby file names copied into an arena.
 * - blocks: the side table, address -> (size, site, generation), 64
 *   stripes each with its spin lock and its own linear-probing table
 *   (deletion by backward shift: no tombstones), doubled when half full.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <string.h>
#include <sys/mman.h>

#include "hdm.h"

void *hdm_map(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

void hdm_unmap(void *p, size_t bytes)
{
	if (p)
		munmap(p, bytes);
}

/* ---- sites ---- */

#define MAX_SITES (1u << 20)

struct site_index {
	uint32_t mask;
	uint32_t slots[]; /* 0: empty, else site id + 1 */
};

static struct hdm_site *sites; /* MAX_SITES entries, reserved */
static uint32_t nsites;	       /* published with release */
static struct site_index *volatile sindex;
static pthread_mutex_t site_lock = PTHREAD_MUTEX_INITIALIZER;
static char *arena; /* file names */
static size_t arena_left;

static uint64_t mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

static uint64_t hash_ruby(const char *file, int line)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *file; file++)
		h = (h ^ (unsigned char)*file) * 0x100000001b3ULL;
	return mix(h ^ ((uint64_t)(unsigned)line << 1) ^ 1);
}

static int same(const struct hdm_site *s, uint64_t h, int kind,
		uintptr_t caller, const char *file, int line)
{
	if (s->hash != h || s->kind != kind)
		return 0;
	if (kind == HDM_KIND_C)
		return s->caller == caller;
	return s->line == line && strcmp(s->file, file) == 0;
}

static uint32_t probe(const struct site_index *ix, uint64_t h, int kind,
		      uintptr_t caller, const char *file, int line)
{
	uint32_t i, v;

	if (!ix)
		return UINT32_MAX;
	for (i = (uint32_t)h & ix->mask;; i = (i + 1) & ix->mask) {
		v = __atomic_load_n(&ix->slots[i], __ATOMIC_ACQUIRE);
		if (v == 0)
			return UINT32_MAX;
		if (same(&sites[v - 1], h, kind, caller, file, line))
			return v - 1;
	}
}

static struct site_index *index_new(uint32_t cap)
{
	struct site_index *ix = hdm_map(sizeof *ix +
					(size_t)cap * sizeof(uint32_t));

	if (ix)
		ix->mask = cap - 1;
	return ix;
}

static void index_put(struct site_index *ix, uint64_t h, uint32_t id)
{
	uint32_t i;

	for (i = (uint32_t)h & ix->mask; ix->slots[i]; i = (i + 1) & ix->mask)
		;
	__atomic_store_n(&ix->slots[i], id + 1, __ATOMIC_RELEASE);
}

/* a copy of a file name, or NULL when the arena cannot grow */
static const char *keep_name(const char *file)
{
	size_t n = strlen(file) + 1;

	if (n > arena_left) {
		size_t chunk = n > (1u << 20) ? n : (1u << 20);
		char *a = hdm_map(chunk);

		if (!a)
			return NULL;
		arena = a;
		arena_left = chunk;
	}
	memcpy(arena, file, n);
	arena += n;
	arena_left -= n;
	return arena - n;
}

/* the insert, under site_lock: UINT32_MAX when a table cannot grow */
static uint32_t site_insert(uint64_t h, int kind, uintptr_t caller,
			    const char *file, int line)
{
	struct site_index *ix = sindex;
	uint32_t id = probe(ix, h, kind, caller, file, line);
	struct hdm_site *s;

	if (id != UINT32_MAX)
		return id;
	if (!sites && !(sites = hdm_map((size_t)MAX_SITES * sizeof *sites)))
		return UINT32_MAX;
	if (nsites >= MAX_SITES - 1)
		return UINT32_MAX;
	if (!ix || (nsites + 1) * 2 > ix->mask + 1) {
		/* a new index twice as large; the old one stays mapped for
		 * the readers that may still probe it */
		struct site_index *nx = index_new(ix ? (ix->mask + 1) * 2 :
						       1024);
		uint32_t k;

		if (!nx)
			return UINT32_MAX;
		for (k = 0; k < nsites; k++)
			index_put(nx, sites[k].hash, k);
		__atomic_store_n(&sindex, nx, __ATOMIC_RELEASE);
		ix = nx;
	}
	id = nsites;
	s = &sites[id];
	s->hash = h;
	s->kind = kind;
	s->caller = caller;
	s->line = line;
	if (kind == HDM_KIND_RUBY && !(s->file = keep_name(file)))
		return UINT32_MAX;
	__atomic_store_n(&nsites, id + 1, __ATOMIC_RELEASE);
	index_put(ix, h, id);
	return id;
}

static uint32_t site_get(uint64_t h, int kind, uintptr_t caller,
			 const char *file, int line)
{
	uint32_t id = probe(__atomic_load_n(&sindex, __ATOMIC_ACQUIRE), h, kind,
			    caller, file, line);

	if (id != UINT32_MAX)
		return id;
	pthread_mutex_lock(&site_lock);
	id = site_insert(h, kind, caller, file, line);
	pthread_mutex_unlock(&site_lock);
	return id;
}

uint32_t hdm_site_ruby(const char *file, int line)
{
	return site_get(hash_ruby(file, line), HDM_KIND_RUBY, 0, file, line);
}

uint32_t hdm_site_c(uintptr_t caller)
{
	return site_get(mix((uint64_t)caller), HDM_KIND_C, caller, NULL, 0);
}

struct hdm_site *hdm_site_at(uint32_t id)
{
	return &sites[id];
}

void hdm_site_freed(uint32_t id, uint64_t size)
{
	struct hdm_site *s = &sites[id];

	__atomic_add_fetch(&s->frees, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&s->bytes_freed, size, __ATOMIC_RELAXED);
}

void hdm_site_live(struct hdm_site *s, int64_t *bytes, int64_t *blocks)
{
	uint64_t f = __atomic_load_n(&s->frees, __ATOMIC_ACQUIRE);
	uint64_t fb = __atomic_load_n(&s->bytes_freed, __ATOMIC_ACQUIRE);

	*blocks = (int64_t)(__atomic_load_n(&s->allocs, __ATOMIC_ACQUIRE) - f);
	*bytes = (int64_t)(__atomic_load_n(&s->bytes_allocated,
					   __ATOMIC_ACQUIRE) -
			   fb);
}

uint32_t hdm_site_count(void)
{
	return __atomic_load_n(&nsites, __ATOMIC_ACQUIRE);
}

/* ---- blocks ---- */

#define NSTRIPES 64
#define STRIPE_MIN 1024

/*
 * A stripe's lock: held for a few dozen instructions (a probe), so a
 * spin lock (one atomic exchange to take, a store to release) rather
 * than a mutex, which cost a call and two atomic operations each way;
 * a waiter yields after a few spins (a snapshot holds a stripe while it
 * copies it; two cores may be shared by many threads).
 */
static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

static void spin_lock(int *l)
{
	int n = 0;

	while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(l, __ATOMIC_RELAXED))
			if (++n > 64)
				sched_yield();
			else
				cpu_relax();
}

static void spin_unlock(int *l)
{
	__atomic_store_n(l, 0, __ATOMIC_RELEASE);
}

struct stripe {
	int lock;
	struct hdm_block *slots;
	uint64_t mask; /* capacity - 1; 0 with no slots yet */
	uint64_t count;
} __attribute__((aligned(64)));

static struct stripe stripes[NSTRIPES];

/*
 * The slot of a block keeps address order within windows of as many
 * 16-byte units as the stripe has slots (addr >> 4, plus a hash of the
 * window: each window is a rotation of the table), and the MB picks the
 * stripe: what an allocator hands out in sequence, and a GC frees in
 * sequence, lands in neighbouring slots, which the processor prefetches,
 * where a hash of the whole address costs a cache miss per malloc and
 * per free (object-heavy loop on 3.1, cachegrind: 478,000 -> 706,000
 * more last-level misses than without the tracker). Within a window
 * the map is one to one; the window's hash keeps blocks of one size,
 * handed out at a fixed stride, off a few home slots: the MB order
 * before (addr >> 4 XOR a hash of the MB, modulo a stripe smaller than
 * an MB) put 1 KB blocks on every 64th slot of a small stripe, in long
 * runs that every probe and every backward shift walked (perf: the table
 * 13% of a malloc-heavy loop).
 */
static struct stripe *stripe_of(uintptr_t addr)
{
	return &stripes[mix((uint64_t)addr >> 20) >> 58];
}

/* the window of a block in a stripe of mask + 1 slots (mask != 0) */
static uint64_t window_of(uintptr_t addr, uint64_t mask)
{
	return ((uint64_t)addr >> 4) >> (64 - __builtin_clzll(mask));
}

static uint64_t home(uintptr_t addr, uint64_t mask)
{
	return (((uint64_t)addr >> 4) + mix(window_of(addr, mask))) & mask;
}

/* doubles (or creates) a stripe's table; 0 when mmap fails */
static int stripe_grow(struct stripe *st)
{
	uint64_t cap = st->mask ? (st->mask + 1) * 2 : STRIPE_MIN;
	struct hdm_block *ns = hdm_map(cap * sizeof *ns), *old = st->slots;
	uint64_t i, j, oldcap = st->mask ? st->mask + 1 : 0;

	if (!ns)
		return 0;
	for (i = 0; i < oldcap; i++) {
		if (!old[i].addr)
			continue;
		for (j = home(old[i].addr, cap - 1); ns[j].addr;
		     j = (j + 1) & (cap - 1))
			;
		ns[j] = old[i];
	}
	st->slots = ns;
	st->mask = cap - 1;
	hdm_unmap(old, oldcap * sizeof *old);
	return 1;
}

/* puts a block in its slot; 0 when the stripe cannot grow. A block at
 * the same address, freed behind our back (a libc-internal realloc), is
 * counted freed now. */
static int block_put(const struct hdm_block *b)
{
	struct stripe *st = stripe_of(b->addr);
	uint64_t i;
	struct hdm_block old = { 0, 0, 0, 0 };

	spin_lock(&st->lock);
	if ((st->count + 1) * 2 > (st->mask ? st->mask + 1 : 0) &&
	    !stripe_grow(st)) {
		spin_unlock(&st->lock);
		return 0;
	}
	for (i = home(b->addr, st->mask);
	     st->slots[i].addr && st->slots[i].addr != b->addr;
	     i = (i + 1) & st->mask)
		;
	if (st->slots[i].addr)
		old = st->slots[i];
	else
		st->count++;
	st->slots[i] = *b;
	spin_unlock(&st->lock);
	if (old.addr)
		hdm_site_freed(old.site, old.size);
	return 1;
}

void hdm_block_add(uintptr_t addr, size_t size, uint32_t site, uint32_t gen)
{
	struct hdm_site *s = hdm_site_at(site);
	struct hdm_block b = { addr, size, site, gen };

	/* counted even when the table cannot grow (mmap failed): it is live,
	 * and never counted freed */
	__atomic_add_fetch(&s->allocs, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&s->bytes_allocated, size, __ATOMIC_RELAXED);
	block_put(&b);
}

void hdm_block_restore(const struct hdm_block *b)
{
	if (!block_put(b))
		hdm_site_freed(b->site, b->size); /* untracked from now on */
}

int hdm_block_del(uintptr_t addr, struct hdm_block *out)
{
	struct stripe *st = stripe_of(addr);
	uint64_t i, j, k, mask, w, lastw = UINT64_MAX, lastm = 0;
	struct hdm_block *t;

	spin_lock(&st->lock);
	if (!st->mask) {
		spin_unlock(&st->lock);
		return 0;
	}
	t = st->slots;
	mask = st->mask;
	for (i = home(addr, mask); t[i].addr && t[i].addr != addr;
	     i = (i + 1) & mask)
		;
	if (!t[i].addr) {
		spin_unlock(&st->lock);
		return 0;
	}
	*out = t[i];
	/* backward shift: move up each later entry whose home is not in (i, j] */
	for (j = (i + 1) & mask; t[j].addr; j = (j + 1) & mask) {
		/* the home of each; a run's entries mostly share a window */
		w = window_of(t[j].addr, mask);
		if (w != lastw) {
			lastw = w;
			lastm = mix(w);
		}
		k = (((uint64_t)t[j].addr >> 4) + lastm) & mask;
		if ((j > i && (k <= i || k > j)) ||
		    (j < i && (k <= i && k > j))) {
			t[i] = t[j];
			i = j;
		}
	}
	t[i].addr = 0;
	st->count--;
	spin_unlock(&st->lock);
	return 1;
}

void hdm_block_each(void (*fn)(const struct hdm_block *, void *), void *arg)
{
	int s;
	uint64_t i;

	for (s = 0; s < NSTRIPES; s++) {
		struct stripe *st = &stripes[s];

		spin_lock(&st->lock);
		for (i = 0; st->mask && i <= st->mask; i++)
			if (st->slots[i].addr)
				fn(&st->slots[i], arg);
		spin_unlock(&st->lock);
	}
}

uint64_t hdm_block_count(void)
{
	uint64_t n = 0;
	int s;

	for (s = 0; s < NSTRIPES; s++)
		n += __atomic_load_n(&stripes[s].count, __ATOMIC_RELAXED);
	return n;
}

int hdm_table_ranges(uintptr_t *lo, uintptr_t *hi, int max)
{
	int s, n = 0;

	if (sites && n < max) {
		/* reserved, mostly untouched: read, it would be zero pages */
		lo[n] = (uintptr_t)sites;
		hi[n] = lo[n] + (size_t)MAX_SITES * sizeof *sites;
		n++;
	}
	for (s = 0; s < NSTRIPES && n < max; s++) {
		if (!stripes[s].mask)
			continue;
		lo[n] = (uintptr_t)stripes[s].slots;
		hi[n] = lo[n] +
			(stripes[s].mask + 1) * sizeof(struct hdm_block);
		n++;
	}
	return n;
}

void hdm_table_lock_all(void)
{
	int s;

	pthread_mutex_lock(&site_lock);
	for (s = 0; s < NSTRIPES; s++)
		spin_lock(&stripes[s].lock);
}

void hdm_table_unlock_all(void)
{
	int s;

	for (s = NSTRIPES - 1; s >= 0; s--)
		spin_unlock(&stripes[s].lock);
	pthread_mutex_unlock(&site_lock);
}

void hdm_table_reset_locks(void)
{
	int s;

	pthread_mutex_init(&site_lock, NULL);
	for (s = 0; s < NSTRIPES; s++)
		stripes[s].lock = 0;
}
