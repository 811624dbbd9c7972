/*
 * hd_meta.c - HeapDump.process_memory and HeapDump._hostname: what the
 * sidecar file reports about the process beside the heap (RSS from
 * /proc, malloc statistics, the host it runs on); HeapDump._write_json,
 * the sidecar's writer: in C, so that a dump loads nothing (no json, no
 * lazy require) and leaves no object or call cache behind.
 */
#include "hd_ext.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#ifdef HAVE_MALLINFO2
#include <malloc.h>
#endif
#include <dlfcn.h>

#include "heapdump.h"

static void set(VALUE h, const char *key, unsigned long long v)
{
	rb_hash_aset(h, rb_str_new_cstr(key), ULL2NUM(v));
}

/* VmRSS, VmHWM... of /proc/self/status, in bytes */
static void proc_status(VALUE h)
{
	static const struct { const char *field, *key; } want[] = {
		{ "VmRSS:", "rss" }, { "VmHWM:", "rss_peak" },
		{ "VmSize:", "vsize" }, { "RssAnon:", "rss_anon" },
		{ "RssFile:", "rss_file" },
	};
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");
	size_t i;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
			size_t n = strlen(want[i].field);

			if (strncmp(line, want[i].field, n) == 0)
				set(h, want[i].key,
				    strtoull(line + n, NULL, 10) * 1024ULL);
		}
	}
	fclose(f);
}

static VALUE hdx_malloc_stats(void)
{
#ifdef HAVE_MALLINFO2
	struct mallinfo2 mi = mallinfo2();
	VALUE h = rb_hash_new();

	set(h, "arena", mi.arena);
	set(h, "mmap", mi.hblkhd);
	set(h, "in_use", mi.uordblks + mi.hblkhd);
	set(h, "free", mi.fordblks);
	set(h, "releasable", mi.keepcost);
	return h;
#else
	return Qnil;
#endif
}

/* :nodoc: {"rss" => bytes, ..., "malloc" => {...}} */
static VALUE process_memory_m(VALUE self)
{
	VALUE h = rb_hash_new();

	proc_status(h);
	rb_hash_aset(h, rb_str_new_cstr("malloc"), hdx_malloc_stats());
	return h;
}

/* ---- the whole process, for heapdump memory (issue 35 section 1) ---- */

typedef int (*mallctl_fn)(const char *, void *, size_t *, void *, size_t);

/* jemalloc's stats.allocated and stats.resident after an epoch refresh,
 * when jemalloc is the allocator (its mallctl found with dlsym): 1 */
static int jemalloc_stats(VALUE h)
{
	mallctl_fn ctl = (mallctl_fn)dlsym(RTLD_DEFAULT, "mallctl");
	uint64_t epoch = 1;
	size_t alloc = 0, active = 0, resident = 0, n = sizeof(size_t);

	if (!ctl)
		return 0;
	ctl("epoch", &epoch, &n, &epoch, sizeof(epoch));
	n = sizeof(size_t);
	if (ctl("stats.allocated", &alloc, &n, NULL, 0) != 0)
		return 0;
	n = sizeof(size_t);
	ctl("stats.active", &active, &n, NULL, 0);
	n = sizeof(size_t);
	ctl("stats.resident", &resident, &n, NULL, 0);
	rb_hash_aset(h, rb_str_new_cstr("mem_allocator"),
		     rb_str_new_cstr("jemalloc"));
	set(h, "mem_malloc_in_use", alloc);
	set(h, "mem_malloc_free", resident > alloc ? resident - alloc : 0);
	set(h, "mem_jemalloc_active", active);
	set(h, "mem_jemalloc_resident", resident);
	return 1;
}

static void malloc_figures(VALUE h)
{
#ifdef HAVE_MALLINFO2
	struct mallinfo2 mi;
#endif

	if (jemalloc_stats(h))
		return;
#ifdef HAVE_MALLINFO2
	mi = mallinfo2();
	rb_hash_aset(h, rb_str_new_cstr("mem_allocator"),
		     rb_str_new_cstr("glibc"));
	set(h, "mem_malloc_in_use", mi.uordblks + mi.hblkhd);
	set(h, "mem_malloc_free", mi.fordblks);
#endif
}

static size_t gc_stat(const char *key)
{
	return rb_gc_stat(ID2SYM(rb_intern(key)));
}

/* a Hash's Integer at a Symbol key, or 0 */
static size_t hash_size(VALUE hash, const char *key)
{
	VALUE v;

	if (!RB_TYPE_P(hash, T_HASH))
		return 0;
	v = rb_hash_lookup(hash, ID2SYM(rb_intern(key)));
	return RB_INTEGER_TYPE_P(v) ? NUM2SIZET(v) : 0;
}

/* GC.stat_heap(i) of every heap (size pool), nil where there is none */
static VALUE stat_heap(long i)
{
	if (!rb_respond_to(rb_mGC, rb_intern("stat_heap")))
		return Qnil;
	return rb_funcall(rb_mGC, rb_intern("stat_heap"), 1, LONG2NUM(i));
}

/* The Ruby heap: pages x page size, and the live slots' bytes: exact
 * where each heap gives its live slots (4.0), else the live slots at
 * the heaps' mean slot size (3.3, 3.4), or at the one slot size (3.1). */
static void ruby_heap(VALUE h)
{
	VALUE ic = rb_const_defined(rb_mGC, rb_intern("INTERNAL_CONSTANTS")) ?
		rb_const_get(rb_mGC, rb_intern("INTERNAL_CONSTANTS")) : Qnil;
	size_t page = hash_size(ic, "HEAP_PAGE_SIZE");
	size_t pools = hash_size(ic, "SIZE_POOL_COUNT");
	size_t live = gc_stat("heap_live_slots");
	size_t free_slots = gc_stat("heap_free_slots");
	size_t pages = gc_stat("heap_allocated_pages");
	size_t slot = hash_size(ic, "RVALUE_SIZE");
	size_t i, live_bytes = 0, slots = 0, slot_bytes = 0;
	int exact = 1;
	char sizes[128] = "";

	if (!pools)
		pools = hash_size(ic, "HEAP_COUNT");
	if (!slot)
		slot = hash_size(ic, "BASE_SLOT_SIZE");
	for (i = 0; i < pools; i++) {
		VALUE st = stat_heap((long)i);
		size_t sz = hash_size(st, "slot_size");
		size_t eden = hash_size(st, "heap_eden_slots");
		VALUE lv = RB_TYPE_P(st, T_HASH) ?
			rb_hash_lookup(st, ID2SYM(rb_intern("heap_live_slots"))) :
			Qnil;
		size_t l = strlen(sizes);

		if (!sz)
			break;
		snprintf(sizes + l, sizeof(sizes) - l, "%s%zu", l ? "," : "", sz);
		slots += eden;
		slot_bytes += eden * sz;
		if (RB_INTEGER_TYPE_P(lv)) {
			live_bytes += NUM2SIZET(lv) * sz;
		} else {
			exact = 0;
		}
	}
	if (!i || !exact) {
		/* one heap, or heaps without their live count */
		live_bytes = slots && i > 1 ?
			(size_t)((double)live * (double)slot_bytes / (double)slots) :
			live * slot;
		exact = i <= 1;
	}
	if (!sizes[0])
		snprintf(sizes, sizeof(sizes), "%zu", slot);
	set(h, "mem_heap_pages", pages);
	set(h, "mem_heap_page_size", page);
	set(h, "mem_heap_bytes", pages * page);
	set(h, "mem_live_slots", live);
	set(h, "mem_free_slots", free_slots);
	set(h, "mem_live_slot_bytes", live_bytes);
	rb_hash_aset(h, rb_str_new_cstr("mem_slot_sizes"), rb_str_new_cstr(sizes));
	rb_hash_aset(h, rb_str_new_cstr("mem_live_slot_bytes_exact"),
		     exact ? Qtrue : Qfalse);
}

/* YJIT's code region and its own allocations, when YJIT is enabled */
static void jit(VALUE h)
{
	VALUE vm, yjit, st;

	if (!rb_const_defined(rb_cObject, rb_intern("RubyVM")))
		return;
	vm = rb_const_get(rb_cObject, rb_intern("RubyVM"));
	if (!rb_const_defined(vm, rb_intern("YJIT")))
		return;
	yjit = rb_const_get(vm, rb_intern("YJIT"));
	if (!RTEST(rb_funcall(yjit, rb_intern("enabled?"), 0)))
		return;
	st = rb_funcall(yjit, rb_intern("runtime_stats"), 0);
	if (!RB_TYPE_P(st, T_HASH))
		return;
	rb_hash_aset(h, rb_str_new_cstr("mem_jit"), rb_str_new_cstr("yjit"));
	set(h, "mem_jit_code", hash_size(st, "code_region_size"));
	set(h, "mem_jit_alloc", hash_size(st, "yjit_alloc_size"));
}

/* :nodoc: the sidecar's mem_* keys (man 5 heapdump-dump): /proc
 * (hd_memory_probe), malloc, the Ruby heap, JIT */
static VALUE memory_m(VALUE self)
{
	VALUE h = rb_hash_new();
	hd_memory_proc p;
	hd_error err;

	(void)self;
	set(h, "heapdump_memory", 1);
	if (hd_memory_probe(&p, 0, &err) == 0) {
		rb_hash_aset(h, rb_str_new_cstr("mem_source"),
			     rb_str_new_cstr(p.source));
		set(h, "mem_rss", p.rss);
		set(h, "mem_anon", p.anon);
		set(h, "mem_file", p.file);
		set(h, "mem_shmem", p.shmem);
		if (p.has_stacks) {
			set(h, "mem_stacks", p.stacks);
			set(h, "mem_stack_count", p.stack_count);
		}
	}
	malloc_figures(h);
	ruby_heap(h);
	jit(h);
	return h;
}

/* :nodoc: gethostname(2), or nil */
static VALUE hostname_m(VALUE self)
{
	char buf[256];

	(void)self;
	if (gethostname(buf, sizeof(buf)) != 0)
		return Qnil;
	buf[sizeof(buf) - 1] = '\0';
	return rb_str_new_cstr(buf);
}

#define HD_JSON_DEPTH 16

static int put_value(struct hdx_out *o, VALUE v, int depth);

static void put_string(struct hdx_out *o, VALUE s)
{
	if (RB_TYPE_P(s, T_SYMBOL))
		s = rb_sym2str(s);
	hdx_put_json(o, RSTRING_PTR(s), (size_t)RSTRING_LEN(s));
}

static void put_float(struct hdx_out *o, double x)
{
	char b[32];

	if (!isfinite(x)) {
		HD_PUTS(o, "null");
		return;
	}
	snprintf(b, sizeof(b), "%.17g", x);
	hdx_put_cstr(o, b);
	if (!strpbrk(b, ".eE"))
		HD_PUTS(o, ".0");
}

struct put_pair {
	struct hdx_out *o;
	int depth, n, bad;
};

static int put_pair_i(VALUE k, VALUE v, VALUE arg)
{
	struct put_pair *p = (struct put_pair *)arg;

	if (!RB_TYPE_P(k, T_STRING) && !RB_TYPE_P(k, T_SYMBOL)) {
		p->bad = 1;
		return ST_STOP;
	}
	if (p->n++)
		HD_PUTS(p->o, ",");
	put_string(p->o, k);
	HD_PUTS(p->o, ":");
	if (put_value(p->o, v, p->depth)) {
		p->bad = 1;
		return ST_STOP;
	}
	return ST_CONTINUE;
}

/* 0, or -1 for a value JSON cannot hold as the sidecar wants it */
static int put_value(struct hdx_out *o, VALUE v, int depth)
{
	long i;

	if (depth >= HD_JSON_DEPTH)
		return -1;
	if (NIL_P(v)) {
		HD_PUTS(o, "null");
	} else if (v == Qtrue) {
		HD_PUTS(o, "true");
	} else if (v == Qfalse) {
		HD_PUTS(o, "false");
	} else if (FIXNUM_P(v)) {
		hdx_put_i64(o, (int64_t)FIX2LONG(v));
	} else if (RB_TYPE_P(v, T_BIGNUM)) {
		VALUE s = rb_big2str(v, 10);

		hdx_put(o, RSTRING_PTR(s), (size_t)RSTRING_LEN(s));
	} else if (RB_FLOAT_TYPE_P(v)) {
		put_float(o, rb_float_value(v));
	} else if (RB_TYPE_P(v, T_STRING) || RB_TYPE_P(v, T_SYMBOL)) {
		put_string(o, v);
	} else if (RB_TYPE_P(v, T_ARRAY)) {
		HD_PUTS(o, "[");
		for (i = 0; i < RARRAY_LEN(v); i++) {
			if (i)
				HD_PUTS(o, ",");
			if (put_value(o, RARRAY_AREF(v, i), depth + 1))
				return -1;
		}
		HD_PUTS(o, "]");
	} else if (RB_TYPE_P(v, T_HASH)) {
		struct put_pair p = { o, depth + 1, 0, 0 };

		HD_PUTS(o, "{");
		rb_hash_foreach(v, put_pair_i, (VALUE)&p);
		if (p.bad)
			return -1;
		HD_PUTS(o, "}");
	} else {
		return -1;
	}
	return 0;
}

/* Writes value as one JSON line to fd and closes fd: 0, an errno, or -1
 * for a value JSON cannot hold as the sidecar wants it (nothing is
 * written then). */
static int write_json_fd(int fd, VALUE value)
{
	struct hdx_out o;
	int err, bad;

	if ((err = hdx_out_open(&o, fd, 0))) {
		close(fd);
		return err;
	}
	bad = put_value(&o, value, 0);
	HD_PUTS(&o, "\n");
	if (bad)
		o.len = 0;
	err = hdx_out_close(&o);
	return bad ? -1 : err;
}

static void json_fail(int err)
{
	if (err < 0)
		rb_raise(rb_eTypeError, "heapdump: the sidecar holds a value JSON cannot write");
	rb_syserr_fail(err, "heapdump: cannot write the sidecar");
}

/* :nodoc: _write_json(fd, value): writes value (Hash, Array, String,
 * Symbol, Integer, Float, true, false, nil; keys Strings or Symbols) as
 * one JSON line to fd, which it closes. Strings are escaped as the dump's
 * are (bytes that are not valid UTF-8 become \u00XX). No require "json":
 * the sidecar must not load code into the heap it describes. */
static VALUE write_json_m(VALUE self, VALUE fd, VALUE value)
{
	int err;

	(void)self;
	err = write_json_fd(NUM2INT(fd), value);
	RB_GC_GUARD(value);
	if (err)
		json_fail(err);
	return Qnil;
}

static VALUE str_at(VALUE a, long i)
{
	VALUE v = rb_ary_entry(a, i);

	return NIL_P(v) ? v : StringValue(v);
}

/* After the walk, still inside _dump (hd_dump.c): the sidecar and the
 * renames, with no Ruby method call, no constant read and no require, so
 * that the Ruby code a dump runs after its walk is none, and nothing it
 * made (call caches, constant caches, loaded code) is new in the next
 * dump. finish: [sidecar fd, doc, sidecar tmp, sidecar path, dump tmp,
 * dump path] (sfd, its fd, which this closes); doc, a Hash that already has each totals key (nil), gets
 * the totals; a nil sidecar tmp: the sidecar fd is written in place.
 * The dump is renamed into place last; if that fails, the sidecar is
 * removed. rename(2) replaces whatever is at the final names (a link
 * that another user planted there since is replaced, never followed);
 * the temporary files were made O_CREAT|O_EXCL, 0600, under random names
 * (lib/heapdump.rb's create_temp), and output_target judged the final
 * names before the walk (a link of ours followed only at a name given;
 * another user's link or special file in a shared directory refused). Raises on a failure (the caller removes the temporary
 * files). */
void hdx_sidecar_finish(VALUE finish, int sfd, const struct hdx_totals *t)
{
	VALUE doc, stmp, spath, dtmp, dpath;
	int err;

	doc = rb_ary_entry(finish, 1);
	if (!RB_TYPE_P(doc, T_HASH)) {
		close(sfd);
		rb_raise(rb_eTypeError, "heapdump: the sidecar must be a Hash");
	}
	rb_hash_aset(doc, rb_str_new_cstr("objects"), ULL2NUM(t->objects));
	rb_hash_aset(doc, rb_str_new_cstr("roots"), ULL2NUM(t->roots));
	rb_hash_aset(doc, rb_str_new_cstr("dump_memsize"), ULL2NUM(t->memsize));
	rb_hash_aset(doc, rb_str_new_cstr("memsize_of_all"),
		     ULL2NUM(t->memsize_of_all));
	rb_hash_aset(doc, rb_str_new_cstr("dump_bytes"), ULL2NUM(t->bytes));
	if ((err = write_json_fd(sfd, doc)))
		json_fail(err);
	stmp = str_at(finish, 2);
	spath = str_at(finish, 3);
	dtmp = str_at(finish, 4);
	dpath = str_at(finish, 5);
	if (!NIL_P(stmp) &&
	    rename(StringValueCStr(stmp), StringValueCStr(spath)) != 0)
		rb_syserr_fail_str(errno, spath);
	if (rename(StringValueCStr(dtmp), StringValueCStr(dpath)) != 0) {
		err = errno;
		if (!NIL_P(stmp))
			unlink(StringValueCStr(spath));
		rb_syserr_fail_str(err, dpath);
	}
	RB_GC_GUARD(finish);
}

/*
 * When the extension loads: every name _memory looks up (some are no
 * Symbol yet on a given Ruby: "stat_heap" on 3.1, "RVALUE_SIZE" on 3.4),
 * and GC.stat_heap's own keys, which MRI interns on its first call.
 * Made by the first HeapDump.dump instead, their Symbols and names would
 * be new in the next dump and alive ever after (tests/ext/quiet.sh).
 */
static void memory_names(void)
{
	static const char *const names[] = {
		"BASE_SLOT_SIZE", "HEAP_COUNT", "HEAP_PAGE_SIZE",
		"INTERNAL_CONSTANTS", "RVALUE_SIZE", "SIZE_POOL_COUNT",
		"RubyVM", "YJIT", "code_region_size", "enabled?",
		"heap_allocated_pages", "heap_eden_slots", "heap_free_slots",
		"heap_live_slots", "runtime_stats", "slot_size", "stat_heap",
		"yjit_alloc_size", NULL
	};
	size_t i;

	for (i = 0; names[i]; i++)
		rb_intern(names[i]);
	if (rb_respond_to(rb_mGC, rb_intern("stat_heap")))
		rb_funcall(rb_mGC, rb_intern("stat_heap"), 0);
}

void hdx_init_meta(VALUE mod)
{
	memory_names();
	rb_define_module_function(mod, "_write_json", write_json_m, 2);
	rb_define_module_function(mod, "process_memory", process_memory_m, 0);
	rb_define_module_function(mod, "_hostname", hostname_m, 0);
	rb_define_module_function(mod, "_memory", memory_m, 0);
}
