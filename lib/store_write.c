/*
 * store_write.c - writing a store file: the header, the section table
 * and the section images, through hd_outfile (outfile.c: a temporary
 * file renamed over a regular destination, a device written in place).
 * On any failure nothing partial is ever found under the final name.
 *
 * A store built on two threads or more (hd_index_options.jobs) into a
 * temporary file: the file is given its blocks (fallocate), and the
 * sections are written into it at their places with pwrite straight from
 * their images while a second thread computes the stats summary (the
 * last section, so that no other section's place depends on its size);
 * the disk is started on every 4 MiB written (sync_file_range, Linux),
 * so the final fsync finds little left to do. (Not through a mapping of
 * the file: each page of it mapped was first read and zero-filled by the
 * kernel, then overwritten: 8% of index's CPU on a 1 GB dump.) The
 * summary follows, then the header. Otherwise (one thread,
 * a device, a FIFO, standard output, a file system that cannot reserve
 * blocks) the summary is computed first and everything written in
 * order. The bytes are the same either way.
 */
#define _GNU_SOURCE /* fallocate, sync_file_range (Linux) */
#include "store_format.h"
#include "util/thread.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#define TABLE_MAX \
	(HD__STORE_HEADER + HD__STORE_ENTRY * (HD__SEC__COUNT - 1))

/* Is section id written? Optional ones only when present. */
static int present(const hd_store *s, int id)
{
	return id < HD__SEC__REQUIRED || s->sec[id];
}

/* The i-th section in the file (0 <= i < HD__SEC__COUNT - 1): by id,
 * but the stats summary last, so that no other section's place depends
 * on its size (write_direct computes it while the rest is written). */
static int order_at(int i)
{
	int id = i + 1;

	if (id < HD__SEC_STATS)
		return id;
	return id == HD__SEC__COUNT - 1 ? HD__SEC_STATS : id + 1;
}

#define NSEC (HD__SEC__COUNT - 1)

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
	int i, id;

	memset(head, 0, tb);
	memcpy(head, HD__STORE_MAGIC, HD__STORE_MAGIC_LEN);
	hd__put_le32(head + 8, HD__STORE_VERSION);
	hd__put_le32(head + 12, (uint32_t)((tb - HD__STORE_HEADER) /
					   HD__STORE_ENTRY));
	for (i = 0; i < NSEC; i++) {
		if (!present(s, id = order_at(i)))
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

/* What is copied at a time from a spilled section (store_spill.c): read
 * from its file with pread, never through its mapping, so that writing
 * it brings none of it back into the process. */
#define SPILL_CHUNK ((size_t)1 << 20)

/* Spilled section id of s into o. */
static int write_spilled(hd_outfile *o, const hd_store *s, int id,
			 hd_error *err)
{
	unsigned char *buf = hd__malloc(SPILL_CHUNK);
	const unsigned char *p;
	uint64_t at;
	size_t n;
	int rc = 0;

	if (!buf)
		return hd__error(err, HD_ENOMEM, "out of memory");
	for (at = 0; !rc && at < s->len[id]; at += n) {
		n = s->len[id] - at < SPILL_CHUNK ? (size_t)(s->len[id] - at) :
						    SPILL_CHUNK;
		if (!(p = hd__store_copy(s, id, at, n, buf)))
			rc = hd__error_sys(err, errno,
					   "cannot read a temporary file: %s",
					   strerror(errno));
		else
			rc = hd_outfile_write(o, p, n, err);
	}
	hd__free(buf, SPILL_CHUNK);
	return rc;
}

static int write_store(hd_outfile *o, const hd_store *s, hd_error *err)
{
	static const unsigned char zeros[HD__STORE_ALIGN];
	unsigned char head[TABLE_MAX];
	uint64_t pos = table_bytes(s);
	int i, id, rc;

	layout(s, head, NULL);
	if ((rc = hd_outfile_write(o, head, (size_t)pos, err)))
		return rc;
	for (i = 0; i < NSEC; i++) {
		if (!present(s, id = order_at(i)))
			continue;
		if ((rc = hd_outfile_write(o, zeros,
					   (size_t)(align8(pos) - pos), err)))
			return rc;
		pos = align8(pos);
		if (s->len[id] > SIZE_MAX)
			return hd__error(err, HD_ENOMEM, "out of memory");
		if ((rc = s->spill_map[id] ?
				  write_spilled(o, s, id, err) :
				  hd_outfile_write(o, s->sec[id],
						   (size_t)s->len[id], err)))
			return rc;
		pos += s->len[id];
	}
	return hd_outfile_write(o, zeros, (size_t)(align8(pos) - pos), err);
}

/* ---- the temporary file, written from two threads ---- */

struct direct {
	const hd_store *s;
	/* the summary, made by the second thread */
	unsigned char *sum;
	size_t sum_len;
	int sum_rc;
	hd_error sum_err;
};

/* What is written before the disk is told to start on it. */
#define WINDOW ((size_t)4 << 20)

/* The disk starts on [from, to) of fd while the rest is written, so that
 * the final fsync finds little left to do (Linux; elsewhere the fsync
 * does it all). */
static void start_writeback(int fd, uint64_t from, uint64_t to)
{
#ifdef SYNC_FILE_RANGE_WRITE
	if (to > from)
		sync_file_range(fd, (off64_t)from, (off64_t)(to - from),
				SYNC_FILE_RANGE_WRITE);
#else
	(void)fd;
	(void)from;
	(void)to;
#endif
}

/*
 * The sections of w (the summary too when with_stats) and their
 * padding, in order, with
 * pwrite from their images (no mapping of the file: a page of it mapped
 * is first read, zero-filled, before it is overwritten), the disk
 * started on every WINDOW written: 0, or -1 with errno.
 */
static int write_sections(int fd, const hd_store *w, const uint64_t *off,
			  int with_stats)
{
	static const unsigned char zeros[HD__STORE_ALIGN];
	uint64_t at, started = off[1], end, n;
	unsigned char *buf = NULL;
	const unsigned char *p;
	int i, id, rc = -1;

	for (i = 0; i < NSEC; i++) {
		id = order_at(i);
		if (!present(w, id) || (id == HD__SEC_STATS && !with_stats))
			continue;
		if (w->spill_map[id] && !buf && !(buf = hd__malloc(WINDOW))) {
			errno = ENOMEM;
			goto out;
		}
		for (at = 0; at < w->len[id]; at += n) {
			n = w->len[id] - at < WINDOW ? w->len[id] - at : WINDOW;
			p = w->spill_map[id] ?
				    hd__store_copy(w, id, at, (size_t)n, buf) :
				    w->sec[id] + at;
			if (!p ||
			    hd__pwrite_all(fd, p, (size_t)n, off[id] + at))
				goto out;
			if (off[id] + at + n - started >= WINDOW) {
				start_writeback(fd, started, off[id] + at + n);
				started = off[id] + at + n;
			}
		}
		end = off[id] + w->len[id];
		if (align8(end) > end &&
		    hd__pwrite_all(fd, zeros, (size_t)(align8(end) - end), end))
			goto out;
	}
	rc = 0;
out:
	hd__free(buf, WINDOW);
	return rc;
}

static void *summary_thread(void *arg)
{
	struct direct *m = arg;

	m->sum_rc = hd__store_stats_image(m->s, &m->sum, &m->sum_len,
					  &m->sum_err);
	return NULL;
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

#define MAP_NO 1 /* write_direct: written in order instead */

/*
 * w (s with a placeholder summary when s has none) into the temporary
 * file fd, its blocks reserved first: 0, an error, or MAP_NO (nothing
 * written, the file empty) when they cannot be. The sections are written
 * on this thread while a second computes the summary (the last section,
 * so that no other section's place depends on its size); the summary
 * follows, then the header.
 */
static int write_direct(int fd, const hd_store *s, hd_store *w,
			const char *path, hd_error *err)
{
	static const unsigned char zeros[HD__STORE_ALIGN];
	unsigned char head[TABLE_MAX];
	uint64_t off[HD__SEC__COUNT], end, len;
	struct direct m;
	struct hd__thread th;
	int own_sum = !s->sec[HD__SEC_STATS], started = 0, rc = 0, e;

	memset(&m, 0, sizeof(m));
	m.s = s;
	end = layout(w, head, off);
	/* the summary is last: what is written first ends where it begins */
	len = own_sum ? off[HD__SEC_STATS] : end;
	if (end > SIZE_MAX / 2)
		return MAP_NO;
	if (reserve(fd, (size_t)len) != 0)
		return ftruncate(fd, 0) == 0 ?
			       MAP_NO :
			       hd__error_sys(err, errno,
					     "cannot write '%s': %s", path,
					     strerror(errno));
	if (own_sum)
		started = hd__thread_start(&th, 1, summary_thread, &m) == 0;
	e = write_sections(fd, w, off, !own_sum) ?
		    errno :
		    0;
	if (own_sum && !started)
		summary_thread(&m);
	if (started)
		pthread_join(th.tid, NULL);
	if (e) {
		rc = hd__error_sys(err, e, "cannot write '%s': %s", path,
				   strerror(e));
		goto out;
	}
	if (own_sum && m.sum_rc) {
		*err = m.sum_err;
		rc = m.sum_rc;
		goto out;
	}
	if (own_sum) {
		w->sec[HD__SEC_STATS] = m.sum;
		w->len[HD__SEC_STATS] = m.sum_len;
		end = layout(w, head, off);
	}
	if ((own_sum &&
	     (hd__pwrite_all(fd, m.sum, m.sum_len, off[HD__SEC_STATS]) ||
	      hd__pwrite_all(fd, zeros,
			 (size_t)(end - off[HD__SEC_STATS] - m.sum_len),
			 off[HD__SEC_STATS] + m.sum_len))) ||
	    hd__pwrite_all(fd, head, table_bytes(w), 0) ||
	    hd__pwrite_all(fd, zeros, (size_t)(off[1] - table_bytes(w)),
		       table_bytes(w)))
		rc = hd__error_sys(err, errno, "cannot write '%s': %s", path,
				   strerror(errno));
out:
	hd__free(m.sum, m.sum_len);
	w->sec[HD__SEC_STATS] = s->sec[HD__SEC_STATS];
	w->len[HD__SEC_STATS] = s->len[HD__SEC_STATS];
	return rc;
}

/* s into the output o opened for path, committed. */
static int write_out(const hd_store *s, hd_outfile *o, const char *path,
		     hd_error *err)
{
	static const unsigned char placeholder[8];
	hd_store w;
	unsigned char *sum = NULL;
	size_t sum_len = 0;
	int rc = 0, fd;

	/* every written store carries the stats summary (store_stats.c):
	 * a shallow copy of s that has it is what gets written */
	w = *s;
	if (s->jobs > 1 && (fd = hd__outfile_fd(o)) >= 0) {
		if (!s->sec[HD__SEC_STATS]) {
			w.sec[HD__SEC_STATS] = placeholder;
			w.len[HD__SEC_STATS] = 0;
		}
		rc = write_direct(fd, s, &w, path, err);
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
	hd__free(sum, sum_len);
	return rc;
}

int hd_store_write(const hd_store *s, const char *path, hd_error *err)
{
	hd_outfile *o = NULL;
	hd_store_info si;
	int rc;

	HD_ASSERT_ARG(s && path);
	/* the store holds the dump's strings: it gets the dump's mode */
	hd_store_info_get(&si, s);
	if (!(rc = hd_outfile_open(&o, path, si.source_path, 0, err)))
		rc = write_out(s, o, path, err);
	hd_outfile_free(o);
	return rc;
}

int hd__store_write_replace(const hd_store *s, const char *path,
			    unsigned int mode, hd_error *err)
{
	hd_outfile *o = NULL;
	int rc;

	HD_ASSERT_ARG(s && path);
	if (!(rc = hd__outfile_open_replace(&o, path, mode, err)))
		rc = write_out(s, o, path, err);
	hd_outfile_free(o);
	return rc;
}
