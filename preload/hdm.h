/*
 * preload/hdm.h - internals shared by the files of libheapdump-malloc.so
 * (preload/README.md). Nothing here is public: the library exports the
 * malloc family and hd_malloc_snapshot, hd_malloc_active,
 * hd_malloc_next_path (snapshot.c); everything else is hidden.
 */
#ifndef HDM_H
#define HDM_H

#include <stddef.h>
#include <stdint.h>
#include <pthread.h>

#define HDM_TLS __thread __attribute__((tls_model("initial-exec")))
#define HDM_LIKELY(x) __builtin_expect(!!(x), 1)
#define HDM_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* the real allocator, found by dlsym(RTLD_NEXT) (hooks.c) */
struct hdm_real {
	void *(*malloc)(size_t);
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	void (*free)(void *);
	int (*posix_memalign)(void **, size_t, size_t);
	void *(*aligned_alloc)(size_t, size_t);
	void *(*memalign)(size_t, size_t);
	void *(*valloc)(size_t);
	void *(*pvalloc)(size_t);
	size_t (*malloc_usable_size)(void *);
};
extern struct hdm_real hdm_real;

/* Ruby's functions, looked up with dlsym(RTLD_DEFAULT): NULL outside Ruby */
struct hdm_ruby {
	int (*has_gvl)(void);		 /* ruby_thread_has_gvl_p */
	const char *(*sourcefile)(void); /* rb_sourcefile */
	int (*sourceline)(void);	 /* rb_sourceline */
	const char *(*location)(int *);	 /* rb_source_location_cstr, or NULL */
	size_t (*gc_count)(void);	 /* rb_gc_count */
	const char *version;		 /* ruby_version */
	volatile uintptr_t
		*argv0; /* rb_argv0: set once the VM runs (before: no frames) */
};
extern struct hdm_ruby hdm_ruby;

/* tracking state: what the wrappers do */
enum { HDM_OFF = 0, HDM_TRACKING = 1, HDM_STOPPED = 2 };
extern volatile int hdm_state;
extern char hdm_why[160];	    /* why nothing is tracked */
extern char hdm_allocator[32];	    /* glibc, jemalloc, tcmalloc, ... */
extern HDM_TLS int hdm_guard;	    /* this thread is inside the tracker */
extern volatile size_t hdm_gc_last; /* the last GC count read under the GVL */

/* sites (table.c) */
enum { HDM_KIND_C = 0, HDM_KIND_RUBY = 1 };
struct hdm_site {
	uint64_t hash;
	uintptr_t caller; /* kind c: the return address */
	const char *file; /* kind ruby: a copy (the site arena) */
	int line;
	int kind;
	/* counters, updated with atomics; live = allocated - freed
	 * (hdm_site_live): two atomic additions per malloc and per free */
	uint64_t allocs, frees, bytes_allocated, bytes_freed;
};
uint32_t hdm_site_ruby(const char *file, int line);
uint32_t hdm_site_c(uintptr_t caller);
struct hdm_site *hdm_site_at(uint32_t id);
uint32_t hdm_site_count(void);
void hdm_site_freed(uint32_t id, uint64_t size); /* a free of a block */
/* live bytes and blocks: frees read before allocations, never negative */
void hdm_site_live(struct hdm_site *s, int64_t *bytes, int64_t *blocks);

/* blocks (table.c): the side table, keyed by address */
struct hdm_block {
	uintptr_t addr; /* 0: empty slot */
	uint64_t size;
	uint32_t site;
	uint32_t gen;
};
void hdm_block_add(uintptr_t addr, size_t size, uint32_t site, uint32_t gen);
/* puts back a block hdm_block_del removed (a failed realloc), uncounted */
void hdm_block_restore(const struct hdm_block *b);
/* removes addr: 1 and *out filled if it was tracked */
int hdm_block_del(uintptr_t addr, struct hdm_block *out);
/* calls fn on every block, one stripe at a time under its lock (fn must
 * neither allocate nor take locks) */
void hdm_block_each(void (*fn)(const struct hdm_block *, void *), void *arg);
uint64_t hdm_block_count(void);
/* the table's own memory, which the leak scan must not read as roots */
int hdm_table_ranges(uintptr_t *lo, uintptr_t *hi, int max);
void hdm_table_lock_all(void);
void hdm_table_unlock_all(void);
void hdm_table_reset_locks(void);

/* memory for the tracker itself, never from the wrapped allocator */
void *hdm_map(size_t bytes);
void hdm_unmap(void *p, size_t bytes);

/* snapshot.c */
struct hdm_names; /* the name of every site, computed in the parent */
int hdm_write_snapshot(const char *path, const char *reason, int leakscan);
void hdm_start(void); /* the constructor's second half: env, thread, signal */
void hdm_ruby_seen(void); /* the first allocation under the GVL in Ruby code */

/* leakscan.c: runs in the forked child, writes its lines to fd */
int hdm_leakscan_child(int fd, const char *const *names, uint32_t nsites);

/* json.c: a buffered writer to a file descriptor, no allocation */
struct hdm_out {
	int fd;
	int err;
	size_t n;
	char buf[16384];
};
void hdm_out_init(struct hdm_out *o, int fd);
void hdm_out_raw(struct hdm_out *o, const char *s, size_t n);
void hdm_out_str(struct hdm_out *o, const char *s); /* raw, NUL-terminated */
void hdm_out_json(struct hdm_out *o,
		  const char *s); /* a quoted, escaped JSON string */
void hdm_out_u64(struct hdm_out *o, uint64_t v);
void hdm_out_i64(struct hdm_out *o, int64_t v);
void hdm_out_double(struct hdm_out *o, double v, int decimals);
int hdm_out_flush(struct hdm_out *o);

#endif
