/*
 * t_scan_same.c - the scanner gives what the scanner before its speed-up
 * gave (tests/unit/scan_ref.inc, a frozen copy of lib/scan.c as it was),
 * record for record: every field, every reference and name, the error
 * column and message, need_more and repaired, lenient and strict, with
 * AVX2 and portable code. The lines: every line of every dump in
 * data/dumps, each cut at random places and mutated with the bytes that
 * steer a scan (quotes, backslashes, brackets, commas, colons), and
 * lines crafted for the fast paths: escaped quotes and ']' in values,
 * keys out of order, raw quotes, long numbers, odd addresses, flags,
 * ref_names, memprof records.
 */
#include "t.h"
#include "hd_int.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>

/* the frozen scanner, its exported names renamed */
#define hd__parse_hex ref_parse_hex
#define hd_type_name ref_type_name
#define hd_type_from_name ref_type_from_name
#define hd_json_unescape ref_json_unescape
#define hd__continues_object ref_continues_object
#define hd__quote_escaped ref_quote_escaped
#define hd__scan_line ref_scan_line
#define hd__scan_salvage ref_scan_salvage
#define hd__scan_free ref_scan_free
int ref_parse_hex(const char *p, size_t n, uint64_t *out);
const char *ref_type_name(int type);
int ref_type_from_name(const char *name, size_t len);
size_t ref_json_unescape(char *dst, const char *src, size_t len);
int ref_continues_object(const char *q, const char *end);
int ref_quote_escaped(const char *q, const char *begin);
int ref_scan_line(struct hd__scan *sc, const char *line, size_t len,
		  hd_record *rec);
int ref_scan_salvage(struct hd__scan *sc, const char *line, size_t len,
		     hd_record *rec);
void ref_scan_free(struct hd__scan *sc);
#include "scan_ref.inc"
#undef hd__parse_hex
#undef hd_type_name
#undef hd_type_from_name
#undef hd_json_unescape
#undef hd__continues_object
#undef hd__quote_escaped
#undef hd__scan_line
#undef hd__scan_salvage
#undef hd__scan_free

static uint64_t seed = 0x2545f4914f6cdd1dULL;

static unsigned rnd(unsigned n)
{
	seed ^= seed << 13;
	seed ^= seed >> 7;
	seed ^= seed << 17;
	return (unsigned)(seed % n);
}

static struct hd__scan sa, sb;
static unsigned long compared, differ;

/* One line through both scanners; the first few differences shown. */
static void same(const char *line, size_t len, int strict)
{
	hd_record a, b;
	int ra, rb, bad = 0;

	sa.strict = sb.strict = strict;
	ra = hd__scan_line(&sa, line, len, &a);
	rb = ref_scan_line(&sb, line, len, &b);
	if (ra != rb || sa.err_col != sb.err_col ||
	    (sa.err_msg == NULL) != (sb.err_msg == NULL) ||
	    (sa.err_msg && strcmp(sa.err_msg, sb.err_msg) != 0) ||
	    sa.need_more != sb.need_more || sa.repaired != sb.repaired ||
	    sa.class_at != sb.class_at || sa.class_end != sb.class_end ||
	    sa.refs_close != sb.refs_close || sa.obj_close != sb.obj_close)
		bad = 1;
	if (!bad && ra == HD__SCAN_OK) {
		if (a.nrefs != b.nrefs ||
		    (a.nrefs && memcmp(a.refs, b.refs,
				       a.nrefs * sizeof(*a.refs)) != 0))
			bad = 2;
		if ((a.ref_names == NULL) != (b.ref_names == NULL) ||
		    (a.ref_names &&
		     memcmp(a.ref_names, b.ref_names,
			    a.nrefs * sizeof(*a.ref_names)) != 0))
			bad = 3;
		a.refs = b.refs = NULL;
		a.ref_names = b.ref_names = NULL;
		if (memcmp(&a, &b, sizeof(a)) != 0)
			bad = 4;
	}
	compared++;
	if (bad && differ++ < 5)
		T_FAIL("differs (%d, strict %d, %s): rc %d/%d col %zu/%zu "
		       "msg %s/%s: %.*s", bad, strict,
		       hd__simd_level() == HD__SIMD_AVX2 ? "avx2" : "portable",
		       ra, rb, sa.err_col, sb.err_col,
		       sa.err_msg ? sa.err_msg : "-",
		       sb.err_msg ? sb.err_msg : "-", (int)(len < 300 ? len : 300),
		       line);
}

/* Both levels, both modes. */
static void check(const char *line, size_t len)
{
	int l;

	for (l = HD__SIMD_PORTABLE; l <= HD__SIMD_AVX2; l++) {
		hd__simd_force(l);
		same(line, len, 0);
		same(line, len, 1);
	}
	hd__simd_force(0);
}

static const char steer[] = "\"\\],[{}: x0\t\n";

/* The line, cut at a few places and mutated a few ways. */
static void variants(const char *line, size_t len, int many)
{
	static char buf[1 << 16];
	int k, j;

	check(line, len);
	if (len == 0 || len + 8 > sizeof(buf))
		return;
	for (k = 0; k < (many ? 6 : 0); k++)
		check(line, rnd((unsigned)len));
	for (k = 0; k < (many ? 8 : 1); k++) {
		size_t n = len;

		memcpy(buf, line, len);
		for (j = 1 + (int)rnd(3); j > 0; j--) {
			size_t at = rnd((unsigned)n);

			if (rnd(3) == 0 && n + 1 < sizeof(buf)) {
				memmove(buf + at + 1, buf + at, n - at);
				n++;
			}
			buf[at] = steer[rnd(sizeof(steer) - 1)];
		}
		check(buf, n);
	}
}

static int dump_file(const char *path)
{
	gzFile f = gzopen(path, "rb");
	static char line[1 << 20];
	unsigned long lines = 0;

	if (!f)
		return -1;
	while (gzgets(f, line, sizeof(line))) {
		size_t n = strlen(line);

		if (n && line[n - 1] == '\n')
			n--;
		/* a sample gets the mutations, every line the plain check */
		variants(line, n, lines++ % 61 == 0);
	}
	gzclose(f);
	return 0;
}

static void test_scan_same__dumps(void)
{
	DIR *d = opendir("data/dumps");
	struct dirent *e;
	char path[4096];
	int files = 0;

	T_ASSERT(d != NULL);
	if (!d)
		return;
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);

		if (n < 5 || strstr(e->d_name, ".expect") ||
		    !(strstr(e->d_name, ".json")))
			continue;
		snprintf(path, sizeof(path), "data/dumps/%s", e->d_name);
		if (dump_file(path) == 0)
			files++;
	}
	closedir(d);
	T_ASSERT(files > 50);
	T_ASSERT(compared > 100000);
	T_EQ(differ, 0);
}

static const char *const crafted[] = {
	/* escaped quotes and backslash runs in values */
	"{\"address\":\"0x7f01\", \"type\":\"STRING\", \"class\":\"0x7f02\", "
	"\"bytesize\":5, \"value\":\"a\\\"b\\\\\", \"encoding\":\"UTF-8\", "
	"\"memsize\":40}",
	"{\"address\":\"0x7f01\", \"type\":\"STRING\", \"value\":\"\\\\\\\"\\\\\","
	" \"memsize\":40}",
	"{\"address\":\"0x7f01\", \"type\":\"STRING\", \"value\":\"x\\\\\\\\\\\"\", "
	"\"memsize\":40}",
	/* ']' and ", \"k\":" inside a value */
	"{\"address\":\"0x7f01\", \"type\":\"STRING\", \"value\":\"]] , \\\"k\\\":1\","
	" \"references\":[\"0x7f03\", \"0x7f04\"], \"memsize\":40}",
	/* raw quotes in file and name, repaired */
	"{\"address\":\"0x7f01\", \"type\":\"CLASS\", \"name\":\"A\"B\", "
	"\"file\":\"a\"b.rb\", \"line\":3, \"memsize\":40}",
	"{\"address\":\"0x7f01\", \"type\":\"OBJECT\", \"file\":\"x\", \"y\":\", "
	"\"line\":3}",
	/* keys out of order, unknown keys, spaces */
	"{\"memsize\":40, \"flags\":{\"marked\":true}, \"type\":\"ARRAY\", "
	"\"length\":2, \"references\":[\"0x7f03\",\"0x7f04\"], "
	"\"address\":\"0x7f01\", \"zzz\":[1,{\"a\":[]}]}",
	"{ \"address\" : \"0x7f01\" , \"type\" : \"HASH\" , \"size\" : 1 }",
	/* numbers: long, overflowing, with fractions */
	"{\"address\":\"0x7f01\", \"type\":\"OBJECT\", \"memsize\":"
	"18446744073709551615, \"generation\":18446744073709551616}",
	"{\"address\":\"0x7f01\", \"type\":\"OBJECT\", \"memsize\":"
	"99999999999999999999999, \"line\":1.5}",
	"{\"address\":\"0x7f01\", \"type\":\"OBJECT\", \"memsize\":"
	"1234567890123456789, \"line\":0012}",
	/* addresses: 16 and 17 digits, upper case, no digits, junk */
	"{\"address\":\"0x7fffffffffffffff\", \"type\":\"OBJECT\"}",
	"{\"address\":\"0x7fffffffffffffff1\", \"type\":\"OBJECT\"}",
	"{\"address\":\"0X7FAB\", \"type\":\"OBJECT\", \"class\":\"0xABCDEF\"}",
	"{\"address\":\"0x\", \"type\":\"OBJECT\"}",
	"{\"address\":\"0xg1\", \"type\":\"OBJECT\"}",
	"{\"address\":\"7f01\", \"type\":\"OBJECT\"}",
	/* ... with the line going on (the word loads of an address) */
	"{\"address\":\"0x1\", \"type\":\"OBJECT\", \"class\":\"0xaF\", "
	"\"memsize\":1, \"flags\":{}}",
	"{\"address\":\"0x0123456789abcdef\", \"type\":\"OBJECT\", "
	"\"class\":\"0xFEDCBA9876543210\", \"memsize\":1}",
	"{\"address\":\"0x0123456789abcdef0\", \"type\":\"OBJECT\", "
	"\"class\":\"0x12345678\", \"memsize\":1}",
	"{\"address\":\"0x123456789\", \"type\":\"OBJECT\", "
	"\"class\":\"0x1234567\", \"superclass\":\"0xg\", \"memsize\":1}",
	"{\"address\":\"0x12:4\", \"type\":\"OBJECT\", \"class\":\"0x12@\", "
	"\"memsize\":1}",
	"{\"address\":\"0x12\xe6\", \"type\":\"OBJECT\", \"class\":\"0x`f\", "
	"\"memsize\":1}",
	"{\"address\":\"0x/9G\", \"type\":\"OBJECT\", \"class\":\"0xF\", "
	"\"default\":\"0x7fab12cd34ef\", \"memsize\":1}",
	"{\"address\":\"0x7fAB12cD34eF\", \"type\":\"OBJECT\", "
	"\"class\":\"0x7fab12cd34e\\\"\", \"memsize\":1}",
	/* type names of every length, in any case */
	"{\"address\":\"0x1\", \"type\":\"node\"}",
	"{\"address\":\"0x1\", \"type\":\"NONE\"}",
	"{\"address\":\"0x1\", \"type\":\"Struct\"}",
	"{\"address\":\"0x1\", \"type\":\"SYMBOL\"}",
	"{\"address\":\"0x1\", \"type\":\"RATIONAL\"}",
	"{\"address\":\"0x1\", \"type\":\"RATIONALS\"}",
	"{\"address\":\"0x1\", \"type\":\"UNKNOWN\"}",
	"{\"address\":\"0x1\", \"type\":\"STRINX\"}",
	"{\"address\":\"0x1\", \"type\":\"ZOMBIE\"}",
	/* ... with the line going on (the word load of a type name) */
	"{\"type\":\"node\", \"address\":\"0x1\", \"memsize\":1}",
	"{\"type\":\"rAtIoNaL\", \"address\":\"0x1\", \"memsize\":1}",
	"{\"type\":\"ICLASS\", \"address\":\"0x1\", \"memsize\":1}",
	"{\"type\":\"ICLAS\", \"address\":\"0x1\", \"memsize\":1}",
	"{\"type\":\"HAS\", \"address\":\"0x1\", \"memsize\":1}",
	"{\"type\":\"H\\u0041SH\", \"address\":\"0x1\", \"memsize\":1}",
	"{\"type\":\"\xcf" "BJECT\", \"address\":\"0x1\", \"memsize\":1}",
	"{\"type\":\"OBJ\x05" "CT\", \"address\":\"0x1\", \"memsize\":1}",
	"{\"type\":\"COMPLEXX\", \"address\":\"0x1\", \"memsize\":1}",
	"{\"type\":\"unknown\", \"address\":\"0x1\", \"memsize\":1}",
	"{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":[\"0x1\"]}",
	/* flags */
	"{\"address\":\"0x1\", \"type\":\"OBJECT\", \"flags\":{\"wb_protected\""
	":true, \"old\":true, \"uncollectible\":true, \"marked\":true}}",
	"{\"address\":\"0x1\", \"type\":\"OBJECT\", \"flags\":{\"age\":3, "
	"\"object_id\":77, \"pinned\":false, \"x\":[1]}}",
	/* ref_names */
	"{\"address\":\"0x1\", \"type\":\"OBJECT\", \"references\":[\"0x2\", "
	"\"0x3\"], \"ref_names\":[\"@a\", 1]}",
	"{\"address\":\"0x1\", \"type\":\"OBJECT\", \"references\":[\"0x2\", "
	"\"0x3\"], \"ref_names\":[\"@a\\\"]\", null]}",
	"{\"address\":\"0x1\", \"type\":\"OBJECT\", \"references\":[\"0x2\"], "
	"\"ref_names\":[\"@a\", 1]}",
	/* memprof */
	"{\"_id\":\"0x7f01\", \"type\":\"string\", \"class\":\"0x7f02\", "
	"\"data\":[\"0x7f05\", {\"k\":\"0x7f06\"}], \"length\":3, "
	"\"file\":\"a.rb\", \"line\":2}",
	/* framing, roots, shapes, not objects */
	"[{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":[\"0x1\"]}",
	",{\"type\":\"SHAPE\", \"address\":\"0x1\", \"id\":3, \"parent_id\":2, "
	"\"edge_name\":\"@x\"}",
	"]",
	"{\"type\":\"SYMBOL\", \"value\":\"x\"}",
	"{}",
	"{\"address\":\"0x1\", \"type\":\"OBJECT\"} x",
	"{\"address\":\"0x1\", \"type\":\"STRING\", \"value\":\"ab\\",
	"{\"address\":\"0x1\", \"type\":\"STRING\", \"value\":\"ab\\\"",
	"{\"address\":\"0x1\", \"type\":\"STRING\", \"value\":\"a\tb\x01\"}",
	"{\"addr\\\"ess\":\"0x1\", \"type\":\"STRING\"}",
};

static void test_scan_same__crafted(void)
{
	size_t i;
	int k;

	compared = differ = 0;
	for (i = 0; i < sizeof(crafted) / sizeof(crafted[0]); i++)
		for (k = 0; k < 200; k++)
			variants(crafted[i], strlen(crafted[i]), 1);
	T_ASSERT(compared > 10000);
	T_EQ(differ, 0);
}

/*
 * The guesses the scanner learns (sc->next_key: the next member's key;
 * the flags cache; a raw string's end) against the lines that break
 * them. The scanner is trained on trained[] before each line of
 * against[], which is checked whole and cut at every byte (the rest of
 * the line still in the buffer after the cut, where a read past the end
 * would find it).
 */
#define T1A "{\"address\":\"0x7f0000000001\", \"type\":\"STRING\", " \
	"\"class\":\"0x7f0000000002\", \"frozen\":true, \"embedded\":true, " \
	"\"fstring\":true, "
#define T1B "\"encoding\":\"UTF-8\", \"file\":\"a.rb\", \"line\":3, " \
	"\"method\":\"new\", \"generation\":12, \"memsize\":40, "
#define FL31 "\"flags\":{\"wb_protected\":true, \"old\":true, " \
	"\"uncollectible\":true, \"marked\":true}}"
#define T2A "{\"address\":\"0x7f0000000003\", \"type\":\"CLASS\", " \
	"\"shape_id\":0, \"slot_size\":160, \"class\":\"0x7f0000000004\", " \
	"\"superclass\":\"0x7f0000000005\", "
#define T2B "\"references\":[\"0x7f0000000006\", \"0x7f0000000007\"], " \
	"\"file\":\"b.rb\", \"line\":1, \"real_class_name\":\"Foo\", " \
	"\"memsize\":520, "
#define FL40(x) "\"flags\":{\"wb_protected\":true, \"age\":" x ", " \
	"\"old\":true}}"
#define T4A "{\"address\":\"0x7f000000000a\", \"type\":\"OBJECT\", " \
	"\"shape_id\":5, \"slot_size\":40, \"class\":\"0x7f000000000b\", " \
	"\"ivars\":3, "

static const char *const trained[] = {
	T1A "\"bytesize\":3, \"value\":\"abc\", " T1B FL31,
	T2A "\"name\":\"Foo\", " T2B FL40("3"),
	"{\"address\":\"0x7f0000000008\", \"type\":\"SHAPE\", \"id\":3, "
	"\"parent_id\":2, \"depth\":2, \"shape_type\":\"IVAR\", "
	"\"edge_name\":\"@x\", \"edges\":1, \"memsize\":40}",
	T4A "\"too_complex_shape\":true, \"references\":[\"0x7f000000000c\"],"
	" \"memsize\":40, \"flags\":{\"wb_protected\":true, \"age\":1}}",
	/* five flags objects: the first no longer cached */
	T4A "\"memsize\":40, \"flags\":{\"age\":0, \"marked\":true}}",
	T4A "\"memsize\":40, \"flags\":{\"age\":1, \"marked\":true}}",
	T4A "\"memsize\":40, \"flags\":{\"age\":2, \"marked\":true}}",
	T4A "\"memsize\":40, \"flags\":{\"age\":3, \"marked\":true}}",
	/* a long one, the same as some below in its first 110 bytes */
	T4A "\"flags\":{\"wb_protected\":true, \"age\":3, \"old\":true, "
	"\"uncollectible\":true, \"marked\":true, \"shareable\":true, "
	"\"pinned\":true, \"abcdefg\":true}}",
	T1A "\"bytesize\":3, \"value\":\"abc\", " T1B FL31,
};

static const char *const against[] = {
	/* the trained lines themselves: every key guessed, cut anywhere */
	T1A "\"bytesize\":3, \"value\":\"abc\", " T1B FL31,
	T2A "\"name\":\"Foo\", " T2B FL40("3"),
	/* keys in another order, or missing */
	T1A "\"value\":\"abc\", \"bytesize\":3, " T1B FL31,
	T1A T1B "\"bytesize\":3, \"value\":\"abc\", " FL31,
	"{\"type\":\"STRING\", \"address\":\"0x7f0000000001\", "
	"\"memsize\":40, \"class\":\"0x7f0000000002\"}",
	/* a guessed key different in its last byte, or longer, or shorter */
	T1A "\"bytesizf\":3, \"value\":\"abc\", " T1B FL31,
	T1A "\"bytesize\":3, \"valuE\":\"abc\", " T1B FL31,
	T1A "\"bytesize_\":3, \"value\":\"abc\", " T1B FL31,
	T1A "\"bytesiz\":3, \"value\":\"abc\", " T1B FL31,
	T1A "\"bytesize\":3, \"value\":\"abc\", \"encoding\":\"UTF-8\", "
	"\"file\":\"a.rb\", \"lin\":3, \"method\":\"new\", \"memsize\":40}",
	T1A "\"bytesize\":3, \"value\":\"abc\", \"encoding\":\"UTF-8\", "
	"\"file\":\"a.rb\", \"linf\":3, \"method\":\"new\", \"memsize\":40}",
	/* separators and spaces around a guessed key */
	T1A "\"bytesize\":3,\"value\":\"abc\", " T1B FL31,
	T1A "\"bytesize\":3,  \"value\":\"abc\", " T1B FL31,
	T1A "\"bytesize\":3 , \"value\":\"abc\", " T1B FL31,
	T1A "\"bytesize\":3, \"value\" :\"abc\", " T1B FL31,
	T1A "\"bytesize\":3, \"value\": \"abc\", " T1B FL31,
	T1A "\"bytesize\":3, \"value\":\t\"abc\", " T1B FL31,
	T1A "\"bytesize\":3, \"value\":\"abc\"\t, " T1B FL31,
	/* keys longer than 11, 16 and 17 bytes, known and not */
	T2A "\"name\":\"Foo\", \"complex_shape\":true, "
	"\"real_class_name_\":\"Foo\", \"class_address\":\"0x1\", "
	"\"too_complex_shape\":true, \"a_key_of_twenty_byte\":1, "
	"\"too_complex_shapes\":true, \"memsize\":520}",
	/* escapes in keys */
	T1A "\"bytes\\u0069ze\":3, \"value\":\"abc\", " T1B FL31,
	T1A "\"bytesize\":3, \"val\\\"ue\":\"abc\", " T1B FL31,
	T1A "\"bytesize\":3, \"value\\\\\":\"abc\", " T1B FL31,
	/* raw strings whose end the guessed key confirms, or not */
	T1A "\"bytesize\":3, \"value\":\"abc\", \"encoding\":\"UTF-8\", "
	"\"file\":\"a\"b.rb\", \"line\":3, \"memsize\":40}",
	T1A "\"bytesize\":3, \"value\":\"abc\", \"encoding\":\"UTF-8\", "
	"\"file\":\"a\", \"line\":3, \"x\", \"line\":3, \"memsize\":40}",
	T1A "\"bytesize\":3, \"value\":\"abc\", \"encoding\":\"UTF-8\", "
	"\"file\":\"a.rb\\\", \"line\":3, \"memsize\":40}",
	T1A "\"bytesize\":3, \"value\":\"abc\", \"encoding\":\"UTF-8\", "
	"\"file\":\"a.rb\" , \"line\":3, \"memsize\":40}",
	T1A "\"bytesize\":3, \"value\":\"abc\", \"encoding\":\"UTF-8\", "
	"\"file\":\"a.rb\"}",
	T2A "\"name\":\"F\"o\"o\", " T2B FL40("3"),
	T2A "\"name\":\"Foo\"x\", \"references\":[]}",
	/* flags: cached, evicted, ages out of range, other members */
	T4A "\"memsize\":40, \"flags\":{\"age\":0, \"marked\":true}}",
	T4A "\"memsize\":40, \"flags\":{\"age\":3, \"marked\":true}}",
	T4A "\"memsize\":40, \"flags\":{\"age\":3, \"marked\":true, "
	"\"old\":true}}",
	T2A "\"name\":\"Foo\", " T2B FL40("03"),
	T2A "\"name\":\"Foo\", " T2B FL40("255"),
	T2A "\"name\":\"Foo\", " T2B FL40("256"),
	T2A "\"name\":\"Foo\", " T2B FL40("300"),
	T2A "\"name\":\"Foo\", " T2B FL40("18446744073709551616"),
	T2A "\"name\":\"Foo\", " T2B FL40("-1"),
	T2A "\"name\":\"Foo\", " T2B FL40("3.5"),
	T2A "\"name\":\"Foo\", " T2B "\"flags\":{\"wb_protected\":true, "
	"\"age\":3, \"object_id\":8, \"old\":true}}",
	T2A "\"name\":\"Foo\", " T2B "\"flags\":{\"wb_protected\":true, "
	"\"age\":3, \"age\":300, \"old\":true}}",
	/* flags objects of 127 to 130 bytes (the cache holds 128) */
	T4A "\"flags\":{\"wb_protected\":true, \"age\":3, \"old\":true, "
	"\"uncollectible\":true, \"marked\":true, \"shareable\":true, "
	"\"pinned\":true, \"abcdef\":true}}",
	T4A "\"flags\":{\"wb_protected\":true, \"age\":3, \"old\":true, "
	"\"uncollectible\":true, \"marked\":true, \"shareable\":true, "
	"\"pinned\":true, \"abcdefg\":true}}",
	T4A "\"flags\":{\"wb_protected\":true, \"age\":3, \"old\":true, "
	"\"uncollectible\":true, \"marked\":true, \"shareable\":true, "
	"\"pinned\":true, \"abcdefgh\":true}}",
	T4A "\"flags\":{\"wb_protected\":true, \"age\":3, \"old\":true, "
	"\"uncollectible\":true, \"marked\":true, \"shareable\":true, "
	"\"pinned\":true, \"abcdefghi\":true}}",
	/* memprof after dump_all records */
	"{\"_id\":\"0x7f01\", \"type\":\"string\", \"class\":\"0x7f02\", "
	"\"bytesize\":3, \"value\":\"abc\", \"file\":\"a.rb\", \"line\":2}",
};

static void train(void)
{
	hd_record rec;
	size_t i;

	sa.strict = 0;
	for (i = 0; i < sizeof(trained) / sizeof(trained[0]); i++)
		hd__scan_line(&sa, trained[i], strlen(trained[i]), &rec);
}

static void test_scan_same__guesses(void)
{
	size_t i, n, len;

	compared = differ = 0;
	for (i = 0; i < sizeof(against) / sizeof(against[0]); i++) {
		len = strlen(against[i]);
		for (n = len + 1; n-- > 0;) {
			train();
			check(against[i], n);
		}
	}
	T_ASSERT(compared > 20000);
	T_EQ(differ, 0);
}

static void test_scan_same__cleanup(void)
{
	hd__scan_free(&sa);
	ref_scan_free(&sb);
}

static const struct t_case cases[] = {
	T_CASE(scan_same__dumps),
	T_CASE(scan_same__crafted),
	T_CASE(scan_same__guesses),
	T_CASE(scan_same__cleanup),
};

T_MAIN(cases)
