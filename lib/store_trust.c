/*
 * store_trust.c - a store's whole-column check done once: a store file
 * that passed it is not read through again while it is the same file,
 * unchanged, so that opening a large store costs its section table and
 * not a pass over every column (249 MB read on 4.9 M objects, the
 * whole of what "query STORE 'select 1'" and HeapDump.load cost).
 *
 * The record: one line in $XDG_CACHE_HOME/heapdump/checked/DEV-INO
 * (~/.cache when the variable is unset or relative), "heapdump-checked
 * 1 VERSION DEV INO SIZE MTIME.NS CTIME.NS", written after the check
 * passed. A later open trusts it only when the line is exactly the one
 * the store's stat(2) gives now, the record is a regular file of this
 * user that no one else may write, in directories of this user that no
 * one else may write, and the store is ours (mapped: store.c maps only
 * a file of this user writable by no one else). Any write to the store,
 * its truncation or its replacement changes its ctime or inode (which
 * no user can set back), so a damaged store is checked again and
 * refused. A new version of the program checks again (VERSION).
 *
 * Only stores of CHECKED_MIN_SIZE bytes or more keep a record (the
 * check of a smaller one costs less than the record). The test knob
 * HEAPDUMP_STORE_CHECKED: "off" checks every store in full and keeps no
 * record, "all" keeps records for stores of any size.
 *
 * Written as the cached stores are (util/cachedir.c, hd__write_private):
 * a temporary file made O_EXCL in the directory, mode 0600, renamed
 * over the name (a link planted there is replaced, never followed). Failing to write it
 * is silent: the store was checked, the next open checks again.
 */
#include "hd_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CHECKED_MIN_SIZE ((off_t)16 << 20)
#define TRUST_PATH_MAX 4096

/* 0: off, 1: large stores (default), 2: every store */
static int trust_mode(void)
{
	const char *e = getenv("HEAPDUMP_STORE_CHECKED");

	if (e && strcmp(e, "off") == 0)
		return 0;
	if (e && strcmp(e, "all") == 0)
		return 2;
	return 1;
}

/* The record's directory into buf (made when make), checked private
 * down from the heapdump cache directory; -1 when there is none. */
static int record_dir(char *buf, size_t size, int make)
{
	size_t n;

	if (hd__cache_dir(buf, size, make, NULL, 0) ||
	    (n = strlen(buf)) + sizeof("/checked") > size ||
	    !hd__dir_private(buf))
		return -1;
	memcpy(buf + n, "/checked", sizeof("/checked"));
	if (make && mkdir(buf, 0700) != 0 && errno != EEXIST)
		return -1;
	return hd__dir_private(buf) ? 0 : -1;
}

/* The record's line for the store of stat st */
static int record_line(char *buf, size_t size, const struct stat *st)
{
	return snprintf(buf, size,
			"heapdump-checked 1 %s %llu %llu %llu %llu.%09ld "
			"%llu.%09ld\n",
			hd_version(), (unsigned long long)st->st_dev,
			(unsigned long long)st->st_ino,
			(unsigned long long)st->st_size,
			(unsigned long long)st->st_mtim.tv_sec,
			(long)st->st_mtim.tv_nsec,
			(unsigned long long)st->st_ctim.tv_sec,
			(long)st->st_ctim.tv_nsec);
}

static int record_name(char *buf, size_t size, const char *dir,
		       const struct stat *st)
{
	int k = snprintf(buf, size, "%s/%llx-%llx", dir,
			 (unsigned long long)st->st_dev,
			 (unsigned long long)st->st_ino);

	return k < 0 || (size_t)k >= size ? -1 : 0;
}

int hd__store_checked(const struct stat *st)
{
	char dir[TRUST_PATH_MAX], f[TRUST_PATH_MAX], want[256], got[256];
	struct stat rs;
	ssize_t k;
	int fd, n, mode = trust_mode(), ok;

	if (!mode || (mode == 1 && st->st_size < CHECKED_MIN_SIZE))
		return 0;
	if (record_dir(dir, sizeof(dir), 0) ||
	    record_name(f, sizeof(f), dir, st))
		return 0;
	n = record_line(want, sizeof(want), st);
	if (n < 0 || (size_t)n >= sizeof(want))
		return 0;
	fd = open(f, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ok = fstat(fd, &rs) == 0 && hd__file_ours(&rs) && rs.st_size == n;
	if (ok) {
		k = read(fd, got, sizeof(got));
		ok = k == n && memcmp(got, want, (size_t)n) == 0;
	}
	close(fd);
	return ok;
}

void hd__store_keep_checked(const struct stat *st)
{
	char dir[TRUST_PATH_MAX], f[TRUST_PATH_MAX], line[256];
	hd_error err = { 0 };
	int n, mode = trust_mode();

	if (!mode || (mode == 1 && st->st_size < CHECKED_MIN_SIZE))
		return;
	if (record_dir(dir, sizeof(dir), 1) ||
	    record_name(f, sizeof(f), dir, st))
		return;
	n = record_line(line, sizeof(line), st);
	if (n < 0 || (size_t)n >= sizeof(line))
		return;
	/* silent on failure: the next open checks again */
	(void)hd__write_private(f, line, (size_t)n, &err);
}
