/*
 * tgraph.h - small graphs written as dumps for the graph unit tests:
 * node i is an OBJECT at 0x10000 + 0x28 * i (so node ids follow i) with
 * memsize 40 + i; edges are written grouped by source, in the order
 * they were added; root nodes go on one "vm" ROOT line.
 */
#ifndef TGRAPH_H
#define TGRAPH_H

#include "heapdump.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A graph to write as a dump: node i is at 0x10000 + 0x28 * i, so node
 * ids follow i; memsize 40 + i. */
struct graph {
	size_t n;
	uint32_t *from, *to;
	size_t ne, cap;
	uint32_t *root; /* nodes a "vm" ROOT line holds */
	size_t nroot;
	int dangling;   /* add a reference to no object to every node */
};

static inline void g_init(struct graph *g, size_t n)
{
	memset(g, 0, sizeof(*g));
	g->n = n;
}

static inline void g_edge(struct graph *g, uint32_t a, uint32_t b)
{
	if (g->ne == g->cap) {
		g->cap = g->cap ? g->cap * 2 : 64;
		g->from = realloc(g->from, g->cap * sizeof(*g->from));
		g->to = realloc(g->to, g->cap * sizeof(*g->to));
		if (!g->from || !g->to)
			abort();
	}
	g->from[g->ne] = a;
	g->to[g->ne++] = b;
}

static inline void g_free(struct graph *g)
{
	free(g->from);
	free(g->to);
	free(g->root);
	memset(g, 0, sizeof(*g));
}


/* Writes the dump (edges grouped by source) and builds its store. */
static inline hd_store *g_store(const struct graph *g)
{
	char path[] = "/tmp/t_graph_XXXXXX";
	size_t *first, i, k;
	uint32_t *order;
	hd_store *s = NULL;
	FILE *f;
	int fd = mkstemp(path);

	if (fd < 0 || !(f = fdopen(fd, "w")))
		return NULL;
	first = calloc(g->n + 1, sizeof(*first));
	order = malloc((g->ne ? g->ne : 1) * sizeof(*order));
	if (!first || !order)
		abort();
	for (i = 0; i < g->ne; i++)
		first[g->from[i] + 1]++;
	for (i = 0; i < g->n; i++)
		first[i + 1] += first[i];
	for (i = 0; i < g->ne; i++)
		order[first[g->from[i]]++] = (uint32_t)i;
	for (i = g->n; i > 0; i--)
		first[i] = first[i - 1];
	first[0] = 0;
	if (g->nroot) {
		fputs("{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":[", f);
		for (i = 0; i < g->nroot; i++)
			fprintf(f, "%s\"0x%zx\"", i ? ", " : "",
				(size_t)0x10000 + 0x28 * g->root[i]);
		fputs("]}\n", f);
	}
	for (i = 0; i < g->n; i++) {
		int any = 0;

		fprintf(f, "{\"address\":\"0x%zx\", \"type\":\"OBJECT\", "
			   "\"references\":[", (size_t)0x10000 + 0x28 * i);
		for (k = first[i]; k < first[i + 1]; k++, any = 1)
			fprintf(f, "%s\"0x%zx\"", any ? ", " : "",
				(size_t)0x10000 + 0x28 * g->to[order[k]]);
		if (g->dangling)
			fprintf(f, "%s\"0xdead0\"", any ? ", " : "");
		fprintf(f, "], \"memsize\":%zu}\n", 40 + i);
	}
	fclose(f);
	free(first);
	free(order);
	if (hd_store_build(&s, path, NULL, NULL))
		s = NULL;
	unlink(path);
	return s;
}

static uint64_t rnd_state = 0x9e3779b97f4a7c15ULL;

static inline uint32_t rnd(uint32_t n)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return (uint32_t)(rnd_state % n);
}

#endif /* TGRAPH_H */
