/*
 * interface_report.c - what interface-with reports of an hd_interface:
 * the diff border ranked by keepalive, the self border summed by what
 * each old holder keeps alive (hd_interface_rank), and the border's
 * records with the counts added (hd_interface_records).
 */
#include "hd_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct hd_interface_ranking {
	const hd_border *border;       /* the interface's, by id */
	size_t nborder;
	size_t *order;                 /* border indices, by keepalive */
	hd_border_holder *holders;     /* by keepalive sum */
	size_t nholders;
};

/* The diff-border entry of id, or NULL (the border is sorted by id). */
static const hd_border *find_border(const hd_border *b, size_t n,
				    hd_node_id id)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (b[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && b[lo].id == id ? &b[lo] : NULL;
}

/* A diff-border object's sort key (qsort has no payload: the keys are
 * copied, so that distinct rankings may be made from distinct threads). */
struct rank_key {
	uint64_t keepalive, retained;
	hd_node_id id;
	size_t index;
};

static int cmp_border(const void *a, const void *b)
{
	const struct rank_key *x = a, *y = b;

	if (x->keepalive != y->keepalive)
		return x->keepalive < y->keepalive ? 1 : -1;
	if (x->retained != y->retained)
		return x->retained < y->retained ? 1 : -1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* r->order: the border's indices by rank. */
static int rank_border(hd_interface_ranking *r)
{
	struct rank_key *k = hd__array_alloc(r->nborder + 1, sizeof(*k));
	size_t i;

	if (!k)
		return HD_ENOMEM;
	for (i = 0; i < r->nborder; i++) {
		k[i].keepalive = r->border[i].keepalive_count;
		k[i].retained = r->border[i].retained_count;
		k[i].id = r->border[i].id;
		k[i].index = i;
	}
	qsort(k, r->nborder, sizeof(*k), cmp_border);
	for (i = 0; i < r->nborder; i++)
		r->order[i] = k[i].index;
	hd__free(k, (r->nborder + 1) * sizeof(*k));
	return 0;
}

static int cmp_holder(const void *a, const void *b)
{
	const hd_border_holder *x = a, *y = b;

	if (x->keepalive != y->keepalive)
		return x->keepalive < y->keepalive ? 1 : -1;
	if (x->held != y->held)
		return x->held < y->held ? 1 : -1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/*
 * Each self-border object: the diff-border objects it references (a
 * repeated reference counts once) and the sum of their keepalive counts.
 */
static int sum_holders(hd_interface_ranking *r, const hd_store *s,
		       const hd_nodes *self)
{
	size_t i, *seen = hd__array_alloc(r->nborder + 1, sizeof(*seen));

	if (!seen)
		return HD_ENOMEM;
	memset(seen, 0, (r->nborder + 1) * sizeof(*seen));
	for (i = 0; i < self->n; i++) {
		hd_border_holder *h = &r->holders[i];
		hd_edge_iter it;
		hd_node_id t;

		h->id = self->ids[i];
		hd_store_refs(s, self->ids[i], &it);
		while (hd_edge_iter_next(&it, &t) == 0) {
			const hd_border *b = find_border(r->border,
							 r->nborder, t);

			if (!b || seen[b - r->border] == i + 1)
				continue;
			seen[b - r->border] = i + 1;
			h->held++;
			h->keepalive += b->keepalive_count;
		}
	}
	hd__free(seen, (r->nborder + 1) * sizeof(*seen));
	qsort(r->holders, self->n, sizeof(*r->holders), cmp_holder);
	return 0;
}

int hd_interface_rank(hd_interface_ranking **out, const hd_interface *x,
		      const hd_store *s, hd_error *err)
{
	const hd_nodes *self;
	hd_interface_ranking *r;

	HD_ASSERT_ARG(out && x && s);
	*out = NULL;
	self = hd_interface_self_border(x);
	if (!(r = hd__calloc(1, sizeof(*r))))
		return hd__error(err, HD_ENOMEM, "out of memory");
	r->border = hd_interface_diff_border(x, &r->nborder);
	r->nholders = self->n;
	r->order = hd__array_alloc(r->nborder + 1, sizeof(*r->order));
	r->holders = hd__calloc(self->n + 1, sizeof(*r->holders));
	if (!r->order || !r->holders || sum_holders(r, s, self) ||
	    rank_border(r)) {
		hd_interface_ranking_free(r);
		return hd__error(err, HD_ENOMEM, "out of memory");
	}
	*out = r;
	return 0;
}

const hd_border *hd_interface_ranking_border(const hd_interface_ranking *r,
					     size_t i)
{
	return r && i < r->nborder ? &r->border[r->order[i]] : NULL;
}

const hd_border_holder *
hd_interface_ranking_holder(const hd_interface_ranking *r, size_t i)
{
	return r && i < r->nholders ? &r->holders[i] : NULL;
}

void hd_interface_ranking_free(hd_interface_ranking *r)
{
	if (!r)
		return;
	hd__free(r->order, (r->nborder + 1) * sizeof(*r->order));
	hd__free(r->holders, (r->nholders + 1) * sizeof(*r->holders));
	hd__free(r, sizeof(*r));
}

/* ---- the records ---- */

struct emit {
	const hd_store *s;
	const hd_border *border;
	size_t nborder;
	hd_write_cb w;
	void *payload;
	struct hd__line line;
};

/* The members added to a diff-border record, starting with ", ". */
static int border_fields(struct emit *e, const hd_border *b)
{
	char tmp[256];
	unsigned i;
	int n;

	n = snprintf(tmp, sizeof(tmp),
		     ", \"keepalive_count\":%llu, \"keepalive_memsize\":%llu, "
		     "\"retained_count\":%llu, \"retained_memsize\":%llu, "
		     "\"holders\":%u, \"held_by\":[",
		     (unsigned long long)b->keepalive_count,
		     (unsigned long long)b->keepalive_memsize,
		     (unsigned long long)b->retained_count,
		     (unsigned long long)b->retained_memsize, b->holders);
	if (hd__line_put(tmp, (size_t)n, &e->line))
		return HD_ENOMEM;
	for (i = 0; i < HD_BORDER_HOLDERS && i < b->holders; i++) {
		n = snprintf(tmp, sizeof(tmp), "%s\"0x%llx\"", i ? ", " : "",
			     (unsigned long long)hd_store_address(
				     e->s, b->holder[i]));
		if (hd__line_put(tmp, (size_t)n, &e->line))
			return HD_ENOMEM;
	}
	if (hd__line_put("]", 1, &e->line))
		return HD_ENOMEM;
	if (b->roots) {
		n = snprintf(tmp, sizeof(tmp), ", \"roots\":%u", b->roots);
		if (hd__line_put(tmp, (size_t)n, &e->line))
			return HD_ENOMEM;
	}
	return 0;
}

/*
 * The record as valid NDJSON (hd_record_write), its final '}' moved
 * after the added members, handed to the sink in one piece.
 */
static int on_record(const hd_record *rec, hd_node_id id, void *payload)
{
	struct emit *e = payload;
	const hd_border *b = find_border(e->border, e->nborder, id);
	int rc;

	if ((rc = hd__record_open(&e->line, rec, e->s, NULL)))
		return rc == HD_EPARSE ? 0 : rc; /* not an object: cannot be */
	if (b)
		rc = border_fields(e, b);
	else
		rc = hd__line_put(", \"border\":\"self\"", 17, &e->line);
	if (rc || (rc = hd__record_close(&e->line)))
		return rc;
	return e->w(e->line.p, e->line.len, e->payload);
}

/* The union of the diff border and (with the flag) the self border. */
static int record_set(const hd_interface *x, unsigned flags, hd_nodes *out)
{
	const hd_nodes *self = hd_interface_self_border(x);
	const hd_border *b;
	size_t nb, i = 0, j = 0;
	size_t ns = flags & HD_INTERFACE_RECORDS_SELF ? self->n : 0;

	b = hd_interface_diff_border(x, &nb);
	memset(out, 0, sizeof(*out));
	out->ids = hd__array_alloc(nb + ns + 1, sizeof(*out->ids));
	if (!out->ids)
		return HD_ENOMEM;
	out->cap = nb + ns + 1;
	while (i < nb || j < ns) {
		if (j >= ns || (i < nb && b[i].id < self->ids[j]))
			out->ids[out->n++] = b[i++].id;
		else
			out->ids[out->n++] = self->ids[j++];
	}
	return 0;
}

int hd_interface_records(const hd_interface *x, const hd_store *s,
			 unsigned flags, const hd_read_options *ro,
			 hd_write_cb w, void *payload, hd_error *err)
{
	struct emit e;
	hd_nodes set;
	int rc;

	HD_ASSERT_ARG(x && s && w);
	HD_ASSERT_ARG(!(flags & ~HD_INTERFACE_RECORDS_SELF));
	memset(&e, 0, sizeof(e));
	e.s = s;
	e.border = hd_interface_diff_border(x, &e.nborder);
	e.w = w;
	e.payload = payload;
	if (record_set(x, flags, &set))
		return hd__error(err, HD_ENOMEM, "out of memory");
	rc = hd_store_records(s, NULL, &set, ro, on_record, &e, err);
	hd_nodes_free(&set);
	hd__line_free(&e.line);
	return rc;
}
