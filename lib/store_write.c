/*
 * store_write.c - writing a store file atomically: the header, the
 * section table and the section images go to a new temporary file in the
 * destination's directory, which is synced and renamed over the
 * destination. On any failure the temporary file is removed, so nothing
 * partial is ever found under the final name.
 */
#include "store_format.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#define MAX_WRITE ((size_t)1 << 30)
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

static uint64_t align8(uint64_t x)
{
	return (x + HD__STORE_ALIGN - 1) & ~(uint64_t)(HD__STORE_ALIGN - 1);
}

/* The header and section table; sections follow in id order. */
static uint64_t layout(const hd_store *s, unsigned char *head)
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
		pos = align8(pos + s->len[id]);
		e += HD__STORE_ENTRY;
	}
	hd__put_le64(head + 16, pos);
	return pos;
}

static int write_store(int fd, const hd_store *s)
{
	static const unsigned char zeros[HD__STORE_ALIGN];
	unsigned char head[TABLE_MAX];
	uint64_t pos = table_bytes(s);
	int id;

	layout(s, head);
	if (write_all(fd, head, (size_t)pos))
		return -1;
	for (id = 1; id < HD__SEC__COUNT; id++) {
		if (!present(s, id))
			continue;
		if (write_all(fd, zeros, (size_t)(align8(pos) - pos)))
			return -1;
		pos = align8(pos);
		if (s->len[id] > SIZE_MAX ||
		    write_all(fd, s->sec[id], (size_t)s->len[id]))
			return -1;
		pos += s->len[id];
	}
	return write_all(fd, zeros, (size_t)(align8(pos) - pos));
}

/* Creates a new temporary file next to path; *tmp receives its name. */
static int open_tmp(const char *path, char **tmp, size_t *tmp_size)
{
	static unsigned counter;
	size_t n = strlen(path) + 48;
	int fd = -1, tries;

	if (!(*tmp = hd__malloc(n))) {
		errno = ENOMEM;
		return -1;
	}
	*tmp_size = n;
	for (tries = 0; tries < 100 && fd < 0; tries++) {
		snprintf(*tmp, n, "%s.tmp.%ld.%u", path, (long)getpid(),
			 counter++);
		fd = open(*tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	return fd;
}

/* Makes the rename durable; failures here lose nothing, so they pass. */
static void sync_dir(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir;
	size_t n;
	int fd;

	if (!slash) {
		fd = open(".", O_RDONLY | O_CLOEXEC);
	} else {
		n = slash == path ? 1 : (size_t)(slash - path);
		if (!(dir = hd__malloc(n + 1)))
			return;
		memcpy(dir, path, n);
		dir[n] = '\0';
		fd = open(dir, O_RDONLY | O_CLOEXEC);
		hd__free(dir, n + 1);
	}
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

int hd_store_write(const hd_store *s, const char *path, hd_error *err)
{
	char *tmp = NULL;
	size_t tmp_size = 0;
	int fd, rc = 0, e;

	HD_ASSERT_ARG(s && path);
	fd = open_tmp(path, &tmp, &tmp_size);
	if (fd < 0) {
		e = errno;
		rc = e == ENOMEM ? hd__error(err, HD_ENOMEM, "out of memory") :
				   hd__error_sys(err, e,
						 "cannot create a file next "
						 "to '%s': %s",
						 path, strerror(e));
		goto out;
	}
	if (write_store(fd, s) || fsync(fd)) {
		e = errno;
		close(fd);
		rc = hd__error_sys(err, e, "cannot write '%s': %s", path,
				   strerror(e));
		goto out_unlink;
	}
	if (close(fd)) {
		e = errno;
		rc = hd__error_sys(err, e, "cannot write '%s': %s", path,
				   strerror(e));
		goto out_unlink;
	}
	if (rename(tmp, path)) {
		e = errno;
		rc = hd__error_sys(err, e, "cannot rename to '%s': %s", path,
				   strerror(e));
		goto out_unlink;
	}
	sync_dir(path);
	goto out;
out_unlink:
	unlink(tmp);
out:
	hd__free(tmp, tmp_size);
	return rc;
}
