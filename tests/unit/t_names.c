/*
 * t_names.c - class display names (every naming rule, Ruby 2.x to 3.1+
 * shapes of singleton classes, hostile cycles), object class names,
 * dumper objects and the features that date a dump.
 */
#include "t.h"
#include "hd_int.h"
#include "store_format.h"

struct names {
	struct hd__intern strs;
	struct hd__classtab ct;
	uint32_t features;
};

/* Reads NDJSON text into a class table and resolves it. */
static int load(struct names *n, const char *text)
{
	hd_reader *r;
	const hd_record *rec;
	int rc;

	memset(n, 0, sizeof(*n));
	if (hd__intern_init(&n->strs) || hd__classtab_init(&n->ct, &n->strs))
		return -1;
	if (hd_reader_open_mem(&r, text, strlen(text), NULL, NULL))
		return -1;
	while ((rc = hd_reader_next(r, &rec, NULL)) == 0) {
		n->features |= hd__record_features(rec);
		if (hd__classtab_add(&n->ct, rec))
			rc = -1;
	}
	hd_reader_free(r);
	if (rc != HD_ITEROVER)
		return -1;
	return hd__classtab_resolve(&n->ct);
}

static void unload(struct names *n)
{
	hd__classtab_free(&n->ct);
	hd__intern_free(&n->strs);
}

/* The display name of the class at addr ("(none)" if absent). */
static const char *disp(struct names *n, uint64_t addr)
{
	const struct hd__class *c = hd__classtab_find(&n->ct, addr);

	if (!c || c->display == HD_STR_NONE)
		return "(none)";
	return hd__intern_str(&n->strs, c->display, NULL);
}

/* The stats class name of an object of type with class pointer klass. */
static const char *cname(struct names *n, int type, uint64_t klass,
			 const char *aux)
{
	hd_str a = { aux, aux ? strlen(aux) : 0 };
	uint32_t id;

	if (hd__object_class_name(&n->ct, &n->strs, type, klass, a, &id))
		return "(enomem)";
	return hd__intern_str(&n->strs, id, NULL);
}

#define CLS(addr, klass, extra)                                         \
	"{\"address\":\"" addr "\", \"type\":\"CLASS\", \"class\":\"" klass \
	"\"" extra "}\n"
#define OBJ(addr, type, klass, extra)                                     \
	"{\"address\":\"" addr "\", \"type\":\"" type "\", \"class\":\"" klass \
	"\"" extra "}\n"

/* Ruby 3.1+: singleton flags, superclass, real_class_name. */
static const char *const dump31 =
	CLS("0x100", "0x200", ", \"superclass\":\"0x110\", \"name\":\"Object\"")
	CLS("0x110", "0x210", ", \"name\":\"BasicObject\"")
	CLS("0x120", "0x220", ", \"superclass\":\"0x130\", \"name\":\"Class\"")
	CLS("0x130", "0x230", ", \"superclass\":\"0x100\", \"name\":\"Module\"")
	CLS("0x200", "0x220", ", \"superclass\":\"0x210\", "
	    "\"real_class_name\":\"Class\", \"singleton\":true")
	CLS("0x210", "0x220", ", \"superclass\":\"0x120\", "
	    "\"real_class_name\":\"Class\", \"singleton\":true")
	CLS("0x220", "0x228", ", \"superclass\":\"0x230\", "
	    "\"real_class_name\":\"Class\", \"singleton\":true")
	CLS("0x228", "0x228", ", \"superclass\":\"0x220\", "
	    "\"real_class_name\":\"Class\", \"singleton\":true")
	CLS("0x230", "0x220", ", \"superclass\":\"0x200\", "
	    "\"real_class_name\":\"Class\", \"singleton\":true")
	CLS("0x300", "0x310", ", \"superclass\":\"0x100\", \"name\":\"Foo\"")
	CLS("0x310", "0x220", ", \"superclass\":\"0x200\", "
	    "\"real_class_name\":\"Class\", \"singleton\":true")
	CLS("0x318", "0x228", ", \"superclass\":\"0x220\", "
	    "\"real_class_name\":\"Class\", \"singleton\":true")
	"{\"address\":\"0x400\", \"type\":\"MODULE\", \"class\":\"0x130\", "
	"\"name\":\"Comparable\"}\n"
	"{\"address\":\"0x410\", \"type\":\"ICLASS\", \"class\":\"0x400\", "
	"\"superclass\":\"0x100\"}\n"
	CLS("0x500", "0x510", ", \"superclass\":\"0x300\"")
	CLS("0x510", "0x220", ", \"superclass\":\"0x310\", "
	    "\"real_class_name\":\"Class\", \"singleton\":true")
	"{\"address\":\"0x420\", \"type\":\"ICLASS\", \"class\":\"0x400\", "
	"\"superclass\":\"0x300\"}\n"
	CLS("0x520", "0x310", ", \"superclass\":\"0x420\", "
	    "\"real_class_name\":\"Foo\", \"singleton\":true")
	"{\"address\":\"0x530\", \"type\":\"MODULE\", \"class\":\"0x130\"}\n"
	CLS("0x540", "0x220", ", \"superclass\":\"0x100\", "
	    "\"name\":\"A\\\"B\\u00e9\"")
	OBJ("0x600", "OBJECT", "0x520", "")
	OBJ("0x610", "OBJECT", "0x300", "")
	OBJ("0x620", "OBJECT", "0x500", "");

static void test_names__named_and_escaped(void)
{
	struct names n;

	T_ASSERT(load(&n, dump31) == 0);
	T_STREQ(disp(&n, 0x300), "Foo");
	T_STREQ(disp(&n, 0x400), "Comparable");
	T_STREQ(disp(&n, 0x540), "A\"B\xc3\xa9");
	T_STREQ(cname(&n, HD_T_OBJECT, 0x300, NULL), "Foo");
	T_STREQ(cname(&n, HD_T_CLASS, 0x310, NULL), "Class");
	T_STREQ(cname(&n, HD_T_MODULE, 0x130, NULL), "Module");
	unload(&n);
}

static void test_names__singletons_31(void)
{
	struct names n;

	T_ASSERT(load(&n, dump31) == 0);
	T_STREQ(disp(&n, 0x200), "#<Class:Object>");
	T_STREQ(disp(&n, 0x310), "#<Class:Foo>");
	/* the metaclass of Class, whose candidates are every metaclass */
	T_STREQ(disp(&n, 0x220), "#<Class:Class>");
	T_STREQ(disp(&n, 0x228), "#<Class:#<Class:Class>>");
	/* attached to nothing of the dump */
	T_STREQ(disp(&n, 0x318), "#<Class:0x0000000000000318>");
	/* the singleton of an object: its real class through an ICLASS */
	T_STREQ(disp(&n, 0x520), "#<Class:#<Foo:0x0000000000000600>>");
	T_STREQ(cname(&n, HD_T_OBJECT, 0x520, NULL), "Foo");
	T_STREQ(cname(&n, HD_T_CLASS, 0x200, NULL), "Class");
	unload(&n);
}

static void test_names__anonymous_and_iclass(void)
{
	struct names n;

	T_ASSERT(load(&n, dump31) == 0);
	T_STREQ(disp(&n, 0x500), "#<Class:0x0000000000000500>");
	T_STREQ(disp(&n, 0x510), "#<Class:#<Class:0x0000000000000500>>");
	T_STREQ(disp(&n, 0x530), "#<Module:0x0000000000000530>");
	T_STREQ(cname(&n, HD_T_OBJECT, 0x500, NULL),
		"#<Class:0x0000000000000500>");
	T_STREQ(disp(&n, 0x410), "#<ICLASS:Comparable>");
	unload(&n);
}

/* Ruby 3.0: no flag, no superclass, no name on singletons. */
static void test_names__metaclass_detection_30(void)
{
	struct names n;
	const char *d =
		CLS("0x100", "0x200", ", \"name\":\"Object\"")
		CLS("0x120", "0x220", ", \"name\":\"Class\"")
		CLS("0x130", "0x230", ", \"name\":\"Module\"")
		CLS("0x200", "0x220", "")
		CLS("0x220", "0x228", "")
		CLS("0x230", "0x220", "")
		CLS("0x300", "0x310", ", \"name\":\"Foo\"")
		CLS("0x310", "0x220", "")
		/* ARGF.class: a class without a metaclass */
		CLS("0x320", "0x120", ", \"name\":\"ARGF.class\"")
		/* a module with a singleton class */
		"{\"address\":\"0x400\", \"type\":\"MODULE\", "
		"\"class\":\"0x410\", \"name\":\"Util\"}\n"
		CLS("0x410", "0x230", "")
		/* an anonymous class and the singleton of a Foo */
		CLS("0x500", "0x510", "")
		CLS("0x510", "0x220", "")
		CLS("0x520", "0x310", "")
		OBJ("0x600", "OBJECT", "0x520", "")
		OBJ("0x610", "OBJECT", "0x500", "");

	T_ASSERT(load(&n, d) == 0);
	T_STREQ(disp(&n, 0x120), "Class");
	T_STREQ(disp(&n, 0x200), "#<Class:Object>");
	T_STREQ(disp(&n, 0x220), "#<Class:Class>");
	T_STREQ(disp(&n, 0x310), "#<Class:Foo>");
	T_STREQ(disp(&n, 0x410), "#<Class:Util>");
	T_STREQ(disp(&n, 0x500), "#<Class:0x0000000000000500>");
	T_STREQ(disp(&n, 0x510), "#<Class:#<Class:0x0000000000000500>>");
	T_STREQ(disp(&n, 0x520), "#<Class:#<Foo:0x0000000000000600>>");
	T_STREQ(cname(&n, HD_T_CLASS, 0x310, NULL), "Class");
	T_STREQ(cname(&n, HD_T_MODULE, 0x410, NULL), "Module");
	T_STREQ(cname(&n, HD_T_CLASS, 0x120, NULL), "Class");
	T_STREQ(cname(&n, HD_T_OBJECT, 0x520, NULL), "Foo");
	T_STREQ(cname(&n, HD_T_OBJECT, 0x500, NULL),
		"#<Class:0x0000000000000500>");
	unload(&n);
}

/* Ruby up to 2.7 names every class; the names are kept. */
static void test_names__pre30_names_kept(void)
{
	struct names n;
	const char *d =
		CLS("0x100", "0x200", ", \"name\":\"Object\"")
		CLS("0x200", "0x220", ", \"name\":\"Class\"")
		CLS("0x300", "0x310", ", \"name\":\"Foo\"")
		CLS("0x310", "0x220", ", \"name\":\"Class\"")
		CLS("0x500", "0x510",
		    ", \"name\":\"#<Class:0x000055d0c0ffee00>\"")
		CLS("0x520", "0x310", ", \"name\":\"Foo\"")
		OBJ("0x600", "OBJECT", "0x520", "");

	T_ASSERT(load(&n, d) == 0);
	T_STREQ(disp(&n, 0x500), "#<Class:0x000055d0c0ffee00>");
	T_STREQ(cname(&n, HD_T_OBJECT, 0x520, NULL), "Foo");
	T_STREQ(cname(&n, HD_T_CLASS, 0x310, NULL), "Class");
	T_STREQ(cname(&n, HD_T_OBJECT, 0x500, NULL),
		"#<Class:0x000055d0c0ffee00>");
	unload(&n);
}

static void test_names__hostile_cycles(void)
{
	struct names n;
	const char *d =
		/* its own superclass */
		CLS("0x100", "0x200", ", \"superclass\":\"0x100\", "
		    "\"singleton\":true")
		/* two singletons attached to each other */
		CLS("0x300", "0x310", ", \"singleton\":true")
		CLS("0x310", "0x300", ", \"singleton\":true")
		/* a superclass loop of singletons */
		CLS("0x400", "0x410", ", \"superclass\":\"0x410\", "
		    "\"singleton\":true")
		CLS("0x410", "0x400", ", \"superclass\":\"0x400\", "
		    "\"singleton\":true")
		/* an ICLASS of an ICLASS, its own superclass */
		"{\"address\":\"0x500\", \"type\":\"ICLASS\", "
		"\"class\":\"0x500\", \"superclass\":\"0x500\"}\n"
		OBJ("0x600", "OBJECT", "0x100", "")
		OBJ("0x610", "OBJECT", "0x400", "")
		OBJ("0x620", "OBJECT", "0x500", "");

	T_ASSERT(load(&n, d) == 0);
	/* no real class to name the attached object by */
	T_STREQ(disp(&n, 0x100), "#<Class:0x0000000000000100>");
	T_STREQ(cname(&n, HD_T_OBJECT, 0x100, NULL),
		"#<Class:0x0000000000000100>");
	T_STREQ(disp(&n, 0x300), "#<Class:#<Class:0x0000000000000310>>");
	T_STREQ(disp(&n, 0x310), "#<Class:0x0000000000000310>");
	T_ASSERT(strstr(disp(&n, 0x400), "#<Class:") == disp(&n, 0x400));
	T_STREQ(cname(&n, HD_T_OBJECT, 0x410, NULL), "Class");
	T_STREQ(disp(&n, 0x500), "#<ICLASS:0x0000000000000500>");
	T_STREQ(cname(&n, HD_T_OBJECT, 0x500, NULL),
		"#<ICLASS:0x0000000000000500>");
	unload(&n);
}

/* 40 nested metaclasses: the name stops nesting at a bound. */
static void test_names__deep_nesting_bounded(void)
{
	struct names n;
	char *d = malloc(40 * 200 + 1), *p = d;
	const char *s;
	int i, depth = 0;

	T_ASSERT(d);
	p += sprintf(p, CLS("0x1000", "0x1001", ", \"name\":\"Deep\""));
	for (i = 1; i < 40; i++)
		p += sprintf(p, "{\"address\":\"0x%x\", \"type\":\"CLASS\", "
				"\"class\":\"0x%x\", \"singleton\":true}\n",
			     0x1000 + i, 0x1001 + i);
	T_ASSERT(load(&n, d) == 0);
	s = disp(&n, 0x1000 + 39);
	for (; (s = strstr(s, "#<Class:")); s++)
		depth++;
	T_ASSERT(depth >= 2 && depth <= 18);
	T_STREQ(disp(&n, 0x1003), "#<Class:#<Class:#<Class:Deep>>>");
	unload(&n);
	free(d);
}

static void test_names__object_class_rules(void)
{
	struct names n;

	T_ASSERT(load(&n, dump31 /* Object is 0x100, Foo 0x300 */) == 0);
	T_STREQ(cname(&n, HD_T_IMEMO, 0x8, "iseq"), "IMEMO/iseq");
	T_STREQ(cname(&n, HD_T_IMEMO, 0, NULL), "IMEMO");
	T_STREQ(cname(&n, HD_T_NODE, 0, "NODE_SCOPE"), "NODE/NODE_SCOPE");
	T_STREQ(cname(&n, HD_T_NODE, 0, NULL), "NODE");
	T_STREQ(cname(&n, HD_T_ARRAY, 0, NULL), "(hidden ARRAY)");
	T_STREQ(cname(&n, HD_T_DATA, 0, "VM/concurrent_set"),
		"DATA/VM/concurrent_set");
	T_STREQ(cname(&n, HD_T_DATA, 0, NULL), "(hidden DATA)");
	T_STREQ(cname(&n, HD_T_DATA, 0x100, "proc"), "DATA/proc");
	T_STREQ(cname(&n, HD_T_DATA, 0x110, NULL), "DATA");
	T_STREQ(cname(&n, HD_T_DATA, 0x999, "VM/thread"), "DATA/VM/thread");
	T_STREQ(cname(&n, HD_T_DATA, 0x300, "foo"), "Foo");
	T_STREQ(cname(&n, HD_T_OBJECT, 0x999, NULL), "#<unknown:0x999>");
	T_STREQ(cname(&n, HD_T_NONE, 0x999, NULL), "(free slot)");
	T_STREQ(cname(&n, HD_T_STRING, 0x610, NULL), "#<unknown:0x610>");
	unload(&n);
}

static void test_names__fmt_truncates(void)
{
	char buf[8];
	size_t n;

	n = hd__class_name_fmt(buf, sizeof(buf), HD_T_OBJECT, 1,
			       "VeryLongClassName", 17, NULL, 0, NULL);
	T_EQ(n, 17);
	T_STREQ(buf, "VeryLon");
	n = hd__class_name_fmt(NULL, 0, HD_T_IMEMO, 0, NULL, 0, "env", 3,
			       NULL);
	T_EQ(n, 9);
}

static void test_names__dumper_objects(void)
{
	hd_record r;

	memset(&r, 0, sizeof(r));
	r.kind = HD_REC_OBJECT;
	r.type = HD_T_DATA;
	r.struct_name.ptr = "ObjectTracing/allocation_info_tracer";
	r.struct_name.len = strlen(r.struct_name.ptr);
	T_ASSERT(hd__is_dumper_object(&r));
	r.struct_name.len--;
	T_ASSERT(!hd__is_dumper_object(&r));
	r.type = HD_T_STRING;
	r.has = HD_HAS_METHOD;
	r.method.ptr = "_dump_all";
	r.method.len = 9;
	T_ASSERT(hd__is_dumper_object(&r));
	r.method.ptr = "dump_all";
	r.method.len = 8;
	T_ASSERT(hd__is_dumper_object(&r));
	r.method.ptr = "dump";
	r.method.len = 4;
	T_ASSERT(!hd__is_dumper_object(&r));
	r.has = HD_HAS_FILE;
	r.file.ptr = "/usr/lib/ruby/3.1.0/objspace.rb";
	r.file.len = strlen(r.file.ptr);
	T_ASSERT(hd__is_dumper_object(&r));
	r.file.ptr = "objspace.rb";
	r.file.len = strlen(r.file.ptr);
	T_ASSERT(hd__is_dumper_object(&r));
	r.file.ptr = "my_objspace.rb";
	r.file.len = strlen(r.file.ptr);
	T_ASSERT(!hd__is_dumper_object(&r));
}

static const char *ruby(uint32_t f)
{
	static char buf[64];

	return hd_features_ruby(buf, sizeof(buf), f);
}

static void test_names__features(void)
{
	struct names n;
	const char *d =
		"{\"type\":\"ROOT\", \"root\":\"object_id\", "
		"\"references\":[\"0x1\"]}\n"
		"{\"address\":\"0x1\", \"type\":\"IMEMO\", "
		"\"imemo_type\":\"callcache\", \"called_id\":\"x\"}\n"
		"{\"address\":\"0x2\", \"type\":\"STRING\", \"chilled\":true, "
		"\"slot_size\":40, \"generation\":1, \"method\":\"m\", "
		"\"flags\":{\"age\":2}}\n";

	T_ASSERT(load(&n, d) == 0);
	T_EQ(n.features,
	     HD_FEAT_OBJECT_ID_ROOT | HD_FEAT_IMEMO | HD_FEAT_IMEMO_TYPE |
		     HD_FEAT_CALLCACHE_ID | HD_FEAT_CHILLED | HD_FEAT_SHAPES |
		     HD_FEAT_TRACED | HD_FEAT_METHOD_TRACED |
		     HD_FEAT_INT_FLAGS);
	unload(&n);
	T_STREQ(ruby(HD_FEAT_IMEMO | HD_FEAT_IMEMO_TYPE | HD_FEAT_SUPERCLASS |
		     HD_FEAT_OBJECT_ID_ROOT | HD_FEAT_FINALIZER_ROOT),
		"3.1");
	T_STREQ(ruby(HD_FEAT_IMEMO | HD_FEAT_IMEMO_TYPE | HD_FEAT_SUPERCLASS |
		     HD_FEAT_SHAPES),
		"3.2");
	T_STREQ(ruby(HD_FEAT_IMEMO | HD_FEAT_IMEMO_TYPE | HD_FEAT_SUPERCLASS |
		     HD_FEAT_SHAPES | HD_FEAT_CALLCACHE_ID),
		"3.3");
	T_STREQ(ruby(HD_FEAT_IMEMO | HD_FEAT_IMEMO_TYPE | HD_FEAT_SUPERCLASS |
		     HD_FEAT_SHAPES | HD_FEAT_CALLCACHE_ID | HD_FEAT_CHILLED),
		"3.4");
	T_STREQ(ruby(HD_FEAT_IMEMO | HD_FEAT_IMEMO_TYPE | HD_FEAT_SHAPES |
		     HD_FEAT_PARTIAL),
		"3.2 to 3.4");
	T_STREQ(ruby(HD_FEAT_IMEMO | HD_FEAT_IMEMO_TYPE | HD_FEAT_SHAPES |
		     HD_FEAT_SUPERCLASS | HD_FEAT_INT_FLAGS |
		     HD_FEAT_CALLCACHE_ID | HD_FEAT_CHILLED),
		"4.0 or later");
	T_STREQ(ruby(HD_FEAT_SHAPES), "3.2 or later");
	T_STREQ(ruby(HD_FEAT_IMEMO | HD_FEAT_IMEMO_TYPE), "2.5 to 3.0");
	T_STREQ(ruby(HD_FEAT_IMEMO | HD_FEAT_NODE), "2.3 to 2.4");
	T_STREQ(ruby(HD_FEAT_NODE), "2.4 or earlier");
	T_STREQ(ruby(HD_FEAT_MEMPROF | HD_FEAT_TRACED), "memprof (Ruby 1.8)");
	T_STREQ(ruby(0), "unknown");
	T_STREQ(ruby(HD_FEAT_NODE | HD_FEAT_SHAPES), "unknown");
	T_ASSERT(hd_features_ruby(NULL, 0, 0) == NULL);
}

/*
 * hd__record_features_key(): records with equal nonzero keys have equal
 * features (stats caches the keys seen). Each record of a dump of every
 * kind is varied in every bit of has, bits and origin, in its kind and
 * in its type: wherever the key stays the same, so must the features.
 */
static void test_names__features_key(void)
{
	const char *d =
		"{\"type\":\"ROOT\", \"root\":\"object_id\", "
		"\"references\":[\"0x1\"]}\n"
		"{\"address\":\"0x1\", \"type\":\"IMEMO\", "
		"\"imemo_type\":\"callcache\", \"called_id\":\"x\"}\n"
		"{\"address\":\"0x2\", \"type\":\"STRING\", \"chilled\":true, "
		"\"slot_size\":40, \"generation\":1, \"method\":\"m\", "
		"\"file\":\"a.rb\", \"flags\":{\"age\":2}}\n"
		"{\"address\":\"0x3\", \"type\":\"CLASS\", \"name\":\"A\", "
		"\"superclass\":\"0x4\", \"object_id\":7}\n"
		"{\"address\":\"0x5\", \"type\":\"NODE\", \"node_type\":\"x\"}\n"
		"{\"address\":\"0x6\", \"type\":\"DATA\", "
		"\"struct\":\"ObjectTracing/allocation_info_tracer\"}\n"
		"{\"id\":1, \"type\":\"SHAPE\"}\n";
	hd_reader *r;
	const hd_record *rec;
	hd_record v;
	unsigned b, nrec = 0, same = 0;
	int rc;

	T_ASSERT(hd_reader_open_mem(&r, d, strlen(d), NULL, NULL) == 0);
	while ((rc = hd_reader_next(r, &rec, NULL)) == 0) {
		uint64_t key = hd__record_features_key(rec);
		uint32_t f = hd__record_features(rec);

		nrec++;
		if (rec->kind != HD_REC_OBJECT || rec->type == HD_T_IMEMO)
			T_EQ(key, 0);
		/* what is new beyond known, with known, is all there is */
		T_EQ(hd__record_features_new(rec, 0), f);
		T_EQ(hd__record_features_new(rec, HD_FEAT_CALLCACHE_ID) |
			     HD_FEAT_CALLCACHE_ID,
		     f | HD_FEAT_CALLCACHE_ID);
		T_EQ(hd__record_features_new(rec, ~0u) | ~0u, ~0u);
		for (b = 0; b < 3 * 32 + 5 + HD_T__COUNT; b++) {
			v = *rec;
			if (b < 32)
				v.has ^= 1u << b;
			else if (b < 64)
				v.bits ^= 1u << (b - 32);
			else if (b < 96)
				v.origin ^= 1u << (b - 64);
			else if (b < 101)
				v.kind = (int)(b - 96);
			else
				v.type = (int)(b - 101);
			if (!key || hd__record_features_key(&v) != key)
				continue;
			same++;
			if (hd__record_features(&v) != f) {
				hd_reader_free(r);
				T_FAIL("record %u, variation %u: key %#llx "
				       "kept, features %#x -> %#x", nrec, b,
				       (unsigned long long)key, f,
				       hd__record_features(&v));
				return;
			}
		}
	}
	hd_reader_free(r);
	T_EQ(rc, HD_ITEROVER);
	T_EQ(nrec, 7);
	T_ASSERT(same > 100); /* the check did compare */
}

static const struct t_case cases[] = {
	T_CASE(names__named_and_escaped),
	T_CASE(names__singletons_31),
	T_CASE(names__anonymous_and_iclass),
	T_CASE(names__metaclass_detection_30),
	T_CASE(names__pre30_names_kept),
	T_CASE(names__hostile_cycles),
	T_CASE(names__deep_nesting_bounded),
	T_CASE(names__object_class_rules),
	T_CASE(names__fmt_truncates),
	T_CASE(names__dumper_objects),
	T_CASE(names__features),
	T_CASE(names__features_key),
};

T_MAIN(cases)
