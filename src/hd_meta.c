/*
 * hd_meta.c - HeapDump.process_memory and HeapDump._hostname: what the
 * sidecar file reports about the process beside the heap (RSS from
 * /proc, malloc statistics, the host it runs on).
 */
#include "hd_ext.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#ifdef HAVE_MALLINFO2
#include <malloc.h>
#endif

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

void hdx_init_meta(VALUE mod)
{
	rb_define_module_function(mod, "process_memory", process_memory_m, 0);
	rb_define_module_function(mod, "_hostname", hostname_m, 0);
}
