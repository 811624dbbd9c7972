/*
 * hd_malloc.c - the gem's side of libheapdump-malloc.so (preload/): the
 * tracker is found with dlsym(RTLD_DEFAULT) when the process runs under
 * it (heapdump malloc -- ..., or LD_PRELOAD by hand); nothing is loaded.
 * HeapDump.malloc_snapshot, malloc_leakscan and the DUMP.malloc.ndjson of
 * HeapDump.dump are lib/heapdump.rb over these primitives.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "hd_ext.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>

typedef int (*snap_fn)(const char *, const char *, int);
typedef int (*active_fn)(void);
typedef int (*next_fn)(char *, size_t);

/* HeapDump._malloc_active? -> whether the tracker is loaded and tracking */
static VALUE malloc_active_m(VALUE self)
{
	active_fn f = (active_fn)dlsym(RTLD_DEFAULT, "hd_malloc_active");

	return f && f() ? Qtrue : Qfalse;
}

/* HeapDump._malloc_loaded? -> whether the tracker is in the process */
static VALUE malloc_loaded_m(VALUE self)
{
	return dlsym(RTLD_DEFAULT, "hd_malloc_snapshot") ? Qtrue : Qfalse;
}

/*
 * HeapDump._malloc_snapshot(path or nil, reason, leaks) -> path
 * The snapshot, written by the tracker (nil: its next default name);
 * raises Error when the tracker is absent or the write fails.
 */
static VALUE malloc_snapshot_m(VALUE self, VALUE path, VALUE reason,
			       VALUE leaks)
{
	snap_fn snap = (snap_fn)dlsym(RTLD_DEFAULT, "hd_malloc_snapshot");
	next_fn next = (next_fn)dlsym(RTLD_DEFAULT, "hd_malloc_next_path");
	char buf[PATH_MAX];
	const char *p;

	if (!snap)
		rb_raise(
			hdx_eError,
			"the malloc tracker is not loaded: run under heapdump malloc -- ...");
	if (NIL_P(path)) {
		if (!next || next(buf, sizeof buf) != 0)
			rb_raise(
				hdx_eError,
				"heapdump: the malloc tracker names no snapshot: %s",
				strerror(errno));
		path = rb_str_new_cstr(buf);
	}
	p = StringValueCStr(path);
	if (snap(p, StringValueCStr(reason), RTEST(leaks)) != 0)
		rb_raise(hdx_eError, "heapdump: cannot write %s: %s", p,
			 strerror(errno));
	return path;
}

/* HeapDump.malloc_library_path -> the libheapdump-malloc.so built and
 * installed beside this extension */
static VALUE malloc_library_path_m(VALUE self)
{
	Dl_info info;
	const char *slash;

	if (!dladdr((void *)malloc_library_path_m, &info) || !info.dli_fname)
		rb_raise(hdx_eError,
			 "heapdump: cannot find the extension's own path");
	slash = strrchr(info.dli_fname, '/');
	if (!slash)
		return rb_str_new_cstr("libheapdump-malloc.so");
	return rb_sprintf("%.*s/libheapdump-malloc.so",
			  (int)(slash - info.dli_fname), info.dli_fname);
}

void hdx_init_malloc(VALUE mod)
{
	rb_define_module_function(mod, "_malloc_active?", malloc_active_m, 0);
	rb_define_module_function(mod, "_malloc_loaded?", malloc_loaded_m, 0);
	rb_define_module_function(mod, "_malloc_snapshot", malloc_snapshot_m,
				  3);
	rb_define_module_function(mod, "malloc_library_path",
				  malloc_library_path_m, 0);
}
