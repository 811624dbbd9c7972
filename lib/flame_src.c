/*
 * flame_src.c - what a flame graph of a heap is made of (man 1
 * heapdump-flame): the stacks of its objects and their weights, into an
 * hd_flame.
 *
 *  - by path: the dominator tree as a call tree. Each reached object is
 *    a frame under its immediate dominator's frame, and weighs its own
 *    count or memsize there (self weight), so a frame's total is the
 *    retained size of its objects: the sums a flame graph draws are the
 *    retained sizes top prints. Siblings of one frame name (the entries
 *    of a Hash, the Strings of an Array) fold into one frame.
 *  - by site: one frame, the allocation site.
 *  - by stack: the frames a stack source (hd_flame_stack_fn) gives.
 *  - retained (by site or stack): an object without a site or stack is
 *    charged to its nearest dominator that has one, so the untraced
 *    internals an object alone keeps alive (its IMEMOs, hidden arrays)
 *    count where it was allocated, and every reached byte once.
 *
 * Every walk of the tree is a queue over a CSR of the dominator tree's
 * children built by counting (linear); a frame's name is made once per
 * object, and reference names read with one pass over each dominator's
 * references (O(E log E)), never a search per child.
 */
#include "hd_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define NAME_MAX_BYTES 512

/* The dominator tree's children, as CSR; row n is the virtual root. */
struct dkids {
	uint32_t n;
	uint32_t *off; /* n + 2 */
	uint32_t *kid;
	uint32_t *order; /* reached nodes, parents before children */
	size_t norder;
};

static void dkids_free(struct dkids *k)
{
	HD_FREE(k->off, (size_t)k->n + 2);
	HD_FREE(k->kid, k->n ? k->n : 1);
	HD_FREE(k->order, k->n ? k->n : 1);
}

static uint32_t parent_row(const hd_domtree *d, uint32_t n, uint32_t v)
{
	hd_node_id p = hd_domtree_idom(d, v);

	if (p == HD_NODE_NONE)
		return HD__NONE;
	return p == HD_DOM_ROOT || p >= n ? n : p;
}

/* Children by counting, then the breadth-first order from the root. */
static int dkids_build(struct dkids *k, const hd_domtree *d, uint32_t n)
{
	uint32_t v, p, *fill;
	size_t head = 0, i;

	memset(k, 0, sizeof(*k));
	k->n = n;
	k->off = hd__calloc((size_t)n + 2, sizeof(*k->off));
	k->kid = hd__array_alloc(n ? n : 1, sizeof(*k->kid));
	k->order = hd__array_alloc(n ? n : 1, sizeof(*k->order));
	if (!k->off || !k->kid || !k->order)
		return HD_ENOMEM;
	for (v = 0; v < n; v++)
		if ((p = parent_row(d, n, v)) != HD__NONE)
			k->off[p + 1]++;
	for (i = 1; i < (size_t)n + 2; i++)
		k->off[i] += k->off[i - 1];
	fill = hd__array_alloc((size_t)n + 1, sizeof(*fill));
	if (!fill)
		return HD_ENOMEM;
	memcpy(fill, k->off, ((size_t)n + 1) * sizeof(*fill));
	for (v = 0; v < n; v++)
		if ((p = parent_row(d, n, v)) != HD__NONE)
			k->kid[fill[p]++] = v;
	HD_FREE(fill, (size_t)n + 1);
	for (i = k->off[n]; i < k->off[n + 1]; i++)
		k->order[k->norder++] = k->kid[i];
	while (head < k->norder) {
		v = k->order[head++];
		for (i = k->off[v]; i < k->off[v + 1]; i++)
			k->order[k->norder++] = k->kid[i];
	}
	return 0;
}

struct src {
	const hd_store *s;
	const hd_flame_options *o;
	hd_flame *f;
	const hd_domtree *d;
	hd_domtree *own;  /* the tree computed here, or NULL */
	struct dkids k;
	unsigned char *only;  /* bitmap of the nodes that weigh, or NULL */
	unsigned char *skip;  /* bitmap of the dumper's nodes, or NULL */
	uint32_t n;
	hd_error *err;
};

static int weighs(const struct src *x, uint32_t v)
{
	if (x->only && !hd__bit(x->only, v))
		return 0;
	return !(x->skip && hd__bit(x->skip, v));
}

/* v weighs at frame node: kept when the caller asked (version 2) */
static void mark(const struct src *x, uint32_t v, uint32_t node)
{
	if (x->o->version >= 2 && x->o->frame_of)
		x->o->frame_of[v] = node;
}

static uint64_t weight_of(const struct src *x, uint32_t v)
{
	return x->o->metric == HD_FLAME_COUNT ? 1 :
						hd_store_memsize(x->s, v);
}

/* 1 when the type says more than the node name, as top prints it:
 * "Thread (DATA)", "LeakyCache (CLASS)" (an instance and its class are
 * two frames); never after an object, a "(hidden ...)", "IMEMO/",
 * "DATA/" or a name the type repeats ("String"). */
static int type_adds(const char *nm, int t)
{
	const char *tn = hd_type_name(t);

	if (t == HD_T_OBJECT || !tn || nm[0] == '(' ||
	    strncmp(nm, "IMEMO/", 6) == 0 || strncmp(nm, "DATA/", 5) == 0)
		return 0;
	return strcasecmp(nm, tn) != 0;
}

/* "NAME NodeName (TYPE)": name, the reference that holds v, may be
 * NULL; an element's name ("[3]", "[\"user_42\"]") is "[*]", so the
 * entries of one collection fold into one frame, as a profiler's calls
 * from one line; (TYPE) as type_adds says. */
static size_t frame_text(char *buf, size_t size, const struct src *x,
			 uint32_t v, const char *name, size_t len)
{
	char nm[NAME_MAX_BYTES / 2];
	int t = hd_store_type(x->s, v), k;

	hd_store_node_name(nm, sizeof(nm), x->s, v);
	if (name && len && name[0] == '[') {
		name = "[*]";
		len = 3;
	}
	if (len > NAME_MAX_BYTES / 4)
		len = NAME_MAX_BYTES / 4;
	k = snprintf(buf, size, "%.*s%s%s%s%s%s", name ? (int)len : 0,
		     name ? name : "", name && len ? " " : "", nm,
		     type_adds(nm, t) ? " (" : "",
		     type_adds(nm, t) ? hd_type_name(t) : "",
		     type_adds(nm, t) ? ")" : "");
	return k < 0 ? 0 : (size_t)k < size ? (size_t)k : size - 1;
}

/* ---- by path ---- */

static int path_source(struct src *x, uint32_t *fnode)
{
	char buf[NAME_MAX_BYTES];
	int named = hd_store_has_ref_names(x->s);
	size_t i, len;
	int rc;

	for (i = 0; i < x->k.norder; i++) {
		uint32_t v = x->k.order[i];
		uint32_t p = parent_row(x->d, x->n, v);
		uint32_t at = p == x->n ? HD_FLAME_ROOT : fnode[p];

		if (fnode[v] == HD__NONE) {
			len = frame_text(buf, sizeof(buf), x, v, NULL, 0);
			if ((rc = hd_flame_child(x->f, at, buf, len, &fnode[v],
						 x->err)))
				return rc;
		}
		if (weighs(x, v)) {
			hd_flame_weigh(x->f, fnode[v], weight_of(x, v));
			mark(x, v, fnode[v]);
		}
		if (!named)
			continue;
		/* the children v holds by a named reference: named once */
		{
			hd_edge_iter it;
			hd_node_id t;
			uint32_t kk;

			hd_store_refs(x->s, v, &it);
			for (kk = 0; hd_edge_iter_next(&it, &t) == 0; kk++) {
				const char *nm;
				size_t nl;

				if (t >= x->n || fnode[t] != HD__NONE ||
				    parent_row(x->d, x->n, t) != v)
					continue;
				nm = hd_store_ref_name_at(x->s, v, kk, &nl, NULL);
				if (!nm)
					continue;
				len = frame_text(buf, sizeof(buf), x, t, nm, nl);
				if ((rc = hd_flame_child(x->f, fnode[v], buf,
							 len, &fnode[t],
							 x->err)))
					return rc;
			}
		}
	}
	return 0;
}

/* ---- by site, by stack ---- */

#define MAX_STACK 4096

struct frames {
	const char *f[MAX_STACK];
	size_t len[MAX_STACK];
	char site[NAME_MAX_BYTES];
};

/* The frames of v (0 when it has none). */
static size_t frames_of(const struct src *x, uint32_t v, struct frames *fr)
{
	hd_site st;
	int n;

	if (x->o->by == HD_FLAME_BY_STACK) {
		size_t d = x->o->stack(x->o->stack_ctx, v, fr->f, fr->len,
				       MAX_STACK);

		return d > MAX_STACK ? MAX_STACK : d;
	}
	if (hd_store_site(&st, x->s, v) || !st.file)
		return 0;
	if (st.method)
		n = snprintf(fr->site, sizeof(fr->site), "%.*s:%llu in %.*s",
			     (int)(st.file_len > 300 ? 300 : st.file_len),
			     st.file, (unsigned long long)st.line,
			     (int)(st.method_len > 150 ? 150 : st.method_len),
			     st.method);
	else
		n = snprintf(fr->site, sizeof(fr->site), "%.*s:%llu",
			     (int)(st.file_len > 300 ? 300 : st.file_len),
			     st.file, (unsigned long long)st.line);
	fr->f[0] = fr->site;
	fr->len[0] = n < 0 ? 0 : (size_t)n;
	return 1;
}

static const char *none_frame(const hd_flame_options *o)
{
	return o->by == HD_FLAME_BY_STACK ? "(no stack)" : "(no site)";
}

/* v's weight w at the frames of owner */
static int add_frames(struct src *x, uint32_t v, uint32_t owner, uint64_t w,
		      struct frames *fr, size_t *with)
{
	size_t d = owner == HD__NONE ? 0 : frames_of(x, owner, fr), i;
	uint32_t at = HD_FLAME_ROOT;
	int rc;

	if (d)
		(*with)++;
	else {
		fr->f[0] = none_frame(x->o);
		fr->len[0] = strlen(fr->f[0]);
		d = 1;
	}
	for (i = 0; i < d; i++)
		if ((rc = hd_flame_child(x->f, at, fr->f[i], fr->len[i], &at,
					 x->err)))
			return rc;
	hd_flame_weigh(x->f, at, w);
	mark(x, v, at);
	return 0;
}

/* count, memsize: every object (that weighs) at its own frames */
static int own_source(struct src *x, struct frames *fr, size_t *with)
{
	uint32_t v;
	int rc;

	for (v = 0; v < x->n; v++) {
		if (!weighs(x, v))
			continue;
		if ((rc = add_frames(x, v, v, weight_of(x, v), fr, with)))
			return rc;
	}
	return 0;
}

/* retained: every reached object at its nearest framed dominator's */
static int retained_source(struct src *x, uint32_t *owner, struct frames *fr,
			   size_t *with)
{
	size_t i;
	int rc;

	for (i = 0; i < x->k.norder; i++) {
		uint32_t v = x->k.order[i];
		uint32_t p = parent_row(x->d, x->n, v);

		owner[v] = frames_of(x, v, fr) ? v :
			   p == x->n ? HD__NONE : owner[p];
		if (!weighs(x, v))
			continue;
		if ((rc = add_frames(x, v, owner[v], weight_of(x, v), fr,
				     with)))
			return rc;
	}
	return 0;
}

/* ---- the build ---- */

static int check_options(const hd_flame_options *o, hd_error *err)
{
	if (o->version < 1 || o->version > HD_FLAME_OPTIONS_VERSION)
		return hd__error(err, HD_EINVAL, "hd_flame_options version "
						 "%u, expected %u",
				 o->version, HD_FLAME_OPTIONS_VERSION);
	if (o->by < HD_FLAME_BY_PATH || o->by > HD_FLAME_BY_STACK ||
	    o->metric < HD_FLAME_COUNT || o->metric > HD_FLAME_RETAINED ||
	    (o->flags & ~(HD_ROOTS_SKIP_WEAK | HD_FLAME_ALL)))
		return hd__error(err, HD_EINVAL, "invalid flame options");
	if (o->by == HD_FLAME_BY_STACK && !o->stack)
		return hd__error(err, HD_ENOTFOUND, HD_FLAME_NO_STACKS);
	return 0;
}

static int bitmaps(struct src *x, const hd_nodes *only)
{
	size_t i;

	if (only) {
		if (!(x->only = hd__bitmap_new(x->n)))
			return HD_ENOMEM;
		for (i = 0; i < only->n; i++)
			if (only->ids[i] < x->n)
				hd__bit_set(x->only, only->ids[i]);
	}
	if (!(x->o->flags & HD_FLAME_ALL) && hd_store_dumper_count(x->s, NULL)) {
		if (!(x->skip = hd__bitmap_new(x->n)))
			return HD_ENOMEM;
		for (i = 0; i < x->n; i++)
			if (hd_store_is_dumper(x->s, (hd_node_id)i))
				hd__bit_set(x->skip, (uint32_t)i);
	}
	return 0;
}

static int run(struct src *x)
{
	struct frames *fr = NULL;
	uint32_t *ids = NULL;
	size_t with = 0, i;
	int by = x->o->by, rc;
	int tree = by == HD_FLAME_BY_PATH || x->o->metric == HD_FLAME_RETAINED;

	if (tree) {
		unsigned df = (x->o->flags & HD_ROOTS_SKIP_WEAK) |
			      (x->o->flags & HD_FLAME_ALL ?
				       0 : HD_DOMTREE_SKIP_DUMPER);

		if (x->o->domtree)
			x->d = x->o->domtree;
		else if ((rc = hd_domtree_new(&x->own, x->s, df, x->err)))
			return rc;
		else
			x->d = x->own;
		if ((rc = dkids_build(&x->k, x->d, x->n)))
			return hd__error(x->err, rc, "out of memory");
		if (!(ids = hd__array_alloc(x->n ? x->n : 1, sizeof(*ids))))
			return hd__error(x->err, HD_ENOMEM, "out of memory");
		for (i = 0; i < x->n; i++)
			ids[i] = HD__NONE;
	}
	if (by == HD_FLAME_BY_PATH) {
		rc = path_source(x, ids);
		goto out;
	}
	if (!(fr = hd__malloc(sizeof(*fr)))) {
		rc = hd__error(x->err, HD_ENOMEM, "out of memory");
		goto out;
	}
	rc = tree ? retained_source(x, ids, fr, &with) :
		    own_source(x, fr, &with);
	if (!rc && by == HD_FLAME_BY_STACK && !with)
		rc = hd__error(x->err, HD_ENOTFOUND, HD_FLAME_NO_STACKS);
out:
	hd__free(fr, fr ? sizeof(*fr) : 0);
	HD_FREE(ids, ids ? (x->n ? x->n : 1) : 0);
	return rc;
}

int hd_flame_build(hd_flame **out, const hd_store *s, const hd_nodes *only,
		   const hd_flame_options *opts, hd_error *err)
{
	static const hd_flame_options defaults = HD_FLAME_OPTIONS_INIT;
	struct src x;
	uint32_t i;
	int rc;

	if (out)
		*out = NULL;
	HD_ASSERT_ARG(out && s);
	memset(&x, 0, sizeof(x));
	x.s = s;
	x.o = opts ? opts : &defaults;
	x.n = hd_store_node_count(s);
	x.err = err;
	if ((rc = check_options(x.o, err)))
		return rc;
	if ((rc = hd_flame_new(&x.f, x.o->max_depth, err)))
		return rc;
	if (x.o->version >= 2 && x.o->frame_of)
		for (i = 0; i < x.n; i++)
			x.o->frame_of[i] = UINT32_MAX;
	if ((rc = bitmaps(&x, only)))
		rc = hd__error(err, rc, "out of memory");
	else
		rc = run(&x);
	dkids_free(&x.k);
	hd_domtree_free(x.own);
	hd__bitmap_free(x.only, x.n);
	hd__bitmap_free(x.skip, x.n);
	if (rc) {
		hd_flame_free(x.f);
		return rc;
	}
	*out = x.f;
	return 0;
}

/* ---- the objects of a frame ---- */

int hd_flame_objects(hd_nodes *out, const hd_flame *f,
		     const uint32_t *frame_of, size_t n, uint32_t frame,
		     hd_error *err)
{
	hd_flame_node_info k;
	uint32_t count, *stack = NULL, v;
	size_t sn = 0, scap = 0, i;
	unsigned char *under;
	int rc;

	HD_ASSERT_ARG(out && f && (frame_of || !n));
	out->ids = NULL;
	out->n = out->cap = 0;
	if ((rc = hd_flame_node(&k, f, frame)))
		return hd__error(err, rc, rc == HD_EINVAL ?
				 "the tree is not indexed (hd_flame_index)" :
				 "no such frame");
	count = hd_flame_node_count(f) + 1;
	if (!(under = hd__bitmap_new(count)))
		return hd__error(err, HD_ENOMEM, "out of memory");
	rc = hd__push_u32(&stack, &sn, &scap, frame);
	while (!rc && sn) {
		v = stack[--sn];
		hd__bit_set(under, v);
		if (hd_flame_node(&k, f, v))
			continue;
		for (i = 0; !rc && i < k.nchildren; i++)
			rc = hd__push_u32(&stack, &sn, &scap, k.children[i]);
	}
	for (i = 0; !rc && i < n; i++)
		if (frame_of[i] < count && hd__bit(under, frame_of[i]))
			rc = hd__nodes_push(out, (hd_node_id)i);
	hd__free(stack, scap * sizeof(*stack));
	hd__bitmap_free(under, count);
	if (rc) {
		hd_nodes_free(out);
		return hd__error(err, HD_ENOMEM, "out of memory");
	}
	return 0;
}
