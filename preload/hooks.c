/*
 * preload/hooks.c - the malloc family of libheapdump-malloc.so: each
 * wrapper calls the real function (dlsym(RTLD_NEXT), resolved once by
 * hdm_init with a static bootstrap arena serving dlsym's own calloc) and
 * records the block in the side table (table.c) under the site of the
 * call: the Ruby file:line when this thread holds the GVL, the C caller
 * otherwise. A thread-local guard leaves untracked what the tracker
 * allocates itself (and what Ruby allocates when the tracker calls it).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <malloc.h>

#include "hdm.h"

#define HDM_EXPORT __attribute__((visibility("default")))

struct hdm_real hdm_real;
struct hdm_ruby hdm_ruby;
volatile int hdm_state = HDM_OFF;
char hdm_why[160];
char hdm_allocator[32] = "glibc";
HDM_TLS int hdm_guard;
volatile size_t hdm_gc_last;

/* 0: not yet, 1: resolving (by the thread whose hdm_resolving is set), 2: done */
static volatile int init_state;
static HDM_TLS int hdm_resolving, hdm_initing;
static int ruby_seen;

/*
 * The bootstrap arena: what dlsym allocates while the real functions are
 * being resolved. A bump allocator; each piece has its size in the 16
 * bytes before it (these blocks alone), and free() of one is a no-op.
 */
static char boot_arena[65536] __attribute__((aligned(16)));
static size_t boot_used;

static int in_boot(const void *p)
{
	return (const char *)p >= boot_arena &&
	       (const char *)p < boot_arena + sizeof boot_arena;
}

static void *boot_alloc(size_t n, size_t align)
{
	size_t start, need;

	if (align < 16)
		align = 16;
	start = (boot_used + 16 + align - 1) & ~(align - 1);
	need = start + n;
	if (n > sizeof boot_arena || need > sizeof boot_arena)
		return NULL;
	memcpy(boot_arena + start - sizeof(size_t), &n, sizeof n);
	boot_used = need;
	return boot_arena + start;
}

static size_t boot_size(const void *p)
{
	size_t n;

	memcpy(&n, (const char *)p - sizeof n, sizeof n);
	return n;
}

static void *next_sym(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

/* the allocator under us, named by the object that defines malloc */
static void name_allocator(void *fn)
{
	Dl_info info;
	const char *base;

	if (!dladdr(fn, &info) || !info.dli_fname)
		return;
	base = strrchr(info.dli_fname, '/');
	base = base ? base + 1 : info.dli_fname;
	if (strstr(base, "jemalloc"))
		snprintf(hdm_allocator, sizeof hdm_allocator, "jemalloc");
	else if (strstr(base, "tcmalloc"))
		snprintf(hdm_allocator, sizeof hdm_allocator, "tcmalloc");
	else if (strncmp(base, "libc.so", 7) == 0)
		snprintf(hdm_allocator, sizeof hdm_allocator, "glibc");
	else
		snprintf(hdm_allocator, sizeof hdm_allocator, "%.31s", base);
}

/*
 * Another allocator preloaded ahead of us defines malloc first: the
 * program's calls never reach these wrappers, and frees of its blocks
 * would. Then the library stays a pass-through and says so once.
 */
static int ahead_of_us(void)
{
	Dl_info first, self;
	void *def = dlsym(RTLD_DEFAULT, "malloc");
	const char *base;

	if (!def || !dladdr(def, &first) || !dladdr((void *)ahead_of_us, &self))
		return 0;
	if (first.dli_fbase == self.dli_fbase)
		return 0;
	base = first.dli_fname ? strrchr(first.dli_fname, '/') : NULL;
	base = base ? base + 1 : (first.dli_fname ? first.dli_fname : "?");
	snprintf(
		hdm_why, sizeof hdm_why,
		"another allocator (%.100s) was preloaded ahead of libheapdump-malloc.so",
		base);
	name_allocator(def); /* the process's allocator is that one */
	return 1;
}

static void find_ruby(void)
{
	hdm_ruby.has_gvl = (int (*)(void))dlsym(RTLD_DEFAULT,
						"ruby_thread_has_gvl_p");
	hdm_ruby.sourcefile = (const char *(*)(void))dlsym(RTLD_DEFAULT,
							   "rb_sourcefile");
	hdm_ruby.sourceline = (int (*)(void))dlsym(RTLD_DEFAULT,
						   "rb_sourceline");
	/* both in one walk of the frames; Ruby 3.1 exports it, 3.3 on do not */
	hdm_ruby.location = (const char *(*)(int *))dlsym(
		RTLD_DEFAULT, "rb_source_location_cstr");
	hdm_ruby.gc_count = (size_t(*)(void))dlsym(RTLD_DEFAULT, "rb_gc_count");
	hdm_ruby.version = (const char *)dlsym(RTLD_DEFAULT, "ruby_version");
	hdm_ruby.argv0 = (volatile uintptr_t *)dlsym(RTLD_DEFAULT, "rb_argv0");
	if (!hdm_ruby.has_gvl || !hdm_ruby.sourcefile || !hdm_ruby.sourceline ||
	    !hdm_ruby.gc_count || !hdm_ruby.argv0)
		memset(&hdm_ruby, 0, sizeof hdm_ruby);
}

static void resolve(void)
{
	hdm_real.malloc = (void *(*)(size_t))next_sym("malloc");
	hdm_real.calloc = (void *(*)(size_t, size_t))next_sym("calloc");
	hdm_real.realloc = (void *(*)(void *, size_t))next_sym("realloc");
	hdm_real.free = (void (*)(void *))next_sym("free");
	hdm_real.posix_memalign = (int (*)(void **, size_t, size_t))next_sym(
		"posix_memalign");
	hdm_real.aligned_alloc = (void *(*)(size_t, size_t))next_sym(
		"aligned_alloc");
	hdm_real.memalign = (void *(*)(size_t, size_t))next_sym("memalign");
	hdm_real.valloc = (void *(*)(size_t))next_sym("valloc");
	hdm_real.pvalloc = (void *(*)(size_t))next_sym("pvalloc");
	hdm_real.malloc_usable_size = (size_t(*)(void *))next_sym(
		"malloc_usable_size");
}

/* resolves the real functions, once; other threads wait for the first */
static void hdm_init(void)
{
	int zero = 0;

	if (__atomic_load_n(&init_state, __ATOMIC_ACQUIRE) == 2 || hdm_initing)
		return; /* done, or this thread's dlsym allocating: a pass-through */
	if (!__atomic_compare_exchange_n(&init_state, &zero, 1, 0,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		while (__atomic_load_n(&init_state, __ATOMIC_ACQUIRE) != 2)
			sched_yield();
		return;
	}
	hdm_initing = 1;
	hdm_resolving = 1;
	hdm_guard = 1;
	resolve();
	hdm_resolving = 0;
	if (!hdm_real.malloc || !hdm_real.free || !hdm_real.calloc ||
	    !hdm_real.realloc) {
		snprintf(
			hdm_why, sizeof hdm_why,
			"dlsym(RTLD_NEXT) found no malloc, free, calloc or realloc");
		hdm_guard = 0;
		hdm_initing = 0;
		__atomic_store_n(&init_state, 2, __ATOMIC_RELEASE);
		return; /* boot arena only: cannot happen with a libc */
	}
	name_allocator((void *)hdm_real.malloc);
	find_ruby();
	if (!ahead_of_us())
		hdm_state = HDM_TRACKING;
	hdm_guard = 0;
	hdm_initing = 0;
	__atomic_store_n(&init_state, 2, __ATOMIC_RELEASE);
}

/*
 * This thread's last Ruby site: a loop allocates at the same line again
 * and again, and the site's hash (of the whole file name) and its probe
 * cost more than the rest of the lookup. A hit needs the same line and
 * the same name (the pointer first, then the characters: the pointer of
 * a freed name may come back for another file).
 */
static HDM_TLS const char *last_file;
static HDM_TLS int last_line;
static HDM_TLS uint32_t last_site = UINT32_MAX;

static uint32_t site_ruby_cached(const char *file, int line)
{
	uint32_t id;

	if (HDM_LIKELY(last_site != UINT32_MAX && line == last_line &&
		       file == last_file &&
		       strcmp(hdm_site_at(last_site)->file, file) == 0))
		return last_site;
	id = hdm_site_ruby(file, line);
	if (id != UINT32_MAX) {
		last_file = file;
		last_line = line;
		last_site = id;
	}
	return id;
}

/* the current Ruby file (NULL: none) and line, in one walk when Ruby
 * exports rb_source_location_cstr */
static const char *ruby_location(int *line)
{
	const char *file;

	if (hdm_ruby.location) {
		*line = 0;
		return hdm_ruby.location(line);
	}
	file = hdm_ruby.sourcefile();
	*line = file ? hdm_ruby.sourceline() : 0;
	return file;
}

/* the site of an allocation made now by this thread, called from caller */
static uint32_t site_now(uintptr_t caller, uint32_t *gen)
{
	/* rb_argv0: the frames rb_sourcefile walks exist (ruby_setup made
	 * none yet: it crashes there) */
	if (hdm_ruby.has_gvl && *hdm_ruby.argv0 && hdm_state == HDM_TRACKING &&
	    hdm_ruby.has_gvl()) {
		int line;
		const char *file = ruby_location(&line);
		size_t g = hdm_ruby.gc_count();

		hdm_gc_last = g;
		*gen = (uint32_t)g;
		if (file) {
			if (HDM_UNLIKELY(!ruby_seen)) {
				ruby_seen = 1;
				hdm_ruby_seen();
			}
			return site_ruby_cached(file, line);
		}
		return hdm_site_c(caller);
	}
	*gen = (uint32_t)hdm_gc_last;
	return hdm_site_c(caller);
}

static void track(void *p, size_t n, uintptr_t caller)
{
	uint32_t gen, site;

	if (!p)
		return;
	site = site_now(caller, &gen);
	if (site != UINT32_MAX)
		hdm_block_add((uintptr_t)p, n, site, gen);
}

static void untrack(void *p)
{
	struct hdm_block b;

	if (p && hdm_block_del((uintptr_t)p, &b))
		hdm_site_freed(b.site, b.size);
}

#define READY() (HDM_LIKELY(init_state == 2) || (hdm_init(), 1))
#define TRACKING() (hdm_state == HDM_TRACKING && !hdm_guard)
#define CALLER() ((uintptr_t)__builtin_return_address(0))

HDM_EXPORT void *malloc(size_t n)
{
	void *p;

	if (HDM_UNLIKELY(hdm_resolving))
		return boot_alloc(n, 16);
	READY();
	if (!TRACKING())
		return hdm_real.malloc(n);
	hdm_guard = 1;
	p = hdm_real.malloc(n);
	track(p, n, CALLER());
	hdm_guard = 0;
	return p;
}

HDM_EXPORT void *calloc(size_t k, size_t n)
{
	void *p;

	if (HDM_UNLIKELY(hdm_resolving)) {
		if (n && k > SIZE_MAX / n)
			return NULL;
		return boot_alloc(k * n, 16); /* static: zeroed */
	}
	READY();
	if (!TRACKING())
		return hdm_real.calloc(k, n);
	hdm_guard = 1;
	p = hdm_real.calloc(k, n);
	track(p, k * n, CALLER());
	hdm_guard = 0;
	return p;
}

HDM_EXPORT void free(void *p)
{
	if (!p || HDM_UNLIKELY(in_boot(p)))
		return;
	READY();
	if (!TRACKING()) {
		hdm_real.free(p);
		return;
	}
	hdm_guard = 1;
	untrack(p); /* before the real free: the address may come back at once */
	hdm_real.free(p);
	hdm_guard = 0;
}

HDM_EXPORT void *realloc(void *p, size_t n)
{
	struct hdm_block old;
	int had;
	void *q;

	if (HDM_UNLIKELY(hdm_resolving) || (p && HDM_UNLIKELY(in_boot(p)))) {
		if (!hdm_resolving)
			READY();
		q = hdm_resolving ? boot_alloc(n, 16) : malloc(n);
		if (q && p) {
			size_t m = boot_size(p);
			memcpy(q, p, m < n ? m : n);
		}
		return q;
	}
	READY();
	if (!TRACKING())
		return hdm_real.realloc(p, n);
	hdm_guard = 1;
	had = p ? hdm_block_del((uintptr_t)p, &old) : 0;
	q = hdm_real.realloc(p, n);
	if (!q && n) {
		/* failed: the old block lives on, still tracked */
		if (had)
			hdm_block_restore(&old);
	} else {
		/* a free of the old block, an allocation of the new one here */
		if (had)
			hdm_site_freed(old.site, old.size);
		if (q)
			track(q, n, CALLER());
	}
	hdm_guard = 0;
	return q;
}

HDM_EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
	int rc;

	if (HDM_UNLIKELY(hdm_resolving)) {
		*out = boot_alloc(n, align);
		return *out ? 0 : ENOMEM;
	}
	READY();
	if (!TRACKING())
		return hdm_real.posix_memalign(out, align, n);
	hdm_guard = 1;
	rc = hdm_real.posix_memalign(out, align, n);
	if (rc == 0)
		track(*out, n, CALLER());
	hdm_guard = 0;
	return rc;
}

/* the aligned allocations that libc may lack: through posix_memalign */
static void *aligned_via(void *(*fn)(size_t, size_t), size_t align, size_t n)
{
	void *p = NULL;

	if (fn)
		return fn(align, n);
	errno = hdm_real.posix_memalign(&p, align, n);
	return errno ? NULL : p;
}

HDM_EXPORT void *aligned_alloc(size_t align, size_t n)
{
	void *p;

	if (HDM_UNLIKELY(hdm_resolving))
		return boot_alloc(n, align);
	READY();
	if (!TRACKING())
		return aligned_via(hdm_real.aligned_alloc, align, n);
	hdm_guard = 1;
	p = aligned_via(hdm_real.aligned_alloc, align, n);
	track(p, n, CALLER());
	hdm_guard = 0;
	return p;
}

HDM_EXPORT void *memalign(size_t align, size_t n)
{
	void *p;

	if (HDM_UNLIKELY(hdm_resolving))
		return boot_alloc(n, align);
	READY();
	if (!TRACKING())
		return aligned_via(hdm_real.memalign, align, n);
	hdm_guard = 1;
	p = aligned_via(hdm_real.memalign, align, n);
	track(p, n, CALLER());
	hdm_guard = 0;
	return p;
}

static void *page_alloc(void *(*fn)(size_t), size_t n, int round)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	if (fn)
		return fn(n);
	if (round)
		n = (n + page - 1) & ~(page - 1);
	return aligned_via(hdm_real.memalign, page, n);
}

HDM_EXPORT void *valloc(size_t n)
{
	void *p;

	if (HDM_UNLIKELY(hdm_resolving))
		return boot_alloc(n, 4096);
	READY();
	if (!TRACKING())
		return page_alloc(hdm_real.valloc, n, 0);
	hdm_guard = 1;
	p = page_alloc(hdm_real.valloc, n, 0);
	track(p, n, CALLER());
	hdm_guard = 0;
	return p;
}

HDM_EXPORT void *pvalloc(size_t n)
{
	void *p;

	if (HDM_UNLIKELY(hdm_resolving))
		return boot_alloc(n, 4096);
	READY();
	if (!TRACKING())
		return page_alloc(hdm_real.pvalloc, n, 1);
	hdm_guard = 1;
	p = page_alloc(hdm_real.pvalloc, n, 1);
	track(p, n, CALLER());
	hdm_guard = 0;
	return p;
}

HDM_EXPORT size_t malloc_usable_size(void *p)
{
	if (!p)
		return 0;
	if (HDM_UNLIKELY(in_boot(p)))
		return boot_size(p);
	READY();
	return hdm_real.malloc_usable_size ? hdm_real.malloc_usable_size(p) : 0;
}

/* runs before main: resolves (if no allocation did yet), then starts
 * what the environment asks for (snapshot.c) */
__attribute__((constructor)) static void hdm_constructor(void)
{
	READY();
	hdm_start();
}
