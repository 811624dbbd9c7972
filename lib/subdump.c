/*
 * subdump.c - a part of the heap written back as a dump: the records of
 * a node set byte for byte from the source dump, optionally with their
 * references (and the ROOT records') restricted to the set, so that the
 * output is a dump whose retention paths can be asked for again
 * (hd_subdump_write), roots-of's targets with their paths as text
 * (hd_roots_of_write); and a set closed under the retention paths from
 * the roots (hd_paths_union), as `diff -o --with-paths` writes it.
 */
#include "hd_int.h"

#include <stdio.h>
#include <string.h>

#define IS_SET(bits, v) ((bits)[(v) / 8] >> ((v) % 8) & 1)

static unsigned char *bitmap_of(const hd_store *s, const hd_nodes *set)
{
	uint32_t n = hd_store_node_count(s);
	unsigned char *bits = hd__calloc((size_t)n / 8 + 1, 1);
	size_t i;

	if (bits)
		for (i = 0; i < set->n; i++)
			if (set->ids[i] < n)
				bits[set->ids[i] / 8] |=
					(unsigned char)(1u << set->ids[i] % 8);
	return bits;
}

/* A JSON string: quotes, backslashes and controls escaped. */
static int json_string(const char *s, size_t n, hd_write_cb w, void *payload)
{
	char esc[8];
	size_t i, start = 0;
	int rc;

	if ((rc = w("\"", 1, payload)))
		return rc;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		const char *e = NULL;

		switch (c) {
		case '"': e = "\\\""; break;
		case '\\': e = "\\\\"; break;
		case '\n': e = "\\n"; break;
		case '\r': e = "\\r"; break;
		case '\t': e = "\\t"; break;
		default:
			if (c < 0x20 || c == 0x7f) {
				snprintf(esc, sizeof(esc), "\\u%04x", c);
				e = esc;
			}
		}
		if (!e)
			continue;
		if (i > start && (rc = w(s + start, i - start, payload)))
			return rc;
		if ((rc = w(e, strlen(e), payload)))
			return rc;
		start = i + 1;
	}
	if (n > start && (rc = w(s + start, n - start, payload)))
		return rc;
	return w("\"", 1, payload);
}

/* "], "ref_names":[..." of root category c's kept references (the
 * caller closes the array), when one of them has a name. */
static int root_names(const hd_store *s, uint32_t c,
		      const unsigned char *keep, hd_write_cb w, void *payload)
{
	hd_edge_iter it;
	hd_node_id v;
	const char *name;
	size_t len;
	uint32_t k = 0;
	int rc, first = 1, named = 0;

	hd_store_root_refs(s, c, &it);
	for (; hd_edge_iter_next(&it, &v) == 0; k++)
		named |= IS_SET(keep, v) && hd__store_root_name_at(s, c, k, NULL);
	if (!named)
		return 0;
	if ((rc = w("], \"ref_names\":[", 16, payload)))
		return rc;
	hd_store_root_refs(s, c, &it);
	for (k = 0; hd_edge_iter_next(&it, &v) == 0; k++) {
		if (!IS_SET(keep, v))
			continue;
		if (!first && (rc = w(", ", 2, payload)))
			return rc;
		first = 0;
		name = hd__store_root_name_at(s, c, k, &len);
		if ((rc = name ? json_string(name, len, w, payload) :
				 w("null", 4, payload)))
			return rc;
	}
	return 0;
}

/* The ROOT records, references restricted to keep; a category that
 * references nothing kept is left out. */
static int write_roots(const hd_store *s, const unsigned char *keep,
		       hd_write_cb w, void *payload)
{
	uint32_t c, nroots = hd_store_root_count(s);
	char addr[32];
	hd_edge_iter it;
	hd_node_id v;
	const char *name;
	int first, rc, n;

	for (c = 0; c < nroots; c++) {
		hd_store_root_refs(s, c, &it);
		first = 1;
		while (hd_edge_iter_next(&it, &v) == 0) {
			if (!IS_SET(keep, v))
				continue;
			if (first) {
				name = hd_store_root_name(s, c);
				if ((rc = w("{\"type\":\"ROOT\", \"root\":", 23,
					    payload)) ||
				    (rc = json_string(name, strlen(name), w,
						      payload)) ||
				    (rc = w(", \"references\":[", 16, payload)))
					return rc;
			}
			n = snprintf(addr, sizeof(addr), "%s\"0x%llx\"",
				     first ? "" : ", ",
				     (unsigned long long)hd_store_address(s,
									  v));
			if ((rc = w(addr, (size_t)n, payload)))
				return rc;
			first = 0;
		}
		if (!first && (rc = root_names(s, c, keep, w, payload)))
			return rc;
		if (!first && (rc = w("]}\n", 3, payload)))
			return rc;
	}
	return 0;
}

struct writer {
	const hd_store *s;
	const unsigned char *keep;
	hd_write_cb w;
	void *payload;
	/* hd_roots_of_write: the targets, their paths, a line and a text */
	const hd_reach *r;
	const unsigned char *targets;
	hd_root_path path;
	struct hd__line line, text;
};

/* Appends hop from -> to of a path to t (hd_store_hop_text, whole). */
static int hop_text(struct hd__line *t, const hd_store *s, hd_node_id from,
		    hd_node_id to)
{
	char small[512], *big;
	size_t n = hd_store_hop_text(small, sizeof(small), s, from, to);
	int rc;

	if (n < sizeof(small))
		return hd__line_put(small, n, t);
	if (!(big = hd__malloc(n + 1)))
		return HD_ENOMEM;
	hd_store_hop_text(big, n + 1, s, from, to);
	rc = hd__line_put(big, n, t);
	hd__free(big, n + 1);
	return rc;
}

/* "root CATEGORY [NAME] -> Node name -> ... -> Target" into wr->text. */
static int path_text(struct writer *wr)
{
	const hd_root_path *p = &wr->path;
	const char *root = hd_store_root_name(wr->s, p->root);
	const char *rn;
	size_t i, nl;
	int rc;

	wr->text.len = 0;
	if ((rc = hd__line_put("root ", 5, &wr->text)) ||
	    (rc = hd__line_put(root, strlen(root), &wr->text)))
		return rc;
	rn = p->n ? hd_store_root_ref_name(wr->s, p->root, p->nodes[0], &nl) :
		    NULL;
	if (rn && ((rc = hd__line_put(" ", 1, &wr->text)) ||
		   (rc = hd__line_put(rn, nl, &wr->text))))
		return rc;
	for (i = 0; i < p->n; i++)
		if ((rc = hd__line_put(" -> ", 4, &wr->text)) ||
		    (rc = hop_text(&wr->text, wr->s, p->nodes[i],
				   i + 1 < p->n ? p->nodes[i + 1] :
						  HD_NODE_NONE)))
			return rc;
	return 0;
}

/* A target's record with its "root_path" member, in one piece. */
static int write_target(struct writer *wr, const hd_record *rec,
			hd_node_id id)
{
	int rc = hd_reach_path(&wr->path, wr->r, id, NULL);

	if (rc == HD_ENOTFOUND) /* no root reaches it: written as it is */
		return hd_record_write(rec, wr->s, wr->keep, wr->w,
				       wr->payload);
	if (rc || (rc = path_text(wr)) ||
	    (rc = hd__record_open(&wr->line, rec, wr->s, wr->keep)) ||
	    (rc = hd__line_put(", \"root_path\":", 14, &wr->line)) ||
	    (rc = json_string(wr->text.p, wr->text.len, hd__line_put,
			      &wr->line)) ||
	    (rc = hd__record_close(&wr->line)))
		return rc;
	return wr->w(wr->line.p, wr->line.len, wr->payload);
}

static int write_record(const hd_record *rec, hd_node_id id, void *payload)
{
	struct writer *wr = payload;

	if (wr->targets && IS_SET(wr->targets, id))
		return write_target(wr, rec, id);
	return hd_record_write(rec, wr->s, wr->keep, wr->w, wr->payload);
}

int hd_subdump_write(const hd_store *s, const hd_nodes *set, unsigned flags,
		     const hd_read_options *ro, hd_write_cb w, void *payload,
		     hd_error *err)
{
	struct writer wr;
	unsigned char *keep = NULL;
	size_t size = (size_t)(s ? hd_store_node_count(s) : 0) / 8 + 1;
	int rc;

	HD_ASSERT_ARG(s && set && w);
	HD_ASSERT_ARG(!(flags & ~(HD_SUBDUMP_ROOTS | HD_SUBDUMP_RESTRICT)));
	if ((flags & (HD_SUBDUMP_ROOTS | HD_SUBDUMP_RESTRICT)) &&
	    !(keep = bitmap_of(s, set)))
		return hd__error(err, HD_ENOMEM, "out of memory");
	memset(&wr, 0, sizeof(wr));
	wr.s = s;
	wr.keep = flags & HD_SUBDUMP_RESTRICT ? keep : NULL;
	wr.w = w;
	wr.payload = payload;
	rc = flags & HD_SUBDUMP_ROOTS ? write_roots(s, keep, w, payload) : 0;
	if (!rc)
		rc = hd_store_records(s, NULL, set, ro, write_record, &wr, err);
	hd__free(keep, size);
	return rc;
}

int hd_roots_of_write(const hd_store *s, const hd_reach *r,
		      const hd_nodes *kept, const hd_nodes *targets,
		      const hd_read_options *ro, hd_write_cb w, void *payload,
		      hd_error *err)
{
	struct writer wr;
	unsigned char *keep, *tbits;
	size_t size = (size_t)(s ? hd_store_node_count(s) : 0) / 8 + 1;
	int rc;

	HD_ASSERT_ARG(s && r && kept && targets && w);
	keep = bitmap_of(s, kept);
	tbits = bitmap_of(s, targets);
	if (!keep || !tbits) {
		hd__free(keep, size);
		hd__free(tbits, size);
		return hd__error(err, HD_ENOMEM, "out of memory");
	}
	memset(&wr, 0, sizeof(wr));
	wr.s = s;
	wr.keep = keep;
	wr.w = w;
	wr.payload = payload;
	wr.r = r;
	wr.targets = tbits;
	rc = write_roots(s, keep, w, payload);
	if (!rc)
		rc = hd_store_records(s, NULL, kept, ro, write_record, &wr,
				      err);
	if (rc == HD_ENOMEM)
		hd__error(err, HD_ENOMEM, "out of memory");
	hd_root_path_free(&wr.path);
	hd__line_free(&wr.line);
	hd__line_free(&wr.text);
	hd__free(keep, size);
	hd__free(tbits, size);
	return rc;
}

int hd_paths_union(hd_nodes *out, uint64_t *unreached_out,
		   const hd_store *s, const hd_nodes *targets, unsigned flags,
		   hd_error *err)
{
	hd_nodes kept = { NULL, 0, 0 }, lost = { NULL, 0, 0 };
	unsigned char *keep = NULL;
	uint32_t n, i;
	size_t k, size;
	int rc;

	HD_ASSERT_ARG(out && s && targets);
	memset(out, 0, sizeof(*out));
	if (unreached_out)
		*unreached_out = 0;
	n = hd_store_node_count(s);
	size = (size_t)n / 8 + 1;
	if ((rc = hd_roots_of(&kept, &lost, s, targets, flags, err)))
		return rc;
	if (!(keep = bitmap_of(s, &kept)))
		goto nomem;
	for (k = 0; k < targets->n; k++)
		if (targets->ids[k] < n)
			keep[targets->ids[k] / 8] |=
				(unsigned char)(1u << targets->ids[k] % 8);
	out->cap = kept.n + targets->n;
	out->ids = hd__array_alloc(out->cap ? out->cap : 1, sizeof(*out->ids));
	if (!out->ids)
		goto nomem;
	if (!out->cap)
		out->cap = 1;
	for (i = 0; i < n; i++)
		if (IS_SET(keep, i))
			out->ids[out->n++] = i;
	if (unreached_out)
		*unreached_out = lost.n;
	rc = 0;
	goto done;
nomem:
	memset(out, 0, sizeof(*out));
	rc = hd__error(err, HD_ENOMEM, "out of memory");
done:
	hd__free(keep, size);
	hd_nodes_free(&kept);
	hd_nodes_free(&lost);
	return rc;
}
