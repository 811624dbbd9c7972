/*
 * t_pscan.c - hd_stats_add_dump on several threads (pscan.c) gives what
 * one reader gives: totals, rows, read stats and the problems with their
 * lines, columns and order; it really cuts the file, and leaves to one
 * reader what only one reader can decide (not a dump, --strict).
 */
#include "t.h"
#include "hd_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct seen {
	char text[1 << 16];
	size_t len;
};

static void on_problem(const hd_problem *p, void *payload)
{
	struct seen *s = payload;
	int n = snprintf(s->text + s->len, sizeof(s->text) - s->len,
			 "%llu:%llu:%llu:%d:%s\n", (unsigned long long)p->line,
			 (unsigned long long)p->column,
			 (unsigned long long)p->offset, p->repaired, p->msg);

	if (n > 0 && s->len + (size_t)n < sizeof(s->text))
		s->len += (size_t)n;
}

/* Everything a run says, as text. */
static int run(char *out, size_t size, const char *path, unsigned jobs,
	       unsigned flags, struct seen *s)
{
	hd_stats_options o = HD_STATS_OPTIONS_INIT;
	hd_scan_options so = HD_SCAN_OPTIONS_INIT;
	hd_stats *st = NULL;
	hd_stats_totals t;
	hd_read_stats rs;
	hd_error err = { 0 };
	const hd_stats_row *rows;
	size_t n = 0, i, len = 0;
	unsigned g;
	int rc;

	o.ngroupings = 3;
	o.nkeys[0] = o.nkeys[1] = 1;
	o.keys[0][0] = HD_KEY_CLASS;
	o.keys[1][0] = HD_KEY_TYPE;
	o.nkeys[2] = 2;
	o.keys[2][0] = HD_KEY_LOCATION;
	o.keys[2][1] = HD_KEY_GENERATION;
	memset(s, 0, sizeof(*s));
	so.jobs = jobs;
	so.read.flags = flags;
	so.read.problem = on_problem;
	so.read.payload = s;
	if (hd_stats_new(&st, &o, &err))
		return -1;
	memset(&rs, 0, sizeof(rs));
	rc = hd_stats_add_dump(st, path, &so, &rs, &err);
	len += (size_t)snprintf(out + len, size - len, "rc %d %s\n", rc,
				rc ? err.msg : "");
	if (!rc && !hd_stats_finish(st, &err)) {
		hd_stats_totals_get(&t, st);
		len += (size_t)snprintf(
			out + len, size - len,
			"%llu %llu %llu %llu %llu %llu %u lines %llu skipped "
			"%llu repaired %llu\n",
			(unsigned long long)t.objects,
			(unsigned long long)t.memsize,
			(unsigned long long)t.edges,
			(unsigned long long)t.roots,
			(unsigned long long)t.root_categories,
			(unsigned long long)t.traced, t.features,
			(unsigned long long)rs.lines,
			(unsigned long long)rs.skipped,
			(unsigned long long)rs.repaired);
		for (g = 0; g < 3; g++) {
			rows = hd_stats_rows(st, g, HD_SORT_COUNT, &n);
			for (i = 0; i < n && len + 200 < size; i++)
				len += (size_t)snprintf(
					out + len, size - len,
					"%u %.*s %.*s %llu %llu\n", g,
					(int)rows[i].key_len[0], rows[i].key[0],
					g == 2 ? (int)rows[i].key_len[1] : 0,
					g == 2 ? rows[i].key[1] : "",
					(unsigned long long)rows[i].count,
					(unsigned long long)rows[i].memsize);
		}
	}
	hd_stats_free(st);
	return 0;
}

static void write_file(const char *path, const char *text, size_t len)
{
	FILE *f = fopen(path, "wb");

	T_ASSERT(f != NULL);
	if (f) {
		fwrite(text, 1, len, f);
		fclose(f);
	}
}

/* A dump with classes, singletons, sites, joins, raw quotes, garbage. */
static size_t mixed(char *buf, size_t size)
{
	size_t len = 0;
	int i;

	len += (size_t)snprintf(buf + len, size - len,
		"{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":[\"0x10\"]}\n"
		"{\"address\":\"0x10\", \"type\":\"CLASS\", \"name\":\"Foo\", \"references\":[]}\n");
	for (i = 1; i <= 300 && len + 300 < size; i++) {
		if (i % 7 == 0)
			len += (size_t)snprintf(buf + len, size - len,
				"{\"address\":\"0x%x\", \"type\":\"STRING\", \"value\":\"a\nb\", \"memsize\":40}\n",
				4096 + i);
		else if (i % 13 == 0)
			len += (size_t)snprintf(buf + len, size - len,
				"{\"address\":\"0x%x\", \"type\":\"STRING\", \"value\":\"a\"b\", \"memsize\":40}\n",
				4096 + i);
		else if (i % 17 == 0)
			len += (size_t)snprintf(buf + len, size - len,
				"{\"address\":\"0x%x\", \"type\":\"CLASS\", \"class\":\"0x%x\", \"name\":\"K%d\", \"references\":[]}\n",
				0x100000 + i, 0x200000 + i, i);
		else
			len += (size_t)snprintf(buf + len, size - len,
				"{\"address\":\"0x%x\", \"type\":\"OBJECT\", \"class\":\"0x%x\", \"file\":\"f%d.rb\", \"line\":%d, \"generation\":%d, \"memsize\":%d, \"references\":[\"0x10\"]}\n",
				4096 + i, i % 5 ? 0x10 : 0x100000 + (i / 17) * 17,
				i % 3, i % 4, i % 6, i);
		if (i % 11 == 0)
			len += (size_t)snprintf(buf + len, size - len,
						"garbage %d\n", i);
	}
	return len;
}

static void test_pscan__same_as_one_reader(void)
{
	static char buf[1 << 17], a[1 << 17], b[1 << 17];
	static struct seen sa, sb;
	char path[] = "/tmp/t_pscan_XXXXXX";
	int fd = mkstemp(path);
	size_t len;
	unsigned jobs;

	T_ASSERT(fd >= 0);
	close(fd);
	len = mixed(buf, sizeof(buf));
	write_file(path, buf, len);
	T_ASSERT(run(a, sizeof(a), path, 1, 0, &sa) == 0);
	T_EQ(hd__pscan_parts, 0);
	T_ASSERT(sa.len > 0);
	for (jobs = 2; jobs <= 9; jobs++) {
		T_ASSERT(run(b, sizeof(b), path, jobs, 0, &sb) == 0);
		T_EQ(hd__pscan_parts, jobs);
		T_ASSERT(strcmp(b, a) == 0);
		T_ASSERT(strcmp(sb.text, sa.text) == 0);
	}
	/* --strict: one reader's first error, with its line */
	T_ASSERT(run(a, sizeof(a), path, 1, HD_READ_STRICT, &sa) == 0);
	T_ASSERT(run(b, sizeof(b), path, 4, HD_READ_STRICT, &sb) == 0);
	T_ASSERT(strcmp(b, a) == 0);
	T_ASSERT(strstr(a, ":9:") != NULL);
	unlink(path);
}

static void test_pscan__not_a_dump_is_one_readers(void)
{
	static char buf[1 << 14], a[1 << 14], b[1 << 14];
	static struct seen sa, sb;
	char path[] = "/tmp/t_pscan_XXXXXX";
	int fd = mkstemp(path), i;
	size_t len = 0;

	T_ASSERT(fd >= 0);
	close(fd);
	for (i = 0; i < 100; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len,
					"no json %d\n", i);
	write_file(path, buf, len);
	T_ASSERT(run(a, sizeof(a), path, 1, 0, &sa) == 0);
	T_ASSERT(run(b, sizeof(b), path, 4, 0, &sb) == 0);
	T_EQ(hd__pscan_parts, 0);
	T_ASSERT(strcmp(b, a) == 0);
	T_ASSERT(strcmp(sb.text, sa.text) == 0);
	T_ASSERT(strstr(a, "not a heap dump") != NULL);
	unlink(path);
}

static const struct t_case cases[] = {
	T_CASE(pscan__same_as_one_reader),
	T_CASE(pscan__not_a_dump_is_one_readers),
};

T_MAIN(cases)
