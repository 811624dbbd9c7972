/*
 * pscan.c - a dump file read on several threads.
 *
 * A regular, uncompressed dump is cut into one chunk a thread, each cut
 * before a line that starts a record (the joiner never joins such a line
 * to the one before, so no record spans two chunks). Every chunk is read
 * by a range reader (reader.c) into its own accumulator, with pread into
 * a buffer that stays in the core's cache (not through a mapping of the
 * file: a mapping pays a page fault per few pages touched, and on a
 * virtual machine that costs more than the copy read() makes);
 * its problems are kept with line numbers counted in the chunk. At the
 * end the accumulators are merged in file order, and the problems passed
 * on in order with the lines of the chunks before added: the result, the
 * reports and their order are those of one reader.
 *
 * Whatever one reader would decide from the whole input is left to it:
 * any error (--strict's first bad line, a line near the 4 GiB limit), a
 * first chunk without a record (the problems held back before a first
 * record), an input that ends up not a dump, or more problems than a
 * chunk keeps, and the file is read again by one reader, which fails or
 * reports exactly as it always does. Nothing was passed on before.
 *
 * The driver (hd__pscan) serves any accumulator through its operations:
 * the stats (hd_stats_add_dump, here) and the store build
 * (store_build.c). Standard input, pipes, gzip and stores are read by one
 * streaming reader, as are all inputs with jobs <= 1.
 */
#include "hd_int.h"
#include "store_format.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_JOBS 64
#define MAX_KEPT ((size_t)1 << 16)   /* problems a chunk keeps */
#define PROGRESS_EVERY 0xffff        /* records between progress calls */

struct part {
	int fd;
	size_t len, from, stop;
	int after_records;
	const hd_read_options *ro;
	const char *name;
	const struct hd__pscan_ops *ops;
	void *acc;         /* the part's accumulator */
	hd_read_stats rs;
	hd_problem *kept;
	size_t nkept, cap;
	int over;          /* more problems than MAX_KEPT */
	int rc;
	uint64_t done;     /* bytes read, for the progress meter (atomic) */
	int *stop_all;     /* set by a part that makes the file be re-read */
	pthread_t tid;
	int started;
	/* the first part, on the calling thread, reports progress */
	const hd_scan_options *so;
	const struct part *all;
	unsigned nall;
};

static void progress(const struct part *pt)
{
	uint64_t done = 0;
	unsigned k;

	for (k = 0; k < pt->nall; k++)
		done += __atomic_load_n(&pt->all[k].done, __ATOMIC_RELAXED);
	pt->so->progress(done, pt->len, pt->so->progress_payload);
}

unsigned hd__pscan_parts;

static void keep_problem(const hd_problem *p, void *payload)
{
	struct part *pt = payload;

	if (pt->nkept == pt->cap) {
		if (pt->cap >= MAX_KEPT ||
		    hd__grow((void **)&pt->kept, &pt->cap, pt->nkept + 1,
			     sizeof(*pt->kept))) {
			pt->over = 1;
			return;
		}
	}
	pt->kept[pt->nkept++] = *p;
}

static void run_part(struct part *pt)
{
	hd_read_options o = *pt->ro;
	hd_reader *r = NULL;
	const hd_record *rec;
	hd_error err = { 0 };
	uint64_t n = 0;
	int rc;

	o.problem = keep_problem;
	o.payload = pt;
	rc = hd__reader_open_range(&r, pt->fd, pt->len, pt->from, pt->stop,
				   pt->after_records, &o, pt->name, &err);
	while (!rc && (rc = hd_reader_next(r, &rec, &err)) == 0) {
		if ((rc = pt->ops->add(pt->acc, rec, &err)))
			break;
		if (pt->over) {
			rc = HD_ELIMIT;
			break;
		}
		if ((++n & PROGRESS_EVERY) == 0) {
			__atomic_store_n(&pt->done, rec->offset - pt->from,
					 __ATOMIC_RELAXED);
			if (pt->so)
				progress(pt);
			if (__atomic_load_n(pt->stop_all, __ATOMIC_RELAXED)) {
				rc = HD_ELIMIT;
				break;
			}
		}
	}
	if (rc == HD_ITEROVER)
		rc = 0;
	if (r)
		hd_reader_stats(&pt->rs, r);
	hd_reader_free(r);
	pt->rc = rc;
	if (rc)
		__atomic_store_n(pt->stop_all, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&pt->done, pt->stop - pt->from, __ATOMIC_RELAXED);
}

static void *part_thread(void *arg)
{
	run_part(arg);
	return NULL;
}

/* The descriptor of a regular, plain dump of at least 2 bytes and its
 * size, or -1. */
static int open_dump(const char *path, size_t *len)
{
	unsigned char head[HD__STORE_MAGIC_LEN];
	struct stat sb;
	size_t n;
	int fd;

	/* a FIFO or a device is never opened here: the streaming reader
	 * opens it, once (a named pipe opened twice loses what its writer
	 * wrote to the first open, and the second waits for a writer) */
	if (strcmp(path, "-") == 0 || stat(path, &sb) != 0 ||
	    !S_ISREG(sb.st_mode) ||
	    (fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0)
		return -1;
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size < 2 ||
	    (uint64_t)sb.st_size > SIZE_MAX / 2)
		goto no;
	*len = (size_t)sb.st_size;
	n = *len < sizeof(head) ? *len : sizeof(head);
	if (pread(fd, head, n, 0) != (ssize_t)n)
		goto no;
	/* gzip and stores: the streaming reader knows them */
	if ((head[0] == 0x1f && head[1] == 0x8b) ||
	    (n == HD__STORE_MAGIC_LEN &&
	     memcmp(head, HD__STORE_MAGIC, HD__STORE_MAGIC_LEN) == 0))
		goto no;
#ifdef POSIX_FADV_SEQUENTIAL
	posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
	return fd;
no:
	close(fd);
	return -1;
}

/* Cuts [0, len) into at most jobs parts; returns their number. */
static unsigned cut_parts(struct part *pt, unsigned jobs, int fd,
			  size_t len)
{
	unsigned n = 0, k;
	size_t from = 0, at;

	for (k = 1; k <= jobs; k++) {
		at = k == jobs ? len :
				 hd__reader_cut(fd, len,
						(size_t)((double)len * k / jobs));
		if (at <= from)
			continue;
		pt[n].from = from;
		pt[n].stop = at;
		n++;
		from = at;
		if (from >= len)
			break;
	}
	return n;
}

static void merge_stats(hd_read_stats *rs, const struct part *pt,
			unsigned n, size_t len)
{
	unsigned k;

	memset(rs, 0, sizeof(*rs));
	for (k = 0; k < n; k++) {
		rs->lines += pt[k].rs.lines;
		rs->objects += pt[k].rs.objects;
		rs->roots += pt[k].rs.roots;
		rs->shapes += pt[k].rs.shapes;
		rs->others += pt[k].rs.others;
		rs->blank += pt[k].rs.blank;
		rs->skipped += pt[k].rs.skipped;
		rs->repaired += pt[k].rs.repaired;
		rs->memprof |= pt[k].rs.memprof;
	}
	rs->truncated = pt[n - 1].rs.truncated;
	rs->bytes = rs->total_bytes = len;
}

/* Would one reader call the input no dump at its end (check_dump)? */
static int looks_like_no_dump(const hd_read_stats *rs)
{
	uint64_t n = rs->objects + rs->roots + rs->shapes + rs->others;

	return !n || rs->skipped > n;
}

int hd__pscan(const char *path, const hd_scan_options *so,
	      const struct hd__pscan_ops *ops, void *payload,
	      hd_read_stats *rs, hd_error *err)
{
	struct part pt[MAX_JOBS];
	void *acc[MAX_JOBS];
	hd_read_stats total;
	size_t len = 0;
	unsigned jobs, n = 0, k;
	int stop_all = 0, again = 0, rc = 0, fd;
	uint64_t base;
	size_t i;

	hd__pscan_parts = 0;
	jobs = so->jobs > MAX_JOBS ? MAX_JOBS : so->jobs;
	if (jobs <= 1 || (fd = open_dump(path, &len)) < 0)
		return HD__PSCAN_STREAM;
	memset(pt, 0, sizeof(pt));
	n = cut_parts(pt, jobs, fd, len);
	for (k = 0; k < n; k++) {
		pt[k].fd = fd;
		pt[k].len = len;
		pt[k].after_records = k > 0;
		pt[k].ro = &so->read;
		pt[k].name = path;
		pt[k].ops = ops;
		pt[k].stop_all = &stop_all;
		pt[k].all = pt;
		pt[k].nall = n;
		pt[k].so = k == 0 && so->progress ? so : NULL;
		if (ops->part_new(&pt[k].acc, payload,
				  pt[k].stop - pt[k].from)) {
			rc = hd__error(err, HD_ENOMEM, "out of memory");
			goto out;
		}
	}
	if (so->progress)
		so->progress(0, len, so->progress_payload);
	for (k = 1; k < n; k++)
		pt[k].started = pthread_create(&pt[k].tid, NULL, part_thread,
					       &pt[k]) == 0;
	run_part(&pt[0]);
	for (k = 1; k < n; k++) {
		if (pt[k].started)
			pthread_join(pt[k].tid, NULL);
		else
			run_part(&pt[k]); /* no thread: here, in order */
	}
	merge_stats(&total, pt, n, len);
	for (k = 0; k < n; k++) {
		if (pt[k].rc)
			again = 1;
		acc[k] = pt[k].acc;
	}
	if (again || !(pt[0].rs.objects + pt[0].rs.roots + pt[0].rs.shapes +
		       pt[0].rs.others) ||
	    looks_like_no_dump(&total)) {
		rc = HD__PSCAN_STREAM;
		goto out;
	}
	/* the accumulators are the merge's now, whatever it says */
	for (k = 0; k < n; k++)
		pt[k].acc = NULL;
	close(fd);
	fd = -1;
	if ((rc = ops->merge(payload, acc, n, &total, err)))
		goto out;
	if (so->progress)
		so->progress(len, len, so->progress_payload);
	for (k = 0, base = 0; k < n; k++) {
		for (i = 0; i < pt[k].nkept && so->read.problem; i++) {
			hd_problem p = pt[k].kept[i];

			p.line += base;
			so->read.problem(&p, so->read.payload);
		}
		base += pt[k].rs.lines;
	}
	if (rs)
		*rs = total;
	hd__pscan_parts = n;
out:
	for (k = 0; k < n; k++) {
		if (pt[k].acc)
			ops->part_free(pt[k].acc);
		hd__free(pt[k].kept, pt[k].cap * sizeof(*pt[k].kept));
	}
	if (fd >= 0)
		close(fd);
	return rc;
}

/* ---- the stats ---- */

/* One streaming reader: stdin, pipes, gzip, stores, -j1 and the re-read. */
static int add_streamed(hd_stats *st, const char *path,
			const hd_scan_options *so, hd_read_stats *rs,
			hd_error *err)
{
	hd_reader *r = NULL;
	const hd_record *rec;
	hd_read_stats s;
	uint64_t n = 0;
	int rc;

	if ((rc = hd_reader_open(&r, path, &so->read, err)))
		return rc;
	hd_reader_stats(&s, r);
	if (so->progress)
		so->progress(s.bytes, s.total_bytes, so->progress_payload);
	while ((rc = hd_reader_next(r, &rec, err)) == 0) {
		if ((rc = hd_stats_add(st, rec, err)))
			break;
		if ((++n & PROGRESS_EVERY) == 0 && so->progress) {
			hd_reader_stats(&s, r);
			so->progress(s.bytes, s.total_bytes,
				     so->progress_payload);
		}
	}
	if (rc == HD_ITEROVER)
		rc = 0;
	if (rs)
		hd_reader_stats(rs, r);
	hd_reader_free(r);
	return rc;
}

static int stats_part_new(void **out, void *payload, size_t bytes)
{
	(void)bytes;
	return hd__stats_new_like((hd_stats **)out, payload);
}

static int stats_add(void *acc, const hd_record *rec, hd_error *err)
{
	return hd_stats_add(acc, rec, err);
}

static void stats_part_free(void *acc)
{
	hd_stats_free(acc);
}

static int stats_merge(void *payload, void *const *acc, unsigned n,
		       const hd_read_stats *rs, hd_error *err)
{
	unsigned k;
	int rc = 0;

	(void)rs;
	for (k = 0; k < n; k++) {
		if (!rc && hd__stats_merge(payload, acc[k]))
			rc = hd__error(err, HD_ENOMEM, "out of memory");
		hd_stats_free(acc[k]);
	}
	return rc;
}

static const struct hd__pscan_ops stats_ops = {
	stats_part_new, stats_add, stats_merge, stats_part_free
};

int hd_stats_add_dump(hd_stats *st, const char *path,
		      const hd_scan_options *so, hd_read_stats *rs,
		      hd_error *err)
{
	int rc;

	HD_ASSERT_ARG(st && path && so);
	HD_ASSERT_ARG(so->version == HD_SCAN_OPTIONS_VERSION);
	rc = hd__pscan(path, so, &stats_ops, st, rs, err);
	return rc == HD__PSCAN_STREAM ? add_streamed(st, path, so, rs, err) :
					rc;
}
