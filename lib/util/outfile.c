/*
 * outfile.c - the one way files are written: every output of the
 * library and of the heapdump program (the store, replace-class, each
 * command's -o, heapdump dump's move) and the spooled copies of
 * standard input.
 *
 * Where an output goes (man 1 heapdump, OUTPUTS):
 *   - "-": standard output, written as it is;
 *   - a device, a FIFO or a socket: written in place, never replaced;
 *   - a symbolic link: followed, never replaced; what it names is the
 *     output (a chain is followed to its end, a dangling link creates
 *     its target), but a link another user owns in a shared directory
 *     (sticky and writable by all, as /tmp) is refused, as the kernel's
 *     fs.protected_symlinks would (we follow links ourselves); so is a
 *     device, FIFO or socket another user owns there;
 *   - a regular file, or a name that does not exist: a temporary file
 *     beside it (NAME.tmpXXXXXX), written, synced, and renamed over it.
 *     On failure the temporary file is removed and NAME is untouched.
 *     The temporary file is locked (flock) from before its name exists
 *     (O_TMPFILE, then linked in) until the commit, so that
 *     hd__outfile_sweep() can tell a store's temporary file left by a
 *     killed writer from one being written.
 *   - hd__outfile_open_replace (the store cache): the name itself, never
 *     followed: the temporary file is renamed over whatever is there (a
 *     link is replaced, never written through), with the mode given.
 *
 * Every temporary file (outputs and spools) is in a registry of fixed
 * slots that hd_outfile_cleanup() empties from a signal handler.
 */
#define _GNU_SOURCE /* O_TMPFILE (Linux) */
#include "util_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <dirent.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#define OUT_BUF ((size_t)256 << 10)
#define SPOOL_BUF ((size_t)1 << 20)
#define MAX_WRITE ((size_t)1 << 30)
#define MAX_LINKS 40

/* ---- the registry of live temporary files ---- */

#define LIVE_SLOTS 32
static int live_state[LIVE_SLOTS];
static char live_path[LIVE_SLOTS][PATH_MAX];

/* Registers path (a file just created); the slot, or -1 when the
 * registry is full or the path too long (the file then only misses the
 * cleanup on a signal). */
static int live_add(const char *path)
{
	size_t n = strlen(path);
	int i;

	if (n >= PATH_MAX || (i = hd__slot_take(live_state, LIVE_SLOTS)) < 0)
		return -1;
	memcpy(live_path[i], path, n + 1);
	hd__slot_set(&live_state[i], HD__SLOT_LIVE);
	return i;
}

static void live_drop(int *slot)
{
	if (*slot >= 0)
		hd__slot_set(&live_state[*slot], HD__SLOT_FREE);
	*slot = -1;
}

/* Async-signal-safe: atomic loads and unlink(2) only. */
void hd_outfile_cleanup(void)
{
	int i, e = errno;

	for (i = 0; i < LIVE_SLOTS; i++)
		if (hd__slot_live(&live_state[i]))
			unlink(live_path[i]);
	errno = e;
}

/* ---- small helpers ---- */

int hd__pwrite_all(int fd, const void *buf, size_t n, uint64_t at)
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

static int write_all(int fd, const void *buf, size_t n)
{
	const unsigned char *p = buf;
	ssize_t k;

	while (n) {
		k = write(fd, p, n < MAX_WRITE ? n : MAX_WRITE);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -1;
		if (k == 0) {
			errno = EIO;
			return -1;
		}
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

static char *str_dup(const char *s)
{
	return hd__strdup(s);
}

static void str_free(char *s)
{
	if (s)
		hd__free(s, strlen(s) + 1);
}

/* The directory of path, for a relative link target and for syncing. */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	size_t n = !slash ? 1 : slash == path ? 1 : (size_t)(slash - path);
	char *d = hd__malloc(n + 1);

	if (d) {
		memcpy(d, slash ? path : ".", n);
		d[n] = '\0';
	}
	return d;
}

/* Makes a rename durable; failures here lose nothing, so they pass. */
static void sync_dir(const char *path)
{
	char *dir = dir_of(path);
	int fd;

	if (!dir)
		return;
	fd = open(dir, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	str_free(dir);
}

/* 1 when the directory of path is shared: sticky and writable by all
 * (/tmp); its owner into *owner. */
static int shared_dir(const char *path, uid_t *owner)
{
	char *dir = dir_of(path);
	struct stat sb;
	int shared = 0;

	if (dir && stat(dir, &sb) == 0) {
		shared = (sb.st_mode & S_ISVTX) && (sb.st_mode & S_IWOTH);
		*owner = sb.st_uid;
	}
	str_free(dir);
	return shared;
}

/* 0 when the link or special file at path (lstat'ed into lsb) may be
 * followed or opened: ours, its directory's owner's, or not in a shared
 * directory (the rule of fs.protected_symlinks, applied by us since
 * follow_links reads links itself). */
static int foreign(const char *path, const struct stat *lsb)
{
	uid_t owner = 0;

	return lsb->st_uid != geteuid() && shared_dir(path, &owner) &&
	       lsb->st_uid != owner;
}

static int foreign_error(const char *path, hd_error *err)
{
	return hd__error_sys(err, EACCES, "cannot write '%s': it is a %s of "
			     "another user in a shared directory", path,
			     "symbolic link or special file");
}

/*
 * The end of a chain of symbolic links from path: the name a rename
 * must land on (it may not exist: a dangling link makes a new file).
 * *target_out is allocated; path itself when it is not a link.
 */
static int follow_links(const char *path, char **target_out, hd_error *err)
{
	char *cur = str_dup(path), *link = NULL, *dir, *next;
	struct stat lsb;
	ssize_t n;
	int hops;

	if (!cur || !(link = hd__malloc(PATH_MAX)))
		goto nomem;
	for (hops = 0; lstat(cur, &lsb) == 0 && S_ISLNK(lsb.st_mode); hops++) {
		if (hops == MAX_LINKS) {
			errno = ELOOP;
			goto sys;
		}
		if (foreign(cur, &lsb)) {
			hd__free(link, PATH_MAX);
			str_free(cur);
			return foreign_error(path, err);
		}
		if ((n = readlink(cur, link, PATH_MAX - 1)) < 0)
			goto sys;
		link[n] = '\0';
		if (link[0] == '/') {
			next = str_dup(link);
		} else {
			if (!(dir = dir_of(cur)))
				goto nomem;
			next = hd__malloc(strlen(dir) + (size_t)n + 2);
			if (next)
				sprintf(next, "%s/%s", dir, link);
			str_free(dir);
		}
		if (!next)
			goto nomem;
		str_free(cur);
		cur = next;
	}
	hd__free(link, PATH_MAX);
	*target_out = cur;
	return 0;
sys:
	hd__free(link, PATH_MAX);
	str_free(cur);
	return hd__error_sys(err, errno, "cannot follow the link '%s': %s",
			     path, strerror(errno));
nomem:
	if (link)
		hd__free(link, PATH_MAX);
	str_free(cur);
	return hd__error(err, HD_ENOMEM, "out of memory");
}

/* ---- output files ---- */

enum { KIND_STDOUT, KIND_IN_PLACE, KIND_TEMP };

struct hd_outfile {
	int kind;
	int fd;
	int slot;           /* registry slot of tmp, or -1 */
	int werr;           /* errno of the first failed write */
	FILE *f;            /* hd_outfile_stream */
	char *name;         /* as given, for messages */
	char *target;       /* KIND_TEMP: what tmp is renamed over */
	char *tmp;          /* KIND_TEMP: the temporary file, until commit */
	unsigned char *buf; /* hd_outfile_write's buffer */
	size_t len;
};

/*
 * Where path leads: *kind, and for KIND_TEMP the rename's target (which
 * exists when *sb was filled, mode included). A symbolic link whose end
 * is not the file it opens (/proc/self/fd/N of a deleted file) is
 * written in place.
 */
static int resolve(const char *path, int *kind, char **target,
		   struct stat *sb, int *exists, hd_error *err)
{
	struct stat lsb, tsb;
	int rc;

	*target = NULL;
	*exists = stat(path, sb) == 0;
	if (!*exists && errno != ENOENT)
		return hd__error_sys(err, errno, "cannot open '%s': %s", path,
				     strerror(errno));
	if (*exists && S_ISDIR(sb->st_mode))
		return hd__error_sys(err, EISDIR, "cannot write '%s': %s",
				     path, strerror(EISDIR));
	if (lstat(path, &lsb) == 0 && !S_ISREG(lsb.st_mode) &&
	    foreign(path, &lsb))
		return foreign_error(path, err);
	if (*exists && !S_ISREG(sb->st_mode)) {
		*kind = KIND_IN_PLACE;
		return 0;
	}
	*kind = KIND_TEMP;
	if (lstat(path, &lsb) != 0 || !S_ISLNK(lsb.st_mode))
		return (*target = str_dup(path)) ? 0 :
			hd__error(err, HD_ENOMEM, "out of memory");
	if ((rc = follow_links(path, target, err)))
		return rc;
	if (*exists && (stat(*target, &tsb) != 0 ||
			tsb.st_dev != sb->st_dev || tsb.st_ino != sb->st_ino)) {
		str_free(*target);
		*target = NULL;
		*kind = KIND_IN_PLACE;
	}
	return 0;
}

/* The permission bits of a new output: like's read and write bits when
 * it is a regular file (what is derived from a dump holds its secrets),
 * else 0600. */
static mode_t mode_like(const char *like)
{
	struct stat sb;

	if (like && strcmp(like, "-") != 0 && stat(like, &sb) == 0 &&
	    S_ISREG(sb.st_mode))
		return sb.st_mode & 0666;
	return 0600;
}

/* Six letters of mkstemp's alphabet into p, from getrandom: 0, or -1. */
static int random_letters(char *p)
{
	static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				  "abcdefghijklmnopqrstuvwxyz0123456789";
	unsigned char r[6];
	int i;

	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
		return -1;
	for (i = 0; i < 6; i++)
		p[i] = abc[r[i] % 62];
	return 0;
}

/*
 * The temporary file o->tmp (NAME.tmpXXXXXX), created and locked before
 * its name appears (O_TMPFILE, locked, then linked in), so that
 * hd__outfile_sweep() never takes a live writer's file for a dead one's:
 * fd, or -1 (errno) where the file system cannot, and mkstemp is used.
 */
static int make_locked(char *tmp, const char *dir)
{
#ifdef O_TMPFILE
	char proc[64];
	int fd, tries;

	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	(void)flock(fd, LOCK_EX | LOCK_NB);
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	for (tries = 0; tries < 100; tries++) {
		if (random_letters(tmp + strlen(tmp) - 6))
			break;
		if (linkat(AT_FDCWD, proc, AT_FDCWD, tmp,
			   AT_SYMLINK_FOLLOW) == 0)
			return fd;
		if (errno != EEXIST)
			break;
	}
	close(fd);
	memcpy(tmp + strlen(tmp) - 6, "XXXXXX", 6);
	return -1;
#else
	(void)tmp;
	(void)dir;
	errno = EOPNOTSUPP;
	return -1;
#endif
}

static int open_temp(hd_outfile *o, mode_t mode, hd_error *err)
{
	size_t n = strlen(o->target) + 11;
	char *dir;

	if (!(dir = dir_of(o->target)))
		return hd__error(err, HD_ENOMEM, "out of memory");
	if (!(o->tmp = hd__malloc(n))) {
		str_free(dir);
		return hd__error(err, HD_ENOMEM, "out of memory");
	}
	snprintf(o->tmp, n, "%s.tmpXXXXXX", o->target);
	o->fd = make_locked(o->tmp, dir);
	str_free(dir);
	if (o->fd < 0 && (o->fd = mkstemp(o->tmp)) >= 0)
		/* a sweep between these two calls could take it: rare, and
		 * only this write then fails */
		(void)flock(o->fd, LOCK_EX | LOCK_NB);
	if (o->fd < 0) {
		int e = errno;

		hd__error_sys(err, e, "cannot create '%s': %s", o->tmp,
			      strerror(e));
		str_free(o->tmp);
		o->tmp = NULL;
		return HD_EIO;
	}
	o->slot = live_add(o->tmp);
	if (fchmod(o->fd, mode) != 0)
		return hd__error_sys(err, errno,
				     "cannot set the mode of '%s': %s", o->tmp,
				     strerror(errno));
	return 0;
}

int hd_outfile_open(hd_outfile **out, const char *path, const char *like,
		    unsigned int flags, hd_error *err)
{
	hd_outfile *o;
	struct stat sb;
	int rc, exists;

	HD_ASSERT_ARG(out && path);
	HD_ASSERT_ARG(!(flags & ~HD_OUTFILE_KEEP_MODE));
	*out = NULL;
	if (!*path)
		return hd__error_sys(err, ENOENT, "cannot open '': %s",
				     strerror(ENOENT));
	if (!(o = hd__calloc(1, sizeof(*o))) || !(o->name = str_dup(path))) {
		hd__free(o, sizeof(*o));
		return hd__error(err, HD_ENOMEM, "out of memory");
	}
	o->fd = -1;
	o->slot = -1;
	if (strcmp(path, "-") == 0) {
		o->kind = KIND_STDOUT;
		o->fd = 1;
		*out = o;
		return 0;
	}
	if ((rc = resolve(path, &o->kind, &o->target, &sb, &exists, err)))
		goto fail;
	if (o->kind == KIND_IN_PLACE) {
		o->fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
		if (o->fd < 0) {
			rc = hd__error_sys(err, errno, "cannot open '%s': %s",
					   path, strerror(errno));
			goto fail;
		}
	} else if ((rc = open_temp(o, exists && (flags & HD_OUTFILE_KEEP_MODE) ?
					      sb.st_mode & 07777 :
					      mode_like(like),
				   err))) {
		goto fail;
	}
	*out = o;
	return 0;
fail:
	hd_outfile_free(o);
	return rc;
}

int hd__outfile_open_replace(hd_outfile **out, const char *path,
			     unsigned int mode, hd_error *err)
{
	hd_outfile *o;
	int rc;

	HD_ASSERT_ARG(out && path && *path && strcmp(path, "-") != 0);
	*out = NULL;
	if (!(o = hd__calloc(1, sizeof(*o))) || !(o->name = str_dup(path)) ||
	    !(o->target = str_dup(path))) {
		if (o)
			str_free(o->name);
		hd__free(o, sizeof(*o));
		return hd__error(err, HD_ENOMEM, "out of memory");
	}
	o->fd = -1;
	o->slot = -1;
	o->kind = KIND_TEMP;
	if ((rc = open_temp(o, (mode_t)(mode & 0666), err))) {
		hd_outfile_free(o);
		return rc;
	}
	*out = o;
	return 0;
}

/* NAME.hds.tmpXXXXXX: a store's temporary file, mkstemp's six letters */
static int store_temp_name(const char *name)
{
	size_t n = strlen(name), i;

	if (n < 14 || memcmp(name + n - 14, ".hds.tmp", 8) != 0)
		return 0;
	for (i = n - 6; i < n; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') ||
		      (name[i] >= 'A' && name[i] <= 'Z') ||
		      (name[i] >= '0' && name[i] <= '9')))
			return 0;
	return 1;
}

int hd__outfile_sweep(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int swept = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		struct stat sb, lsb;
		int fd;

		if (!store_temp_name(e->d_name))
			continue;
		fd = openat(dirfd(d), e->d_name, O_RDONLY | O_NOFOLLOW |
			    O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) &&
		    sb.st_uid == geteuid() &&
		    flock(fd, LOCK_EX | LOCK_NB) == 0 &&
		    fstatat(dirfd(d), e->d_name, &lsb,
			    AT_SYMLINK_NOFOLLOW) == 0 &&
		    lsb.st_dev == sb.st_dev && lsb.st_ino == sb.st_ino &&
		    unlinkat(dirfd(d), e->d_name, 0) == 0)
			swept++;
		close(fd);
	}
	closedir(d);
	return swept;
}

static int fail_write(hd_outfile *o, int e, hd_error *err)
{
	if (!o->werr)
		o->werr = e;
	return hd__error_sys(err, e, "cannot write '%s': %s",
			     o->kind == KIND_STDOUT ? "standard output" :
						      o->name,
			     strerror(e));
}

static int flush_buf(hd_outfile *o, hd_error *err)
{
	if (o->len && write_all(o->fd, o->buf, o->len))
		return fail_write(o, errno, err);
	o->len = 0;
	return 0;
}

int hd_outfile_write(hd_outfile *o, const void *buf, size_t n, hd_error *err)
{
	HD_ASSERT_ARG(o && !o->f && (buf || !n));
	if (o->werr)
		return fail_write(o, o->werr, err);
	if (!o->buf && !(o->buf = hd__malloc(OUT_BUF)))
		return hd__error(err, HD_ENOMEM, "out of memory");
	if (o->len + n > OUT_BUF && flush_buf(o, err))
		return HD_EIO;
	if (n >= OUT_BUF)
		return write_all(o->fd, buf, n) ? fail_write(o, errno, err) : 0;
	memcpy(o->buf + o->len, buf, n);
	o->len += n;
	return 0;
}

int hd__outfile_fd(const hd_outfile *o)
{
	return o && o->kind == KIND_TEMP && o->tmp && !o->f && !o->len &&
		       !o->werr ?
		       o->fd :
		       -1;
}

FILE *hd_outfile_stream(hd_outfile *o, hd_error *err)
{
	if (!o || o->len) {
		hd__error(err, HD_EINVAL, "invalid argument: o && !o->len");
		return NULL;
	}
	if (!o->f && !(o->f = o->kind == KIND_STDOUT ? stdout :
						      fdopen(o->fd, "w")))
		hd__error_sys(err, errno, "cannot open '%s': %s", o->name,
			      strerror(errno));
	return o->f;
}

/* Flushes what was written and closes the descriptor (not standard
 * output's), syncing a temporary file first. */
static int finish(hd_outfile *o, hd_error *err)
{
	int e = 0, fd = o->fd;

	if (o->f) {
		errno = 0;
		if (fflush(o->f) != 0 || ferror(o->f))
			e = errno ? errno : EIO;
	} else if (flush_buf(o, err)) {
		e = errno ? errno : EIO;
	}
	if (o->werr)
		e = o->werr;
	if (o->kind == KIND_STDOUT)
		return e ? fail_write(o, e, err) : 0;
	if (!e && o->kind == KIND_TEMP && fsync(fd) != 0)
		e = errno;
	o->fd = -1;
	if (o->f) {
		if (fclose(o->f) != 0 && !e)
			e = errno;
		o->f = NULL;
	} else if (close(fd) != 0 && !e) {
		e = errno;
	}
	return e ? fail_write(o, e, err) : 0;
}

static void drop_temp(hd_outfile *o)
{
	if (o->tmp) {
		unlink(o->tmp);
		live_drop(&o->slot);
		str_free(o->tmp);
		o->tmp = NULL;
	}
}

int hd_outfile_commit(hd_outfile *o, hd_error *err)
{
	int rc;

	HD_ASSERT_ARG(o);
	if ((rc = finish(o, err))) {
		drop_temp(o);
		return rc;
	}
	if (o->kind != KIND_TEMP || !o->tmp)
		return 0;
	if (rename(o->tmp, o->target) != 0) {
		rc = hd__error_sys(err, errno, "cannot rename to '%s': %s",
				   o->target, strerror(errno));
		drop_temp(o);
		return rc;
	}
	live_drop(&o->slot);
	str_free(o->tmp);
	o->tmp = NULL;
	sync_dir(o->target);
	return 0;
}

void hd_outfile_free(hd_outfile *o)
{
	if (!o)
		return;
	if (o->f && o->f != stdout)
		fclose(o->f);
	else if (!o->f && o->fd >= 0 && o->kind != KIND_STDOUT)
		close(o->fd);
	drop_temp(o);
	str_free(o->name);
	str_free(o->target);
	if (o->buf)
		hd__free(o->buf, OUT_BUF);
	hd__free(o, sizeof(*o));
}

/* ---- moving a finished file ---- */

static int copy_fd(int from, hd_outfile *o, hd_error *err)
{
	unsigned char *buf = hd__malloc(SPOOL_BUF);
	ssize_t k;
	int rc = 0;

	if (!buf)
		return hd__error(err, HD_ENOMEM, "out of memory");
	for (;;) {
		k = read(from, buf, SPOOL_BUF);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		if ((rc = hd_outfile_write(o, buf, (size_t)k, err)))
			break;
	}
	if (k < 0 && !rc)
		rc = hd__error_sys(err, errno, "cannot read: %s",
				   strerror(errno));
	hd__free(buf, SPOOL_BUF);
	return rc;
}

int hd_file_move(const char *from, const char *to, hd_error *err)
{
	hd_outfile *o = NULL;
	struct stat sb;
	char *target = NULL;
	int kind, exists, fd, rc, e;

	HD_ASSERT_ARG(from && to && *to && strcmp(to, "-") != 0);
	if ((rc = resolve(to, &kind, &target, &sb, &exists, err)))
		return rc;
	if (kind == KIND_TEMP) {
		rc = rename(from, target);
		e = errno;
		if (!rc)
			sync_dir(target);
		str_free(target);
		if (!rc)
			return 0;
		if (e != EXDEV)
			return hd__error_sys(err, e,
					     "cannot move '%s' to '%s': %s",
					     from, to, strerror(e));
	}
	/* another file system, or a device: a copy, through a temporary
	 * file beside a regular target (a failure keeps both files) */
	if ((fd = open(from, O_RDONLY | O_CLOEXEC)) < 0)
		return hd__error_sys(err, errno, "cannot open '%s': %s", from,
				     strerror(errno));
	if (!(rc = hd_outfile_open(&o, to, from, 0, err)) &&
	    !(rc = copy_fd(fd, o, err)) && !(rc = hd_outfile_commit(o, err)) &&
	    unlink(from) != 0)
		rc = hd__error_sys(err, errno, "cannot remove '%s': %s", from,
				   strerror(errno));
	close(fd);
	hd_outfile_free(o);
	return rc;
}

/* ---- spooling an input that is read twice ---- */

struct hd_spool {
	char *path;
	int slot;
};

int hd_spool_new(hd_spool **out, int fd, const char *name, hd_error *err)
{
	const char *dir = getenv("TMPDIR");
	hd_spool *sp;
	unsigned char *buf = NULL;
	size_t size;
	ssize_t k;
	int tfd, rc = 0;

	HD_ASSERT_ARG(out && fd >= 0 && name);
	*out = NULL;
	if (!dir || !*dir)
		dir = "/tmp";
	size = strlen(dir) + 32;
	if (!(sp = hd__calloc(1, sizeof(*sp))))
		return hd__error(err, HD_ENOMEM, "out of memory");
	sp->slot = -1;
	if (!(sp->path = hd__malloc(size))) {
		hd__free(sp, sizeof(*sp));
		return hd__error(err, HD_ENOMEM, "out of memory");
	}
	snprintf(sp->path, size, "%s/heapdump-stdin-XXXXXX", dir);
	tfd = mkstemp(sp->path);
	if (tfd < 0) {
		rc = hd__error_sys(err, errno,
				   "cannot create a temporary file in '%s': %s",
				   dir, strerror(errno));
		str_free(sp->path);
		sp->path = NULL;
		goto out;
	}
	sp->slot = live_add(sp->path);
	if (!(buf = hd__malloc(SPOOL_BUF))) {
		rc = hd__error(err, HD_ENOMEM, "out of memory");
		goto out;
	}
	for (;;) {
		k = read(fd, buf, SPOOL_BUF);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			rc = hd__error_sys(err, errno, "cannot read %s: %s",
					   name, strerror(errno));
			break;
		}
		if (!k)
			break;
		if (write_all(tfd, buf, (size_t)k)) {
			rc = hd__error_sys(err, errno,
					   "cannot spool %s to '%s': %s", name,
					   sp->path, strerror(errno));
			break;
		}
	}
	if (close(tfd) != 0 && !rc)
		rc = hd__error_sys(err, errno, "cannot spool %s to '%s': %s",
				   name, sp->path, strerror(errno));
out:
	if (buf)
		hd__free(buf, SPOOL_BUF);
	if (rc) {
		hd_spool_free(sp);
		return rc;
	}
	*out = sp;
	return 0;
}

const char *hd_spool_path(const hd_spool *sp)
{
	return sp ? sp->path : NULL;
}

void hd_spool_free(hd_spool *sp)
{
	if (!sp)
		return;
	if (sp->path) {
		unlink(sp->path);
		live_drop(&sp->slot);
		str_free(sp->path);
	}
	hd__free(sp, sizeof(*sp));
}
