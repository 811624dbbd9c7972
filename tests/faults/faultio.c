/*
 * faultio.c - an LD_PRELOAD shim that makes writing fail, for the I/O
 * fault tests (tests/cli/faults.sh). It wraps write, pwrite, writev,
 * fsync, fdatasync, close and rename, and the stdio streams opened for
 * writing (fopen, fdopen: glibc's stdio calls its own internal write,
 * which no shim can interpose, so such a stream is re-made with
 * fopencookie over the shim's write and close; fileno still gives its
 * descriptor). Only regular files open for writing are affected: the
 * input, standard error, pipes and terminals always work, so the program
 * can still say what failed.
 *
 * Environment:
 *   FAULTIO_OP     write (write, pwrite, writev), fsync (and fdatasync),
 *                  close or rename: the kind of call that fails
 *   FAULTIO_NTH    N: the Nth call of that kind fails (1-based), and
 *                  with write every later one too (a full disk stays full)
 *   FAULTIO_BYTES  N (write only, instead of FAULTIO_NTH): the first N
 *                  bytes are written, the write crossing N is cut short
 *                  there and every later one fails
 *   FAULTIO_ERRNO  ENOSPC (default), EIO, EDQUOT or EXDEV
 *   FAULTIO_XDEV   1: every rename between two directories fails with
 *                  EXDEV (as if they were two file systems); a rename
 *                  within one directory works. Independent of FAULTIO_OP
 *   FAULTIO_DELAY_US N: each write to a file sleeps N microseconds first
 *                  (a slow disk, for the signal tests)
 *   FAULTIO_READ_DELAY_US N: each read(2) of a regular file opened
 *                  read-only sleeps N microseconds first (a slow index,
 *                  for the race tests of tests/cli/trust.sh)
 *   FAULTIO_SHRINK N: a regular file opened read-only, once mapped
 *                  (mmap) whole and longer than N bytes, is truncated to
 *                  N bytes (as if another program cut it right after the
 *                  mapping: reading a lost page raises SIGBUS)
 *   FAULTIO_REPORT a file that receives at exit the counts of the run:
 *                  "writes W bytes B fsyncs F closes C renames R faults X
 *                  shrunk S"
 * Without FAULTIO_OP nothing fails and the counts are still kept.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

enum { OP_NONE, OP_WRITE, OP_FSYNC, OP_CLOSE, OP_RENAME };

static int op = -1, fail_errno = ENOSPC;
static unsigned long long nth, limit_bytes;
static int by_bytes;
static unsigned long long n_write, n_bytes, n_fsync, n_close, n_rename,
	n_fault;
static int disk_full;
static int xdev;
static unsigned long delay_us;
static unsigned long long n_shrunk;

static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_read)(int, void *, size_t);
static unsigned long read_delay_us;
static ssize_t (*real_pwrite)(int, const void *, size_t, off_t);
static ssize_t (*real_writev)(int, const struct iovec *, int);
static int (*real_fsync)(int);
static int (*real_fdatasync)(int);
static int (*real_close)(int);
static int (*real_rename)(const char *, const char *);
static FILE *(*real_fopen)(const char *, const char *);
static FILE *(*real_fdopen)(int, const char *);
static int (*real_fileno)(FILE *);

static void *sym(const char *name)
{
	void *p = dlsym(RTLD_NEXT, name);

	if (!p)
		abort(); /* not glibc: the tests would mean nothing */
	return p;
}

static void init(void)
{
	const char *s;

	if (op >= 0)
		return;
	real_write = (ssize_t(*)(int, const void *, size_t))sym("write");
	real_read = (ssize_t(*)(int, void *, size_t))sym("read");
	real_pwrite = (ssize_t(*)(int, const void *, size_t, off_t))
		sym("pwrite");
	real_writev = (ssize_t(*)(int, const struct iovec *, int))
		sym("writev");
	real_fsync = (int (*)(int))sym("fsync");
	real_fdatasync = (int (*)(int))sym("fdatasync");
	real_close = (int (*)(int))sym("close");
	real_rename = (int (*)(const char *, const char *))sym("rename");
	real_fopen = (FILE * (*)(const char *, const char *)) sym("fopen");
	real_fdopen = (FILE * (*)(int, const char *)) sym("fdopen");
	real_fileno = (int (*)(FILE *))sym("fileno");
	s = getenv("FAULTIO_OP");
	op = !s ? OP_NONE : !strcmp(s, "write") ? OP_WRITE :
		!strcmp(s, "fsync") ? OP_FSYNC : !strcmp(s, "close") ? OP_CLOSE :
		!strcmp(s, "rename") ? OP_RENAME : OP_NONE;
	if ((s = getenv("FAULTIO_NTH")))
		nth = strtoull(s, NULL, 10);
	if ((s = getenv("FAULTIO_BYTES"))) {
		limit_bytes = strtoull(s, NULL, 10);
		by_bytes = 1;
	}
	if ((s = getenv("FAULTIO_ERRNO")))
		fail_errno = !strcmp(s, "EIO") ? EIO :
			     !strcmp(s, "EDQUOT") ? EDQUOT :
			     !strcmp(s, "EXDEV") ? EXDEV : ENOSPC;
	xdev = (s = getenv("FAULTIO_XDEV")) && !strcmp(s, "1");
	if ((s = getenv("FAULTIO_DELAY_US")))
		delay_us = strtoul(s, NULL, 10);
	if ((s = getenv("FAULTIO_READ_DELAY_US")))
		read_delay_us = strtoul(s, NULL, 10);
}

__attribute__((destructor)) static void report(void)
{
	const char *path = getenv("FAULTIO_REPORT");
	char buf[256];
	int fd, n;

	if (!path || op < 0)
		return;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	n = snprintf(buf, sizeof(buf),
		     "writes %llu bytes %llu fsyncs %llu closes %llu renames "
		     "%llu faults %llu shrunk %llu\n",
		     n_write, n_bytes, n_fsync, n_close, n_rename, n_fault,
		     n_shrunk);
	(void)!real_write(fd, buf, (size_t)n);
	real_close(fd);
}

/* Only regular files opened for writing count and fail (never the
 * input, standard error, pipes or terminals). */
static int is_file(int fd)
{
	struct stat sb;
	int fl;

	return fd > 2 && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) &&
	       (fl = fcntl(fd, F_GETFL)) >= 0 && (fl & O_ACCMODE) != O_RDONLY;
}

static int fault(void)
{
	n_fault++;
	errno = fail_errno;
	return -1;
}

/*
 * How many of n bytes a write to fd may write: n, fewer (cut short at
 * the byte limit), or -1 (failed, errno set).
 */
static ssize_t allow(int fd, size_t n)
{
	if (!is_file(fd))
		return (ssize_t)n;
	n_write++;
	if (delay_us)
		usleep((useconds_t)delay_us);
	if (op != OP_WRITE)
		return (ssize_t)n;
	if (disk_full)
		return fault();
	if (by_bytes) {
		if (n_bytes + n > limit_bytes) {
			disk_full = 1;
			if (n_bytes >= limit_bytes)
				return fault();
			return (ssize_t)(limit_bytes - n_bytes);
		}
		return (ssize_t)n;
	}
	if (nth && n_write >= nth) {
		disk_full = 1;
		return fault();
	}
	return (ssize_t)n;
}

ssize_t read(int fd, void *buf, size_t n)
{
	struct stat sb;
	int fl;

	init();
	if (read_delay_us && fd > 2 && fstat(fd, &sb) == 0 &&
	    S_ISREG(sb.st_mode) && (fl = fcntl(fd, F_GETFL)) >= 0 &&
	    (fl & O_ACCMODE) == O_RDONLY)
		usleep((useconds_t)read_delay_us);
	return real_read(fd, buf, n);
}

ssize_t write(int fd, const void *buf, size_t n)
{
	ssize_t k, r;

	init();
	if ((k = allow(fd, n)) < 0)
		return -1;
	r = real_write(fd, buf, (size_t)k);
	if (r > 0 && is_file(fd))
		n_bytes += (unsigned long long)r;
	return r;
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	ssize_t k, r;

	init();
	if ((k = allow(fd, n)) < 0)
		return -1;
	r = real_pwrite(fd, buf, (size_t)k, off);
	if (r > 0 && is_file(fd))
		n_bytes += (unsigned long long)r;
	return r;
}

ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
	size_t n = 0;
	ssize_t k, r;
	int i;

	init();
	for (i = 0; i < cnt; i++)
		n += iov[i].iov_len;
	if ((k = allow(fd, n)) < 0)
		return -1;
	if ((size_t)k < n) /* cut short: the first k bytes */
		return write(fd, cnt ? iov[0].iov_base : NULL,
			     (size_t)k < iov[0].iov_len ? (size_t)k :
							  iov[0].iov_len);
	r = real_writev(fd, iov, cnt);
	if (r > 0 && is_file(fd))
		n_bytes += (unsigned long long)r;
	return r;
}

static int sync_common(int fd, int (*real)(int))
{
	init();
	if (is_file(fd)) {
		n_fsync++;
		if (op == OP_FSYNC && nth && n_fsync == nth)
			return fault();
	}
	return real(fd);
}

int fsync(int fd)
{
	init();
	return sync_common(fd, real_fsync);
}

int fdatasync(int fd)
{
	init();
	return sync_common(fd, real_fdatasync);
}

int close(int fd)
{
	int file, rc;

	init();
	file = is_file(fd);
	rc = real_close(fd);
	if (file) {
		n_close++;
		/* Linux closes the descriptor even when close fails */
		if (rc == 0 && op == OP_CLOSE && nth && n_close == nth)
			return fault();
	}
	return rc;
}

/* The length of the directory part of path ("" for a bare name). */
static size_t dir_len(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? (size_t)(slash - path) + 1 : 0;
}

int rename(const char *from, const char *to)
{
	size_t a, b;

	init();
	n_rename++;
	a = dir_len(from);
	b = dir_len(to);
	if (xdev && (a != b || strncmp(from, to, a) != 0)) {
		n_fault++;
		errno = EXDEV;
		return -1;
	}
	if (op == OP_RENAME && nth && n_rename == nth)
		return fault();
	return real_rename(from, to);
}

/* ---- stdio streams for writing ---- */

#define MAX_STREAMS 64
static struct {
	FILE *f;
	int fd;
} streams[MAX_STREAMS];

/* As fopencookie(3) wants: the bytes written, 0 on error, never negative
 * (glibc's stdio takes a -1 for SIZE_MAX bytes written, and then reads
 * past the caller's buffer: valgrind showed it under make check-valgrind). */
static ssize_t cookie_write(void *c, const char *buf, size_t n)
{
	int fd = (int)(intptr_t)c;
	size_t done = 0;
	ssize_t k;

	while (done < n) {
		k = write(fd, buf + done, n - done);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return (ssize_t)done;
		done += (size_t)k;
	}
	return (ssize_t)done;
}

static int cookie_seek(void *c, off64_t *off, int whence)
{
	off_t r = lseek((int)(intptr_t)c, (off_t)*off, whence);

	if (r < 0)
		return -1;
	*off = r;
	return 0;
}

static int cookie_close(void *c)
{
	int fd = (int)(intptr_t)c, i;

	for (i = 0; i < MAX_STREAMS; i++)
		if (streams[i].fd == fd && streams[i].f) {
			streams[i].f = NULL;
			break;
		}
	return close(fd);
}

/* A stream over fd whose writes and close go through the shim. */
static FILE *wrap(int fd, const char *mode)
{
	cookie_io_functions_t io = { NULL, cookie_write, cookie_seek,
				     cookie_close };
	FILE *f;
	int i;

	for (i = 0; i < MAX_STREAMS && streams[i].f; i++)
		;
	if (i == MAX_STREAMS)
		return NULL;
	if (!(f = fopencookie((void *)(intptr_t)fd, mode, io)))
		return NULL;
	streams[i].f = f;
	streams[i].fd = fd;
	return f;
}

static int for_writing(const char *mode)
{
	return mode && (mode[0] == 'w' || mode[0] == 'a') &&
	       !strchr(mode, '+');
}

FILE *fdopen(int fd, const char *mode)
{
	FILE *f;

	init();
	if (!for_writing(mode) || !is_file(fd) || !(f = wrap(fd, mode)))
		return real_fdopen(fd, mode);
	return f;
}

FILE *fopen(const char *path, const char *mode)
{
	FILE *f = NULL;
	int fd;

	init();
	if (!for_writing(mode))
		return real_fopen(path, mode);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC |
				(mode[0] == 'a' ? O_APPEND : O_TRUNC), 0666);
	if (fd < 0)
		return NULL;
	if (!is_file(fd) || !(f = wrap(fd, mode))) {
		real_close(fd);
		return real_fopen(path, mode);
	}
	return f;
}

FILE *fopen64(const char *path, const char *mode)
{
	return fopen(path, mode);
}

int fileno(FILE *f)
{
	int i;

	init();
	for (i = 0; i < MAX_STREAMS; i++)
		if (streams[i].f == f)
			return streams[i].fd;
	return real_fileno(f);
}

/* ---- a mapped input cut short (FAULTIO_SHRINK) ---- */

/* The mapping is made by the system call itself, and nothing else is
 * done before a file is mapped: a sanitizer's runtime maps memory
 * through here before the program (and its environment) is set up. */
void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	void *m = (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
	const char *s;
	long long shrink_to;
	struct stat sb;
	char path[64];
	int fl, w;

	if (m == MAP_FAILED || fd < 0 || off != 0 ||
	    !(s = getenv("FAULTIO_SHRINK")))
		return m;
	init();
	shrink_to = strtoll(s, NULL, 10);
	if (shrink_to < 0 || fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) ||
	    (uint64_t)sb.st_size != len || sb.st_size <= shrink_to ||
	    (fl = fcntl(fd, F_GETFL)) < 0 || (fl & O_ACCMODE) != O_RDONLY)
		return m;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if ((w = open(path, O_WRONLY | O_CLOEXEC)) >= 0) {
		if (ftruncate(w, (off_t)shrink_to) == 0) {
			n_shrunk++;
			report(); /* now: a SIGBUS may end the program */
		}
		real_close(w);
	}
	return m;
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return mmap(addr, len, prot, flags, fd, off);
}
