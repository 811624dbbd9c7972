/*
 * filemap.c - read-only mappings of the files the library reads whole:
 * a plain dump (reader.c, pscan.c) and a store (store.c).
 *
 * A dump read through a mapping is read where the page cache holds it:
 * no copy into a buffer (read(2) copied every byte, 4 ms of 45 for 0.1 GB
 * on two threads, whose reads of one file also waited on each other).
 * The pages the readers of a file have gone past are dropped from the
 * mapping as they go (MADV_DONTNEED: the page cache keeps them, a later
 * touch maps them again), each reader every hd__map_budget / readers
 * bytes: about HD__MAP_BUDGET of the file stays mapped at any dump size
 * and any number of threads. (Each drop interrupts the other threads of
 * the process to flush their TLBs: 4 MiB windows cost 0.4 ms more than
 * 16 MiB ones on a 0.1 GB dump read by two threads.)
 *
 * Whether to read a dump file mapped at all is decided from how the page
 * cache holds it (hd__map_pays): mapped, a file cached in large folios
 * (read ahead, or written in large blocks) reads faster than with
 * read(2), 2 ms of 23 on the 0.1 GB bench dump; one cached in 4 KiB
 * pages, as Ruby writes a dump, reads slower: 299 ms against 217 for
 * 1 GB, each of its pages a new stream for the memory to start.
 *
 * A file that another program truncates while it is mapped raises SIGBUS
 * where its lost pages are read. Every mapping is in a registry of fixed
 * slots that hd_mapped_path() reads from a signal handler, so that the
 * handler can say which file shrank (the heapdump program does).
 *
 * Builds with HD_NO_MMAP (the sanitizers') map nothing: every caller
 * falls back to reading into memory that the sanitizers see.
 */
#include "util_int.h"

#include <fcntl.h>
#include <limits.h>
#ifndef HD_NO_MMAP
#include <sys/mman.h>
#include <unistd.h>
#endif

size_t hd__map_budget = HD__MAP_BUDGET;
int hd__map_policy;

/* ---- the registry ---- */

#define MAP_SLOTS 32
static int map_state[MAP_SLOTS];
static const char *map_base[MAP_SLOTS];
static size_t map_len[MAP_SLOTS];
static char map_path[MAP_SLOTS][PATH_MAX];

#ifndef HD_NO_MMAP
/* Registers [base, base + len) as path's mapping (a path too long, or a
 * full registry, only leaves it nameless in a SIGBUS handler). */
static void map_add(const char *base, size_t len, const char *path)
{
	size_t n = strlen(path);
	int i;

	if (n >= PATH_MAX || (i = hd__slot_take(map_state, MAP_SLOTS)) < 0)
		return;
	memcpy(map_path[i], path, n + 1);
	map_base[i] = base;
	map_len[i] = len;
	hd__slot_set(&map_state[i], HD__SLOT_LIVE);
}

static void map_remove(const char *base)
{
	int i;

	for (i = 0; i < MAP_SLOTS; i++)
		if (hd__slot_live(&map_state[i]) && map_base[i] == base) {
			hd__slot_set(&map_state[i], HD__SLOT_FREE);
			return;
		}
}
#endif

/* Async-signal-safe: atomic loads and compares only. */
const char *hd_mapped_path(const void *addr)
{
	const char *a = addr;
	int i;

	for (i = 0; i < MAP_SLOTS; i++)
		if (hd__slot_live(&map_state[i]) && a >= map_base[i] &&
		    (size_t)(a - map_base[i]) < map_len[i])
			return map_path[i];
	return NULL;
}

/* ---- whether a mapping pays ---- */

#define PROBE_BLOCK ((size_t)2 << 20)  /* a PMD's worth: the largest folio */
#define PROBE_PAGE 4096
#define PROBE_LARGE 32                 /* pages: a folio of 128 KiB or more */

#ifndef HD_NO_MMAP
/* The pages of [p, p + n) (page-aligned) that are mapped, from pm, an
 * open /proc/self/pagemap; -1 if it cannot be read. */
static long mapped_pages(int pm, const char *p, size_t n)
{
	uint64_t e[PROBE_BLOCK / PROBE_PAGE];
	size_t i, k = n / PROBE_PAGE;
	long got = 0;

	if (k > sizeof(e) / sizeof(e[0]))
		k = sizeof(e) / sizeof(e[0]);
	if (pread(pm, e, k * sizeof(e[0]),
		  (off_t)((uintptr_t)p / PROBE_PAGE * sizeof(e[0]))) !=
	    (ssize_t)(k * sizeof(e[0])))
		return -1;
	for (i = 0; i < k; i++)
		got += (long)(e[i] >> 63); /* bit 63: present */
	return got;
}
#endif

int hd__map_pays(const char *map, size_t len)
{
#ifndef HD_NO_MMAP
	volatile const char *v = map;
	int pm, large = 0, k;
	size_t off;
	long n;

	if (hd__map_policy)
		return hd__map_policy > 0;
	if (len < HD__MAP_PROBE_MIN)
		return 1;
	if ((pm = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	for (k = 1; k <= 3; k++) {
		off = len / 4 * (size_t)k / PROBE_BLOCK * PROBE_BLOCK;
		(void)v[off]; /* maps the page's folio, or 64 KiB around */
		n = mapped_pages(pm, map + off, len - off < PROBE_BLOCK ?
						       len - off :
						       PROBE_BLOCK);
		large += n > PROBE_LARGE;
	}
	close(pm);
	return large >= 2;
#else
	(void)map;
	(void)len;
	return 0;
#endif
}

/* ---- mappings ---- */

const char *hd__map_dump(int fd, size_t len, const char *path)
{
	const char *map = hd__map_file(fd, len, path);

	if (map && !hd__map_pays(map, len)) {
		hd__unmap_file(map, len);
		map = NULL;
	}
	return map;
}

const char *hd__map_file(int fd, size_t len, const char *path)
{
#ifndef HD_NO_MMAP
	void *m;

	if (!len)
		return NULL;
	m = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED)
		return NULL;
	map_add(m, len, path);
	return m;
#else
	(void)fd;
	(void)len;
	(void)path;
	return NULL;
#endif
}

void hd__unmap_file(const char *base, size_t len)
{
#ifndef HD_NO_MMAP
	if (!base)
		return;
	map_remove(base);
	munmap((void *)(uintptr_t)base, len);
#else
	(void)base;
	(void)len;
#endif
}

size_t hd__map_drop(const char *base, size_t from, size_t to)
{
#ifndef HD_NO_MMAP
	static size_t page;
	size_t a, b;

	if (!page) {
		long n = sysconf(_SC_PAGESIZE);

		page = n > 0 ? (size_t)n : 4096;
	}
	/* the pages before the one holding to, which is still being read
	 * (a page before from that another reader still reads is only
	 * mapped again when touched: dropping never loses a byte) */
	a = from / page * page;
	b = to / page * page;
	if (b <= a)
		return from;
	madvise((void *)(uintptr_t)(base + a), b - a, MADV_DONTNEED);
	return b;
#else
	(void)base;
	(void)to;
	return from;
#endif
}
