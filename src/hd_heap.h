/*
 * hd_heap.h - what the analysis half of the extension shares: the C side
 * of HeapDump::Heap (a store of libheapdump) and HeapDump::NodeSet (a
 * set of its node ids). The public API is lib/heapdump/heap.rb; these
 * files only convert between Ruby values and libheapdump's API, never
 * analyse anything themselves.
 */
#ifndef HD_HEAP_H
#define HD_HEAP_H

#include "hd_ext.h"
#include "heapdump.h"
#include "util/hd_util.h" /* hd_time_us, hd_spool */

/* A store, with the dominator tree and the search from the roots made
 * once, on first use. */
struct hdx_heap {
	hd_store *s;
	hd_domtree *dom;  /* HD_DOMTREE_SKIP_DUMPER, as top and dominators */
	hd_reach *reach;  /* flags 0, as path */
	hd_domtree *dom_weak;  /* the same with HD_ROOTS_SKIP_WEAK (skip_weak:) */
	hd_reach *reach_weak;
};

/* A set of node ids of one heap (kept alive by it). */
struct hdx_nodeset {
	hd_nodes set;
	VALUE heap;
};

extern VALUE hdx_cHeap, hdx_cNodeSet;

struct hdx_heap *hdx_heap_get(VALUE heap);
hd_node_id hdx_node_arg(struct hdx_heap *h, VALUE id);
struct hdx_nodeset *hdx_nodeset_get(VALUE v);
/* a new NodeSet of heap taking over set (emptied) */
VALUE hdx_nodeset_wrap(VALUE heap, hd_nodes *set);
/* raises HeapDump::Error with err's message (or HD code's text) */
NORETURN(void hdx_raise(int rc, const hd_error *err));
/* the heap's dominator tree and search from the roots, made on first use;
 * weak: through no weak reference (HD_ROOTS_SKIP_WEAK, --skip-weak) */
hd_domtree *hdx_heap_dom(struct hdx_heap *h, int weak);
const hd_reach *hdx_heap_reach(struct hdx_heap *h, int weak);
VALUE hdx_str(const char *p, size_t n);
/* a path as [root, root_name, [ids]] (root nil when several) */
VALUE hdx_path_value(const hd_store *s, const hd_root_path *p);

void hdx_init_heap(VALUE mod);
void hdx_init_nodeset(VALUE mod);
void hdx_init_graph(VALUE mod);
void hdx_init_order(VALUE mod);

#endif
