/*
 * t_trust.c - input that must never read as a right answer: files that
 * are not heap dumps (a source file, an empty file, mostly junk, a
 * store), gzip with zero padding, records without an address, numbers
 * out of range, memsize sums past 2^64, a salvaged ROOT rewritten by
 * replace-class.
 */
#include "t.h"
#include "hd_int.h"

#include <unistd.h>
#include <zlib.h>

struct seen {
	int problems;
	int repaired;
	uint64_t lines[64];
	char msg[64][128];
};

static void on_problem(const hd_problem *p, void *payload)
{
	struct seen *s = payload;

	if (s->problems < 64) {
		s->lines[s->problems] = p->line;
		snprintf(s->msg[s->problems], sizeof(s->msg[0]), "%s", p->msg);
	}
	s->problems++;
	s->repaired += p->repaired;
}

/* Reads every record of buf[0..len); returns 0 at a clean end. */
static int read_buf(const char *buf, size_t len, unsigned flags,
		    struct seen *s, hd_read_stats *rs, hd_error *err)
{
	hd_read_options o = HD_READ_OPTIONS_INIT;
	hd_reader *r;
	const hd_record *rec;
	int rc;

	memset(s, 0, sizeof(*s));
	memset(err, 0, sizeof(*err));
	o.flags = flags;
	o.problem = on_problem;
	o.payload = s;
	if ((rc = hd_reader_open_mem(&r, buf, len, &o, err)))
		return rc;
	while ((rc = hd_reader_next(r, &rec, err)) == 0)
		;
	if (rs)
		hd_reader_stats(rs, r);
	hd_reader_free(r);
	return rc == HD_ITEROVER ? 0 : rc;
}

static int read_text(const char *text, unsigned flags, struct seen *s,
		     hd_read_stats *rs, hd_error *err)
{
	return read_buf(text, strlen(text), flags, s, rs, err);
}

/* Reads a file to its end; returns 0 at a clean end. */
static int read_path(const char *path, uint64_t *objects, hd_error *err)
{
	hd_reader *r;
	const hd_record *rec;
	int rc;

	*objects = 0;
	memset(err, 0, sizeof(*err));
	if ((rc = hd_reader_open(&r, path, NULL, err)))
		return rc;
	while ((rc = hd_reader_next(r, &rec, err)) == 0)
		*objects += rec->kind == HD_REC_OBJECT;
	hd_reader_free(r);
	return rc == HD_ITEROVER ? 0 : rc;
}

#define REC(a)                                                        \
	"{\"address\":\"" a "\", \"type\":\"STRING\", \"class\":\"0x9\", " \
	"\"memsize\":40}\n"
#define ROOT "{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":[\"0x1\"]}\n"

static const char ruby_src[] =
	"# frozen_string_literal: true\n"
	"require \"json\"\n"
	"\n"
	"class PriceCalculator\n"
	"  CACHE = {}\n"
	"  def price(item) = CACHE[item] ||= item.cost * 2\n"
	"end\n";

static void test_trust__source_file_is_not_a_dump(void)
{
	struct seen s;
	hd_error err;

	T_RC(read_text(ruby_src, 0, &s, NULL, &err), HD_ENOTDUMP);
	T_EQ(err.code, HD_ENOTDUMP);
	T_EQ(err.line, 1);
	T_ASSERT(strstr(err.msg, "(memory): not a heap dump (line 1: "
				 "\"# frozen_string_literal: true\")") != NULL);
	/* the lines of a file that is not a dump are not reported one by
	 * one: the one error says it all */
	T_EQ(s.problems, 0);
	/* strict mode fails at the first line, as before */
	T_RC(read_text(ruby_src, HD_READ_STRICT, &s, NULL, &err), HD_EPARSE);
	T_EQ(err.line, 1);
}

static void test_trust__empty_is_not_a_dump(void)
{
	struct seen s;
	hd_error err;

	T_RC(read_text("", 0, &s, NULL, &err), HD_ENOTDUMP);
	T_ASSERT(strstr(err.msg, "not a heap dump (empty)") != NULL);
	T_RC(read_text("", HD_READ_STRICT, &s, NULL, &err), HD_ENOTDUMP);
	T_RC(read_text("\n\r\n  \n", 0, &s, NULL, &err), HD_ENOTDUMP);
	T_ASSERT(strstr(err.msg, "not a heap dump (only blank lines)") != NULL);
	/* heap_dump's framing around nothing */
	T_RC(read_text("[\n]\n", 0, &s, NULL, &err), HD_ENOTDUMP);
	/* a dump cut within its first record says so */
	T_RC(read_text("{\"address\":\"0x1\", \"ty", 0, &s, NULL, &err),
	     HD_ENOTDUMP);
	T_ASSERT(strstr(err.msg, "not a heap dump (line 1: \"{\\\"address\\\":"
				 "\\\"0x1\\\", \\\"ty\"; the last line is cut "
				 "short: the dump is incomplete)") != NULL);
	T_EQ(s.problems, 0);
	/* a selection file may rightly be empty */
	T_RC(read_text("", HD_READ_ALLOW_EMPTY, &s, NULL, &err), 0);
	T_RC(read_text("\n", HD_READ_ALLOW_EMPTY | HD_READ_STRICT, &s, NULL,
		       &err), 0);
	/* but not a file of something else */
	T_RC(read_text(ruby_src, HD_READ_ALLOW_EMPTY, &s, NULL, &err),
	     HD_ENOTDUMP);
}

/* Junk outnumbering the records: not a dump, though a few parse. */
static void test_trust__mostly_junk_is_not_a_dump(void)
{
	struct seen s;
	hd_read_stats rs;
	hd_error err;

	T_RC(read_text(ROOT REC("0x1") "junk 1\njunk 2\njunk 3\n", 0, &s, &rs,
		       &err),
	     HD_ENOTDUMP);
	T_EQ(err.line, 3);
	T_ASSERT(strstr(err.msg, "not a heap dump (line 3: \"junk 1\"; 3 of 5 "
				 "lines are not heap records)") != NULL);
	/* as many records as junk lines: a damaged dump, read leniently */
	T_RC(read_text(ROOT REC("0x1") REC("0x2") "junk 1\njunk 2\njunk 3\n", 0,
		       &s, &rs, &err),
	     0);
	T_EQ(rs.objects, 2);
	T_EQ(rs.skipped, 3);
	T_EQ(s.problems, 3);
}

/* Junk before the first record is reported once a record comes, in
 * order, with its own line numbers. */
static void test_trust__junk_before_records_is_reported(void)
{
	struct seen s;
	hd_read_stats rs;
	hd_error err;

	T_RC(read_text("Starting...\n\nwarming up\n" ROOT REC("0x1") REC("0x2")
			       REC("0x3"),
		       0, &s, &rs, &err),
	     0);
	T_EQ(rs.objects, 3);
	T_EQ(s.problems, 2);
	T_EQ(s.lines[0], 1);
	T_EQ(s.lines[1], 3);
	T_STREQ(s.msg[0], "not a JSON object");
}

/* 32 lines without a record: refused there, without reading on. */
static void test_trust__refused_early(void)
{
	char *buf = malloc(1 << 20);
	size_t n = 0;
	struct seen s;
	hd_read_stats rs;
	hd_error err;
	int i;

	T_ASSERT(buf);
	for (i = 0; i < 40; i++)
		n += (size_t)sprintf(buf + n, "line %d of a log\n", i + 1);
	for (i = 0; i < 1000; i++)
		n += (size_t)sprintf(buf + n, "{\"address\":\"0x%x\", "
					      "\"type\":\"ARRAY\"}\n", i + 1);
	i = read_buf(buf, n, 0, &s, &rs, &err);
	free(buf);
	T_RC(i, HD_ENOTDUMP);
	T_EQ(err.line, 1);
	T_ASSERT(strstr(err.msg, "(line 1: \"line 1 of a log\"; no record in "
				 "its first 32 lines)") != NULL);
	T_EQ(rs.lines, 32);
	T_EQ(rs.objects, 0);
	T_EQ(s.problems, 0);
}

/* The cited line is escaped (never a raw control byte) and cut. */
static void test_trust__cited_line_escaped_and_cut(void)
{
	const char text[] = "\x1b[2J\x7f\"q\\\xc3\xa9 and a long tail that "
			    "goes on and on and on\n";
	struct seen s;
	hd_error err;
	const char *m;

	T_RC(read_buf(text, sizeof(text) - 1, 0, &s, NULL, &err), HD_ENOTDUMP);
	m = strstr(err.msg, "(line 1: \"");
	T_ASSERT(m);
	T_ASSERT(strstr(m, "\"\\x1b[2J\\x7f\\\"q\\\\\\xc3\\xa9 and a long tail "
			   "that goes on \"...)") != NULL);
	for (m = err.msg; *m; m++)
		T_ASSERT((unsigned char)*m >= 0x20 && (unsigned char)*m < 0x7f);
}

/* A dump with a few bad lines stays lenient, as before. */
static void test_trust__damaged_dump_stays_lenient(void)
{
	struct seen s;
	hd_read_stats rs;
	hd_error err;

	T_RC(read_text(ROOT REC("0x1") "}{ garbage\n" REC("0x2"), 0, &s, &rs,
		       &err),
	     0);
	T_EQ(rs.objects, 2);
	T_EQ(rs.skipped, 1);
	T_EQ(s.problems, 1);
	T_EQ(s.lines[0], 3);
}

static int write_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	int rc;

	if (!f)
		return -1;
	rc = fwrite(p, 1, n, f) == n ? 0 : -1;
	return fclose(f) || rc ? -1 : 0;
}

/* A store given where a dump is read (a pipe, --from): refused. */
static void test_trust__store_is_not_a_dump(void)
{
	char dir[] = "/tmp/t_trust_XXXXXX", dump[64], store[64];
	const char text[] = ROOT REC("0x1") REC("0x2");
	hd_store *s = NULL;
	hd_error err = { 0 };
	uint64_t n;

	T_ASSERT(mkdtemp(dir));
	snprintf(dump, sizeof(dump), "%s/d.json", dir);
	snprintf(store, sizeof(store), "%s/d.hds", dir);
	T_ASSERT(write_file(dump, text, sizeof(text) - 1) == 0);
	T_RC(hd_store_build(&s, dump, NULL, &err), 0);
	T_RC(hd_store_write(s, store, &err), 0);
	hd_store_close(s);
	T_RC(read_path(store, &n, &err), HD_ENOTDUMP);
	T_ASSERT(strstr(err.msg, "d.hds: not a heap dump but a heapdump store")
		 != NULL);
	T_EQ(n, 0);
	T_RC(read_path(dump, &n, &err), 0);
	T_EQ(n, 2);
	unlink(dump);
	unlink(store);
	rmdir(dir);
}

/* A gzip file followed by zero bytes, as gzip -t accepts it. */
static void test_trust__gzip_zero_padding(void)
{
	char dir[] = "/tmp/t_trust_XXXXXX", path[64];
	const char text[] = ROOT REC("0x1") REC("0x2") REC("0x3");
	static unsigned char gz[4096 + 8192];
	z_stream z;
	size_t n;
	uint64_t objects;
	hd_error err;

	memset(&z, 0, sizeof(z));
	T_ASSERT(deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 8,
			      Z_DEFAULT_STRATEGY) == Z_OK);
	z.next_in = (unsigned char *)(uintptr_t)text;
	z.avail_in = sizeof(text) - 1;
	z.next_out = gz;
	z.avail_out = 4096;
	T_ASSERT(deflate(&z, Z_FINISH) == Z_STREAM_END);
	n = 4096 - z.avail_out;
	deflateEnd(&z);
	T_ASSERT(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/p.json.gz", dir);
	/* 8 KiB of zeros: more than one read of the padding */
	memset(gz + n, 0, 8192);
	T_ASSERT(write_file(path, gz, n + 8192) == 0);
	T_RC(read_path(path, &objects, &err), 0);
	T_EQ(objects, 3);
	/* a single zero byte */
	T_ASSERT(write_file(path, gz, n + 1) == 0);
	T_RC(read_path(path, &objects, &err), 0);
	T_EQ(objects, 3);
	/* zeros, then something else: not padding */
	gz[n + 100] = 'x';
	T_ASSERT(write_file(path, gz, n + 8192) == 0);
	T_RC(read_path(path, &objects, &err), HD_EPARSE);
	T_EQ(objects, 3);
	T_ASSERT(strstr(err.msg, "after the zero padding") != NULL);
	unlink(path);
	rmdir(dir);
}

/* A record without an address is reported; strict mode fails there. */
static void test_trust__record_without_address(void)
{
	struct seen s;
	hd_read_stats rs;
	hd_error err;
	const char *text = ROOT "{\"type\":\"METADATA\", \"pid\":4242}\n"
			   REC("0x1") "{\"type\":\"SYMBOL\", \"value\":\"x\"}\n"
			   REC("0x2");

	T_RC(read_text(text, 0, &s, &rs, &err), 0);
	T_EQ(rs.objects, 2);
	T_EQ(rs.others, 0);
	T_EQ(rs.skipped, 2);
	T_EQ(s.problems, 2);
	T_EQ(s.lines[0], 2);
	T_EQ(s.lines[1], 4);
	T_STREQ(s.msg[0], "record has no address");
	T_RC(read_text(text, HD_READ_STRICT, &s, &rs, &err), HD_EPARSE);
	T_EQ(err.line, 2);
	T_ASSERT(strstr(err.msg, "record has no address") != NULL);
}

/* Out-of-range numbers are saturated and reported; strict mode fails. */
static void test_trust__numbers_out_of_range(void)
{
	struct hd__scan sc = { 0 };
	hd_record r;
	struct seen s;
	hd_read_stats rs;
	hd_error err;
	const char *big = "{\"address\":\"0x1\", \"type\":\"STRING\", "
			  "\"memsize\":99999999999999999999}";
	const char *max = "{\"address\":\"0x1\", \"type\":\"STRING\", "
			  "\"memsize\":18446744073709551615}";
	const char *shape = "{\"address\":\"0x1\", \"type\":\"OBJECT\", "
			    "\"shape_id\":4294967296}";
	const char *gen = "{\"address\":\"0x1\", \"type\":\"OBJECT\", "
			  "\"generation\":18446744073709551615}";
	const char *gen_big = "{\"address\":\"0x1\", \"type\":\"OBJECT\", "
			      "\"generation\":1844674407370955161500}";
	const char *gen_ok = "{\"address\":\"0x1\", \"type\":\"OBJECT\", "
			     "\"generation\":18446744073709551614}";
	char text[512];

	T_EQ(hd__scan_line(&sc, big, strlen(big), &r), HD__SCAN_OK);
	T_ASSERT(sc.repaired);
	T_EQ(r.memsize, UINT64_MAX);
	T_EQ(sc.err_col, strlen(big) - 21);
	T_ASSERT(strstr(sc.err_msg, "out of range") != NULL);
	/* 2^64-1 itself is a valid memsize */
	T_EQ(hd__scan_line(&sc, max, strlen(max), &r), HD__SCAN_OK);
	T_ASSERT(!sc.repaired);
	T_EQ(r.memsize, UINT64_MAX);
	T_EQ(hd__scan_line(&sc, shape, strlen(shape), &r), HD__SCAN_OK);
	T_ASSERT(sc.repaired);
	T_EQ(r.shape_id, UINT32_MAX);
	/* no generation can be 2^64-1 (the store's "untraced"): dropped */
	T_EQ(hd__scan_line(&sc, gen, strlen(gen), &r), HD__SCAN_OK);
	T_ASSERT(sc.repaired);
	T_ASSERT(!(r.has & HD_HAS_GENERATION));
	T_EQ(hd__scan_line(&sc, gen_big, strlen(gen_big), &r), HD__SCAN_OK);
	T_ASSERT(sc.repaired);
	T_ASSERT(!(r.has & HD_HAS_GENERATION));
	T_EQ(hd__scan_line(&sc, gen_ok, strlen(gen_ok), &r), HD__SCAN_OK);
	T_ASSERT(!sc.repaired);
	T_EQ(r.generation, UINT64_MAX - 1);
	hd__scan_free(&sc);

	/* through the reader: reported with the line, or a strict failure */
	snprintf(text, sizeof(text), ROOT "%s\n" REC("0x2"), big);
	T_RC(read_text(text, 0, &s, &rs, &err), 0);
	T_EQ(rs.objects, 2);
	T_EQ(rs.repaired, 1);
	T_EQ(s.problems, 1);
	T_EQ(s.repaired, 1);
	T_EQ(s.lines[0], 2);
	T_ASSERT(strstr(s.msg[0], "out of range") != NULL);
	T_RC(read_text(text, HD_READ_STRICT, &s, &rs, &err), HD_EPARSE);
	T_EQ(err.line, 2);
	T_EQ(err.column, strlen(big) - 21 + 1);
	snprintf(text, sizeof(text), ROOT "%s\n", gen);
	T_RC(read_text(text, HD_READ_STRICT, &s, &rs, &err), HD_EPARSE);
	T_ASSERT(strstr(err.msg, "generation") != NULL);
}

static int add_text(hd_stats *st, const char *text, hd_error *err)
{
	hd_reader *r;
	const hd_record *rec;
	int rc;

	if ((rc = hd_reader_open_mem(&r, text, strlen(text), NULL, err)))
		return rc;
	while ((rc = hd_reader_next(r, &rec, err)) == 0)
		if ((rc = hd_stats_add(st, rec, err)))
			break;
	hd_reader_free(r);
	return rc == HD_ITEROVER ? 0 : rc;
}

static hd_stats_options type_grouping(void)
{
	hd_stats_options o = HD_STATS_OPTIONS_INIT;

	o.flags = HD_STATS_ALL;
	o.ngroupings = 1;
	o.nkeys[0] = 1;
	o.keys[0][0] = HD_KEY_TYPE;
	return o;
}

/* memsize sums stop at UINT64_MAX and say so, never wrap. */
static void test_trust__memsize_sums_saturate(void)
{
	hd_stats_options o = type_grouping();
	hd_stats *st = NULL;
	hd_stats_totals t;
	const hd_stats_row *rows;
	size_t n;
	hd_error err = { 0 };
	const char *text =
		ROOT
		"{\"address\":\"0x1\", \"type\":\"STRING\", \"memsize\":18446744073709551615}\n"
		"{\"address\":\"0x2\", \"type\":\"STRING\", \"memsize\":40}\n"
		"{\"address\":\"0x3\", \"type\":\"ARRAY\", \"memsize\":40}\n";

	T_RC(hd_stats_new(&st, &o, &err), 0);
	T_RC(add_text(st, text, &err), 0);
	T_RC(hd_stats_finish(st, &err), 0);
	hd_stats_totals_get(&t, st);
	T_EQ(t.objects, 3);
	T_EQ(t.memsize, UINT64_MAX);
	T_EQ(t.saturated, 1);
	rows = hd_stats_rows(st, 0, HD_SORT_MEMSIZE, &n);
	T_ASSERT(n >= 2);
	T_EQ(rows[0].memsize, UINT64_MAX);
	T_EQ(rows[0].count, 2);
	T_EQ(rows[1].memsize, 40);
	hd_stats_free(st);

	/* below the limit: exact, and not flagged */
	st = NULL;
	T_RC(hd_stats_new(&st, &o, &err), 0);
	T_RC(add_text(st, ROOT REC("0x1") REC("0x2"), &err), 0);
	T_RC(hd_stats_finish(st, &err), 0);
	hd_stats_totals_get(&t, st);
	T_EQ(t.memsize, 80);
	T_EQ(t.saturated, 0);
	hd_stats_free(st);
}

/* The same dump gives the same traced count from the dump and from its
 * store, whatever its generations. */
static void test_trust__generation_dump_and_store_agree(void)
{
	char dir[] = "/tmp/t_trust_XXXXXX", dump[64];
	const char text[] =
		ROOT
		"{\"address\":\"0x1\", \"type\":\"STRING\", \"generation\":18446744073709551615, \"memsize\":40}\n"
		"{\"address\":\"0x2\", \"type\":\"STRING\", \"generation\":18446744073709551614, \"memsize\":40}\n"
		"{\"address\":\"0x3\", \"type\":\"STRING\", \"generation\":7, \"memsize\":40}\n";
	hd_stats_options o = type_grouping();
	hd_stats *a = NULL, *b = NULL;
	hd_stats_totals ta, tb;
	hd_store *s = NULL;
	hd_error err = { 0 };

	T_ASSERT(mkdtemp(dir));
	snprintf(dump, sizeof(dump), "%s/d.json", dir);
	T_ASSERT(write_file(dump, text, sizeof(text) - 1) == 0);
	T_RC(hd_store_build(&s, dump, NULL, &err), 0);
	unlink(dump);
	rmdir(dir);
	T_RC(hd_stats_new(&a, &o, &err), 0);
	T_RC(hd_stats_new(&b, &o, &err), 0);
	T_RC(add_text(a, text, &err), 0);
	T_RC(hd_stats_add_store(b, s, &err), 0);
	T_RC(hd_stats_finish(a, &err), 0);
	T_RC(hd_stats_finish(b, &err), 0);
	hd_stats_totals_get(&ta, a);
	hd_stats_totals_get(&tb, b);
	T_EQ(hd_store_generation(s, 0), UINT64_MAX);
	T_EQ(hd_store_generation(s, 1), UINT64_MAX - 1);
	hd_store_close(s);
	hd_stats_free(a);
	hd_stats_free(b);
	T_EQ(ta.traced, 2);
	T_EQ(tb.traced, 2);
	T_EQ(ta.gen_max, UINT64_MAX - 1);
	T_EQ(tb.gen_max, UINT64_MAX - 1);
}

/* replace-class rebuilds a salvaged ROOT line without a NUL byte. */
static void test_trust__replace_class_salvaged_root(void)
{
	char dir[] = "/tmp/t_trust_XXXXXX", in[64], out[64];
	const char text[] =
		"{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":[\"0x1\", }\n"
		REC("0x1") REC("0x2");
	char got[4096];
	FILE *f;
	size_t n;
	hd_error err = { 0 };

	T_ASSERT(mkdtemp(dir));
	snprintf(in, sizeof(in), "%s/d.json", dir);
	snprintf(out, sizeof(out), "%s/o.json", dir);
	T_ASSERT(write_file(in, text, sizeof(text) - 1) == 0);
	T_RC(hd_replace_class(in, out, NULL, &err), 0);
	f = fopen(out, "rb");
	T_ASSERT(f);
	n = fread(got, 1, sizeof(got) - 1, f);
	fclose(f);
	got[n] = '\0';
	unlink(in);
	unlink(out);
	rmdir(dir);
	T_ASSERT(memchr(got, '\0', n) == NULL);
	T_ASSERT(strstr(got, "{\"type\":\"ROOT\", \"root\":\"vm\"") == got);
}

/* Writes text to a temporary file and builds its store. */
static hd_store *store_of(const char *text)
{
	char path[] = "/tmp/t_trust_sat_XXXXXX";
	int fd = mkstemp(path);
	hd_store *s = NULL;

	if (fd < 0)
		return NULL;
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		s = NULL;
	else if (hd_store_build(&s, path, NULL, NULL))
		s = NULL;
	close(fd);
	unlink(path);
	return s;
}

/* 2^63 twice and 100: a wrapping sum gives 100, a saturating one 2^64-1 */
#define BIG "9223372036854775808"
#define SAT_BEFORE                                                        \
	"{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":[\"0x10\"]}\n" \
	"{\"address\":\"0x10\", \"type\":\"ARRAY\", \"references\":[], "    \
	"\"memsize\":40}\n"
#define SAT_AFTER                                                         \
	"{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":[\"0x10\"]}\n" \
	"{\"address\":\"0x10\", \"type\":\"ARRAY\", \"references\":"         \
	"[\"0x20\"], \"memsize\":40}\n"                                       \
	"{\"address\":\"0x20\", \"type\":\"ARRAY\", \"references\":"         \
	"[\"0x30\", \"0x40\"], \"memsize\":" BIG "}\n"                       \
	"{\"address\":\"0x30\", \"type\":\"STRING\", \"memsize\":" BIG "}\n" \
	"{\"address\":\"0x40\", \"type\":\"STRING\", \"memsize\":100}\n"

/* diff, dominators, the class histogram and interface-with saturate their
 * memsize sums at 2^64-1 and say so, as stats does. */
static void test_trust__graph_memsize_sums_saturate(void)
{
	hd_store *b = store_of(SAT_BEFORE), *a = store_of(SAT_AFTER);
	hd_diff_result *d = NULL;
	hd_domtree *dt = NULL;
	hd_class_retained *rows = NULL;
	hd_interface *x = NULL;
	hd_interface_totals tot;
	const hd_border *bd;
	size_t n, i;
	uint64_t m;

	T_ASSERT(b && a);
	T_RC(hd_diff(&d, b, a, a, NULL, NULL), 0);
	T_EQ(d->added.n, 3);
	T_EQ(d->added_memsize, UINT64_MAX);
	T_EQ(d->retained_memsize, UINT64_MAX);
	T_EQ(d->retained_later_memsize, UINT64_MAX);
	T_EQ(d->memsize_saturated, 1);

	T_RC(hd_domtree_new(&dt, a, 0, NULL), 0);
	hd_domtree_reached(dt, &m);
	T_EQ(m, UINT64_MAX);
	hd_domtree_retained(dt, hd_store_find(a, 0x20), &m);
	T_EQ(m, UINT64_MAX);
	hd_domtree_retained(dt, hd_store_find(a, 0x10), &m);
	T_EQ(m, UINT64_MAX);
	T_RC(hd_domtree_classes(&rows, &n, dt, NULL), 0);
	for (i = 0; i < n; i++)
		if (!strcmp(rows[i].name, "String")) {
			T_EQ(rows[i].shallow, UINT64_MAX);
			T_EQ(rows[i].retained_memsize, UINT64_MAX);
		}
	hd_class_retained_free(rows);

	T_RC(hd_interface_with(&x, a, &d->added, NULL), 0);
	hd_interface_totals_get(&tot, x);
	T_EQ(tot.diff_memsize, UINT64_MAX);
	T_EQ(tot.reached_memsize, UINT64_MAX);
	T_EQ(tot.memsize_saturated, 1);
	bd = hd_interface_diff_border(x, &n);
	T_EQ(n, 1);
	T_EQ(bd[0].retained_memsize, UINT64_MAX);
	T_EQ(bd[0].keepalive_memsize, UINT64_MAX);
	hd_interface_free(x);
	hd_diff_result_free(d);
	d = NULL;

	/* below the limit: exact, not flagged */
	T_RC(hd_diff(&d, b, b, NULL, NULL, NULL), 0);
	T_EQ(d->memsize_saturated, 0);
	hd_diff_result_free(d);
	hd_domtree_free(dt);
	hd_store_close(a);
	hd_store_close(b);
}

static const struct t_case cases[] = {
	T_CASE(trust__source_file_is_not_a_dump),
	T_CASE(trust__empty_is_not_a_dump),
	T_CASE(trust__mostly_junk_is_not_a_dump),
	T_CASE(trust__junk_before_records_is_reported),
	T_CASE(trust__refused_early),
	T_CASE(trust__cited_line_escaped_and_cut),
	T_CASE(trust__damaged_dump_stays_lenient),
	T_CASE(trust__store_is_not_a_dump),
	T_CASE(trust__gzip_zero_padding),
	T_CASE(trust__record_without_address),
	T_CASE(trust__numbers_out_of_range),
	T_CASE(trust__memsize_sums_saturate),
	T_CASE(trust__graph_memsize_sums_saturate),
	T_CASE(trust__generation_dump_and_store_agree),
	T_CASE(trust__replace_class_salvaged_root),
};

T_MAIN(cases)
