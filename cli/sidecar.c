/*
 * sidecar.c - reads the few top-level fields heapdump stats shows from a
 * sidecar file (DUMP.hdmeta, or DUMP.meta.json as older gems named
 * it): a flat scan of one JSON object that skips nested values and
 * strings, no general JSON parser. Also tells a sidecar given as an
 * input from a dump (cli_skip_sidecars).
 *
 * A sidecar is read only when its user is the dump's or ours (the name,
 * if a link, and the file it leads to, judged on the descriptor): a
 * sidecar that another user put beside a dump in a shared directory
 * (one that had none) would otherwise give it a pid and a time, which
 * the order checks of diff, leaks and trend trust.
 */
#include "sidecar.h"
#include "common.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_SIDECAR (1 << 20)

/* 1 when uid is ours or the dump's owner's */
static int trusted_uid(uid_t uid, const struct stat *dump)
{
	return uid == geteuid() || (dump && uid == dump->st_uid);
}

static char *slurp(const char *path, const struct stat *dump, size_t *len)
{
	struct stat st;
	FILE *f;
	char *buf;
	size_t n;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return NULL;
	}
	if (!trusted_uid(st.st_uid, dump)) {
		cli_error("ignoring '%s': owned by uid %ld, neither the dump's "
			  "user nor ours", path, (long)st.st_uid);
		close(fd);
		return NULL;
	}
	if (!(f = fdopen(fd, "rb"))) {
		close(fd);
		return NULL;
	}
	if (!(buf = malloc(MAX_SIDECAR + 1))) {
		fclose(f);
		return NULL;
	}
	n = fread(buf, 1, MAX_SIDECAR, f);
	fclose(f);
	buf[n] = '\0';
	*len = n;
	return buf;
}

/* The end of the JSON string starting at s (on its quote), or NULL. */
static const char *skip_string(const char *s, const char *end)
{
	for (s++; s < end; s++) {
		if (*s == '\\')
			s++;
		else if (*s == '"')
			return s + 1;
	}
	return NULL;
}

struct field {
	const char *key;
	size_t key_len;
	const char *val;     /* first byte of the value */
};

/* the mem_* keys of the whole process into sc->mem */
static void store_memory(struct cli_sidecar *sc, const struct field *f,
			 uint64_t v)
{
	static const struct { const char *name; size_t off; unsigned has; } mem[] = {
#define M(k, field, bit) { k, offsetof(hd_memory_sample, field), bit }
		M("mem_rss", rss, HD_MEM_HAS_RSS),
		M("mem_anon", anon, HD_MEM_HAS_SPLIT),
		M("mem_malloc_in_use", malloc_in_use, HD_MEM_HAS_MALLOC),
		M("mem_malloc_free", malloc_free, HD_MEM_HAS_MALLOC_FREE),
		M("mem_heap_bytes", heap_bytes, HD_MEM_HAS_SLOTS),
		M("mem_live_slot_bytes", live_slot_bytes, HD_MEM_HAS_SLOTS),
		M("mem_stacks", stacks, HD_MEM_HAS_STACKS),
		M("mem_jit_code", jit, HD_MEM_HAS_JIT),
		M("dump_memsize", objects_memsize, HD_MEM_HAS_MEMSIZE),
#undef M
	};
	size_t i;

	for (i = 0; i < sizeof(mem) / sizeof(mem[0]); i++) {
		uint64_t *at = (uint64_t *)((char *)&sc->mem + mem[i].off);

		if (strlen(mem[i].name) != f->key_len ||
		    memcmp(mem[i].name, f->key, f->key_len) != 0)
			continue;
		*at = v;
		sc->mem.has |= mem[i].has;
	}
}

static void store_number(struct cli_sidecar *sc, const struct field *f)
{
	static const struct { const char *name; size_t off, has; } nums[] = {
		{ "pid", offsetof(struct cli_sidecar, pid), 0 },
		{ "rss_bytes", offsetof(struct cli_sidecar, rss),
		  offsetof(struct cli_sidecar, has_rss) },
		{ "memsize_of_all", offsetof(struct cli_sidecar, memsize_of_all),
		  offsetof(struct cli_sidecar, has_memsize_of_all) },
		{ "malloc_in_use_bytes",
		  offsetof(struct cli_sidecar, malloc_in_use),
		  offsetof(struct cli_sidecar, has_malloc) },
		{ "gc_compact_count",
		  offsetof(struct cli_sidecar, compact_count),
		  offsetof(struct cli_sidecar, has_compact_count) },
	};
	size_t i;

	if (*f->val < '0' || *f->val > '9')
		return;
	store_memory(sc, f, strtoull(f->val, NULL, 10));
	for (i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
		if (strlen(nums[i].name) != f->key_len ||
		    memcmp(nums[i].name, f->key, f->key_len) != 0)
			continue;
		*(uint64_t *)((char *)sc + nums[i].off) =
			strtoull(f->val, NULL, 10);
		if (nums[i].has)
			*(int *)((char *)sc + nums[i].has) = 1;
	}
}

/* a plain (escape-free) string value into buf */
static void store_string(const struct field *f, const char *name,
			 const char *end, char *buf, size_t size)
{
	const char *q;

	if (strlen(name) != f->key_len || memcmp(name, f->key, f->key_len) ||
	    *f->val != '"' || !(q = skip_string(f->val, end)))
		return;
	if ((size_t)(q - f->val - 2) < size && !memchr(f->val, '\\', (size_t)(q - f->val))) {
		memcpy(buf, f->val + 1, (size_t)(q - f->val - 2));
		buf[q - f->val - 2] = '\0';
	}
}

static void on_field(struct cli_sidecar *sc, const struct field *f,
		     const char *end)
{
	store_number(sc, f);
	store_string(f, "ruby_version", end, sc->ruby_version,
		     sizeof(sc->ruby_version));
	store_string(f, "time", end, sc->time, sizeof(sc->time));
	store_string(f, "host", end, sc->host, sizeof(sc->host));
	store_string(f, "mem_allocator", end, sc->mem_allocator,
		     sizeof(sc->mem_allocator));
	store_string(f, "mem_source", end, sc->mem_source,
		     sizeof(sc->mem_source));
}

/* Visits the keys of the top-level object; -1 if it is not one. */
static int scan(struct cli_sidecar *sc, const char *s, const char *end)
{
	int depth = 0, expect_key = 0;

	while (s < end && (*s == ' ' || *s == '\n' || *s == '\t' || *s == '\r'))
		s++;
	if (s == end || *s != '{')
		return -1;
	for (; s < end; s++) {
		if (*s == '"') {
			const char *q = skip_string(s, end), *v;

			if (!q)
				return -1;
			if (depth == 1 && expect_key) {
				struct field f = { s + 1, (size_t)(q - s - 2), NULL };

				for (v = q; v < end && (*v == ' ' || *v == ':'); v++)
					;
				f.val = v;
				on_field(sc, &f, end);
				expect_key = 0;
			}
			s = q - 1;
		} else if (*s == '{' || *s == '[') {
			depth++;
			expect_key = depth == 1;
		} else if (*s == '}' || *s == ']') {
			if (--depth == 0)
				return 0;
		} else if (*s == ',' && depth == 1) {
			expect_key = 1;
		}
	}
	return -1;
}

/* The names a dump's sidecar may have, the gem's current one first. */
static const char *const suffixes[] = { CLI_SIDECAR_SUFFIX, ".meta.json" };

/* sc->path: the first of the names that is a regular file; 0 if none */
static int find(const char *dump_path, struct cli_sidecar *sc)
{
	size_t n = strlen(dump_path), i;
	struct stat st;

	for (i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		size_t k = strlen(suffixes[i]) + 1;

		if (!(sc->path = malloc(n + k)))
			return 0;
		memcpy(sc->path, dump_path, n);
		memcpy(sc->path + n, suffixes[i], k);
		if (stat(sc->path, &st) == 0 && S_ISREG(st.st_mode))
			return 1;
		free(sc->path);
		sc->path = NULL;
	}
	return 0;
}

int cli_sidecar_read(const char *dump_path, struct cli_sidecar *sc)
{
	struct stat lst, dst;
	size_t len = 0;
	char *buf;
	int have_dump;

	memset(sc, 0, sizeof(*sc));
	if (strcmp(dump_path, "-") == 0 || !find(dump_path, sc))
		return 0;
	have_dump = stat(dump_path, &dst) == 0;
	if (lstat(sc->path, &lst) == 0 && S_ISLNK(lst.st_mode) &&
	    !trusted_uid(lst.st_uid, have_dump ? &dst : NULL)) {
		cli_error("ignoring '%s': a symbolic link of uid %ld, neither "
			  "the dump's user nor ours", sc->path,
			  (long)lst.st_uid);
		cli_sidecar_free(sc);
		return 0;
	}
	if (!(buf = slurp(sc->path, have_dump ? &dst : NULL, &len))) {
		cli_sidecar_free(sc);
		return 0;
	}
	if (scan(sc, buf, buf + len) != 0 || !sc->has_rss) {
		cli_error("ignoring '%s': not a heapdump sidecar", sc->path);
		free(buf);
		cli_sidecar_free(sc);
		return 0;
	}
	free(buf);
	/* an older sidecar: its RSS and malloc in use */
	if (!(sc->mem.has & HD_MEM_HAS_RSS)) {
		sc->mem.rss = sc->rss;
		sc->mem.has |= HD_MEM_HAS_RSS;
	}
	if (sc->has_malloc && !(sc->mem.has & HD_MEM_HAS_MALLOC)) {
		sc->mem.malloc_in_use = sc->malloc_in_use;
		sc->mem.has |= HD_MEM_HAS_MALLOC;
	}
	return 1;
}

/* A regular file that begins as the gem's sidecars do: {"heapdump_sidecar": */
static int is_sidecar(const char *path)
{
	static const char head[] = "{\"heapdump_sidecar\":";
	char buf[sizeof(head) + 64];
	struct stat st;
	size_t n, i = 0;
	FILE *f;

	if (!strcmp(path, "-") || stat(path, &st) != 0 || !S_ISREG(st.st_mode) ||
	    !(f = fopen(path, "rb")))
		return 0;
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	while (i < n && (buf[i] == ' ' || buf[i] == '\n' || buf[i] == '\t' ||
			 buf[i] == '\r'))
		i++;
	return n - i >= sizeof(head) - 1 &&
	       !memcmp(buf + i, head, sizeof(head) - 1);
}

int cli_skip_sidecars(int argc, char **argv, int first)
{
	int i, j = first;

	for (i = first; i < argc; i++) {
		if (is_sidecar(argv[i])) {
			cli_error("note: passing over '%s': the sidecar of a dump "
				  "(process memory), not a heap dump", argv[i]);
			continue;
		}
		argv[j++] = argv[i];
	}
	return j;
}

void cli_sidecar_free(struct cli_sidecar *sc)
{
	free(sc->path);
	memset(sc, 0, sizeof(*sc));
}

static double share(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* The RSS split (heapdump memory's), when the sidecar has the mem_
 * figures of the whole process: *out, and 1 */
static int memory_split(const struct cli_sidecar *sc, uint64_t objects_memsize,
			hd_memory_split *out)
{
	hd_memory_sample m = sc->mem;

	if (!(m.has & HD_MEM_HAS_SPLIT))
		return 0;
	m.objects_memsize = objects_memsize;
	m.has |= HD_MEM_HAS_MEMSIZE;
	hd_memory_split_get(out, &m);
	return out->known;
}

void cli_sidecar_text(const struct cli_sidecar *sc, uint64_t objects_memsize)
{
	char a[32], b[32];
	hd_memory_split sp;
	int k;

	printf("%-12s pid %llu, ruby %s, %s (%s)\n", "process",
	       (unsigned long long)sc->pid,
	       sc->ruby_version[0] ? sc->ruby_version : "?",
	       sc->time[0] ? sc->time : "?", sc->path);
	printf("%-12s %s (%s bytes)\n", "rss", cli_human_bytes(sc->rss, a, sizeof(a)),
	       cli_commas(sc->rss, b, sizeof(b)));
	printf("%-12s %s: %.1f%% of rss (memsize of the objects above)\n",
	       "in objects", cli_human_bytes(objects_memsize, a, sizeof(a)),
	       share(objects_memsize, sc->rss));
	if (sc->has_memsize_of_all)
		printf("%-12s %s: %.1f%% of rss (ObjectSpace.memsize_of_all)\n",
		       "memsize_all",
		       cli_human_bytes(sc->memsize_of_all, a, sizeof(a)),
		       share(sc->memsize_of_all, sc->rss));
	if (sc->has_malloc)
		printf("%-12s %s in use: %.1f%% of rss\n", "malloc",
		       cli_human_bytes(sc->malloc_in_use, a, sizeof(a)),
		       share(sc->malloc_in_use, sc->rss));
	if (!memory_split(sc, objects_memsize, &sp))
		return;
	printf("%-12s (heapdump memory)\n", "rss split");
	for (k = 0; k < HD_MEM_NBUCKETS; k++)
		if (sp.measured & (1u << k))
			printf("  %-30s %10s  %5.1f%%\n",
			       hd_memory_bucket_label((hd_memory_bucket)k),
			       cli_human_bytes(sp.bytes[k], a, sizeof(a)),
			       share(sp.bytes[k], sp.rss));
}

void cli_sidecar_json(const struct cli_sidecar *sc, uint64_t objects_memsize)
{
	hd_memory_split sp;
	int b;

	printf(",\"process\":{\"sidecar\":");
	cli_json_string(stdout, sc->path, strlen(sc->path));
	printf(",\"pid\":%llu,\"ruby_version\":", (unsigned long long)sc->pid);
	cli_json_string(stdout, sc->ruby_version, strlen(sc->ruby_version));
	printf(",\"rss\":%llu,\"objects_memsize\":%llu,\"objects_share\":%.4f",
	       (unsigned long long)sc->rss,
	       (unsigned long long)objects_memsize,
	       share(objects_memsize, sc->rss) / 100.0);
	if (sc->has_memsize_of_all)
		printf(",\"memsize_of_all\":%llu",
		       (unsigned long long)sc->memsize_of_all);
	if (sc->has_malloc)
		printf(",\"malloc_in_use\":%llu",
		       (unsigned long long)sc->malloc_in_use);
	if (memory_split(sc, objects_memsize, &sp)) {
		printf(",\"memory\":{\"rss\":%llu", (unsigned long long)sp.rss);
		for (b = 0; b < HD_MEM_NBUCKETS; b++)
			if (sp.measured & (1u << b))
				printf(",\"%s\":%llu",
				       hd_memory_bucket_key((hd_memory_bucket)b),
				       (unsigned long long)sp.bytes[b]);
		printf("}");
	}
	printf("}");
}

void cli_sidecar_tsv(const struct cli_sidecar *sc, uint64_t objects_memsize)
{
	hd_memory_split sp;
	int b;

	printf("process\trss\t%llu\n", (unsigned long long)sc->rss);
	printf("process\tobjects_memsize\t%llu\n",
	       (unsigned long long)objects_memsize);
	if (sc->has_memsize_of_all)
		printf("process\tmemsize_of_all\t%llu\n",
		       (unsigned long long)sc->memsize_of_all);
	if (sc->has_malloc)
		printf("process\tmalloc_in_use\t%llu\n",
		       (unsigned long long)sc->malloc_in_use);
	if (!memory_split(sc, objects_memsize, &sp))
		return;
	for (b = 0; b < HD_MEM_NBUCKETS; b++)
		if (sp.measured & (1u << b))
			printf("process\tmemory_%s\t%llu\n",
			       hd_memory_bucket_key((hd_memory_bucket)b),
			       (unsigned long long)sp.bytes[b]);
}

int cli_memory_split(hd_memory_split *out, const char *path,
		     const hd_store *s)
{
	struct cli_sidecar sc;
	const char *dump = path;
	hd_store_info si;

	memset(out, 0, sizeof(*out));
	if (s && hd_store_is_store(path)) {
		hd_store_info_get(&si, s);
		dump = si.source_path && *si.source_path ? si.source_path : "-";
	}
	if (strcmp(dump, "-") == 0 || !cli_sidecar_read(dump, &sc))
		return 0;
	if (s) {
		sc.mem.objects_memsize = hd_process_heap_memsize(s);
		sc.mem.has |= HD_MEM_HAS_MEMSIZE;
	}
	hd_memory_split_get(out, &sc.mem);
	cli_sidecar_free(&sc);
	return out->known;
}
