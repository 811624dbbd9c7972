/*
 * t_reports.c - the analysis that moved from the CLI into the library,
 * on small hand-built graphs with known answers: interface-with's
 * ranking and records (hd_interface_rank, hd_interface_records), the
 * sub-dump writer of roots-of, subgraph-of and diff -o
 * (hd_subdump_write), diff --with-paths's set (hd_paths_union), stats
 * --namespace's sums (hd_stats_namespace) and the dumper filter
 * (hd_nodes_drop_dumper); bad arguments and a failing sink.
 *
 *   root vm -> 0, 8        0 -> 1, 2 (old)
 *   1 -> 3, 4, 5, 7        2 -> 7, 9, 9 (twice)     3 -> 6
 *   3..9 new; 10 alone, no root reaches it
 *
 * Diff border: 3 (keepalive 2: 3 and 6), 4, 5, 7, 9 held by old objects,
 * 8 by a root. Self border: 1 (holds 3 4 5 7: keepalive 5), 2 (holds 7
 * 9, the repeated 9 once: keepalive 2).
 */
#include "heapdump.h"
#include "t.h"

#include "tgraph.h"

#define ADDR(i) (0x10000 + 0x28 * (i))

static char dump_path[64];

/* Writes the graph as a dump that stays (its records are read back), and
 * builds its store. */
static hd_store *report_graph(void)
{
	static const uint32_t e[][2] = { { 0, 1 }, { 0, 2 }, { 1, 3 }, { 1, 4 },
					 { 1, 5 }, { 1, 7 }, { 2, 7 }, { 2, 9 },
					 { 2, 9 }, { 3, 6 } };
	size_t i, k;
	hd_store *s = NULL;
	FILE *f;
	int fd;

	if (!dump_path[0]) {
		snprintf(dump_path, sizeof(dump_path), "/tmp/t_reports_XXXXXX");
		if ((fd = mkstemp(dump_path)) < 0 || !(f = fdopen(fd, "w")))
			return NULL;
		fprintf(f, "{\"type\":\"ROOT\", \"root\":\"vm\", "
			   "\"references\":[\"0x%x\", \"0x%x\"]}\n",
			ADDR(0), ADDR(8));
		for (i = 0; i < 11; i++) {
			int any = 0;

			fprintf(f, "{\"address\":\"0x%x\", \"type\":\"OBJECT\", "
				   "\"references\":[", ADDR((unsigned)i));
			for (k = 0; k < sizeof(e) / sizeof(e[0]); k++)
				if (e[k][0] == i) {
					fprintf(f, "%s\"0x%x\"", any ? ", " : "",
						ADDR(e[k][1]));
					any = 1;
				}
			fprintf(f, "], \"memsize\":%u}\n", 40 + (unsigned)i);
		}
		fclose(f);
	}
	if (hd_store_build(&s, dump_path, NULL, NULL))
		return NULL;
	return s;
}

static void range(hd_nodes *set, size_t lo, size_t hi)
{
	size_t i;

	set->ids = malloc((hi - lo) * sizeof(*set->ids));
	set->n = 0;
	set->cap = hi - lo;
	for (i = lo; i < hi; i++)
		set->ids[set->n++] = (hd_node_id)i;
}

/* A sink into a growing buffer, NUL-terminated. */
struct buf {
	char *p;
	size_t len, cap;
	unsigned calls;
	int fail; /* returned instead of writing */
};

static int buf_sink(const void *data, size_t n, void *payload)
{
	struct buf *b = payload;

	if (b->fail)
		return b->fail;
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		if (!(b->p = realloc(b->p, b->cap)))
			abort();
	}
	memcpy(b->p + b->len, data, n);
	b->len += n;
	b->p[b->len] = '\0';
	b->calls++;
	return 0;
}

static size_t count_lines(const char *s, const char *needle)
{
	size_t n = 0;
	const char *line = s, *nl;

	while (line && *line) {
		nl = strchr(line, '\n');
		if (!needle || (strstr(line, needle) &&
				(!nl || strstr(line, needle) < nl)))
			n++;
		line = nl ? nl + 1 : NULL;
	}
	return n;
}

/* The line that holds needle, up to its newline, in line[size]. */
static const char *line_of(const char *s, const char *needle, char *line,
			   size_t size)
{
	const char *p = strstr(s, needle), *a, *z;

	if (!p)
		return "";
	for (a = p; a > s && a[-1] != '\n'; a--)
		;
	z = strchr(p, '\n');
	snprintf(line, size, "%.*s", (int)(z ? z - a : (long)strlen(a)), a);
	return line;
}

static void test_reports__interface_rank(void)
{
	hd_store *s = report_graph();
	hd_interface *x = NULL;
	hd_interface_ranking *r = NULL;
	const hd_border *b;
	const hd_border_holder *h;
	hd_nodes set;
	static const hd_node_id order[] = { 3, 4, 5, 7, 8, 9 };
	size_t i;

	T_ASSERT(s);
	range(&set, 3, 10);
	T_RC(hd_interface_with(&x, s, &set, NULL), 0);
	T_RC(hd_interface_rank(&r, x, s, NULL), 0);
	/* by keepalive (3 keeps 6 alive), then retained, then id */
	for (i = 0; i < 6; i++) {
		b = hd_interface_ranking_border(r, i);
		T_ASSERT(b);
		T_EQ(b->id, order[i]);
	}
	T_EQ(hd_interface_ranking_border(r, 0)->keepalive_count, 2);
	T_ASSERT(!hd_interface_ranking_border(r, 6));
	/* holders by keepalive sum; 2's repeated reference to 9 once */
	h = hd_interface_ranking_holder(r, 0);
	T_ASSERT(h);
	T_EQ(h->id, 1);
	T_EQ(h->held, 4);
	T_EQ(h->keepalive, 5);
	h = hd_interface_ranking_holder(r, 1);
	T_ASSERT(h);
	T_EQ(h->id, 2);
	T_EQ(h->held, 2);
	T_EQ(h->keepalive, 2);
	T_ASSERT(!hd_interface_ranking_holder(r, 2));
	T_ASSERT(!hd_interface_ranking_holder(NULL, 0));
	T_ASSERT(!hd_interface_ranking_border(NULL, 0));
	hd_interface_ranking_free(r);
	hd_interface_ranking_free(NULL);
	hd_interface_free(x);
	free(set.ids);
	hd_store_close(s);
}

static void test_reports__interface_records(void)
{
	hd_store *s = report_graph();
	hd_interface *x = NULL;
	struct buf out = { NULL, 0, 0, 0, 0 };
	hd_nodes set;
	char want[128], line[512];

	T_ASSERT(s);
	range(&set, 3, 10);
	T_RC(hd_interface_with(&x, s, &set, NULL), 0);
	T_RC(hd_interface_records(x, s, 0, NULL, buf_sink, &out, NULL), 0);
	T_EQ(count_lines(out.p, NULL), 6);
	T_EQ(out.calls, 6); /* one whole line a call */
	T_EQ(count_lines(out.p, "\"border\":\"self\""), 0);
	snprintf(want, sizeof(want), "\"0x%x\"", ADDR(3));
	line_of(out.p, want, line, sizeof(line));
	T_ASSERT(strstr(line, "\"keepalive_count\":2, "
			      "\"keepalive_memsize\":89"));
	snprintf(want, sizeof(want), "\"held_by\":[\"0x%x\"]}", ADDR(1));
	T_ASSERT(strstr(line, want));
	/* 7: two holders; 8: a root, no holder */
	snprintf(want, sizeof(want), "\"held_by\":[\"0x%x\", \"0x%x\"]}",
		 ADDR(1), ADDR(2));
	T_EQ(count_lines(out.p, want), 1);
	T_EQ(count_lines(out.p, "\"holders\":0, \"held_by\":[], \"roots\":1}"),
	     1);
	/* with the self border: its two records, marked */
	free(out.p);
	memset(&out, 0, sizeof(out));
	T_RC(hd_interface_records(x, s, HD_INTERFACE_RECORDS_SELF, NULL,
				  buf_sink, &out, NULL), 0);
	T_EQ(count_lines(out.p, NULL), 8);
	T_EQ(count_lines(out.p, ", \"border\":\"self\"}"), 2);
	/* a failing sink stops the walk, its value returned unchanged */
	out.fail = 7;
	T_RC(hd_interface_records(x, s, 0, NULL, buf_sink, &out, NULL), 7);
	free(out.p);
	hd_interface_free(x);
	free(set.ids);
	hd_store_close(s);
}

static void test_reports__subdump(void)
{
	hd_store *s = report_graph();
	struct buf out = { NULL, 0, 0, 0, 0 };
	hd_nodes set;
	char want[128], line[512];
	hd_node_id ids[] = { 0, 1, 3 };

	T_ASSERT(s);
	set.ids = ids;
	set.n = set.cap = 3;
	T_RC(hd_subdump_write(s, &set, HD_SUBDUMP_ROOTS | HD_SUBDUMP_RESTRICT,
			      NULL, buf_sink, &out, NULL), 0);
	/* the ROOT line keeps 0, not 8 (not in the set) */
	snprintf(want, sizeof(want),
		 "{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":"
		 "[\"0x%x\"]}\n", ADDR(0));
	T_ASSERT(strncmp(out.p, want, strlen(want)) == 0);
	T_EQ(count_lines(out.p, NULL), 4);
	/* 1 -> 3, 4, 5, 7 restricted to 3 */
	snprintf(want, sizeof(want), "\"address\":\"0x%x\"", ADDR(1));
	line_of(out.p, want, line, sizeof(line));
	snprintf(want, sizeof(want), "\"references\":[\"0x%x\"]", ADDR(3));
	T_ASSERT(strstr(line, want));
	/* no flag: records only, references as they are */
	free(out.p);
	memset(&out, 0, sizeof(out));
	T_RC(hd_subdump_write(s, &set, 0, NULL, buf_sink, &out, NULL), 0);
	T_EQ(count_lines(out.p, NULL), 3);
	T_EQ(count_lines(out.p, "ROOT"), 0);
	snprintf(want, sizeof(want), "\"address\":\"0x%x\"", ADDR(1));
	line_of(out.p, want, line, sizeof(line));
	snprintf(want, sizeof(want), "\"0x%x\"]", ADDR(7));
	T_ASSERT(strstr(line, want));
	out.fail = 5;
	T_RC(hd_subdump_write(s, &set, HD_SUBDUMP_ROOTS, NULL, buf_sink, &out,
			      NULL), 5);
	free(out.p);
	hd_store_close(s);
}

static void test_reports__paths_union(void)
{
	hd_store *s = report_graph();
	hd_nodes set, out = { NULL, 0, 0 };
	hd_node_id ids[] = { 6, 9, 10 };
	static const hd_node_id want[] = { 0, 1, 2, 3, 6, 9, 10 };
	uint64_t unreached = 99;
	size_t i;

	T_ASSERT(s);
	set.ids = ids;
	set.n = set.cap = 3;
	T_RC(hd_paths_union(&out, &unreached, s, &set, 0, NULL), 0);
	T_EQ(unreached, 1); /* 10: no root reaches it, kept all the same */
	T_EQ(out.n, 7);
	for (i = 0; i < out.n; i++)
		T_EQ(out.ids[i], want[i]);
	hd_nodes_free(&out);
	/* no target: an empty set */
	set.n = 0;
	T_RC(hd_paths_union(&out, NULL, s, &set, 0, NULL), 0);
	T_EQ(out.n, 0);
	hd_nodes_free(&out);
	hd_store_close(s);
}

static void test_reports__bad_arguments(void)
{
	hd_store *s = report_graph();
	hd_interface *x = NULL;
	hd_interface_ranking *r = NULL;
	struct buf out = { NULL, 0, 0, 0, 0 };
	hd_nodes set, none = { NULL, 0, 0 };
	hd_node_id bad[] = { 3, 4000 };
	hd_error err;

	T_ASSERT(s);
	range(&set, 3, 10);
	T_RC(hd_interface_with(&x, s, &set, NULL), 0);
	memset(&err, 0, sizeof(err));
	T_RC(hd_interface_rank(NULL, x, s, &err), HD_EINVAL);
	T_EQ(err.code, HD_EINVAL);
	T_ASSERT(err.msg[0]);
	T_RC(hd_interface_rank(&r, NULL, s, NULL), HD_EINVAL);
	T_ASSERT(!r);
	T_RC(hd_interface_rank(&r, x, NULL, NULL), HD_EINVAL);
	T_RC(hd_interface_records(x, s, 1u << 5, NULL, buf_sink, &out, &err),
	     HD_EINVAL);
	T_RC(hd_interface_records(x, s, 0, NULL, NULL, &out, NULL),
	     HD_EINVAL);
	T_RC(hd_subdump_write(s, &set, 1u << 7, NULL, buf_sink, &out, NULL),
	     HD_EINVAL);
	T_RC(hd_subdump_write(NULL, &set, 0, NULL, buf_sink, &out, NULL),
	     HD_EINVAL);
	T_RC(hd_paths_union(NULL, NULL, s, &set, 0, NULL), HD_EINVAL);
	T_RC(hd_paths_union(&none, NULL, s, NULL, 0, NULL), HD_EINVAL);
	/* a target that is no node of s */
	set.n = 2;
	memcpy(set.ids, bad, sizeof(bad));
	T_ASSERT(hd_paths_union(&none, NULL, s, &set, 0, NULL) == HD_EINVAL);
	T_EQ(none.n, 0);
	T_EQ(out.calls, 0);
	T_EQ(hd_nodes_drop_dumper(NULL, s), 0);
	T_EQ(hd_nodes_drop_dumper(&set, NULL), 0);
	hd_interface_free(x);
	free(set.ids);
	hd_store_close(s);
}

static void test_reports__namespace(void)
{
	static const char *names[] = { "Foo",     "Foo::Bar", "FooBar",
				       "Foo:",    "Foo::",    "Bar::Foo",
				       "Foo::A::B" };
	hd_stats_row rows[7];
	hd_namespace_totals t;
	size_t i;

	memset(rows, 0, sizeof(rows));
	for (i = 0; i < 7; i++) {
		rows[i].key[0] = names[i];
		rows[i].key_len[0] = strlen(names[i]);
		rows[i].count = 1u << i;
		rows[i].memsize = 100 * (i + 1);
	}
	/* Foo, Foo::Bar, Foo::, Foo::A::B; not FooBar, Foo: (one colon),
	 * Bar::Foo */
	hd_stats_namespace(&t, rows, 7, "Foo", 3);
	T_EQ(t.rows, 4);
	T_EQ(t.count, 1 + 2 + 16 + 64);
	T_EQ(t.memsize, 100 + 200 + 500 + 700);
	T_EQ(t.saturated, 0);
	T_EQ(hd_stats_row_in_namespace(&rows[3], "Foo", 3), 0);
	T_EQ(hd_stats_row_in_namespace(&rows[4], "Foo", 3), 1);
	T_EQ(hd_stats_row_in_namespace(&rows[6], "Foo::A", 6), 1);
	/* the memsize sum stops at 2^64-1 and says so */
	rows[0].memsize = UINT64_MAX - 50;
	hd_stats_namespace(&t, rows, 7, "Foo", 3);
	T_EQ(t.memsize, UINT64_MAX);
	T_EQ(t.saturated, 1);
	hd_stats_namespace(&t, rows, 7, "Nope", 4);
	T_EQ(t.rows, 0);
	T_EQ(t.count, 0);
}

/* A dump with the allocation tracer and an object dump_all allocated
 * between two ordinary objects. */
static void test_reports__drop_dumper(void)
{
	char path[] = "/tmp/t_reports_XXXXXX";
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	hd_store *s = NULL;
	hd_nodes set;

	T_ASSERT(f);
	fputs("{\"address\":\"0x1000\", \"type\":\"OBJECT\", \"memsize\":40}\n"
	      "{\"address\":\"0x1028\", \"type\":\"DATA\", \"struct\":"
	      "\"ObjectTracing/allocation_info_tracer\", \"memsize\":40}\n"
	      "{\"address\":\"0x1050\", \"type\":\"STRING\", \"file\":"
	      "\"/usr/lib/ruby/3.1.0/objspace.rb\", \"line\":1, "
	      "\"method\":\"dump_all\", \"generation\":3, \"memsize\":40}\n"
	      "{\"address\":\"0x1078\", \"type\":\"OBJECT\", \"memsize\":40}\n",
	      f);
	fclose(f);
	T_RC(hd_store_build(&s, path, NULL, NULL), 0);
	unlink(path);
	range(&set, 0, 4);
	T_EQ(hd_nodes_drop_dumper(&set, s), 2);
	T_EQ(set.n, 2);
	T_EQ(set.ids[0], 0);
	T_EQ(set.ids[1], 3);
	free(set.ids);
	hd_store_close(s);
}

static void test_reports__cleanup(void)
{
	(void)g_store; /* tgraph.h helpers this file does not need */
	(void)rnd;
	if (dump_path[0])
		unlink(dump_path);
	T_ASSERT(1);
}

static const struct t_case cases[] = {
	T_CASE(reports__interface_rank),
	T_CASE(reports__interface_records),
	T_CASE(reports__subdump),
	T_CASE(reports__paths_union),
	T_CASE(reports__bad_arguments),
	T_CASE(reports__namespace),
	T_CASE(reports__drop_dumper),
	T_CASE(reports__cleanup),
};

T_MAIN(cases)
