/*
 * t_strings.c - hd_strings_build and hd_waste_compute on a small dump
 * written here, with known answers: groups by value, bytesize and
 * encoding; the kept copy first in dump order; prefixes apart by
 * bytesize; shared and valueless strings counted apart; rows by site
 * and holder; each waste category; bad arguments.
 */
#include "heapdump.h"
#include "t.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char dump[] =
	"{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":[\"0x100\"]}\n"
	"{\"address\":\"0x100\", \"type\":\"ARRAY\", \"length\":3, "
	"\"references\":[\"0x10\", \"0x18\", \"0x20\"], \"memsize\":104}\n"
	/* "dup" three times: 0x10 and 0x18 at a.rb:1, 0x20 at b.rb:2 */
	"{\"address\":\"0x10\", \"type\":\"STRING\", \"bytesize\":3, "
	"\"value\":\"dup\", \"encoding\":\"UTF-8\", \"file\":\"a.rb\", "
	"\"line\":1, \"memsize\":40}\n"
	"{\"address\":\"0x18\", \"type\":\"STRING\", \"bytesize\":3, "
	"\"capacity\":30, \"value\":\"dup\", \"encoding\":\"UTF-8\", "
	"\"file\":\"a.rb\", \"line\":1, \"memsize\":71}\n"
	"{\"address\":\"0x20\", \"type\":\"STRING\", \"frozen\":true, "
	"\"bytesize\":3, \"value\":\"dup\", \"encoding\":\"UTF-8\", "
	"\"file\":\"b.rb\", \"line\":2, \"memsize\":40}\n"
	/* the same bytes in another encoding */
	"{\"address\":\"0x28\", \"type\":\"STRING\", \"bytesize\":3, "
	"\"value\":\"dup\", \"encoding\":\"US-ASCII\", \"memsize\":40}\n"
	/* prefixes: "pre" of 10 bytes twice, of 11 once */
	"{\"address\":\"0x30\", \"type\":\"STRING\", \"bytesize\":10, "
	"\"value\":\"pre\", \"memsize\":40}\n"
	"{\"address\":\"0x38\", \"type\":\"STRING\", \"bytesize\":10, "
	"\"value\":\"pre\", \"memsize\":40}\n"
	"{\"address\":\"0x40\", \"type\":\"STRING\", \"bytesize\":11, "
	"\"value\":\"pre\", \"memsize\":40}\n"
	/* empty without a value (3.2+), binary without one, shared */
	"{\"address\":\"0x48\", \"type\":\"STRING\", \"bytesize\":0, "
	"\"memsize\":40}\n"
	"{\"address\":\"0x50\", \"type\":\"STRING\", \"bytesize\":4, "
	"\"memsize\":40}\n"
	"{\"address\":\"0x58\", \"type\":\"STRING\", \"shared\":true, "
	"\"references\":[\"0x10\"], \"memsize\":40}\n"
	/* empty collections, a heap array with 2 spare slots */
	"{\"address\":\"0x60\", \"type\":\"ARRAY\", \"length\":0, "
	"\"file\":\"c.rb\", \"line\":3, \"memsize\":40}\n"
	"{\"address\":\"0x68\", \"type\":\"HASH\", \"size\":0, "
	"\"memsize\":160}\n"
	"{\"address\":\"0x70\", \"type\":\"ARRAY\", \"slot_size\":40, "
	"\"length\":1, \"memsize\":64}\n";

static hd_store *load(char *path)
{
	hd_index_options o = HD_INDEX_OPTIONS_INIT;
	hd_store *s = NULL;
	hd_error err = { 0 };
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

	if (!f) {
		T_FAIL("cannot write %s", path);
		return NULL;
	}
	fputs(dump, f);
	fclose(f);
	if (hd_store_build(&s, path, &o, &err) != 0)
		T_FAIL("hd_store_build: %s", err.msg);
	return s;
}

static const hd_strings_row *find(const hd_strings_row *r, size_t n,
				  const char *v, uint64_t bytesize,
				  const char *enc)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (r[i].value_len == strlen(v) &&
		    !memcmp(r[i].value, v, r[i].value_len) &&
		    r[i].bytesize == bytesize && !strcmp(r[i].encoding, enc))
			return &r[i];
	return NULL;
}

static void test_strings__groups(void)
{
	char path[] = "/tmp/t_strings_XXXXXX";
	hd_store *s = load(path);
	hd_strings_options o = HD_STRINGS_OPTIONS_INIT;
	hd_strings *st = NULL;
	hd_strings_totals t;
	const hd_strings_row *rows, *r;
	hd_error err = { 0 };
	size_t n;

	T_ASSERT(s);
	o.min_count = 1;
	T_RC(hd_strings_build(&st, s, NULL, &o, NULL, &err), 0);
	hd_strings_totals_get(&t, st);
	T_EQ(t.strings, 10);
	T_EQ(t.shared, 1);
	T_EQ(t.no_value, 1);
	T_EQ(t.values, 5); /* dup/UTF-8, dup/US-ASCII, pre/10, pre/11, "" */
	T_EQ(t.repeated, 2);
	T_EQ(t.copies, 5);
	T_EQ(t.wasted_memsize, 71 + 40 + 40);
	T_EQ(t.incomplete, 3);
	rows = hd_strings_rows(st, &n);
	T_EQ(n, 5);
	/* most wasted first: dup (111) then pre/10 (40) */
	T_SPANEQ(rows[0].value, rows[0].value_len, "dup");
	T_EQ(rows[0].count, 3);
	T_EQ(rows[0].wasted_memsize, 111);
	T_EQ(rows[0].wasted_bytesize, 6);
	T_EQ(rows[0].frozen, 1);
	T_ASSERT(rows[0].complete);
	r = find(rows, n, "pre", 10, "");
	T_ASSERT(r && !r->complete && r->count == 2);
	r = find(rows, n, "pre", 11, "");
	T_ASSERT(r && !r->complete && r->count == 1);
	r = find(rows, n, "", 0, "");
	T_ASSERT(r && r->complete && r->count == 1);
	T_ASSERT(find(rows, n, "dup", 3, "US-ASCII"));
	hd_strings_free(st);

	/* by site: a.rb:1 holds the kept copy, b.rb:2 wastes all of its */
	o.by = HD_STRINGS_BY_SITE;
	o.min_count = 2;
	T_RC(hd_strings_build(&st, s, NULL, &o, NULL, &err), 0);
	rows = hd_strings_rows(st, &n);
	T_EQ(n, 3);
	T_EQ(rows[0].count, 2); /* a.rb:1: 40 + 71, 71 wasted */
	T_EQ(rows[0].wasted_memsize, 71);
	T_EQ(hd_store_address(s, rows[0].node), 0x10);
	/* then, 40 wasted each, the untraced "pre" (2 copies) before
	 * b.rb:2 (1 copy) */
	T_EQ(rows[1].node, HD_NODE_NONE);
	T_EQ(rows[2].count, 1);
	T_EQ(rows[2].wasted_memsize, 40);
	T_EQ(hd_store_address(s, rows[2].node), 0x20);
	hd_strings_free(st);

	/* by holder (no class in this dump: hidden): the referrer of lowest
	 * address; 0x10's is the shared string 0x58 (below the array
	 * 0x100), the others' the array */
	o.by = HD_STRINGS_BY_HOLDER;
	T_RC(hd_strings_build(&st, s, NULL, &o, NULL, &err), 0);
	rows = hd_strings_rows(st, &n);
	T_EQ(n, 3);
	T_ASSERT(rows[0].holder && rows[0].count == 2);
	T_STREQ(rows[0].holder, "(hidden ARRAY)");
	T_EQ(rows[0].wasted_memsize, 111);
	T_ASSERT(!rows[1].holder && rows[1].count == 2);
	T_STREQ(rows[2].holder, "(hidden STRING)");
	T_EQ(rows[2].wasted_memsize, 0);
	hd_strings_free(st);
	hd_store_close(s);
	unlink(path);
}

static void test_strings__waste(void)
{
	char path[] = "/tmp/t_strings_XXXXXX";
	hd_store *s = load(path);
	hd_waste_result *w = calloc(1, sizeof(*w));
	hd_error err = { 0 };

	T_ASSERT(s && w);
	T_RC(hd_waste_compute(w, s, NULL, 0, NULL, &err), 0);
	T_EQ(w->heap_objects, 14);
	T_EQ(w->rows[HD_WASTE_EMPTY_ARRAYS].count, 1);
	T_EQ(w->rows[HD_WASTE_EMPTY_ARRAYS].bytes, 40);
	T_EQ(w->rows[HD_WASTE_EMPTY_ARRAYS].nsites, 1);
	T_EQ(hd_store_address(s, w->rows[HD_WASTE_EMPTY_ARRAYS].sites[0].node),
	     0x60);
	T_EQ(w->rows[HD_WASTE_EMPTY_HASHES].bytes, 160);
	T_EQ(w->rows[HD_WASTE_STRING_CAPACITY].count, 1);
	T_EQ(w->rows[HD_WASTE_STRING_CAPACITY].bytes, 27);
	/* addresses below 2^32: a 32-bit dump, 4-byte words. 0x70: 64 -
	 * 40 - 4 * 1 = 20; 0x100 (no slot_size: 5 words) 104 - 20 - 4 * 3
	 * = 72 */
	T_EQ(w->rows[HD_WASTE_ARRAY_CAPACITY].count, 2);
	T_EQ(w->rows[HD_WASTE_ARRAY_CAPACITY].bytes, 20 + 72);
	T_EQ(w->rows[HD_WASTE_DUPLICATE_STRINGS].count, 3);
	T_EQ(w->rows[HD_WASTE_DUPLICATE_STRINGS].bytes, 71 + 40 + 40);
	/* one frozen copy of "dup": no frozen duplicate */
	T_EQ(w->rows[HD_WASTE_FROZEN_DUPLICATES].count, 0);
	T_STREQ(hd_waste_kind_name(HD_WASTE_FROZEN_DUPLICATES),
		"frozen-duplicates");
	T_ASSERT(!hd_waste_kind_name(HD_WASTE_KINDS));
	free(w);
	hd_store_close(s);
	unlink(path);
}

static void test_strings__bad_arguments(void)
{
	char path[] = "/tmp/t_strings_XXXXXX";
	hd_store *s = load(path);
	hd_strings_options o = HD_STRINGS_OPTIONS_INIT;
	hd_strings *st = (hd_strings *)&o;
	hd_waste_result w;
	hd_error err = { 0 };

	T_ASSERT(s);
	o.by = 7;
	T_RC(hd_strings_build(&st, s, NULL, &o, NULL, &err), HD_EINVAL);
	T_ASSERT(!st);
	o = (hd_strings_options)HD_STRINGS_OPTIONS_INIT;
	o.version = 99;
	T_RC(hd_strings_build(&st, s, NULL, &o, NULL, &err), HD_EINVAL);
	T_RC(hd_waste_compute(&w, s, NULL, 8, NULL, &err), HD_EINVAL);
	T_RC(hd_waste_compute(NULL, s, NULL, 0, NULL, &err), HD_EINVAL);
	hd_strings_free(NULL);
	hd_store_close(s);
	unlink(path);
}

static const struct t_case cases[] = {
	T_CASE(strings__groups),
	T_CASE(strings__waste),
	T_CASE(strings__bad_arguments),
};

T_MAIN(cases)
