/*
 * cachedir.c - the cache directory and the small private files kept in
 * it or beside an input: the cached stores' place (store_cache.c), the
 * records of checked stores (store_trust.c) and the kept verdicts
 * (leak_keep.c) follow one rule, here.
 *
 * The cache directory: $XDG_CACHE_HOME/heapdump, ~/.cache/heapdump when
 * the variable is unset or relative; none when neither is absolute.
 * Made with every missing directory 0700, and used only when it is a
 * real directory (not a link) of this user that no one else may write.
 * A file is ours when it is a regular file of this user that no group
 * or other may write. A private file is written atomically: a temporary
 * file beside the name (O_EXCL, locked while written), mode 0600,
 * synced and renamed over the name, so a link planted there is
 * replaced, never written through (hd__outfile_open_replace).
 */
#include "util_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int hd__file_ours(const struct stat *sb)
{
	return S_ISREG(sb->st_mode) && sb->st_uid == geteuid() &&
	       !(sb->st_mode & 022);
}

int hd__dir_private(const char *path)
{
	struct stat sb;

	return lstat(path, &sb) == 0 && S_ISDIR(sb.st_mode) &&
	       sb.st_uid == geteuid() && !(sb.st_mode & 022);
}

int hd__make_dirs(char *path)
{
	char *p;

	for (p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0700) != 0 && errno != EEXIST) {
			*p = '/';
			return -1;
		}
		*p = '/';
	}
	return mkdir(path, 0700) != 0 && errno != EEXIST ? -1 : 0;
}

int hd__cache_dir(char *buf, size_t size, int make, char *note, size_t nsize)
{
	const char *base = getenv("XDG_CACHE_HOME"), *home;
	int n;

	if (base && base[0] == '/')
		n = snprintf(buf, size, "%s/heapdump", base);
	else if ((home = getenv("HOME")) && home[0] == '/')
		n = snprintf(buf, size, "%s/.cache/heapdump", home);
	else {
		if (note && nsize)
			snprintf(note, nsize,
				 "no cache directory: neither "
				 "XDG_CACHE_HOME nor HOME is an absolute "
				 "path");
		return -1;
	}
	if (n < 0 || (size_t)n >= size) {
		if (note && nsize)
			snprintf(note, nsize,
				 "the cache directory's path is "
				 "too long");
		return -1;
	}
	if (!make)
		return 0;
	if (hd__make_dirs(buf) != 0) {
		if (note && nsize)
			snprintf(note, nsize, "cannot make %.300s: %s", buf,
				 strerror(errno));
		return -1;
	}
	if (!hd__dir_private(buf)) {
		if (note && nsize)
			snprintf(note, nsize,
				 "%.300s is not a private "
				 "directory of this user",
				 buf);
		return -1;
	}
	return 0;
}

int hd__write_private(const char *path, const void *p, size_t n, hd_error *err)
{
	hd_outfile *o = NULL;
	int rc;

	if ((rc = hd__outfile_open_replace(&o, path, 0600, err)))
		return rc;
	if (!(rc = hd_outfile_write(o, p, n, err)))
		rc = hd_outfile_commit(o, err);
	hd_outfile_free(o);
	return rc;
}
