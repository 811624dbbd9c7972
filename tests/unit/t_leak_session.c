/*
 * t_leak_session.c - hd_leak_session on hand-written dumps with known
 * answers: two dumps (growth, the two-dumps caveat, no growth result),
 * three and four (the leak as LATER holds it, the collections that grow
 * at every step), the same dump twice (nothing new), two processes by
 * their origins, uncertain matches, the caveats' names and sentences,
 * a collection replaced at every step followed through its holder's
 * slot, the VM's own growth and a weak map's never taken for the
 * program's growth in place, growth in place by shape (two buffers held alike outweigh one
 * Hash that grew more), a WeakKeyMap whose values hold their keys named
 * over a suspect under min_leak, and bad arguments.
 *
 * A cache (Foo at 0x1000, root vm) gains two Strings of 100 bytes per
 * dump: BEFORE holds none, AFTER 0x2000 and 0x2010, LATER those and
 * 0x2020, 0x2030. The leak of three dumps: 0x2000 and 0x2010, 200
 * bytes, held by the cache, whose Array grows 0 -> 2 -> 4.
 */
#include "t.h"
#include "t_dump.h"
#include "heapdump.h"

#include <unistd.h>

#define HEAD                                                              \
	"{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":[\"0x1000\"]}\n" \
	"{\"address\":\"0x100\", \"type\":\"CLASS\", \"name\":\"Foo\"}\n"    \
	"{\"address\":\"0x120\", \"type\":\"CLASS\", \"name\":\"String\"}\n" \
	"{\"address\":\"0x130\", \"type\":\"CLASS\", \"name\":\"Array\"}\n"
#define CACHE(g)                                                          \
	"{\"address\":\"0x1000\", \"type\":\"OBJECT\", \"class\":\"0x100\", " \
	"\"generation\":1, \"references\":[\"0x1100\"]}\n"                  \
	"{\"address\":\"0x1100\", \"type\":\"ARRAY\", \"class\":\"0x130\", "  \
	"\"generation\":1, \"length\":" #g
#define STR(addr, g)                                                      \
	"{\"address\":\"" addr "\", \"type\":\"STRING\", \"class\":\"0x120\", " \
	"\"generation\":" #g ", \"memsize\":100, \"file\":\"app.rb\", "     \
	"\"line\":7}\n"

static const char before[] =
	HEAD CACHE(0) ", \"references\":[]}\n"
	"{\"address\":\"0x900\", \"type\":\"OBJECT\", \"class\":\"0x100\", "
	"\"generation\":3}\n";
static const char after[] =
	HEAD CACHE(2) ", \"references\":[\"0x2000\", \"0x2010\"]}\n"
	"{\"address\":\"0x900\", \"type\":\"OBJECT\", \"class\":\"0x100\", "
	"\"generation\":3}\n"
	STR("0x2000", 5) STR("0x2010", 5);
static const char step[] =
	HEAD CACHE(3) ", \"references\":[\"0x2000\", \"0x2010\", \"0x2020\"]}\n"
	"{\"address\":\"0x900\", \"type\":\"OBJECT\", \"class\":\"0x100\", "
	"\"generation\":3}\n"
	STR("0x2000", 5) STR("0x2010", 5) STR("0x2020", 7);
static const char later[] =
	HEAD CACHE(4) ", \"references\":[\"0x2000\", \"0x2010\", \"0x2020\", "
	"\"0x2030\"]}\n"
	"{\"address\":\"0x900\", \"type\":\"OBJECT\", \"class\":\"0x100\", "
	"\"generation\":3}\n"
	STR("0x2000", 5) STR("0x2010", 5) STR("0x2020", 7) STR("0x2030", 9);

static void close_all(hd_store **s, size_t n)
{
	size_t k;

	for (k = 0; k < n; k++)
		hd_store_close(s[k]);
}

static hd_store *load(const char *text)
{
	return t_store_of(text, strlen(text));
}

static void test_session__two_dumps(void)
{
	hd_store *s[2] = { load(before), load(after) };
	hd_leak_session *ls = NULL;
	const hd_leaks_totals *t;
	size_t np = 9;
	char buf[512];

	T_ASSERT(s[0] && s[1]);
	T_RC(hd_leak_session_new(&ls, s, 2, NULL, NULL), 0);
	T_ASSERT(hd_leak_session_order(ls, &np) != NULL);
	T_EQ(np, 1);
	/* nothing before run */
	T_ASSERT(hd_leak_session_totals(ls) == NULL);
	T_EQ(hd_leak_session_caveats(ls), 0);
	T_RC(hd_leak_session_run(ls, NULL), 0);
	T_RC(hd_leak_session_run(ls, NULL), 0); /* a no-op */
	T_EQ(hd_leak_session_ndumps(ls), 2);
	T_EQ(hd_leak_session_at(ls), 1);
	T_ASSERT(hd_leak_session_store(ls) == s[1]);
	T_ASSERT(hd_leak_session_growth(ls) == NULL);
	T_ASSERT(!hd_leak_session_diff(ls)->has_later);
	t = hd_leak_session_totals(ls);
	T_ASSERT(t != NULL);
	/* the two Strings and the cache's grown Array? the Array is old */
	T_EQ(t->leak_count, 2);
	T_EQ(t->leak_memsize, 200);
	T_EQ(t->groups, 1);
	T_ASSERT(hd_leak_session_caveats(ls) & HD_CAVEAT_TWO_DUMPS);
	T_ASSERT(!(hd_leak_session_caveats(ls) & HD_CAVEAT_NOTHING_NEW));
	T_ASSERT(hd_leak_session_caveat_text(buf, sizeof(buf), ls,
					     HD_CAVEAT_TWO_DUMPS) > 0);
	T_ASSERT(strstr(buf, "growth, not yet a leak") != NULL);
	/* a caveat that does not apply has no text */
	T_EQ(hd_leak_session_caveat_text(buf, sizeof(buf), ls,
					 HD_CAVEAT_NOTHING_NEW), 0);
	T_STREQ(buf, "");
	hd_leak_session_free(ls);
	close_all(s, 2);
}

static void test_session__three_and_four_dumps(void)
{
	hd_store *s[4] = { load(before), load(after), load(step),
			   load(later) };
	hd_leak_session *ls = NULL;
	const hd_leaks_totals *t;
	const hd_growth *g;
	const hd_growing *x;
	hd_leak_session_options o = HD_LEAK_SESSION_OPTIONS_INIT;

	T_ASSERT(s[0] && s[1] && s[2] && s[3]);
	/* BEFORE AFTER LATER */
	T_RC(hd_leak_session_new(&ls, (hd_store *[]){ s[0], s[1], s[3] }, 3,
				 NULL, NULL), 0);
	T_RC(hd_leak_session_run(ls, NULL), 0);
	T_EQ(hd_leak_session_at(ls), 2);
	T_ASSERT(hd_leak_session_diff(ls)->has_later);
	t = hd_leak_session_totals(ls);
	T_EQ(t->leak_count, 2);
	T_EQ(t->leak_memsize, 200);
	T_ASSERT(t->significant == 0); /* 200 bytes: under 2 KiB */
	T_ASSERT(!(hd_leak_session_caveats(ls) & HD_CAVEAT_TWO_DUMPS));
	g = hd_leak_session_growth(ls);
	T_ASSERT(g != NULL);
	T_EQ(hd_growth_dumps(g), 3);
	hd_leak_session_free(ls);
	/* BEFORE AFTER STEP LATER, min_leak 100: a significant leak */
	o.min_leak = 100;
	T_RC(hd_leak_session_new(&ls, s, 4, &o, NULL), 0);
	T_RC(hd_leak_session_run(ls, NULL), 0);
	T_EQ(hd_leak_session_at(ls), 3);
	T_EQ(hd_leak_session_options_get(ls)->min_leak, 100);
	t = hd_leak_session_totals(ls);
	T_EQ(t->leak_memsize, 200);
	T_EQ(t->significant, 1);
	g = hd_leak_session_growth(ls);
	T_EQ(hd_growth_dumps(g), 4);
	T_EQ(hd_growth_count(g), 1);
	x = hd_growth_get(g, 0);
	T_EQ(x->first, 0);
	T_EQ(x->last, 4);
	T_EQ(x->lengths[1], 2);
	hd_leak_session_free(ls);
	close_all(s, 4);
}

/* A copy-on-write holder: Foo (0x1000) holds a new Array at each dump,
 * 0 -> 2 -> 4 long; no collection of every dump grows, so the verdict
 * follows Foo's slot and names it. */
#define COW(arr, g, len)                                                  \
	"{\"address\":\"0x1000\", \"type\":\"OBJECT\", \"class\":\"0x100\", " \
	"\"generation\":1, \"references\":[\"" arr "\"]}\n"               \
	"{\"address\":\"" arr "\", \"type\":\"ARRAY\", \"class\":\"0x130\", " \
	"\"generation\":" #g ", \"length\":" #len

static void test_session__slot_growth(void)
{
	static const char b[] = HEAD COW("0x1100", 1, 0) ", \"references\":[]}\n";
	static const char a[] =
		HEAD COW("0x1200", 5, 2) ", \"references\":[\"0x2000\", "
		"\"0x2010\"]}\n" STR("0x2000", 5) STR("0x2010", 5);
	static const char l[] =
		HEAD COW("0x1300", 8, 4) ", \"references\":[\"0x2000\", "
		"\"0x2010\", \"0x2020\", \"0x2030\"]}\n"
		STR("0x2000", 5) STR("0x2010", 5) STR("0x2020", 8)
		STR("0x2030", 8);
	hd_store *s[3] = { load(b), load(a), load(l) };
	hd_leak_session *ls = NULL;
	hd_leak_session_options o = HD_LEAK_SESSION_OPTIONS_INIT;
	char buf[1024];

	T_ASSERT(s[0] && s[1] && s[2]);
	o.min_leak = 100;
	T_RC(hd_leak_session_new(&ls, s, 3, &o, NULL), 0);
	T_RC(hd_leak_session_run(ls, NULL), 0);
	T_EQ(hd_leak_session_totals(ls)->leak_memsize, 200);
	T_EQ(hd_growth_count(hd_leak_session_growth(ls)), 0);
	T_ASSERT(hd_leaks_verdict_text(buf, sizeof(buf),
				       hd_leak_session_leaks(ls)) > 0);
	T_ASSERT(strstr(buf, "; the Array that Foo holds grows at every "
			     "dump, a new one each time: 0 -> 2 -> 4") != NULL);
	T_ASSERT(strstr(buf, "no collection grows") == NULL);
	hd_leak_session_free(ls);
	close_all(s, 3);
}

/* A Set of Ruby 4.0 (core: a DATA of struct "set" that lists its
 * members and has no length in the dump) held by Foo gains two members
 * per dump: it is the collection that grows, 0 -> 2 -> 4 (its members,
 * not its class edge), and the verdict says so; a DATA of another
 * struct that grows alike is no collection. */
#define CSET(st, refs)                                                    \
	"{\"address\":\"0x1000\", \"type\":\"OBJECT\", \"class\":\"0x100\", " \
	"\"generation\":1, \"references\":[\"0x1100\"]}\n"                  \
	"{\"address\":\"0x140\", \"type\":\"CLASS\", \"name\":\"Set\"}\n"   \
	"{\"address\":\"0x1100\", \"type\":\"DATA\", \"class\":\"0x140\", "   \
	"\"struct\":\"" st "\", \"generation\":1, \"memsize\":40, "        \
	"\"references\":[" refs "]}\n"

static void set_growth(const char *st, int grows)
{
	char b[2048], a[2048], l[2048], buf[1024];
	hd_store *s[3];
	hd_leak_session *ls = NULL;
	hd_leak_session_options o = HD_LEAK_SESSION_OPTIONS_INIT;
	const hd_growth *g;

	snprintf(b, sizeof(b), HEAD CSET("%s", ""), st);
	snprintf(a, sizeof(a), HEAD CSET("%s", "\"0x2000\", \"0x2010\"")
		 STR("0x2000", 5) STR("0x2010", 5), st);
	snprintf(l, sizeof(l), HEAD CSET("%s", "\"0x2000\", \"0x2010\", "
		 "\"0x2020\", \"0x2030\"") STR("0x2000", 5) STR("0x2010", 5)
		 STR("0x2020", 8) STR("0x2030", 8), st);
	s[0] = load(b);
	s[1] = load(a);
	s[2] = load(l);
	T_ASSERT(s[0] && s[1] && s[2]);
	o.min_leak = 100;
	T_RC(hd_leak_session_new(&ls, s, 3, &o, NULL), 0);
	T_RC(hd_leak_session_run(ls, NULL), 0);
	T_EQ(hd_leak_session_totals(ls)->leak_memsize, 200);
	g = hd_leak_session_growth(ls);
	T_EQ(hd_growth_count(g), grows ? 1 : 0);
	if (grows && hd_growth_count(g)) {
		T_EQ(hd_growth_get(g, 0)->type, HD_T_DATA);
		T_EQ(hd_growth_get(g, 0)->first, 0);
		T_EQ(hd_growth_get(g, 0)->lengths[1], 2);
		T_EQ(hd_growth_get(g, 0)->last, 4);
	}
	T_ASSERT(hd_leaks_verdict_text(buf, sizeof(buf),
				       hd_leak_session_leaks(ls)) > 0);
	T_ASSERT((strstr(buf, "Set grows at every dump: 0 -> 2 -> 4") !=
		  NULL) == grows);
	hd_leak_session_free(ls);
	close_all(s, 3);
}

static void test_session__core_set_growth(void)
{
	set_growth("set", 1);
	set_growth("other", 0);
}

/* The VM itself (a DATA of struct VM, class RubyVM: its memsize counts
 * the call-info and symbol tables, which grow as the program makes new
 * method names) grows at every dump, by more than the leak: it is no
 * growth in place of the program's, and the verdict never names it. */
#define VMDATA(m)                                                          \
	"{\"address\":\"0x140\", \"type\":\"CLASS\", \"name\":\"RubyVM\"}\n"  \
	"{\"address\":\"0x3000\", \"type\":\"DATA\", \"class\":\"0x140\", "  \
	"\"struct\":\"VM\", \"generation\":1, \"memsize\":" #m "}\n"

/* and a WeakMap (a DATA of struct weakmap) whose table grows: its
 * entries hold nothing (on 3.1 those of objects freed, whose finalizers
 * have not run yet, stay until they do) */
#define WEAKMAP(m)                                                         \
	"{\"address\":\"0x180\", \"type\":\"CLASS\", "                        \
	"\"name\":\"ObjectSpace::WeakMap\"}\n"                                  \
	"{\"address\":\"0x3100\", \"type\":\"DATA\", \"class\":\"0x180\", "  \
	"\"struct\":\"weakmap\", \"generation\":1, \"memsize\":" #m "}\n"

static void test_session__vm_grows(void)
{
	static const char b[] = HEAD VMDATA(1000) WEAKMAP(1000) CACHE(0) ", \"references\":[]}\n";
	static const char a[] = HEAD VMDATA(60000) WEAKMAP(30000) CACHE(2)
		", \"references\":[\"0x2000\", \"0x2010\"]}\n"
		STR("0x2000", 5) STR("0x2010", 5);
	static const char l[] = HEAD VMDATA(120000) WEAKMAP(60000) CACHE(4)
		", \"references\":[\"0x2000\", \"0x2010\", \"0x2020\", "
		"\"0x2030\"]}\n"
		STR("0x2000", 5) STR("0x2010", 5) STR("0x2020", 8)
		STR("0x2030", 8);
	hd_store *s[3] = { load(b), load(a), load(l) };
	hd_leak_session *ls = NULL;
	hd_leak_session_options o = HD_LEAK_SESSION_OPTIONS_INIT;
	const hd_leaks_totals *t;
	char buf[1024];

	T_ASSERT(s[0] && s[1] && s[2]);
	o.min_leak = 100;
	T_RC(hd_leak_session_new(&ls, s, 3, &o, NULL), 0);
	T_RC(hd_leak_session_run(ls, NULL), 0);
	t = hd_leak_session_totals(ls);
	T_EQ(t->leak_memsize, 200);
	T_EQ(hd_growth_inplace_count(hd_leak_session_growth(ls)), 0);
	T_EQ(t->inplace_memsize, 0);
	T_EQ(t->first_kind, HD_LEAKS_FIRST_SUSPECT);
	T_ASSERT(hd_leaks_verdict_text(buf, sizeof(buf),
				       hd_leak_session_leaks(ls)) > 0);
	T_ASSERT(strstr(buf, "RubyVM") == NULL);
	T_ASSERT(strstr(buf, "growth in place") == NULL);
	hd_leak_session_free(ls);
	close_all(s, 3);
}

/* Growth in place by shape: two buffers (Strings, each held by a Foo)
 * grow by 8000 bytes each, a Hash (held by a Bar) by 12000: the verdict
 * names the buffers, 16000 of the 28000 bytes that grew in place, not
 * the Hash that grew most alone. */
#define BUF(conn, buf, n, m)                                               \
	"{\"address\":\"" conn "\", \"type\":\"OBJECT\", \"class\":\"0x100\", "  \
	"\"generation\":1, \"references\":[\"" buf "\"]}\n"                 \
	"{\"address\":\"" buf "\", \"type\":\"STRING\", \"class\":\"0x120\", "  \
	"\"generation\":1, \"bytesize\":" #n ", \"memsize\":" #m "}\n"
#define BAR(n, m)                                                          \
	"{\"address\":\"0x150\", \"type\":\"CLASS\", \"name\":\"Bar\"}\n"     \
	"{\"address\":\"0x160\", \"type\":\"CLASS\", \"name\":\"Hash\"}\n"    \
	"{\"address\":\"0x5000\", \"type\":\"OBJECT\", \"class\":\"0x150\", "  \
	"\"generation\":1, \"references\":[\"0x5100\"]}\n"                 \
	"{\"address\":\"0x5100\", \"type\":\"HASH\", \"class\":\"0x160\", "    \
	"\"generation\":1, \"size\":" #n ", \"memsize\":" #m "}\n"

static void test_session__inplace_shape(void)
{
	static const char b[] = HEAD CACHE(0) ", \"references\":[]}\n"
		BUF("0x4000", "0x4100", 900, 1000) BUF("0x4010", "0x4110", 900, 1000)
		BAR(10, 1000);
	static const char a[] = HEAD CACHE(0) ", \"references\":[]}\n"
		BUF("0x4000", "0x4100", 4900, 5000) BUF("0x4010", "0x4110", 4900, 5000)
		BAR(70, 7000);
	static const char l[] = HEAD CACHE(0) ", \"references\":[]}\n"
		BUF("0x4000", "0x4100", 8900, 9000) BUF("0x4010", "0x4110", 8900, 9000)
		BAR(130, 13000);
	hd_store *s[3] = { load(b), load(a), load(l) };
	hd_leak_session *ls = NULL;
	const hd_leaks_totals *t;
	hd_node_id id = HD_NODE_NONE;
	char buf[1024];

	T_ASSERT(s[0] && s[1] && s[2]);
	T_RC(hd_leak_session_new(&ls, s, 3, NULL, NULL), 0);
	T_RC(hd_leak_session_run(ls, NULL), 0);
	t = hd_leak_session_totals(ls);
	T_EQ(t->inplace_count, 3);
	T_EQ(t->inplace_memsize, 28000);
	T_EQ(t->first_kind, HD_LEAKS_FIRST_INPLACE);
	T_ASSERT(t->first_share > 0.571 && t->first_share < 0.572);
	T_EQ(hd_leaks_inplace(hd_leak_session_leaks(ls), &id, NULL, 0, NULL), 3);
	T_EQ(hd_store_type(hd_leak_session_store(ls), id), HD_T_STRING);
	T_ASSERT(hd_leaks_verdict_text(buf, sizeof(buf),
				       hd_leak_session_leaks(ls)) > 0);
	T_ASSERT(strstr(buf, "; 2 objects of its shape (String held by Foo) "
			     "grew by 16.0 KB in all") != NULL);
	hd_leak_session_free(ls);
	close_all(s, 3);
}

/* A WeakKeyMap whose values (Arrays) reference their keys (Strings),
 * which nothing else holds: the map holds them all. Beside it a Bar
 * holds one new String of 40 bytes, under min_leak: the verdict names
 * the map, not Bar. */
#define WKM(refs)                                                          \
	"{\"address\":\"0x1000\", \"type\":\"OBJECT\", \"class\":\"0x100\", "  \
	"\"generation\":1, \"references\":[\"0x6000\", \"0x5000\"]}\n"        \
	"{\"address\":\"0x170\", \"type\":\"CLASS\", "                       \
	"\"name\":\"ObjectSpace::WeakKeyMap\"}\n"                                \
	"{\"address\":\"0x150\", \"type\":\"CLASS\", \"name\":\"Bar\"}\n"     \
	"{\"address\":\"0x6000\", \"type\":\"DATA\", \"class\":\"0x170\", "    \
	"\"struct\":\"weakkeymap\", \"generation\":1, \"memsize\":200, "      \
	"\"references\":[" refs "]}\n"
#define VAL(v, k, g)                                                       \
	"{\"address\":\"" v "\", \"type\":\"ARRAY\", \"class\":\"0x130\", "    \
	"\"generation\":" #g ", \"length\":1, \"memsize\":100, "             \
	"\"references\":[\"" k "\"]}\n" STR(k, g)
#define BARS(s)                                                            \
	"{\"address\":\"0x5000\", \"type\":\"OBJECT\", \"class\":\"0x150\", "  \
	"\"generation\":1, \"references\":[" s "]}\n"

static void test_session__weak_values_hold_keys(void)
{
	static const char b[] = HEAD WKM("") BARS("");
	static const char a[] = HEAD WKM("\"0x2000\", \"0x2010\"")
		BARS("\"0x2200\"") VAL("0x2000", "0x2100", 5)
		VAL("0x2010", "0x2110", 5)
		"{\"address\":\"0x2200\", \"type\":\"STRING\", \"class\":\"0x120\", "
		"\"generation\":5, \"memsize\":40}\n";
	static const char l[] = HEAD WKM("\"0x2000\", \"0x2010\", \"0x2020\"")
		BARS("\"0x2200\"") VAL("0x2000", "0x2100", 5)
		VAL("0x2010", "0x2110", 5) VAL("0x2020", "0x2120", 8)
		"{\"address\":\"0x2200\", \"type\":\"STRING\", \"class\":\"0x120\", "
		"\"generation\":5, \"memsize\":40}\n";
	hd_store *s[3] = { load(b), load(a), load(l) };
	hd_leak_session *ls = NULL;
	hd_leak_session_options o = HD_LEAK_SESSION_OPTIONS_INIT;
	const hd_leaks_totals *t;
	const hd_leaks_suspect *p;
	char buf[1024];

	T_ASSERT(s[0] && s[1] && s[2]);
	o.min_leak = 100;
	T_RC(hd_leak_session_new(&ls, s, 3, &o, NULL), 0);
	T_RC(hd_leak_session_run(ls, NULL), 0);
	t = hd_leak_session_totals(ls);
	T_EQ(t->leak_memsize, 440);
	T_EQ(t->first_kind, HD_LEAKS_FIRST_SUSPECT);
	p = hd_leaks_suspect_get(hd_leak_session_leaks(ls), t->first_index);
	T_ASSERT(p != NULL);
	T_ASSERT(p->flags & HD_SUSPECT_EPHEMERON);
	T_EQ(p->retained_memsize, 400);
	T_ASSERT(hd_leaks_verdict_text(buf, sizeof(buf),
				       hd_leak_session_leaks(ls)) > 0);
	T_ASSERT(strstr(buf, "ObjectSpace::WeakKeyMap") != NULL);
	T_ASSERT(strstr(buf, "Bar") == NULL);
	hd_leak_session_free(ls);
	close_all(s, 3);
}

static void test_session__nothing_new(void)
{
	hd_store *s[2] = { load(after), load(after) };
	hd_leak_session *ls = NULL;
	char buf[512];

	T_ASSERT(s[0] && s[1]);
	T_RC(hd_leak_session_new(&ls, s, 2, NULL, NULL), 0);
	T_RC(hd_leak_session_run(ls, NULL), 0);
	T_ASSERT(hd_leak_session_caveats(ls) & HD_CAVEAT_NOTHING_NEW);
	T_ASSERT(!(hd_leak_session_caveats(ls) & HD_CAVEAT_NO_SUSPECTS));
	T_ASSERT(hd_leak_session_caveat_text(buf, sizeof(buf), ls,
					     HD_CAVEAT_NOTHING_NEW) > 0);
	T_ASSERT(strstr(buf, "is new since before") != NULL);
	hd_leak_session_free(ls);
	close_all(s, 2);
}

/* Two pids by the origins: a warning caveat, named and said. */
static void test_session__other_process(void)
{
	hd_store *s[2] = { load(before), load(after) };
	hd_dump_origin org[2] = { { 100, 0, 0 }, { 200, 0, 0 } };
	hd_leak_session_options o = HD_LEAK_SESSION_OPTIONS_INIT;
	hd_leak_session *ls = NULL;
	const hd_order_pair *p;
	char buf[512];
	size_t n;

	T_ASSERT(s[0] && s[1]);
	o.origins = org;
	T_RC(hd_leak_session_new(&ls, s, 2, &o, NULL), 0);
	p = hd_leak_session_order(ls, &n);
	T_ASSERT(p[0].flags & HD_ORDER_OTHER_PROCESS);
	T_RC(hd_leak_session_run(ls, NULL), 0);
	T_ASSERT(hd_leak_session_caveats(ls) & HD_CAVEAT_OTHER_PROCESS);
	T_ASSERT(hd_leak_session_caveat_text(buf, sizeof(buf), ls,
					     HD_CAVEAT_OTHER_PROCESS) > 0);
	T_ASSERT(strstr(buf, "(pid 100)") != NULL);
	T_ASSERT(strstr(buf, "(pid 200)") != NULL);
	T_STREQ(hd_caveat_name(HD_CAVEAT_OTHER_PROCESS), "other-process");
	T_EQ(hd_caveat_is_warning(HD_CAVEAT_OTHER_PROCESS), 1);
	hd_leak_session_free(ls);
	close_all(s, 2);
}

/* A compaction between two dumps of one process (the sidecars'
 * counts): a warning for untraced dumps, none for traced ones, which
 * follow moved objects by their generation. */
static void test_session__compacted(void)
{
	static const char ub[] =
		"{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":[\"0x1000\"]}\n"
		"{\"address\":\"0x100\", \"type\":\"CLASS\", \"name\":\"Foo\"}\n"
		"{\"address\":\"0x1000\", \"type\":\"OBJECT\", \"class\":\"0x100\"}\n";
	static const char ua[] =
		"{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":[\"0x1000\"]}\n"
		"{\"address\":\"0x100\", \"type\":\"CLASS\", \"name\":\"Foo\"}\n"
		"{\"address\":\"0x1000\", \"type\":\"OBJECT\", \"class\":\"0x100\", "
		"\"references\":[\"0x2000\"]}\n"
		"{\"address\":\"0x2000\", \"type\":\"OBJECT\", \"class\":\"0x100\"}\n";
	hd_store *u[2] = { load(ub), load(ua) };
	hd_store *t[2] = { load(before), load(after) };
	hd_dump_origin org[2] = { { 100, 0, 2 + 1 }, { 100, 0, 3 + 1 } };
	hd_leak_session_options o = HD_LEAK_SESSION_OPTIONS_INIT;
	hd_leak_session *ls = NULL;
	const hd_order_pair *p;
	char buf[512];
	size_t n;

	T_ASSERT(u[0] && u[1] && t[0] && t[1]);
	o.origins = org;
	T_RC(hd_leak_session_new(&ls, u, 2, &o, NULL), 0);
	p = hd_leak_session_order(ls, &n);
	T_ASSERT(p[0].flags & HD_ORDER_COMPACTED);
	T_ASSERT(!(p[0].flags & HD_ORDER_REVERSED));
	T_RC(hd_leak_session_run(ls, NULL), 0);
	T_ASSERT(hd_leak_session_caveats(ls) & HD_CAVEAT_COMPACTED);
	T_ASSERT(hd_leak_session_caveat_text(buf, sizeof(buf), ls,
					     HD_CAVEAT_COMPACTED) > 0);
	T_ASSERT(strstr(buf, "compact_count 2 -> 3") != NULL);
	T_STREQ(hd_caveat_name(HD_CAVEAT_COMPACTED), "compacted");
	T_EQ(hd_caveat_is_warning(HD_CAVEAT_COMPACTED), 1);
	hd_leak_session_free(ls);
	/* traced: no warning */
	T_RC(hd_leak_session_new(&ls, t, 2, &o, NULL), 0);
	T_RC(hd_leak_session_run(ls, NULL), 0);
	T_ASSERT(!(hd_leak_session_caveats(ls) & HD_CAVEAT_COMPACTED));
	hd_leak_session_free(ls);
	/* the same count: no compaction between them */
	org[1].compactions = org[0].compactions;
	T_RC(hd_leak_session_new(&ls, u, 2, &o, NULL), 0);
	T_RC(hd_leak_session_run(ls, NULL), 0);
	T_ASSERT(!(hd_leak_session_caveats(ls) & HD_CAVEAT_COMPACTED));
	hd_leak_session_free(ls);
	close_all(u, 2);
	close_all(t, 2);
}

/* Untraced dumps: an object at the same address, of the same type and
 * class, is old on an uncertain match, and the caveat says it. */
static void test_session__uncertain(void)
{
	static const char b[] =
		"{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":[\"0x1000\"]}\n"
		"{\"address\":\"0x100\", \"type\":\"CLASS\", \"name\":\"Foo\"}\n"
		"{\"address\":\"0x1000\", \"type\":\"OBJECT\", \"class\":\"0x100\"}\n";
	static const char a[] =
		"{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":[\"0x1000\"]}\n"
		"{\"address\":\"0x100\", \"type\":\"CLASS\", \"name\":\"Foo\"}\n"
		"{\"address\":\"0x1000\", \"type\":\"OBJECT\", \"class\":\"0x100\", "
		"\"references\":[\"0x2000\"]}\n"
		"{\"address\":\"0x2000\", \"type\":\"OBJECT\", \"class\":\"0x100\"}\n";
	hd_store *s[2] = { load(b), load(a) };
	hd_leak_session *ls = NULL;
	char buf[512];

	T_ASSERT(s[0] && s[1]);
	T_RC(hd_leak_session_new(&ls, s, 2, NULL, NULL), 0);
	T_RC(hd_leak_session_run(ls, NULL), 0);
	T_ASSERT(hd_leak_session_diff(ls)->uncertain > 0);
	T_ASSERT(hd_leak_session_caveats(ls) & HD_CAVEAT_UNCERTAIN);
	T_ASSERT(hd_leak_session_caveat_text(buf, sizeof(buf), ls,
					     HD_CAVEAT_UNCERTAIN) > 0);
	T_ASSERT(strstr(buf, "allocation tracing in the dumps makes it "
			     "certain") != NULL);
	/* a short buffer: truncated, NUL-terminated, the full length */
	T_ASSERT(hd_leak_session_caveat_text(buf, 8, ls,
					     HD_CAVEAT_UNCERTAIN) > 8);
	T_EQ(strlen(buf), 7);
	hd_leak_session_free(ls);
	close_all(s, 2);
}

static void test_session__names(void)
{
	unsigned int bit;
	int n = 0;

	for (bit = 1; bit; bit <<= 1)
		if (hd_caveat_name(bit)) {
			n++;
			T_ASSERT(strlen(hd_caveat_name(bit)) > 0);
		}
	T_EQ(n, HD_CAVEAT__COUNT);
	T_STREQ(hd_caveat_name(HD_CAVEAT_TWO_DUMPS), "two-dumps");
	T_STREQ(hd_caveat_name(HD_CAVEAT_OBJECT_ID_SKIPPED),
		"object-id-skipped");
	T_ASSERT(hd_caveat_name(0) == NULL);
	T_ASSERT(hd_caveat_name(HD_CAVEAT_ORDER | HD_CAVEAT_FOLDED) == NULL);
	T_EQ(hd_caveat_is_warning(HD_CAVEAT_FOLDED), 0);
}

static void test_session__bad_arguments(void)
{
	hd_store *s[2] = { load(before), load(after) };
	hd_store *many[17];
	hd_leak_session_options o = HD_LEAK_SESSION_OPTIONS_INIT;
	hd_leak_session *ls = (hd_leak_session *)1;
	hd_error err = { 0 };
	int k;

	T_ASSERT(s[0] && s[1]);
	T_RC(hd_leak_session_new(&ls, s, 1, NULL, &err), HD_EINVAL);
	T_ASSERT(ls == NULL);
	for (k = 0; k < 17; k++)
		many[k] = s[k % 2];
	T_RC(hd_leak_session_new(&ls, many, 17, NULL, &err), HD_EINVAL);
	o.min_share = 1.5;
	T_RC(hd_leak_session_new(&ls, s, 2, &o, &err), HD_EINVAL);
	o.min_share = 0.01;
	o.top = 0;
	T_RC(hd_leak_session_new(&ls, s, 2, &o, &err), HD_EINVAL);
	o.top = 5;
	o.version = 99;
	T_RC(hd_leak_session_new(&ls, s, 2, &o, &err), HD_EINVAL);
	T_RC(hd_leak_session_run(NULL, &err), HD_EINVAL);
	hd_leak_session_free(NULL);
	T_EQ(hd_leak_session_caveats(NULL), 0);
	close_all(s, 2);
}

static const struct t_case cases[] = {
	T_CASE(session__two_dumps),
	T_CASE(session__three_and_four_dumps),
	T_CASE(session__slot_growth),
	T_CASE(session__core_set_growth),
	T_CASE(session__vm_grows),
	T_CASE(session__inplace_shape),
	T_CASE(session__weak_values_hold_keys),
	T_CASE(session__nothing_new),
	T_CASE(session__other_process),
	T_CASE(session__compacted),
	T_CASE(session__uncertain),
	T_CASE(session__names),
	T_CASE(session__bad_arguments),
};

T_MAIN(cases)
