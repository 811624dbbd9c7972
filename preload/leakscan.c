/*
 * preload/leakscan.c - chap's "leaked", in the forked child of a
 * snapshot (snapshot.c forks, waits, and renames the file after): the
 * live blocks of the side table sorted by address; every writable
 * private mapping of /proc/self/maps read as roots, but for the blocks
 * themselves (read only once reached), the tracker's own tables, and the
 * part of this thread's stack below the stack pointer; then, from the
 * blocks the roots point into (interior pointers count: a binary search
 * of the starts), the blocks those point into, by an explicit stack. What
 * is never reached is reported by site. Allocates nothing: mmap only.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "hdm.h"

struct rec {
	uintptr_t addr;
	uint64_t size;
	uint64_t site;
};

struct scan {
	uintptr_t *start, *end;
	uint32_t *site;
	uint8_t *mark;
	uint32_t *stack;
	uint64_t n, top, scanned;
	uintptr_t min, max;
	struct rec *recs;
	uint64_t filled;
};

#define MAX_EXCL 96
static uintptr_t excl_lo[MAX_EXCL], excl_hi[MAX_EXCL];
static int nexcl;
static sigjmp_buf fault_jmp;

static void on_fault(int sig)
{
	siglongjmp(fault_jmp, sig);
}

static void collect(const struct hdm_block *b, void *arg)
{
	struct scan *s = arg;

	if (s->filled < s->n) {
		s->recs[s->filled].addr = b->addr;
		s->recs[s->filled].size = b->size;
		s->recs[s->filled].site = b->site;
		s->filled++;
	}
}

/* LSD radix sort of the records by address, 16 bits a pass */
static void sort_recs(struct rec *a, struct rec *tmp, uint64_t n)
{
	static uint64_t count[65536];
	int shift;

	for (shift = 0; shift < 64; shift += 16) {
		uint64_t i, sum = 0, any = 0;

		for (i = 0; i < n; i++)
			any |= a[i].addr >> shift;
		if (!any)
			break;
		memset(count, 0, sizeof count);
		for (i = 0; i < n; i++)
			count[(a[i].addr >> shift) & 0xffff]++;
		for (i = 0; i < 65536; i++) {
			uint64_t c = count[i];

			count[i] = sum;
			sum += c;
		}
		for (i = 0; i < n; i++)
			tmp[count[(a[i].addr >> shift) & 0xffff]++] = a[i];
		memcpy(a, tmp, n * sizeof *a);
	}
}

static void consider(struct scan *s, uintptr_t v)
{
	uint64_t lo = 0, hi = s->n;

	if (v < s->min || v >= s->max)
		return;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (s->start[mid] <= v)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return;
	lo--;
	if (v < s->end[lo] && !s->mark[lo]) {
		s->mark[lo] = 1;
		s->stack[s->top++] = (uint32_t)lo;
	}
}

static void scan_words(struct scan *s, uintptr_t lo, uintptr_t hi)
{
	const uintptr_t *p;

	lo = (lo + sizeof(uintptr_t) - 1) & ~(uintptr_t)(sizeof(uintptr_t) - 1);
	if (hi <= lo)
		return;
	s->scanned += hi - lo;
	for (p = (const uintptr_t *)lo; (uintptr_t)(p + 1) <= hi; p++)
		consider(s, *p);
}

/* [lo, hi) as roots, but for the blocks in it */
static void scan_gaps(struct scan *s, uintptr_t lo, uintptr_t hi)
{
	uint64_t a = 0, b = s->n;

	/* the first block ending after lo */
	while (a < b) {
		uint64_t mid = a + (b - a) / 2;

		if (s->end[mid] <= lo)
			a = mid + 1;
		else
			b = mid;
	}
	for (; lo < hi && a < s->n && s->start[a] < hi; a++) {
		if (s->start[a] > lo)
			scan_words(s, lo, s->start[a]);
		if (s->end[a] > lo)
			lo = s->end[a];
	}
	if (lo < hi)
		scan_words(s, lo, hi);
}

/* a root region, but for the excluded ranges (the tracker's own) */
static void scan_region(struct scan *s, uintptr_t lo, uintptr_t hi)
{
	int i;

	for (i = 0; i < nexcl && lo < hi; i++) {
		if (excl_hi[i] <= lo || excl_lo[i] >= hi)
			continue;
		if (excl_lo[i] > lo)
			scan_gaps(s, lo, excl_lo[i]);
		lo = excl_hi[i];
	}
	if (lo < hi)
		scan_gaps(s, lo, hi);
}

static void add_excl(uintptr_t lo, uintptr_t hi)
{
	int i, j;

	if (nexcl >= MAX_EXCL || lo >= hi)
		return;
	for (i = 0; i < nexcl && excl_lo[i] < lo; i++)
		;
	for (j = nexcl; j > i; j--) {
		excl_lo[j] = excl_lo[j - 1];
		excl_hi[j] = excl_hi[j - 1];
	}
	excl_lo[i] = lo;
	excl_hi[i] = hi;
	nexcl++;
}

/* /proc/self/maps, whole, into a mapping of its own */
static char *read_maps(size_t *len, size_t *cap)
{
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	size_t c = 1 << 20, n = 0;
	char *buf;

	if (fd < 0)
		return NULL;
	for (;;) {
		ssize_t r;

		if (!(buf = hdm_map(c))) {
			close(fd);
			return NULL;
		}
		n = 0;
		lseek(fd, 0, SEEK_SET);
		while ((r = read(fd, buf + n, c - n - 1)) > 0)
			n += (size_t)r;
		if (n < c - 1)
			break;
		hdm_unmap(buf, c);
		c *= 4;
	}
	close(fd);
	buf[n] = 0;
	*len = n;
	*cap = c;
	return buf;
}

/* the resident pages of [lo, hi) as roots: a page never touched is the
 * zero page (large reservations: a Ruby's shape tree, thread stacks) */
static void scan_resident(struct scan *s, uintptr_t lo, uintptr_t hi)
{
	enum { CHUNK = 4096 };
	unsigned char vec[CHUNK];
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE),
		  base = lo & ~(page - 1);

	while (base < hi) {
		uintptr_t end = base + CHUNK * page < hi ? base + CHUNK * page :
							   hi,
			  run = 0;
		size_t i, np = (end - base + page - 1) / page;

		if (mincore((void *)base, end - base, vec) < 0) {
			scan_region(s, base < lo ? lo : base, end);
			base = end;
			continue;
		}
		for (i = 0; i <= np; i++) {
			uintptr_t at = base + i * page;

			if (i < np && (vec[i] & 1)) {
				if (!run)
					run = at;
				continue;
			}
			if (run) {
				uintptr_t a = run < lo ? lo : run,
					  b = at < end ? at : end;

				scan_region(s, a, b);
				run = 0;
			}
		}
		base = end;
	}
}

/* the roots: every writable private mapping, read-protected ones aside */
static void scan_roots(struct scan *s, char *maps, uintptr_t sp)
{
	char *line = maps, *nl;
	struct sigaction sa, old_segv, old_bus;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_fault;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, &old_segv);
	sigaction(SIGBUS, &sa, &old_bus);
	for (; *line; line = nl + 1) {
		unsigned long lo, hi;
		char perms[8], path[64] = "";
		volatile uintptr_t from;

		nl = strchr(line, '\n');
		if (!nl)
			break;
		*nl = 0;
		if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %63s", &lo, &hi,
			   perms, path) < 3)
			continue;
		if (perms[0] != 'r' || perms[1] != 'w' || perms[3] != 'p')
			continue;
		if (strcmp(path, "[vvar]") == 0 ||
		    strcmp(path, "[vsyscall]") == 0)
			continue;
		from = lo;
		if (sp >= lo && sp < hi)
			from = sp; /* this thread's stack: its live part */
		if (sigsetjmp(fault_jmp, 1) == 0)
			scan_resident(s, from, hi);
	}
	sigaction(SIGSEGV, &old_segv, NULL);
	sigaction(SIGBUS, &old_bus, NULL);
}

/* every reached block's contents, until none is left */
static void mark_all(struct scan *s)
{
	while (s->top) {
		uint32_t k = s->stack[--s->top];

		scan_words(s, s->start[k], s->end[k]);
	}
}

static const char *const blind[] = {
	"addresses held only as Ruby Integers",
	"registers of threads other than the scanning one",
	"pointers not aligned to 8 bytes, or stored encoded (tagged, XORed, compressed)",
	"blocks allocated before the tracker started or by the tracker itself",
	"memory mapped without write permission or shared",
};

static void write_result(struct scan *s, int fd, const char *const *names,
			 uint32_t nsites, double secs)
{
	struct hdm_out *o = hdm_map(sizeof *o);
	uint64_t *blocks = hdm_map((size_t)(nsites + 1) * 2 * sizeof(uint64_t)),
		 *bytes, ub = 0, un = 0, i;
	size_t k;

	if (!o || !blocks)
		return;
	bytes = blocks + nsites + 1;
	for (i = 0; i < s->n; i++) {
		if (s->mark[i])
			continue;
		un++;
		ub += s->end[i] - s->start[i];
		if (s->site[i] < nsites) {
			blocks[s->site[i]]++;
			bytes[s->site[i]] += s->end[i] - s->start[i];
		}
	}
	hdm_out_init(o, fd);
	hdm_out_str(o, "{\"type\":\"leakscan\",\"allocator\":");
	hdm_out_json(o, hdm_allocator);
	hdm_out_str(o, ",\"live_blocks\":");
	hdm_out_u64(o, s->n);
	hdm_out_str(o, ",\"scanned_bytes\":");
	hdm_out_u64(o, s->scanned);
	hdm_out_str(o, ",\"unreached_blocks\":");
	hdm_out_u64(o, un);
	hdm_out_str(o, ",\"unreached_bytes\":");
	hdm_out_u64(o, ub);
	hdm_out_str(o, ",\"seconds\":");
	hdm_out_double(o, secs, 3);
	hdm_out_str(o, ",\"blind\":[");
	for (k = 0; k < sizeof blind / sizeof blind[0]; k++) {
		if (k)
			hdm_out_str(o, ",");
		hdm_out_json(o, blind[k]);
	}
	hdm_out_str(o, "]}\n");
	for (i = 0; i < nsites; i++) {
		if (!blocks[i])
			continue;
		hdm_out_str(o, "{\"type\":\"leaked\",\"site\":");
		hdm_out_json(o, names[i]);
		hdm_out_str(o, hdm_site_at((uint32_t)i)->kind == HDM_KIND_RUBY ?
				       ",\"kind\":\"ruby\"" :
				       ",\"kind\":\"c\"");
		hdm_out_str(o, ",\"blocks\":");
		hdm_out_u64(o, blocks[i]);
		hdm_out_str(o, ",\"bytes\":");
		hdm_out_u64(o, bytes[i]);
		hdm_out_str(o, "}\n");
	}
	hdm_out_flush(o);
}

int hdm_leakscan_child(int fd, const char *const *names, uint32_t nsites)
{
	struct scan s;
	struct timespec t0, t1;
	uint64_t n = hdm_block_count(), i;
	size_t per = sizeof(struct rec) * 2 + sizeof(uintptr_t) * 2 +
		     sizeof(uint32_t) * 2 + 1;
	size_t bytes = (size_t)(n + 1) * per + 64, mlen = 0, mcap = 0;
	char *mem, *maps;
	uintptr_t lo[64], hi[64];
	int k, nt;
	volatile int here = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	hdm_guard = 1;
	memset(&s, 0, sizeof s);
	if (!(mem = hdm_map(bytes)))
		return -1;
	s.recs = (struct rec *)mem;
	s.n = n;
	hdm_block_each(collect, &s);
	s.n = s.filled;
	sort_recs(s.recs, s.recs + n + 1, s.n);
	s.start = (uintptr_t *)(s.recs + 2 * (n + 1));
	s.end = s.start + n + 1;
	s.site = (uint32_t *)(s.end + n + 1);
	s.stack = s.site + n + 1;
	s.mark = (uint8_t *)(s.stack + n + 1);
	for (i = 0; i < s.n; i++) {
		s.start[i] = s.recs[i].addr;
		s.end[i] = s.recs[i].addr +
			   (s.recs[i].size ? s.recs[i].size : 1);
		s.site[i] = (uint32_t)s.recs[i].site;
	}
	s.min = s.n ? s.start[0] : 0;
	s.max = 0;
	for (i = 0; i < s.n; i++)
		if (s.end[i] > s.max)
			s.max = s.end[i];
	/* not roots: the tracker's tables (every block's address is there),
	 * this scan's arrays */
	nt = hdm_table_ranges(lo, hi, 64);
	for (k = 0; k < nt; k++)
		add_excl(lo[k], hi[k]);
	add_excl((uintptr_t)mem, (uintptr_t)mem + bytes);
	maps = read_maps(&mlen, &mcap);
	if (!maps)
		return -1;
	add_excl((uintptr_t)maps, (uintptr_t)maps + mcap);
	scan_roots(&s, maps, (uintptr_t)&here);
	mark_all(&s);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	write_result(&s, fd, names, nsites,
		     (double)(t1.tv_sec - t0.tv_sec) +
			     (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	return 0;
}
