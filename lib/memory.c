/*
 * memory.c - where a process's RSS goes (issue 35 section 1): reading
 * /proc for a process (hd_memory_probe: smaps_rollup, status, the thread
 * stacks), splitting one dump's RSS into buckets that add up to it
 * (hd_memory_split_get), the growth of each over several dumps and the
 * group that grew (hd_memory_judge), and the instruction sequences by
 * the line that made them (hd_memory_iseq_sites). The front ends
 * (heapdump memory, stats, the gem's sidecar) only read and print.
 */
#include "hd_int.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "Name:   123 kB" lines of a /proc file into bytes; 1 when name was seen */
static int kb_field(const char *line, const char *name, uint64_t *out)
{
	size_t n = strlen(name);

	if (strncmp(line, name, n) != 0)
		return 0;
	*out = strtoull(line + n, NULL, 10) * 1024ULL;
	return 1;
}

static void proc_path(char *buf, size_t size, int pid, const char *what)
{
	if (pid > 0)
		snprintf(buf, size, "/proc/%d/%s", pid, what);
	else
		snprintf(buf, size, "/proc/self/%s", what);
}

/* smaps_rollup's Rss and Anonymous: 0, or -1 when unreadable */
static int read_rollup(hd_memory_proc *out, int pid)
{
	char path[64], line[256];
	int seen = 0;
	FILE *f;

	proc_path(path, sizeof(path), pid, "smaps_rollup");
	if (!(f = fopen(path, "re")))
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (kb_field(line, "Rss:", &out->rss))
			seen |= 1;
		else if (kb_field(line, "Anonymous:", &out->anon))
			seen |= 2;
	}
	fclose(f);
	return seen == 3 ? 0 : -1;
}

/* status's RssShmem, and VmRSS and RssAnon when rollup is 0 */
static int read_status(hd_memory_proc *out, int pid, int rollup)
{
	char path[64], line[256];
	int seen = 0;
	FILE *f;

	proc_path(path, sizeof(path), pid, "status");
	if (!(f = fopen(path, "re")))
		return -1;
	while (fgets(line, sizeof(line), f)) {
		kb_field(line, "RssShmem:", &out->shmem);
		if (rollup)
			continue;
		if (kb_field(line, "VmRSS:", &out->rss))
			seen |= 1;
		else if (kb_field(line, "RssAnon:", &out->anon))
			seen |= 2;
	}
	fclose(f);
	return rollup || seen == 3 ? 0 : -1;
}

#define MAX_SP 1024

/* The stack pointers of the threads blocked in a system call (the
 * second to last field of task/TID/syscall); a running thread has none. */
static size_t thread_sps(uint64_t *sp, int pid)
{
	char path[96], line[512];
	struct dirent *e;
	size_t n = 0;
	DIR *d;

	proc_path(path, sizeof(path), pid, "task");
	if (!(d = opendir(path)))
		return 0;
	while (n < MAX_SP && (e = readdir(d))) {
		char *last, *prev;
		FILE *f;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		if (pid > 0)
			snprintf(path, sizeof(path), "/proc/%d/task/%.20s/syscall",
				 pid, e->d_name);
		else
			snprintf(path, sizeof(path),
				 "/proc/self/task/%.20s/syscall", e->d_name);
		if (!(f = fopen(path, "re")))
			continue;
		if (fgets(line, sizeof(line), f)) {
			line[strcspn(line, "\n")] = '\0';
			last = strrchr(line, ' ');
			if (last) {
				*last = '\0';
				prev = strrchr(line, ' ');
				if (prev && prev[1] == '0' && prev[2] == 'x')
					sp[n++] = strtoull(prev + 1, NULL, 16);
			}
		}
		fclose(f);
	}
	closedir(d);
	return n;
}

static int holds_sp(uint64_t lo, uint64_t hi, const uint64_t *sp, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (sp[i] >= lo && sp[i] < hi)
			return 1;
	return 0;
}

/* The [stack] mapping and those holding a thread's stack pointer: their
 * count and Rss, from smaps */
static void read_stacks(hd_memory_proc *out, int pid)
{
	uint64_t sp[MAX_SP];
	size_t nsp = thread_sps(sp, pid);
	char path[64], line[512];
	int in_stack = 0;
	FILE *f;

	proc_path(path, sizeof(path), pid, "smaps");
	if (!(f = fopen(path, "re")))
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi;
		uint64_t rss;
		int used = 0;

		if (sscanf(line, "%llx-%llx %*s %*s %*s %*s %n", &lo, &hi,
			   &used) == 2 && used > 0) {
			in_stack = strncmp(line + used, "[stack]", 7) == 0 ||
				   holds_sp(lo, hi, sp, nsp);
			out->stack_count += (uint64_t)in_stack;
		} else if (in_stack && kb_field(line, "Rss:", &rss)) {
			out->stacks += rss;
		}
	}
	fclose(f);
	out->has_stacks = 1;
}

int hd_memory_probe(hd_memory_proc *out, int pid, hd_error *err)
{
	int rollup;

	memset(out, 0, sizeof(*out));
	out->source = "";
	rollup = read_rollup(out, pid) == 0;
	if (read_status(out, pid, rollup) != 0)
		return hd__error(err, HD_EIO, "cannot read /proc/%s/status",
				 pid > 0 ? "PID" : "self");
	out->source = rollup ? "smaps_rollup" : "status";
	if (out->anon > out->rss)
		out->anon = out->rss;
	out->file = out->rss - out->anon;
	read_stacks(out, pid);
	return 0;
}

static const struct {
	const char *key, *label;
} bucket_names[HD_MEM_NBUCKETS] = {
	{ "slots_live", "Ruby object slots, live" },
	{ "slots_free", "Ruby heap pages, free slots" },
	{ "stacks", "thread stacks" },
	{ "jit", "JIT code" },
	{ "object_malloc", "malloc owned by Ruby objects" },
	{ "other_malloc", "malloc outside Ruby objects" },
	{ "malloc_free", "malloc held free" },
	{ "other_anon", "other anonymous memory" },
	{ "file", "file-backed and shared" },
	{ "unexplained", "unexplained" },
};

const char *hd_memory_bucket_key(hd_memory_bucket b)
{
	return (unsigned)b < HD_MEM_NBUCKETS ? bucket_names[b].key : "";
}

const char *hd_memory_bucket_label(hd_memory_bucket b)
{
	return (unsigned)b < HD_MEM_NBUCKETS ? bucket_names[b].label : "";
}

struct filler {
	hd_memory_split *out;
	uint64_t left;
};

/* bucket b gets want, at most what is left; the excess is overcount */
static void give(struct filler *f, hd_memory_bucket b, uint64_t want)
{
	uint64_t got = want < f->left ? want : f->left;

	f->out->bytes[b] = got;
	f->out->measured |= 1u << b;
	f->out->overcount += want - got;
	f->left -= got;
}

static uint64_t sub0(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

void hd_memory_split_get(hd_memory_split *out, const hd_memory_sample *s)
{
	struct filler f = { out, 0 };
	unsigned h = s->has;
	uint64_t own = 0;

	memset(out, 0, sizeof(*out));
	if (!(h & HD_MEM_HAS_RSS))
		return;
	out->known = 1;
	out->rss = s->rss;
	f.left = (h & HD_MEM_HAS_SPLIT) && s->anon <= s->rss ? s->anon : s->rss;
	if (h & HD_MEM_HAS_SLOTS) {
		give(&f, HD_MEM_SLOTS_LIVE, s->live_slot_bytes);
		give(&f, HD_MEM_SLOTS_FREE,
		     sub0(s->heap_bytes, s->live_slot_bytes));
	}
	if (h & HD_MEM_HAS_STACKS)
		give(&f, HD_MEM_STACKS, s->stacks);
	if (h & HD_MEM_HAS_JIT)
		give(&f, HD_MEM_JIT, s->jit);
	if (h & HD_MEM_HAS_MEMSIZE) {
		/* memsize counts each object's slot: what is beyond them */
		own = sub0(s->objects_memsize,
			   h & HD_MEM_HAS_SLOTS ? s->live_slot_bytes : 0);
		if ((h & HD_MEM_HAS_MALLOC) && own > s->malloc_in_use)
			own = s->malloc_in_use;
		give(&f, HD_MEM_OBJECT_MALLOC, own);
	}
	if (h & HD_MEM_HAS_MALLOC)
		give(&f, HD_MEM_OTHER_MALLOC, sub0(s->malloc_in_use, own));
	if (h & HD_MEM_HAS_MALLOC_FREE)
		give(&f, HD_MEM_MALLOC_FREE, s->malloc_free);
	if ((h & HD_MEM_HAS_SPLIT) && s->anon <= s->rss) {
		give(&f, HD_MEM_OTHER_ANON, f.left);
		f.left = s->rss - s->anon;
		give(&f, HD_MEM_FILE, f.left);
	} else {
		give(&f, HD_MEM_UNEXPLAINED, f.left);
	}
}

static int64_t diff64(uint64_t first, uint64_t last)
{
	if (last >= first)
		return last - first > (uint64_t)INT64_MAX ? INT64_MAX :
		       (int64_t)(last - first);
	return first - last > (uint64_t)INT64_MAX ? -INT64_MAX :
	       -(int64_t)(first - last);
}

/* the buckets of group g */
static int64_t group_growth(const hd_memory_verdict *v, hd_memory_group g)
{
	switch (g) {
	case HD_MEMG_RUBY:
		return v->growth[HD_MEM_SLOTS_LIVE] +
		       v->growth[HD_MEM_SLOTS_FREE] +
		       v->growth[HD_MEM_OBJECT_MALLOC];
	case HD_MEMG_NATIVE_MALLOC:
		return v->growth[HD_MEM_OTHER_MALLOC];
	case HD_MEMG_MALLOC_FREE:
		return v->growth[HD_MEM_MALLOC_FREE];
	case HD_MEMG_STACKS:
		return v->growth[HD_MEM_STACKS];
	case HD_MEMG_JIT:
		return v->growth[HD_MEM_JIT];
	case HD_MEMG_OTHER_ANON:
		return v->growth[HD_MEM_OTHER_ANON];
	case HD_MEMG_FILE:
		return v->growth[HD_MEM_FILE];
	case HD_MEMG_UNEXPLAINED:
		return v->growth[HD_MEM_UNEXPLAINED];
	default:
		return 0;
	}
}

static const struct {
	const char *what, *why;
} group_text[] = {
	[HD_MEMG_RUBY] = { "Ruby objects",
			   ": the heap itself holds more (heapdump leaks "
			   "finds what keeps them)" },
	[HD_MEMG_NATIVE_MALLOC] = { "malloc outside Ruby objects",
				    ": native memory no object's memsize "
				    "counts (a C extension, Fiddle, the "
				    "VM's tables)" },
	[HD_MEMG_MALLOC_FREE] = { "malloc held free",
				  ": fragmentation, memory freed but kept by "
				  "the allocator; MALLOC_ARENA_MAX=2 or "
				  "jemalloc usually gives it back" },
	[HD_MEMG_STACKS] = { "thread stacks",
			     ": more threads, or deeper ones" },
	[HD_MEMG_JIT] = { "JIT code", "" },
	[HD_MEMG_OTHER_ANON] = { "anonymous memory outside malloc and the "
				 "Ruby heap",
				 " (mmap by a C extension, or another "
				 "allocator)" },
	[HD_MEMG_FILE] = { "file-backed memory",
			   " (mapped files and libraries, shared memory)" },
	[HD_MEMG_UNEXPLAINED] = { "memory the sidecars do not split", "" },
};

const char *hd_memory_group_key(hd_memory_group g)
{
	static const char *const key[] = {
		"none", "ruby", "native_malloc", "malloc_free", "stacks",
		"jit", "other_anon", "file", "unexplained"
	};

	return (unsigned)g <= HD_MEMG_UNEXPLAINED ? key[g] : "none";
}

static void verdict_text(hd_memory_verdict *v)
{
	char a[32], b[32];

	hd_bytes_text(b, sizeof(b),
		   v->rss_growth < 0 ? (uint64_t)-v->rss_growth :
				       (uint64_t)v->rss_growth);
	if (v->group == HD_MEMG_NONE) {
		if (v->rss_growth < 0)
			snprintf(v->text, sizeof(v->text),
				 "the RSS shrank by %s", b);
		else if (v->rss_growth)
			snprintf(v->text, sizeof(v->text),
				 "the RSS grew by %s; no one part of it grew "
				 "by most of that", b);
		else
			snprintf(v->text, sizeof(v->text),
				 "the RSS did not change");
		return;
	}
	hd_bytes_text(a, sizeof(a), (uint64_t)v->group_growth);
	snprintf(v->text, sizeof(v->text), "%s grew by %s of the RSS's %s%s",
		 group_text[v->group].what, a, b, group_text[v->group].why);
}

int hd_memory_judge(hd_memory_verdict *out, const hd_memory_split *splits,
		    size_t n, const hd_memory_options *opts, hd_error *err)
{
	static const hd_memory_options defaults = HD_MEMORY_OPTIONS_INIT;
	const hd_memory_split *a, *z;
	int g, b;
	size_t k;

	memset(out, 0, sizeof(*out));
	if (!opts)
		opts = &defaults;
	if (!splits || n < 2)
		return hd__error(err, HD_EINVAL,
				 "a memory growth needs two dumps or more");
	if (opts->version != HD_MEMORY_OPTIONS_VERSION)
		return hd__error(err, HD_EINVAL,
				 "unknown hd_memory_options version %u",
				 opts->version);
	if (!(opts->min_share >= 0.0 && opts->min_share <= 1.0))
		return hd__error(err, HD_EINVAL,
				 "min_share %g is not in [0, 1]",
				 opts->min_share);
	for (k = 0; k < n; k++)
		if (!splits[k].known)
			return 0;
	out->known = 1;
	a = &splits[0];
	z = &splits[n - 1];
	out->rss_growth = diff64(a->rss, z->rss);
	for (b = 0; b < HD_MEM_NBUCKETS; b++)
		out->growth[b] = diff64(a->bytes[b], z->bytes[b]);
	for (g = HD_MEMG_RUBY; g <= HD_MEMG_UNEXPLAINED; g++) {
		int64_t d = group_growth(out, (hd_memory_group)g);

		if (d <= 0 || (uint64_t)d < opts->min_growth ||
		    out->rss_growth <= 0 ||
		    (double)d < opts->min_share * (double)out->rss_growth ||
		    d <= out->group_growth)
			continue;
		out->group = (hd_memory_group)g;
		out->group_growth = d;
	}
	verdict_text(out);
	return 0;
}

static int site_cmp(const void *pa, const void *pb)
{
	const hd_memory_site *a = pa, *b = pb;
	size_t n;
	int c;

	if ((a->file == NULL) != (b->file == NULL))
		return a->file == NULL ? 1 : -1;
	if (a->file) {
		n = a->file_len < b->file_len ? a->file_len : b->file_len;
		if ((c = memcmp(a->file, b->file, n)) != 0)
			return c;
		if (a->file_len != b->file_len)
			return a->file_len < b->file_len ? -1 : 1;
	}
	return a->line < b->line ? -1 : a->line > b->line;
}

static int by_memsize(const void *pa, const void *pb)
{
	const hd_memory_site *a = pa, *b = pb;

	if (a->memsize != b->memsize)
		return a->memsize > b->memsize ? -1 : 1;
	return site_cmp(pa, pb);
}

static int is_iseq(const hd_store *s, hd_node_id v)
{
	size_t len = 0;
	const char *aux;

	if (hd_store_type(s, v) != HD_T_IMEMO)
		return 0;
	aux = hd_store_aux(s, v, &len);
	return aux && len == 4 && memcmp(aux, "iseq", 4) == 0;
}

void hd_memory_sites_free(hd_memory_sites *out)
{
	hd__free(out->site, out->cap * sizeof(*out->site));
	memset(out, 0, sizeof(*out));
}

/* one entry per iseq, then sorted and merged in place: O(n log n) */
int hd_memory_iseq_sites(hd_memory_sites *out, const hd_store *s,
			 hd_error *err)
{
	uint32_t n = hd_store_node_count(s), v;
	size_t i, j;

	memset(out, 0, sizeof(*out));
	for (v = 0; v < n; v++) {
		hd_memory_site e = { NULL, 0, 0, 1, hd_store_memsize(s, v) };
		hd_site st;

		if (!is_iseq(s, v))
			continue;
		if (hd_store_site(&st, s, v) == 0 && st.file) {
			e.file = st.file;
			e.file_len = st.file_len;
			e.line = st.line;
		}
		if (hd__grow((void **)&out->site, &out->cap, out->n + 1,
			     sizeof(*out->site))) {
			hd_memory_sites_free(out);
			return hd__error(err, HD_ENOMEM, "out of memory");
		}
		out->site[out->n++] = e;
	}
	if (!out->n)
		return 0;
	qsort(out->site, out->n, sizeof(*out->site), site_cmp);
	for (i = 1, j = 0; i < out->n; i++) {
		if (site_cmp(&out->site[i], &out->site[j]) == 0) {
			out->site[j].count += out->site[i].count;
			out->site[j].memsize += out->site[i].memsize;
		} else {
			out->site[++j] = out->site[i];
		}
	}
	out->n = j + 1;
	qsort(out->site, out->n, sizeof(*out->site), by_memsize);
	return 0;
}
