/*
 * t_ruby40.c - what Ruby 3.4 and 4.0 write that the library must read
 * right, on small dumps built from records of real native 4.0.1 dumps
 * (data/dumps/ok_ruby4.0.1_*, addresses shortened):
 *
 *  - an IMEMO of imemo_type "fields" holds the ivars of its owner, which
 *    its "class" names: grouped as IMEMO/fields, never as an instance of
 *    the owner's class; named "ivars of OWNER" (hd_store_node_name); no
 *    WeakRef instance when its owner is the class WeakRef (skip-weak);
 *  - flags with values (age, object_id) beside the boolean ones;
 *  - the root categories of 3.4 (objspace) and 4.0 (global_symbols).
 */
#include "heapdump.h"
#include "t.h"

#include <unistd.h>

static hd_store *build(const char *text)
{
	char path[] = "/tmp/t_ruby40_XXXXXX";
	hd_store *s = NULL;
	int fd = mkstemp(path);

	if (fd < 0)
		return NULL;
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
		close(fd);
		unlink(path);
		return NULL;
	}
	close(fd);
	if (hd_store_build(&s, path, NULL, NULL))
		s = NULL;
	unlink(path);
	return s;
}

/* A class LeakyCache whose @cache Hash hangs off its IMEMO/fields; a
 * String with an object_id (4.0 gives it a fields object too); the
 * class WeakRef, whose fields hold a weakmap DATA. */
static const char dump[] =
	"{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":"
	"[\"0x1000\", \"0x2000\", \"0x3000\"]}\n"
	"{\"type\":\"ROOT\", \"root\":\"global_symbols\", \"references\":"
	"[\"0x2000\"]}\n"
	"{\"address\":\"0x900\", \"type\":\"CLASS\", \"shape_id\":0, "
	"\"slot_size\":160, \"name\":\"Class\", \"memsize\":160, "
	"\"flags\":{\"wb_protected\":true, \"age\":3, \"old\":true, "
	"\"uncollectible\":true, \"marked\":true}}\n"
	"{\"address\":\"0x1000\", \"type\":\"CLASS\", \"shape_id\":9, "
	"\"slot_size\":160, \"class\":\"0x900\", \"superclass\":\"0x900\", "
	"\"name\":\"LeakyCache\", \"references\":[\"0x1028\"], "
	"\"memsize\":184, \"flags\":{\"wb_protected\":true, \"age\":1}}\n"
	"{\"address\":\"0x1028\", \"type\":\"IMEMO\", \"shape_id\":10, "
	"\"slot_size\":40, \"class\":\"0x1000\", \"imemo_type\":\"fields\", "
	"\"references\":[\"0x1050\"], \"memsize\":40, "
	"\"flags\":{\"wb_protected\":true, \"age\":1, \"shareable\":true}}\n"
	"{\"address\":\"0x1050\", \"type\":\"HASH\", \"shape_id\":0, "
	"\"slot_size\":160, \"class\":\"0x1200\", \"size\":10, "
	"\"memsize\":912, \"flags\":{\"wb_protected\":true, \"age\":3, "
	"\"old\":true, \"uncollectible\":true, \"marked\":true, "
	"\"remembered\":true, \"object_id\":123, \"shareable\":true}}\n"
	"{\"address\":\"0x1200\", \"type\":\"CLASS\", \"class\":\"0x900\", "
	"\"name\":\"Hash\", \"memsize\":160}\n"
	"{\"address\":\"0x1300\", \"type\":\"CLASS\", \"class\":\"0x900\", "
	"\"name\":\"String\", \"memsize\":160}\n"
	"{\"address\":\"0x2000\", \"type\":\"STRING\", \"shape_id\":1, "
	"\"slot_size\":40, \"class\":\"0x1300\", \"embedded\":true, "
	"\"bytesize\":4, \"value\":\"abcd\", \"encoding\":\"UTF-8\", "
	"\"coderange\":\"7bit\", \"references\":[\"0x2028\"], "
	"\"memsize\":40, \"flags\":{\"wb_protected\":true, \"age\":1, "
	"\"object_id\":16}}\n"
	"{\"address\":\"0x2028\", \"type\":\"IMEMO\", \"shape_id\":1, "
	"\"slot_size\":40, \"class\":\"0x2000\", \"imemo_type\":\"fields\", "
	"\"memsize\":40, \"flags\":{\"wb_protected\":true, \"age\":1}}\n"
	"{\"address\":\"0x3000\", \"type\":\"CLASS\", \"class\":\"0x900\", "
	"\"name\":\"WeakRef\", \"references\":[\"0x3028\"], "
	"\"memsize\":488}\n"
	"{\"address\":\"0x3028\", \"type\":\"IMEMO\", \"shape_id\":10, "
	"\"slot_size\":40, \"class\":\"0x3000\", \"imemo_type\":\"fields\", "
	"\"references\":[\"0x3050\"], \"memsize\":40}\n"
	"{\"address\":\"0x3050\", \"type\":\"DATA\", \"struct\":\"weakmap\", "
	"\"memsize\":208}\n"
	"{\"address\":\"0x4000\", \"type\":\"IMEMO\", \"shape_id\":10, "
	"\"slot_size\":40, \"class\":\"0x7777\", \"imemo_type\":\"fields\", "
	"\"memsize\":40}\n";

static hd_node_id at(const hd_store *s, uint64_t a)
{
	return hd_store_find(s, a);
}

static void test_ruby40__fields_names(void)
{
	hd_store *s = build(dump);
	char buf[64];
	size_t n;

	T_ASSERT(s);
	/* grouped as what it is, whatever its owner */
	hd_store_class_name(s, at(s, 0x1028), buf, sizeof(buf));
	T_STREQ(buf, "IMEMO/fields");
	hd_store_class_name(s, at(s, 0x2028), buf, sizeof(buf));
	T_STREQ(buf, "IMEMO/fields");
	/* shown as part of its owner: a class by its name, else its class */
	n = hd_store_node_name(s, at(s, 0x1028), buf, sizeof(buf));
	T_STREQ(buf, "ivars of LeakyCache");
	T_EQ(n, strlen("ivars of LeakyCache"));
	hd_store_node_name(s, at(s, 0x2028), buf, sizeof(buf));
	T_STREQ(buf, "ivars of String");
	/* an owner not in the dump (a since: dump): no owner to name */
	hd_store_node_name(s, at(s, 0x4000), buf, sizeof(buf));
	T_STREQ(buf, "IMEMO/fields");
	/* truncated as every name: the full length returned */
	n = hd_store_node_name(s, at(s, 0x1028), buf, 5);
	T_STREQ(buf, "ivar");
	T_EQ(n, strlen("ivars of LeakyCache"));
	n = hd_store_node_name(s, at(s, 0x1028), buf, 12);
	T_STREQ(buf, "ivars of Le");
	T_EQ(n, strlen("ivars of LeakyCache"));
	T_EQ(hd_store_node_name(s, at(s, 0x1028), NULL, 0),
	     strlen("ivars of LeakyCache"));
	hd_store_close(s);
}

static void test_ruby40__fields_not_instances(void)
{
	hd_store *s = build(dump);
	hd_stats *st = NULL;
	hd_stats_options o;
	const hd_stats_row *rows;
	size_t nrows = 0, i;
	uint64_t leaky = 0, fields = 0, strings = 0;

	T_ASSERT(s);
	memset(&o, 0, sizeof(o));
	o.version = HD_STATS_OPTIONS_VERSION;
	o.flags = HD_STATS_ALL;
	o.ngroupings = 1;
	o.nkeys[0] = 1;
	o.keys[0][0] = HD_KEY_CLASS;
	T_RC(hd_stats_new(&st, &o, NULL), 0);
	T_RC(hd_stats_add_store(st, s, NULL), 0);
	T_RC(hd_stats_finish(st, NULL), 0);
	rows = hd_stats_rows(st, 0, HD_SORT_COUNT, &nrows);
	T_ASSERT(rows);
	for (i = 0; i < nrows; i++) {
		const char *k = rows[i].key[0];
		size_t kl = rows[i].key_len[0];

		if (kl == 10 && !memcmp(k, "LeakyCache", 10))
			leaky = rows[i].count;
		if (kl == 12 && !memcmp(k, "IMEMO/fields", 12))
			fields = rows[i].count;
		if (kl == 6 && !memcmp(k, "String", 6))
			strings = rows[i].count;
	}
	T_EQ(leaky, 0);   /* its fields object is no LeakyCache */
	T_EQ(strings, 1); /* the String, not its fields */
	T_EQ(fields, 4);
	hd_stats_free(st);
	hd_store_close(s);
}

/* --skip-weak: the class WeakRef's own ivars are no WeakRef instance */
static void test_ruby40__fields_not_weak(void)
{
	hd_store *s = build(dump);
	hd_domtree *d = NULL;

	T_ASSERT(s);
	T_RC(hd_domtree_new(&d, s, HD_ROOTS_SKIP_WEAK, NULL), 0);
	T_EQ(hd_domtree_idom(d, at(s, 0x3050)), at(s, 0x3028));
	T_EQ(hd_domtree_idom(d, at(s, 0x1050)), at(s, 0x1028));
	hd_domtree_free(d);
	hd_store_close(s);
}

/* valued flags: read, never a bad line, the boolean ones still bits */
static void test_ruby40__valued_flags(void)
{
	hd_reader *r = NULL;
	const hd_record *rec;
	hd_read_options ro = HD_READ_OPTIONS_INIT;
	char path[] = "/tmp/t_ruby40_XXXXXX";
	int fd = mkstemp(path), seen = 0;

	T_ASSERT(fd >= 0);
	T_EQ(write(fd, dump, strlen(dump)), (ssize_t)strlen(dump));
	close(fd);
	ro.flags |= HD_READ_STRICT;
	T_RC(hd_reader_open(&r, path, &ro, NULL), 0);
	unlink(path);
	while (hd_reader_next(r, &rec, NULL) == 0) {
		if (rec->kind != HD_REC_OBJECT || rec->address != 0x1050)
			continue;
		seen = 1;
		T_ASSERT(rec->has & HD_HAS_AGE);
		T_EQ(rec->age, 3);
		T_ASSERT(rec->has & HD_HAS_OBJECT_ID);
		T_EQ(rec->object_id, 123);
		T_EQ(rec->bits & (HD_B_WB_PROTECTED | HD_B_OLD |
				  HD_B_UNCOLLECTIBLE | HD_B_MARKED |
				  HD_B_REMEMBERED | HD_B_SHAREABLE),
		     HD_B_WB_PROTECTED | HD_B_OLD | HD_B_UNCOLLECTIBLE |
			     HD_B_MARKED | HD_B_REMEMBERED | HD_B_SHAREABLE);
	}
	T_ASSERT(seen);
	hd_reader_free(r);
}

/* root categories: 4.0's global_symbols, 3.4's objspace (which took the
 * place of finalizers and object_id) */
static void test_ruby40__roots(void)
{
	static char buf[64];
	hd_store *s = build(dump);
	hd_store_info in;
	uint32_t i, found = 0;

	T_ASSERT(s);
	hd_store_info_get(s, &in);
	T_EQ(in.root_categories, 2);
	for (i = 0; i < hd_store_root_count(s); i++)
		found |= !strcmp(hd_store_root_name(s, i), "global_symbols");
	T_ASSERT(found);
	T_ASSERT(in.features & HD_FEAT_GEN_SYMBOLS);
	T_ASSERT(in.features & HD_FEAT_INT_FLAGS);
	T_STREQ(hd_features_ruby(HD_FEAT_GEN_SYMBOLS, buf, sizeof(buf)),
		"4.0 or later");
	hd_store_close(s);

	s = build("{\"type\":\"ROOT\", \"root\":\"objspace\", "
		  "\"references\":[\"0x10\"]}\n"
		  "{\"address\":\"0x10\", \"type\":\"DATA\", "
		  "\"shape_id\":0, \"slot_size\":40, \"struct\":\"proc\", "
		  "\"memsize\":80}\n");
	T_ASSERT(s);
	hd_store_info_get(s, &in);
	T_ASSERT(in.features & HD_FEAT_OBJSPACE_ROOT);
	T_STREQ(hd_features_ruby(in.features, buf, sizeof(buf)),
		"3.4 or later");
	hd_store_close(s);
	T_STREQ(hd_features_ruby(HD_FEAT_OBJSPACE_ROOT | HD_FEAT_IMEMO |
					 HD_FEAT_IMEMO_TYPE | HD_FEAT_SHAPES |
					 HD_FEAT_SUPERCLASS |
					 HD_FEAT_CALLCACHE_ID | HD_FEAT_CHILLED,
				 buf, sizeof(buf)),
		"3.4");
	/* objspace and finalizers at once: no version writes both */
	T_STREQ(hd_features_ruby(HD_FEAT_OBJSPACE_ROOT |
					 HD_FEAT_FINALIZER_ROOT,
				 buf, sizeof(buf)),
		"unknown");
}

static const struct t_case cases[] = {
	T_CASE(ruby40__fields_names),
	T_CASE(ruby40__fields_not_instances),
	T_CASE(ruby40__fields_not_weak),
	T_CASE(ruby40__valued_flags),
	T_CASE(ruby40__roots),
};

T_MAIN(cases)
