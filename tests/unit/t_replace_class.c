/*
 * t_replace_class.c - hd_json_repair() (invalid records made valid JSON)
 * and hd_replace_class() (class pointers replaced by names, byte-exact
 * edits, salvaged records, atomic output), plus the scanner reading its
 * output back ("class" as a name, "class_address").
 */
#include "t.h"
#include "hd_int.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* ---- a strict JSON checker, to prove the repairs ---- */

struct js {
	const char *p, *end;
};

static void js_ws(struct js *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' ||
				 *j->p == '\r' || *j->p == '\n'))
		j->p++;
}

static int js_hex4(const char *p, const char *end, unsigned *v)
{
	int i;

	*v = 0;
	if (end - p < 4)
		return -1;
	for (i = 0; i < 4; i++) {
		char c = p[i];

		*v <<= 4;
		if (c >= '0' && c <= '9')
			*v |= (unsigned)(c - '0');
		else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			*v |= (unsigned)((c | 0x20) - 'a' + 10);
		else
			return -1;
	}
	return 0;
}

static int js_string(struct js *j)
{
	unsigned v, lo;

	if (j->p >= j->end || *j->p != '"')
		return -1;
	for (j->p++; j->p < j->end; j->p++) {
		unsigned char c = (unsigned char)*j->p;

		if (c == '"') {
			j->p++;
			return 0;
		}
		if (c < 0x20)
			return -1;
		if (c != '\\')
			continue;
		if (++j->p >= j->end)
			return -1;
		if (strchr("\"\\/bfnrt", *j->p) && *j->p)
			continue;
		if (*j->p != 'u' || js_hex4(j->p + 1, j->end, &v))
			return -1;
		j->p += 4;
		if (v >= 0xdc00 && v <= 0xdfff)
			return -1; /* jq rejects lone surrogates */
		if (v >= 0xd800 && v < 0xdc00) {
			if (j->end - j->p < 7 || j->p[1] != '\\' ||
			    j->p[2] != 'u' || js_hex4(j->p + 3, j->end, &lo) ||
			    lo < 0xdc00 || lo > 0xdfff)
				return -1;
			j->p += 6;
		}
	}
	return -1;
}

static int js_value(struct js *j, int depth)
{
	const char *t;

	js_ws(j);
	if (j->p >= j->end || depth > 100)
		return -1;
	if (*j->p == '"')
		return js_string(j);
	if (*j->p == '{' || *j->p == '[') {
		char close = *j->p == '{' ? '}' : ']';
		int obj = close == '}';

		j->p++;
		js_ws(j);
		if (j->p < j->end && *j->p == close) {
			j->p++;
			return 0;
		}
		for (;;) {
			if (obj) {
				js_ws(j);
				if (js_string(j))
					return -1;
				js_ws(j);
				if (j->p >= j->end || *j->p != ':')
					return -1;
				j->p++;
			}
			if (js_value(j, depth + 1))
				return -1;
			js_ws(j);
			if (j->p < j->end && *j->p == ',') {
				j->p++;
				continue;
			}
			if (j->p < j->end && *j->p == close) {
				j->p++;
				return 0;
			}
			return -1;
		}
	}
	t = j->p;
	if (j->end - t >= 4 &&
	    (!memcmp(t, "true", 4) || !memcmp(t, "null", 4))) {
		j->p += 4;
		return 0;
	}
	if (j->end - t >= 5 && !memcmp(t, "false", 5)) {
		j->p += 5;
		return 0;
	}
	if (j->p < j->end && *j->p == '-')
		j->p++;
	if (j->p >= j->end || *j->p < '0' || *j->p > '9')
		return -1;
	if (*j->p == '0')
		j->p++;
	else
		while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
			j->p++;
	if (j->p < j->end && *j->p == '.') {
		t = ++j->p;
		while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
			j->p++;
		if (j->p == t)
			return -1;
	}
	if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
		j->p++;
		if (j->p < j->end && (*j->p == '+' || *j->p == '-'))
			j->p++;
		t = j->p;
		while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
			j->p++;
		if (j->p == t)
			return -1;
	}
	return 0;
}

/* One JSON object on one line, nothing else. */
static int json_line_ok(const char *s, size_t n)
{
	struct js j;

	if (memchr(s, '\n', n))
		return 0;
	j.p = s;
	j.end = s + n;
	js_ws(&j);
	if (j.p >= j.end || *j.p != '{' || js_value(&j, 0))
		return 0;
	js_ws(&j);
	return j.p == j.end;
}

/* ---- hd_json_repair ---- */

static char rbuf[8192];
static size_t rlen;

static int repair(const char *s, size_t n)
{
	return hd_json_repair(rbuf, sizeof(rbuf), &rlen, s, n, NULL);
}

#define REPAIRS_TO(in, want)                                          \
	do {                                                          \
		T_RC(repair(in, sizeof(in) - 1), 0);                  \
		T_SPANEQ(rbuf, rlen, want);                           \
		T_ASSERT(json_line_ok(rbuf, rlen));                   \
	} while (0)

static void test_repair__valid_json_unchanged(void)
{
	static const char *const lines[] = {
		"{\"address\":\"0x7f01\", \"type\":\"STRING\", "
			"\"class\":\"0x7f02\", "
		"\"bytesize\":3, "
			"\"value\":\"a\\\"b\\\\c\\u0000\\n\\ud83d\\ude00\", "
		"\"encoding\":\"UTF-8\", \"memsize\":40, "
			"\"flags\":{\"wb_protected\":true, "
		"\"age\":2}}",
		"{\"type\":\"ROOT\", \"root\":\"vm\", "
		"\"references\":[\"0x1\", \"0x2\"]}",
		"{ \"a\" : [ ] , \"b\":{}, "
		"\"c\":[1,-2.5e+3,null,false,\"\xc3\xa9\"] }",
		"{\"address\":\"0x1\", \"type\":\"SHAPE\", \"id\":1, "
		"\"shape_type\":\"IVAR\",\"edge_name\":\"@a\", \"edges\":0}",
	};
	size_t i;

	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		T_RC(repair(lines[i], strlen(lines[i])), 0);
		T_SPANEQ(rbuf, rlen, lines[i]);
		T_ASSERT(json_line_ok(rbuf, rlen));
	}
}

static void test_repair__raw_quotes(void)
{
	REPAIRS_TO("{\"address\":\"0x1\", "
		   "\"file\":\"we\"ird\".rb\", \"line\":3}",
		   "{\"address\":\"0x1\", "
		   "\"file\":\"we\\\"ird\\\".rb\", \"line\":3}");
	/* a temporary class name with a quote, as the last member */
	REPAIRS_TO("{\"address\":\"0x1\", \"name\":\"tmp\"quoted<name>\"}",
		   "{\"address\":\"0x1\", \"name\":\"tmp\\\"quoted<name>\"}");
	/* a quote followed by a comma that does not continue the object */
	REPAIRS_TO("{\"file\":\"a\", b\", \"line\":1}",
		   "{\"file\":\"a\\\", b\", \"line\":1}");
	REPAIRS_TO("{\"a\":\"x\" \"b\"}", "{\"a\":\"x\\\" \\\"b\"}");
}

static void test_repair__raw_newlines_and_controls(void)
{
	/* a joined record: the newline in the path, and one between
	 * members (not JSON's business, but NDJSON's) */
	REPAIRS_TO("{\"line\":1,\n\"file\":\"a\nb.rb\"}",
		   "{\"line\":1, \"file\":\"a\\nb.rb\"}");
	REPAIRS_TO("{\"file\":\"t\tx\x01y\x1f\rz\x7f\"}",
		   "{\"file\":\"t\\tx\\u0001y\\u001f\\rz\x7f\"}");
}

static void test_repair__bad_escapes(void)
{
	/* 2.x signed-char bug */
	REPAIRS_TO("{\"value\":\"x\\u-061y\"}", "{\"value\":\"x\\\\u-061y\"}");
	REPAIRS_TO("{\"value\":\"\\q\\\"\"}", "{\"value\":\"\\\\q\\\"\"}");
	/* lone surrogates are escaped as text, pairs kept */
	REPAIRS_TO("{\"value\":\"\\ud800x\\udc00\\ud83d\\ude00\"}",
		   "{\"value\":\"\\\\ud800x\\\\udc00\\ud83d\\ude00\"}");
	/* 3.0/3.1: \u00ff then a NUL and stale bytes per high byte */
	REPAIRS_TO("{\"method\":\"a\\u00ff\0\x05q\\\x80z\", \"line\":1}",
		   "{\"method\":\"a\\u00ff\\u0000\\u0005q\\\\\x80z\", "
		   "\"line\":1}");
}

static void test_repair__framing_and_bare_values(void)
{
	REPAIRS_TO(",{\"id\":\"_ROOTS_\"},", "{\"id\":\"_ROOTS_\"}");
	REPAIRS_TO("  [{\"a\":1}  ", "{\"a\":1}");
	REPAIRS_TO("{\"value\":Inf, \"n\":007, \"z\":0, \"f\":nan}",
		   "{\"value\":\"Inf\", \"n\":7, \"z\":0, \"f\":\"nan\"}");
	REPAIRS_TO("{\"flags\":{\"age\":1, \"x\":-nan}}",
		   "{\"flags\":{\"age\":1, \"x\":\"-nan\"}}");
}

static void test_repair__unfollowable(void)
{
	static const char *const bad[] = {
		"", "   ", "not json", "[1,2]", "{\"a\":}", "{\"a\" 1}",
		"{\"a\":1", "{\"a\":\"open", "{\"a\":[1,2}", "{\"a\":1} x",
		"{\"a\":1,}", "{,}", "{\"a\":\"x\" 1}",
	};
	char deep[300];
	size_t i;
	hd_error err;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&err, 0, sizeof(err));
		if (hd_json_repair(rbuf, sizeof(rbuf), &rlen, bad[i],
				   strlen(bad[i]), &err) != HD_EPARSE) {
			T_FAIL("'%s' was repaired into '%.*s'", bad[i],
			       (int)rlen, rbuf);
			return;
		}
		T_EQ(err.code, HD_EPARSE);
	}
	/* hostile nesting is refused, not recursed into */
	memcpy(deep, "{\"a\":", 5);
	memset(deep + 5, '[', sizeof(deep) - 5);
	T_RC(repair(deep, sizeof(deep)), HD_EPARSE);
	T_RC(hd_json_repair(NULL, 0, NULL, "{}", 2, NULL), HD_EINVAL);
}

static void test_repair__snprintf_contract(void)
{
	const char *in = "{\"file\":\"a\x01\"}";
	char small[8];
	size_t n = 99;

	T_RC(hd_json_repair(NULL, 0, &n, in, strlen(in), NULL), 0);
	T_EQ(n, strlen("{\"file\":\"a\\u0001\"}"));
	memset(small, 'X', sizeof(small));
	T_RC(hd_json_repair(small, 4, &n, in, strlen(in), NULL), 0);
	T_EQ(n, 18);
	T_ASSERT(memcmp(small, "{\"fiXXXX", 8) == 0);
}

/* Random damage to real records: whatever is repaired is valid JSON,
 * within the documented bound. */
static void test_repair__random_damage_gives_valid_json(void)
{
	static const char *const seeds[] = {
		"{\"address\":\"0x7f0a\", \"type\":\"STRING\", "
			"\"class\":\"0x7f0b\", "
		"\"bytesize\":5, \"value\":\"hello\", \"file\":\"/app/x.rb\", "
		"\"line\":12, \"method\":\"new\", \"generation\":3, "
			"\"memsize\":40, "
		"\"flags\":{\"wb_protected\":true}}",
		"{\"address\":\"0x7f0c\", \"type\":\"ARRAY\", "
			"\"class\":\"0x7f0d\", "
		"\"length\":2, \"references\":[\"0x7f0a\", \"0x7f0e\"], "
		"\"memsize\":40}",
	};
	static const char junk[] = "\"\\\n\x01\0},:[]u{ x0";
	char in[512];
	uint64_t x = 88172645463325252ULL;
	unsigned it, k, ok = 0;

	for (it = 0; it < 20000; it++) {
		const char *s = seeds[it % 2];
		size_t n = strlen(s), len, pos;
		unsigned edits;

		memcpy(in, s, n);
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		edits = 1 + (unsigned)(x % 4);
		for (k = 0; k < edits && n + 1 < sizeof(in); k++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			pos = (size_t)(x >> 8) % n;
			if (x & 1) {
				memmove(in + pos + 1, in + pos, n - pos);
				n++;
			}
			in[pos] = junk[(x >> 40) % (sizeof(junk) - 1)];
		}
		if (hd_json_repair(rbuf, sizeof(rbuf), &len, in, n, NULL))
			continue;
		ok++;
		T_ASSERT(len <= 6 * n + 8);
		if (!json_line_ok(rbuf, len)) {
			T_FAIL("invalid repair of '%.*s': '%.*s'", (int)n, in,
			       (int)len, rbuf);
			return;
		}
	}
	T_ASSERT(ok > 1000);
}

/* ---- hd_replace_class ---- */

/* Compares two texts; fails naming the first line that differs. */
#define T_TEXTEQ(got, want)                                                \
	do {                                                               \
		const char *g_ = (got), *w_ = (want);                      \
		size_t l_ = 1, k_ = 0;                                     \
		if (!g_) {                                                 \
			T_FAIL("%s is NULL", #got);                        \
			return;                                            \
		}                                                          \
		for (; g_[k_] && g_[k_] == w_[k_]; k_++)                   \
			l_ += g_[k_] == '\n';                              \
		if (g_[k_] != w_[k_]) {                                    \
			T_FAIL("%s differs at line %zu: '%.120s' vs '%.120s'", \
			       #got, l_, g_ + k_, w_ + k_);                \
			return;                                            \
		}                                                          \
	} while (0)

static char dir[64];

static const char *tpath(const char *name)
{
	static char p[4][128];
	static int i;

	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/t_replace_class.XXXXXX");
		if (!mkdtemp(dir))
			return NULL;
	}
	i = (i + 1) % 4;
	snprintf(p[i], sizeof(p[i]), "%s/%s", dir, name);
	return p[i];
}

static int put_file(const char *path, const char *text, size_t n)
{
	FILE *f = fopen(path, "wb");

	if (!f)
		return -1;
	fwrite(text, 1, n, f);
	return fclose(f);
}

static char *get_file(const char *path, size_t *n)
{
	static char buf[65536];
	FILE *f = fopen(path, "rb");

	if (!f)
		return NULL;
	*n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[*n] = '\0';
	return buf;
}

/* A small 3.1-style dump: classes, a singleton, a module and its
 * ICLASS, instances, junk pointers, and invalid lines. */
static const char dump[] =
	"{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":[\"0x1000\", "
		"\"0x2000\"]}\n"
	"{\"address\":\"0x1000\", \"type\":\"CLASS\", \"class\":\"0x1100\", "
		"\"superclass\":\"0x3000\", \"name\":\"Foo\", "
		"\"references\":[\"0x3000\"], \"memsize\":400}\n"
	"{\"address\":\"0x1100\", \"type\":\"CLASS\", \"class\":\"0x3100\", "
		"\"superclass\":\"0x3200\", \"singleton\":true, "
		"\"memsize\":400}\n"
	"{\"address\":\"0x3000\", \"type\":\"CLASS\", \"class\":\"0x3200\", "
		"\"name\":\"Object\", \"memsize\":400}\n"
	"{\"address\":\"0x4000\", \"type\":\"MODULE\", \"class\":\"0x4100\", "
		"\"name\":\"Enum\\\"q\", \"memsize\":400}\n"
	"{\"address\":\"0x5000\", \"type\":\"ICLASS\", \"class\":\"0x4000\", "
		"\"superclass\":\"0x3000\", \"memsize\":40}\n"
	"{\"address\":\"0x2000\", \"type\":\"OBJECT\", "
		"\"class\":\"0x1000\",  \"ivars\":3, \"memsize\":40}\n"
	"{\"address\":\"0x2100\", \"type\":\"STRING\", \"class\":\"0x6000\", "
		"\"value\":\"abc\", \"memsize\":40}\n"
	"{\"address\":\"0x2200\", \"type\":\"IMEMO\", \"class\":\"0x8\", "
		"\"imemo_type\":\"cref\"}\n"
	"{\"address\":\"0x2300\", \"type\":\"OBJECT\", \"class\":\"0x1000\", "
		"\"references\":[\"0x2100\"], \"file\":\"we\"ird.rb\", "
		"\"line\":3}\n"
	"{\"address\":\"0x2400\", \"type\":\"HASH\", \"size\":0, "
		"\"memsize\":40}\n"
	"{\"address\":\"0x2500\", \"type\":\"STRING\", \"class\":\"0x1000\", "
		"\"file\":\"a\nb.rb\", \"line\":1}\n"
	"{\"address\":\"0x2600\", \"type\":\"DATA\", \"class\":\"0x1000\", "
		"\"mid\":\"fo\"o\", \"memsize\":80, "
		"\"references\":[\"0x2100\", "
		"\"0x2200\"]}\n"
	"{\"address\":\"0x2700\", \"type\":\"STRING\", \"class\":\"0x1000\", "
		"\"value\":\"\\u-061\"}\r\n"
	"garbage line\n"
	"{\"address\":\"0x1\", \"type\":\"SHAPE\", \"id\":1, "
		"\"shape_type\":\"IVAR\",\"edge_name\":\"@a\"}\n";

static const char want_plain[] =
	"{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":[\"0x1000\", "
		"\"0x2000\"]}\n"
	"{\"address\":\"0x1000\", \"type\":\"CLASS\", "
		"\"class\":\"#<Class:Foo>\", \"class_address\":\"0x1100\", "
		"\"superclass\":\"0x3000\", \"name\":\"Foo\", "
		"\"references\":[\"0x3000\"], \"memsize\":400}\n"
	"{\"address\":\"0x1100\", \"type\":\"CLASS\", \"class\":\"0x3100\", "
		"\"superclass\":\"0x3200\", \"singleton\":true, "
		"\"memsize\":400}\n"
	"{\"address\":\"0x3000\", \"type\":\"CLASS\", \"class\":\"0x3200\", "
		"\"name\":\"Object\", \"memsize\":400}\n"
	"{\"address\":\"0x4000\", \"type\":\"MODULE\", \"class\":\"0x4100\", "
		"\"name\":\"Enum\\\"q\", \"memsize\":400}\n"
	"{\"address\":\"0x5000\", \"type\":\"ICLASS\", "
		"\"class\":\"Enum\\\"q\", \"class_address\":\"0x4000\", "
		"\"superclass\":\"0x3000\", \"memsize\":40}\n"
	"{\"address\":\"0x2000\", \"type\":\"OBJECT\", \"class\":\"Foo\", "
		"\"class_address\":\"0x1000\",  \"ivars\":3, \"memsize\":40}\n"
	"{\"address\":\"0x2100\", \"type\":\"STRING\", \"class\":\"0x6000\", "
		"\"value\":\"abc\", \"memsize\":40}\n"
	"{\"address\":\"0x2200\", \"type\":\"IMEMO\", \"class\":\"0x8\", "
		"\"imemo_type\":\"cref\"}\n"
	"{\"address\":\"0x2300\", \"type\":\"OBJECT\", \"class\":\"Foo\", "
		"\"class_address\":\"0x1000\", \"references\":[\"0x2100\"], "
		"\"file\":\"we\\\"ird.rb\", \"line\":3}\n"
	"{\"address\":\"0x2400\", \"type\":\"HASH\", \"size\":0, "
		"\"memsize\":40}\n"
	"{\"address\":\"0x2500\", \"type\":\"STRING\", \"class\":\"Foo\", "
		"\"class_address\":\"0x1000\", \"file\":\"a\\nb.rb\", "
		"\"line\":1}\n"
	"{\"address\":\"0x2600\", \"type\":\"DATA\", \"class\":\"Foo\", "
		"\"class_address\":\"0x1000\", \"memsize\":80, "
		"\"references\":[\"0x2100\", \"0x2200\"]}\n"
	"{\"address\":\"0x2700\", \"type\":\"STRING\", \"class\":\"Foo\", "
		"\"class_address\":\"0x1000\", \"value\":\"\\\\u-061\"}\n"
	"{\"address\":\"0x1\", \"type\":\"SHAPE\", \"id\":1, "
		"\"shape_type\":\"IVAR\",\"edge_name\":\"@a\"}\n";

static const char want_refs[] =
	"{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":[\"0x1000\", "
		"\"0x2000\"]}\n"
	"{\"address\":\"0x1000\", \"type\":\"CLASS\", "
		"\"class\":\"#<Class:Foo>\", \"class_address\":\"0x1100\", "
		"\"superclass\":\"0x3000\", \"name\":\"Foo\", "
		"\"references\":[\"0x3000\", \"0x1100\"], \"memsize\":400}\n"
	"{\"address\":\"0x1100\", \"type\":\"CLASS\", \"class\":\"0x3100\", "
		"\"superclass\":\"0x3200\", \"singleton\":true, "
		"\"memsize\":400}\n"
	"{\"address\":\"0x3000\", \"type\":\"CLASS\", \"class\":\"0x3200\", "
		"\"name\":\"Object\", \"memsize\":400}\n"
	"{\"address\":\"0x4000\", \"type\":\"MODULE\", \"class\":\"0x4100\", "
		"\"name\":\"Enum\\\"q\", \"memsize\":400}\n"
	"{\"address\":\"0x5000\", \"type\":\"ICLASS\", "
		"\"class\":\"Enum\\\"q\", \"class_address\":\"0x4000\", "
		"\"superclass\":\"0x3000\", \"memsize\":40, "
		"\"references\":[\"0x4000\"]}\n"
	"{\"address\":\"0x2000\", \"type\":\"OBJECT\", \"class\":\"Foo\", "
		"\"class_address\":\"0x1000\",  \"ivars\":3, \"memsize\":40, "
		"\"references\":[\"0x1000\"]}\n"
	"{\"address\":\"0x2100\", \"type\":\"STRING\", \"class\":\"0x6000\", "
		"\"value\":\"abc\", \"memsize\":40}\n"
	"{\"address\":\"0x2200\", \"type\":\"IMEMO\", \"class\":\"0x8\", "
		"\"imemo_type\":\"cref\"}\n"
	"{\"address\":\"0x2300\", \"type\":\"OBJECT\", \"class\":\"Foo\", "
		"\"class_address\":\"0x1000\", \"references\":[\"0x2100\", "
		"\"0x1000\"], \"file\":\"we\\\"ird.rb\", \"line\":3}\n"
	"{\"address\":\"0x2400\", \"type\":\"HASH\", \"size\":0, "
		"\"memsize\":40}\n"
	"{\"address\":\"0x2500\", \"type\":\"STRING\", \"class\":\"Foo\", "
		"\"class_address\":\"0x1000\", \"file\":\"a\\nb.rb\", "
		"\"line\":1, "
		"\"references\":[\"0x1000\"]}\n"
	"{\"address\":\"0x2600\", \"type\":\"DATA\", \"class\":\"Foo\", "
		"\"class_address\":\"0x1000\", \"memsize\":80, "
		"\"references\":[\"0x2100\", \"0x2200\", \"0x1000\"]}\n"
	"{\"address\":\"0x2700\", \"type\":\"STRING\", \"class\":\"Foo\", "
		"\"class_address\":\"0x1000\", \"value\":\"\\\\u-061\", "
		"\"references\":[\"0x1000\"]}\n"
	"{\"address\":\"0x1\", \"type\":\"SHAPE\", \"id\":1, "
		"\"shape_type\":\"IVAR\",\"edge_name\":\"@a\"}\n";

struct probs {
	int repaired, skipped;
};

static void on_problem(const hd_problem *p, void *payload)
{
	struct probs *s = payload;

	if (p->repaired)
		s->repaired++;
	else
		s->skipped++;
}

/* Runs hd_replace_class on text; returns the output, or NULL. */
static const char *run(const char *text, unsigned flags,
		       hd_replace_stats *st, struct probs *pr, int *rc)
{
	hd_replace_options o = HD_REPLACE_OPTIONS_INIT;
	const char *in = tpath("in.json"), *out = tpath("out.json");
	size_t n;

	memset(st, 0, sizeof(*st));
	memset(pr, 0, sizeof(*pr));
	o.flags = flags;
	o.stats = st;
	o.read.problem = on_problem;
	o.read.payload = pr;
	unlink(out);
	if (put_file(in, text, strlen(text)))
		return NULL;
	*rc = hd_replace_class(in, out, &o, NULL);
	return *rc ? NULL : get_file(out, &n);
}

static void test_replace__names_and_byte_exact_edits(void)
{
	hd_replace_stats st;
	struct probs pr;
	const char *out;
	int rc;

	out = run(dump, 0, &st, &pr, &rc);
	T_RC(rc, 0);
	T_TEXTEQ(out, want_plain);
	T_EQ(st.records, 15);
	T_EQ(st.objects, 13);
	/* Foo x5, #<Class:Foo>, the ICLASS, the salvaged DATA */
	T_EQ(st.rewritten, 7);
	/* 0x3100 0x3200 0x4100 0x6000 0x8 */
	T_EQ(st.unresolved, 5);
	T_EQ(st.salvaged, 1);
	T_EQ(st.escaped, 3); /* quote, newline, \u-061 */
	T_EQ(st.read.skipped, 1);
	/* the reader reports once, not once a pass */
	T_EQ(pr.repaired, 3);
	T_EQ(pr.skipped, 1);
}

static void test_replace__add_ref(void)
{
	hd_replace_stats st;
	struct probs pr;
	const char *out;
	int rc;

	out = run(dump, HD_REPLACE_ADD_REF, &st, &pr, &rc);
	T_RC(rc, 0);
	T_TEXTEQ(out, want_refs);
	T_EQ(st.rewritten, 7);
}

/* Every output line is valid JSON, and replace-class of its own output
 * changes nothing. */
static void test_replace__output_valid_and_stable(void)
{
	hd_replace_stats st;
	struct probs pr;
	char again[sizeof(want_refs)];
	const char *out, *p, *nl;
	int rc;

	out = run(dump, HD_REPLACE_ADD_REF, &st, &pr, &rc);
	T_RC(rc, 0);
	for (p = out; (nl = strchr(p, '\n')); p = nl + 1)
		if (!json_line_ok(p, (size_t)(nl - p))) {
			T_FAIL("invalid line: %.*s", (int)(nl - p), p);
			return;
		}
	memcpy(again, out, strlen(out) + 1);
	out = run(again, 0, &st, &pr, &rc);
	T_RC(rc, 0);
	T_TEXTEQ(out, again);
	T_EQ(st.rewritten, 0);
	T_EQ(st.named, 7);
	T_EQ(st.escaped, 0);
	T_EQ(pr.repaired + pr.skipped, 0);
}

/* The output read back: the class is a name, the pointer the same. */
static void test_replace__scanner_reads_names(void)
{
	struct hd__scan sc;
	hd_record r;
	static const char *const l1 =
		"{\"address\":\"0x2000\", \"type\":\"OBJECT\", "
			"\"class\":\"Foo::Bar\", "
		"\"class_address\":\"0x1000\", \"memsize\":40}";
	static const char *const l2 =
		"{\"address\":\"0x2000\", \"type\":\"OBJECT\", "
			"\"class\":\"Face\", "
		"\"class_address\":\"0x1000\"}";
	static const char *const l3 =
		"{\"address\":\"0x2000\", \"class_address\":\"0x1000\", "
		"\"type\":\"OBJECT\", \"class\":\"Beef\"}";
	/* memdump put names in class_address */
	static const char *const l4 =
		"{\"address\":\"0x5000\", \"type\":\"ICLASS\", "
			"\"class\":\"Enumerable\", "
		"\"class_address\":\"Enumerable\"}";
	static const char *const l5 =
		"{\"address\":\"0x2000\", \"type\":\"OBJECT\", "
			"\"class\":\"0x1000\", "
		"\"class_address\":\"0x1000\"}";

	memset(&sc, 0, sizeof(sc));
	T_RC(hd__scan_line(&sc, l1, strlen(l1), &r), HD__SCAN_OK);
	T_EQ(r.has & (HD_HAS_CLASS | HD_HAS_CLASS_NAME),
	     HD_HAS_CLASS | HD_HAS_CLASS_NAME);
	T_EQ(r.class_addr, 0x1000);
	T_SPANEQ(r.class_name.ptr, r.class_name.len, "Foo::Bar");
	T_EQ(r.memsize, 40);
	T_SPANEQ(l1 + sc.class_at, sc.class_end - sc.class_at, "\"Foo::Bar\"");

	T_RC(hd__scan_line(&sc, l2, strlen(l2), &r), HD__SCAN_OK);
	T_EQ(r.class_addr, 0x1000);
	T_SPANEQ(r.class_name.ptr, r.class_name.len, "Face");

	T_RC(hd__scan_line(&sc, l3, strlen(l3), &r), HD__SCAN_OK);
	T_EQ(r.class_addr, 0x1000);
	T_ASSERT(r.has & HD_HAS_CLASS_NAME);
	T_SPANEQ(r.class_name.ptr, r.class_name.len, "Beef");

	T_RC(hd__scan_line(&sc, l4, strlen(l4), &r), HD__SCAN_OK);
	T_EQ(r.has & (HD_HAS_CLASS | HD_HAS_CLASS_NAME), HD_HAS_CLASS_NAME);
	T_SPANEQ(r.class_name.ptr, r.class_name.len, "Enumerable");

	T_RC(hd__scan_line(&sc, l5, strlen(l5), &r), HD__SCAN_OK);
	T_EQ(r.has & (HD_HAS_CLASS | HD_HAS_CLASS_NAME), HD_HAS_CLASS);
	T_EQ(r.class_addr, 0x1000);
	hd__scan_free(&sc);
}

/* stats groups the output by class exactly as the input. */
static void test_replace__same_stats(void)
{
	hd_replace_stats st;
	struct probs pr;
	const char *out;
	char copy[sizeof(want_refs)];
	const char *texts[2];
	uint64_t counts[2][16];
	size_t nrows[2], i, k;
	int rc;

	out = run(dump, HD_REPLACE_ADD_REF, &st, &pr, &rc);
	T_RC(rc, 0);
	memcpy(copy, out, strlen(out) + 1);
	texts[0] = dump;
	texts[1] = copy;
	for (k = 0; k < 2; k++) {
		hd_stats_options so = HD_STATS_OPTIONS_INIT;
		hd_stats *s;
		hd_reader *r;
		const hd_record *rec;
		const hd_stats_row *rows;

		so.ngroupings = 1;
		so.nkeys[0] = 1;
		so.keys[0][0] = HD_KEY_CLASS;
		T_RC(hd_stats_new(&s, &so, NULL), 0);
		T_RC(hd_reader_open_mem(&r, texts[k], strlen(texts[k]), NULL,
					NULL), 0);
		while (hd_reader_next(r, &rec, NULL) == 0)
			T_RC(hd_stats_add(s, rec, NULL), 0);
		hd_reader_free(r);
		T_RC(hd_stats_finish(s, NULL), 0);
		rows = hd_stats_rows(s, 0, HD_SORT_COUNT, &nrows[k]);
		T_ASSERT(nrows[k] < 16);
		for (i = 0; i < nrows[k]; i++)
			counts[k][i] = rows[i].count * 1000003 +
				       hd__hash_bytes(rows[i].key[0],
						      rows[i].key_len[0], 7);
		hd_stats_free(s);
	}
	T_EQ(nrows[0], nrows[1]);
	for (i = 0; i < nrows[0]; i++)
		T_EQ(counts[0][i], counts[1][i]);
}

static void test_replace__in_place_atomic_keeps_mode(void)
{
	hd_replace_options o = HD_REPLACE_OPTIONS_INIT;
	const char *in = tpath("inplace.json");
	struct stat a, b;
	hd_error err;
	size_t n;
	const char *out;

	T_ASSERT(put_file(in, dump, strlen(dump)) == 0);
	T_ASSERT(chmod(in, 0640) == 0);
	T_ASSERT(stat(in, &a) == 0);
	o.read.flags = HD_READ_STRICT;
	/* strict: the invalid lines fail it, and the file is untouched */
	T_RC(hd_replace_class(in, NULL, &o, &err), HD_EPARSE);
	T_ASSERT(stat(in, &b) == 0);
	T_EQ(b.st_ino, a.st_ino);
	out = get_file(in, &n);
	T_TEXTEQ(out, dump);
	o.read.flags = 0;
	T_RC(hd_replace_class(in, NULL, &o, &err), 0);
	T_ASSERT(stat(in, &b) == 0);
	T_ASSERT(b.st_ino != a.st_ino); /* renamed over, not rewritten */
	T_EQ(b.st_mode & 07777, 0640);
	out = get_file(in, &n);
	T_TEXTEQ(out, want_plain);
	/* naming the input as the output is refused */
	T_RC(hd_replace_class(in, in, &o, &err), HD_EINVAL);
	T_ASSERT(stat(in, &a) == 0);
	T_EQ(a.st_ino, b.st_ino);
	T_RC(hd_replace_class("-", NULL, &o, &err), HD_EINVAL);
}

static void test_replace__failures_leave_nothing(void)
{
	const char *in = tpath("f.json");
	hd_error err;
	char cmd[256];
	FILE *p;
	char line[256];

	T_ASSERT(put_file(in, dump, strlen(dump)) == 0);
	memset(&err, 0, sizeof(err));
	T_RC(hd_replace_class(in, "/nonexistent-dir/x.json", NULL, &err),
	     HD_EIO);
	T_EQ(err.sys_errno, ENOENT);
	/* the output is a directory: refused, nothing left behind */
	T_ASSERT(mkdir(tpath("adir"), 0755) == 0);
	T_RC(hd_replace_class(in, tpath("adir"), NULL, &err), HD_EIO);
	snprintf(cmd, sizeof(cmd), "ls -a %s | grep -c tmp", dir);
	p = popen(cmd, "r");
	T_ASSERT(p && fgets(line, sizeof(line), p));
	pclose(p);
	T_STREQ(line, "0\n");
	T_RC(hd_replace_class(tpath("missing.json"), tpath("o.json"), NULL,
			      &err), HD_EIO);
	T_ASSERT(access(tpath("o.json"), F_OK) != 0);
	rmdir(tpath("adir"));
}

static void test_replace__gzip_input(void)
{
	hd_replace_options o = HD_REPLACE_OPTIONS_INIT;
	const char *gz = tpath("d.json.gz");
	hd_replace_stats st;
	gzFile f;
	size_t n;
	const char *out;

	f = gzopen(gz, "wb");
	T_ASSERT(f);
	T_ASSERT(gzwrite(f, dump, (unsigned)strlen(dump)) > 0);
	T_ASSERT(gzclose(f) == Z_OK);
	o.stats = &st;
	T_RC(hd_replace_class(gz, tpath("gz.out"), &o, NULL), 0);
	T_EQ(st.read.gzip, 1);
	out = get_file(tpath("gz.out"), &n);
	T_TEXTEQ(out, want_plain);
	/* plain JSON under a .gz name: refused */
	T_RC(hd_replace_class(gz, NULL, &o, NULL), HD_EINVAL);
	T_RC(hd_replace_class(gz, tpath("gz.out"), NULL, NULL), 0);
}

static void test_replace__bad_options(void)
{
	hd_replace_options o = HD_REPLACE_OPTIONS_INIT;

	o.version = 99;
	T_RC(hd_replace_class("x", "-", &o, NULL), HD_EINVAL);
	o.version = HD_REPLACE_OPTIONS_VERSION;
	o.flags = 1u << 9;
	T_RC(hd_replace_class("x", "-", &o, NULL), HD_EINVAL);
	T_RC(hd_replace_class(NULL, "-", NULL, NULL), HD_EINVAL);
}

static void test_replace__cleanup(void)
{
	const char *names[] = { "in.json", "out.json", "inplace.json",
				"f.json", "d.json.gz", "gz.out" };
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		unlink(tpath(names[i]));
	T_ASSERT(rmdir(dir) == 0);
}

static const struct t_case cases[] = {
	T_CASE(repair__valid_json_unchanged),
	T_CASE(repair__raw_quotes),
	T_CASE(repair__raw_newlines_and_controls),
	T_CASE(repair__bad_escapes),
	T_CASE(repair__framing_and_bare_values),
	T_CASE(repair__unfollowable),
	T_CASE(repair__snprintf_contract),
	T_CASE(repair__random_damage_gives_valid_json),
	T_CASE(replace__names_and_byte_exact_edits),
	T_CASE(replace__add_ref),
	T_CASE(replace__output_valid_and_stable),
	T_CASE(replace__scanner_reads_names),
	T_CASE(replace__same_stats),
	T_CASE(replace__in_place_atomic_keeps_mode),
	T_CASE(replace__failures_leave_nothing),
	T_CASE(replace__gzip_input),
	T_CASE(replace__bad_options),
	T_CASE(replace__cleanup),
};

T_MAIN(cases)
