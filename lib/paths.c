/*
 * paths.c - graph queries over a store: what keeps objects alive.
 *
 * One search from the roots by levels of cost (program-level holders
 * first: VM caches and machine_context cost more, heapdump.h's hd_reach
 * says how) gives each reached node the node (or root category) it was
 * first reached from: a tree of cheapest paths. roots-of walks that tree back from each target, marking nodes;
 * a walk stops at the first node already marked, so all the walks
 * together cost O(N). path reads one branch of the tree; subgraph-of is
 * a forward search from a set. Everything is iterative, with a queue of
 * node ids and bitmaps: about 8 bytes a node at the peak, and no
 * recursion, so a list a million long is like any other graph.
 */
#include "graph.h"

#define UNREACHED 0xffffffffu

struct hd_reach {
	const hd_store *s;
	uint32_t n;              /* nodes */
	unsigned flags;          /* HD_ROOTS_SKIP_WEAK */
	uint32_t *pred;          /* node, root category, or UNREACHED */
	unsigned char *top;      /* bitmap: pred[] is a root category */
	unsigned char *weak;     /* bitmap: references not followed */
	unsigned char *vm;       /* bitmap: a VM cache (is_vm_cache) */
	unsigned char *keyed;    /* bitmap: WeakKeyMap values whose key the
				  * dump lists (hd__ephemeron_keyed), or NULL */
	/* bitmaps: the plain shortest path (one BFS, no preference) to the
	 * node goes through a VM cache / starts at machine_context */
	unsigned char *short_cache, *short_stack;
	uint64_t reached;
};

/* Exact comparison of a borrowed (ptr, len) name with a C string. */
static int name_is(const char *p, size_t len, const char *s)
{
	return p && len == strlen(s) && memcmp(p, s, len) == 0;
}

static int weak_class_name(const char *p, size_t len)
{
	return name_is(p, len, "ObjectSpace::WeakMap") ||
	       name_is(p, len, "WeakRef");
}

/*
 * Is id a weak-reference internal whose references must not be walked:
 * a DATA of struct weakmap, or an instance of a class named
 * ObjectSpace::WeakMap or WeakRef (the class of weakref.rb, whose
 * referent lives in its class's WeakMap)? Not an ObjectSpace::WeakKeyMap
 * (struct weakkeymap): the references a dump lists for it are its
 * values, which it holds as long as their keys live (an ephemeron
 * table, man 5 heapdump-store, WEAK MAPS); its weak keys are not listed.
 */
static int is_weak(const hd_store *s, hd_node_id id)
{
	const char *p;
	size_t len;
	hd_node_id c;

	if (hd__wkmap(s, id))
		return 0;
	if (hd_store_type(s, id) == HD_T_DATA &&
	    (p = hd_store_aux(s, id, &len)) && name_is(p, len, "weakmap"))
		return 1;
	/* an IMEMO is no instance: on 4.0 the class of an IMEMO/fields is
	 * the owner of the ivars it holds (here, maybe the class WeakRef) */
	if (hd_store_type(s, id) == HD_T_IMEMO)
		return 0;
	c = hd_store_class(s, id);
	if (c == HD_NODE_NONE || hd_store_type(s, c) != HD_T_CLASS)
		return 0;
	p = hd_store_aux(s, c, &len);
	return weak_class_name(p, len);
}

static const char eph_name[] = "(ephemeron value)";

/* Does an object other than a WeakKeyMap hold v under the name
 * "(ephemeron value)": v's key, as the gem's dumps list it? */
static int key_listed(const hd_store *s, hd_node_id v)
{
	hd_edge_iter it;
	hd_node_id u;
	const char *name;
	size_t len;

	hd_store_referrers(s, v, &it);
	while (hd_edge_iter_next(&it, &u) == 0) {
		if (hd__wkmap(s, u))
			continue;
		name = hd_store_ref_name(s, u, v, &len, NULL);
		if (name && name_is(name, len, eph_name))
			return 1;
	}
	return 0;
}

unsigned char *hd__ephemeron_keyed(const hd_store *s, int *nomem)
{
	uint32_t i, n = hd_store_node_count(s);
	unsigned char *m = NULL;
	hd_edge_iter it;
	hd_node_id v;

	*nomem = 0;
	for (i = 0; i < n; i++) {
		if (!hd__wkmap(s, i))
			continue;
		hd_store_refs(s, i, &it);
		while (hd_edge_iter_next(&it, &v) == 0) {
			if (v >= n || !key_listed(s, v))
				continue;
			if (!m && !(m = hd__bitmap_new(n))) {
				*nomem = 1;
				return NULL;
			}
			hd__bit_set(m, v);
		}
	}
	return m;
}

int hd__is_weak(const hd_store *s, hd_node_id id)
{
	return is_weak(s, id);
}

unsigned char *hd__weak_bitmap(const hd_store *s)
{
	uint32_t i, n = hd_store_node_count(s);
	unsigned char *m = hd__bitmap_new(n);

	if (!m)
		return NULL;
	for (i = 0; i < n; i++)
		if (is_weak(s, i))
			hd__bit_set(m, i);
	return m;
}

static int mark_weak(hd_reach *r)
{
	r->weak = hd__weak_bitmap(r->s);
	return r->weak ? 0 : HD_ENOMEM;
}

static int follows(const hd_reach *r, hd_node_id id)
{
	return !r->weak || !hd__bit(r->weak, id);
}

/* Does u hold v: not a WeakKeyMap's reference to a value whose key the
 * dump lists (the key holds it)? */
static int holds_ref(const hd_reach *r, hd_node_id u, hd_node_id v)
{
	return !r->keyed || !hd__bit(r->keyed, v) || !hd__wkmap(r->s, u);
}

/* ---- the search: program-level holders first ---- */

/*
 * Is id a cache of the VM rather than a holder of the program: an IMEMO
 * constcache (a constant's inline cache in an iseq), callcache or
 * callinfo (a call site's method cache), or the DATA VM/cc_table of
 * call caches a class keeps? What it references is held for the program
 * by a constant, a method table or a class as well, as long as it lives.
 */
static int is_vm_cache(const hd_store *s, hd_node_id id)
{
	int t = hd_store_type(s, id);
	const char *p;
	size_t len;

	if (t != HD_T_IMEMO && t != HD_T_DATA)
		return 0;
	p = hd_store_aux(s, id, &len);
	if (t == HD_T_DATA)
		return name_is(p, len, "VM/cc_table");
	return name_is(p, len, "constcache") || name_is(p, len, "callcache") ||
	       name_is(p, len, "callinfo");
}

/* Is root category c machine_context (the C stacks, read
 * conservatively: a word that looks like a pointer, maybe stale)? */
static int is_stack_root(const hd_store *s, uint32_t c)
{
	const char *name = hd_store_root_name(s, c);

	return name && strcmp(name, "machine_context") == 0;
}

/* The cost of a path through a VM cache, and from machine_context. */
#define COST_CACHE 1
#define COST_STACK 2

struct level {
	uint32_t *ids;  /* nodes reached (pred set), to be searched at the
			 * next level */
	size_t n, cap;
};

/*
 * The plain breadth-first search, no preference, category by category:
 * marks in short_cache / short_stack whether each node's path in that
 * tree goes through a VM cache / starts at machine_context. seen is a
 * zeroed bitmap.
 */
static void plain_search(hd_reach *r, uint32_t *queue, unsigned char *seen)
{
	uint32_t c, nroots = hd_store_root_count(r->s), a, b, k;
	size_t head = 0, tail = 0;
	struct hd__csr g;
	hd_edge_iter it;
	hd_node_id u, v;

	for (c = 0; c < nroots; c++) {
		hd_store_root_refs(r->s, c, &it);
		while (hd_edge_iter_next(&it, &v) == 0) {
			if (v >= r->n || hd__bit(seen, v))
				continue;
			hd__bit_set(seen, v);
			if (is_stack_root(r->s, c))
				hd__bit_set(r->short_stack, v);
			if (hd__bit(r->vm, v))
				hd__bit_set(r->short_cache, v);
			queue[tail++] = v;
		}
	}
	hd__store_csr(r->s, 0, &g);
	while (head < tail) {
		u = queue[head++];
		if (!follows(r, u))
			continue;
		hd__csr_range(&g, u, &a, &b);
		for (k = a; k < b; k++) {
			v = hd__csr_at(&g, k);
			if (v >= r->n || hd__bit(seen, v) || !holds_ref(r, u, v))
				continue;
			hd__bit_set(seen, v);
			if (hd__bit(r->short_stack, u))
				hd__bit_set(r->short_stack, v);
			if (hd__bit(r->short_cache, u) || hd__bit(r->vm, v))
				hd__bit_set(r->short_cache, v);
			queue[tail++] = v;
		}
	}
}

/* Reaches v from root category c (pred, top) and queues it. */
static void seed(hd_reach *r, uint32_t *queue, size_t *tail, uint32_t c,
		 hd_node_id v)
{
	r->pred[v] = c;
	hd__bit_set(r->top, v);
	queue[(*tail)++] = v;
}

/* Seeds the queue with the objects of every root category but
 * machine_context, in order. */
static size_t seed_roots(hd_reach *r, uint32_t *queue)
{
	uint32_t c, nroots = hd_store_root_count(r->s);
	hd_edge_iter it;
	hd_node_id v;
	size_t tail = 0;

	for (c = 0; c < nroots; c++) {
		if (is_stack_root(r->s, c))
			continue;
		hd_store_root_refs(r->s, c, &it);
		while (hd_edge_iter_next(&it, &v) == 0)
			if (v < r->n && r->pred[v] == UNREACHED)
				seed(r, queue, &tail, c, v);
	}
	return tail;
}

/* The objects of machine_context no cheaper path reached, queued. */
static void seed_stack(hd_reach *r, uint32_t *queue, size_t *tail)
{
	uint32_t c, nroots = hd_store_root_count(r->s);
	hd_edge_iter it;
	hd_node_id v;

	for (c = 0; c < nroots; c++) {
		if (!is_stack_root(r->s, c))
			continue;
		hd_store_root_refs(r->s, c, &it);
		while (hd_edge_iter_next(&it, &v) == 0)
			if (v < r->n && r->pred[v] == UNREACHED)
				seed(r, queue, tail, c, v);
	}
}

/*
 * The search that chooses the paths: a breadth-first search by levels of
 * cost (Dial's buckets, costs 0 to COST_STACK a step): a reference to a
 * VM cache costs COST_CACHE, a path from machine_context starts at
 * COST_STACK, every other reference and root costs nothing. Level L is a
 * plain BFS from its seeds, in order; a VM cache it meets is reached
 * (its pred is final: no later level is cheaper) but searched from at
 * level L + 1 only. (A WeakKeyMap does not hold a value whose key the
 * dump lists: the path goes through the key.) So each node's path has the fewest VM caches and
 * stack roots first, then the fewest references found in that order.
 * Every node is queued once: O(N + E).
 */
static int search(hd_reach *r, uint32_t *queue)
{
	size_t head = 0, tail = seed_roots(r, queue), i;
	struct level next = { 0 }, now = { 0 }, t;
	unsigned level = 0;
	struct hd__csr g;
	hd_node_id u, v;
	uint32_t a, b, k;
	int rc = 0;

	hd__store_csr(r->s, 0, &g);
	for (;;) {
		while (head < tail) {
			u = queue[head++];
			if (!follows(r, u))
				continue;
			hd__csr_range(&g, u, &a, &b);
			for (k = a; k < b; k++) {
				v = hd__csr_at(&g, k);
				if (v >= r->n || r->pred[v] != UNREACHED ||
				    !holds_ref(r, u, v))
					continue;
				r->pred[v] = u;
				if (!hd__bit(r->vm, v)) {
					queue[tail++] = v;
				} else if (hd__push_u32(&next.ids, &next.n,
							&next.cap, v)) {
					rc = HD_ENOMEM;
					goto out;
				}
			}
		}
		/* level + 1: the caches met at this level, then (at
		 * COST_STACK) the stack's objects nothing cheaper reached */
		level++;
		t = now;
		now = next;
		next = t;
		next.n = 0;
		for (i = 0; i < now.n; i++)
			queue[tail++] = now.ids[i];
		if (level == COST_STACK)
			seed_stack(r, queue, &tail);
		if (head == tail && level >= COST_STACK)
			break;
	}
out:
	r->reached = tail;
	HD_FREE(now.ids, now.cap);
	HD_FREE(next.ids, next.cap);
	return rc;
}

/* The VM caches (vm), and the plain search's marks (short_*). */
static int mark_caches(hd_reach *r, uint32_t *queue)
{
	unsigned char *seen;
	uint32_t i;
	int nomem;

	r->keyed = hd__ephemeron_keyed(r->s, &nomem);
	if (nomem)
		return HD_ENOMEM;
	r->vm = hd__bitmap_new(r->n);
	r->short_cache = hd__bitmap_new(r->n);
	r->short_stack = hd__bitmap_new(r->n);
	seen = hd__bitmap_new(r->n);
	if (!r->vm || !r->short_cache || !r->short_stack || !seen) {
		hd__bitmap_free(seen, r->n);
		return HD_ENOMEM;
	}
	for (i = 0; i < r->n; i++)
		if (is_vm_cache(r->s, i))
			hd__bit_set(r->vm, i);
	plain_search(r, queue, seen);
	hd__bitmap_free(seen, r->n);
	return 0;
}

int hd_reach_new(hd_reach **out, const hd_store *s, unsigned flags,
		 hd_error *err)
{
	hd_reach *r;
	uint32_t *queue = NULL;
	uint32_t i;

	HD_ASSERT_ARG(out && s);
	*out = NULL;
	r = hd__calloc(1, sizeof(*r));
	if (!r)
		goto nomem;
	r->s = s;
	r->n = hd_store_node_count(s);
	r->flags = flags & HD_ROOTS_SKIP_WEAK;
	r->pred = hd__array_alloc(r->n ? r->n : 1, sizeof(*r->pred));
	r->top = hd__bitmap_new(r->n);
	queue = hd__array_alloc(r->n ? r->n : 1, sizeof(*queue));
	if (!r->pred || !r->top || !queue)
		goto nomem;
	if (r->flags & HD_ROOTS_SKIP_WEAK && mark_weak(r))
		goto nomem;
	if (mark_caches(r, queue))
		goto nomem;
	for (i = 0; i < r->n; i++)
		r->pred[i] = UNREACHED;
	if (search(r, queue))
		goto nomem;
	hd__free(queue, (r->n ? r->n : 1) * sizeof(*queue));
	*out = r;
	return 0;
nomem:
	if (r)
		hd__free(queue, (r->n ? r->n : 1) * sizeof(*queue));
	hd_reach_free(r);
	return hd__error(err, HD_ENOMEM, "out of memory");
}

void hd_reach_free(hd_reach *r)
{
	size_t n;

	if (!r)
		return;
	n = r->n ? r->n : 1;
	hd__free(r->pred, n * sizeof(*r->pred));
	hd__bitmap_free(r->top, r->n);
	hd__bitmap_free(r->weak, r->n);
	hd__bitmap_free(r->vm, r->n);
	hd__bitmap_free(r->keyed, r->n);
	hd__bitmap_free(r->short_cache, r->n);
	hd__bitmap_free(r->short_stack, r->n);
	hd__free(r, sizeof(*r));
}

uint64_t hd_reach_count(const hd_reach *r)
{
	return r ? r->reached : 0;
}

int hd_reach_reached(const hd_reach *r, hd_node_id id)
{
	return r && id < r->n && r->pred[id] != UNREACHED;
}

hd_node_id hd_reach_pred(const hd_reach *r, hd_node_id id, uint32_t *root)
{
	if (!hd_reach_reached(r, id))
		return HD_NODE_NONE;
	if (hd__bit(r->top, id)) {
		if (root)
			*root = r->pred[id];
		return HD_NODE_NONE;
	}
	return r->pred[id];
}

/* ---- one path ---- */

void hd_root_path_free(hd_root_path *p)
{
	if (!p)
		return;
	hd__free(p->nodes, p->cap * sizeof(*p->nodes));
	p->nodes = NULL;
	p->n = p->cap = 0;
	p->root = 0;
}

static int unreached_error(const hd_store *s, hd_node_id id, hd_error *err)
{
	if (!hd_store_root_count(s))
		return hd__error(err, HD_ENOTFOUND,
				 "no GC root reaches 0x%llx: the dump has no "
				 "ROOT lines (a partial dump)",
				 (unsigned long long)hd_store_address(s, id));
	return hd__error(err, HD_ENOTFOUND, "no GC root reaches 0x%llx",
			 (unsigned long long)hd_store_address(s, id));
}

/*
 * What the path goes through (via), and what the plain shortest path
 * would have gone through when the rule chose another (passed_over: 0
 * when the rule changed nothing).
 */
static void path_rule(hd_root_path *out, const hd_reach *r,
		      hd_node_id target)
{
	unsigned shortest = 0;
	size_t i;

	out->via = 0;
	out->passed_over = 0;
	if (is_stack_root(r->s, out->root))
		out->via |= HD_PATH_VIA_STACK;
	for (i = 0; i < out->n; i++)
		if (hd__bit(r->vm, out->nodes[i]))
			out->via |= HD_PATH_VIA_CACHE;
	if (hd__bit(r->short_stack, target))
		shortest |= HD_PATH_VIA_STACK;
	if (hd__bit(r->short_cache, target))
		shortest |= HD_PATH_VIA_CACHE;
	if (shortest != out->via)
		out->passed_over = shortest;
}

int hd_reach_path(hd_root_path *out, const hd_reach *r, hd_node_id target,
		  hd_error *err)
{
	size_t len = 1, i;
	hd_node_id v;

	HD_ASSERT_ARG(r && out && target < r->n);
	out->n = 0;
	out->via = out->passed_over = 0;
	if (r->pred[target] == UNREACHED)
		return unreached_error(r->s, target, err);
	for (v = target; !hd__bit(r->top, v); v = r->pred[v])
		len++;
	if (hd__grow((void **)&out->nodes, &out->cap, len, sizeof(*out->nodes)))
		return hd__error(err, HD_ENOMEM, "out of memory");
	out->n = len;
	for (v = target, i = len; i-- > 0; v = r->pred[v]) {
		out->nodes[i] = v;
		if (!i)
			break;
	}
	out->root = r->pred[out->nodes[0]];
	path_rule(out, r, target);
	return 0;
}

int hd_path(hd_root_path *out, const hd_store *s, hd_node_id target,
	    unsigned flags, hd_error *err)
{
	hd_reach *r = NULL;
	int rc;

	HD_ASSERT_ARG(s && out && target < hd_store_node_count(s));
	if ((rc = hd_reach_new(&r, s, flags, err)))
		return rc;
	rc = hd_reach_path(out, r, target, err);
	hd_reach_free(r);
	return rc;
}

size_t hd_path_note(char *buf, size_t size, const hd_root_path *p)
{
	unsigned o = p ? p->passed_over : 0;
	const char *what;

	if (!o) {
		if (size)
			buf[0] = '\0';
		return 0;
	}
	if (o == HD_PATH_VIA_STACK)
		what = "from machine_context (a C stack, maybe a stale pointer)";
	else if (o == HD_PATH_VIA_CACHE)
		what = "through a VM cache";
	else
		what = "from machine_context through a VM cache";
	return (size_t)snprintf(buf, size, "%s preferred to the shortest "
				"path, %s",
				p->via ? "fewer VM caches and stack roots" :
					 "program-level holders",
				what);
}

const char *hd_path_via_name(unsigned bit)
{
	if (bit == HD_PATH_VIA_CACHE)
		return "vm_cache";
	if (bit == HD_PATH_VIA_STACK)
		return "machine_context";
	return NULL;
}

/* ---- sets ---- */

/* The nodes marked in m, ascending, into out (emptied first). */
static int bitmap_to_nodes(const unsigned char *m, uint32_t n, uint64_t count,
			   hd_nodes *out)
{
	uint32_t i;

	out->n = 0;
	if (count && hd__grow((void **)&out->ids, &out->cap, (size_t)count,
			      sizeof(*out->ids)))
		return HD_ENOMEM;
	for (i = 0; i < n && out->n < count; i++) {
		if (!m[i / 8]) {
			i |= 7;
			continue;
		}
		if (hd__bit(m, i))
			out->ids[out->n++] = i;
	}
	return 0;
}

/* Marks the tree path from each reached target back to its root. */
static uint64_t mark_shortest(const hd_reach *r, const hd_nodes *targets,
			      unsigned char *keep)
{
	uint64_t count = 0;
	hd_node_id v;
	size_t i;

	for (i = 0; i < targets->n; i++) {
		v = targets->ids[i];
		if (!hd_reach_reached(r, v))
			continue;
		while (!hd__bit(keep, v)) {
			hd__bit_set(keep, v);
			count++;
			if (hd__bit(r->top, v))
				break;
			v = r->pred[v];
		}
	}
	return count;
}

/*
 * Marks every reached node from which a reached target can be reached,
 * by a search over referrers from the targets. A weak referrer (with
 * HD_ROOTS_SKIP_WEAK) does not lead anywhere: its references do not
 * count.
 */
static int mark_ancestors(const hd_reach *r, const hd_nodes *targets,
			  unsigned char *keep, uint64_t *count)
{
	uint32_t *queue = hd__array_alloc(r->n ? r->n : 1, sizeof(*queue));
	size_t head = 0, tail = 0, i;
	struct hd__csr g;
	hd_node_id u, v;
	uint32_t a, b, k;

	if (!queue)
		return HD_ENOMEM;
	hd__store_csr(r->s, 1, &g); /* referrers */
	for (i = 0; i < targets->n; i++) {
		v = targets->ids[i];
		if (!hd_reach_reached(r, v) || hd__bit(keep, v))
			continue;
		hd__bit_set(keep, v);
		queue[tail++] = v;
	}
	while (head < tail) {
		v = queue[head++];
		hd__csr_range(&g, v, &a, &b);
		for (k = a; k < b; k++) {
			u = hd__csr_at(&g, k);
			if (u >= r->n || r->pred[u] == UNREACHED ||
			    hd__bit(keep, u) || !follows(r, u))
				continue;
			hd__bit_set(keep, u);
			queue[tail++] = u;
		}
	}
	*count = tail;
	hd__free(queue, (r->n ? r->n : 1) * sizeof(*queue));
	return 0;
}

int hd_reach_roots_of(hd_nodes *kept_out, hd_nodes *unreached_out,
		      const hd_reach *r, const hd_nodes *targets,
		      unsigned flags, hd_error *err)
{
	unsigned char *keep;
	uint64_t count = 0;
	size_t i;
	int rc = 0;

	HD_ASSERT_ARG(r && targets && kept_out);
	for (i = 0; i < targets->n; i++)
		HD_ASSERT_ARG(targets->ids[i] < r->n);
	keep = hd__bitmap_new(r->n);
	if (!keep)
		return hd__error(err, HD_ENOMEM, "out of memory");
	if (flags & HD_ROOTS_ALL_ANCESTORS)
		rc = mark_ancestors(r, targets, keep, &count);
	else
		count = mark_shortest(r, targets, keep);
	if (!rc)
		rc = bitmap_to_nodes(keep, r->n, count, kept_out);
	if (unreached_out) {
		unreached_out->n = 0;
		for (i = 0; !rc && i < targets->n; i++)
			if (!hd_reach_reached(r, targets->ids[i]))
				rc = hd__nodes_push(unreached_out, targets->ids[i]);
	}
	hd__bitmap_free(keep, r->n);
	if (rc) {
		hd_nodes_free(kept_out);
		hd_nodes_free(unreached_out);
		return hd__error(err, HD_ENOMEM, "out of memory");
	}
	return 0;
}

int hd_roots_of(hd_nodes *kept_out, hd_nodes *unreached_out, const hd_store *s,
		const hd_nodes *targets, unsigned flags, hd_error *err)
{
	hd_reach *r = NULL;
	int rc;

	HD_ASSERT_ARG(s && targets && kept_out);
	if ((rc = hd_reach_new(&r, s, flags, err)))
		return rc;
	rc = hd_reach_roots_of(kept_out, unreached_out, r, targets, flags,
			       err);
	hd_reach_free(r);
	return rc;
}

/* ---- forward ---- */

int hd_subgraph_of(hd_nodes *out, const hd_store *s,
		   const hd_nodes *from, unsigned max_depth, hd_error *err)
{
	uint32_t n, *queue = NULL;
	unsigned char *seen = NULL;
	size_t head = 0, tail = 0, level_end, i;
	unsigned depth = 0;
	struct hd__csr g;
	hd_node_id u, v;
	uint32_t a, b, k;
	int rc = 0;

	HD_ASSERT_ARG(s && from && out);
	n = hd_store_node_count(s);
	hd__store_csr(s, 0, &g);
	for (i = 0; i < from->n; i++)
		HD_ASSERT_ARG(from->ids[i] < n);
	seen = hd__bitmap_new(n);
	queue = hd__array_alloc(n ? n : 1, sizeof(*queue));
	if (!seen || !queue)
		goto nomem;
	for (i = 0; i < from->n; i++) {
		if (hd__bit(seen, from->ids[i]))
			continue;
		hd__bit_set(seen, from->ids[i]);
		queue[tail++] = from->ids[i];
	}
	for (level_end = tail; head < tail && (!max_depth || depth < max_depth);
	     level_end = tail, depth++) {
		while (head < level_end) {
			u = queue[head++];
			hd__csr_range(&g, u, &a, &b);
			for (k = a; k < b; k++) {
				v = hd__csr_at(&g, k);
				if (v >= n || hd__bit(seen, v))
					continue;
				hd__bit_set(seen, v);
				queue[tail++] = v;
			}
		}
	}
	if (bitmap_to_nodes(seen, n, tail, out))
		goto nomem;
	goto out;
nomem:
	rc = hd__error(err, HD_ENOMEM, "out of memory");
out:
	hd__free(queue, (n ? n : 1) * sizeof(*queue));
	hd__bitmap_free(seen, n);
	return rc;
}
