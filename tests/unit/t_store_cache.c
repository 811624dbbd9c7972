/*
 * t_store_cache.c - hd_store_open_cached(), the cache rule that serve
 * and the gem share (lib/store_cache.c): built beside the dump and
 * reused untouched; a changed dump, a damaged store rebuilt; a file that
 * is not a store never written over (the cache directory instead); a
 * cache directory that is not private, or a link, never used; a store
 * given opened as it is; HD_CACHE_DOMINATORS keeps the tree. The read-only
 * directory case (as another user) is in tests/cli/serve_cache.sh.
 */
#include "t.h"
#include "store_fixture.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(text, f) < 0 || fclose(f))
		abort();
}

static void setup(void)
{
	t_scratch_make("t_store_cache");
	put(t_at("app.json"), fixture_dump);
	setenv("XDG_CACHE_HOME", t_at("cache"), 1);
}

static struct timespec mtime_of(const char *path)
{
	struct stat sb;
	struct timespec z = { 0, 0 };

	return stat(path, &sb) == 0 ? sb.st_mtim : z;
}

static off_t size_of(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0 ? sb.st_size : -1;
}

/* Opens app.json through the cache; the store's node count. */
static uint32_t open_app(hd_cache_result *res, unsigned flags)
{
	hd_cache_options o = HD_CACHE_OPTIONS_INIT;
	hd_store *s = NULL;
	hd_error err = { 0 };
	uint32_t n;

	o.flags = flags;
	if (hd_store_open_cached(&s, res, t_at("app.json"), &o, &err) != 0) {
		fprintf(stderr, "open_cached: %s\n", err.msg);
		return 0;
	}
	n = hd_store_node_count(s);
	hd_store_close(s);
	return n;
}

static void test_cache__built_beside_then_reused(void)
{
	hd_cache_result r;
	struct timespec m1, m2;
	uint32_t n;
	char want[600];

	setup();
	n = open_app(&r, 0);
	T_ASSERT(n > 0);
	T_EQ(r.how, HD_CACHE_BUILT);
	T_STREQ(r.path, t_at("app.json.hds"));
	T_EQ(hd_store_is_store(t_at("app.json.hds")), 1);
	m1 = mtime_of(t_at("app.json.hds"));
	T_EQ(open_app(&r, 0), n);
	T_EQ(r.how, HD_CACHE_REUSED);
	T_STREQ(r.path, t_at("app.json.hds"));
	m2 = mtime_of(t_at("app.json.hds"));
	T_EQ(m1.tv_sec, m2.tv_sec);
	T_EQ(m1.tv_nsec, m2.tv_nsec);
	/* the path it would write */
	T_RC(hd_store_cache_path(want, sizeof(want), t_at("app.json"), NULL), 0);
	T_STREQ(want, t_at("app.json.hds"));
	t_scratch_remove();
}

static void test_cache__changed_dump_rebuilt(void)
{
	hd_cache_result r;
	struct timeval tv[2] = { { 1000000000, 0 }, { 1000000000, 0 } };
	uint32_t n;

	setup();
	n = open_app(&r, 0);
	T_EQ(r.how, HD_CACHE_BUILT);
	/* one more object, same everything else */
	{
		FILE *f = fopen(t_at("app.json"), "a");

		T_ASSERT(f);
		fputs("{\"address\":\"0x7777\", \"type\":\"STRING\", "
		      "\"value\":\"new\", \"memsize\":40}\n", f);
		fclose(f);
	}
	T_EQ(open_app(&r, 0), n + 1);
	T_EQ(r.how, HD_CACHE_BUILT);
	T_ASSERT(strstr(r.note, "stale") != NULL);
	T_EQ(open_app(&r, 0), n + 1);
	T_EQ(r.how, HD_CACHE_REUSED);
	/* only the mtime changes: indexed again too */
	T_ASSERT(utimes(t_at("app.json"), tv) == 0);
	T_EQ(open_app(&r, 0), n + 1);
	T_EQ(r.how, HD_CACHE_BUILT);
	t_scratch_remove();
}

static void test_cache__damaged_rebuilt(void)
{
	hd_cache_result r;
	uint32_t n;

	setup();
	n = open_app(&r, 0);
	T_EQ(r.how, HD_CACHE_BUILT);
	/* the magic kept, the rest cut: a store of ours, damaged */
	T_ASSERT(truncate(t_at("app.json.hds"), size_of(t_at("app.json.hds")) / 2) == 0);
	T_EQ(open_app(&r, 0), n);
	T_EQ(r.how, HD_CACHE_BUILT);
	T_ASSERT(strstr(r.note, "damaged") != NULL);
	T_EQ(open_app(&r, 0), n);
	T_EQ(r.how, HD_CACHE_REUSED);
	t_scratch_remove();
}

/* a store of the format before (version 1: no class edges) is indexed
 * again, and the note says why, not "damaged" */
static void test_cache__old_format_rebuilt(void)
{
	hd_cache_result r;
	unsigned char v[4] = { 1, 0, 0, 0 };
	uint32_t n;
	int fd;

	setup();
	n = open_app(&r, 0);
	T_EQ(r.how, HD_CACHE_BUILT);
	fd = open(t_at("app.json.hds"), O_WRONLY);
	T_ASSERT(fd >= 0);
	T_ASSERT(pwrite(fd, v, 4, 8) == 4);
	close(fd);
	T_EQ(open_app(&r, 0), n);
	T_EQ(r.how, HD_CACHE_BUILT);
	T_ASSERT(strstr(r.note, "in another store format: indexed again") !=
		 NULL);
	T_ASSERT(strstr(r.note, "damaged") == NULL);
	T_EQ(open_app(&r, 0), n);
	T_EQ(r.how, HD_CACHE_REUSED);
	t_scratch_remove();
}

static void test_cache__not_a_store_left_alone(void)
{
	hd_cache_result r;
	struct stat sb;
	uint32_t n;

	setup();
	put(t_at("app.json.hds"), "my notes, not a store\n");
	n = open_app(&r, 0);
	T_ASSERT(n > 0);
	T_STREQ(t_slurp(t_at("app.json.hds")), "my notes, not a store\n");
	T_EQ(r.how, HD_CACHE_BUILT);
	T_ASSERT(strncmp(r.path, t_at("cache/heapdump/app.json-"),
			 strlen(t_at("cache/heapdump/app.json-"))) == 0);
	T_ASSERT(stat(t_at("cache/heapdump"), &sb) == 0);
	T_EQ(sb.st_mode & 0777, 0700);
	T_EQ(open_app(&r, 0), n);
	T_EQ(r.how, HD_CACHE_REUSED);
	T_STREQ(t_slurp(t_at("app.json.hds")), "my notes, not a store\n");
	t_scratch_remove();
}

static void test_cache__foreign_cache_dir_unused(void)
{
	hd_cache_result r;
	uint32_t n;

	setup();
	put(t_at("app.json.hds"), "not a store\n");
	/* a cache directory others may write: not used */
	T_ASSERT(mkdir(t_at("cache"), 0700) == 0);
	T_ASSERT(mkdir(t_at("cache/heapdump"), 0777) == 0);
	T_ASSERT(chmod(t_at("cache/heapdump"), 0777) == 0);
	n = open_app(&r, 0);
	T_ASSERT(n > 0);
	T_EQ(r.how, HD_CACHE_MEMORY);
	T_STREQ(r.path, "");
	T_ASSERT(strstr(r.note, "not a private directory") != NULL);
	T_ASSERT(rmdir(t_at("cache/heapdump")) == 0);
	/* a link to a directory: not used either */
	T_ASSERT(mkdir(t_at("elsewhere"), 0700) == 0);
	T_ASSERT(symlink(t_at("elsewhere"), t_at("cache/heapdump")) == 0);
	T_EQ(open_app(&r, 0), n);
	T_EQ(r.how, HD_CACHE_MEMORY);
	T_EQ(rmdir(t_at("elsewhere")), 0); /* nothing was written in it */
	t_scratch_remove();
}

static void test_cache__link_beside_not_written(void)
{
	hd_cache_result r;

	setup();
	put(t_at("target"), "precious\n");
	T_ASSERT(symlink(t_at("target"), t_at("app.json.hds")) == 0);
	T_ASSERT(open_app(&r, 0) > 0);
	T_STREQ(t_slurp(t_at("target")), "precious\n");
	T_EQ(r.how, HD_CACHE_BUILT);
	T_ASSERT(strstr(r.path, "/cache/heapdump/") != NULL);
	t_scratch_remove();
}

static void test_cache__store_given(void)
{
	hd_cache_options o = HD_CACHE_OPTIONS_INIT;
	hd_cache_result r;
	hd_store *s = NULL;

	setup();
	T_ASSERT(open_app(&r, 0) > 0);
	T_RC(hd_store_open_cached(&s, &r, t_at("app.json.hds"), &o, NULL), 0);
	T_EQ(r.how, HD_CACHE_STORE);
	T_STREQ(r.path, t_at("app.json.hds"));
	hd_store_close(s);
	/* no such file: the open's error */
	T_RC(hd_store_open_cached(&s, &r, t_at("none.json"), &o, NULL), HD_EIO);
	T_ASSERT(s == NULL);
	o.version = 99;
	T_RC(hd_store_open_cached(&s, &r, t_at("app.json"), &o, NULL),
	     HD_EINVAL);
	t_scratch_remove();
}

static void test_cache__dominators_kept(void)
{
	hd_cache_result r;
	off_t plain;

	setup();
	T_ASSERT(open_app(&r, 0) > 0);
	plain = size_of(t_at("app.json.hds"));
	T_ASSERT(unlink(t_at("app.json.hds")) == 0);
	T_ASSERT(open_app(&r, HD_CACHE_DOMINATORS) > 0);
	T_EQ(r.how, HD_CACHE_BUILT);
	T_ASSERT(size_of(t_at("app.json.hds")) > plain);
	t_scratch_remove();
}

static const struct t_case cases[] = {
	T_CASE(cache__built_beside_then_reused),
	T_CASE(cache__changed_dump_rebuilt),
	T_CASE(cache__damaged_rebuilt),
	T_CASE(cache__old_format_rebuilt),
	T_CASE(cache__not_a_store_left_alone),
	T_CASE(cache__foreign_cache_dir_unused),
	T_CASE(cache__link_beside_not_written),
	T_CASE(cache__store_given),
	T_CASE(cache__dominators_kept),
};

T_MAIN(cases)
