/*
 * pscan.c - a dump file read on several threads.
 *
 * A regular, uncompressed dump is cut into one part a thread, each cut
 * before a line that starts a record (the joiner never joins such a line
 * to the one before, so no record spans two parts). Every part is read
 * by a range reader (reader.c) into its own accumulator, made on the
 * thread that reads it, where the file is mapped (filemap.c: one
 * mapping, each reader dropping the pages behind it), or with pread into
 * a buffer of its own where a mapping does not pay (hd__map_pays) or
 * fails; its problems are kept
 * with line numbers counted in the part. (Two threads reading one file
 * with pread spent 4 ms of 45 copying a 0.1 GB dump and waited on each
 * other in the page cache: the mapped scan of a file held in large folios
 * is 2 ms faster in a wall time of 23, and steadier.)
 *
 * A part is claimed a slice at a time (256 KiB). A thread that has read
 * its part takes the second half of the unclaimed rest of the part with
 * the most left (when 1 MiB or more is left), cut before a record line, as a new part of its own: the threads
 * end together although one half of a dump may cost more to read than
 * the other, or a thread gets less of a busy machine. At the end the
 * accumulators are merged in file order, and the problems passed on in
 * order with the lines of the parts before added: the result, the
 * reports and their order are those of one reader.
 *
 * Whatever one reader would decide from the whole input is left to it:
 * any error (--strict's first bad line, a line near the 4 GiB limit), a
 * first part without a record (the problems held back before a first
 * record), an input that ends up not a dump, or more problems than a
 * part keeps, and the file is read again by one reader, which fails or
 * reports exactly as it always does. Nothing was passed on before.
 *
 * The driver (hd__pscan) serves any accumulator through its operations:
 * the stats (hd_stats_add_dump, stats.c) and the store build
 * (store_build.c). Standard input, pipes, gzip and stores are read by one
 * streaming reader, as are all inputs with jobs <= 1.
 *
 * Each thread starts on a CPU other than the creating thread's
 * (hd__thread_start, thread.c).
 */
#include "hd_int.h"
#include "store_format.h"
#include "util/thread.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_JOBS HD__PSCAN_MAX_JOBS
#define MAX_PARTS (4 * MAX_JOBS)     /* the first parts and those taken */
#define MAX_KEPT ((size_t)1 << 16)   /* problems a part keeps */

/* the bytes a part claims at a time, and the least unclaimed rest of a
 * part whose second half another thread takes (tests lower them) */
size_t hd__pscan_slice = (size_t)256 << 10;
size_t hd__pscan_take_min = (size_t)1 << 20;
__thread struct hd__thread hd__pscan_threads[HD__PSCAN_MAX_JOBS];

struct pscan;

struct part {
	struct pscan *ps;
	size_t from;
	/* under ps->mu: the part's end (lowered when another thread takes
	 * the rest), what it has claimed (it reads the lines that start
	 * before it) and whether it has claimed its last line */
	size_t stop, claimed;
	int finished;
	void *acc;         /* the part's accumulator */
	hd_read_stats rs;
	hd_problem *kept;
	size_t nkept, cap;
	int over;          /* more problems than MAX_KEPT */
	int rc;
	uint64_t done;     /* bytes read, for the progress meter (atomic) */
	struct hd__thread th; /* the thread of a first part but the first */
	int started;
};

/* What the threads share. */
struct pscan {
	pthread_mutex_t mu;
	int fd;
	const char *map;   /* the file mapped, or NULL: read with pread */
	size_t window;     /* a reader's drop window: hd__map_budget / jobs */
	size_t len;
	const hd_scan_options *so;
	const char *name;
	const struct hd__pscan_ops *ops;
	void *payload;
	int stop_all;      /* a part makes the file be read again (atomic) */
	unsigned nparts;   /* written under mu, read atomically */
	struct part part[MAX_PARTS];
};

static void progress(const struct pscan *ps)
{
	unsigned n = __atomic_load_n(&ps->nparts, __ATOMIC_ACQUIRE), k;
	uint64_t done = 0;

	for (k = 0; k < n; k++)
		done += __atomic_load_n(&ps->part[k].done, __ATOMIC_RELAXED);
	ps->so->progress(done, ps->len, ps->so->progress_payload);
}

__thread unsigned hd__pscan_parts;

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

/* The reader's claim (hd__reader_open_claim): the next slice from at,
 * or 1 at the part's end. */
static int claim(void *payload, uint64_t at, uint64_t *stop)
{
	struct part *pt = payload;
	struct pscan *ps = pt->ps;
	int end;

	pthread_mutex_lock(&ps->mu);
	end = at >= pt->stop;
	if (end)
		pt->finished = 1;
	else
		pt->claimed = pt->stop - at > hd__pscan_slice ?
				      (size_t)at + (hd__pscan_slice ?
							    hd__pscan_slice :
							    1) :
				      pt->stop;
	*stop = pt->claimed;
	pthread_mutex_unlock(&ps->mu);
	return end;
}

/* Reads part pt into a new accumulator; report: this thread calls the
 * progress meter. */
static void run_part(struct part *pt, int report)
{
	struct pscan *ps = pt->ps;
	hd_read_options o = ps->so->read;
	hd_reader *r = NULL;
	const hd_record *rec;
	hd_error err = { 0 };
	uint64_t n = 0;
	size_t bytes;
	int rc;

	pthread_mutex_lock(&ps->mu);
	bytes = pt->stop - pt->from;
	pthread_mutex_unlock(&ps->mu);
	o.problem = keep_problem;
	o.payload = pt;
	rc = ps->ops->part_new(&pt->acc, ps->payload, bytes) ? HD_ENOMEM : 0;
	if (!rc)
		rc = hd__reader_open_claim(&r, ps->fd, ps->map, ps->len,
					   pt->from, pt->from, pt->from > 0,
					   claim, pt, &o, ps->name, &err);
	if (!rc)
		hd__reader_set_window(r, ps->window);
	while (!rc && (rc = hd_reader_next(r, &rec, &err)) == 0) {
		if ((rc = ps->ops->add(pt->acc, rec, &err)))
			break;
		if (pt->over) {
			rc = HD_ELIMIT;
			break;
		}
		if ((++n & HD__PROGRESS_EVERY) == 0) {
			__atomic_store_n(&pt->done, rec->offset - pt->from,
					 __ATOMIC_RELAXED);
			if (report && ps->so->progress)
				progress(ps);
			if (__atomic_load_n(&ps->stop_all, __ATOMIC_RELAXED)) {
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
		__atomic_store_n(&ps->stop_all, 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&ps->mu);
	pt->finished = 1;
	bytes = pt->stop - pt->from;
	pthread_mutex_unlock(&ps->mu);
	__atomic_store_n(&pt->done, bytes, __ATOMIC_RELAXED);
}

/* A new part: the second half of the unclaimed rest of the part with the
 * most left, if that is worth a part; else NULL. */
static struct part *take(struct pscan *ps)
{
	struct part *v, *np = NULL;
	size_t rest, most, at, mid, stop;
	unsigned k, tries;

	for (tries = 0; tries < 4 && !np; tries++) {
		pthread_mutex_lock(&ps->mu);
		v = NULL;
		most = 0;
		for (k = 0; k < ps->nparts; k++) {
			struct part *p = &ps->part[k];

			rest = p->stop - p->claimed;
			if (!p->finished && rest > most) {
				most = rest;
				v = p;
			}
		}
		if (!v || most < hd__pscan_take_min || !most ||
		    ps->nparts == MAX_PARTS ||
		    __atomic_load_n(&ps->stop_all, __ATOMIC_RELAXED)) {
			pthread_mutex_unlock(&ps->mu);
			return NULL;
		}
		mid = v->claimed + most / 2;
		stop = v->stop;
		pthread_mutex_unlock(&ps->mu);
		/* the cut reads the file: not under the lock */
		at = hd__reader_cut(ps->fd, stop, mid);
		if (at >= stop)
			return NULL; /* no record starts there: no cut */
		pthread_mutex_lock(&ps->mu);
		/* the part may have claimed, or lost, more meanwhile */
		if (!v->finished && at >= v->claimed && at < v->stop &&
		    ps->nparts < MAX_PARTS) {
			np = &ps->part[ps->nparts];
			memset(np, 0, sizeof(*np));
			np->ps = ps;
			np->from = np->claimed = at;
			np->stop = v->stop;
			v->stop = at;
			__atomic_store_n(&ps->nparts, ps->nparts + 1,
					 __ATOMIC_RELEASE);
		}
		pthread_mutex_unlock(&ps->mu);
	}
	return np;
}

/* Reads pt, then parts taken from the others while any is worth it. */
static void run_parts(struct part *pt, int report)
{
	struct pscan *ps = pt->ps;

	run_part(pt, report);
	while (!__atomic_load_n(&ps->stop_all, __ATOMIC_RELAXED) &&
	       (pt = take(ps)) != NULL)
		run_part(pt, report);
}

static void *part_thread(void *arg)
{
	run_parts(arg, 0);
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
static unsigned cut_parts(struct pscan *ps, unsigned jobs)
{
	unsigned n = 0, k;
	size_t from = 0, at;

	for (k = 1; k <= jobs; k++) {
		at = k == jobs ? ps->len :
				 hd__reader_cut(ps->fd, ps->len,
						(size_t)((double)ps->len * k /
							 jobs));
		if (at <= from)
			continue;
		memset(&ps->part[n], 0, sizeof(ps->part[n]));
		ps->part[n].ps = ps;
		ps->part[n].from = ps->part[n].claimed = from;
		ps->part[n].stop = at;
		n++;
		from = at;
		if (from >= ps->len)
			break;
	}
	return n;
}

/* The parts in file order (they tile [0, len)). */
static void in_order(struct part **v, struct pscan *ps, unsigned n)
{
	unsigned k, j;

	for (k = 0; k < n; k++) {
		struct part *p = &ps->part[k];

		for (j = k; j > 0 && v[j - 1]->from > p->from; j--)
			v[j] = v[j - 1];
		v[j] = p;
	}
}

static void merge_stats(hd_read_stats *rs, struct part *const *pt,
			unsigned n, size_t len)
{
	unsigned k;

	memset(rs, 0, sizeof(*rs));
	for (k = 0; k < n; k++) {
		rs->lines += pt[k]->rs.lines;
		rs->objects += pt[k]->rs.objects;
		rs->roots += pt[k]->rs.roots;
		rs->shapes += pt[k]->rs.shapes;
		rs->others += pt[k]->rs.others;
		rs->blank += pt[k]->rs.blank;
		rs->skipped += pt[k]->rs.skipped;
		rs->repaired += pt[k]->rs.repaired;
		rs->memprof |= pt[k]->rs.memprof;
	}
	rs->truncated = n ? pt[n - 1]->rs.truncated : 0;
	rs->bytes = rs->total_bytes = len;
}

/* Would one reader call the input no dump at its end (check_dump)? */
static int looks_like_no_dump(const hd_read_stats *rs)
{
	uint64_t n = rs->objects + rs->roots + rs->shapes + rs->others;

	return !n || rs->skipped > n;
}

/* Starts the threads, reads part 0 and what it takes here, and waits. */
static void run_all(struct pscan *ps, unsigned n)
{
	unsigned k;

	for (k = 1; k < n; k++)
		ps->part[k].started = hd__thread_start(&ps->part[k].th, k,
							part_thread,
							&ps->part[k]) == 0;
	run_parts(&ps->part[0], 1);
	for (k = 1; k < n; k++) {
		if (!ps->part[k].started)
			continue;
		pthread_join(ps->part[k].th.tid, NULL);
		hd__pscan_threads[k] = ps->part[k].th;
	}
	for (k = 1; k < n; k++)
		if (!ps->part[k].started)
			run_part(&ps->part[k], 1); /* no thread: here */
}

int hd__pscan(const char *path, const hd_scan_options *so,
	      const struct hd__pscan_ops *ops, void *payload,
	      hd_read_stats *rs, hd_error *err)
{
	struct pscan *ps;
	struct part *ord[MAX_PARTS];
	void *acc[MAX_PARTS];
	hd_read_stats total;
	size_t len = 0;
	unsigned jobs, n, k;
	int rc = 0, fd;
	uint64_t base;
	size_t i;

	hd__pscan_parts = 0;
	jobs = so->jobs > MAX_JOBS ? MAX_JOBS : so->jobs;
	if (jobs <= 1 || (fd = open_dump(path, &len)) < 0)
		return HD__PSCAN_STREAM;
	/* not zeroed: cut_parts() and take() clear the parts they make */
	if (!(ps = hd__malloc(sizeof(*ps)))) {
		close(fd);
		return hd__error(err, HD_ENOMEM, "out of memory");
	}
	if (pthread_mutex_init(&ps->mu, NULL)) {
		hd__free(ps, sizeof(*ps));
		close(fd);
		return HD__PSCAN_STREAM;
	}
	ps->fd = fd;
	ps->map = hd__map_dump(fd, len, path);
	ps->window = hd__map_budget / jobs;
	ps->len = len;
	ps->so = so;
	ps->name = path;
	ps->ops = ops;
	ps->payload = payload;
	ps->stop_all = 0;
	ps->nparts = cut_parts(ps, jobs);
	if (so->progress)
		so->progress(0, len, so->progress_payload);
	if (!ps->nparts) { /* len >= 2: not reached */
		rc = HD__PSCAN_STREAM;
		goto out;
	}
	run_all(ps, ps->nparts);
	/* the accumulators hold copies: nothing points into the file */
	hd__unmap_file(ps->map, len);
	ps->map = NULL;
	n = ps->nparts;
	in_order(ord, ps, n);
	merge_stats(&total, ord, n, len);
	for (k = 0; k < n; k++)
		if (ord[k]->rc)
			ps->stop_all = 1;
	if (ps->stop_all || !(ord[0]->rs.objects + ord[0]->rs.roots +
			      ord[0]->rs.shapes + ord[0]->rs.others) ||
	    looks_like_no_dump(&total)) {
		rc = HD__PSCAN_STREAM;
		goto out;
	}
	/* the accumulators are the merge's now, whatever it says */
	for (k = 0; k < n; k++) {
		acc[k] = ord[k]->acc;
		ord[k]->acc = NULL;
	}
	close(fd);
	fd = -1;
	if ((rc = ops->merge(payload, acc, n, &total, err)))
		goto out;
	if (so->progress)
		so->progress(len, len, so->progress_payload);
	for (k = 0, base = 0; k < n; k++) {
		for (i = 0; i < ord[k]->nkept && so->read.problem; i++) {
			hd_problem p = ord[k]->kept[i];

			p.line += base;
			so->read.problem(&p, so->read.payload);
		}
		base += ord[k]->rs.lines;
	}
	if (rs)
		*rs = total;
	hd__pscan_parts = n;
out:
	for (k = 0; k < ps->nparts; k++) {
		if (ps->part[k].acc)
			ops->part_free(ps->part[k].acc);
		hd__free(ps->part[k].kept,
			 ps->part[k].cap * sizeof(*ps->part[k].kept));
	}
	hd__unmap_file(ps->map, len);
	pthread_mutex_destroy(&ps->mu);
	hd__free(ps, sizeof(*ps));
	if (fd >= 0)
		close(fd);
	return rc;
}
