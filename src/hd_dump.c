/*
 * hd_dump.c - HeapDump._dump: ROOT lines, SHAPE lines when asked, then
 * one line per heap slot, in the record format of the running Ruby's
 * ObjectSpace.dump_all (its fields and their order: HD_V, the Ruby's
 * major * 100 + minor, picks 3.1's, 3.3's, 3.4's or 4.0's), but with
 * every string JSON-escaped. Only public headers and exported functions
 * (hd_ext.h); the fields dump_all reads from private layouts are left
 * out (man 5 heapdump-dump). Built only where extconf.rb defines
 * HD_WALKER (the Rubies the walk is known to match); elsewhere
 * lib/heapdump.rb falls back to ObjectSpace.dump_all.
 *
 * Inside the walk nothing allocates a Ruby object, raises or calls Ruby
 * code: state lives in struct hdx_dump, errors are kept and raised after.
 *
 * A dump does not change the heap it measures (issue 34; tests/ext/
 * quiet.sh, traced and not, on every Ruby): a program that only dumps
 * three times has nothing new to report. So nothing is required at call
 * time (the sidecar is written by _write_json, in C, not by json);
 * what MRI makes once and keeps (GC.stat's key names, the flag names,
 * the self check's interned names, the TracePoints) is made when the gem
 * loads; everything after the walk (sidecar, renames) runs in C inside
 * _dump, since Ruby code first run after a walk leaves call and constant
 * caches that are new in the next dump; the random parts of the names
 * come from Random.urandom, not rand (whose first call seeds, and keeps,
 * the default generator). What the call allocates before its walk is
 * left out (the quiet window below); the dump_all fallback cannot leave
 * anything out. The path the call returns is made before the window and
 * frozen at once (on 3.1 File.exist? would give it a frozen copy to
 * share its bytes with, made inside the call, left out of this dump and
 * found alive in the next one when the caller keeps the path: quiet.sh's
 * "kept" mode).
 *
 * Against dump_all (tests/ext/compare.rb, every Ruby: both dumps of one
 * heap, one after the other with GC disabled): the same objects, fields,
 * values and order, except, each asserted with its bound, the objects
 * made after our walk (only in dump_all's file, <= 300, and the shapes
 * made in between, <= 50); fewer than 100 objects (classes, call caches,
 * iseqs, strings) changed between the two walks by method caches and a
 * string's lazy coderange; the fields read from private structures;
 * strings escaped everywhere (bytes not valid UTF-8 as \u00XX). When
 * only ObjectSpace.trace_object_allocations is on, the dump is dump_all's
 * (it alone reads objspace's table), said once on stderr.
 *
 * Outputs: only a regular file (or a new name) gets temp + rename (a link
 * at the name is replaced by rename(2), never followed); a device, FIFO
 * or socket is written in place, without a sidecar; a symlink the caller
 * names is followed, never replaced (the sidecar goes beside the name
 * given). A failed dump removes its sidecar.
 */
#include "hd_ext.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

const char *hdx_type_name(int type)
{
	switch (type) {
#define T(n) case RUBY_T_##n: return #n;
	T(NONE) T(OBJECT) T(CLASS) T(ICLASS) T(MODULE) T(FLOAT) T(STRING)
	T(REGEXP) T(ARRAY) T(HASH) T(STRUCT) T(BIGNUM) T(FILE) T(DATA)
	T(MATCH) T(SYMBOL) T(RATIONAL) T(COMPLEX) T(IMEMO) T(NODE) T(ZOMBIE)
	T(NIL) T(TRUE) T(FALSE) T(FIXNUM) T(UNDEF)
#undef T
	default: return "UNKNOWN";
	}
}

#ifdef HD_WALKER

#define MAX_FLAGS 16

struct hdx_dump {
	struct hdx_out out;
	VALUE klass;              /* class of the current object (skipped) */
	size_t nrefs;             /* references written for it */
	const char *root;         /* open ROOT category, or NULL */
	int full;
	size_t since;
	const char *imemo;        /* IMEMO type name of the current object */
	VALUE shapes;             /* SHAPE lines to write, or Qnil */
	ID flag_id[MAX_FLAGS];    /* cache: GC flag ids and their names */
	const char *flag_name[MAX_FLAGS];
	size_t flag_len[MAX_FLAGS];
	int nflag;
	struct hdx_names *names;  /* ref_names wanted: hd_refnames.c, else NULL */
	struct hdx_eph *eph;      /* WeakKeyMaps' values by key, or NULL */
	VALUE *refs;              /* the references written for the record */
	size_t nref, refcap;
	int keep;                 /* the current record's references are kept */
	VALUE obj;                /* the current object, and its type */
	int type;
	const uint64_t *bloom;    /* hdx_names_bloom */
	int nomem;
	int versioned;            /* "ruby_version" written */
	/* totals, for the sidecar */
	uint64_t objects, roots, memsize, memsize_of_all;
};

/* ', "type":"STRING"' with lengths computed once */
static void put_type(struct hdx_out *o, int type)
{
	static char text[0x20][40];
	static size_t len[0x20];
	int t = type & 0x1f;

	if (!len[t])
		len[t] = (size_t)snprintf(text[t], sizeof(text[t]),
					  ", \"type\":\"%s\"",
					  hdx_type_name(type));
	hdx_put(o, text[t], len[t]);
}

/* The objects HeapDump.dump allocated itself before its walk (its
 * options, the meta Hash, the paths, the names the sidecar wants...):
 * temporaries the walk leaves out, as the names' preparation's, so that
 * a dump shows the program's heap and not the call that dumps it (a
 * temporary of one call at the address of another's would be taken for
 * an object alive in both dumps). Recorded by a NEWOBJ hook between
 * _quiet_begin and the walk's end, malloc only; the VM's caches and
 * tables it makes are kept in the dump (hdx_vm_cache_p, asked in the
 * walk: they outlive the call). */
static struct {
	VALUE tp;
	VALUE thread; /* the dumping thread: other threads' objects are theirs */
	int on, err;
	struct hdx_table objs;
	uint64_t bloom[HD_BLOOM_WORDS];
} quiet;

static void quiet_newobj_i(VALUE tpval, void *data)
{
	VALUE obj = rb_tracearg_object(rb_tracearg_from_tracepoint(tpval));
	size_t b;

	(void)data;
	if (!quiet.on || rb_thread_current() != quiet.thread)
		return; /* (not hdx_vm_cache_p here: a T_DATA's type is not set yet) */
	if (!hdx_table_put(&quiet.objs, obj)) {
		quiet.err = 1;
		return;
	}
	b = HD_BLOOM_BIT(obj);
	quiet.bloom[b / 64] |= 1ULL << (b % 64);
}

static void quiet_stop(void)
{
	if (quiet.on)
		rb_tracepoint_disable(quiet.tp);
	quiet.on = 0;
}

static void quiet_end(void)
{
	quiet_stop();
	hdx_table_free(&quiet.objs);
	memset(&quiet.objs, 0, sizeof(quiet.objs));
	quiet.err = 0;
}

/* :nodoc: _quiet_begin: what this thread allocates from now until the
 * next _dump's walk is done is left out of that dump (not what other
 * threads allocate meanwhile: the application's, which may persist) */
static VALUE quiet_begin_m(VALUE self)
{
	(void)self;
	quiet_end();
	memset(quiet.bloom, 0, sizeof(quiet.bloom));
	if (hdx_table_init(&quiet.objs, 256))
		rb_raise(rb_eNoMemError, "heapdump: no memory");
	quiet.thread = rb_thread_current();
	quiet.on = 1;
	rb_tracepoint_enable(quiet.tp);
	return Qnil;
}

/* :nodoc: _quiet_end: forgets them (a dump that failed, or the
 * dump_all fallback, which cannot leave anything out) */
static VALUE quiet_end_m(VALUE self)
{
	(void)self;
	quiet_end();
	return Qnil;
}

static inline int quiet_p(VALUE v)
{
	size_t b;

	if (!quiet.objs.cap)
		return 0;
	b = HD_BLOOM_BIT(v);
	return (quiet.bloom[b / 64] & (1ULL << (b % 64))) &&
	       hdx_table_get(&quiet.objs, v) != NULL && !hdx_vm_cache_p(v);
}

/* An object the names' preparation or the dump call allocated (left
 * out), or not. */
static inline int own(const struct hdx_dump *d, VALUE v)
{
	size_t b;

	if (quiet_p(v))
		return 1;
	if (!d->names)
		return 0;
	b = HD_BLOOM_BIT(v);
	return (d->bloom[b / 64] & (1ULL << (b % 64))) &&
	       hdx_names_own_p(d->names, v);
}

/* Keeps a written reference for ref_names (names wanted only). */
static void grow_refs(struct hdx_dump *d, VALUE ref)
{
	size_t c = d->refcap ? d->refcap * 2 : 256;
	VALUE *p = realloc(d->refs, c * sizeof(*p));

	if (!p) {
		d->nomem = 1;
		return;
	}
	d->refs = p;
	d->refcap = c;
	d->refs[d->nref++] = ref;
}

static inline void keep_ref(struct hdx_dump *d, VALUE ref)
{
	if (RB_LIKELY(d->nref < d->refcap))
		d->refs[d->nref++] = ref;
	else
		grow_refs(d, ref);
}

/* ---- ROOT lines ---- */

static int global_root(const char *category)
{
	return !strcmp(category, "global_tbl");
}

static void close_root(struct hdx_dump *d)
{
	HD_PUTS(&d->out, "]");
	if (d->names && global_root(d->root) && !d->nomem)
		hdx_names_write(d->names, &d->out, d->refs, d->nref, 1);
	/* the exact Ruby, on the first ROOT record: the dump's own features
	 * tell only a range (man 5 heapdump-dump, "ruby_version") */
	if (!d->versioned) {
		HD_PUTS(&d->out, ", \"ruby_version\":");
		hdx_put_json(&d->out, ruby_version, strlen(ruby_version));
		d->versioned = 1;
	}
	HD_PUTS(&d->out, "}\n");
}

static void root_i(const char *category, VALUE ref, void *data)
{
	struct hdx_dump *d = data;

	if (own(d, ref))
		return;
	if (d->root != category) {
		if (d->root)
			close_root(d);
		HD_PUTS(&d->out, "{\"type\":\"ROOT\", \"root\":");
		hdx_put_json(&d->out, category, strlen(category));
		HD_PUTS(&d->out, ", \"references\":[");
		d->root = category;
		d->nref = 0;
	} else {
		HD_PUTS(&d->out, ", ");
	}
	hdx_put_addr(&d->out, ref);
	if (d->names && global_root(category))
		keep_ref(d, ref);
	d->roots++;
}

static void dump_roots(struct hdx_dump *d)
{
	rb_objspace_reachable_objects_from_root(root_i, d);
	if (d->root)
		close_root(d);
}

/* ---- type-specific fields ---- */

/* STR_SHARED_P: a heap (noembed) string whose STR_SHARED bit is set. MRI
 * defines STR_SHARED as ELTS_SHARED, the public RUBY_ELTS_SHARED of the
 * same Ruby (FL_USER2 up to 3.3, FL_USER0 from 3.4); hdx_self_check and
 * tests/ext/compare.rb prove it on each Ruby. Embedded strings keep
 * their length in those bits. */
static int str_shared(VALUE str)
{
	return RB_FL_TEST_RAW(str, RSTRING_NOEMBED) &&
	       RB_FL_TEST_RAW(str, RUBY_ELTS_SHARED);
}

static void put_rstring(struct hdx_out *o, VALUE str)
{
	hdx_put_json(o, RSTRING_PTR(str), (size_t)RSTRING_LEN(str));
}

static void capacity_field(struct hdx_out *o, VALUE str, long len)
{
	if (!str_shared(str) && RB_FL_TEST_RAW(str, RSTRING_NOEMBED) &&
	    (long)rb_str_capacity(str) != len) {
		HD_PUTS(o, ", \"capacity\":");
		hdx_put_u64(o, rb_str_capacity(str));
	}
}

#if HD_V >= 302
static int ascii_only(const char *s, long n)
{
	long i;

	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] & 0x80)
			return 0;
	return 1;
}

/* bytesize, capacity, value (3.2+): the cached coderange, never computed
 * (computing it would change the heap), or a scan when it is unknown */
static void string_content(struct hdx_out *o, VALUE str)
{
	long len = RSTRING_LEN(str);
	int cr;

	HD_PUTS(o, ", \"bytesize\":");
	hdx_put_u64(o, (uint64_t)len);
	capacity_field(o, str, len);
	if (!len || !rb_enc_asciicompat(rb_enc_from_index(ENCODING_GET(str))))
		return;
	cr = RB_ENC_CODERANGE(str);
	if (cr == RUBY_ENC_CODERANGE_UNKNOWN &&
	    ascii_only(RSTRING_PTR(str), len))
		cr = RUBY_ENC_CODERANGE_7BIT;
	if (cr == RUBY_ENC_CODERANGE_7BIT) {
		HD_PUTS(o, ", \"value\":");
		put_rstring(o, str);
	}
}

static void coderange_field(struct hdx_out *o, VALUE str)
{
	switch (RB_ENC_CODERANGE(str)) {
	case RUBY_ENC_CODERANGE_7BIT:
		HD_PUTS(o, ", \"coderange\":\"7bit\"");
		break;
	case RUBY_ENC_CODERANGE_VALID:
		HD_PUTS(o, ", \"coderange\":\"valid\"");
		break;
	case RUBY_ENC_CODERANGE_BROKEN:
		HD_PUTS(o, ", \"coderange\":\"broken\"");
		break;
	default:
		HD_PUTS(o, ", \"coderange\":\"unknown\"");
		break;
	}
}
#else
/* bytesize, capacity, value (3.0, 3.1): value only for 7-bit content */
static void string_content(struct hdx_out *o, VALUE str)
{
	long len = RSTRING_LEN(str);

	HD_PUTS(o, ", \"bytesize\":");
	hdx_put_u64(o, (uint64_t)len);
	capacity_field(o, str, len);
	if (rb_enc_str_coderange(str) == ENC_CODERANGE_7BIT) {
		HD_PUTS(o, ", \"value\":");
		put_rstring(o, str);
	}
}
#endif

static void encoding_field(struct hdx_out *o, VALUE str)
{
	if (!ENCODING_IS_ASCII8BIT(str)) {
		HD_PUTS(o, ", \"encoding\":\"");
		hdx_put_cstr(o, rb_enc_name(rb_enc_from_index(ENCODING_GET(str))));
		HD_PUTS(o, "\"");
	}
}

static void string_fields(struct hdx_out *o, VALUE str)
{
	if (!RB_FL_TEST_RAW(str, RSTRING_NOEMBED))
		HD_PUTS(o, ", \"embedded\":true");
#if HD_V < 302
	if (rb_enc_str_coderange(str) == ENC_CODERANGE_BROKEN)
		HD_PUTS(o, ", \"broken\":true");
#endif
	if (RB_FL_TEST_RAW(str, RSTRING_FSTR))
		HD_PUTS(o, ", \"fstring\":true");
#if HD_V >= 304
	if (RB_FL_TEST_RAW(str, HD_STR_CHILLED))
		HD_PUTS(o, ", \"chilled\":true");
#endif
	if (str_shared(str))
		HD_PUTS(o, ", \"shared\":true");
	else
		string_content(o, str);
	encoding_field(o, str);
#if HD_V >= 302
	coderange_field(o, str);
	if (RB_ENC_CODERANGE(str) == RUBY_ENC_CODERANGE_BROKEN)
		HD_PUTS(o, ", \"broken\":true");
#endif
}

/* A Hash's default proc: MRI marks ifnone after the entries, so it is
 * the last reference of a hash whose RHASH_PROC_DEFAULT bit is set
 * (no copy of struct RHash, whose layout changes between versions). */
static void last_ref_i(VALUE ref, void *data)
{
	*(VALUE *)data = ref;
}

static void hash_fields(struct hdx_out *o, VALUE h)
{
	HD_PUTS(o, ", \"size\":");
	hdx_put_u64(o, RHASH_SIZE(h));
	if (RB_FL_TEST_RAW(h, HD_HASH_PROC_DEFAULT)) {
		VALUE last = 0;

		rb_objspace_reachable_objects_from(h, last_ref_i, &last);
		if (last) {
			HD_PUTS(o, ", \"default\":");
			hdx_put_addr(o, last);
		}
	}
}

static void array_fields(struct hdx_out *o, VALUE a)
{
	long len = RARRAY_LEN(a);

	HD_PUTS(o, ", \"length\":");
	hdx_put_u64(o, (uint64_t)len);
	if (len > 0 && RB_FL_TEST_RAW(a, RUBY_ELTS_SHARED))
		HD_PUTS(o, ", \"shared\":true");
#if HD_V >= 302
	if (RB_FL_TEST_RAW(a, RARRAY_EMBED_FLAG))
#else
	if (len > 0 && RB_FL_TEST_RAW(a, RARRAY_EMBED_FLAG))
#endif
		HD_PUTS(o, ", \"embedded\":true");
}

static void superclass_field(struct hdx_out *o, VALUE klass)
{
	VALUE super = rb_class_get_superclass(klass);

	if (super && !RB_SPECIAL_CONST_P(super)) {
		HD_PUTS(o, ", \"superclass\":");
		hdx_put_addr(o, super);
	}
}

/* singleton: FL_SINGLETON of the public headers, on classes only from
 * 3.4 (RCLASS_SINGLETON_P); 4.0 exports the test */
static int singleton_p(VALUE mod)
{
#if defined(HAVE_RB_CLASS_SINGLETON_P)
	return rb_class_singleton_p(mod) != 0;
#elif HD_V >= 304
	return RB_BUILTIN_TYPE(mod) == RUBY_T_CLASS &&
	       RB_FL_TEST_RAW(mod, RUBY_FL_SINGLETON);
#else
	return RB_FL_TEST_RAW(mod, RUBY_FL_SINGLETON) != 0;
#endif
}

static void module_fields(struct hdx_dump *d, VALUE mod)
{
	struct hdx_out *o = &d->out;
	VALUE name;

	superclass_field(o, mod);
	if (!d->klass)
		return;
	name = rb_mod_name(mod);
	if (RB_TYPE_P(name, T_STRING)) {
		HD_PUTS(o, ", \"name\":");
		put_rstring(o, name);
	} else {
		VALUE real = rb_class_real(mod);

		name = real ? rb_mod_name(real) : Qnil;
		if (RB_TYPE_P(name, T_STRING)) {
			HD_PUTS(o, ", \"real_class_name\":");
			put_rstring(o, name);
		}
	}
	if (singleton_p(mod))
		HD_PUTS(o, ", \"singleton\":true");
}

/* %#g; up to 3.1 with Ruby's own printf's spellings of the non-finite
 * values, from 3.2 C's */
static void put_g(struct hdx_out *o, double v)
{
	char b[64];
	int n;

#if HD_V < 302
	if (isnan(v))
		n = snprintf(b, sizeof(b), "NaN");
	else if (isinf(v))
		n = snprintf(b, sizeof(b), "%sInf", v < 0 ? "-" : "");
	else
#endif
		n = snprintf(b, sizeof(b), "%#g", v);
	hdx_put(o, b, (size_t)n);
}

static void float_field(struct hdx_out *o, VALUE f)
{
	HD_PUTS(o, ", \"value\":\"");
	put_g(o, RFLOAT_VALUE(f));
	HD_PUTS(o, "\"");
}

static void data_fields(struct hdx_out *o, VALUE obj)
{
	if (RTYPEDDATA_P(obj) && RTYPEDDATA_TYPE(obj)->wrap_struct_name) {
		HD_PUTS(o, ", \"struct\":\"");
		hdx_put_cstr(o, RTYPEDDATA_TYPE(obj)->wrap_struct_name);
		HD_PUTS(o, "\"");
	}
}

#ifdef HAVE_RB_GC_OBJECT_METADATA
static ID id_object_id;

static int has_object_id(VALUE obj)
{
	const struct hdx_gc_meta *m = rb_gc_object_metadata(obj);
	ID id = id_object_id; /* interned by hdx_init_dump */

	for (; m->name; m++)
		if (m->name == id)
			return 1;
	return 0;
}
#endif

static void object_fields(struct hdx_out *o, VALUE obj)
{
	size_t n;

#if HD_V >= 400
	if (!RB_FL_TEST_RAW(obj, ROBJECT_HEAP))
		HD_PUTS(o, ", \"embedded\":true");
#elif HD_V >= 302
	if (RB_FL_TEST_RAW(obj, ROBJECT_EMBED))
		HD_PUTS(o, ", \"embedded\":true");
#endif
#if HD_V >= 302
	n = rb_ivar_count(obj);
#ifdef HAVE_RB_GC_OBJECT_METADATA
	n += has_object_id(obj); /* the id is a field, rb_ivar_count skips it */
#endif
#else
	n = ROBJECT_NUMIV(obj);
#endif
	HD_PUTS(o, ", \"ivars\":");
	hdx_put_u64(o, n);
	if (hdx_too_complex(obj))
		HD_PUTS(o, ", \"too_complex_shape\":true");
}

/* fd, read from rb_io_t as dump_all does: rb_io_descriptor, which 3.3+
 * would have us use, raises on a closed IO */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static void file_fields(struct hdx_out *o, VALUE obj)
{
	if (RFILE(obj)->fptr) {
		HD_PUTS(o, ", \"fd\":");
		hdx_put_i64(o, RFILE(obj)->fptr->fd);
	}
}
#pragma GCC diagnostic pop

static void type_fields(struct hdx_dump *d, VALUE obj, int type)
{
	struct hdx_out *o = &d->out;

	switch (type) {
	case RUBY_T_IMEMO:
		HD_PUTS(o, ", \"imemo_type\":\"");
		hdx_put_cstr(o, d->imemo);
		HD_PUTS(o, "\"");
		break;
	case RUBY_T_SYMBOL:
		string_content(o, rb_sym2str(obj));
		break;
	case RUBY_T_STRING:
		string_fields(o, obj);
		break;
	case RUBY_T_HASH:
		hash_fields(o, obj);
		break;
	case RUBY_T_ARRAY:
		array_fields(o, obj);
		break;
	case RUBY_T_ICLASS:
		superclass_field(o, obj);
		break;
	case RUBY_T_CLASS:
#ifdef HAVE_RB_CLASS_VARIATION_COUNT
		HD_PUTS(o, ", \"variation_count\":");
		hdx_put_u64(o, rb_class_variation_count(obj));
#endif
		module_fields(d, obj);
		break;
	case RUBY_T_MODULE:
		module_fields(d, obj);
		break;
	case RUBY_T_DATA:
		data_fields(o, obj);
		break;
	case RUBY_T_FLOAT:
		float_field(o, obj);
		break;
	case RUBY_T_OBJECT:
		object_fields(o, obj);
		break;
	case RUBY_T_FILE:
		file_fields(o, obj);
		break;
	default:
		break;
	}
}

/* ---- the rest of an object line ---- */

/* Is obj a key of a WeakKeyMap (hd_eph.c)? */
static int eph_key(const struct hdx_dump *d, VALUE obj)
{
	size_t n;

	return d->eph && hdx_eph_values(d->eph, obj, &n) != NULL;
}

static void ref_i(VALUE ref, void *data)
{
	struct hdx_dump *d = data;

	if (ref == d->klass || own(d, ref))
		return;
	if (d->nrefs++) {
		HD_PUTS(&d->out, ", ");
	} else {
		HD_PUTS(&d->out, ", \"references\":[");
		/* names asked for only where there are references */
		d->keep = d->names && !d->nomem &&
			  (hdx_names_wanted(d->names, d->obj, d->type, d->imemo) ||
			   eph_key(d, d->obj));
	}
	hdx_put_addr(&d->out, ref);
	if (d->keep)
		keep_ref(d, ref);
}

static void site_fields(struct hdx_out *o, const struct hdx_site *s)
{
	if (s->file) {
		HD_PUTS(o, ", \"file\":");
		hdx_put_json(o, s->file, s->file_len);
		if (s->line) {
			HD_PUTS(o, ", \"line\":");
			hdx_put_u64(o, s->line);
		}
	}
	if (s->method) {
		HD_PUTS(o, ", \"method\":");
		hdx_put_json(o, s->method, s->method_len);
	}
	HD_PUTS(o, ", \"generation\":");
	hdx_put_u64(o, s->generation);
	if (s->stack) {
		HD_PUTS(o, ", \"stack\":");
		hdx_put_u64(o, s->stack);
	}
}

static void put_name(struct hdx_out *o, const char *key, const char *v)
{
	if (!v)
		return;
	hdx_put(o, key, strlen(key));
	hdx_put_json(o, v, strlen(v));
}

/* The allocation stacks' FRAME and STACK lines (man 5 heapdump-dump),
 * the frames' names asked of Ruby before (hdx_stacks_resolve). */
static void dump_stacks(struct hdx_dump *d)
{
	struct hdx_out *o = &d->out;
	size_t nf = hdx_frames_count(), ns = hdx_stacks_count(), i, k, n;

	if (!ns)
		return;
	for (i = 1; i <= nf; i++) {
		const char *file, *method, *klass, *label;
		int line;

		hdx_frame_get((uint32_t)i, &file, &line, &method, &klass, &label);
		HD_PUTS(o, "{\"type\":\"FRAME\", \"id\":");
		hdx_put_u64(o, i);
		put_name(o, ", \"file\":", file);
		if (line > 0) {
			HD_PUTS(o, ", \"line\":");
			hdx_put_u64(o, (uint64_t)line);
		}
		put_name(o, ", \"method\":", method);
		put_name(o, ", \"class\":", klass);
		put_name(o, ", \"label\":", label);
		HD_PUTS(o, "}\n");
	}
	for (i = 1; i <= ns; i++) {
		const uint32_t *f = hdx_stack_frames((uint32_t)i, &n);

		HD_PUTS(o, "{\"type\":\"STACK\", \"id\":");
		hdx_put_u64(o, i);
		HD_PUTS(o, ", \"frames\":[");
		for (k = 0; k < n; k++) {
			if (k)
				HD_PUTS(o, ",");
			hdx_put_u64(o, f[k]);
		}
		HD_PUTS(o, "]}\n");
	}
}

/* The flag's name, from a small cache (the GC has a handful). */
static const char *flag_name(struct hdx_dump *d, ID id, size_t *len)
{
	const char *name;
	int i;

	for (i = 0; i < d->nflag; i++) {
		if (d->flag_id[i] == id) {
			*len = d->flag_len[i];
			return d->flag_name[i];
		}
	}
	if (!(name = rb_id2name(id)))
		name = "?";
	*len = strlen(name);
	if (d->nflag < MAX_FLAGS) {
		d->flag_id[d->nflag] = id;
		d->flag_len[d->nflag] = *len;
		d->flag_name[d->nflag++] = name;
	}
	return name;
}

static void flag_key(struct hdx_dump *d, size_t i, ID id)
{
	size_t len;
	const char *name = flag_name(d, id, &len);

	if (i)
		HD_PUTS(&d->out, ", \"");
	else
		HD_PUTS(&d->out, ", \"flags\":{\"");
	hdx_put(&d->out, name, len);
	HD_PUTS(&d->out, "\":");
}

#ifdef HAVE_RB_GC_OBJECT_METADATA
/* 4.0: flags with values (age:N, object_id:N, the rest true) */
static void put_special(struct hdx_out *o, VALUE v)
{
	if (RB_FIXNUM_P(v))
		hdx_put_i64(o, FIX2LONG(v));
	else if (v == Qtrue)
		HD_PUTS(o, "true");
	else if (v == Qfalse)
		HD_PUTS(o, "false");
	else if (v == Qnil)
		HD_PUTS(o, "null");
	else if (RB_FLONUM_P(v))
		put_g(o, RFLOAT_VALUE(v));
	else
		HD_PUTS(o, "{}");
}

static void gc_flags(struct hdx_dump *d, VALUE obj)
{
	const struct hdx_gc_meta *m = rb_gc_object_metadata(obj);
	size_t i;

	for (i = 0; m[i].name; i++) {
		flag_key(d, i, m[i].name);
		put_special(&d->out, m[i].val);
	}
	if (i)
		HD_PUTS(&d->out, "}");
}
#else
static void gc_flags(struct hdx_dump *d, VALUE obj)
{
	ID ids[MAX_FLAGS];
	size_t n = rb_obj_gc_flags(obj, ids, MAX_FLAGS), i;

	for (i = 0; i < n; i++) {
		flag_key(d, i, ids[i]);
		HD_PUTS(&d->out, "true");
	}
	if (n)
		HD_PUTS(&d->out, "}");
}
#endif

/* What ObjectSpace.memsize_of_all counts (objspace.c total_i): up to
 * 3.1 all but a few types, from 3.3 all but internal objects. */
static int counts_in_memsize_of_all(VALUE obj, int type)
{
#if HD_V >= 303
	(void)type;
	return !rb_objspace_internal_object_p(obj);
#else
	switch (type) {
	case RUBY_T_NONE:
	case RUBY_T_IMEMO:
	case RUBY_T_ICLASS:
	case RUBY_T_NODE:
	case RUBY_T_ZOMBIE:
		return 0;
	default:
		return 1;
	}
#endif
}

/* The class word dump_all writes (and leaves out of references): none
 * for NODE, nor from 3.2 for IMEMO, except 4.0's IMEMO/fields, whose
 * class is the object owning the fields. */
static VALUE class_of(struct hdx_dump *d, VALUE obj, int type)
{
	if (type == RUBY_T_NODE)
		return 0;
#if HD_V >= 302
	if (type == RUBY_T_IMEMO && strcmp(d->imemo, "fields") != 0)
		return 0;
#endif
	return RBASIC(obj)->klass;
}

static void object_head(struct hdx_dump *d, VALUE obj, int type,
			size_t stride)
{
	struct hdx_out *o = &d->out;

	HD_PUTS(o, "{\"address\":");
	hdx_put_addr(o, obj);
	put_type(o, type);
#if HD_V >= 302
#if HD_V >= 400
	if (type != RUBY_T_IMEMO || d->klass)  /* IMEMO/fields only */
#endif
	{
		HD_PUTS(o, ", \"shape_id\":");
		hdx_put_u64(o, hdx_shape_id(obj));
	}
	HD_PUTS(o, ", \"slot_size\":");
	hdx_put_u64(o, stride);
#else
	(void)stride;
#endif
	if (d->klass) {
		HD_PUTS(o, ", \"class\":");
		hdx_put_addr(o, d->klass);
	}
	if (RB_FL_TEST_RAW(obj, RUBY_FL_FREEZE))
		HD_PUTS(o, ", \"frozen\":true");
}

/* The values of the WeakKeyMaps whose key is obj, written as its last
 * references (named "(ephemeron value)"): how many. */
static size_t eph_refs(struct hdx_dump *d, VALUE obj)
{
	const VALUE *v;
	size_t n, i, before = d->nrefs;

	if (!d->eph || !(v = hdx_eph_values(d->eph, obj, &n)))
		return 0;
	for (i = 0; i < n; i++)
		ref_i(v[i], d);
	return d->nrefs - before;
}

static void dump_object(struct hdx_dump *d, VALUE obj, size_t stride)
{
	struct hdx_out *o = &d->out;
	int type = RB_BUILTIN_TYPE(obj);
	const struct hdx_site *site = hdx_trace_lookup(obj);
	size_t memsize, neph;

	if (d->since && (!site || site->generation < d->since))
		return;
	d->objects++;
	d->imemo = type == RUBY_T_IMEMO ? hdx_imemo_name(obj) : "";
	d->klass = class_of(d, obj, type);
	d->nrefs = 0;
	d->nref = 0;
	object_head(d, obj, type, stride);
	if (type == RUBY_T_NONE || type == RUBY_T_ZOMBIE) {
		HD_PUTS(o, "}\n");
		return;
	}
	type_fields(d, obj, type);
	d->keep = 0; /* ref_i decides at the first reference */
	d->obj = obj;
	d->type = type;
	rb_objspace_reachable_objects_from(obj, ref_i, d);
	neph = eph_refs(d, obj);
	if (d->nrefs)
		HD_PUTS(o, "]");
	if (d->keep && d->nref && !d->nomem) {
		hdx_names_object(d->names, obj, type, d->klass, d->imemo);
		hdx_names_write_eph(d->names, o, d->refs, d->nref, neph);
	}
	if (site)
		site_fields(o, site);
	if ((memsize = rb_obj_memsize_of(obj)) > 0) {
		HD_PUTS(o, ", \"memsize\":");
		hdx_put_u64(o, memsize);
		d->memsize += memsize;
		if (counts_in_memsize_of_all(obj, type))
			d->memsize_of_all += memsize;
	}
	gc_flags(d, obj);
	HD_PUTS(o, "}\n");
}

static int heap_i(void *start, void *end, size_t stride, void *data)
{
	struct hdx_dump *d = data;
	VALUE v;

	for (v = (VALUE)start; v != (VALUE)end; v += stride) {
		if (d->out.err)
			return 1;
		if ((d->full || RBASIC(v)->flags) && !own(d, v))
			dump_object(d, v, stride);
	}
	return 0;
}

/* ---- HeapDump._dump(fd, gzip, full, since) ---- */

struct dump_call {
	struct hdx_dump *d;
	int gzip;
};

static VALUE dump_body(VALUE arg)
{
	struct hdx_dump *d = (struct hdx_dump *)arg;

	hdx_stacks_resolve(); /* Ruby strings, left out as the names' are */
	if (d->names && hdx_names_prepare(d->names))
		d->nomem = 1;
	if (d->names)
		d->bloom = hdx_names_bloom(d->names);
	if (d->names && !d->nomem) {
		int nomem;

		d->eph = hdx_eph_prepare(&nomem);
		d->nomem |= nomem;
	}
	if (!d->since)
		dump_roots(d);
	if (!NIL_P(d->shapes)) /* ObjectSpace.dump_shapes' lines, made before */
		hdx_put(&d->out, RSTRING_PTR(d->shapes),
		       (size_t)RSTRING_LEN(d->shapes));
	dump_stacks(d);
	rb_objspace_each_objects(heap_i, d);
	return Qnil;
}

static VALUE dump_ensure(VALUE arg)
{
	struct hdx_dump *d = (struct hdx_dump *)arg;
	int err = hdx_out_close(&d->out);

	if (err && !d->out.err)
		d->out.err = err;
	return Qnil;
}

/* the totals' keys, interned when the extension loads: a first
 * rb_intern of a new name after the walk would leave its Symbol and
 * String in the next dump, new there */
static ID id_objects, id_roots, id_memsize, id_memsize_of_all, id_bytes;

/* into: a Hash to fill (the same keys again: no allocation), or nil */
static VALUE totals_hash(const struct hdx_totals *t, VALUE into)
{
	VALUE h = NIL_P(into) ? rb_hash_new() : into;

	rb_hash_aset(h, ID2SYM(id_objects), ULL2NUM(t->objects));
	rb_hash_aset(h, ID2SYM(id_roots), ULL2NUM(t->roots));
	rb_hash_aset(h, ID2SYM(id_memsize), ULL2NUM(t->memsize));
	rb_hash_aset(h, ID2SYM(id_memsize_of_all), ULL2NUM(t->memsize_of_all));
	rb_hash_aset(h, ID2SYM(id_bytes), ULL2NUM(t->bytes));
	return h;
}

/* Prepares what the walk may not do itself: MRI interns the GC flag
 * names on the first rb_obj_gc_flags (rb_gc_object_metadata) call. */
static void warm_up(void)
{
#ifdef HAVE_RB_GC_OBJECT_METADATA
	rb_gc_object_metadata(rb_cObject);
#else
	ID ids[MAX_FLAGS];

	rb_obj_gc_flags(rb_cObject, ids, MAX_FLAGS);
#endif
}

/* :nodoc: _dump(fd, gzip, full, since, shapes, names, totals = nil,
 * finish = nil) writes the dump to fd (which it closes); returns totals,
 * a new Hash or the Hash given (filled: a caller that must not allocate
 * after the walk passes the same one each time). shapes: nil, or the
 * SHAPE lines (ObjectSpace.dump_shapes) to write after the roots; names:
 * true writes ref_names (hd_refnames.c). finish: what to do after the walk,
 * in C (hdx_sidecar_finish: the sidecar, the renames); it returns nil
 * then. */
static void close_both(int fd, int sfd)
{
	if (fd >= 0)
		close(fd);
	if (sfd >= 0)
		close(sfd);
}

static VALUE dump_m(int argc, VALUE *argv, VALUE self)
{
	struct hdx_dump *d;
	int err, rc, state = 0;
	VALUE totals, fd, gzip, full, since, shapes, names, into = Qnil;
	VALUE finish = Qnil;
	struct hdx_totals t;
	int sfd = -1; /* the sidecar's fd in finish: closed on every path */
	int quiet_err;

	rb_check_arity(argc, 6, 8);
	fd = argv[0];
	gzip = argv[1];
	full = argv[2];
	since = argv[3];
	shapes = argv[4];
	names = argv[5];
	if (argc > 6)
		into = argv[6];
	if (argc > 7 && !NIL_P(argv[7])) {
		finish = argv[7];
		if (RB_TYPE_P(finish, T_ARRAY) && FIXNUM_P(rb_ary_entry(finish, 0)))
			sfd = FIX2INT(rb_ary_entry(finish, 0));
	}
	if (!NIL_P(into) && !RB_TYPE_P(into, T_HASH)) {
		close_both(NUM2INT(fd), sfd);
		rb_raise(rb_eTypeError, "heapdump: totals must be a Hash");
	}

	if (!NIL_P(shapes) && !RB_TYPE_P(shapes, T_STRING)) {
		close_both(NUM2INT(fd), sfd);
		rb_raise(rb_eTypeError, "heapdump: shapes must be a String");
	}
	if (!(d = calloc(1, sizeof(*d)))) {
		close_both(NUM2INT(fd), sfd);
		rb_raise(rb_eNoMemError, "heapdump: no memory");
	}
	if ((rc = hdx_out_open(&d->out, NUM2INT(fd), RTEST(gzip)))) {
		close_both(NUM2INT(fd), sfd);
		free(d);
		rb_syserr_fail(rc, "heapdump: cannot set up the output");
	}
	d->full = RTEST(full);
	d->since = NIL_P(since) ? 0 : NUM2SIZET(since);
	d->shapes = shapes;
	if (RTEST(names) && !(d->names = hdx_names_new())) {
		hdx_out_close(&d->out);
		free(d);
		close_both(-1, sfd);
		rb_raise(rb_eNoMemError, "heapdump: no memory");
	}
	warm_up();
	rb_protect(dump_body, (VALUE)d, &state);
	quiet_err = quiet.err;
	quiet_end(); /* the walk is done: nothing more to leave out */
	dump_ensure((VALUE)d);
	err = d->out.err;
	if (!err && (d->nomem || quiet_err || (d->names && hdx_names_failed(d->names))))
		err = ENOMEM;
	t.objects = d->objects;
	t.roots = d->roots;
	t.memsize = d->memsize;
	t.memsize_of_all = d->memsize_of_all;
	t.bytes = d->out.bytes;
	hdx_names_free(d->names);
	hdx_eph_free(d->eph);
	free(d->refs);
	free(d);
	RB_GC_GUARD(shapes);
	if (state || err || (!NIL_P(finish) && sfd < 0))
		close_both(-1, sfd);
	if (state)
		rb_jump_tag(state);
	if (err)
		rb_syserr_fail(err, "heapdump: cannot write the dump");
	if (!NIL_P(finish)) {
		if (sfd < 0)
			rb_raise(rb_eTypeError, "heapdump: finish must be [sidecar fd, ...]");
		hdx_sidecar_finish(finish, sfd, &t);
		return Qnil;
	}
	totals = totals_hash(&t, into);
	return totals;
}

/* :nodoc: proves, on the running Ruby, the flag bits the walk reads
 * that MRI defines only in its private headers. objs: [Hash.new {},
 * its default proc, Hash.new(0), a shared string, a heap string, a
 * chilled string literal (nil before 3.4), String.new]. Returns nil,
 * or why the walk must not be used (lib/heapdump.rb falls back). */
static VALUE self_check_m(VALUE self, VALUE objs)
{
	VALUE proc_hash, proc, plain_hash, shared, heap, chilled, plain;
	VALUE last = 0;

	Check_Type(objs, T_ARRAY);
	if (RARRAY_LEN(objs) != 7)
		rb_raise(rb_eArgError, "heapdump: self check wants 7 objects");
	proc_hash = RARRAY_AREF(objs, 0);
	proc = RARRAY_AREF(objs, 1);
	plain_hash = RARRAY_AREF(objs, 2);
	shared = RARRAY_AREF(objs, 3);
	heap = RARRAY_AREF(objs, 4);
	chilled = RARRAY_AREF(objs, 5);
	plain = RARRAY_AREF(objs, 6);
	if (!RB_FL_TEST_RAW(proc_hash, HD_HASH_PROC_DEFAULT) ||
	    RB_FL_TEST_RAW(plain_hash, HD_HASH_PROC_DEFAULT))
		return rb_str_new_cstr("the Hash default-proc flag is not FL_USER2 on this Ruby");
	rb_objspace_reachable_objects_from(proc_hash, last_ref_i, &last);
	if (last != proc)
		return rb_str_new_cstr("a Hash's default proc is not its last reference on this Ruby");
	if (!str_shared(shared) || str_shared(heap))
		return rb_str_new_cstr("the shared-string flag is not ELTS_SHARED on this Ruby");
#if HD_V >= 304
	if (!RB_FL_TEST_RAW(chilled, HD_STR_CHILLED) ||
	    RB_FL_TEST_RAW(plain, HD_STR_CHILLED))
		return rb_str_new_cstr("the chilled-string flag is not FL_USER2|FL_USER3 on this Ruby");
#else
	(void)chilled;
	(void)plain;
#endif
	return Qnil;
}

#endif /* HD_WALKER */

/* HeapDump::NATIVE_WALK: whether _dump exists; NO_WALK_REASON: why not */
void hdx_init_dump(VALUE mod)
{
#ifdef HD_WALKER
#ifdef HAVE_RB_GC_OBJECT_METADATA
	id_object_id = rb_intern("object_id");
#endif
	id_objects = rb_intern("objects");
	id_roots = rb_intern("roots");
	id_memsize = rb_intern("memsize");
	id_memsize_of_all = rb_intern("memsize_of_all");
	id_bytes = rb_intern("bytes");
	/* made now: one made by the first dump would be new in the second */
	quiet.tp = rb_tracepoint_new(0, RUBY_INTERNAL_EVENT_NEWOBJ,
				     quiet_newobj_i, NULL);
	rb_gc_register_mark_object(quiet.tp);
	hdx_names_init();
	hdx_eph_init();
	warm_up(); /* the flag names' Symbols, kept by MRI: made now */
	rb_define_module_function(mod, "_quiet_begin", quiet_begin_m, 0);
	rb_define_module_function(mod, "_quiet_end", quiet_end_m, 0);
	rb_define_module_function(mod, "_dump", dump_m, -1);
	rb_define_module_function(mod, "_self_check", self_check_m, 1);
	rb_define_const(mod, "NATIVE_WALK", Qtrue);
#else
	rb_define_const(mod, "NATIVE_WALK", Qfalse);
#endif
	rb_define_const(mod, "NO_WALK_REASON",
			rb_obj_freeze(rb_str_new_cstr(HD_NO_WALKER_WHY)));
}
