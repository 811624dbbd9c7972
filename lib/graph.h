/*
 * graph.h - the library's one graph layer (graph.c): a CSR view, one
 * iterative depth-first search, strongly connected components (Tarjan)
 * and dominators (Lengauer-Tarjan). Every query that walks a graph of
 * dense uint32 vertex ids (the store's references, a DIFF-induced
 * subgraph) goes through it. Internal: never installed.
 *
 * Nothing here recurses: a list a million long is like any other graph.
 */
#ifndef HD_GRAPH_H
#define HD_GRAPH_H

#include "hd_int.h"

/*
 * A graph in compressed sparse row form: the successors of vertex v are
 * the targets adj[off[v]] .. adj[off[v + 1] - 1]. Either native arrays
 * the view owns (off, adj), or a store's little-endian sections it
 * borrows (off_le, adj_le; hd__store_csr). Targets may be >= n (a
 * store's damaged reference): every walk skips them.
 */
struct hd__csr {
	uint32_t n;                  /* vertices */
	uint32_t *off, *adj;         /* owned: n + 1, acap items */
	size_t acap;
	const unsigned char *off_le; /* or borrowed images: u32[n + 1] */
	const unsigned char *adj_le; /* u32[e] */
	uint64_t e;                  /* targets */
};

#if defined(__GNUC__)
#define HD__PREFETCH(p) __builtin_prefetch(p)
#else
#define HD__PREFETCH(p) ((void)(p))
#endif

/* Asks for the cache line of v's offsets, to read them later. */
static inline void hd__csr_prefetch(const struct hd__csr *g, uint32_t v)
{
	HD__PREFETCH(g->off ? (const void *)(g->off + v) :
			      (const void *)(g->off_le + (size_t)v * 4));
}

/* The targets of v as [*a, *b) in adj; an empty range for a damaged
 * offset of a borrowed image. */
static inline void hd__csr_range(const struct hd__csr *g, uint32_t v,
				 uint32_t *a, uint32_t *b)
{
	if (g->off) {
		*a = g->off[v];
		*b = g->off[v + 1];
		return;
	}
	*a = hd__le32(g->off_le + (size_t)v * 4);
	*b = hd__le32(g->off_le + (size_t)v * 4 + 4);
	if (*a > *b || *b > g->e)
		*a = *b = 0;
}

static inline uint32_t hd__csr_at(const struct hd__csr *g, uint32_t i)
{
	return g->adj ? g->adj[i] : hd__le32(g->adj_le + (size_t)i * 4);
}

/*
 * Builds an owned CSR of n vertices from e edges (from[i] -> to[i]):
 * each vertex's targets keep the edges' order. Every endpoint < n.
 */
HD_HIDDEN int hd__csr_from_edges(struct hd__csr *g, uint32_t n,
				 const uint32_t *from, const uint32_t *to,
				 size_t e);
/* The reverse of g (owned): each vertex's sources ascending. */
HD_HIDDEN int hd__csr_reverse(struct hd__csr *out, const struct hd__csr *g);
/* Frees what an owned view holds and zeroes it (borrowed: zeroes). */
HD_HIDDEN void hd__csr_free(struct hd__csr *g);
/* A store's references (reverse = 0) or referrers (1), borrowed. */
HD_HIDDEN void hd__store_csr(const hd_store *s, int reverse,
			     struct hd__csr *out);

/*
 * The iterative depth-first search, as a sequence of events. Vertices
 * with a bit in cut have their successors ignored (a weak reference not
 * followed); vertices with a bit in skip are never visited (both
 * optional bitmaps over vertex ids). Successors are taken in CSR order.
 *
 *	hd__dfs_start(&d, s);
 *	while ((ev = hd__dfs_step(&d, &v, &t)) != HD__DFS_DONE) ...
 *
 * HD__DFS_ENTER: t is visited for the first time, from v (HD__NONE for
 * the start). HD__DFS_EDGE (only with d.edges set): v -> t, t already
 * visited. HD__DFS_LEAVE: t is finished, v is its parent (or HD__NONE).
 */
struct hd__dfs {
	const struct hd__csr *g;
	const unsigned char *cut, *skip;
	int edges;                /* report HD__DFS_EDGE events */
	uint32_t *stack, *pos;    /* n each */
	unsigned char *seen;      /* bitmap */
	uint32_t sp;
	int pending;              /* the start's ENTER is due */
};

enum { HD__DFS_DONE, HD__DFS_ENTER, HD__DFS_EDGE, HD__DFS_LEAVE };

HD_HIDDEN int hd__dfs_init(struct hd__dfs *d, const struct hd__csr *g,
			   const unsigned char *cut,
			   const unsigned char *skip);
HD_HIDDEN void hd__dfs_free(struct hd__dfs *d);
/* Starts a search from s; 0 if s was visited already or is skipped (or
 * >= n), else 1. Only between searches (after HD__DFS_DONE). */
HD_HIDDEN int hd__dfs_start(struct hd__dfs *d, uint32_t s);
HD_HIDDEN int hd__dfs_step(struct hd__dfs *d, uint32_t *v, uint32_t *t);
static inline int hd__dfs_seen(const struct hd__dfs *d, uint32_t v)
{
	return hd__bit(d->seen, v);
}

/*
 * Strongly connected components (Tarjan, iterative over hd__dfs):
 * searches from starts[0..nstarts) first, then from every vertex in
 * order. comp (n items) receives each vertex's component; components are
 * numbered in the order they close, a reverse topological order of the
 * condensation (every edge between two components goes from a higher
 * number to a lower one). *ncomp receives their number.
 */
HD_HIDDEN int hd__scc(const struct hd__csr *g, const uint32_t *starts,
		      size_t nstarts, uint32_t *comp, uint32_t *ncomp);

/*
 * Dominators (Lengauer-Tarjan, the simple version: path compression
 * without balancing, O(E log N)) of the graph succ (pred its reverse)
 * under a virtual root whose successors are roots[0..nroots) in order.
 * cut and skip as for hd__dfs. Vertices are numbered by DFS preorder
 * ("dfn", 1-based; the virtual root is 1, 0 means unreached):
 */
struct hd__dom {
	uint32_t N;        /* graph vertices; the virtual root is vertex N */
	uint32_t n;        /* dfn numbers given, the virtual root included */
	uint32_t *dfn;     /* N + 1: vertex -> dfn, 0 unreached */
	uint32_t *vertex;  /* N + 2: dfn -> vertex */
	uint32_t *idom;    /* N + 2: dfn -> dfn of the immediate dominator
			      (idom[1] = 0); idom[v] < v */
};

/* Edges from a vertex of from[] to a vertex of to[] (bitmaps) that the
 * dominators do not follow: a WeakKeyMap's references to values whose
 * key the dump lists (the key holds them). */
struct hd__edge_cut {
	const unsigned char *from, *to;
};

HD_HIDDEN int hd__dominators(struct hd__dom *out, const struct hd__csr *succ,
			     const struct hd__csr *pred,
			     const unsigned char *cut,
			     const unsigned char *skip,
			     const struct hd__edge_cut *ecut,
			     const uint32_t *roots, size_t nroots);
HD_HIDDEN void hd__dom_free(struct hd__dom *d);

#endif /* HD_GRAPH_H */
