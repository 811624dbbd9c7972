/*
 * hd_trace.c - allocation sites. Our own NEWOBJ/FREEOBJ tracepoint keeps
 * file, line, method and generation (GC.count) per live object, so that
 * dumps carry them (objspace's table is private to objspace.so). And
 * HeapDump.track: memprof-style counts of allocations by file:line:class.
 *
 * The hooks run inside the allocator and the sweeper: they must not
 * allocate Ruby objects. Everything here uses malloc and hdx_table.
 */
#include "hd_ext.h"

#include <stdlib.h>

/* ---- interned strings (paths and method names live for the process) ---- */

struct hdx_istr {
	struct hdx_istr *next;
	size_t n;
	char s[];
};

#define ISTR_BUCKETS 4096
static struct hdx_istr *istr_tab[ISTR_BUCKETS];

static size_t hash_bytes(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ULL;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
	return (size_t)h;
}

const char *hdx_intern(const char *s, size_t n)
{
	size_t b = hash_bytes(s, n) & (ISTR_BUCKETS - 1);
	struct hdx_istr *e;

	for (e = istr_tab[b]; e; e = e->next)
		if (e->n == n && memcmp(e->s, s, n) == 0)
			return e->s;
	if (!(e = malloc(sizeof(*e) + n + 1)))
		return NULL;
	memcpy(e->s, s, n);
	e->s[n] = '\0';
	e->n = n;
	e->next = istr_tab[b];
	istr_tab[b] = e;
	return e->s;
}

/* The Ruby-level site of the allocation the hook reports. */
static void site_of(rb_trace_arg_t *ta, struct hdx_site *s)
{
	VALUE path = rb_tracearg_path(ta);
	VALUE line = rb_tracearg_lineno(ta);
	VALUE mid = rb_tracearg_method_id(ta);

	memset(s, 0, sizeof(*s));
	if (RB_TYPE_P(path, T_STRING)) {
		s->file_len = (size_t)RSTRING_LEN(path);
		s->file = hdx_intern(RSTRING_PTR(path), s->file_len);
	}
	s->line = FIXNUM_P(line) ? (unsigned long)FIX2LONG(line) : 0;
	if (RB_SYMBOL_P(mid)) {
		VALUE m = rb_sym2str(mid);

		s->method_len = (size_t)RSTRING_LEN(m);
		s->method = hdx_intern(RSTRING_PTR(m), s->method_len);
	}
	s->generation = rb_gc_count();
	s->stack = 0;
}

/* ---- allocation stacks (trace_allocations(stacks: true)) ----
 *
 * At a sampled allocation the hook takes the Ruby stack with
 * rb_profile_frames (malloc only, no Ruby object), interns each frame
 * (its iseq or method entry and the line) and the sequence of frame ids,
 * outermost first, into one table shared by every record. The frame
 * VALUEs are marked by frames_holder (made when the extension loads), so
 * an iseq never goes and leaves its address to another; their names are
 * asked of Ruby only before a dump's walk (hdx_stacks_resolve).
 *
 * The gaps between sampled allocations are random (rng_next, uniform in
 * 1..2N-1 for sample: N), so that a loop allocating a fixed number of
 * objects per round is not always sampled at the same one.
 * hdx_stacks_resolve runs at the start of _dump, inside the quiet window
 * (hd_dump.c): the Strings rb_profile_frame_path, _method_name,
 * _classpath and _full_label make are left out of the dump and garbage
 * after it; the names are copied into hdx_intern's strings, and no stack
 * is taken meanwhile. A forked child inherits the tables: fork: dumps
 * have the same ids. What this costs: tests/bench/README.md. */

#define HDX_STACK_MAX 256

struct hdx_frame {
	VALUE fv;
	int line;
	int resolved;
	const char *file, *method, *klass, *label; /* interned, or NULL */
};

/* Interned frames and stacks: the tracer's (stk.t, for the life of the
 * process) and each track(stacks: true)'s (freed with its tracker). */
struct hdx_stktab {
	struct hdx_frame *v;       /* frame id f at v[f - 1] */
	size_t n, cap;
	uint32_t *fslot;           /* frame id + 0, 0 empty */
	size_t fslot_cap;
	uint32_t *ids;             /* stack s: ids[off[s - 1] .. off[s]) */
	size_t nids, ids_cap;
	uint32_t *off;             /* off[0] = 0 */
	size_t nstacks, off_cap;
	uint32_t *sslot;           /* stack id, 0 empty */
	size_t sslot_cap;
};

/* Which allocations take a stack: 1 in sample on average. */
struct hdx_sampler {
	unsigned long sample;      /* mean gap between sampled objects */
	unsigned long left;        /* objects before the next sample */
	uint64_t rng;
};

static struct {
	struct hdx_stktab t;
	struct hdx_sampler smp;
	int on, depth;
} stk;

static VALUE frames_holder = Qnil;

static void tab_mark(const struct hdx_stktab *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		rb_gc_mark(t->v[i].fv);
}

static void frames_mark(void *p)
{
	(void)p;
	tab_mark(&stk.t);
}

static struct hdx_table sites;

/* Compaction moved objects: their sites follow them (the tracer's table
 * is keyed by address; no event says that an object moved). */
static void frames_compact(void *p)
{
	(void)p;
	hdx_table_relocate(&sites, free);
}

static const rb_data_type_t frames_type = {
	"HeapDump/frames", { frames_mark, NULL, NULL, frames_compact },
	NULL, NULL, 0
};

static uint64_t mix64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return h;
}

static int grow_arr(void **p, size_t *cap, size_t need, size_t w)
{
	size_t c = *cap ? *cap : 64;
	void *q;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	if (!(q = realloc(*p, c * w)))
		return -1;
	*p = q;
	*cap = c;
	return 0;
}

/* A fresh power-of-two slot array of n entries (zeroed) */
static uint32_t *slots_new(size_t n)
{
	return calloc(n, sizeof(uint32_t));
}

static size_t frame_slot(const struct hdx_stktab *t, const uint32_t *tab,
			 size_t cap, VALUE fv, int line)
{
	size_t j = mix64((uint64_t)fv * 31 + (uint64_t)(unsigned)line) &
		   (cap - 1);

	while (tab[j]) {
		const struct hdx_frame *f = &t->v[tab[j] - 1];

		if (f->fv == fv && f->line == line)
			break;
		j = (j + 1) & (cap - 1);
	}
	return j;
}

static int frames_rehash(struct hdx_stktab *t)
{
	size_t cap = t->fslot_cap ? t->fslot_cap * 2 : 1024, i;
	uint32_t *s = slots_new(cap);

	if (!s)
		return -1;
	for (i = 0; i < t->n; i++)
		s[frame_slot(t, s, cap, t->v[i].fv, t->v[i].line)] =
			(uint32_t)i + 1;
	free(t->fslot);
	t->fslot = s;
	t->fslot_cap = cap;
	return 0;
}

static uint32_t frame_id(struct hdx_stktab *t, VALUE fv, int line)
{
	size_t j;
	struct hdx_frame *f;

	if ((t->n + 1) * 2 > t->fslot_cap && frames_rehash(t))
		return 0;
	j = frame_slot(t, t->fslot, t->fslot_cap, fv, line);
	if (t->fslot[j])
		return t->fslot[j];
	if (grow_arr((void **)&t->v, &t->cap, t->n + 1, sizeof(*t->v)))
		return 0;
	f = &t->v[t->n++];
	memset(f, 0, sizeof(*f));
	f->fv = fv;
	f->line = line;
	return t->fslot[j] = (uint32_t)t->n;
}

static uint64_t seq_hash(const uint32_t *f, size_t n)
{
	uint64_t h = 1469598103934665603ULL ^ n;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ f[i]) * 1099511628211ULL;
	return mix64(h);
}

static size_t stack_slot(const struct hdx_stktab *t, const uint32_t *tab,
			 size_t cap, const uint32_t *f, size_t n)
{
	size_t j = seq_hash(f, n) & (cap - 1);

	while (tab[j]) {
		uint32_t s = tab[j];
		size_t a = t->off[s - 1], b = t->off[s];

		if (b - a == n && !memcmp(t->ids + a, f, n * sizeof(*f)))
			break;
		j = (j + 1) & (cap - 1);
	}
	return j;
}

static int stacks_rehash(struct hdx_stktab *t)
{
	size_t cap = t->sslot_cap ? t->sslot_cap * 2 : 1024, s;
	uint32_t *tab = slots_new(cap);

	if (!tab)
		return -1;
	for (s = 1; s <= t->nstacks; s++)
		tab[stack_slot(t, tab, cap, t->ids + t->off[s - 1],
			       t->off[s] - t->off[s - 1])] = (uint32_t)s;
	free(t->sslot);
	t->sslot = tab;
	t->sslot_cap = cap;
	return 0;
}

static uint32_t stack_id(struct hdx_stktab *t, const uint32_t *f, size_t n)
{
	size_t j;

	if (!t->off) {
		if (grow_arr((void **)&t->off, &t->off_cap, 1,
			     sizeof(*t->off)))
			return 0;
		t->off[0] = 0;
	}
	if ((t->nstacks + 1) * 2 > t->sslot_cap && stacks_rehash(t))
		return 0;
	j = stack_slot(t, t->sslot, t->sslot_cap, f, n);
	if (t->sslot[j])
		return t->sslot[j];
	if (grow_arr((void **)&t->ids, &t->ids_cap, t->nids + n,
		     sizeof(*t->ids)) ||
	    grow_arr((void **)&t->off, &t->off_cap, t->nstacks + 2,
		     sizeof(*t->off)))
		return 0;
	if (n)
		memcpy(t->ids + t->nids, f, n * sizeof(*f));
	t->nids += n;
	t->off[++t->nstacks] = (uint32_t)t->nids;
	return t->sslot[j] = (uint32_t)t->nstacks;
}

/* xorshift64*: the gaps between samples (no Ruby call, no libm) */
static uint64_t rng_next(struct hdx_sampler *sm)
{
	uint64_t x = sm->rng ? sm->rng : 0x9e3779b97f4a7c15ULL;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	sm->rng = x;
	return x * 0x2545f4914f6cdd1dULL;
}

/* Is this allocation sampled? 1 in sample on average, the gaps uniform
 * in [1, 2 sample - 1], so that no period of the program lines up with
 * the sampling's. */
static int sampled(struct hdx_sampler *sm)
{
	if (sm->sample <= 1)
		return 1;
	if (sm->left > 1) {
		sm->left--;
		return 0;
	}
	sm->left = 1 + (unsigned long)(rng_next(sm) % (2 * sm->sample - 1));
	return 1;
}

/* The current Ruby stack (its depth innermost frames) as a stack id of
 * t, 0 when none or out of memory. */
static uint32_t capture_stack(struct hdx_stktab *t, int depth)
{
	VALUE buf[HDX_STACK_MAX];
	int lines[HDX_STACK_MAX];
	uint32_t fids[HDX_STACK_MAX];
	int n, i, k = 0;

	n = rb_profile_frames(0, depth, buf, lines);
	if (n <= 0)
		return 0;
	for (i = n - 1; i >= 0; i--) { /* outermost first */
		if (!(fids[k] = frame_id(t, buf[i], lines[i])))
			return 0;
		k++;
	}
	return stack_id(t, fids, (size_t)k);
}

static const char *intern_value(VALUE v)
{
	if (!RB_TYPE_P(v, T_STRING))
		return NULL;
	return hdx_intern(RSTRING_PTR(v), (size_t)RSTRING_LEN(v));
}

/* The names of the frames met since the last call (Ruby strings, made
 * and dropped here: before a dump's walk, which leaves them out). */
void hdx_stacks_resolve(void)
{
	size_t i;
	int on = stk.on;

	stk.on = 0; /* what this allocates takes no stack */
	for (i = 0; i < stk.t.n; i++) {
		struct hdx_frame *f = &stk.t.v[i];

		if (f->resolved)
			continue;
		f->file = intern_value(rb_profile_frame_path(f->fv));
		f->method = intern_value(rb_profile_frame_method_name(f->fv));
		f->klass = intern_value(rb_profile_frame_classpath(f->fv));
		f->label = intern_value(rb_profile_frame_full_label(f->fv));
		f->resolved = 1;
	}
	stk.on = on;
}

size_t hdx_stacks_count(void)
{
	return stk.t.nstacks;
}

size_t hdx_frames_count(void)
{
	return stk.t.n;
}

static const uint32_t *tab_stack(const struct hdx_stktab *t, uint32_t s,
				 size_t *n)
{
	*n = t->off[s] - t->off[s - 1];
	return t->ids + t->off[s - 1];
}

const uint32_t *hdx_stack_frames(uint32_t s, size_t *n)
{
	return tab_stack(&stk.t, s, n);
}

void hdx_frame_get(uint32_t f, const char **file, int *line,
		   const char **method, const char **klass, const char **label)
{
	const struct hdx_frame *fr = &stk.t.v[f - 1];

	*file = fr->file;
	*line = fr->line;
	*method = fr->method;
	*klass = fr->klass;
	*label = fr->label;
}

static void tab_free(struct hdx_stktab *t)
{
	free(t->v);
	free(t->fslot);
	free(t->ids);
	free(t->off);
	free(t->sslot);
	memset(t, 0, sizeof(*t));
}

/* ---- HeapDump.trace_allocations_start / _stop / _clear ---- */

static VALUE trace_tp = Qnil;
static int trace_depth;

static void trace_newobj_i(VALUE tpval, void *data)
{
	rb_trace_arg_t *ta = rb_tracearg_from_tracepoint(tpval);
	VALUE obj = rb_tracearg_object(ta);
	struct hdx_site *s;
	void **slot;

	if (!(slot = hdx_table_put(&sites, obj)))
		return; /* out of memory: this object goes untraced */
	if (!(s = *slot) && !(s = *slot = malloc(sizeof(*s)))) {
		hdx_table_del(&sites, obj);
		return;
	}
	site_of(ta, s);
	if (stk.on && sampled(&stk.smp))
		s->stack = capture_stack(&stk.t, stk.depth);
}

static void trace_freeobj_i(VALUE tpval, void *data)
{
	rb_trace_arg_t *ta = rb_tracearg_from_tracepoint(tpval);

	free(hdx_table_del(&sites, rb_tracearg_object(ta)));
}

static void trace_event_i(VALUE tpval, void *data)
{
	rb_trace_arg_t *ta = rb_tracearg_from_tracepoint(tpval);

	if (rb_tracearg_event_flag(ta) == RUBY_INTERNAL_EVENT_NEWOBJ)
		trace_newobj_i(tpval, data);
	else
		trace_freeobj_i(tpval, data);
}

const struct hdx_site *hdx_trace_lookup(VALUE obj)
{
	void **v = hdx_table_get(&sites, obj);

	return v ? *v : NULL;
}

/* :nodoc: _trace_start(stacks = false, depth = 32, sample = 1): stacks
 * true records the Ruby stack (depth innermost frames) of 1 in sample
 * allocations on average; a nested start keeps the first's settings
 * unless it asks for stacks the first did not. */
static VALUE trace_start_m(int argc, VALUE *argv, VALUE self)
{
	VALUE stacks, depth, sample;

	rb_scan_args(argc, argv, "03", &stacks, &depth, &sample);
	if (RTEST(stacks) && (trace_depth == 0 || !stk.on)) {
		long d = NIL_P(depth) ? 32 : NUM2LONG(depth);
		long n = NIL_P(sample) ? 1 : NUM2LONG(sample);

		if (d < 1 || d > HDX_STACK_MAX)
			rb_raise(rb_eArgError,
				 "heapdump: depth must be 1 to %d", HDX_STACK_MAX);
		if (n < 1)
			rb_raise(rb_eArgError, "heapdump: sample must be 1 or more");
		stk.depth = (int)d;
		stk.smp.sample = (unsigned long)n;
		stk.smp.left = 0;
		stk.on = 1;
	} else if (trace_depth == 0) {
		stk.on = 0;
	}
	if (trace_depth > 0) {
		trace_depth++;
		return Qnil;
	}
	if (!sites.cap && hdx_table_init(&sites, 1 << 16))
		rb_raise(rb_eNoMemError, "heapdump: no memory for the trace table");
	trace_depth = 1;
	if (NIL_P(trace_tp))
		trace_tp = rb_tracepoint_new(0, RUBY_INTERNAL_EVENT_NEWOBJ |
						     RUBY_INTERNAL_EVENT_FREEOBJ,
					     trace_event_i, NULL);
	rb_tracepoint_enable(trace_tp);
	return Qnil;
}

/* :nodoc: */
static VALUE trace_stop_m(VALUE self)
{
	if (trace_depth == 0 || --trace_depth > 0)
		return Qnil;
	rb_tracepoint_disable(trace_tp);
	return Qnil;
}

static void clear_sites(void)
{
	size_t i;

	for (i = 0; i < sites.cap; i++)
		if (sites.keys[i] > (VALUE)1)
			free(sites.vals[i]);
	hdx_table_free(&sites);
}

/* :nodoc: */
static VALUE trace_clear_m(VALUE self)
{
	if (trace_depth == 0) {
		clear_sites();
		tab_free(&stk.t);
	} else if (sites.cap) {
		clear_sites();
		if (hdx_table_init(&sites, 1 << 16))
			rb_raise(rb_eNoMemError, "heapdump: no memory");
	}
	return Qnil;
}

/* :nodoc: whether the tracer records stacks */
static VALUE trace_stacks_p_m(VALUE self)
{
	return trace_depth > 0 && stk.on ? Qtrue : Qfalse;
}

/* :nodoc: the stack of obj's allocation as [[file, line, label], ...],
 * outermost first, or nil when none was taken */
static VALUE stack_m(VALUE self, VALUE obj)
{
	const struct hdx_site *s;
	const uint32_t *f;
	size_t n, i;
	VALUE a;

	if (RB_SPECIAL_CONST_P(obj) || !(s = hdx_trace_lookup(obj)) ||
	    !s->stack)
		return Qnil;
	hdx_stacks_resolve();
	f = hdx_stack_frames(s->stack, &n);
	a = rb_ary_new_capa((long)n);
	for (i = 0; i < n; i++) {
		const char *file, *method, *klass, *label;
		int line;

		hdx_frame_get(f[i], &file, &line, &method, &klass, &label);
		rb_ary_push(a, rb_ary_new_from_args(
				       3, file ? rb_str_new_cstr(file) : Qnil,
				       INT2NUM(line),
				       label ? rb_str_new_cstr(label) :
					       method ? rb_str_new_cstr(method) : Qnil));
	}
	return a;
}

/* :nodoc: */
static VALUE trace_p_m(VALUE self)
{
	return trace_depth > 0 ? Qtrue : Qfalse;
}

/* :nodoc: the allocation site of obj as [file, line, method, generation] */
static VALUE site_m(VALUE self, VALUE obj)
{
	const struct hdx_site *s;

	if (RB_SPECIAL_CONST_P(obj) || !(s = hdx_trace_lookup(obj)))
		return Qnil;
	return rb_ary_new_from_args(
		4, s->file ? rb_str_new(s->file, (long)s->file_len) : Qnil,
		ULONG2NUM(s->line),
		s->method ? rb_str_new(s->method, (long)s->method_len) : Qnil,
		SIZET2NUM(s->generation));
}

/* ---- HeapDump.track: counts by file:line:class ---- */

struct track_key {
	struct track_key *next;
	const char *file;       /* interned */
	unsigned long line;
	VALUE klass;            /* 0 for a type tag */
	int type;               /* builtin type, for klass == 0 */
	size_t count;
};

#define TRACK_BUCKETS 1024

struct hdx_track {
	struct track_key *agg[TRACK_BUCKETS];
	struct hdx_table live;   /* retained mode: obj -> struct hdx_site */
	VALUE newobj_tp, freeobj_tp;
	VALUE thread;           /* count only its allocations; Qnil: all */
	int retained;
	int stacks, depth;      /* track(stacks: true) */
	struct hdx_sampler smp;
	struct hdx_stktab tab;  /* its own frames and stacks */
	size_t *scount;         /* scount[s]: objects counted at stack s */
	size_t scount_cap;
};

/* The class an object is counted under, 0 when it has none worth naming
 * (hidden objects, and IMEMO whose klass word is not a class). */
static VALUE count_class_of(VALUE obj, int *type)
{
	*type = RB_BUILTIN_TYPE(obj);
	switch (*type) {
	case RUBY_T_IMEMO:
	case RUBY_T_NODE:
	case RUBY_T_NONE:
	case RUBY_T_ZOMBIE:
		return 0;
	default:
		return RBASIC_CLASS(obj);
	}
}

static void track_count(struct hdx_track *t, const char *file,
			unsigned long line, VALUE klass, int type)
{
	size_t h = hash_bytes((const char *)&file, sizeof(file)) ^
		   (line * 31) ^ ((size_t)klass >> 3) ^ (size_t)type;
	struct track_key **b = &t->agg[h & (TRACK_BUCKETS - 1)], *k;

	for (k = *b; k; k = k->next)
		if (k->file == file && k->line == line && k->klass == klass &&
		    (klass || k->type == type)) {
			k->count++;
			return;
		}
	if (!(k = malloc(sizeof(*k))))
		return;
	k->file = file;
	k->line = line;
	k->klass = klass;
	k->type = type;
	k->count = 1;
	k->next = *b;
	*b = k;
}

/* One more object at stack s of t (0: none taken). */
static void track_count_stack(struct hdx_track *t, uint32_t s)
{
	size_t old = t->scount_cap;

	if (!s || grow_arr((void **)&t->scount, &t->scount_cap, (size_t)s + 1,
			   sizeof(*t->scount)))
		return;
	if (t->scount_cap > old)
		memset(t->scount + old, 0,
		       (t->scount_cap - old) * sizeof(*t->scount));
	t->scount[s]++;
}

static void track_newobj_i(VALUE tpval, void *data)
{
	struct hdx_track *t = data;
	rb_trace_arg_t *ta = rb_tracearg_from_tracepoint(tpval);
	VALUE obj = rb_tracearg_object(ta);
	struct hdx_site site, *s;
	void **slot;
	int type;
	VALUE klass;

	if (!NIL_P(t->thread) && rb_thread_current() != t->thread)
		return;
	site_of(ta, &site);
	if (t->stacks && sampled(&t->smp))
		site.stack = capture_stack(&t->tab, t->depth);
	if (!t->retained) {
		klass = count_class_of(obj, &type);
		track_count(t, site.file, site.line, klass, type);
		track_count_stack(t, site.stack);
		return;
	}
	if (!(slot = hdx_table_put(&t->live, obj)))
		return;
	if (!(s = *slot) && !(s = *slot = malloc(sizeof(*s)))) {
		hdx_table_del(&t->live, obj);
		return;
	}
	*s = site;
}

static void track_freeobj_i(VALUE tpval, void *data)
{
	struct hdx_track *t = data;
	rb_trace_arg_t *ta = rb_tracearg_from_tracepoint(tpval);

	free(hdx_table_del(&t->live, rb_tracearg_object(ta)));
}

static void track_mark(void *p)
{
	struct hdx_track *t = p;
	struct track_key *k;
	size_t i;

	rb_gc_mark(t->newobj_tp);
	rb_gc_mark(t->freeobj_tp);
	rb_gc_mark(t->thread);
	tab_mark(&t->tab);
	for (i = 0; i < TRACK_BUCKETS; i++)
		for (k = t->agg[i]; k; k = k->next)
			if (k->klass)
				rb_gc_mark(k->klass);
}

static void track_free_aggs(struct hdx_track *t)
{
	size_t i;

	for (i = 0; i < TRACK_BUCKETS; i++) {
		while (t->agg[i]) {
			struct track_key *k = t->agg[i];

			t->agg[i] = k->next;
			free(k);
		}
	}
}

static void track_free_live(struct hdx_track *t)
{
	size_t i;

	for (i = 0; i < t->live.cap; i++)
		if (t->live.keys[i] > (VALUE)1)
			free(t->live.vals[i]);
	hdx_table_free(&t->live);
}

static void track_free(void *p)
{
	struct hdx_track *t = p;

	track_free_aggs(t);
	track_free_live(t);
	tab_free(&t->tab);
	free(t->scount);
	free(t);
}

/* the retained objects' sites follow the objects compaction moved */
static void track_compact(void *p)
{
	struct hdx_track *t = p;

	hdx_table_relocate(&t->live, free);
}

static const rb_data_type_t track_type = {
	"HeapDump/track",
	{ track_mark, track_free, NULL, track_compact },
	NULL, NULL, 0
};

/* :nodoc: _track_start(retained, thread = nil, stacks = false, depth = 32,
 * sample = 1): starts counting the allocations of thread (all threads
 * when nil), with stacks also by allocation stack (depth innermost
 * frames of 1 in sample allocations on average); returns the tracker */
static VALUE track_start_m(int argc, VALUE *argv, VALUE self)
{
	struct hdx_track *t;
	VALUE obj, retained, thread, stacks, depth, sample;
	long d = 32, n = 1;

	rb_scan_args(argc, argv, "14", &retained, &thread, &stacks, &depth,
		     &sample);
	if (!NIL_P(thread) && !rb_obj_is_kind_of(thread, rb_cThread))
		rb_raise(rb_eTypeError, "heapdump: track's thread must be a Thread");
	if (RTEST(stacks)) {
		d = NIL_P(depth) ? 32 : NUM2LONG(depth);
		n = NIL_P(sample) ? 1 : NUM2LONG(sample);
		if (d < 1 || d > HDX_STACK_MAX)
			rb_raise(rb_eArgError,
				 "heapdump: depth must be 1 to %d", HDX_STACK_MAX);
		if (n < 1)
			rb_raise(rb_eArgError, "heapdump: sample must be 1 or more");
	}
	t = calloc(1, sizeof(*t));
	if (!t || (RTEST(retained) && hdx_table_init(&t->live, 1 << 12))) {
		free(t);
		rb_raise(rb_eNoMemError, "heapdump: no memory for track");
	}
	t->retained = RTEST(retained);
	t->stacks = RTEST(stacks);
	t->depth = (int)d;
	t->smp.sample = (unsigned long)n;
	t->newobj_tp = t->freeobj_tp = Qnil;
	t->thread = thread;
	obj = TypedData_Wrap_Struct(rb_cObject, &track_type, t);
	t->newobj_tp = rb_tracepoint_new(0, RUBY_INTERNAL_EVENT_NEWOBJ,
					 track_newobj_i, t);
	if (t->retained) {
		t->freeobj_tp = rb_tracepoint_new(
			0, RUBY_INTERNAL_EVENT_FREEOBJ, track_freeobj_i, t);
		rb_tracepoint_enable(t->freeobj_tp);
	}
	rb_tracepoint_enable(t->newobj_tp);
	return obj;
}

/* :nodoc: stops recording new objects (frees are still seen) */
static VALUE track_pause_m(VALUE self, VALUE obj)
{
	struct hdx_track *t = rb_check_typeddata(obj, &track_type);

	rb_tracepoint_disable(t->newobj_tp);
	return Qnil;
}

static VALUE class_label(VALUE klass, int type)
{
	VALUE real, name;

	if (!klass) {
		VALUE s = rb_str_new_cstr("(hidden ");

		rb_str_cat_cstr(s, hdx_type_name(type));
		return rb_str_cat_cstr(s, ")");
	}
	real = rb_class_real(klass);
	if (!real)
		return rb_str_new_cstr("(no class)");
	name = rb_mod_name(real);
	return NIL_P(name) ? rb_class_path(real) : rb_str_dup(name);
}

static VALUE track_label(const struct track_key *k)
{
	VALUE s = k->file ? rb_str_new_cstr(k->file) :
			    rb_str_new_cstr("(unknown)");

	rb_str_catf(s, ":%lu:", k->line);
	return rb_str_append(s, class_label(k->klass, k->type));
}

static VALUE track_hash(struct hdx_track *t)
{
	VALUE h = rb_hash_new();
	struct track_key *k;
	size_t i;

	for (i = 0; i < TRACK_BUCKETS; i++) {
		for (k = t->agg[i]; k; k = k->next) {
			VALUE label = track_label(k);
			VALUE old = rb_hash_lookup2(h, label, INT2FIX(0));

			rb_hash_aset(h, label,
				     rb_funcall(old, rb_intern("+"), 1, SIZET2NUM(k->count)));
		}
	}
	return h;
}

/* Retained mode: the objects still in the live table survived the GC. */
static void track_collect_live(struct hdx_track *t)
{
	size_t i;

	for (i = 0; i < t->live.cap; i++) {
		const struct hdx_site *s;
		VALUE obj = t->live.keys[i], klass;
		int type;

		if (obj <= (VALUE)1)
			continue;
		s = t->live.vals[i];
		klass = count_class_of(obj, &type);
		track_count(t, s->file, s->line, klass, type);
		track_count_stack(t, s->stack);
	}
}

/* :nodoc: stops and returns {"file:line:Class" => count}. Must be called
 * (lib/heapdump.rb does, in an ensure): the hooks point at the tracker. */
static VALUE track_finish_m(VALUE self, VALUE obj)
{
	struct hdx_track *t = rb_check_typeddata(obj, &track_type);
	VALUE h;

	rb_tracepoint_disable(t->newobj_tp);
	if (t->retained) {
		rb_tracepoint_disable(t->freeobj_tp);
		track_collect_live(t);
		track_free_live(t);
	}
	h = track_hash(t);
	track_free_aggs(t);
	RB_GC_GUARD(obj);
	return h;
}

/* A frame of t as a frozen [file, line, label] (allocation_stack's shape) */
static VALUE track_frame(const struct hdx_frame *f)
{
	VALUE path = rb_profile_frame_path(f->fv);
	VALUE label = rb_profile_frame_full_label(f->fv);

	if (!RB_TYPE_P(label, T_STRING))
		label = rb_profile_frame_method_name(f->fv);
	if (RB_SYMBOL_P(label))
		label = rb_sym2str(label);
	return rb_obj_freeze(rb_ary_new_from_args(
		3, RB_TYPE_P(path, T_STRING) ? rb_str_new_frozen(path) : Qnil,
		INT2NUM(f->line),
		RB_TYPE_P(label, T_STRING) ? rb_str_new_frozen(label) : Qnil));
}

/* :nodoc: after _track_finish, the counts by stack of a tracker started
 * with stacks: {[[file, line, label], ...] => count} (outermost first,
 * frozen); frees its stacks. nil for a tracker without stacks. */
static VALUE track_stacks_m(VALUE self, VALUE obj)
{
	struct hdx_track *t = rb_check_typeddata(obj, &track_type);
	VALUE h, frames;
	size_t i, s;

	if (!t->stacks)
		return Qnil;
	rb_tracepoint_disable(t->newobj_tp);
	if (t->retained)
		rb_tracepoint_disable(t->freeobj_tp);
	h = rb_hash_new();
	frames = rb_ary_new_capa((long)t->tab.n);
	for (i = 0; i < t->tab.n; i++)
		rb_ary_push(frames, track_frame(&t->tab.v[i]));
	for (s = 1; s <= t->tab.nstacks && s < t->scount_cap; s++) {
		const uint32_t *f;
		size_t n, k;
		VALUE key;

		if (!t->scount[s])
			continue;
		f = tab_stack(&t->tab, (uint32_t)s, &n);
		key = rb_ary_new_capa((long)n);
		for (k = 0; k < n; k++)
			rb_ary_push(key, RARRAY_AREF(frames, (long)f[k] - 1));
		rb_obj_freeze(key);
		/* two frame ids can name the same [file, line, label] */
		rb_hash_aset(h, key,
			     rb_funcall(rb_hash_lookup2(h, key, INT2FIX(0)),
					rb_intern("+"), 1,
					SIZET2NUM(t->scount[s])));
	}
	tab_free(&t->tab);
	free(t->scount);
	t->scount = NULL;
	t->scount_cap = 0;
	t->stacks = 0;
	RB_GC_GUARD(frames);
	RB_GC_GUARD(obj);
	return h;
}

void hdx_init_trace(VALUE mod)
{
	rb_gc_register_address(&trace_tp);
	rb_gc_register_address(&frames_holder);
	/* not NULL: the GC calls no mark function for a NULL data pointer */
	frames_holder = TypedData_Wrap_Struct(0, &frames_type, &stk);
	rb_define_module_function(mod, "_trace_start", trace_start_m, -1);
	rb_define_module_function(mod, "tracing_stacks?", trace_stacks_p_m, 0);
	rb_define_module_function(mod, "allocation_stack", stack_m, 1);
	rb_define_module_function(mod, "_trace_stop", trace_stop_m, 0);
	rb_define_module_function(mod, "trace_allocations_clear",
				  trace_clear_m, 0);
	rb_define_module_function(mod, "tracing?", trace_p_m, 0);
	rb_define_module_function(mod, "allocation_site", site_m, 1);
	rb_define_module_function(mod, "_track_start", track_start_m, -1);
	rb_define_module_function(mod, "_track_pause", track_pause_m, 1);
	rb_define_module_function(mod, "_track_finish", track_finish_m, 1);
	rb_define_module_function(mod, "_track_stacks", track_stacks_m, 1);
}
