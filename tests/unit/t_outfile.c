/*
 * t_outfile.c - the one output module (lib/util/outfile.c): a regular or new
 * file through a temporary file renamed over it, a FIFO and a device
 * written in place, symbolic links followed (chains, dangling), modes,
 * nothing left on failure or without a commit, the registry emptied by
 * hd_outfile_cleanup(), spools, hd_file_move. The CLI's use of it is in
 * tests/cli/outputs.sh and tests/cli/faults.sh.
 */
#include "t.h"
#include "hd_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64];

static const char *at(const char *name)
{
	static char buf[4][512];
	static int k;

	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", dir, name);
	return buf[k];
}

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/t_outfile.XXXXXX");
	if (!mkdtemp(dir))
		abort();
}

/* The names in dir, sorted, space-separated ("" when empty). */
static const char *listing(void)
{
	static char buf[1024];
	struct dirent **v;
	int n, i;

	size_t len = 0;

	buf[0] = '\0';
	n = scandir(dir, &v, NULL, alphasort);
	for (i = 0; i < n; i++) {
		if (v[i]->d_name[0] != '.' && len < sizeof(buf))
			len += (size_t)snprintf(buf + len, sizeof(buf) - len,
						"%s%s", len ? " " : "",
						v[i]->d_name);
		free(v[i]);
	}
	if (n >= 0)
		free(v);
	return buf;
}

static void teardown(void)
{
	struct dirent *e;
	DIR *d = opendir(dir);

	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.')
			unlink(at(e->d_name));
	if (d)
		closedir(d);
	rmdir(dir);
}

static const char *slurp(const char *path)
{
	static char buf[256];
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	buf[n < 0 ? 0 : n] = '\0';
	return buf;
}

static void put(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	if (fd < 0 || write(fd, text, strlen(text)) < 0)
		abort();
	close(fd);
	chmod(path, mode);
}

static int write_str(hd_outfile *o, const char *s)
{
	return hd_outfile_write(o, s, strlen(s), NULL);
}

static void test_outfile__new_and_replaced(void)
{
	hd_outfile *o = NULL;
	struct stat a, b;

	setup();
	put(at("dump"), "d", 0640);
	T_RC(hd_outfile_open(&o, at("out"), at("dump"), 0, NULL), 0);
	T_RC(write_str(o, "new"), 0);
	/* not there before the commit, a temporary file beside it */
	T_ASSERT(access(at("out"), F_OK) != 0);
	T_ASSERT(strncmp(listing(), "dump out.tmp", 12) == 0);
	T_RC(hd_outfile_commit(o, NULL), 0);
	hd_outfile_free(o);
	T_STREQ(slurp(at("out")), "new");
	T_STREQ(listing(), "dump out");
	T_ASSERT(stat(at("out"), &a) == 0);
	T_EQ(a.st_mode & 07777, 0640);
	/* replaced: a new inode, the mode of like (not of the old file) */
	chmod(at("out"), 0644);
	T_RC(hd_outfile_open(&o, at("out"), NULL, 0, NULL), 0);
	T_RC(write_str(o, "again"), 0);
	T_RC(hd_outfile_commit(o, NULL), 0);
	hd_outfile_free(o);
	T_ASSERT(stat(at("out"), &b) == 0);
	T_ASSERT(a.st_ino != b.st_ino);
	T_EQ(b.st_mode & 07777, 0600);
	T_STREQ(slurp(at("out")), "again");
	/* HD_OUTFILE_KEEP_MODE: an existing file keeps its own */
	chmod(at("out"), 0604);
	T_RC(hd_outfile_open(&o, at("out"), at("dump"), HD_OUTFILE_KEEP_MODE,
			     NULL), 0);
	T_RC(hd_outfile_commit(o, NULL), 0);
	hd_outfile_free(o);
	T_ASSERT(stat(at("out"), &b) == 0);
	T_EQ(b.st_mode & 07777, 0604);
	T_STREQ(slurp(at("out")), "");
	teardown();
}

static void test_outfile__uncommitted_leaves_nothing(void)
{
	hd_outfile *o = NULL;

	setup();
	put(at("out"), "old", 0600);
	T_RC(hd_outfile_open(&o, at("out"), NULL, 0, NULL), 0);
	T_RC(write_str(o, "new"), 0);
	hd_outfile_free(o);
	T_STREQ(listing(), "out");
	T_STREQ(slurp(at("out")), "old");
	/* a directory is not an output */
	mkdir(at("d"), 0700);
	T_RC(hd_outfile_open(&o, at("d"), NULL, 0, NULL), HD_EIO);
	T_ASSERT(o == NULL);
	rmdir(at("d"));
	teardown();
}

static void test_outfile__fifo_in_place(void)
{
	hd_outfile *o = NULL;
	struct stat sb;
	char buf[16] = { 0 };
	int rd;

	setup();
	T_ASSERT(mkfifo(at("fifo"), 0600) == 0);
	rd = open(at("fifo"), O_RDONLY | O_NONBLOCK);
	T_ASSERT(rd >= 0);
	T_RC(hd_outfile_open(&o, at("fifo"), NULL, 0, NULL), 0);
	T_RC(write_str(o, "piped"), 0);
	T_RC(hd_outfile_commit(o, NULL), 0);
	hd_outfile_free(o);
	T_EQ(read(rd, buf, sizeof(buf) - 1), 5);
	close(rd);
	T_STREQ(buf, "piped");
	T_ASSERT(lstat(at("fifo"), &sb) == 0 && S_ISFIFO(sb.st_mode));
	T_STREQ(listing(), "fifo");
	teardown();
}

static void test_outfile__full_device(void)
{
	hd_outfile *o = NULL;
	hd_error err = { 0 };
	struct stat sb;
	FILE *f;

	T_ASSERT(stat("/dev/full", &sb) == 0 && S_ISCHR(sb.st_mode));
	/* buffered: the commit's flush fails */
	T_RC(hd_outfile_open(&o, "/dev/full", NULL, 0, NULL), 0);
	T_RC(write_str(o, "x"), 0);
	T_RC(hd_outfile_commit(o, &err), HD_EIO);
	hd_outfile_free(o);
	T_EQ(err.sys_errno, ENOSPC);
	T_STREQ(err.msg, "cannot write '/dev/full': No space left on device");
	/* through the stream */
	T_RC(hd_outfile_open(&o, "/dev/full", NULL, 0, NULL), 0);
	T_ASSERT((f = hd_outfile_stream(o, NULL)) != NULL);
	fputs("x", f);
	memset(&err, 0, sizeof(err));
	T_RC(hd_outfile_commit(o, &err), HD_EIO);
	hd_outfile_free(o);
	T_EQ(err.sys_errno, ENOSPC);
	T_ASSERT(stat("/dev/full", &sb) == 0 && S_ISCHR(sb.st_mode));
}

static void test_outfile__links_followed(void)
{
	hd_outfile *o = NULL;
	char buf[256];
	ssize_t n;

	setup();
	/* a chain: b -> a -> target (relative), target exists */
	put(at("target"), "old", 0600);
	T_ASSERT(symlink("target", at("a")) == 0);
	T_ASSERT(symlink(at("a"), at("b")) == 0);
	T_RC(hd_outfile_open(&o, at("b"), NULL, 0, NULL), 0);
	T_RC(write_str(o, "new"), 0);
	T_RC(hd_outfile_commit(o, NULL), 0);
	hd_outfile_free(o);
	T_STREQ(slurp(at("target")), "new");
	n = readlink(at("b"), buf, sizeof(buf) - 1);
	T_ASSERT(n > 0);
	buf[n] = '\0';
	T_STREQ(buf, at("a"));
	T_STREQ(listing(), "a b target");
	/* dangling: the link's target is created */
	T_ASSERT(symlink("made", at("c")) == 0);
	T_RC(hd_outfile_open(&o, at("c"), NULL, 0, NULL), 0);
	T_RC(write_str(o, "made"), 0);
	T_RC(hd_outfile_commit(o, NULL), 0);
	hd_outfile_free(o);
	T_STREQ(slurp(at("made")), "made");
	T_STREQ(listing(), "a b c made target");
	/* a loop is an error, not a hang */
	T_ASSERT(symlink("e", at("d")) == 0 && symlink("d", at("e")) == 0);
	T_RC(hd_outfile_open(&o, at("d"), NULL, 0, NULL), HD_EIO);
	teardown();
}

static void test_outfile__cleanup_registry(void)
{
	hd_outfile *a = NULL, *b = NULL;
	hd_spool *sp = NULL;
	char *old = getenv("TMPDIR") ? strdup(getenv("TMPDIR")) : NULL;
	int p[2];

	setup();
	setenv("TMPDIR", dir, 1);
	T_ASSERT(pipe(p) == 0);
	T_ASSERT(write(p[1], "spooled", 7) == 7);
	close(p[1]);
	T_RC(hd_spool_new(&sp, p[0], "a pipe", NULL), 0);
	close(p[0]);
	if (old)
		setenv("TMPDIR", old, 1);
	else
		unsetenv("TMPDIR");
	free(old);
	T_STREQ(slurp(hd_spool_path(sp)), "spooled");
	T_RC(hd_outfile_open(&a, at("x"), NULL, 0, NULL), 0);
	T_RC(hd_outfile_open(&b, at("y"), NULL, 0, NULL), 0);
	T_ASSERT(strlen(listing()) > 20);
	/* what a signal handler calls: every live temporary file goes */
	hd_outfile_cleanup();
	T_STREQ(listing(), "");
	hd_outfile_free(a);
	hd_outfile_free(b);
	hd_spool_free(sp);
	/* a committed output is no longer registered */
	T_RC(hd_outfile_open(&a, at("z"), NULL, 0, NULL), 0);
	T_RC(hd_outfile_commit(a, NULL), 0);
	hd_outfile_free(a);
	hd_outfile_cleanup();
	T_STREQ(listing(), "z");
	teardown();
}

static void test_outfile__move(void)
{
	hd_error err = { 0 };

	setup();
	put(at("from"), "dump", 0640);
	put(at("to"), "old", 0600);
	T_RC(hd_file_move(at("from"), at("to"), NULL), 0);
	T_STREQ(listing(), "to");
	T_STREQ(slurp(at("to")), "dump");
	/* to a device: written in place, the source removed */
	put(at("from"), "dump", 0640);
	T_RC(hd_file_move(at("from"), "/dev/null", NULL), 0);
	T_STREQ(listing(), "to");
	/* a missing source: an error, the target untouched */
	T_RC(hd_file_move(at("none"), at("to"), &err), HD_EIO);
	T_STREQ(slurp(at("to")), "dump");
	teardown();
}

static const struct t_case cases[] = {
	T_CASE(outfile__new_and_replaced),
	T_CASE(outfile__uncommitted_leaves_nothing),
	T_CASE(outfile__fifo_in_place),
	T_CASE(outfile__full_device),
	T_CASE(outfile__links_followed),
	T_CASE(outfile__cleanup_registry),
	T_CASE(outfile__move),
};

T_MAIN(cases)
