/*
 * t_cachedir.c - the cache directory and private files
 * (lib/util/cachedir.c), the one rule of the cached stores, the records
 * of checked stores and the kept verdicts: the directory under
 * XDG_CACHE_HOME (or HOME) made 0700; a link in its place, a directory
 * of another user or one others may write refused; a private file
 * written 0600, a link planted at its name replaced and its target
 * untouched, no temporary file left; what is ours and what is not.
 */
#include "t.h"
#include "hd_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

static unsigned int mode_of(const char *path)
{
	struct stat sb;

	return lstat(path, &sb) == 0 ? (unsigned int)(sb.st_mode & 07777) :
				       01000000;
}

/* the names in d, those of temporary files counted */
static int temporaries(const char *d)
{
	DIR *dp = opendir(d);
	struct dirent *e;
	int n = 0;

	if (!dp)
		return -1;
	while ((e = readdir(dp)))
		n += strstr(e->d_name, ".tmp") != NULL;
	closedir(dp);
	return n;
}

static void test_cachedir__made_private(void)
{
	char buf[512], note[256];

	t_scratch_make("t_cachedir");
	setenv("XDG_CACHE_HOME", t_at("xdg/deeper"), 1);
	T_RC(hd__cache_dir(buf, sizeof(buf), 0, note, sizeof(note)), 0);
	T_STREQ(buf, t_at("xdg/deeper/heapdump"));
	T_EQ(mode_of(buf), 01000000); /* not made without make */
	T_RC(hd__cache_dir(buf, sizeof(buf), 1, note, sizeof(note)), 0);
	T_EQ(mode_of(t_at("xdg")), 0700);
	T_EQ(mode_of(buf), 0700);
	T_ASSERT(hd__dir_private(buf));
	/* relative XDG_CACHE_HOME: HOME's .cache */
	setenv("XDG_CACHE_HOME", "relative", 1);
	setenv("HOME", t_scratch_(), 1);
	T_RC(hd__cache_dir(buf, sizeof(buf), 0, note, sizeof(note)), 0);
	T_STREQ(buf, t_at(".cache/heapdump"));
	/* neither absolute: none, said */
	setenv("HOME", "rel", 1);
	T_RC(hd__cache_dir(buf, sizeof(buf), 0, note, sizeof(note)), -1);
	T_ASSERT(strstr(note, "neither XDG_CACHE_HOME nor HOME") != NULL);
	t_scratch_remove();
}

static void test_cachedir__refused(void)
{
	char buf[512], note[256];

	t_scratch_make("t_cachedir");
	/* a link in the cache directory's place */
	T_ASSERT(mkdir(t_at("x1"), 0700) == 0 &&
		 mkdir(t_at("elsewhere"), 0700) == 0);
	T_ASSERT(symlink(t_at("elsewhere"), t_at("x1/heapdump")) == 0);
	setenv("XDG_CACHE_HOME", t_at("x1"), 1);
	T_RC(hd__cache_dir(buf, sizeof(buf), 1, note, sizeof(note)), -1);
	T_ASSERT(strstr(note, "not a private directory") != NULL);
	T_ASSERT(!hd__dir_private(t_at("x1/heapdump")));
	/* one others may write */
	T_ASSERT(mkdir(t_at("x2"), 0700) == 0 &&
		 mkdir(t_at("x2/heapdump"), 0700) == 0);
	T_ASSERT(chmod(t_at("x2/heapdump"), 0777) == 0);
	setenv("XDG_CACHE_HOME", t_at("x2"), 1);
	T_RC(hd__cache_dir(buf, sizeof(buf), 1, note, sizeof(note)), -1);
	T_ASSERT(chmod(t_at("x2/heapdump"), 0720) == 0);
	T_RC(hd__cache_dir(buf, sizeof(buf), 1, note, sizeof(note)), -1);
	T_ASSERT(chmod(t_at("x2/heapdump"), 0750) == 0);
	T_RC(hd__cache_dir(buf, sizeof(buf), 1, note, sizeof(note)), 0);
	/* another user's (as root only: chown) */
	if (geteuid() == 0) {
		T_ASSERT(chown(t_at("x2/heapdump"), 65534, 65534) == 0);
		T_RC(hd__cache_dir(buf, sizeof(buf), 1, note, sizeof(note)),
		     -1);
		T_ASSERT(strstr(note, "not a private directory") != NULL);
	}
	t_scratch_remove();
}

static void test_cachedir__private_file(void)
{
	hd_error err = { 0 };
	struct stat sb;
	int fd;

	t_scratch_make("t_cachedir");
	umask(0);
	/* new: 0600, whatever the umask */
	T_RC(hd__write_private(t_at("kept"), "one\n", 4, &err), 0);
	T_EQ(mode_of(t_at("kept")), 0600);
	T_STREQ(t_slurp(t_at("kept")), "one\n");
	T_ASSERT(lstat(t_at("kept"), &sb) == 0 && hd__file_ours(&sb));
	/* replaced: 0600 again even over a file of another mode */
	T_ASSERT(chmod(t_at("kept"), 0644) == 0);
	T_RC(hd__write_private(t_at("kept"), "two\n", 4, &err), 0);
	T_EQ(mode_of(t_at("kept")), 0600);
	T_STREQ(t_slurp(t_at("kept")), "two\n");
	/* a link at the name: replaced, its target untouched */
	fd = open(t_at("victim"), O_WRONLY | O_CREAT | O_EXCL, 0644);
	T_ASSERT(fd >= 0 && write(fd, "victim\n", 7) == 7 && close(fd) == 0);
	T_ASSERT(symlink(t_at("victim"), t_at("link")) == 0);
	T_RC(hd__write_private(t_at("link"), "three\n", 6, &err), 0);
	T_STREQ(t_slurp(t_at("victim")), "victim\n");
	T_ASSERT(lstat(t_at("link"), &sb) == 0 && S_ISREG(sb.st_mode));
	T_EQ(mode_of(t_at("link")), 0600);
	T_STREQ(t_slurp(t_at("link")), "three\n");
	T_EQ(temporaries(t_scratch_()), 0);
	/* a directory at the name: an error, nothing left */
	T_ASSERT(mkdir(t_at("adir"), 0700) == 0);
	T_ASSERT(hd__write_private(t_at("adir"), "x", 1, &err) != 0);
	T_EQ(temporaries(t_scratch_()), 0);
	umask(022);
	t_scratch_remove();
}

static void test_cachedir__ours(void)
{
	struct stat sb;

	t_scratch_make("t_cachedir");
	T_RC(hd__write_private(t_at("f"), "x", 1, NULL), 0);
	T_ASSERT(lstat(t_at("f"), &sb) == 0 && hd__file_ours(&sb));
	T_ASSERT(chmod(t_at("f"), 0620) == 0);
	T_ASSERT(lstat(t_at("f"), &sb) == 0 && !hd__file_ours(&sb));
	T_ASSERT(chmod(t_at("f"), 0602) == 0);
	T_ASSERT(lstat(t_at("f"), &sb) == 0 && !hd__file_ours(&sb));
	T_ASSERT(chmod(t_at("f"), 0644) == 0);
	T_ASSERT(lstat(t_at("f"), &sb) == 0 && hd__file_ours(&sb));
	T_ASSERT(symlink(t_at("f"), t_at("l")) == 0);
	T_ASSERT(lstat(t_at("l"), &sb) == 0 && !hd__file_ours(&sb));
	T_ASSERT(lstat(t_scratch_(), &sb) == 0 && !hd__file_ours(&sb));
	if (geteuid() == 0) {
		T_ASSERT(chown(t_at("f"), 65534, 65534) == 0);
		T_ASSERT(lstat(t_at("f"), &sb) == 0 && !hd__file_ours(&sb));
	}
	t_scratch_remove();
}

static const struct t_case cases[] = {
	T_CASE(cachedir__made_private),
	T_CASE(cachedir__refused),
	T_CASE(cachedir__private_file),
	T_CASE(cachedir__ours),
};

T_MAIN(cases)
