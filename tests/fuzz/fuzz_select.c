/*
 * fuzz_select.c - libFuzzer target: the selection grammar. The input is
 * a list of conditions, one a line: the first byte picks the key (one of
 * the eight, or an unknown one), the rest of the line is the value. A
 * "from" condition takes the rest of the input as the NDJSON file it
 * names. The selection is then applied to a small fixture store, and its
 * set fed to stats, roots-of and subgraph-of; an empty one is explained
 * (hd_select_explain).
 */
#include "heapdump.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char fixture[] =
	"{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":[\"0x1000\", "
	"\"0x1028\", \"0x1050\"]}\n"
	"{\"type\":\"ROOT\", \"root\":\"global_tbl\", \"references\":"
	"[\"0x10c8\", \"0x11b8\"]}\n"
	"{\"address\":\"0x1000\", \"type\":\"CLASS\", \"class\":\"0x1028\", "
	"\"name\":\"Foo::Bar\", \"references\":[\"0x1050\"], \"memsize\":400}\n"
	"{\"address\":\"0x1028\", \"type\":\"CLASS\", \"class\":\"0x1028\", "
	"\"singleton\":true, \"references\":[\"0x1000\"], \"memsize\":400}\n"
	"{\"address\":\"0x1050\", \"type\":\"MODULE\", \"class\":\"0xff000\", "
	"\"name\":\"Weak\", \"memsize\":400}\n"
	"{\"address\":\"0x1078\", \"type\":\"OBJECT\", \"class\":\"0x1000\", "
	"\"references\":[\"0x1028\", \"0x1078\", \"0x10c8\"], \"memsize\":43, "
	"\"file\":\"app0.rb\", \"line\":3, \"method\":\"m3\", "
	"\"generation\":3}\n"
	"{\"address\":\"0x10a0\", \"type\":\"DATA\", \"class\":\"0x1000\", "
	"\"struct\":\"proc\", \"references\":[\"0x1050\", \"0x10c8\"], "
	"\"memsize\":44}\n"
	"{\"address\":\"0x10c8\", \"type\":\"IMEMO\", \"class\":\"0xff000\", "
	"\"imemo_type\":\"env\", \"references\":[\"0x11b8\", \"0x1140\"], "
	"\"memsize\":45, \"file\":\"app2.rb\", \"line\":5, \"method\":\"m1\", "
	"\"generation\":5}\n"
	"{\"address\":\"0x10f0\", \"type\":\"STRING\", \"class\":\"0x1000\", "
	"\"bytesize\":3, \"value\":\"a\\\"b\", \"encoding\":\"UTF-8\", "
	"\"memsize\":46}\n"
	"{\"address\":\"0x1118\", \"type\":\"ARRAY\", \"class\":\"0x1000\", "
	"\"references\":[\"0x1190\", \"0x10c8\", \"0xfff00\"], \"memsize\":47, "
	"\"file\":\"app1.rb\", \"line\":7, \"method\":\"m3\", "
	"\"generation\":7}\n"
	"{\"address\":\"0x1140\", \"type\":\"HASH\", \"references\":[\"0x1050\", "
	"\"0x1028\"], \"memsize\":48}\n"
	"{\"address\":\"0x1168\", \"type\":\"OBJECT\", \"class\":\"0xdead0\", "
	"\"references\":[\"0x11b8\"], \"memsize\":49, \"file\":\"app0.rb\", "
	"\"line\":9, \"method\":\"m1\", \"generation\":0}\n"
	"{\"address\":\"0x1190\", \"type\":\"DATA\", \"class\":\"0xff000\", "
	"\"struct\":\"weakmap\", \"references\":[\"0x1118\", \"0x1050\"], "
	"\"memsize\":50}\n"
	"{\"address\":\"0x11b8\", \"type\":\"IMEMO\", \"class\":\"0x1000\", "
	"\"imemo_type\":\"env\", \"memsize\":51, \"file\":\"app2.rb\", "
	"\"line\":11, \"method\":\"m3\", \"generation\":2}\n";

static const char *const keys[] = {
	"address", "class", "type", "file", "location", "generation", "from",
	"nosuchkey", "name",
};

static hd_store *store;
static char from_path[64];

static void setup(void)
{
	char path[] = "/tmp/fuzz_select_dump.XXXXXX";
	int fd = mkstemp(path);

	if (fd < 0 || write(fd, fixture, sizeof(fixture) - 1) !=
			      (ssize_t)(sizeof(fixture) - 1))
		abort();
	close(fd);
	if (hd_store_build(&store, path, NULL, NULL))
		abort();
	unlink(path);
	snprintf(from_path, sizeof(from_path), "/tmp/fuzz_select_from.%ld",
		 (long)getpid());
}

static int write_file(const char *path, const uint8_t *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	int ok;

	if (!f)
		return -1;
	ok = fwrite(p, 1, n, f) == n;
	return fclose(f) == 0 && ok ? 0 : -1;
}

static void apply(const hd_select *sel, uint64_t *sink)
{
	hd_nodes set = { NULL, 0, 0 }, kept = { NULL, 0, 0 },
		 sub = { NULL, 0, 0 };
	hd_stats_options so = HD_STATS_OPTIONS_INIT;
	hd_stats *st = NULL;
	uint64_t missing = 0;
	size_t i, nrows;

	if (hd_select_nodes(&set, &missing, sel, store, NULL))
		return;
	if (!set.n) { /* why: never empty, cut within the buffer */
		char why[160];

		memset(why, 'x', sizeof(why));
		if (hd_select_explain(why, sizeof(why), sel, store, NULL) == 0) {
			if (!memchr(why, '\0', sizeof(why)) || !why[0])
				__builtin_trap();
			*sink += strlen(why);
		}
	}
	for (i = 0; i < set.n; i++) /* ascending ids of the store */
		if (set.ids[i] >= hd_store_node_count(store) ||
		    (i && set.ids[i] <= set.ids[i - 1]))
			__builtin_trap();
	so.ngroupings = 1;
	so.nkeys[0] = 1;
	so.keys[0][0] = HD_KEY_CLASS;
	if (hd_stats_new(&st, &so, NULL) == 0 &&
	    hd_stats_add_nodes(st, store, &set, NULL) == 0 &&
	    hd_stats_finish(st, NULL) == 0) {
		hd_stats_rows(st, 0, HD_SORT_COUNT, &nrows);
		*sink += nrows;
	}
	hd_stats_free(st);
	if (hd_roots_of(&kept, NULL, store, &set, HD_ROOTS_SKIP_WEAK,
			NULL) == 0)
		*sink += kept.n;
	if (hd_subgraph_of(&sub, store, &set, 2, NULL) == 0)
		*sink += sub.n;
	*sink += set.n + missing;
	hd_nodes_free(&sub);
	hd_nodes_free(&kept);
	hd_nodes_free(&set);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	hd_select *sel = NULL;
	hd_error err;
	uint64_t sink = 0;
	size_t i = 0, j, n;
	char *value;
	int rc, added = 0;

	if (!store)
		setup();
	if (hd_select_new(&sel, NULL))
		return 0;
	while (i < size && added < 32) {
		const char *key = keys[data[i] % (sizeof(keys) / sizeof(*keys))];

		i++;
		if (strcmp(key, "from") == 0) {
			if (write_file(from_path, data + i, size - i))
				break;
			memset(&err, 0, sizeof(err));
			rc = hd_select_add(sel, key, from_path, &err);
			unlink(from_path);
			i = size;
		} else {
			for (j = i; j < size && data[j] != '\n'; j++)
				;
			n = j - i;
			if (!(value = malloc(n + 1)))
				break;
			memcpy(value, data + i, n); /* stops at a NUL */
			value[n] = '\0';
			memset(&err, 0, sizeof(err));
			rc = hd_select_add(sel, key, value, &err);
			free(value);
			i = j + 1;
		}
		/* a refused condition says why */
		if (rc && (rc != err.code || !err.msg[0]))
			__builtin_trap();
		added += rc == 0;
	}
	if (hd_select_empty(sel) != !added)
		__builtin_trap();
	apply(sel, &sink);
	hd_select_free(sel);
	return sink == 42 ? 0 : 0;
}
