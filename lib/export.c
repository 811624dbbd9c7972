/*
 * export.c - a part of the heap as a graph for other tools: GML (Gephi,
 * networkx, igraph) and Graphviz DOT. hd_export_new() picks the nodes
 * (a set, grown along references, with the internals folded away when
 * asked); the writers then stream nodes and edges through a sink. Edges
 * are computed while writing, never stored: the references of each node,
 * followed through folded nodes with an explicit stack. With reference
 * names, each edge is labelled with the names on its way (through
 * folded objects, the last 16), each found by its reference's index.
 * Drawing (Graphviz) is the CLI's business, not the library's.
 */
#include "hd_int.h"

#include <stdio.h>

struct hd_export {
	const hd_store *s;
	unsigned flags;
	uint32_t nnodes;        /* store nodes */
	uint32_t nroots;        /* store root categories */
	unsigned char *folded;  /* bitmap over store nodes (collapse) */
	uint32_t *local;        /* store node -> graph id, or HD_NODE_NONE */
	hd_node_id *nodes;      /* emitted objects, ascending */
	uint32_t nemit;
	uint32_t *root_local;   /* root category -> graph id, or NONE */
	uint32_t nroot_emit;
	/* scratch for one walk through folded nodes */
	uint32_t *stamp;        /* per store node: walk number last seen */
	uint32_t walk;
	hd_node_id *stack;      /* folded nodes to expand */
	size_t stack_cap;
	hd_node_id *out;        /* kept nodes found, deduplicated */
	size_t nout, out_cap;
	/* with reference names: per store node, how the walk reached it
	 * (the node it was reached from, HD_NODE_NONE for the walk's first
	 * references, and the reference's index there) */
	int names;
	hd_node_id *pred;
	uint32_t *predk;
	/* the origin of the walk whose edges are labelled: an object, or
	 * (origin HD_NODE_NONE) root category cat; UINT32_MAX: none */
	hd_node_id origin;
	uint32_t cat;
	char name[1024];
	char label[1024];       /* an edge's label */
};

/* Is id folded (x->folded is NULL when nothing is)? */
static int folded(const struct hd_export *x, uint32_t id)
{
	return x->folded && hd__bit(x->folded, id);
}

static int aux_is(const hd_store *s, hd_node_id id, const char *want)
{
	size_t len;
	const char *a = hd_store_aux(s, id, &len);

	return a && len == strlen(want) && memcmp(a, want, len) == 0;
}

static int class_is(const hd_store *s, hd_node_id id, const char *want)
{
	hd_node_id c = hd_store_class(s, id);

	return c != HD_NODE_NONE && aux_is(s, c, want);
}

/*
 * What --collapse folds: every IMEMO; ARRAY and HASH objects without a
 * class (hidden); the HASH an instance of Set holds (set.rb's @hash);
 * the environments of blocks of Ruby before 2.3 (DATA of class
 * RubyVM::Env or struct VM/env). Arrays and hashes with a class stay.
 */
static int mark_folded(struct hd_export *x)
{
	const hd_store *s = x->s;
	hd_edge_iter it;
	hd_node_id i, t;

	x->folded = hd__calloc((size_t)x->nnodes / 8 + 1, 1);
	if (!x->folded)
		return HD_ENOMEM;
	for (i = 0; i < x->nnodes; i++) {
		int type = hd_store_type(s, i);

		if (type == HD_T_IMEMO ||
		    ((type == HD_T_ARRAY || type == HD_T_HASH) &&
		     hd_store_class_address(s, i) == 0) ||
		    (type == HD_T_DATA && (aux_is(s, i, "VM/env") ||
					   class_is(s, i, "RubyVM::Env"))))
			hd__bit_set(x->folded, i);
		if (type == HD_T_OBJECT && class_is(s, i, "Set")) {
			hd_store_refs(s, i, &it);
			while (hd_edge_iter_next(&it, &t) == 0)
				if (hd_store_type(s, t) == HD_T_HASH)
					hd__bit_set(x->folded, t);
		}
	}
	return 0;
}

/* The name of the k-th reference of the walk's origin (x->origin or root
 * category x->cat), or NULL: O(1) or O(log) either way. */
static const char *origin_name(const struct hd_export *x, uint32_t k,
			       size_t *len, unsigned *flags)
{
	if (flags)
		*flags = 0;
	if (x->origin != HD_NODE_NONE)
		return hd_store_ref_name_at(x->s, x->origin, k, len, flags);
	if (x->cat != UINT32_MAX)
		return hd__store_root_name_at(x->s, x->cat, k, len);
	return NULL;
}

/* Visits t once per walk: a kept node is an edge target, a folded one is
 * expanded later. from and k: the node it is reached from (HD_NODE_NONE
 * for the walk's first references) and the index of the reference there,
 * kept when the store has reference names; of several references of the
 * origin to one object, the first that has a name. */
static int visit(struct hd_export *x, hd_node_id t, size_t *sp,
		 hd_node_id from, uint32_t k)
{
	if (t >= x->nnodes)
		return 0;
	if (x->stamp[t] == x->walk) {
		if (x->names && from == HD_NODE_NONE &&
		    x->pred[t] == HD_NODE_NONE &&
		    !origin_name(x, x->predk[t], NULL, NULL) &&
		    origin_name(x, k, NULL, NULL))
			x->predk[t] = k;
		return 0;
	}
	x->stamp[t] = x->walk;
	if (x->names) {
		x->pred[t] = from;
		x->predk[t] = k;
	}
	if (!folded(x, t))
		return hd__push_u32(&x->out, &x->nout, &x->out_cap, t);
	if (*sp == x->stack_cap &&
	    hd__grow((void **)&x->stack, &x->stack_cap, *sp + 1,
		     sizeof(*x->stack)))
		return HD_ENOMEM;
	x->stack[(*sp)++] = t;
	return 0;
}

/*
 * The targets of the references in *first, each once, with every folded
 * node replaced by the kept nodes it leads to through folded nodes only
 * (depth-first, iterative; each node is seen once per walk, so cycles of
 * folded nodes end). Result in x->out[0..nout).
 */
static int walk(struct hd_export *x, hd_edge_iter *first)
{
	hd_edge_iter it;
	hd_node_id t, f;
	size_t sp = 0;
	uint32_t k = 0;

	x->nout = 0;
	if (++x->walk == 0) { /* wrapped: forget every stamp */
		memset(x->stamp, 0, (size_t)x->nnodes * sizeof(*x->stamp));
		x->walk = 1;
	}
	while (hd_edge_iter_next(first, &t) == 0)
		if (visit(x, t, &sp, HD_NODE_NONE, k++))
			return HD_ENOMEM;
	while (sp) {
		f = x->stack[--sp];
		hd_store_refs(x->s, f, &it);
		for (k = 0; hd_edge_iter_next(&it, &t) == 0; k++)
			if (visit(x, t, &sp, f, k))
				return HD_ENOMEM;
	}
	return 0;
}

static int include(struct hd_export *x, hd_node_id id, hd_node_id *queue,
		   uint32_t *qn)
{
	if (x->local[id] != HD_NODE_NONE || folded(x, id))
		return 0;
	x->local[id] = 0; /* numbered later, in ascending order */
	queue[(*qn)++] = id;
	return 1;
}

/* The selected kept nodes, then breadth-first depth levels along the
 * (collapsed) references. */
static int pick_nodes(struct hd_export *x, const hd_nodes *set,
		      uint32_t depth)
{
	hd_node_id *queue;
	uint32_t qn = 0, lo = 0, hi, level, i;
	hd_edge_iter it;
	size_t k;

	queue = hd__array_alloc(x->nnodes ? x->nnodes : 1, sizeof(*queue));
	if (!queue)
		return HD_ENOMEM;
	if (!set) {
		for (i = 0; i < x->nnodes; i++)
			include(x, i, queue, &qn);
		depth = 0;
	} else {
		for (k = 0; k < set->n; k++)
			if (set->ids[k] < x->nnodes)
				include(x, set->ids[k], queue, &qn);
	}
	for (level = 0; level < depth && lo < qn; level++) {
		for (hi = qn; lo < hi; lo++) {
			hd_store_refs(x->s, queue[lo], &it);
			if (walk(x, &it)) {
				hd__free(queue, (size_t)x->nnodes * sizeof(*queue));
				return HD_ENOMEM;
			}
			for (k = 0; k < x->nout; k++)
				include(x, x->out[k], queue, &qn);
		}
	}
	hd__free(queue, (size_t)x->nnodes * sizeof(*queue));
	return 0;
}

int hd_export_new(hd_export **out, const hd_store *s, const hd_nodes *set,
		  const hd_export_options *opts, hd_error *err)
{
	hd_export_options o = HD_EXPORT_OPTIONS_INIT;
	struct hd_export *x;
	hd_edge_iter it;
	uint32_t i, k;
	uint64_t total;

	HD_ASSERT_ARG(out && s);
	*out = NULL;
	if (opts)
		o = *opts;
	if (o.version != HD_EXPORT_OPTIONS_VERSION)
		return hd__error(err, HD_EINVAL,
				 "unknown export options version %u", o.version);
	if (!(x = hd__calloc(1, sizeof(*x))))
		return hd__error(err, HD_ENOMEM, "out of memory");
	x->s = s;
	x->flags = o.flags;
	x->origin = HD_NODE_NONE;
	x->cat = UINT32_MAX;
	x->nnodes = hd_store_node_count(s);
	x->nroots = hd_store_root_count(s);
	x->local = hd__array_alloc((size_t)x->nnodes + 1, sizeof(*x->local));
	x->stamp = hd__calloc((size_t)x->nnodes + 1, sizeof(*x->stamp));
	x->root_local = hd__array_alloc((size_t)x->nroots + 1,
					sizeof(*x->root_local));
	if (!x->local || !x->stamp || !x->root_local)
		goto nomem;
	memset(x->local, 0xff, (size_t)x->nnodes * sizeof(*x->local));
	if ((x->names = hd_store_has_ref_names(s)) &&
	    (!(x->pred = hd__array_alloc((size_t)x->nnodes + 1,
					 sizeof(*x->pred))) ||
	     !(x->predk = hd__array_alloc((size_t)x->nnodes + 1,
					  sizeof(*x->predk)))))
		goto nomem;
	if ((o.flags & HD_EXPORT_COLLAPSE) && mark_folded(x))
		goto nomem;
	if (pick_nodes(x, set, o.depth))
		goto nomem;
	for (i = 0; i < x->nnodes; i++)
		if (x->local[i] != HD_NODE_NONE)
			x->nemit++;
	if (!(x->nodes = hd__array_alloc((size_t)x->nemit + 1,
					 sizeof(*x->nodes))))
		goto nomem;
	for (i = 0, k = 0; i < x->nnodes; i++)
		if (x->local[i] != HD_NODE_NONE) {
			x->local[i] = k;
			x->nodes[k++] = i;
		}
	/* a root category is a node when it holds an emitted object */
	for (i = 0; i < x->nroots; i++) {
		x->root_local[i] = HD_NODE_NONE;
		hd_store_root_refs(s, i, &it);
		if (walk(x, &it))
			goto nomem;
		for (k = 0; k < x->nout; k++)
			if (x->local[x->out[k]] != HD_NODE_NONE) {
				x->root_local[i] = x->nemit + x->nroot_emit++;
				break;
			}
	}
	total = (uint64_t)x->nemit + x->nroot_emit;
	if (o.max_nodes && total > o.max_nodes) {
		hd__error(err, HD_ELIMIT,
			  "the graph has %llu nodes, more than the limit of %llu",
			  (unsigned long long)total,
			  (unsigned long long)o.max_nodes);
		hd_export_free(x);
		return HD_ELIMIT;
	}
	*out = x;
	return 0;
nomem:
	hd_export_free(x);
	return hd__error(err, HD_ENOMEM, "out of memory");
}

uint64_t hd_export_node_count(const hd_export *x)
{
	return x ? (uint64_t)x->nemit + x->nroot_emit : 0;
}

uint64_t hd_export_object_count(const hd_export *x)
{
	return x ? x->nemit : 0;
}

int hd_export_folded(const hd_export *x, hd_node_id id)
{
	return x && id < x->nnodes && folded(x, id);
}

void hd_export_free(hd_export *x)
{
	if (!x)
		return;
	hd__free(x->folded, x->folded ? (size_t)x->nnodes / 8 + 1 : 0);
	hd__free(x->local, ((size_t)x->nnodes + 1) * sizeof(*x->local));
	hd__free(x->stamp, ((size_t)x->nnodes + 1) * sizeof(*x->stamp));
	hd__free(x->root_local,
		 ((size_t)x->nroots + 1) * sizeof(*x->root_local));
	hd__free(x->nodes, x->nodes ? ((size_t)x->nemit + 1) *
					      sizeof(*x->nodes) : 0);
	hd__free(x->pred, x->pred ? ((size_t)x->nnodes + 1) *
					    sizeof(*x->pred) : 0);
	hd__free(x->predk, x->predk ? ((size_t)x->nnodes + 1) *
					      sizeof(*x->predk) : 0);
	hd__free(x->stack, x->stack_cap * sizeof(*x->stack));
	hd__free(x->out, x->out_cap * sizeof(*x->out));
	hd__free(x, sizeof(*x));
}

/* ---- writing ---- */

/* A small output buffer in front of the sink. */
struct wbuf {
	hd_write_cb w;
	void *payload;
	int rc;
	size_t n;
	char b[8192];
};

static void flush(struct wbuf *o)
{
	if (o->n && !o->rc)
		o->rc = o->w(o->b, o->n, o->payload);
	o->n = 0;
}

static void put(struct wbuf *o, const char *p, size_t n)
{
	while (n && !o->rc) {
		size_t k = sizeof(o->b) - o->n;

		if (k > n)
			k = n;
		memcpy(o->b + o->n, p, k);
		o->n += k;
		p += k;
		n -= k;
		if (o->n == sizeof(o->b))
			flush(o);
	}
}

static void puts_(struct wbuf *o, const char *s)
{
	put(o, s, strlen(s));
}

static void HD_PRINTF(2, 3) printf_(struct wbuf *o, const char *fmt, ...)
{
	char tmp[128];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		put(o, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/*
 * Decodes one UTF-8 character at p (n bytes left): returns its length
 * and code point, or 0 for an invalid or overlong sequence.
 */
static size_t utf8(const unsigned char *p, size_t n, uint32_t *cp)
{
	size_t len, i;
	uint32_t c;

	if (p[0] < 0xc2 || p[0] > 0xf4)
		return 0;
	len = p[0] < 0xe0 ? 2 : p[0] < 0xf0 ? 3 : 4;
	if (n < len)
		return 0;
	c = p[0] & (0x7f >> len);
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (p[i] & 0x3f);
	}
	if ((len == 3 && (c < 0x800 || (c >= 0xd800 && c <= 0xdfff))) ||
	    (len == 4 && (c < 0x10000 || c > 0x10ffff)))
		return 0;
	*cp = c;
	return len;
}

/*
 * A GML string, quoted: ASCII only, as GML and networkx want. '"' is
 * &quot;, '&' &amp;, a character outside printable ASCII &#N; (N its
 * code point when the bytes are UTF-8, else the byte's ISO-8859-1 code).
 * Backslashes are plain characters in GML.
 */
static void gml_body(struct wbuf *o, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, k;
	uint32_t cp;

	while (i < n) {
		size_t run = i;

		while (run < n && p[run] >= 0x20 && p[run] < 0x7f &&
		       p[run] != '"' && p[run] != '&')
			run++;
		put(o, s + i, run - i);
		if ((i = run) == n)
			break;
		if (p[i] == '"')
			puts_(o, "&quot;"), i++;
		else if (p[i] == '&')
			puts_(o, "&amp;"), i++;
		else if (p[i] >= 0x80 && (k = utf8(p + i, n - i, &cp)))
			printf_(o, "&#%lu;", (unsigned long)cp), i += k;
		else
			printf_(o, "&#%u;", (unsigned)p[i]), i++;
	}
}

static void gml_str(struct wbuf *o, const char *s, size_t n)
{
	put(o, "\"", 1);
	gml_body(o, s, n);
	put(o, "\"", 1);
}

/*
 * A DOT string, quoted. '"' and '\' are escaped with a backslash (so no
 * \N, \G, \l escapes can sneak in), a newline is \n (a line break),
 * other control characters are '?' (with visible, the text \xNN, and a
 * newline too: an edge label shows the name as it is); '&' is &amp; (Graphviz expands
 * entities in labels); UTF-8 passes through and other bytes are &#N;
 * (their ISO-8859-1 character), so the file is always valid UTF-8.
 */
static void dot_body(struct wbuf *o, const char *s, size_t n, int visible)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, k;
	uint32_t cp;

	while (i < n) {
		size_t run = i;

		while (run < n && p[run] >= 0x20 && p[run] < 0x7f &&
		       p[run] != '"' && p[run] != '\\' && p[run] != '&')
			run++;
		put(o, s + i, run - i);
		if ((i = run) == n)
			break;
		if (p[i] == '"' || p[i] == '\\') {
			put(o, "\\", 1);
			put(o, s + i, 1);
			i++;
		} else if (p[i] == '&') {
			puts_(o, "&amp;"), i++;
		} else if (visible && (p[i] < 0x20 || p[i] == 0x7f)) {
			printf_(o, "\\\\x%02x", (unsigned)p[i]), i++;
		} else if (p[i] == '\n') {
			puts_(o, "\\n"), i++;
		} else if (p[i] < 0x80) {
			put(o, "?", 1), i++;
		} else if ((k = utf8(p + i, n - i, &cp))) {
			put(o, s + i, k), i += k;
		} else {
			printf_(o, "&#%u;", (unsigned)p[i]), i++;
		}
	}
}

/* The class name (class_name) or the name (node_name) of id, in x->name. */
static const char *node_str(struct hd_export *x, hd_node_id id, int own,
			    size_t *len)
{
	size_t n = own ? hd_store_node_name(x->name, sizeof(x->name), x->s, id) :
			 hd_store_class_name(x->name, sizeof(x->name), x->s, id);

	*len = n < sizeof(x->name) ? n : sizeof(x->name) - 1;
	return x->name;
}

static int gml_node(struct hd_export *x, struct wbuf *o, uint32_t gid,
		     hd_node_id id)
{
	const hd_store *s = x->s;
	char addr[24];
	size_t len;
	const char *str;
	uint64_t g = hd_store_generation(s, id);
	hd_site site;

	snprintf(addr, sizeof(addr), "0x%llx",
		 (unsigned long long)hd_store_address(s, id));
	/* name and address: unique, as networkx wants its labels */
	str = node_str(x, id, 1, &len);
	printf_(o, "  node [ id %lu label \"", (unsigned long)gid);
	gml_body(o, str, len);
	printf_(o, " %s\" name ", addr);
	gml_str(o, str, len);
	printf_(o, " address \"%s\" class ", addr);
	str = node_str(x, id, 0, &len);
	gml_str(o, str, len);
	printf_(o, " type \"%s\" memsize %llu", hd_type_name(hd_store_type(s, id)),
		(unsigned long long)hd_store_memsize(s, id));
	if (g != UINT64_MAX)
		printf_(o, " generation %llu", (unsigned long long)g);
	if (hd_store_site(&site, s, id) == 0) {
		if (site.file) {
			puts_(o, " file ");
			gml_str(o, site.file, site.file_len); /* raw bytes */
		}
		if (site.line)
			printf_(o, " line %llu", (unsigned long long)site.line);
		if (site.method) {
			puts_(o, " method ");
			gml_str(o, site.method, site.method_len);
		}
	}
	puts_(o, " ]\n");
	return 0;
}

/* The most hops of a path through folded objects an edge label names. */
#define LABEL_HOPS 16

/* Appends name (n bytes) to the label, after a space when it is not the
 * first; *len is the label's length so far. */
static void label_add(struct hd_export *x, size_t *len, const char *name,
		      size_t n)
{
	size_t room = sizeof(x->label) - 1 - *len;

	if (*len && room) {
		x->label[(*len)++] = ' ';
		room--;
	}
	if (n > room)
		n = room;
	memcpy(x->label + *len, name, n);
	*len += n;
	x->label[*len] = '\0';
}

/*
 * The label of the edge to t just found by walk() from x->origin (or
 * root category x->cat): the names of the references on the way, through
 * the folded objects between, joined by spaces ("@hash [key]"), NULL when
 * none has a name. *inferred is 1 when one of them was inferred
 * (HD_NAME_INFERRED). O(hops), each name found in O(log references).
 */
static const char *edge_label(struct hd_export *x, hd_node_id t, size_t *len,
			      int *inferred)
{
	hd_node_id from[LABEL_HOPS], c = t;
	uint32_t k[LABEL_HOPS];
	size_t nh = 0, n;
	const char *name;
	unsigned flags;

	*len = 0;
	*inferred = 0;
	x->label[0] = '\0';
	if (!x->names)
		return NULL;
	/* the hops inside the folded part, last first */
	while (x->pred[c] != HD_NODE_NONE && nh < LABEL_HOPS) {
		from[nh] = x->pred[c];
		k[nh++] = x->predk[c];
		c = x->pred[c];
	}
	if (x->pred[c] != HD_NODE_NONE) {
		label_add(x, len, "...", 3); /* a longer way: its end */
	} else {
		/* the first hop, from the origin to c */
		n = 0;
		name = origin_name(x, x->predk[c], &n, &flags);
		if (name) {
			label_add(x, len, name, n);
			*inferred |= (flags & HD_NAME_INFERRED) != 0;
		}
	}
	while (nh--) {
		flags = 0;
		n = 0;
		name = hd_store_ref_name_at(x->s, from[nh], k[nh], &n, &flags);
		if (name) {
			label_add(x, len, name, n);
			*inferred |= (flags & HD_NAME_INFERRED) != 0;
		}
	}
	return *len ? x->label : NULL;
}

/* Calls edge(from, to, label) for every edge between emitted nodes: the
 * objects' (collapsed) references, then the root categories'. The label
 * (edge_label) is NULL when the edge has no name. */
static int for_edges(struct hd_export *x, struct wbuf *o,
		     void (*edge)(struct wbuf *, uint32_t, uint32_t,
				  const char *, size_t, int))
{
	hd_edge_iter it;
	uint32_t i;
	size_t k, n;
	const char *label;
	int inferred;

	for (i = 0; i < x->nemit && !o->rc; i++) {
		hd_store_refs(x->s, x->nodes[i], &it);
		x->origin = x->nodes[i];
		if (walk(x, &it))
			return HD_ENOMEM;
		for (k = 0; k < x->nout; k++)
			if (x->local[x->out[k]] != HD_NODE_NONE) {
				label = edge_label(x, x->out[k], &n,
						   &inferred);
				edge(o, i, x->local[x->out[k]], label, n,
				     inferred);
			}
	}
	for (i = 0; i < x->nroots && !o->rc; i++) {
		if (x->root_local[i] == HD_NODE_NONE)
			continue;
		hd_store_root_refs(x->s, i, &it);
		x->origin = HD_NODE_NONE;
		x->cat = i;
		if (walk(x, &it))
			return HD_ENOMEM;
		for (k = 0; k < x->nout; k++)
			if (x->local[x->out[k]] != HD_NODE_NONE) {
				label = edge_label(x, x->out[k], &n,
						   &inferred);
				edge(o, x->root_local[i],
				     x->local[x->out[k]], label, n, inferred);
			}
	}
	x->origin = HD_NODE_NONE;
	x->cat = UINT32_MAX;
	return 0;
}

/* An edge; with a name, its label attribute (and inferred 1 when it was
 * inferred). */
static void gml_edge(struct wbuf *o, uint32_t a, uint32_t b,
		     const char *label, size_t n, int inferred)
{
	printf_(o, "  edge [ source %lu target %lu", (unsigned long)a,
		(unsigned long)b);
	if (label) {
		puts_(o, " label ");
		gml_str(o, label, n);
		if (inferred)
			puts_(o, " inferred 1");
	}
	puts_(o, " ]\n");
}

static int finish(struct wbuf *o, int rc, hd_error *err)
{
	if (rc)
		return hd__error(err, HD_ENOMEM, "out of memory");
	flush(o);
	if (o->rc)
		hd__error(err, o->rc < 0 ? o->rc : HD_ERROR,
			  "the output was refused");
	return o->rc;
}

int hd_export_write_gml(hd_export *x, hd_write_cb w, void *payload,
			hd_error *err)
{
	struct wbuf *o;
	uint32_t i;
	int rc;

	HD_ASSERT_ARG(x && w);
	if (!(o = hd__calloc(1, sizeof(*o))))
		return hd__error(err, HD_ENOMEM, "out of memory");
	o->w = w;
	o->payload = payload;
	x->origin = HD_NODE_NONE;
	x->cat = UINT32_MAX;
	puts_(o, "graph [\n  directed 1\n");
	for (i = 0, rc = 0; i < x->nemit && !o->rc && !rc; i++)
		rc = gml_node(x, o, i, x->nodes[i]);
	for (i = 0; i < x->nroots && !o->rc; i++) {
		const char *name = hd_store_root_name(x->s, i);

		if (x->root_local[i] == HD_NODE_NONE)
			continue;
		printf_(o, "  node [ id %lu label \"ROOT ",
			(unsigned long)x->root_local[i]);
		gml_body(o, name, strlen(name));
		puts_(o, "\" type \"ROOT\" root ");
		gml_str(o, name, strlen(name));
		puts_(o, " ]\n");
	}
	if (!rc)
		rc = for_edges(x, o, gml_edge);
	if (!rc)
		puts_(o, "]\n");
	rc = finish(o, rc, err);
	hd__free(o, sizeof(*o));
	return rc;
}

/* ---- DOT ---- */

/*
 * The fill colour of each type (ColorBrewer Set3 and Pastel1, documented
 * in man 1 heapdump-to-dot): one colour per family of types.
 */
static const char *type_colour(int type)
{
	switch (type) {
	case HD_T_OBJECT: return "#8dd3c7";
	case HD_T_CLASS:
	case HD_T_MODULE:
	case HD_T_ICLASS: return "#ffed6f";
	case HD_T_STRING: return "#fb8072";
	case HD_T_SYMBOL: return "#fccde5";
	case HD_T_ARRAY: return "#80b1d3";
	case HD_T_HASH: return "#bebada";
	case HD_T_STRUCT: return "#fdb462";
	case HD_T_DATA: return "#b3de69";
	case HD_T_IMEMO:
	case HD_T_NODE: return "#d9d9d9";
	case HD_T_FLOAT:
	case HD_T_BIGNUM:
	case HD_T_RATIONAL:
	case HD_T_COMPLEX: return "#ffffb3";
	case HD_T_REGEXP:
	case HD_T_MATCH: return "#bc80bd";
	case HD_T_FILE: return "#ccebc5";
	default: return "#ffffff";
	}
}

static void dot_node(struct hd_export *x, struct wbuf *o, uint32_t gid,
		     hd_node_id id)
{
	size_t len;
	const char *cls = node_str(x, id, 1, &len);
	int type = hd_store_type(x->s, id);

	printf_(o, "  n%lu [label=\"", (unsigned long)gid);
	dot_body(o, cls, len, 0);
	printf_(o, "\\n0x%llx\", fillcolor=\"%s\", tooltip=\"%s %llu bytes\"]\n",
		(unsigned long long)hd_store_address(x->s, id),
		type_colour(type), hd_type_name(type),
		(unsigned long long)hd_store_memsize(x->s, id));
}

/* An edge; with a name, labelled with it (dot_body: a control
 * character shows as \\xNN), small, and grey when it was inferred. */
static void dot_edge(struct wbuf *o, uint32_t a, uint32_t b,
		     const char *label, size_t n, int inferred)
{
	printf_(o, "  n%lu -> n%lu", (unsigned long)a, (unsigned long)b);
	if (label) {
		puts_(o, " [label=\"");
		dot_body(o, label, n, 1);
		puts_(o, "\", fontname=\"Helvetica\", fontsize=9");
		if (inferred)
			puts_(o, ", fontcolor=\"#666666\"");
		puts_(o, "]");
	}
	puts_(o, "\n");
}

int hd_export_write_dot(hd_export *x, hd_write_cb w, void *payload,
			hd_error *err)
{
	struct wbuf *o;
	uint32_t i;
	int rc;

	HD_ASSERT_ARG(x && w);
	if (!(o = hd__calloc(1, sizeof(*o))))
		return hd__error(err, HD_ENOMEM, "out of memory");
	o->w = w;
	o->payload = payload;
	x->origin = HD_NODE_NONE;
	x->cat = UINT32_MAX;
	puts_(o, "digraph heap {\n"
		 "  node [shape=box, style=\"rounded,filled\", "
		 "fontname=\"Helvetica\", fontsize=10]\n"
		 "  edge [arrowsize=0.6]\n");
	for (i = 0; i < x->nemit && !o->rc; i++)
		dot_node(x, o, i, x->nodes[i]);
	for (i = 0; i < x->nroots && !o->rc; i++) {
		const char *name = hd_store_root_name(x->s, i);

		if (x->root_local[i] == HD_NODE_NONE)
			continue;
		printf_(o, "  n%lu [label=\"ROOT\\n", (unsigned long)x->root_local[i]);
		dot_body(o, name, strlen(name), 0);
		puts_(o, "\", shape=doubleoctagon, style=filled, "
			 "fillcolor=\"#e31a1c\", fontcolor=\"#ffffff\"]\n");
	}
	rc = for_edges(x, o, dot_edge);
	if (!rc)
		puts_(o, "}\n");
	rc = finish(o, rc, err);
	hd__free(o, sizeof(*o));
	return rc;
}
