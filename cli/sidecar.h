/*
 * sidecar.h - the process memory the heapdump gem writes beside a dump
 * (DUMP.hdmeta; DUMP.meta.json from older gems; man 5
 * heapdump-dump), for heapdump stats.
 */
#ifndef CLI_SIDECAR_H
#define CLI_SIDECAR_H

#include <stdint.h>

#include "heapdump.h"

/* the sidecar's name beside DUMP, that globs of dumps (*.json,
 * *.json.gz) miss; DUMP.meta.json, the old name, is read too */
#define CLI_SIDECAR_SUFFIX ".hdmeta"

struct cli_sidecar {
	char *path;                  /* DUMP.hdmeta (or .meta.json), malloc'ed */
	uint64_t pid, rss, memsize_of_all, malloc_in_use;
	uint64_t compact_count;      /* GC.stat(:compact_count) */
	int has_rss, has_memsize_of_all, has_malloc, has_compact_count;
	char ruby_version[32];
	char time[40];
	char host[256];
	/* the whole process (mem_* keys, man 5 heapdump-dump), or of an
	 * older sidecar rss_bytes, malloc_in_use_bytes and dump_memsize
	 * alone: for heapdump memory (hd_memory_split_get) */
	hd_memory_sample mem;
	char mem_allocator[16];  /* "glibc", "jemalloc", or "" */
	char mem_source[16];     /* "smaps_rollup", "status", "proc" */
};

/* Reads DUMP.hdmeta, else DUMP.meta.json, when dump_path is a file and
 * the sidecar exists.
 * Returns 1 when read, 0 when there is none; a sidecar that is not ours
 * is reported on stderr and ignored (0). */
int cli_sidecar_read(const char *dump_path, struct cli_sidecar *sc);
void cli_sidecar_free(struct cli_sidecar *sc);

/* Drops from argv[first..argc) the operands that are sidecars (a glob
 * of *.json over a folder of dumps catches the old DUMP.meta.json), each with a note
 * on stderr; returns the new argc. For the commands that take many
 * dumps: trend, diff, leaks, report, serve. */
int cli_skip_sidecars(int argc, char **argv, int first);

/* The "process" section: objects_memsize is the dump's total memsize. */
void cli_sidecar_text(const struct cli_sidecar *sc, uint64_t objects_memsize);
void cli_sidecar_json(const struct cli_sidecar *sc, uint64_t objects_memsize);
void cli_sidecar_tsv(const struct cli_sidecar *sc, uint64_t objects_memsize);

/* The RSS split of one input (heapdump memory's, report's, serve's): the
 * sidecar of path (a dump), or of the source dump of s when path is a
 * store, with s's memsize (hd_process_heap_memsize): 1 and *out, or 0
 * when there is no sidecar. */
int cli_memory_split(hd_memory_split *out, const char *path,
		     const hd_store *s);

#endif
