/*
 * t_select.c - the selection grammar's guard on --class /regex/: what
 * would hurt the C library's regex engine (deep groups, repetitions that
 * multiply, back-references) is refused with a message before regcomp
 * sees it; everything else compiles as POSIX extended regexes do. Then,
 * on a small hand-made heap: --name, --from lines without a type, why a
 * selection picks nothing, the rule of what every command leaves out
 * (and the dominator tree without it), and the edit distance of the
 * suggestions. The selections are tested on real dumps by the CLI
 * suites.
 */
#include "t.h"
#include "heapdump.h"
#include "util/hd_util.h"

#include <ctype.h>
#include <stdlib.h>
#include <unistd.h>

/* hd_select_add("class", "/re/"): its code, and the message in *err */
static int add_regex(const char *re, hd_error *err)
{
	hd_select *sel = NULL;
	char v[4200];
	int rc;

	memset(err, 0, sizeof(*err));
	if (snprintf(v, sizeof(v), "/%s/", re) >= (int)sizeof(v))
		return -1;
	if ((rc = hd_select_new(&sel, err)))
		return rc;
	rc = hd_select_add(sel, "class", v, err);
	hd_select_free(sel);
	return rc;
}

/* "(((...(a+)+...)+)+" with depth pluses */
static void nested_plus(char *buf, int depth)
{
	int i;

	for (i = 1; i < depth; i++)
		*buf++ = '(';
	*buf++ = 'a';
	*buf++ = '+';
	for (i = 1; i < depth; i++) {
		*buf++ = ')';
		*buf++ = '+';
	}
	*buf = '\0';
}

static void test_select__regex_accepted(void)
{
	static const char *const ok[] = {
		"^Net::", "Foo|Bar", "^(ActiveRecord|ActionView)::[A-Z]",
		"[[:alpha:]]+(::[A-Z][a-z]*){0,3}$", "^#<Class:0x[0-9a-f]+>$",
		"a{,5}", "a{2,}", "[]a]+", "[^]a]*", "[[.-.]]", "\\(", "x\\{",
		"a**", "IMEMO/(iseq|env)", "^$", ".",
		"a{1365}",	/* 1365 copies of a and its concatenation: 4095 */
		"a*{1000}",	/* starred copies: glibc's closures grow */
		"((((((((((((((((((((((((((((((((S))))))))))))))))))))))))))))))))",
	};
	hd_error err;
	size_t i;

	for (i = 0; i < sizeof(ok) / sizeof(*ok); i++)
		if (add_regex(ok[i], &err) != 0) {
			T_FAIL("/%s/ refused: %s", ok[i], err.msg);
			return;
		}
}

static void test_select__regex_refused(void)
{
	static const struct {
		const char *re, *msg;
	} bad[] = {
		/* CVE-2019-9192: glibc's matcher recurses forever */
		{ "(|)(\\1\\1)*", "back-references (\\1 to \\9) are not supported" },
		{ "(a)\\9", "back-references (\\1 to \\9) are not supported" },
		{ "a{1366}", "more than 4096 nodes once its repetitions are expanded" },
		{ "(Foo|Bar|Baz)*{5000}", "more than 4096 nodes" },
		{ "a*{2000}", "more than 4096 nodes" },
		{ "(a{100}){100}", "more than 4096 nodes" },
		{ "a{99999999999999999999}", "more than 4096 nodes" },
		{ "(((((((((((((((((((((((((((((((((S)))))))))))))))))))))))))))))))))",
		  "groups nested deeper than 32" },
		{ "x{", "Unmatched \\{" }, /* regcomp's own refusal */
	};
	hd_error err;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		if (add_regex(bad[i].re, &err) != HD_EINVAL ||
		    err.code != HD_EINVAL || !strstr(err.msg, bad[i].msg)) {
			T_FAIL("/%s/: \"%s\", expected \"%s\"", bad[i].re,
			       err.msg, bad[i].msg);
			return;
		}
	}
}

/* The operand of x+ is copied: nested, the copies double. 23 levels in
 * 70 bytes took glibc 13 GB and 44 s (found by fuzz_select). 10 levels
 * are 4092 nodes, and compile; 11 pass the bound. */
static void test_select__regex_nested_repetitions(void)
{
	char re[200];
	hd_error err;

	nested_plus(re, 10);
	T_EQ(add_regex(re, &err), 0);
	nested_plus(re, 11);
	T_EQ(add_regex(re, &err), HD_EINVAL);
	T_ASSERT(strstr(err.msg, "more than 4096 nodes"));
	nested_plus(re, 23);
	T_EQ(add_regex(re, &err), HD_EINVAL);
}

/* Brackets, escapes and intervals are read as regcomp reads them: a "("
 * or "\1" in a bracket is a member, an escaped "(" opens no group. */
static void test_select__regex_brackets_and_escapes(void)
{
	char re[200];
	hd_error err;
	int i, n = 0;

	T_EQ(add_regex("[\\1]", &err), 0);
	T_EQ(add_regex("[(]{1365}", &err), 0);
	T_EQ(add_regex("[[:alpha:](]{1366}", &err), HD_EINVAL);
	for (i = 0; i < 40; i++) { /* 40 escaped parens: no group at all */
		re[n++] = '\\';
		re[n++] = '(';
	}
	re[n] = '\0';
	T_EQ(add_regex(re, &err), 0);
	T_EQ(add_regex("[[:alpha:]](a)\\1", &err), HD_EINVAL);
}


/* ---- selections on a small heap: --name, --from, explanations ---- */

/*
 * A class Foo with no instance, a class Bar with two, a module
 * Comparable, the singleton class of Foo, a string allocated in app.rb
 * (generations 1 and 4), the allocation tracer and a string dump_all
 * allocated.
 */
static const char heap[] =
	"{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":[\"0x10\", "
	"\"0x20\", \"0x30\", \"0x60\", \"0x70\"]}\n"
	"{\"address\":\"0x8\", \"type\":\"CLASS\", \"name\":\"Class\"}\n"
	"{\"address\":\"0x10\", \"type\":\"CLASS\", \"class\":\"0x18\", "
	"\"name\":\"Foo\"}\n"
	"{\"address\":\"0x18\", \"type\":\"CLASS\", \"class\":\"0x8\", "
	"\"singleton\":true, \"references\":[\"0x10\"]}\n"
	"{\"address\":\"0x20\", \"type\":\"CLASS\", \"class\":\"0x8\", "
	"\"name\":\"Bar\", \"references\":[\"0x40\", \"0x48\"]}\n"
	"{\"address\":\"0x30\", \"type\":\"MODULE\", \"name\":\"Comparable\"}\n"
	"{\"address\":\"0x38\", \"type\":\"CLASS\", \"class\":\"0x8\", "
	"\"name\":\"String\"}\n"
	"{\"address\":\"0x40\", \"type\":\"OBJECT\", \"class\":\"0x20\", "
	"\"references\":[\"0x50\"], \"memsize\":40}\n"
	"{\"address\":\"0x48\", \"type\":\"OBJECT\", \"class\":\"0x20\", "
	"\"memsize\":40}\n"
	"{\"address\":\"0x50\", \"type\":\"STRING\", \"class\":\"0x38\", "
	"\"file\":\"app.rb\", \"line\":3, \"method\":\"m\", \"generation\":1, "
	"\"memsize\":40}\n"
	"{\"address\":\"0x58\", \"type\":\"STRING\", \"class\":\"0x38\", "
	"\"file\":\"app.rb\", \"line\":4, \"method\":\"m\", \"generation\":4, "
	"\"memsize\":40}\n"
	"{\"address\":\"0x60\", \"type\":\"DATA\", \"class\":\"0x8\", "
	"\"struct\":\"ObjectTracing/allocation_info_tracer\", "
	"\"references\":[\"0x58\"], \"memsize\":5000}\n"
	"{\"address\":\"0x70\", \"type\":\"STRING\", \"class\":\"0x38\", "
	"\"file\":\"/usr/lib/ruby/3.1.0/objspace.rb\", \"line\":9, "
	"\"method\":\"dump\", \"generation\":4, \"memsize\":40}\n";

static char dir[256];

static const char *scratch(const char *name)
{
	static char path[300];
	const char *t = getenv("TMPDIR");

	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "%s/hdselectXXXXXX",
			 t && *t ? t : "/tmp");
		if (!mkdtemp(dir))
			abort();
	}
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

static int put_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "wb");
	int ok;

	if (!f)
		return -1;
	ok = fwrite(text, 1, strlen(text), f) == strlen(text);
	return fclose(f) == 0 && ok ? 0 : -1;
}

static hd_store *heap_store(void)
{
	const char *path = scratch("heap.json");
	hd_store *s = NULL;

	if (put_file(path, heap) || hd_store_build(&s, path, NULL, NULL))
		s = NULL;
	unlink(path);
	return s;
}

/* The addresses the selection key=value (then key2=value2) picks, as
 * "0x10 0x20", or "ERR" / "" and the explanation in why. */
static void pick(hd_store *s, const char *k1, const char *v1, const char *k2,
		 const char *v2, char *out, size_t n, char *why, size_t wn)
{
	hd_select *sel = NULL;
	hd_nodes set = { NULL, 0, 0 };
	size_t i, len = 0;

	out[0] = why[0] = '\0';
	if (hd_select_new(&sel, NULL) || hd_select_add(sel, k1, v1, NULL) ||
	    (k2 && hd_select_add(sel, k2, v2, NULL)) ||
	    hd_select_nodes(&set, NULL, sel, s, NULL)) {
		snprintf(out, n, "ERR");
		hd_select_free(sel);
		return;
	}
	for (i = 0; i < set.n && len < n; i++)
		len += (size_t)snprintf(out + len, n - len, "%s0x%llx",
					i ? " " : "",
					(unsigned long long)hd_store_address(
						s, set.ids[i]));
	if (!set.n && hd_select_explain(why, wn, sel, s, NULL))
		snprintf(why, wn, "ERR");
	hd_nodes_free(&set);
	hd_select_free(sel);
}

/* "name" picks the class or module object, never its instances. */
static void test_select__name(void)
{
	hd_store *s = heap_store();
	char got[256], why[512];

	T_ASSERT(s);
	pick(s, "name", "Bar", NULL, NULL, got, sizeof(got), why, sizeof(why));
	T_STREQ(got, "0x20");
	pick(s, "class", "Bar", NULL, NULL, got, sizeof(got), why,
	     sizeof(why));
	T_STREQ(got, "0x40 0x48");
	pick(s, "name", "/^(Foo|Comparable)$/", NULL, NULL, got, sizeof(got),
	     why, sizeof(why));
	T_STREQ(got, "0x10 0x30");
	pick(s, "name", "#<Class:Foo>", NULL, NULL, got, sizeof(got), why,
	     sizeof(why));
	T_STREQ(got, "0x18");
	pick(s, "name", "Bar", "type", "MODULE", got, sizeof(got), why,
	     sizeof(why));
	T_STREQ(got, "");
	hd_store_close(s);
}

/* Why nothing is picked: each condition that fails alone, with the
 * nearest names, or the counts when only the conjunction fails. */
static void test_select__explain(void)
{
	static const struct {
		const char *k1, *v1, *k2, *v2, *why;
	} cases[] = {
		{ "class", "Foo", NULL, NULL,
		  "no object is an instance of 'Foo', a class of the dump: "
		  "select the class itself with --name Foo" },
		{ "class", "Comparable", NULL, NULL,
		  "no object is an instance of 'Comparable', a module of the "
		  "dump: select the module itself with --name Comparable" },
		{ "class", "Bra", NULL, NULL,
		  "no class is named 'Bra'; did you mean 'Bar'?" },
		{ "name", "comparable", NULL, NULL,
		  "no class or module is named 'comparable'; did you mean "
		  "'Comparable'?" },
		{ "name", "Zzzzzzzz", NULL, NULL,
		  "no class or module is named 'Zzzzzzzz'" },
		{ "class", "/^Q/", NULL, NULL,
		  "no class name matches '/^Q/'" },
		{ "class", "Bar", "type", "STRING",
		  "each condition picks objects (class Bar: 2 objects; type "
		  "STRING: 3 objects), but no object meets them all" },
		{ "generation", "7..", NULL, NULL,
		  "no object was allocated in generation 7.. (generations 1 "
		  "to 4 here)" },
		{ "file", "ap.rb", NULL, NULL,
		  "no object was allocated in 'ap.rb'; did you mean "
		  "'app.rb'?" },
		{ "location", "app.rb:9", NULL, NULL,
		  "no object was allocated at 'app.rb:9'" },
		{ "address", "0x99", NULL, NULL, "no object is at 0x99" },
		{ "type", "HASH", "class", "Nope",
		  "no class is named 'Nope'; no object is of type HASH" },
	};
	hd_store *s = heap_store();
	char got[256], why[512];
	size_t i;

	T_ASSERT(s);
	for (i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		pick(s, cases[i].k1, cases[i].v1, cases[i].k2, cases[i].v2, got,
		     sizeof(got), why, sizeof(why));
		if (got[0] || strcmp(why, cases[i].why) != 0) {
			T_FAIL("%s %s: picked '%.60s', said '%.300s'",
			       cases[i].k1, cases[i].v1, got, why);
			break;
		}
	}
	/* a buffer too small is cut, never overrun */
	{
		hd_select *sel = NULL;
		char small[8];

		memset(small, 'x', sizeof(small));
		T_RC(hd_select_new(&sel, NULL), 0);
		T_RC(hd_select_add(sel, "class", "Bra", NULL), 0);
		T_RC(hd_select_explain(small, 5, sel, s, NULL), 0);
		T_STREQ(small, "no c");
		T_EQ(small[5], 'x');
		hd_select_free(sel);
	}
	hd_store_close(s);
}

/* A from file: addresses of any line with an "address" member, with or
 * without a type; the other lines counted, blank and ROOT ones aside. */
static void test_select__from_addresses(void)
{
	hd_store *s = heap_store();
	const char *path = scratch("from.json");
	hd_select *sel = NULL;
	hd_nodes set = { NULL, 0, 0 };
	uint64_t first = 0, missing = 0;

	T_ASSERT(s);
	T_ASSERT(put_file(path,
			  "{\"type\":\"ROOT\", \"root\":\"vm\", "
			  "\"references\":[\"0x40\"]}\n"
			  "{\"address\":\"0x20\"}\n"
			  "\n"
			  "{\"id\":1}\n"
			  "not json\n"
			  "{\"address\":\"0x48\", \"type\":\"OBJECT\"}\n"
			  "{\"type\":\"STRING\"}\n"
			  "{\"address\":\"0x999\"}\n") == 0);
	T_RC(hd_select_new(&sel, NULL), 0);
	T_RC(hd_select_add(sel, "from", path, NULL), 0);
	T_EQ(hd_select_from_skipped(sel, &first), 3);
	T_EQ(first, 4);
	T_RC(hd_select_nodes(&set, &missing, sel, s, NULL), 0);
	T_EQ(set.n, 2);
	T_EQ(missing, 1);
	T_EQ(hd_store_address(s, set.ids[0]), 0x20);
	T_EQ(hd_store_address(s, set.ids[1]), 0x48);
	hd_nodes_free(&set);
	hd_select_free(sel);
	/* nothing but lines without an address: not an address list */
	T_ASSERT(put_file(path, "{\"id\":1}\n") == 0);
	{
		hd_error err = { 0 };

		T_RC(hd_select_new(&sel, NULL), 0);
		T_RC(hd_select_add(sel, "from", path, &err), HD_ENOTDUMP);
		T_ASSERT(strstr(err.msg, "not a heap dump (line 1: "));
		hd_select_free(sel);
	}
	/* an empty file (diff -o with nothing new) selects nothing: said so */
	T_ASSERT(put_file(path, "") == 0);
	{
		char why[256];

		T_RC(hd_select_new(&sel, NULL), 0);
		T_RC(hd_select_add(sel, "from", path, NULL), 0);
		T_EQ(hd_select_from_skipped(sel, &first), 0);
		T_RC(hd_select_explain(why, sizeof(why), sel, s, NULL), 0);
		T_STREQ(why, "the --from input gives no object address");
		hd_select_free(sel);
	}
	unlink(path);
	hd_store_close(s);
}

/* The rule of what every command leaves out, and the dominator tree
 * without those objects. */
static void test_select__dumper(void)
{
	hd_store *s = heap_store();
	hd_domtree *d = NULL;
	uint64_t mem = 0, n;

	T_ASSERT(s);
	T_EQ(hd_store_is_dumper(s, hd_store_find(s, 0x60)), 1);
	T_EQ(hd_store_is_dumper(s, hd_store_find(s, 0x70)), 1);
	T_EQ(hd_store_is_dumper(s, hd_store_find(s, 0x58)), 0);
	T_EQ(hd_store_is_dumper(s, hd_store_find(s, 0x50)), 0);
	T_EQ(hd_store_is_dumper(s, HD_NODE_NONE), 0);
	T_EQ(hd_store_dumper_count(s, &mem), 2);
	T_EQ(mem, 5040);
	/* with the tracer: 0x58 is reached through it */
	T_RC(hd_domtree_new(&d, s, 0, NULL), 0);
	n = hd_domtree_reached(d, &mem);
	T_EQ(hd_domtree_idom(d, hd_store_find(s, 0x58)),
	     hd_store_find(s, 0x60));
	hd_domtree_free(d);
	T_RC(hd_domtree_new(&d, s, HD_DOMTREE_SKIP_DUMPER, NULL), 0);
	T_EQ(hd_domtree_reached(d, NULL), n - 3); /* 0x60, 0x58, 0x70 */
	T_EQ(hd_domtree_idom(d, hd_store_find(s, 0x60)), HD_NODE_NONE);
	T_EQ(hd_domtree_idom(d, hd_store_find(s, 0x58)), HD_NODE_NONE);
	T_EQ(hd_domtree_idom(d, hd_store_find(s, 0x40)),
	     hd_store_find(s, 0x20));
	hd_domtree_free(d);
	hd_store_close(s);
}

/* The distance, banded, against the plain dynamic programme. */
static unsigned plain_osa(const char *a, const char *b)
{
	size_t n = strlen(a), m = strlen(b), i, j;
	unsigned d[20][20], v;

	for (i = 0; i <= n; i++)
		d[i][0] = (unsigned)i;
	for (j = 0; j <= m; j++)
		d[0][j] = (unsigned)j;
	for (i = 1; i <= n; i++)
		for (j = 1; j <= m; j++) {
			v = d[i - 1][j - 1] + (tolower((unsigned char)a[i - 1]) !=
					       tolower((unsigned char)b[j - 1]));
			if (d[i - 1][j] + 1 < v)
				v = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < v)
				v = d[i][j - 1] + 1;
			if (i > 1 && j > 1 &&
			    tolower((unsigned char)a[i - 1]) ==
				    tolower((unsigned char)b[j - 2]) &&
			    tolower((unsigned char)a[i - 2]) ==
				    tolower((unsigned char)b[j - 1]) &&
			    d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1;
			d[i][j] = v;
		}
	return d[n][m];
}

static void test_select__distance(void)
{
	char a[16], b[16], big[300];
	unsigned i, k, max, want, got;
	uint32_t seed = 12345;

	T_EQ(hd_name_distance("Reqest", 6, "Request", 7, 2), 1);
	T_EQ(hd_name_distance("leakycache", 10, "LeakyCache", 10, 2), 0);
	T_EQ(hd_name_distance("formta", 6, "format", 6, 2), 1);
	T_EQ(hd_name_distance("stats", 5, "xyzzy", 5, 2), 3);
	T_EQ(hd_name_distance("", 0, "abc", 3, 3), 3);
	T_EQ(hd_name_distance("abc", 3, "abcdefgh", 8, 2), 3);
	memset(big, 'a', sizeof(big));
	T_EQ(hd_name_distance(big, 257, big, 257, 2), 3);
	T_EQ(hd_name_distance(big, 256, big, 256, 2), 0);
	/* random strings over a small alphabet, every cap */
	for (i = 0; i < 20000; i++) {
		size_t n, m;

		seed = seed * 1103515245u + 12345u;
		n = (seed >> 8) % 9;
		seed = seed * 1103515245u + 12345u;
		m = (seed >> 8) % 9;
		for (k = 0; k < n; k++) {
			seed = seed * 1103515245u + 12345u;
			a[k] = "abAB"[(seed >> 12) % 4];
		}
		for (k = 0; k < m; k++) {
			seed = seed * 1103515245u + 12345u;
			b[k] = "abAB"[(seed >> 12) % 4];
		}
		a[n] = b[m] = '\0';
		max = i % 5;
		want = plain_osa(a, b);
		if (want > max)
			want = max + 1;
		got = hd_name_distance(a, n, b, m, max);
		if (got != want) {
			T_FAIL("'%s' '%s' max %u: %u, want %u", a, b, max, got,
			       want);
			return;
		}
	}
}

static void test_select__cleanup(void)
{
	if (dir[0])
		T_ASSERT(rmdir(dir) == 0);
}

static const struct t_case cases[] = {
	T_CASE(select__regex_accepted),
	T_CASE(select__regex_refused),
	T_CASE(select__regex_nested_repetitions),
	T_CASE(select__regex_brackets_and_escapes),
	T_CASE(select__name),
	T_CASE(select__explain),
	T_CASE(select__from_addresses),
	T_CASE(select__dumper),
	T_CASE(select__distance),
	T_CASE(select__cleanup),
};

T_MAIN(cases)
