/*
 * store_spill.c - a built store's sections moved out of the process's
 * memory while the build goes on (hd_store_spill): each section the
 * store owns in memory is written to an unnamed temporary file and
 * mapped read-only in its place. What a later step reads of it (the
 * dominator tree its edges, the views their columns) the kernel reads
 * back from the page cache; the rest never comes back into the
 * process, and hd_store_write() copies it to the store with pread
 * (hd__store_copy), not through the mapping.
 *
 * The file is made with O_TMPFILE: it has no name at any moment, so no
 * other user can have planted one, see it or open it, and it is gone
 * with the process however the process ends. Where the file system
 * cannot make such a file, nothing is spilled and the store stays in
 * memory (the same store, with more memory).
 */
#define _GNU_SOURCE /* O_TMPFILE (Linux) */
#include "store_format.h"

#include <errno.h>
#include <fcntl.h>
#ifdef __GLIBC__
#include <malloc.h> /* malloc_trim */
#endif
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* Sections smaller than this stay in memory: not worth a mapping
 * (lowered only by tests). */
size_t hd__spill_min = (size_t)1 << 20;

static uint64_t page_up(uint64_t x)
{
	uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE);

	return (x + pg - 1) / pg * pg;
}

/* The unnamed file in dir (else $TMPDIR, else /tmp): 0, 1 when the
 * file system cannot make one (nothing is spilled), or an error. */
int hd__store_spill_open(hd_store *s, const char *dir, hd_error *err)
{
	/* (a sanitized build reads stores into the heap, where the
	 * sanitizer sees every read: its store stays there too) */
#if defined(O_TMPFILE) && !defined(HD_NO_MMAP)
	int fd;

	if (!dir || !*dir)
		dir = getenv("TMPDIR");
	if (!dir || !*dir)
		dir = "/tmp";
	fd = open(dir, O_TMPFILE | O_RDWR | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		if (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)
			return 1;
		return hd__error_sys(err, errno,
				     "cannot make a temporary file in '%s': %s",
				     dir, strerror(errno));
	}
	s->spill_fd = fd;
	s->spilling = 1;
	s->spill_end = 0;
	return 0;
#else
	(void)s;
	(void)dir;
	(void)err;
	return 1;
#endif
}

int hd__store_spill_put(hd_store *s, const void *p, size_t n, uint64_t *at)
{
	uint64_t len = page_up(n);

	*at = __atomic_fetch_add(&s->spill_end, len, __ATOMIC_RELAXED);
	return hd__pwrite_all(s->spill_fd, p, n, *at);
}

/* len bytes at at (a page's start) of the spill file, mapped read-only,
 * or NULL with errno. */
static void *map_at(const hd_store *s, uint64_t at, size_t len)
{
	void *p = mmap(NULL, len, PROT_READ, MAP_SHARED, s->spill_fd,
		       (off_t)at);

	return p == MAP_FAILED ? NULL : p;
}

const unsigned char *hd__store_spill_map(const hd_store *s, uint64_t at,
					 size_t len)
{
	void *p = map_at(s, at, len);

	if (p)
		(void)madvise(p, len, MADV_SEQUENTIAL);
	return p;
}

/* Section id (owned in memory, at least hd__spill_min bytes) into the file
 * and mapped in place of its image, which is freed: 0 or an error (the
 * section then stays in memory). */
static int spill_one(hd_store *s, int id, hd_error *err)
{
	uint64_t at, len = s->len[id];
	void *m;

	if (hd__store_spill_put(s, s->sec[id], (size_t)len, &at))
		return hd__error_sys(err, errno,
				     "cannot write a temporary file: %s",
				     strerror(errno));
	if (!(m = map_at(s, at, (size_t)len)))
		return hd__error_sys(err, errno,
				     "cannot map a temporary file: %s",
				     strerror(errno));
	/* the one pointer into a section the store keeps (fill_info's) */
	if (id == HD__SEC_STRINGS && s->info.source_path >=
					     (const char *)s->sec[id] &&
	    s->info.source_path < (const char *)s->sec[id] + len)
		s->info.source_path = (const char *)m +
				      (s->info.source_path -
				       (const char *)s->sec[id]);
	hd__free(s->own[id], s->own_len[id]);
	s->own[id] = NULL;
	s->own_len[id] = 0;
	s->sec[id] = m;
	s->spill_map[id] = m;
	s->spill_off[id] = at;
	return 0;
}

static int spill_all(hd_store *s, const char *dir, hd_error *err)
{
	int id, rc;

	/* what the last step read of the spilled sections: out of the
	 * process (the page cache keeps it) */
	for (id = 1; id < HD__SEC__COUNT; id++)
		if (s->spill_map[id])
			(void)madvise(s->spill_map[id], (size_t)s->len[id],
				      MADV_DONTNEED);
	for (id = 1; id < HD__SEC__COUNT; id++) {
		if (!s->own[id] || s->sec[id] != s->own[id] ||
		    !s->len[id] || s->len[id] < hd__spill_min ||
		    s->len[id] > SIZE_MAX)
			continue;
		if (!s->spilling && (rc = hd__store_spill_open(s, dir, err)))
			return rc == 1 ? 0 : rc;
		if ((rc = spill_one(s, id, err)))
			return rc;
	}
#ifdef __GLIBC__
	/* the images freed here, and what the step before freed, given
	 * back (each build thread's arena keeps its own otherwise) */
	malloc_trim(0);
#endif
	return 0;
}

int hd_store_spill(hd_store *s, const char *dir, hd_error *err)
{
	HD_ASSERT_ARG(s);
	if (s->map || s->buf)
		return hd__error(err, HD_EINVAL,
				 "invalid argument: an opened store");
	s->spill_more = 1;
	return spill_all(s, dir, err);
}

void hd__store_spill_more(hd_store *s)
{
	hd_error e;

	/* a failure leaves the rest in memory: only memory is lost */
	if (s->spilling && s->spill_more)
		(void)spill_all(s, NULL, &e);
}

void hd__store_spill_drop(hd_store *s, int sid)
{
	if (!s->spill_map[sid])
		return;
	munmap(s->spill_map[sid], (size_t)s->len[sid]);
	s->spill_map[sid] = NULL;
	s->sec[sid] = NULL;
	s->len[sid] = 0;
}

void hd__store_spill_release(hd_store *s)
{
	int id;

	if (!s->spilling)
		return;
	for (id = 1; id < HD__SEC__COUNT; id++)
		hd__store_spill_drop(s, id);
	close(s->spill_fd);
	s->spilling = 0;
}
