/*
 * hd_dump.c - HeapDump._dump: ROOT lines, then one line per heap slot,
 * in the record format of the running Ruby's ObjectSpace.dump_all (3.1
 * field set and order), but with every string JSON-escaped. Built only
 * where extconf.rb defines HD_WALKER (the Rubies the walk is known to
 * match); elsewhere lib/heapdump.rb falls back to ObjectSpace.dump_all.
 *
 * Inside the walk nothing allocates a Ruby object, raises or calls Ruby
 * code: state lives in struct hd_dump, errors are kept and raised after.
 */
#include "hd_ext.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

const char *hd_type_name(int type)
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

struct hd_dump {
	struct hd_out out;
	VALUE klass;              /* class of the current object (skipped) */
	size_t nrefs;             /* references written for it */
	const char *root;         /* open ROOT category, or NULL */
	int full;
	size_t since;
	ID flag_id[MAX_FLAGS];    /* cache: GC flag ids and their names */
	const char *flag_name[MAX_FLAGS];
	size_t flag_len[MAX_FLAGS];
	int nflag;
	/* totals, for the sidecar */
	uint64_t objects, roots, memsize, memsize_of_all;
};

/* ', "type":"STRING"' with lengths computed once */
static void put_type(struct hd_out *o, int type)
{
	static char text[0x20][40];
	static size_t len[0x20];
	int t = type & 0x1f;

	if (!len[t])
		len[t] = (size_t)snprintf(text[t], sizeof(text[t]),
					  ", \"type\":\"%s\"",
					  hd_type_name(type));
	hd_put(o, text[t], len[t]);
}

/* ---- ROOT lines ---- */

static void root_i(const char *category, VALUE ref, void *data)
{
	struct hd_dump *d = data;

	if (d->root != category) {
		if (d->root)
			HD_PUTS(&d->out, "]}\n");
		HD_PUTS(&d->out, "{\"type\":\"ROOT\", \"root\":");
		hd_put_json(&d->out, category, strlen(category));
		HD_PUTS(&d->out, ", \"references\":[");
		d->root = category;
	} else {
		HD_PUTS(&d->out, ", ");
	}
	hd_put_addr(&d->out, ref);
	d->roots++;
}

static void dump_roots(struct hd_dump *d)
{
	rb_objspace_reachable_objects_from_root(root_i, d);
	if (d->root)
		HD_PUTS(&d->out, "]}\n");
}

/* ---- type-specific fields ---- */

/* STR_SHARED_P: FL_USER2 means shared only on a heap (noembed) string;
 * embedded strings keep their length in those bits */
static int str_shared(VALUE str)
{
	return RB_FL_TEST_RAW(str, RSTRING_NOEMBED) &&
	       RB_FL_TEST_RAW(str, HD_STR_SHARED);
}

static void put_rstring(struct hd_out *o, VALUE str)
{
	hd_put_json(o, RSTRING_PTR(str), (size_t)RSTRING_LEN(str));
}

/* bytesize, capacity, value: as dump_all, value only for 7-bit content */
static void string_content(struct hd_out *o, VALUE str)
{
	long len = RSTRING_LEN(str);

	HD_PUTS(o, ", \"bytesize\":");
	hd_put_u64(o, (uint64_t)len);
	if (!str_shared(str) && RB_FL_TEST_RAW(str, RSTRING_NOEMBED) &&
	    (long)rb_str_capacity(str) != len) {
		HD_PUTS(o, ", \"capacity\":");
		hd_put_u64(o, rb_str_capacity(str));
	}
	if (rb_enc_str_coderange(str) == ENC_CODERANGE_7BIT) {
		HD_PUTS(o, ", \"value\":");
		put_rstring(o, str);
	}
}

static void string_fields(struct hd_out *o, VALUE str)
{
	if (!RB_FL_TEST_RAW(str, RSTRING_NOEMBED))
		HD_PUTS(o, ", \"embedded\":true");
	if (rb_enc_str_coderange(str) == ENC_CODERANGE_BROKEN)
		HD_PUTS(o, ", \"broken\":true");
	if (RB_FL_TEST_RAW(str, RSTRING_FSTR))
		HD_PUTS(o, ", \"fstring\":true");
	if (str_shared(str))
		HD_PUTS(o, ", \"shared\":true");
	else
		string_content(o, str);
	if (!ENCODING_IS_ASCII8BIT(str)) {
		HD_PUTS(o, ", \"encoding\":");
		hd_put_cstr(o, "\"");
		hd_put_cstr(o, rb_enc_name(rb_enc_from_index(ENCODING_GET(str))));
		hd_put_cstr(o, "\"");
	}
}

/* MRI's struct RHash (internal/hash.h, 2.6 - 3.3): we need ifnone only */
struct hd_rhash {
	struct RBasic basic;
	void *table;
	VALUE ifnone;
};

static void hash_fields(struct hd_out *o, VALUE h)
{
	HD_PUTS(o, ", \"size\":");
	hd_put_u64(o, RHASH_SIZE(h));
	if (RB_FL_TEST_RAW(h, HD_HASH_PROC_DEFAULT)) {
		HD_PUTS(o, ", \"default\":");
		hd_put_addr(o, ((struct hd_rhash *)h)->ifnone);
	}
}

static void array_fields(struct hd_out *o, VALUE a)
{
	long len = RARRAY_LEN(a);

	HD_PUTS(o, ", \"length\":");
	hd_put_u64(o, (uint64_t)len);
	if (len > 0 && RB_FL_TEST_RAW(a, RUBY_ELTS_SHARED))
		HD_PUTS(o, ", \"shared\":true");
	if (len > 0 && RB_FL_TEST_RAW(a, RARRAY_EMBED_FLAG))
		HD_PUTS(o, ", \"embedded\":true");
}

static void superclass_field(struct hd_out *o, VALUE klass)
{
	VALUE super = rb_class_get_superclass(klass);

	if (super && !RB_SPECIAL_CONST_P(super)) {
		HD_PUTS(o, ", \"superclass\":");
		hd_put_addr(o, super);
	}
}

static void module_fields(struct hd_dump *d, VALUE mod)
{
	struct hd_out *o = &d->out;
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
	if (RB_FL_TEST_RAW(mod, RUBY_FL_SINGLETON))
		HD_PUTS(o, ", \"singleton\":true");
}

/* %#g, with Ruby's own printf's spellings of the non-finite values */
static void float_field(struct hd_out *o, VALUE f)
{
	double v = RFLOAT_VALUE(f);
	char b[64];
	int n;

	if (isnan(v))
		n = snprintf(b, sizeof(b), "NaN");
	else if (isinf(v))
		n = snprintf(b, sizeof(b), "%sInf", v < 0 ? "-" : "");
	else
		n = snprintf(b, sizeof(b), "%#g", v);

	HD_PUTS(o, ", \"value\":\"");
	hd_put(o, b, (size_t)n);
	HD_PUTS(o, "\"");
}

static void data_fields(struct hd_out *o, VALUE obj)
{
	if (RTYPEDDATA_P(obj) && RTYPEDDATA_TYPE(obj)->wrap_struct_name) {
		HD_PUTS(o, ", \"struct\":");
		hd_put_cstr(o, "\"");
		hd_put_cstr(o, RTYPEDDATA_TYPE(obj)->wrap_struct_name);
		hd_put_cstr(o, "\"");
	}
}

static void type_fields(struct hd_dump *d, VALUE obj, int type)
{
	struct hd_out *o = &d->out;

	switch (type) {
	case RUBY_T_IMEMO:
		HD_PUTS(o, ", \"imemo_type\":\"");
		hd_put_cstr(o, rb_imemo_name((int)((RBASIC(obj)->flags >>
						    RUBY_FL_USHIFT) &
						   HD_IMEMO_MASK)));
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
		HD_PUTS(o, ", \"ivars\":");
		hd_put_u64(o, ROBJECT_NUMIV(obj));
		break;
	case RUBY_T_FILE:
		if (RFILE(obj)->fptr) {
			HD_PUTS(o, ", \"fd\":");
			hd_put_i64(o, RFILE(obj)->fptr->fd);
		}
		break;
	default:
		break;
	}
}

/* ---- the rest of an object line ---- */

static void ref_i(VALUE ref, void *data)
{
	struct hd_dump *d = data;

	if (ref == d->klass)
		return;
	if (d->nrefs++)
		HD_PUTS(&d->out, ", ");
	else
		HD_PUTS(&d->out, ", \"references\":[");
	hd_put_addr(&d->out, ref);
}

static void site_fields(struct hd_out *o, const struct hd_site *s)
{
	if (s->file) {
		HD_PUTS(o, ", \"file\":");
		hd_put_json(o, s->file, s->file_len);
		if (s->line) {
			HD_PUTS(o, ", \"line\":");
			hd_put_u64(o, s->line);
		}
	}
	if (s->method) {
		HD_PUTS(o, ", \"method\":");
		hd_put_json(o, s->method, s->method_len);
	}
	HD_PUTS(o, ", \"generation\":");
	hd_put_u64(o, s->generation);
}

/* The flag's name, from a small cache (the GC has a handful). */
static const char *flag_name(struct hd_dump *d, ID id, size_t *len)
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

static void gc_flags(struct hd_dump *d, VALUE obj)
{
	ID ids[MAX_FLAGS];
	size_t n = rb_obj_gc_flags(obj, ids, MAX_FLAGS), i;

	if (!n)
		return;
	HD_PUTS(&d->out, ", \"flags\":{");
	for (i = 0; i < n; i++) {
		size_t len;
		const char *name = flag_name(d, ids[i], &len);

		if (i)
			HD_PUTS(&d->out, ", \"");
		else
			HD_PUTS(&d->out, "\"");
		hd_put(&d->out, name, len);
		HD_PUTS(&d->out, "\":true");
	}
	HD_PUTS(&d->out, "}");
}

/* The types ObjectSpace.memsize_of_all leaves out (objspace.c total_i). */
static int counts_in_memsize_of_all(int type)
{
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
}

static void dump_object(struct hd_dump *d, VALUE obj)
{
	struct hd_out *o = &d->out;
	int type = RB_BUILTIN_TYPE(obj);
	const struct hd_site *site = hd_trace_lookup(obj);
	size_t memsize;

	if (d->since && (!site || site->generation < d->since))
		return;
	d->objects++;
	d->klass = type == RUBY_T_NODE ? 0 : RBASIC(obj)->klass;
	d->nrefs = 0;
	HD_PUTS(o, "{\"address\":");
	hd_put_addr(o, obj);
	put_type(o, type);
	if (d->klass) {
		HD_PUTS(o, ", \"class\":");
		hd_put_addr(o, d->klass);
	}
	if (RB_FL_TEST_RAW(obj, RUBY_FL_FREEZE))
		HD_PUTS(o, ", \"frozen\":true");
	if (type == RUBY_T_NONE || type == RUBY_T_ZOMBIE) {
		HD_PUTS(o, "}\n");
		return;
	}
	type_fields(d, obj, type);
	rb_objspace_reachable_objects_from(obj, ref_i, d);
	if (d->nrefs)
		HD_PUTS(o, "]");
	if (site)
		site_fields(o, site);
	if ((memsize = rb_obj_memsize_of(obj)) > 0) {
		HD_PUTS(o, ", \"memsize\":");
		hd_put_u64(o, memsize);
		d->memsize += memsize;
		if (counts_in_memsize_of_all(type))
			d->memsize_of_all += memsize;
	}
	gc_flags(d, obj);
	HD_PUTS(o, "}\n");
}

static int heap_i(void *start, void *end, size_t stride, void *data)
{
	struct hd_dump *d = data;
	VALUE v;

	for (v = (VALUE)start; v != (VALUE)end; v += stride) {
		if (d->out.err)
			return 1;
		if (d->full || RBASIC(v)->flags)
			dump_object(d, v);
	}
	return 0;
}

/* ---- HeapDump._dump(fd, gzip, full, since) ---- */

struct dump_call {
	struct hd_dump *d;
	int gzip;
};

static VALUE dump_body(VALUE arg)
{
	struct hd_dump *d = (struct hd_dump *)arg;

	if (!d->since)
		dump_roots(d);
	rb_objspace_each_objects(heap_i, d);
	return Qnil;
}

static VALUE dump_ensure(VALUE arg)
{
	struct hd_dump *d = (struct hd_dump *)arg;
	int err = hd_out_close(&d->out);

	if (err && !d->out.err)
		d->out.err = err;
	return Qnil;
}

static VALUE totals_hash(const struct hd_dump *d)
{
	VALUE h = rb_hash_new();

	rb_hash_aset(h, ID2SYM(rb_intern("objects")), ULL2NUM(d->objects));
	rb_hash_aset(h, ID2SYM(rb_intern("roots")), ULL2NUM(d->roots));
	rb_hash_aset(h, ID2SYM(rb_intern("memsize")), ULL2NUM(d->memsize));
	rb_hash_aset(h, ID2SYM(rb_intern("memsize_of_all")),
		     ULL2NUM(d->memsize_of_all));
	rb_hash_aset(h, ID2SYM(rb_intern("bytes")), ULL2NUM(d->out.bytes));
	return h;
}

/* Prepares what the walk may not do itself: MRI interns the GC flag
 * names on the first rb_obj_gc_flags call. */
static void warm_up(void)
{
	ID ids[MAX_FLAGS];

	rb_obj_gc_flags(rb_cObject, ids, MAX_FLAGS);
}

/* :nodoc: writes the dump to fd (which it closes); returns totals */
static VALUE dump_m(VALUE self, VALUE fd, VALUE gzip, VALUE full,
		    VALUE since)
{
	struct hd_dump *d;
	int err, rc, state = 0;
	VALUE totals;

	if (!(d = calloc(1, sizeof(*d)))) {
		close(NUM2INT(fd));
		rb_raise(rb_eNoMemError, "heapdump: no memory");
	}
	if ((rc = hd_out_open(&d->out, NUM2INT(fd), RTEST(gzip)))) {
		close(NUM2INT(fd));
		free(d);
		rb_syserr_fail(rc, "heapdump: cannot set up the output");
	}
	d->full = RTEST(full);
	d->since = NIL_P(since) ? 0 : NUM2SIZET(since);
	warm_up();
	rb_protect(dump_body, (VALUE)d, &state);
	dump_ensure((VALUE)d);
	err = d->out.err;
	totals = state ? Qnil : totals_hash(d);
	free(d);
	if (state)
		rb_jump_tag(state);
	if (err)
		rb_syserr_fail(err, "heapdump: cannot write the dump");
	return totals;
}

#endif /* HD_WALKER */

/* HeapDump::NATIVE_WALK: whether _dump exists; NO_WALK_REASON: why not */
void hd_init_dump(VALUE mod)
{
#ifdef HD_WALKER
	rb_define_module_function(mod, "_dump", dump_m, 4);
	rb_define_const(mod, "NATIVE_WALK", Qtrue);
#else
	rb_define_const(mod, "NATIVE_WALK", Qfalse);
#endif
	rb_define_const(mod, "NO_WALK_REASON",
			rb_obj_freeze(rb_str_new_cstr(HD_NO_WALKER_WHY)));
}
