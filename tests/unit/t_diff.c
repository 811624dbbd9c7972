/*
 * t_diff.c - hd_diff on hand-built dumps with known answers: slot reuse,
 * compaction, the traced and untraced rules, object ids, three dumps,
 * since: dumps, objects of generation G, the dumper's own objects.
 */
#include "t.h"
#include "t_dump.h"
#include "heapdump.h"

#include <unistd.h>

/* Classes Foo (0x100), Bar (0x110), String (0x120), and a ROOT line. */
#define HEAD                                                              \
	"{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":[\"0x100\"]}\n" \
	"{\"address\":\"0x100\", \"type\":\"CLASS\", \"name\":\"Foo\"}\n"    \
	"{\"address\":\"0x110\", \"type\":\"CLASS\", \"name\":\"Bar\"}\n"    \
	"{\"address\":\"0x120\", \"type\":\"CLASS\", \"name\":\"String\"}\n"

/* An object of class Foo (or Bar) at addr; g: ", \"generation\":N". */
#define FOO(addr, g) \
	"{\"address\":\"" addr "\", \"type\":\"OBJECT\", \"class\":\"0x100\"" \
	g ", \"file\":\"app.rb\", \"line\":1}\n"
#define BAR(addr, g) \
	"{\"address\":\"" addr "\", \"type\":\"OBJECT\", \"class\":\"0x110\"" \
	g ", \"file\":\"app.rb\", \"line\":2}\n"
#define STR(addr, g, extra)                                               \
	"{\"address\":\"" addr "\", \"type\":\"STRING\", \"class\":\"0x120\"" \
	g extra "}\n"
#define G(n) ", \"generation\":" #n
#define NOG ""

static int verdict(const hd_diff_result *d, const hd_store *s, uint64_t a)
{
	hd_node_id id = hd_store_find(s, a);

	return id == HD_NODE_NONE ? -1 : d->match[id];
}

static int in_set(const hd_nodes *set, const hd_store *s, uint64_t a)
{
	hd_node_id id = hd_store_find(s, a);
	size_t i;

	for (i = 0; i < set->n; i++)
		if (set->ids[i] == id)
			return 1;
	return 0;
}

/* G = 3 in BEFORE. */
static const char traced_before[] =
	HEAD
	FOO("0x1000", G(3))
	FOO("0x1010", G(2))
	FOO("0x1020", G(3))
	FOO("0x1030", G(2))
	FOO("0x2000", G(1));

static const char traced_after[] =
	HEAD
	FOO("0x1000", G(5))  /* slot reuse: newer generation */
	FOO("0x1010", G(2))  /* the same object */
	FOO("0x1020", G(3))  /* generation G, same address: old */
	FOO("0x1030", G(3))  /* generation G, BEFORE had gen 2 there: new */
	FOO("0x3000", G(3))  /* generation G, absent from BEFORE: new */
	FOO("0x4000", G(1)); /* 0x2000 moved by compaction: old */

static hd_store *load(const char *text)
{
	return t_store_of(text, strlen(text));
}

static void test_diff__traced_rule(void)
{
	hd_store *b = load(traced_before), *a = load(traced_after);
	hd_diff_result *d = NULL;

	T_ASSERT(b && a);
	T_RC(hd_diff(&d, b, a, NULL, NULL, NULL), 0);
	T_ASSERT(d->traced);
	T_EQ(d->generation, 3);
	T_EQ(verdict(d, a, 0x1000), HD_MATCH_NEW_GENERATION);
	T_EQ(verdict(d, a, 0x1010), HD_MATCH_OLD_GENERATION);
	T_EQ(verdict(d, a, 0x1020), HD_MATCH_OLD_ADDRESS);
	T_EQ(verdict(d, a, 0x1030), HD_MATCH_NEW_REUSED);
	T_EQ(verdict(d, a, 0x3000), HD_MATCH_NEW_ABSENT);
	T_EQ(verdict(d, a, 0x4000), HD_MATCH_OLD_GENERATION);
	/* the untraced classes fall back to the address rule */
	T_EQ(verdict(d, a, 0x100), HD_MATCH_OLD_UNCERTAIN);
	T_EQ(d->added.n, 3);
	T_ASSERT(in_set(&d->added, a, 0x1000));
	T_ASSERT(in_set(&d->added, a, 0x1030));
	T_ASSERT(in_set(&d->added, a, 0x3000));
	T_EQ(d->uncertain, 3);
	T_EQ(d->rules, HD_DIFF_RULE_GENERATION | HD_DIFF_RULE_ADDRESS);
	T_EQ(d->objects[0], 8);
	T_EQ(d->objects[1], 9);
	hd_diff_result_free(d);
	hd_store_close(a);
	hd_store_close(b);
}

/* The same pair with generations ignored: reuse goes unseen, the
 * compacted object looks new. */
static void test_diff__traced_pair_without_generation(void)
{
	hd_store *b = load(traced_before), *a = load(traced_after);
	hd_diff_options o = HD_DIFF_OPTIONS_INIT;
	hd_diff_result *d = NULL;

	T_ASSERT(b && a);
	o.flags = HD_DIFF_NO_GENERATION;
	T_RC(hd_diff(&d, b, a, NULL, &o, NULL), 0);
	T_ASSERT(!d->traced);
	/* a generation differing at one address still tells reuse */
	T_EQ(verdict(d, a, 0x1000), HD_MATCH_NEW_REUSED);
	T_EQ(verdict(d, a, 0x1010), HD_MATCH_OLD_UNCERTAIN);
	T_EQ(verdict(d, a, 0x4000), HD_MATCH_NEW_ABSENT);
	T_EQ(d->rules, HD_DIFF_RULE_ADDRESS);
	hd_diff_result_free(d);
	hd_store_close(a);
	hd_store_close(b);
}

static void test_diff__untraced_rule(void)
{
	static const char before[] =
		HEAD
		FOO("0x1000", NOG)
		FOO("0x1010", NOG)
		FOO("0x1020", NOG)
		STR("0x1030", NOG, ", \"frozen\":true, \"bytesize\":5")
		STR("0x1040", NOG, ", \"frozen\":true, \"bytesize\":5")
		STR("0x1050", NOG, ", \"frozen\":true, \"bytesize\":5")
		STR("0x1060", NOG, ", \"bytesize\":5")
		FOO("0x2000", NOG);
	static const char after[] =
		HEAD
		FOO("0x1000", NOG) /* same address, type, class */
		BAR("0x1010", NOG) /* another class: reuse */
		STR("0x1020", NOG, "") /* another type: reuse */
		STR("0x1030", NOG, ", \"frozen\":true, \"bytesize\":5")
		STR("0x1040", NOG, ", \"frozen\":true, \"bytesize\":6")
		STR("0x1050", NOG, ", \"bytesize\":5") /* unfrozen: reuse */
		STR("0x1060", NOG, ", \"bytesize\":9") /* grew: same */
		FOO("0x5000", NOG); /* 0x2000 moved: looks new */
	hd_store *b = load(before), *a = load(after);
	hd_diff_result *d = NULL;

	T_ASSERT(b && a);
	T_RC(hd_diff(&d, b, a, NULL, NULL, NULL), 0);
	T_ASSERT(!d->traced);
	T_EQ(verdict(d, a, 0x1000), HD_MATCH_OLD_UNCERTAIN);
	T_EQ(verdict(d, a, 0x1010), HD_MATCH_NEW_REUSED);
	T_EQ(verdict(d, a, 0x1020), HD_MATCH_NEW_REUSED);
	T_EQ(verdict(d, a, 0x1030), HD_MATCH_OLD_FROZEN);
	T_EQ(verdict(d, a, 0x1040), HD_MATCH_NEW_REUSED);
	T_EQ(verdict(d, a, 0x1050), HD_MATCH_NEW_REUSED);
	T_EQ(verdict(d, a, 0x1060), HD_MATCH_OLD_UNCERTAIN);
	T_EQ(verdict(d, a, 0x5000), HD_MATCH_NEW_ABSENT);
	T_EQ(d->added.n, 5);
	/* 3 classes, 0x1000, 0x1060 */
	T_EQ(d->uncertain, 5);
	T_EQ(d->by_match[HD_MATCH_OLD_FROZEN], 1);
	T_EQ(d->rules, HD_DIFF_RULE_ADDRESS);
	hd_diff_result_free(d);
	hd_store_close(a);
	hd_store_close(b);
}

/* 4.0: flags.object_id is an exact identity, tried first. */
static void test_diff__object_id(void)
{
#define OID(n) ", \"flags\":{\"age\":1, \"object_id\":" #n "}"
	static const char before[] =
		HEAD
		FOO("0x1000", OID(8))
		FOO("0x1010", OID(7))
		FOO("0x1020", OID(6))
		FOO("0x1030", NOG);
	static const char after[] =
		HEAD
		FOO("0x1010", OID(9))  /* another object in 0x1010 */
		FOO("0x1020", NOG)     /* 0x1020 had an id, this has none */
		FOO("0x1030", OID(10)) /* id given since: address rule */
		FOO("0x5000", OID(8)); /* 0x1000 moved */
	hd_store *b = load(before), *a = load(after);
	hd_diff_result *d = NULL;
	hd_diff_options o = HD_DIFF_OPTIONS_INIT;

	T_ASSERT(b && a);
	T_RC(hd_diff(&d, b, a, NULL, NULL, NULL), 0);
	T_ASSERT(!d->object_id_skipped);
	T_EQ(verdict(d, a, 0x5000), HD_MATCH_OLD_OBJECT_ID);
	T_EQ(verdict(d, a, 0x1010), HD_MATCH_NEW_OBJECT_ID);
	T_EQ(verdict(d, a, 0x1020), HD_MATCH_NEW_OBJECT_ID);
	T_EQ(verdict(d, a, 0x1030), HD_MATCH_OLD_UNCERTAIN);
	T_EQ(d->object_ids, 3);
	T_ASSERT(d->rules & HD_DIFF_RULE_OBJECT_ID);
	T_EQ(d->added.n, 2);
	hd_diff_result_free(d);
	/* without object ids, the moved one looks new */
	o.flags = HD_DIFF_NO_OBJECT_ID;
	T_RC(hd_diff(&d, b, a, NULL, &o, NULL), 0);
	T_EQ(verdict(d, a, 0x5000), HD_MATCH_NEW_ABSENT);
	T_EQ(verdict(d, a, 0x1010), HD_MATCH_OLD_UNCERTAIN);
	T_ASSERT(!(d->rules & HD_DIFF_RULE_OBJECT_ID));
	hd_diff_result_free(d);
	hd_store_close(a);
	hd_store_close(b);
#undef OID
}

/* BEFORE (G = 3), AFTER (G = 6), LATER: which new objects stay. */
static void test_diff__three_dumps(void)
{
	static const char before[] =
		HEAD
		FOO("0x1000", G(3));
	static const char after[] =
		HEAD
		FOO("0x1000", G(3))
		FOO("0x2000", G(5))  /* new, still there in LATER */
		FOO("0x2010", G(5))  /* new, freed; slot reused in LATER */
		BAR("0x2020", G(6))  /* new, moved by compaction in LATER */
		FOO("0x2030", G(6))  /* new, freed */
		FOO("0x2040", G(4)); /* new, still there */
	static const char later[] =
		HEAD
		FOO("0x1000", G(3))
		FOO("0x2000", G(5))
		FOO("0x2010", G(8))
		FOO("0x2040", G(4))
		BAR("0x7000", G(6));
	hd_store *b = load(before), *a = load(after), *l = load(later);
	hd_diff_result *d = NULL;

	T_ASSERT(b && a && l);
	T_RC(hd_diff(&d, b, a, l, NULL, NULL), 0);
	T_ASSERT(d->has_later);
	T_EQ(d->added.n, 5);
	T_EQ(d->retained.n, 3);
	T_ASSERT(in_set(&d->retained, a, 0x2000));
	T_ASSERT(in_set(&d->retained, a, 0x2020));
	T_ASSERT(in_set(&d->retained, a, 0x2040));
	T_EQ(d->retained_moved, 1);
	T_EQ(d->objects[2], 8);
	hd_diff_result_free(d);
	hd_store_close(l);
	hd_store_close(a);
	hd_store_close(b);
}

/* Untraced three dumps: the address rule both ways. */
static void test_diff__three_dumps_untraced(void)
{
	static const char before[] = HEAD FOO("0x1000", NOG);
	static const char after[] =
		HEAD FOO("0x1000", NOG) FOO("0x2000", NOG) FOO("0x2010", NOG)
		FOO("0x2020", NOG);
	static const char later[] =
		HEAD FOO("0x1000", NOG) FOO("0x2000", NOG) BAR("0x2010", NOG);
	hd_store *b = load(before), *a = load(after), *l = load(later);
	hd_diff_result *d = NULL;

	T_ASSERT(b && a && l);
	T_RC(hd_diff(&d, b, a, l, NULL, NULL), 0);
	T_EQ(d->added.n, 3);
	T_EQ(d->retained.n, 1);
	T_ASSERT(in_set(&d->retained, a, 0x2000));
	T_EQ(d->retained_uncertain, 1);
	hd_diff_result_free(d);
	hd_store_close(l);
	hd_store_close(a);
	hd_store_close(b);
}

/* BEFORE is a since: dump: traced objects of generation >= 2 only. */
static void test_diff__partial_before(void)
{
	static const char before[] =
		FOO("0x1000", G(2))
		FOO("0x1010", G(3));
	static const char after[] =
		HEAD
		FOO("0x0900", G(1))  /* older than the since: bound */
		FOO("0x1000", G(2))
		FOO("0x1010", G(3))
		FOO("0x1020", G(3))  /* generation G, absent: new */
		FOO("0x1030", G(4)); /* new */
	hd_store *b = load(before), *a = load(after);
	hd_diff_result *d = NULL;

	T_ASSERT(b && a);
	T_RC(hd_diff(&d, b, a, NULL, NULL, NULL), 0);
	T_ASSERT(d->traced);
	T_EQ(verdict(d, a, 0x0900), HD_MATCH_OLD_GENERATION);
	T_EQ(verdict(d, a, 0x1000), HD_MATCH_OLD_GENERATION);
	T_EQ(verdict(d, a, 0x1010), HD_MATCH_OLD_ADDRESS);
	T_EQ(verdict(d, a, 0x1020), HD_MATCH_NEW_ABSENT);
	T_EQ(verdict(d, a, 0x1030), HD_MATCH_NEW_GENERATION);
	/* the untraced classes are not in a since: dump, yet old */
	T_EQ(verdict(d, a, 0x100), HD_MATCH_OLD_PARTIAL);
	T_EQ(d->added.n, 2);
	hd_diff_result_free(d);
	hd_store_close(a);
	hd_store_close(b);
}

/* Traced dumps between which compaction moved objects: an object
 * without a generation (allocated before tracing began) at a new address
 * is old, unless objects without a generation appeared (the tracer lost
 * some: then it may be new); without a moved traced object, the address
 * rule stands. */
static void test_diff__compacted_untraced(void)
{
	static const char before[] =
		HEAD
		FOO("0x1000", G(2))
		FOO("0x1010", G(3))
		BAR("0x2000", NOG)
		STR("0x2010", NOG, "");
	static const char after[] =
		HEAD
		FOO("0x0f00", G(2))  /* moved by compaction */
		FOO("0x1010", G(3))
		BAR("0x1f00", NOG)   /* moved, allocated before tracing */
		STR("0x2010", NOG, "")
		FOO("0x3000", G(5)); /* new */
	static const char unmoved[] =
		HEAD
		FOO("0x1000", G(2))
		FOO("0x1010", G(3))
		BAR("0x1f00", NOG)   /* no traced object moved: rule 3 */
		STR("0x2010", NOG, "");
	char lost[4096];
	size_t n = strlen(after);
	hd_store *b = load(before), *a = load(after), *u = load(unmoved), *l;
	hd_diff_result *d = NULL;
	int k;

	T_ASSERT(b && a && u);
	T_RC(hd_diff(&d, b, a, NULL, NULL, NULL), 0);
	T_EQ(d->moved[0], 1);
	T_EQ(d->untraced_grew[0], 0);
	T_EQ(verdict(d, a, 0x1f00), HD_MATCH_OLD_UNTRACED);
	T_EQ(verdict(d, a, 0x2010), HD_MATCH_OLD_UNCERTAIN);
	T_EQ(verdict(d, a, 0x0f00), HD_MATCH_OLD_GENERATION);
	T_EQ(d->added.n, 1);
	T_EQ(d->by_match[HD_MATCH_OLD_UNTRACED], 1);
	T_STREQ(hd_match_name(HD_MATCH_OLD_UNTRACED),
		"old: untraced, allocated before tracing began (compaction "
		"moved traced objects)");
	hd_diff_result_free(d);

	T_RC(hd_diff(&d, b, u, NULL, NULL, NULL), 0);
	T_EQ(d->moved[0], 0);
	T_EQ(verdict(d, u, 0x1f00), HD_MATCH_NEW_ABSENT);
	hd_diff_result_free(d);

	/* 20 more objects without a generation: the tracer lost them */
	memcpy(lost, after, n);
	for (k = 0; k < 20; k++)
		n += (size_t)snprintf(lost + n, sizeof(lost) - n,
				      "{\"address\":\"0x%x\", \"type\":\"STRING\", "
				      "\"class\":\"0x120\"}\n", 0x4000 + 16 * k);
	T_ASSERT((l = t_store_of(lost, n)) != NULL);
	T_RC(hd_diff(&d, b, l, NULL, NULL, NULL), 0);
	T_EQ(d->moved[0], 1);
	T_EQ(d->untraced_grew[0], 20);
	T_EQ(verdict(d, l, 0x1f00), HD_MATCH_NEW_ABSENT);
	hd_diff_result_free(d);
	hd_store_close(l);
	hd_store_close(u);
	hd_store_close(a);
	hd_store_close(b);
}

/* Objects of dump_all and of the tracer are left out unless asked. */
static void test_diff__dumper_objects(void)
{
	static const char before[] = HEAD FOO("0x1000", G(3));
	static const char after[] =
		HEAD FOO("0x1000", G(3))
		"{\"address\":\"0x2000\", \"type\":\"STRING\", "
		"\"class\":\"0x120\", \"file\":\"<internal:objspace>\", "
		"\"line\":1, \"method\":\"dump_all\", \"generation\":4}\n"
		FOO("0x2010", G(4));
	hd_store *b = load(before), *a = load(after);
	hd_diff_result *d = NULL;
	hd_diff_options o = HD_DIFF_OPTIONS_INIT;

	T_ASSERT(b && a);
	T_RC(hd_diff(&d, b, a, NULL, NULL, NULL), 0);
	T_EQ(verdict(d, a, 0x2000), HD_MATCH_EXCLUDED);
	T_EQ(d->added.n, 1);
	T_EQ(d->by_match[HD_MATCH_EXCLUDED], 1);
	hd_diff_result_free(d);
	o.flags = HD_DIFF_ALL;
	T_RC(hd_diff(&d, b, a, NULL, &o, NULL), 0);
	T_EQ(d->added.n, 2);
	hd_diff_result_free(d);
	hd_store_close(a);
	hd_store_close(b);
}

static void test_diff__edges(void)
{
	hd_store *b = load(HEAD), *a = load(HEAD FOO("0x1000", G(0)));
	hd_diff_result *d = NULL;
	hd_diff_options o = HD_DIFF_OPTIONS_INIT;

	T_ASSERT(b && a);
	T_RC(hd_diff(&d, NULL, a, NULL, NULL, NULL), HD_EINVAL);
	T_RC(hd_diff(NULL, b, a, NULL, NULL, NULL), HD_EINVAL);
	o.version = 99;
	T_RC(hd_diff(&d, b, a, NULL, &o, NULL), HD_EINVAL);
	/* an untraced BEFORE: the address rule, even for traced objects */
	T_RC(hd_diff(&d, b, a, NULL, NULL, NULL), 0);
	T_ASSERT(!d->traced);
	T_EQ(verdict(d, a, 0x1000), HD_MATCH_NEW_ABSENT);
	T_EQ(d->added_memsize, 0);
	hd_diff_result_free(d);
	/* a dump against itself: nothing new */
	T_RC(hd_diff(&d, a, a, a, NULL, NULL), 0);
	T_EQ(d->added.n, 0);
	T_EQ(d->retained.n, 0);
	hd_diff_result_free(d);
	hd_diff_result_free(NULL);
	T_STREQ(hd_match_name(HD_MATCH_NEW_GENERATION),
		"new: generation above G");
	T_STREQ(hd_match_name(99), "unknown");
	hd_store_close(a);
	hd_store_close(b);
}

/* The retained objects as LATER has them: LATER's node ids and memsize,
 * a moved one at its new address; hd_diff_follow says the same. */
static void test_diff__retained_later(void)
{
	static const char before[] = HEAD FOO("0x1000", G(3));
	static const char after[] =
		HEAD
		FOO("0x1000", G(3))
		STR("0x2000", G(5), ", \"memsize\":40")  /* stays */
		FOO("0x2010", G(5))                      /* freed */
		BAR("0x2020", G(6))                      /* moved to 0x7000 */
		STR("0x2040", G(4), ", \"memsize\":40"); /* grows in LATER */
	static const char later[] =
		HEAD
		FOO("0x0fff", G(2))
		FOO("0x1000", G(3))
		STR("0x2000", G(5), ", \"memsize\":40")
		STR("0x2040", G(4), ", \"memsize\":400")
		BAR("0x7000", G(6));
	hd_store *b = load(before), *a = load(after), *l = load(later);
	hd_diff_result *d = NULL;
	hd_nodes f = { NULL, 0, 0 };
	size_t i;

	T_ASSERT(b && a && l);
	T_RC(hd_diff(&d, b, a, l, NULL, NULL), 0);
	T_EQ(d->retained.n, 3);
	T_EQ(d->retained_later.n, 3);
	T_ASSERT(in_set(&d->retained_later, l, 0x2000));
	T_ASSERT(in_set(&d->retained_later, l, 0x2040));
	T_ASSERT(in_set(&d->retained_later, l, 0x7000));
	for (i = 1; i < d->retained_later.n; i++)
		T_ASSERT(d->retained_later.ids[i - 1] <
			 d->retained_later.ids[i]);
	T_EQ(d->retained_memsize, 80);
	T_EQ(d->retained_later_memsize, 440);
	/* the same set followed from AFTER alone */
	T_RC(hd_diff_follow(&f, a, l, &d->added, NULL, NULL), 0);
	T_EQ(f.n, 3);
	for (i = 0; i < f.n && i < 3; i++)
		T_EQ(f.ids[i], d->retained_later.ids[i]);
	hd_nodes_free(&f);
	T_RC(hd_diff_follow(&f, a, l, &d->retained, NULL, NULL), 0);
	T_EQ(f.n, 3);
	hd_nodes_free(&f);
	/* a set that is not ascending */
	if (d->added.n >= 2) {
		hd_node_id t = d->added.ids[0];

		d->added.ids[0] = d->added.ids[1];
		d->added.ids[1] = t;
		T_RC(hd_diff_follow(&f, a, l, &d->added, NULL, NULL),
		     HD_EINVAL);
	}
	/* without LATER: empty */
	hd_diff_result_free(d);
	T_RC(hd_diff(&d, b, a, NULL, NULL, NULL), 0);
	T_EQ(d->retained_later.n, 0);
	T_EQ(d->retained_later_memsize, 0);
	hd_diff_result_free(d);
	hd_store_close(l);
	hd_store_close(a);
	hd_store_close(b);
}

/* n objects of class Foo from address base, generations up to g. */
static hd_store *many(uint64_t base, int n, int g)
{
	size_t cap = (size_t)n * 120 + 512, len;
	char *text = malloc(cap);
	hd_store *s;
	int i;

	if (!text)
		return NULL;
	len = (size_t)snprintf(text, cap, "%s", HEAD);
	for (i = 0; i < n; i++)
		len += (size_t)snprintf(text + len, cap - len,
					"{\"address\":\"0x%llx\", \"type\":"
					"\"OBJECT\", \"class\":\"0x100\", "
					"\"generation\":%d}\n",
					(unsigned long long)(base + 40u * (unsigned)i),
					i * g / (n > 1 ? n - 1 : 1));
	s = load(text);
	free(text);
	return s;
}

static void test_diff__order_check(void)
{
	hd_store *p = many(0x10000, 1200, 5), *q = many(0x10000, 1300, 9);
	hd_store *other = many(0x900000, 1300, 9);
	hd_store *untraced = load(HEAD FOO("0x1000", NOG));
	const hd_store *v[3];
	hd_dump_origin o[3];
	hd_order_pair pr[2];

	T_ASSERT(p && q && other && untraced);
	/* in order */
	v[0] = p, v[1] = q;
	T_RC(hd_order_check(pr, v, NULL, 2, NULL), 0);
	T_EQ(pr[0].flags, 0);
	T_EQ(pr[0].generation[0], 5);
	T_EQ(pr[0].generation[1], 9);
	T_EQ(pr[0].shared, 1203);
	T_EQ(pr[0].objects[1], 1303);
	/* reversed: the generation goes back */
	v[0] = q, v[1] = p;
	T_RC(hd_order_check(pr, v, NULL, 2, NULL), 0);
	T_EQ(pr[0].flags, HD_ORDER_GENERATION_BACKWARDS | HD_ORDER_REVERSED);
	/* the middle one out of place: the second pair */
	v[0] = p, v[1] = q, v[2] = p;
	T_RC(hd_order_check(pr, v, NULL, 3, NULL), 0);
	T_EQ(pr[0].flags, 0);
	T_ASSERT(pr[1].flags & HD_ORDER_REVERSED);
	/* a dump against itself */
	v[0] = p, v[1] = p;
	T_RC(hd_order_check(pr, v, NULL, 2, NULL), 0);
	T_EQ(pr[0].flags, 0);
	/* no address in common: two processes, not "reversed" */
	v[0] = other, v[1] = p;
	T_RC(hd_order_check(pr, v, NULL, 2, NULL), 0);
	T_EQ(pr[0].flags,
	     HD_ORDER_FEW_SHARED | HD_ORDER_GENERATION_BACKWARDS);
	T_EQ(pr[0].shared, 3); /* the classes */
	/* small dumps say nothing of their addresses */
	v[0] = untraced, v[1] = p;
	T_RC(hd_order_check(pr, v, NULL, 2, NULL), 0);
	T_EQ(pr[0].flags, 0);
	T_ASSERT(!pr[0].traced[0] && pr[0].traced[1]);
	/* sidecars: time backwards in one process; two pids */
	memset(o, 0, sizeof(o));
	o[0].pid = o[1].pid = 42;
	o[0].time_us = 2000;
	o[1].time_us = 1000;
	v[0] = p, v[1] = q;
	T_RC(hd_order_check(pr, v, o, 2, NULL), 0);
	T_EQ(pr[0].flags, HD_ORDER_TIME_BACKWARDS | HD_ORDER_REVERSED);
	T_EQ(pr[0].origin[1].time_us, 1000);
	o[1].pid = 43;
	T_RC(hd_order_check(pr, v, o, 2, NULL), 0);
	T_EQ(pr[0].flags, HD_ORDER_OTHER_PROCESS);
	o[1].pid = 0; /* unknown pid: the times still count */
	T_RC(hd_order_check(pr, v, o, 2, NULL), 0);
	T_EQ(pr[0].flags, HD_ORDER_TIME_BACKWARDS | HD_ORDER_REVERSED);
	o[1].time_us = 3000;
	T_RC(hd_order_check(pr, v, o, 2, NULL), 0);
	T_EQ(pr[0].flags, 0);
	/* bad arguments */
	T_RC(hd_order_check(pr, v, NULL, 1, NULL), HD_EINVAL);
	T_RC(hd_order_check(pr, NULL, NULL, 2, NULL), HD_EINVAL);
	v[1] = NULL;
	T_RC(hd_order_check(pr, v, NULL, 2, NULL), HD_EINVAL);
	hd_store_close(untraced);
	hd_store_close(other);
	hd_store_close(q);
	hd_store_close(p);
}

static const struct t_case cases[] = {
	T_CASE(diff__traced_rule),
	T_CASE(diff__traced_pair_without_generation),
	T_CASE(diff__untraced_rule),
	T_CASE(diff__object_id),
	T_CASE(diff__three_dumps),
	T_CASE(diff__three_dumps_untraced),
	T_CASE(diff__partial_before),
	T_CASE(diff__compacted_untraced),
	T_CASE(diff__dumper_objects),
	T_CASE(diff__edges),
	T_CASE(diff__retained_later),
	T_CASE(diff__order_check),
};

T_MAIN(cases)
