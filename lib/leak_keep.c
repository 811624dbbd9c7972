/*
 * leak_keep.c - the verdict of a leak hunt computed once and kept
 * (issue 40): serve BEFORE AFTER LATER, leaks and mcp judge the same
 * three stores alike every time, so the verdict document ("verdict",
 * "totals" and "caveats" of heapdump-json(5), the bytes
 * hd_leak_verdict_json writes) is kept in a small file and read back
 * while the dumps are the ones judged.
 *
 * The key, kept as text at the head of the file and compared byte for
 * byte: the program's version; the session's options; for each store
 * its counts and its dump's identity (size, mtime and fingerprint of
 * the source, the SOURCE_ID section of a cached store: device, inode,
 * size, mtime and ctime, and whether the dump is found, which 4.0's
 * object ids need); the order check of every pair (flags, generations,
 * counts, shared addresses, origins); the process's judgement. Any
 * difference is a stale file: said, computed again, written again.
 * After the key, "json LENGTH SUM" and the document: a file whose
 * length or sum (FNV-1a 64) differ is damaged: said, computed again.
 *
 * Where (hd_leak_keep_path): STORE.verdict beside the examined store
 * when its directory is writable and the name is missing or a regular
 * file of this user that no one else may write; else
 * $XDG_CACHE_HOME/heapdump/NAME-KEY.verdict (~/.cache when unset or
 * relative), KEY a hash of the store's absolute path, in a directory of
 * this user that no one else may write. Read only from a regular file
 * of this user that no one else may write (O_NOFOLLOW). Written as the
 * cached stores are (util/cachedir.c, hd__write_private): a temporary
 * file made O_EXCL beside the name, mode 0600, renamed over the name (a
 * link planted there is replaced, never followed). leaks keeps its
 * whole report the same way (hd_leak_keep_read_what: the key holds its
 * format, options and names too); a dump's only in the cache directory
 * (hd_leak_keep_place).
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

#define KEEP_PATH_MAX 4096
#define KEEP_MAX_BYTES ((size_t)4 << 20)
#define KEEP_MAGIC "heapdump-verdict 1\n"

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

#define FNV0 0xcbf29ce484222325ULL

int hd_leak_verdict_json(char **out, size_t *len, const hd_leak_session *ls,
			 const hd_process_verdict *proc, hd_error *err)
{
	const hd_leaks *l = hd_leak_session_leaks(ls);
	const hd_store *s = hd_leak_session_store(ls);
	char *buf = NULL;
	size_t n = 0;
	FILE *f;

	HD_ASSERT_ARG(out && len);
	*out = NULL;
	*len = 0;
	if (!l || !s)
		return hd__error(err, HD_EINVAL,
				 "leak verdict: the session has not run");
	if (!(f = open_memstream(&buf, &n)))
		return hd__error(err, HD_ENOMEM, "out of memory");
	fputs("{\"verdict\":{", f);
	hd_leaks_verdict_json_fields(f, s, l, proc);
	fputs("},\"totals\":{", f);
	hd_leaks_totals_json_fields(f, l);
	fputs("},\"caveats\":", f);
	hd_leak_session_caveats_json(f, ls);
	fputc('}', f);
	if (fclose(f) != 0 || !buf) {
		free(buf);
		return hd__error(err, HD_ENOMEM, "out of memory");
	}
	*out = buf;
	*len = n;
	return 0;
}

/* ---- the key ---- */

/* The key of the session's verdict into a malloc'd string, or NULL out
 * of memory. */
static char *key_text(const hd_leak_session *ls,
		      const hd_process_verdict *proc, const char *what)
{
	const hd_leak_session_options *o = hd_leak_session_options_get(ls);
	hd_store *const *ss;
	const hd_order_pair *pairs;
	char *buf = NULL;
	size_t n = 0, k, np, i;
	FILE *f;

	if (!(f = open_memstream(&buf, &n)))
		return NULL;
	ss = hd__leak_session_stores(ls, &k);
	/* the builder's and the hunt's rules too: stores built by other
	 * rules (the roots inferred), or other rules of judgement, say
	 * otherwise of the same dumps */
	fprintf(f, "version %s %u %u\noptions %u %u %u %.17g %zu %llu\n",
		hd_version(), HD__STORE_BUILDER, HD__VERDICT_RULES,
		o->leaks_flags, o->diff.flags,
		o->diff.read.flags, o->min_share, o->top,
		(unsigned long long)o->min_leak);
	for (i = 0; i < k; i++) {
		hd_store_info info;
		const unsigned char *sid;
		uint64_t slen, j;
		int found;

		hd_store_info_get(&info, ss[i]);
		found = info.source_path && *info.source_path &&
			hd_store_check_source(ss[i], info.source_path,
					      NULL) == 0;
		fprintf(f, "store %zu %llu %llu %llu %llu %llu %u %d", i,
			(unsigned long long)info.nodes,
			(unsigned long long)info.edges,
			(unsigned long long)info.source_size,
			(unsigned long long)info.source_mtime,
			(unsigned long long)info.source_fingerprint,
			info.features, found);
		sid = hd__store_section(ss[i], HD__SEC_SOURCE_ID, &slen);
		if (sid && slen == (uint64_t)HD__SID_COUNT * 8)
			for (j = 0; j < HD__SID_COUNT; j++)
				fprintf(f, " %llu", (unsigned long long)
					hd__le64(sid + j * 8));
		else
			fputs(" -", f);
		fputc('\n', f);
	}
	pairs = hd_leak_session_order(ls, &np);
	for (i = 0; i < np; i++) {
		const hd_order_pair *p = &pairs[i];

		fprintf(f, "pair %zu %u %d %d %llu %llu %llu %llu %llu "
			"%llu %lld %llu %lld\n", i, p->flags, p->traced[0],
			p->traced[1], (unsigned long long)p->generation[0],
			(unsigned long long)p->generation[1],
			(unsigned long long)p->objects[0],
			(unsigned long long)p->objects[1],
			(unsigned long long)p->shared,
			(unsigned long long)p->origin[0].pid,
			(long long)p->origin[0].time_us,
			(unsigned long long)p->origin[1].pid,
			(long long)p->origin[1].time_us);
	}
	if (proc)
		fprintf(f, "process %d %d %d %lld %lld %lld %016llx\n",
			proc->known, proc->has_malloc, proc->outside_ruby,
			(long long)proc->rss_growth,
			(long long)proc->malloc_growth,
			(long long)proc->heap_growth,
			(unsigned long long)fnv1a(FNV0, proc->text,
						  strnlen(proc->text,
							  sizeof(proc->text))));
	else
		fputs("process -\n", f);
	/* what the caller keeps besides (leaks: its format, options and
	 * the names it prints), length first: no value ends it early */
	if (what)
		fprintf(f, "what %zu\n%s\n", strlen(what), what);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* ---- where ---- */

/* 1 when the file f may be written or read as ours beside the store:
 * its directory writable, the name missing or a file of ours */
static int beside_ok(const char *f)
{
	char dir[KEEP_PATH_MAX];
	const char *slash = strrchr(f, '/');
	struct stat sb;

	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == f)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - f), f);
	if (access(dir, W_OK) != 0)
		return 0;
	if (lstat(f, &sb) != 0)
		return errno == ENOENT;
	return hd__file_ours(&sb);
}

int hd_leak_keep_path(char *buf, size_t size, const char *store_path,
		      hd_error *err)
{
	return hd_leak_keep_place(buf, size, store_path, 1, err);
}

int hd_leak_keep_place(char *buf, size_t size, const char *store_path,
		       int beside, hd_error *err)
{
	char abs[KEEP_PATH_MAX], cwd[KEEP_PATH_MAX], dir[KEEP_PATH_MAX];
	const char *name;
	uint64_t h1, h2;
	int n;

	HD_ASSERT_ARG(buf && size && store_path);
	n = snprintf(buf, size, "%s.verdict", store_path);
	if (n < 0 || (size_t)n >= size)
		return hd__error(err, HD_ELIMIT, "'%s': path too long",
				 store_path);
	if (beside && beside_ok(buf))
		return 0;
	if (store_path[0] == '/')
		n = snprintf(abs, sizeof(abs), "%s", store_path);
	else if (!getcwd(cwd, sizeof(cwd)))
		return hd__error_sys(err, errno, "getcwd: %s", strerror(errno));
	else
		n = snprintf(abs, sizeof(abs), "%s/%s", cwd, store_path);
	if (n < 0 || (size_t)n >= sizeof(abs))
		return hd__error(err, HD_ELIMIT, "'%s': path too long",
				 store_path);
	h1 = fnv1a(FNV0, abs, strlen(abs));
	h2 = fnv1a(0x84222325cbf29ce4ULL, abs, strlen(abs));
	name = strrchr(abs, '/') + 1;
	if (hd__cache_dir(dir, sizeof(dir), 0, NULL, 0))
		return hd__error(err, HD_EINVAL, "no place for the verdict: "
				 "'%s' is not writable and neither "
				 "XDG_CACHE_HOME nor HOME is an absolute path",
				 store_path);
	n = snprintf(buf, size, "%s/%.200s-%016llx%016llx.verdict", dir, name,
		     (unsigned long long)h1, (unsigned long long)h2);
	if (n < 0 || (size_t)n >= size)
		return hd__error(err, HD_ELIMIT, "'%s': path too long",
				 store_path);
	return 0;
}

/* ---- read and write ---- */

int hd_leak_keep_read(char **json, size_t *len, char *why, size_t wsize,
		      const char *path, const hd_leak_session *ls,
		      const hd_process_verdict *proc)
{
	return hd_leak_keep_read_what(json, len, why, wsize, path, ls, proc,
				      NULL);
}

int hd_leak_keep_read_what(char **json, size_t *len, char *why,
			   size_t wsize, const char *path,
			   const hd_leak_session *ls,
			   const hd_process_verdict *proc, const char *what)
{
	char *key = NULL, *buf = NULL, *p, *end;
	struct stat sb;
	size_t klen, got = 0;
	unsigned long long want_len, want_sum;
	ssize_t k;
	int fd, rc = -1;

	if (!json || !len || !path || !ls)
		return -1;
	*json = NULL;
	*len = 0;
	if (why && wsize)
		why[0] = '\0';
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		snprintf(why, wsize, "cannot read it (%s)", strerror(errno));
		return -1;
	}
	if (fstat(fd, &sb) != 0 || !hd__file_ours(&sb)) {
		snprintf(why, wsize, "not a file of this user that no one "
			 "else may write");
		goto out;
	}
	if ((uint64_t)sb.st_size > KEEP_MAX_BYTES) {
		snprintf(why, wsize, "damaged (%lld bytes)",
			 (long long)sb.st_size);
		goto out;
	}
	if (!(buf = malloc((size_t)sb.st_size + 1)) ||
	    !(key = key_text(ls, proc, what))) {
		snprintf(why, wsize, "out of memory");
		goto out;
	}
	while (got < (size_t)sb.st_size &&
	       (k = read(fd, buf + got, (size_t)sb.st_size - got)) > 0)
		got += (size_t)k;
	buf[got] = '\0';
	klen = strlen(key);
	if (got < sizeof(KEEP_MAGIC) - 1 ||
	    memcmp(buf, KEEP_MAGIC, sizeof(KEEP_MAGIC) - 1) != 0) {
		snprintf(why, wsize, "damaged (not a kept verdict)");
		goto out;
	}
	p = buf + sizeof(KEEP_MAGIC) - 1;
	if ((size_t)(buf + got - p) < klen || memcmp(p, key, klen) != 0 ||
	    strncmp(p + klen, "json ", 5) != 0) {
		/* a key of another form or other values: stale */
		snprintf(why, wsize, "stale (the dumps, the options or the "
			 "program changed since it was kept)");
		goto out;
	}
	p += klen + 5;
	errno = 0;
	want_len = strtoull(p, &end, 10);
	if (errno || end == p || *end != ' ') {
		snprintf(why, wsize, "damaged (its length)");
		goto out;
	}
	p = end + 1;
	want_sum = strtoull(p, &end, 16);
	if (errno || end == p || *end != '\n') {
		snprintf(why, wsize, "damaged (its sum)");
		goto out;
	}
	p = end + 1;
	if ((uint64_t)(buf + got - p) != (uint64_t)want_len + 1 ||
	    p[want_len] != '\n' ||
	    fnv1a(FNV0, p, (size_t)want_len) != want_sum) {
		snprintf(why, wsize, "damaged (its length or sum differ)");
		goto out;
	}
	memmove(buf, p, (size_t)want_len);
	buf[want_len] = '\0';
	*json = buf;
	*len = (size_t)want_len;
	buf = NULL;
	rc = 1;
out:
	close(fd);
	free(buf);
	free(key);
	return rc;
}

int hd_leak_keep_write(const char *path, const hd_leak_session *ls,
		       const hd_process_verdict *proc, const char *json,
		       size_t len, hd_error *err)
{
	return hd_leak_keep_write_what(path, ls, proc, NULL, json, len, err);
}

int hd_leak_keep_write_what(const char *path, const hd_leak_session *ls,
			    const hd_process_verdict *proc, const char *what,
			    const char *json, size_t len, hd_error *err)
{
	char dir[KEEP_PATH_MAX], cache[KEEP_PATH_MAX], *key, *buf = NULL;
	const char *slash;
	size_t cl, n = 0;
	FILE *f;
	int rc;

	HD_ASSERT_ARG(path && ls && json);
	slash = strrchr(path, '/');
	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) : 1,
		 slash ? path : ".");
	/* in the cache directory: made, and it must be private; beside
	 * the store: the name missing or ours */
	if (!hd__cache_dir(cache, sizeof(cache), 0, NULL, 0) &&
	    strncmp(path, cache, cl = strlen(cache)) == 0 && path[cl] == '/') {
		if (hd__make_dirs(dir) != 0 || !hd__dir_private(dir))
			return hd__error(err, HD_EINVAL, "cannot keep the "
					 "verdict in %s: not a private "
					 "directory of this user", dir);
	} else if (!beside_ok(path)) {
		return hd__error(err, HD_EINVAL, "cannot keep the verdict "
				 "at %s: not a file of this user in a "
				 "writable directory", path);
	}
	if (!(key = key_text(ls, proc, what)))
		return hd__error(err, HD_ENOMEM, "out of memory");
	if (!(f = open_memstream(&buf, &n))) {
		free(key);
		return hd__error(err, HD_ENOMEM, "out of memory");
	}
	fprintf(f, "%s%sjson %zu %016llx\n", KEEP_MAGIC, key, len,
		(unsigned long long)fnv1a(FNV0, json, len));
	fwrite(json, 1, len, f);
	fputc('\n', f);
	free(key);
	if (fclose(f) != 0 || !buf) {
		free(buf);
		return hd__error(err, HD_ENOMEM, "out of memory");
	}
	/* atomically, 0600, a link at the name replaced, never followed */
	rc = hd__write_private(path, buf, n, err);
	free(buf);
	return rc;
}
