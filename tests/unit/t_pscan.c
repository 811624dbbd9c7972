/*
 * t_pscan.c - hd_stats_add_dump on several threads (pscan.c) gives what
 * one reader gives: totals, rows, read stats and the problems with their
 * lines, columns and order; it really cuts the file, and leaves to one
 * reader what only one reader can decide (not a dump, --strict). Lines
 * longer than a range's buffer and than the window a cut is looked for
 * in are read, joined and cut as one reader would, also where the file
 * is mapped and each thread drops the pages it has read every few KiB.
 */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include "t.h"
#include "hd_int.h"
#include "util/thread.h"

#include <sched.h>

#include <fcntl.h>
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

/* text (len bytes) as a new temporary dump at path (a mkstemp template). */
static void temp_dump(char *path, const char *text, size_t len)
{
	int fd = mkstemp(path);

	T_ASSERT(fd >= 0);
	close(fd);
	write_file(path, text, len);
}

/*
 * The dump at path read on 2 to 9 threads says what one reader says
 * (a, sa: its words); exact: into exactly that many parts (else at least
 * two: a part may hold a long line whole).
 */
static void same_on_2_to_9(const char *path, const char *a,
			   const struct seen *sa, char *b, size_t bsize,
			   struct seen *sb, int exact)
{
	unsigned jobs;
	size_t take_min = hd__pscan_take_min;

	if (exact)
		hd__pscan_take_min = SIZE_MAX; /* no part taken */
	for (jobs = 2; jobs <= 9; jobs++) {
		T_ASSERT(run(b, bsize, path, jobs, 0, sb) == 0);
		if (exact)
			T_EQ(hd__pscan_parts, jobs);
		else
			T_ASSERT(hd__pscan_parts >= 2);
		T_STREQ(b, a);
		T_STREQ(sb->text, sa->text);
	}
	hd__pscan_take_min = take_min;
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

	temp_dump(path, buf, mixed(buf, sizeof(buf)));
	T_ASSERT(run(a, sizeof(a), path, 1, 0, &sa) == 0);
	T_EQ(hd__pscan_parts, 0);
	T_ASSERT(sa.len > 0);
	same_on_2_to_9(path, a, &sa, b, sizeof(b), &sb, 1);
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


/* n bytes of a string value's text, with a raw newline at split (if
 * below n) and a raw quote at quote (if below n). */
static size_t value_text(char *out, size_t n, size_t split, size_t quote)
{
	size_t i;

	for (i = 0; i < n; i++)
		out[i] = i == split ? '\n' : i == quote ? '"' : (char)('a' + i % 26);
	return n;
}

/*
 * A dump of lines from 60 bytes to 700 KiB: longer than a range's
 * buffer (256 KiB) and the cut's window (16 KiB), some split by a raw
 * newline far from their start (joined across refills), some with a raw
 * quote (repaired), garbage between them (skipped).
 */
static size_t long_lines(char *buf, size_t size)
{
	static const size_t vlen[] = { 10,     17000,  300,    70000,
				       300000, 40,     700000, 16380,
				       16390,  262144, 5,      100000 };
	size_t len = 0, i, n;

	len += (size_t)snprintf(buf + len, size - len,
		"{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":[\"0x10\"]}\n"
		"{\"address\":\"0x10\", \"type\":\"CLASS\", \"name\":\"Foo\", \"references\":[]}\n");
	for (i = 0; i < 48; i++) {
		n = vlen[i % 12];
		if (len + n + 200 >= size)
			break;
		len += (size_t)snprintf(buf + len, size - len,
			"{\"address\":\"0x%zx\", \"type\":\"STRING\", \"class\":\"0x10\", \"bytesize\":%zu, \"value\":\"",
			(size_t)0x1000 + i, n);
		len += value_text(buf + len, n, i % 5 == 1 ? n - n / 3 : n,
				  i % 7 == 3 ? n / 2 : n);
		len += (size_t)snprintf(buf + len, size - len,
					"\", \"memsize\":%zu}\n", n + 40);
		if (i % 9 == 4)
			len += (size_t)snprintf(buf + len, size - len,
						"garbage %zu\n", i);
	}
	return len;
}

static void test_pscan__long_lines_as_one_reader(void)
{
	static char buf[6 << 20], a[1 << 16], b[1 << 16];
	static struct seen sa, sb;
	char path[] = "/tmp/t_pscan_XXXXXX";
	size_t len;

	len = long_lines(buf, sizeof(buf));
	T_ASSERT(len > (4 << 20));
	temp_dump(path, buf, len);
	T_ASSERT(run(a, sizeof(a), path, 1, 0, &sa) == 0);
	T_ASSERT(strstr(sa.text, "lines joined") != NULL);
	T_ASSERT(strstr(sa.text, ":0:") != NULL); /* a skipped line */
	same_on_2_to_9(path, a, &sa, b, sizeof(b), &sb, 0);
	unlink(path);
}

/*
 * The file read where it is mapped (hd__map_policy forces the mapping,
 * whatever the page cache holds), each of 2 to 9 threads dropping the
 * pages behind it every 64 KiB / threads, against one reader that reads
 * it with read(2): the same totals, rows and problems.
 */
static void test_pscan__small_windows_as_one_reader(void)
{
	static char buf[6 << 20], a[1 << 16], b[1 << 16];
	static struct seen sa, sb;
	char path[] = "/tmp/t_pscan_XXXXXX";
	size_t budget = hd__map_budget;

	temp_dump(path, buf, long_lines(buf, sizeof(buf)));
	hd__map_policy = -1;
	T_ASSERT(run(a, sizeof(a), path, 1, 0, &sa) == 0);
	T_ASSERT(strstr(sa.text, "lines joined") != NULL);
	hd__map_policy = 1;
	hd__map_budget = (size_t)64 << 10;
	same_on_2_to_9(path, a, &sa, b, sizeof(b), &sb, 0);
	hd__map_budget = budget;
	hd__map_policy = 0;
	unlink(path);
}

/* The joiner's rule for a line that starts a record (reader.c's
 * starts_object), written again as the oracle. */
static int starts_record(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p < end && (*p == '[' || *p == ','))
		return 1;
	if (end - p < 4 || p[0] != '{' || p[1] != '"')
		return 0;
	for (p += 2; p < end && ((*p >= 'a' && *p <= 'z') || *p == '_'); p++)
		;
	return end - p >= 2 && p[0] == '"' && p[1] == ':';
}

/* The first line at or after at that starts a record, by brute force. */
static size_t oracle_cut(const char *buf, size_t len, size_t at)
{
	const char *q;
	size_t p = at;

	if (at && buf[at - 1] != '\n') {
		if (!(q = memchr(buf + at, '\n', len - at)))
			return len;
		p = (size_t)(q - buf) + 1;
	}
	while (p < len) {
		if (!(q = memchr(buf + p, '\n', len - p)))
			return len;
		if (starts_record(buf + p, q))
			return p;
		p = (size_t)(q - buf) + 1;
	}
	return len;
}

static void test_pscan__cut_is_the_next_record_line(void)
{
	static char buf[1 << 18];
	char path[] = "/tmp/t_pscan_XXXXXX";
	int fd = mkstemp(path);
	size_t len = 0, at, want, got, bad = 0, tried = 0, i;

	T_ASSERT(fd >= 0);
	/* records, lines that only look like one (a continuation that
	 * starts {"\u00ff, a key with a capital), heap_dump's framing,
	 * indented records, and lines of 20 and 40 KiB */
	for (i = 0; i < 24; i++) {
		size_t n = i % 6 == 2 ? 20000 : i % 6 == 5 ? 40000 : 30 + i;

		len += (size_t)snprintf(buf + len, sizeof(buf) - len,
					i % 8 == 3   ? "{\"\\u00ff\":\"" :
					i % 8 == 6   ? "{\"Address\":\"" :
					i % 8 == 7   ? "  {\"type\":\"" :
					i % 12 == 10 ? ",{\"type\":\"" :
						       "{\"address\":\"");
		len += value_text(buf + len, n, n, n);
		len += (size_t)snprintf(buf + len, sizeof(buf) - len,
					"\"}\n");
	}
	len += (size_t)snprintf(buf + len, sizeof(buf) - len,
				"{\"type\":\"last, without a newline");
	T_ASSERT(write(fd, buf, len) == (ssize_t)len);
	/* every offset near a line's start, and one in 97 elsewhere */
	for (at = 0; at <= len; at++) {
		int near = 0;

		for (i = at > 3 ? at - 3 : 0; i <= at + 3 && i < len; i++)
			near |= i == 0 || buf[i - 1] == '\n';
		if (!near && at % 97)
			continue;
		tried++;
		want = oracle_cut(buf, len, at);
		got = hd__reader_cut(fd, len, at);
		if (got != want && bad++ < 5)
			fprintf(stderr, "# cut at %zu: %zu, not %zu\n", at, got,
				want);
	}
	T_EQ(bad, 0);
	T_ASSERT(tried > 1000);
	/* no cut before the last line, nor in an unreadable file */
	T_EQ(hd__reader_cut(fd, len, len - 5), len);
	T_EQ(hd__reader_cut(-1, len, 100), len);
	close(fd);
	unlink(path);
}

/*
 * Parts claimed a few lines at a time, and any rest of a few hundred
 * bytes taken by an idle thread: the parts end up many more than the
 * threads, cut wherever the timing of the threads puts them, and every
 * run says what one reader says.
 */
static void test_pscan__taken_parts_as_one_reader(void)
{
	static char buf[1 << 17], a[1 << 17], b[1 << 17];
	static char lbuf[6 << 20];
	static struct seen sa, sb;
	char path[] = "/tmp/t_pscan_XXXXXX", lpath[] = "/tmp/t_pscan_XXXXXX";
	size_t slice = hd__pscan_slice, take_min = hd__pscan_take_min;
	unsigned jobs, round, more = 0, runs = 0;

	temp_dump(path, buf, mixed(buf, sizeof(buf)));
	temp_dump(lpath, lbuf, long_lines(lbuf, sizeof(lbuf)));
	hd__pscan_slice = 64;
	hd__pscan_take_min = 256;
	T_ASSERT(run(a, sizeof(a), path, 1, 0, &sa) == 0);
	for (round = 0; round < 8; round++) {
		for (jobs = 2; jobs <= 5; jobs++) {
			T_ASSERT(run(b, sizeof(b), path, jobs, 0, &sb) == 0);
			T_ASSERT(hd__pscan_parts >= jobs);
			more += hd__pscan_parts > jobs;
			runs++;
			T_STREQ(b, a);
			T_STREQ(sb.text, sa.text);
		}
	}
	/* takes happen (the threads rarely end within 64 bytes) */
	T_ASSERT(more > runs / 4);
	/* lines longer than a slice, joined across claims */
	T_ASSERT(run(a, sizeof(a), lpath, 1, 0, &sa) == 0);
	for (jobs = 2; jobs <= 4; jobs++) {
		T_ASSERT(run(b, sizeof(b), lpath, jobs, 0, &sb) == 0);
		T_STREQ(b, a);
		T_STREQ(sb.text, sa.text);
	}
	/* --strict's first error, whatever part it falls in */
	T_ASSERT(run(a, sizeof(a), path, 1, HD_READ_STRICT, &sa) == 0);
	T_ASSERT(run(b, sizeof(b), path, 3, HD_READ_STRICT, &sb) == 0);
	T_STREQ(b, a);
	hd__pscan_slice = slice;
	hd__pscan_take_min = take_min;
	unlink(path);
	unlink(lpath);
}

/*
 * The threads start on CPUs other than their creator's, one each while
 * there are CPUs for them, then may run anywhere (a new thread that
 * shares its creator's CPU halves the first milliseconds of a scan);
 * with one CPU allowed nothing is pinned. The answer is one reader's
 * either way. Needs two CPUs.
 */
static void test_pscan__threads_start_apart(void)
{
	static char buf[1 << 17], a[1 << 17], b[1 << 17];
	static struct seen sa, sb;
	char path[] = "/tmp/t_pscan_XXXXXX";
	cpu_set_t all, one, now;
	unsigned round, jobs, k;

	T_ASSERT(sched_getaffinity(0, sizeof(all), &all) == 0);
	if (CPU_COUNT(&all) < 2) {
		T_FAIL("needs 2 CPUs allowed, has %d (run it without a "
		       "taskset of one CPU, or on a machine with 2 cores)",
		       CPU_COUNT(&all));
		return;
	}
	temp_dump(path, buf, mixed(buf, sizeof(buf)));
	T_ASSERT(run(a, sizeof(a), path, 1, 0, &sa) == 0);
	for (round = 0; round < 4; round++) {
		for (jobs = 2; jobs <= 4; jobs++) {
			memset(hd__pscan_threads, 0xff,
			       sizeof(hd__pscan_threads));
			T_ASSERT(run(b, sizeof(b), path, jobs, 0, &sb) == 0);
			T_STREQ(b, a);
			T_STREQ(sb.text, sa.text);
			/* the first thread always has a CPU of its own */
			T_ASSERT(hd__pscan_threads[1].creator >= 0);
			T_ASSERT(CPU_ISSET(hd__pscan_threads[1].creator, &all));
			for (k = 1; k < jobs; k++) {
				struct hd__thread *at = &hd__pscan_threads[k];

				/* one CPU each while they last */
				T_EQ(at->pinned, (int)k < CPU_COUNT(&all));
				T_EQ(at->freed, at->pinned);
				if (at->pinned) {
					T_EQ(at->creator,
					     hd__pscan_threads[1].creator);
					T_ASSERT(at->cpu >= 0);
					T_ASSERT(at->cpu != at->creator);
					T_ASSERT(CPU_ISSET(at->cpu, &all));
				}
			}
			/* and no two first ones on the same CPU */
			for (k = 2; k < jobs; k++)
				if (hd__pscan_threads[k].pinned)
					T_ASSERT(hd__pscan_threads[k].cpu !=
						 hd__pscan_threads[k - 1].cpu);
		}
	}
	/* one CPU allowed (inherited by the threads): nothing pinned */
	CPU_ZERO(&one);
	for (k = 0; k < CPU_SETSIZE && !CPU_ISSET(k, &all); k++)
		;
	CPU_SET(k, &one);
	T_ASSERT(sched_setaffinity(0, sizeof(one), &one) == 0);
	memset(hd__pscan_threads, 0xff, sizeof(hd__pscan_threads));
	T_ASSERT(run(b, sizeof(b), path, 3, 0, &sb) == 0);
	T_ASSERT(sched_setaffinity(0, sizeof(all), &all) == 0);
	T_STREQ(b, a);
	T_STREQ(sb.text, sa.text);
	T_EQ(hd__pscan_threads[1].creator, -1);
	T_EQ(hd__pscan_threads[1].pinned, 0);
	T_EQ(hd__pscan_threads[2].pinned, 0);
	/* the calling thread's own CPUs are untouched */
	T_ASSERT(sched_getaffinity(0, sizeof(now), &now) == 0);
	T_ASSERT(CPU_EQUAL(&now, &all));
	unlink(path);
}

static const struct t_case cases[] = {
	T_CASE(pscan__same_as_one_reader),
	T_CASE(pscan__taken_parts_as_one_reader),
	T_CASE(pscan__not_a_dump_is_one_readers),
	T_CASE(pscan__long_lines_as_one_reader),
	T_CASE(pscan__small_windows_as_one_reader),
	T_CASE(pscan__cut_is_the_next_record_line),
	T_CASE(pscan__threads_start_apart),
};

T_MAIN(cases)
