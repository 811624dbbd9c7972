/*
 * store_fixture.h - a small dump that fills every section of a store,
 * and helpers shared by t_store.c and t_store_corrupt.c.
 */
#ifndef STORE_FIXTURE_H
#define STORE_FIXTURE_H

#include "heapdump.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define F_CLS(addr, klass, extra)                                         \
	"{\"address\":\"" addr "\", \"type\":\"CLASS\", \"class\":\"" klass \
	"\"" extra "}\n"

/*
 * Ruby 3.1-like: a class hierarchy with metaclasses, a module, an
 * ICLASS, an anonymous class, the singleton of an object; objects of
 * most kinds; values too wide for 32 bits; a duplicate address;
 * dangling references; a repeated ROOT category; a SHAPE line; a line
 * that is not JSON.
 */
static const char fixture_dump[] =
	"{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":[\"0x3000\", "
	"\"0x3028\", \"0xdead\", \"0x3000\"]}\n"
	"{\"type\":\"ROOT\", \"root\":\"global_tbl\", "
	"\"references\":[\"0x3050\"]}\n"
	"{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":[\"0x3078\"]}\n"
	"{\"address\":\"0x9000\", \"type\":\"SHAPE\", \"id\":1, \"depth\":1, "
	"\"shape_type\":\"ROOT\", \"edges\":1, \"memsize\":40}\n"
	F_CLS("0x2000", "0x2100", ", \"superclass\":\"0x2010\", "
	      "\"name\":\"Object\", \"references\":[\"0x2100\"], "
	      "\"memsize\":400")
	F_CLS("0x2010", "0x2110", ", \"name\":\"BasicObject\"")
	F_CLS("0x2020", "0x2120", ", \"superclass\":\"0x2030\", "
	      "\"name\":\"Class\"")
	F_CLS("0x2030", "0x2130", ", \"superclass\":\"0x2000\", "
	      "\"name\":\"Module\"")
	F_CLS("0x2100", "0x2120", ", \"superclass\":\"0x2110\", "
	      "\"real_class_name\":\"Class\", \"singleton\":true")
	F_CLS("0x2110", "0x2120", ", \"superclass\":\"0x2020\", "
	      "\"real_class_name\":\"Class\", \"singleton\":true")
	F_CLS("0x2120", "0x2120", ", \"superclass\":\"0x2130\", "
	      "\"real_class_name\":\"Class\", \"singleton\":true")
	F_CLS("0x2130", "0x2120", ", \"superclass\":\"0x2100\", "
	      "\"real_class_name\":\"Class\", \"singleton\":true")
	F_CLS("0x2200", "0x2210", ", \"superclass\":\"0x2000\", "
	      "\"name\":\"Foo\", \"references\":[\"0x2000\", \"0x2310\"]")
	F_CLS("0x2210", "0x2120", ", \"superclass\":\"0x2100\", "
	      "\"real_class_name\":\"Class\", \"singleton\":true")
	"{\"address\":\"0x2300\", \"type\":\"MODULE\", \"class\":\"0x2030\", "
	"\"name\":\"Comparable\"}\n"
	"{\"address\":\"0x2310\", \"type\":\"ICLASS\", \"class\":\"0x2300\", "
	"\"superclass\":\"0x2000\"}\n"
	F_CLS("0x2400", "0x2410", ", \"superclass\":\"0x2200\"")
	F_CLS("0x2410", "0x2120", ", \"superclass\":\"0x2210\", "
	      "\"real_class_name\":\"Class\", \"singleton\":true")
	F_CLS("0x2500", "0x2210", ", \"superclass\":\"0x2200\", "
	      "\"real_class_name\":\"Foo\", \"singleton\":true")
	F_CLS("0x2600", "0x2610", ", \"name\":\"String\"")
	"{\"address\":\"0x3000\", \"type\":\"OBJECT\", \"class\":\"0x2500\", "
	"\"ivars\":3, \"memsize\":40}\n"
	"{\"address\":\"0x3028\", \"type\":\"OBJECT\", \"class\":\"0x2200\", "
	"\"ivars\":1, \"references\":[\"0x3050\", \"0x3050\", \"0xbeef\", "
	"\"0x3000\"], \"file\":\"/app/a.rb\", \"line\":3, "
	"\"method\":\"build\", \"generation\":5, \"memsize\":40, "
	"\"flags\":{\"wb_protected\":true, \"old\":true}}\n"
	"{\"address\":\"0x3050\", \"type\":\"STRING\", \"class\":\"0x2600\", "
	"\"frozen\":true, \"embedded\":true, \"bytesize\":2, \"value\":\"hi\", "
	"\"file\":\"/app/a.rb\", \"line\":3, \"method\":\"build\", "
	"\"generation\":5, \"memsize\":40}\n"
	"{\"address\":\"0x3078\", \"type\":\"ARRAY\", \"length\":5000000000, "
	"\"references\":[\"0x3028\"], \"memsize\":5000000040}\n"
	"{\"address\":\"0x30a0\", \"type\":\"DATA\", \"class\":\"0x2000\", "
	"\"struct\":\"proc\", \"memsize\":80}\n"
	"{\"address\":\"0x30c8\", \"type\":\"DATA\", \"class\":\"0x2200\", "
	"\"struct\":\"foo_data\"}\n"
	"{\"address\":\"0x30f0\", \"type\":\"DATA\", \"class\":\"0xabc\", "
	"\"struct\":\"x\"}\n"
	"{\"address\":\"0x3118\", \"type\":\"IMEMO\", \"class\":\"0x8\", "
	"\"imemo_type\":\"iseq\", \"references\":[\"0x3050\"]}\n"
	"{\"address\":\"0x3140\", \"type\":\"OBJECT\", \"class\":\"0x7777\"}\n"
	"{\"address\":\"0x3168\", \"type\":\"NONE\", \"class\":\"0x3190\"}\n"
	"{\"address\":\"0x3190\", \"type\":\"NONE\"}\n"
	"{\"address\":\"0x31b8\", \"type\":\"STRING\", \"class\":\"0x2600\", "
	"\"bytesize\":0, \"file\":\"C:\\dir\\x.rb\", \"line\":7, "
	"\"method\":\"with\\\"quote\", "
	"\"generation\":18446744073709551610}\n"
	"{\"address\":\"0x3028\", \"type\":\"STRING\", \"class\":\"0x2600\"}\n"
	"this line is not a record\n"
	"{\"address\":\"0x31e0\", \"type\":\"OBJECT\", \"class\":\"0x2400\", "
	"\"references\":[\"0x31e0\"]}\n"
	"{\"address\":\"0x3208\", \"type\":\"ZOMBIE\", \"class\":\"0x2200\"}\n"
	"{\"address\":\"0x3230\", \"type\":\"NODE\", "
	"\"node_type\":\"NODE_SCOPE\"}\n";

/* A scratch directory, removed by fx_cleanup(). */
static char fx_dir[256];

static inline const char *fx_path(const char *name)
{
	static char buf[4][512];
	static int i;

	if (!fx_dir[0]) {
		const char *t = getenv("TMPDIR");

		snprintf(fx_dir, sizeof(fx_dir), "%s/hdstoreXXXXXX",
			 t && *t ? t : "/tmp");
		if (!mkdtemp(fx_dir))
			abort();
	}
	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", fx_dir, name);
	return buf[i];
}

/* How many temporary files of an atomic write (NAME.tmpXXXXXX) are left
 * in the scratch directory; -1 if it cannot be read. */
static inline int fx_count_tmp(void)
{
	DIR *d = opendir(fx_dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += strstr(e->d_name, ".tmp") != NULL;
	closedir(d);
	return n;
}

static inline int fx_write(const char *path, const void *data, size_t n)
{
	FILE *f = fopen(path, "wb");
	int ok;

	if (!f)
		return -1;
	ok = fwrite(data, 1, n, f) == n;
	return fclose(f) == 0 && ok ? 0 : -1;
}

static inline unsigned char *fx_read(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	unsigned char *p;
	long len;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	fseek(f, 0, SEEK_SET);
	p = malloc(len > 0 ? (size_t)len : 1);
	if (p && fread(p, 1, (size_t)len, f) != (size_t)len) {
		free(p);
		p = NULL;
	}
	fclose(f);
	*n = (size_t)len;
	return p;
}

static inline void fx_cleanup(void)
{
	char cmd[300];

	if (fx_dir[0] && strstr(fx_dir, "hdstore")) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fx_dir);
		if (system(cmd) != 0)
			fprintf(stderr, "cannot remove %s\n", fx_dir);
	}
}

/*
 * Reads everything a store offers, to be run on any store that opened:
 * it must neither crash nor read out of bounds. Returns a checksum.
 */
static inline uint64_t fx_walk(const hd_store *s)
{
	hd_store_info in;
	uint32_t i, n = hd_store_node_count(s), r;
	uint64_t sum = 0;
	hd_edge_iter it;
	hd_node_id t;
	hd_site site;
	char buf[64];
	size_t len;
	const char *a;

	hd_store_info_get(&in, s);
	sum += in.nodes + in.edges + strlen(in.source_path);
	for (i = 0; i <= n; i++) {
		sum += hd_store_address(s, i) + (uint64_t)hd_store_type(s, i) +
		       hd_store_class(s, i) + hd_store_class_address(s, i) +
		       hd_store_memsize(s, i) + hd_store_generation(s, i) +
		       hd_store_size(s, i) + hd_store_bits(s, i) +
		       hd_store_offset(s, i);
		sum += hd_store_find(s, hd_store_address(s, i));
		if (hd_store_site(&site, s, i) == 0)
			sum += site.line + (site.file ? site.file_len : 0) +
			       (site.method ? site.method_len : 0);
		a = hd_store_aux(s, i, &len);
		sum += a ? len + (unsigned char)a[len] : 0;
		sum += hd_store_class_name(buf, sizeof(buf), s, i);
		hd_store_refs(s, i, &it);
		while (hd_edge_iter_next(&it, &t) == 0)
			sum += t < n ? hd_store_address(s, t) : 1;
		hd_store_referrers(s, i, &it);
		sum += hd_edge_iter_count(&it);
		while (hd_edge_iter_next(&it, &t) == 0)
			sum += t < n ? hd_store_type(s, t) : 1;
	}
	for (r = 0; r <= hd_store_root_count(s); r++) {
		a = hd_store_root_name(s, r);
		sum += a ? strlen(a) : 0;
		hd_store_root_refs(s, r, &it);
		while (hd_edge_iter_next(&it, &t) == 0)
			sum += t;
	}
	return sum;
}

#endif /* STORE_FIXTURE_H */
