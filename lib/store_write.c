/*
 * store_write.c - writing a store file: the header, the section table
 * and the section images, through hd_outfile (outfile.c: a temporary
 * file renamed over a regular destination, a device written in place).
 * On any failure nothing partial is ever found under the final name.
 *
 * A store built on two threads or more (hd_index_options.jobs) into a
 * temporary file: the file is given its blocks (fallocate), and two
 * threads copy the sections into it through mappings of 4 MiB windows
 * (no more than two windows in memory; pwrite where a window cannot be
 * mapped), the second thread first
 * computing the stats summary (the last section, so that no other
 * section's place depends on its size); each window's writeback starts
 * once it is copied, so the final fsync finds little left to do. The
 * summary follows with pwrite, then the header. Otherwise (one thread,
 * a device, a FIFO, standard output, a file system that cannot reserve
 * blocks) the summary is computed first and everything written in
 * order. The bytes are the same either way.
 */
#define _GNU_SOURCE /* fallocate, sync_file_range (Linux) */
#include "store_format.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#define TABLE_MAX \
	(HD__STORE_HEADER + HD__STORE_ENTRY * (HD__SEC__COUNT - 1))

/* Is section id written? Optional ones only when present. */
static int present(const hd_store *s, int id)
{
	return id < HD__SEC__REQUIRED || s->sec[id];
}

static size_t table_bytes(const hd_store *s)
{
	size_t n = HD__STORE_HEADER;
	int id;

	for (id = 1; id < HD__SEC__COUNT; id++)
		n += present(s, id) ? HD__STORE_ENTRY : 0;
	return n;
}

static uint64_t align8(uint64_t x)
{
	return (x + HD__STORE_ALIGN - 1) & ~(uint64_t)(HD__STORE_ALIGN - 1);
}

/* The header and section table (and, if off, each present section's
 * offset); sections follow in id order. Returns the file's size. */
static uint64_t layout(const hd_store *s, unsigned char *head,
		       uint64_t *off)
{
	size_t tb = table_bytes(s);
	uint64_t pos = align8(tb);
	unsigned char *e = head + HD__STORE_HEADER;
	int id;

	memset(head, 0, tb);
	memcpy(head, HD__STORE_MAGIC, HD__STORE_MAGIC_LEN);
	hd__put_le32(head + 8, HD__STORE_VERSION);
	hd__put_le32(head + 12, (uint32_t)((tb - HD__STORE_HEADER) /
					   HD__STORE_ENTRY));
	for (id = 1; id < HD__SEC__COUNT; id++) {
		if (!present(s, id))
			continue;
		hd__put_le32(e, (uint32_t)id);
		hd__put_le32(e + 4, id < HD__SEC__REQUIRED ?
					    0 : HD__SECF_OPTIONAL);
		hd__put_le64(e + 8, pos);
		hd__put_le64(e + 16, s->len[id]);
		if (off)
			off[id] = pos;
		pos = align8(pos + s->len[id]);
		e += HD__STORE_ENTRY;
	}
	hd__put_le64(head + 16, pos);
	return pos;
}

static int write_store(hd_outfile *o, const hd_store *s, hd_error *err)
{
	static const unsigned char zeros[HD__STORE_ALIGN];
	unsigned char head[TABLE_MAX];
	uint64_t pos = table_bytes(s);
	int id, rc;

	layout(s, head, NULL);
	if ((rc = hd_outfile_write(o, head, (size_t)pos, err)))
		return rc;
	for (id = 1; id < HD__SEC__COUNT; id++) {
		if (!present(s, id))
			continue;
		if ((rc = hd_outfile_write(o, zeros,
					   (size_t)(align8(pos) - pos), err)))
			return rc;
		pos = align8(pos);
		if (s->len[id] > SIZE_MAX)
			return hd__error(err, HD_ENOMEM, "out of memory");
		if ((rc = hd_outfile_write(o, s->sec[id], (size_t)s->len[id],
					   err)))
			return rc;
		pos += s->len[id];
	}
	return hd_outfile_write(o, zeros, (size_t)(align8(pos) - pos), err);
}

/* ---- the mapped temporary file ---- */

struct mapped {
	const hd_store *s;
	const hd_store *w;      /* what is written */
	const uint64_t *off;    /* its sections' offsets */
	int fd;
	size_t len;             /* the bytes copied: [0, len) */
	size_t nwin;            /* windows of WINDOW bytes */
	size_t next;            /* the next window to copy (atomic) */
	int werrno;             /* a window that could not be written */
	/* the summary, made by the second thread */
	unsigned char *sum;
	size_t sum_len;
	int sum_rc;
	hd_error sum_err;
};

/* A window of the file, mapped and unmapped on its own, so that no more
 * than two are in memory at once. */
#define WINDOW ((size_t)4 << 20)

static int pwrite_all(int fd, const void *buf, size_t n, uint64_t at);

/* Copies the parts of w's sections that lie in window i (written with
 * pwrite where the window cannot be mapped): 0 or an errno. */
static int copy_window(struct mapped *m, size_t i)
{
	size_t at = i * WINDOW, n = m->len - at < WINDOW ? m->len - at :
							   WINDOW;
	uint64_t from, to;
	unsigned char *map;
	int id;

	map = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, m->fd,
		   (off_t)at);
	for (id = 1; id < HD__SEC__COUNT; id++) {
		if (!present(m->w, id) || !m->w->len[id])
			continue;
		from = m->off[id] > at ? m->off[id] : at;
		to = m->off[id] + m->w->len[id];
		to = to < at + n ? to : at + n;
		if (from >= to)
			continue;
		if (map != MAP_FAILED)
			memcpy(map + (from - at),
			       m->w->sec[id] + (from - m->off[id]),
			       (size_t)(to - from));
		else if (pwrite_all(m->fd, m->w->sec[id] + (from - m->off[id]),
				    (size_t)(to - from), from))
			return errno;
	}
	if (map != MAP_FAILED)
		munmap(map, n);
#ifdef SYNC_FILE_RANGE_WRITE
	/* the disk starts on it while the rest is copied */
	sync_file_range(m->fd, (off_t)at, (off_t)n, SYNC_FILE_RANGE_WRITE);
#endif
	return 0;
}

static void copy_windows(struct mapped *m)
{
	size_t i;
	int e;

	while ((i = __atomic_fetch_add(&m->next, 1, __ATOMIC_RELAXED)) <
	       m->nwin)
		if ((e = copy_window(m, i)))
			__atomic_store_n(&m->werrno, e, __ATOMIC_RELAXED);
}

static void *summary_thread(void *arg)
{
	struct mapped *m = arg;

	m->sum_rc = hd__store_stats_image(m->s, &m->sum, &m->sum_len,
					  &m->sum_err);
	copy_windows(m);
	return NULL;
}

static int pwrite_all(int fd, const void *buf, size_t n, uint64_t at)
{
	const unsigned char *p = buf;
	ssize_t k;

	while (n) {
		k = pwrite(fd, p, n, (off_t)at);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			if (!k)
				errno = EIO;
			return -1;
		}
		p += k;
		n -= (size_t)k;
		at += (uint64_t)k;
	}
	return 0;
}

/* The blocks of [0, len) of fd, so that no store into its mapping can
 * fail for want of space (a SIGBUS): 0, or -1 where that cannot be
 * promised. */
static int reserve(int fd, size_t len)
{
#if defined(__linux__)
	int rc;

	do
		rc = fallocate(fd, 0, 0, (off_t)len);
	while (rc != 0 && errno == EINTR);
	return rc;
#else
	(void)fd;
	(void)len;
	return -1;
#endif
}

#define MAP_NO 1 /* write_mapped: written in order instead */

/*
 * w (s with a placeholder summary when s has none) into the temporary
 * file fd: 0, an error, or MAP_NO (nothing written, the file empty) when
 * the file cannot be given its blocks.
 */
static int write_mapped(int fd, const hd_store *s, hd_store *w,
			const char *path, hd_error *err)
{
	static const unsigned char zeros[HD__STORE_ALIGN];
	unsigned char head[TABLE_MAX];
	uint64_t off[HD__SEC__COUNT], end;
	struct mapped m;
	pthread_t tid;
	int own_sum = !s->sec[HD__SEC_STATS], started = 0, rc = 0;

	memset(&m, 0, sizeof(m));
	m.s = s;
	m.w = w;
	m.off = off;
	m.fd = fd;
	end = layout(w, head, off);
	/* the summary is last: what is copied ends where it begins */
	m.len = own_sum ? off[HD__SEC_STATS] : end;
	if (end > SIZE_MAX / 2)
		return MAP_NO;
	m.nwin = (m.len + WINDOW - 1) / WINDOW;
	if (reserve(fd, m.len) != 0)
		return ftruncate(fd, 0) == 0 ?
			       MAP_NO :
			       hd__error_sys(err, errno,
					     "cannot write '%s': %s", path,
					     strerror(errno));
	if (own_sum)
		started = pthread_create(&tid, NULL, summary_thread, &m) == 0;
	if (own_sum && !started)
		summary_thread(&m);
	copy_windows(&m);
	if (started)
		pthread_join(tid, NULL);
	if (own_sum && m.sum_rc) {
		*err = m.sum_err;
		rc = m.sum_rc;
		goto out;
	}
	if (m.werrno) {
		rc = hd__error_sys(err, m.werrno, "cannot write '%s': %s",
				   path, strerror(m.werrno));
		goto out;
	}
	if (own_sum) {
		w->sec[HD__SEC_STATS] = m.sum;
		w->len[HD__SEC_STATS] = m.sum_len;
		end = layout(w, head, off);
	}
	if ((own_sum &&
	     (pwrite_all(fd, m.sum, m.sum_len, off[HD__SEC_STATS]) ||
	      pwrite_all(fd, zeros,
			 (size_t)(end - off[HD__SEC_STATS] - m.sum_len),
			 off[HD__SEC_STATS] + m.sum_len))) ||
	    pwrite_all(fd, head, table_bytes(w), 0))
		rc = hd__error_sys(err, errno, "cannot write '%s': %s", path,
				   strerror(errno));
out:
	hd__free(m.sum, m.sum_len);
	w->sec[HD__SEC_STATS] = s->sec[HD__SEC_STATS];
	w->len[HD__SEC_STATS] = s->len[HD__SEC_STATS];
	return rc;
}

int hd_store_write(const hd_store *s, const char *path, hd_error *err)
{
	static const unsigned char placeholder[8];
	hd_outfile *o = NULL;
	hd_store_info si;
	hd_store w;
	unsigned char *sum = NULL;
	size_t sum_len = 0;
	int rc, fd;

	HD_ASSERT_ARG(s && path);
	/* the store holds the dump's strings: it gets the dump's mode */
	hd_store_info_get(&si, s);
	if ((rc = hd_outfile_open(&o, path, si.source_path, 0, err)))
		goto out;
	/* every written store carries the stats summary (store_stats.c):
	 * a shallow copy of s that has it is what gets written */
	w = *s;
	if (s->jobs > 1 && (fd = hd__outfile_fd(o)) >= 0) {
		if (!s->sec[HD__SEC_STATS]) {
			w.sec[HD__SEC_STATS] = placeholder;
			w.len[HD__SEC_STATS] = 0;
		}
		rc = write_mapped(fd, s, &w, path, err);
		if (rc != MAP_NO) {
			hd__timing("write");
			goto commit;
		}
		w = *s;
		rc = 0;
	}
	if (!s->sec[HD__SEC_STATS]) {
		if ((rc = hd__store_stats_image(s, &sum, &sum_len, err)))
			goto out;
		w.sec[HD__SEC_STATS] = sum;
		w.len[HD__SEC_STATS] = sum_len;
		hd__timing("summary");
	}
	rc = write_store(o, &w, err);
	hd__timing("write");
commit:
	if (!rc) {
		rc = hd_outfile_commit(o, err);
		hd__timing("commit");
	}
out:
	hd_outfile_free(o);
	hd__free(sum, sum_len);
	return rc;
}
