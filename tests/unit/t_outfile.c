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

/* The names in the scratch directory, sorted, space-separated ("" when empty). */
static const char *listing(void)
{
	static char buf[1024];
	struct dirent **v;
	int n, i;

	size_t len = 0;

	buf[0] = '\0';
	n = scandir(t_scratch_(), &v, NULL, alphasort);
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

	t_scratch_make("t_outfile");
	put(t_at("dump"), "d", 0640);
	T_RC(hd_outfile_open(&o, t_at("out"), t_at("dump"), 0, NULL), 0);
	T_RC(write_str(o, "new"), 0);
	/* not there before the commit, a temporary file beside it */
	T_ASSERT(access(t_at("out"), F_OK) != 0);
	T_ASSERT(strncmp(listing(), "dump out.tmp", 12) == 0);
	T_RC(hd_outfile_commit(o, NULL), 0);
	hd_outfile_free(o);
	T_STREQ(t_slurp(t_at("out")), "new");
	T_STREQ(listing(), "dump out");
	T_ASSERT(stat(t_at("out"), &a) == 0);
	T_EQ(a.st_mode & 07777, 0640);
	/* replaced: a new inode, the mode of like (not of the old file) */
	chmod(t_at("out"), 0644);
	T_RC(hd_outfile_open(&o, t_at("out"), NULL, 0, NULL), 0);
	T_RC(write_str(o, "again"), 0);
	T_RC(hd_outfile_commit(o, NULL), 0);
	hd_outfile_free(o);
	T_ASSERT(stat(t_at("out"), &b) == 0);
	T_ASSERT(a.st_ino != b.st_ino);
	T_EQ(b.st_mode & 07777, 0600);
	T_STREQ(t_slurp(t_at("out")), "again");
	/* HD_OUTFILE_KEEP_MODE: an existing file keeps its own */
	chmod(t_at("out"), 0604);
	T_RC(hd_outfile_open(&o, t_at("out"), t_at("dump"), HD_OUTFILE_KEEP_MODE,
			     NULL), 0);
	T_RC(hd_outfile_commit(o, NULL), 0);
	hd_outfile_free(o);
	T_ASSERT(stat(t_at("out"), &b) == 0);
	T_EQ(b.st_mode & 07777, 0604);
	T_STREQ(t_slurp(t_at("out")), "");
	t_scratch_remove();
}

static void test_outfile__uncommitted_leaves_nothing(void)
{
	hd_outfile *o = NULL;

	t_scratch_make("t_outfile");
	put(t_at("out"), "old", 0600);
	T_RC(hd_outfile_open(&o, t_at("out"), NULL, 0, NULL), 0);
	T_RC(write_str(o, "new"), 0);
	hd_outfile_free(o);
	T_STREQ(listing(), "out");
	T_STREQ(t_slurp(t_at("out")), "old");
	/* a directory is not an output */
	mkdir(t_at("d"), 0700);
	T_RC(hd_outfile_open(&o, t_at("d"), NULL, 0, NULL), HD_EIO);
	T_ASSERT(o == NULL);
	rmdir(t_at("d"));
	t_scratch_remove();
}

static void test_outfile__fifo_in_place(void)
{
	hd_outfile *o = NULL;
	struct stat sb;
	char buf[16] = { 0 };
	int rd;

	t_scratch_make("t_outfile");
	T_ASSERT(mkfifo(t_at("fifo"), 0600) == 0);
	rd = open(t_at("fifo"), O_RDONLY | O_NONBLOCK);
	T_ASSERT(rd >= 0);
	T_RC(hd_outfile_open(&o, t_at("fifo"), NULL, 0, NULL), 0);
	T_RC(write_str(o, "piped"), 0);
	T_RC(hd_outfile_commit(o, NULL), 0);
	hd_outfile_free(o);
	T_EQ(read(rd, buf, sizeof(buf) - 1), 5);
	close(rd);
	T_STREQ(buf, "piped");
	T_ASSERT(lstat(t_at("fifo"), &sb) == 0 && S_ISFIFO(sb.st_mode));
	T_STREQ(listing(), "fifo");
	t_scratch_remove();
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

	t_scratch_make("t_outfile");
	/* a chain: b -> a -> target (relative), target exists */
	put(t_at("target"), "old", 0600);
	T_ASSERT(symlink("target", t_at("a")) == 0);
	T_ASSERT(symlink(t_at("a"), t_at("b")) == 0);
	T_RC(hd_outfile_open(&o, t_at("b"), NULL, 0, NULL), 0);
	T_RC(write_str(o, "new"), 0);
	T_RC(hd_outfile_commit(o, NULL), 0);
	hd_outfile_free(o);
	T_STREQ(t_slurp(t_at("target")), "new");
	n = readlink(t_at("b"), buf, sizeof(buf) - 1);
	T_ASSERT(n > 0);
	buf[n] = '\0';
	T_STREQ(buf, t_at("a"));
	T_STREQ(listing(), "a b target");
	/* dangling: the link's target is created */
	T_ASSERT(symlink("made", t_at("c")) == 0);
	T_RC(hd_outfile_open(&o, t_at("c"), NULL, 0, NULL), 0);
	T_RC(write_str(o, "made"), 0);
	T_RC(hd_outfile_commit(o, NULL), 0);
	hd_outfile_free(o);
	T_STREQ(t_slurp(t_at("made")), "made");
	T_STREQ(listing(), "a b c made target");
	/* a loop is an error, not a hang */
	T_ASSERT(symlink("e", t_at("d")) == 0 && symlink("d", t_at("e")) == 0);
	T_RC(hd_outfile_open(&o, t_at("d"), NULL, 0, NULL), HD_EIO);
	t_scratch_remove();
}

static void test_outfile__cleanup_registry(void)
{
	hd_outfile *a = NULL, *b = NULL;
	hd_spool *sp = NULL;
	char *old = getenv("TMPDIR") ? strdup(getenv("TMPDIR")) : NULL;
	int p[2];

	t_scratch_make("t_outfile");
	setenv("TMPDIR", t_scratch_(), 1);
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
	T_STREQ(t_slurp(hd_spool_path(sp)), "spooled");
	T_RC(hd_outfile_open(&a, t_at("x"), NULL, 0, NULL), 0);
	T_RC(hd_outfile_open(&b, t_at("y"), NULL, 0, NULL), 0);
	T_ASSERT(strlen(listing()) > 20);
	/* what a signal handler calls: every live temporary file goes */
	hd_outfile_cleanup();
	T_STREQ(listing(), "");
	hd_outfile_free(a);
	hd_outfile_free(b);
	hd_spool_free(sp);
	/* a committed output is no longer registered */
	T_RC(hd_outfile_open(&a, t_at("z"), NULL, 0, NULL), 0);
	T_RC(hd_outfile_commit(a, NULL), 0);
	hd_outfile_free(a);
	hd_outfile_cleanup();
	T_STREQ(listing(), "z");
	t_scratch_remove();
}

static void test_outfile__move(void)
{
	hd_error err = { 0 };

	t_scratch_make("t_outfile");
	put(t_at("from"), "dump", 0640);
	put(t_at("to"), "old", 0600);
	T_RC(hd_file_move(t_at("from"), t_at("to"), NULL), 0);
	T_STREQ(listing(), "to");
	T_STREQ(t_slurp(t_at("to")), "dump");
	/* to a device: written in place, the source removed */
	put(t_at("from"), "dump", 0640);
	T_RC(hd_file_move(t_at("from"), "/dev/null", NULL), 0);
	T_STREQ(listing(), "to");
	/* a missing source: an error, the target untouched */
	T_RC(hd_file_move(t_at("none"), t_at("to"), &err), HD_EIO);
	T_STREQ(t_slurp(t_at("to")), "dump");
	t_scratch_remove();
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
