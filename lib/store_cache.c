/*
 * store_cache.c - a dump opened through its cached store: the one rule
 * that the heapdump command (serve) and the gem's HeapDump.load share.
 *
 * Where: DUMP.hds beside the dump when its directory is writable and
 * DUMP.hds is missing or a regular file holding a store; else
 * $XDG_CACHE_HOME/heapdump/NAME-KEY.hds (~/.cache/heapdump when the
 * variable is unset or relative), KEY 32 hex digits of a hash of the
 * dump's absolute path, size and mtime. The cache directory is made
 * 0700 and used only if it is a real directory of this user that no one
 * else may write.
 *
 * Reused: a store that is ours (a regular file, opened with O_NOFOLLOW
 * and judged on the descriptor: owned by the effective user, writable
 * by no group or other, so that no one else can have written it or
 * change it under us), that opens (every section validated), whose
 * source identity section holds the dump's stat(2) as it is now
 * (device, inode, size, mtime and ctime to the nanosecond) and whose
 * fingerprint (hd_store_check_source) matches, and whose builder's
 * version (the BUILDER section) is this program's (HD__STORE_BUILDER: a
 * store cached by an earlier builder, or one without the section, is
 * indexed again, said in the note). Its values are read from
 * the dump the caller named, never from the path the store records.
 *
 * Written otherwise: the dump's stat taken before it is read goes into
 * the store, which is written to a temporary file made O_EXCL beside
 * the name and renamed over it (never opening the name: a link planted
 * there is replaced, not followed), with the dump's permission bits
 * (0600 at most in a folder writable by group or others, as /tmp). The
 * stores' temporary files that a killed writer left in the folder
 * (ours, not locked by a writer) are swept first. Never replaced: a
 * file that is not a store of ours, a directory not ours.
 */
#include "hd_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store_format.h"

#define CACHE_PATH_MAX 4096

/* The absolute form of path (no resolution of links or ".."). */
static int absolute(char *buf, size_t size, const char *path, hd_error *err)
{
	char cwd[CACHE_PATH_MAX];
	int n;

	if (path[0] == '/')
		n = snprintf(buf, size, "%s", path);
	else if (!getcwd(cwd, sizeof(cwd)))
		return hd__error_sys(err, errno, "getcwd: %s", strerror(errno));
	else
		n = snprintf(buf, size, "%s/%s", cwd, path);
	if (n < 0 || (size_t)n >= size)
		return hd__error(err, HD_ELIMIT, "'%s': path too long", path);
	return 0;
}

static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* 32 hex digits of the dump's absolute path, size and mtime. The name
 * only spreads dumps over files: what a file holds is always checked. */
static void cache_key(char out[33], const char *abs, const struct stat *sb)
{
	uint64_t v[3] = { (uint64_t)sb->st_size, (uint64_t)sb->st_mtim.tv_sec,
			  (uint64_t)sb->st_mtim.tv_nsec };
	uint64_t h1 = 0xcbf29ce484222325ULL, h2 = 0x84222325cbf29ce4ULL;

	h1 = fnv1a(fnv1a(h1, abs, strlen(abs) + 1), v, sizeof(v));
	h2 = fnv1a(fnv1a(h2, v, sizeof(v)), abs, strlen(abs) + 1);
	snprintf(out, 33, "%016llx%016llx", (unsigned long long)h1,
		 (unsigned long long)h2);
}

/* The directory part of path ("." when none). */
static void dir_of(char *buf, size_t size, const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		snprintf(buf, size, ".");
	else if (slash == path)
		snprintf(buf, size, "/");
	else
		snprintf(buf, size, "%.*s", (int)(slash - path), path);
}

/* 1 if a store may be written at f: a missing name in a writable
 * directory, or a store of ours (hd__file_ours) there. Anything else is not
 * ours to replace. */
static int ours_to_write(const char *f)
{
	char dir[CACHE_PATH_MAX];
	struct stat sb;
	int fd, ok;

	dir_of(dir, sizeof(dir), f);
	if (access(dir, W_OK) != 0)
		return 0;
	fd = open(f, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT;
	ok = fstat(fd, &sb) == 0 && hd__file_ours(&sb);
	close(fd);
	return ok && hd_store_is_store(f);
}

/* The mode of a store written in dir for a dump of mode dump_mode: the
 * dump's read and write bits, and no more than 0600 when the folder is
 * writable by group or others. */
static unsigned int store_mode(const char *f, mode_t dump_mode)
{
	char dir[CACHE_PATH_MAX];
	struct stat sb;
	unsigned int mode = (unsigned int)(dump_mode & 0666);

	dir_of(dir, sizeof(dir), f);
	if (stat(dir, &sb) != 0 || (sb.st_mode & 022))
		mode &= 0600;
	return mode;
}

/* The file in the cache directory for the dump (abs, sb). */
static int cache_file(char *buf, size_t size, const char *abs,
		      const struct stat *sb, int make, char *note,
		      size_t nsize)
{
	char dir[CACHE_PATH_MAX], key[33];
	const char *base = strrchr(abs, '/');
	int n;

	if (hd__cache_dir(dir, sizeof(dir), make, note, nsize))
		return -1;
	cache_key(key, abs, sb);
	n = snprintf(buf, size, "%s/%s-%s.hds", dir, base ? base + 1 : abs,
		     key);
	if (n < 0 || (size_t)n >= size) {
		snprintf(note, nsize, "the cache file's path is too long");
		return -1;
	}
	return 0;
}

int hd_store_cache_path(char *buf, size_t size, const char *path,
			hd_error *err)
{
	char abs[CACHE_PATH_MAX], note[256];
	struct stat sb;
	int rc, n;

	HD_ASSERT_ARG(buf && size && path);
	if ((rc = absolute(abs, sizeof(abs), path, err)))
		return rc;
	if (stat(abs, &sb) != 0)
		return hd__error_sys(err, errno, "cannot open '%s': %s", path,
				     strerror(errno));
	n = snprintf(buf, size, "%s.hds", abs);
	if (n < 0 || (size_t)n >= size)
		return hd__error(err, HD_ELIMIT, "'%s': path too long", path);
	if (ours_to_write(buf))
		return 0;
	if (cache_file(buf, size, abs, &sb, 0, note, sizeof(note)))
		return hd__error(err, HD_ELIMIT, "%s", note);
	return 0;
}

/* The dump's identity as the SOURCE_ID section keeps it. */
static void source_id(uint64_t v[HD__SID_COUNT], const struct stat *sb)
{
	v[HD__SID_DEV] = (uint64_t)sb->st_dev;
	v[HD__SID_INO] = (uint64_t)sb->st_ino;
	v[HD__SID_SIZE] = (uint64_t)sb->st_size;
	v[HD__SID_MTIME] = (uint64_t)sb->st_mtim.tv_sec;
	v[HD__SID_MTIME_NS] = (uint64_t)sb->st_mtim.tv_nsec;
	v[HD__SID_CTIME] = (uint64_t)sb->st_ctim.tv_sec;
	v[HD__SID_CTIME_NS] = (uint64_t)sb->st_ctim.tv_nsec;
}

/* 1 when s was built from the dump whose stat is sb, as it is now. */
static int same_source(const hd_store *s, const struct stat *sb)
{
	uint64_t want[HD__SID_COUNT], len;
	const unsigned char *p = hd__store_section(s, HD__SEC_SOURCE_ID, &len);
	int i;

	if (!p || len != (uint64_t)HD__SID_COUNT * 8)
		return 0;
	source_id(want, sb);
	for (i = 0; i < HD__SID_COUNT; i++)
		if (hd__le64(p + (size_t)i * 8) != want[i])
			return 0;
	return 1;
}

/* The builder's version a store keeps (BUILDER), 0 when none: a store
 * cached before builders had versions. */
static uint64_t builder_of(const hd_store *s)
{
	uint64_t len;
	const unsigned char *p = hd__store_section(s, HD__SEC_BUILDER, &len);

	return p && len == 8 ? hd__le64(p) : 0;
}

/* Keeps the dump's identity (sb, taken before it was read) and the
 * builder's version in s. */
static int keep_source(hd_store *s, const struct stat *sb, hd_error *err)
{
	static const int sid[2] = { HD__SEC_SOURCE_ID, HD__SEC_BUILDER };
	uint64_t v[HD__SID_COUNT];
	unsigned char *img = hd__malloc((size_t)HD__SID_COUNT * 8);
	unsigned char *bimg = hd__malloc(8);
	void *imgs[2];
	size_t len[2] = { (size_t)HD__SID_COUNT * 8, 8 };
	int i, rc;

	if (!img || !bimg) {
		hd__free(img, len[0]);
		hd__free(bimg, len[1]);
		return hd__error(err, HD_ENOMEM, "out of memory");
	}
	source_id(v, sb);
	for (i = 0; i < HD__SID_COUNT; i++)
		hd__put_le64(img + (size_t)i * 8, v[i]);
	hd__put_le64(bimg, HD__STORE_BUILDER);
	imgs[0] = img;
	imgs[1] = bimg;
	if ((rc = hd__store_attach(s, sid, imgs, len, 2, err))) {
		hd__free(img, len[0]);
		hd__free(bimg, len[1]);
	}
	return rc;
}

/* The store at f, opened without following a link, if it is ours (its
 * owner and mode, on the descriptor); *why says why not. */
static hd_store *open_ours(const char *f, const char **why, hd_error *e)
{
	hd_store *s = NULL;
	struct stat fs;
	int fd = open(f, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	*why = NULL;
	if (fd < 0) {
		if (errno == ELOOP)
			*why = "a symbolic link";
		return NULL;
	}
	if (fstat(fd, &fs) != 0 || !S_ISREG(fs.st_mode)) {
		close(fd);
		return NULL;
	}
	if (!hd__file_ours(&fs)) {
		*why = fs.st_uid != geteuid() ? "owned by another user" :
						"writable by others";
		close(fd);
		return NULL;
	}
	if (hd__store_open_fd(&s, fd, f, e)) {
		*why = "damaged";
		return NULL;
	}
	return s;
}

/* The store at f, if it is ours and one of the dump (abs, sb) as it is
 * now, reading its values from abs; why not in note. */
static hd_store *reuse(const char *f, const char *abs, const struct stat *sb,
		       char *note, size_t nsize)
{
	hd_store *s;
	hd_error e = { 0 };
	const char *why;
	struct stat ls;

	if (lstat(f, &ls) != 0 ||
	    (S_ISREG(ls.st_mode) && !hd_store_is_store(f)))
		return NULL;
	if (!(s = open_ours(f, &why, &e))) {
		if (why && strcmp(why, "damaged") == 0 &&
		    strncmp(e.msg, "store version ", 14) == 0)
			snprintf(note, nsize, "%.300s was written by another "
				 "heapdump, in another store format: indexed "
				 "again", f);
		else if (why && strcmp(why, "damaged") == 0)
			snprintf(note, nsize, "%.300s was damaged (%.150s): "
				 "indexed again", f, e.msg);
		else if (why)
			snprintf(note, nsize, "%.300s is %s: not used", f,
				 why);
		return NULL;
	}
	if (!same_source(s, sb) || hd_store_check_source(s, abs, &e)) {
		snprintf(note, nsize, "%.300s was stale (its dump changed): "
			 "indexed again", f);
		hd_store_close(s);
		return NULL;
	}
	if (builder_of(s) != HD__STORE_BUILDER) {
		snprintf(note, nsize, "%.300s was built by another heapdump "
			 "(store builder %llu, this one's %u): indexed again",
			 f, (unsigned long long)builder_of(s),
			 HD__STORE_BUILDER);
		hd_store_close(s);
		return NULL;
	}
	if (hd__store_set_source(s, abs)) {
		hd_store_close(s);
		return NULL;
	}
	return s;
}

/* Indexes the dump; with HD_CACHE_DOMINATORS, keeps its dominator tree,
 * with HD_CACHE_VIEWS the views (and retained by class with the tree). */
static int build(hd_store **out, const char *path,
		 const hd_cache_options *o, const char *spill_dir,
		 hd_error *err)
{
	hd_index_options io = o->index;
	hd_domtree *d = NULL;
	int rc;

	/* written to spill_dir's store: built out of memory meanwhile, as
	 * index --dominators --views builds it (the tree and the views
	 * then hold only what they read) */
	if (spill_dir && io.version >= 3 &&
	    (o->flags & (HD_CACHE_VIEWS | HD_CACHE_DOMINATORS))) {
		io.version = 4;
		io.flags |= HD_INDEX_SPILL;
		io.spill_dir = spill_dir;
	}

	/* the string values kept as the dump is read: not read back */
	if (o->flags & HD_CACHE_VIEWS) {
		if (io.version == 2) {
			io.version = 3;
			io.flags = 0;
		}
		if (io.version >= 3)
			io.flags |= HD_INDEX_STRING_VALUES;
	}
	if ((rc = hd_store_build(out, path, &io, err)))
		return rc;
	/* as index: the string values and group stats before the tree,
	 * the tree read back from the store for retained by class */
	if (o->flags & HD_CACHE_VIEWS)
		rc = hd_store_set_views(*out, NULL, HD_VIEW_STRINGS |
					HD_VIEW_GROUPS, err);
	if (!rc && (o->flags & HD_CACHE_DOMINATORS) &&
	    !(rc = hd_domtree_new(&d, *out, HD_DOMTREE_SKIP_DUMPER, err))) {
		rc = hd_store_set_domtree(*out, d, err);
		hd_domtree_free(d);
		d = NULL;
		if (!rc && (o->flags & HD_CACHE_VIEWS) &&
		    !(rc = hd_domtree_new(&d, *out, HD_DOMTREE_SKIP_DUMPER,
					  err)))
			rc = hd_store_set_views(*out, d, HD_VIEW_CLASSES |
						HD_VIEW_ORDER, err);
	}
	hd_domtree_free(d);
	if (rc) {
		hd_store_close(*out);
		*out = NULL;
	}
	return rc;
}

int hd_store_open_cached(hd_store **out, hd_cache_result *res,
			 const char *path, const hd_cache_options *opts,
			 hd_error *err)
{
	hd_cache_options o = HD_CACHE_OPTIONS_INIT;
	char abs[CACHE_PATH_MAX], beside[CACHE_PATH_MAX];
	char xdg[CACHE_PATH_MAX], spill[CACHE_PATH_MAX], *target = NULL;
	hd_store *s = NULL;
	struct stat sb;
	int rc, n, beside_ok;

	HD_ASSERT_ARG(out && res && path);
	*out = NULL;
	memset(res, 0, sizeof(*res));
	if (opts) {
		if (opts->version != HD_CACHE_OPTIONS_VERSION)
			return hd__error(err, HD_EINVAL, "unknown cache "
					 "options version %u", opts->version);
		o = *opts;
	}
	/* a store, or what cannot be read twice: as hd_store_load */
	if (strcmp(path, "-") == 0 || stat(path, &sb) != 0 ||
	    !S_ISREG(sb.st_mode) || hd_store_is_store(path)) {
		if ((rc = hd_store_load(out, path, &o.index, err)))
			return rc;
		if (hd_store_is_store(path)) {
			res->how = HD_CACHE_STORE;
			snprintf(res->path, sizeof(res->path), "%s", path);
		} else {
			res->how = HD_CACHE_MEMORY; /* as it must: no note */
		}
		return 0;
	}
	if ((rc = absolute(abs, sizeof(abs), path, err)))
		return rc;
	n = snprintf(beside, sizeof(beside), "%s.hds", abs);
	if (n < 0 || (size_t)n >= sizeof(beside))
		return hd__error(err, HD_ELIMIT, "'%s': path too long", path);
	beside_ok = ours_to_write(beside);
	if ((s = reuse(beside, abs, &sb, res->note, sizeof(res->note)))) {
		res->how = HD_CACHE_REUSED;
		snprintf(res->path, sizeof(res->path), "%s", beside);
		*out = s;
		return 0;
	}
	if (beside_ok) {
		target = beside;
	} else if (!cache_file(xdg, sizeof(xdg), abs, &sb, 1, res->note,
			       sizeof(res->note))) {
		if ((s = reuse(xdg, abs, &sb, res->note, sizeof(res->note)))) {
			res->how = HD_CACHE_REUSED;
			snprintf(res->path, sizeof(res->path), "%s", xdg);
			*out = s;
			return 0;
		}
		if (ours_to_write(xdg))
			target = xdg;
		else
			snprintf(res->note, sizeof(res->note), "%.300s is not a "
				 "store: left alone", xdg);
	}
	if (target)
		dir_of(spill, sizeof(spill), target);
	if ((rc = build(&s, path, &o, target ? spill : NULL, err)))
		return rc;
	if (target && keep_source(s, &sb, err)) {
		hd_store_close(s);
		return HD_ENOMEM;
	}
	if (target) {
		hd_store *w = NULL;
		hd_error we = { 0 };
		const char *why;
		char dir[CACHE_PATH_MAX];

		dir_of(dir, sizeof(dir), target);
		(void)hd__outfile_sweep(dir);
		if (hd__store_write_replace(s, target,
					    store_mode(target, sb.st_mode),
					    &we)) {
			snprintf(res->note, sizeof(res->note), "cannot write "
				 "%.300s: %.150s", target, we.msg);
			target = NULL;
		} else if (!(w = open_ours(target, &why, &we)) ||
			   !same_source(w, &sb) ||
			   hd__store_set_source(w, abs)) {
			/* replaced under us: the store built stays in use */
			hd_store_close(w);
			snprintf(res->note, sizeof(res->note), "%.300s changed "
				 "after it was written: not used", target);
			target = NULL;
		} else {
			hd_store_close(s);
			s = w;
		}
	}
	res->how = target ? HD_CACHE_BUILT : HD_CACHE_MEMORY;
	if (target)
		snprintf(res->path, sizeof(res->path), "%s", target);
	*out = s;
	return 0;
}
