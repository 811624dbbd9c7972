/*
 * select_eval.c - a selection evaluated over a store in one pass, with
 * the per-node work that repeats (class names, file names) cached.
 */
#include "select_int.h"

#include <stdlib.h>

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int pattern_matches(const struct pattern *p, const char *name)
{
	return p->is_re ? regexec(&p->re, name, 0, NULL, 0) == 0 :
			  strcmp(p->text, name) == 0;
}

static int class_matches(const hd_select *sel, const char *name)
{
	size_t i;

	for (i = 0; i < sel->nclasses; i++)
		if (pattern_matches(&sel->classes[i], name))
			return 1;
	return 0;
}

/* --name: a CLASS or MODULE by its own name. */
static int test_name(struct eval *e, hd_node_id id)
{
	int t = hd_store_type(e->s, id);
	const char *aux;
	size_t len, i;

	if (t != HD_T_CLASS && t != HD_T_MODULE)
		return 0;
	aux = hd_store_aux(e->s, id, &len);
	if (!aux || !len || len >= sizeof(e->name))
		return 0;
	memcpy(e->name, aux, len);
	e->name[len] = '\0';
	for (i = 0; i < e->sel->nnames; i++)
		if (pattern_matches(&e->sel->names[i], e->name))
			return 1;
	return 0;
}

/* Does a --via pattern match the name at p (cached by its address: a
 * name is one string of the store)? */
static int via_matches(struct eval *e, struct hd__map *cache,
		       const char *p, size_t len, int *ok)
{
	uint32_t v;
	size_t i;
	int found;

	if (hd__map_get(cache, (uint64_t)(uintptr_t)p, &v)) {
		*ok = (int)v;
		return 0;
	}
	v = 0;
	if (len < sizeof(e->name)) {
		memcpy(e->name, p, len);
		e->name[len] = '\0';
		for (i = 0; i < e->sel->nvias && !v; i++)
			v = (uint32_t)pattern_matches(&e->sel->vias[i],
						      e->name);
	}
	*ok = (int)v;
	return hd__map_put(cache, (uint64_t)(uintptr_t)p, v, &v, &found);
}

/*
 * --via: marks every object referenced through a reference (or held by
 * a root) whose name matches, in one pass over the named edges.
 */
static int via_mark(struct eval *e)
{
	const hd_store *s = e->s;
	uint32_t n = hd_store_node_count(s), i, k, c;
	struct hd__map cache;
	hd_edge_iter it;
	hd_node_id v;
	const char *p;
	size_t len;
	int ok, rc = 0;

	if (!(e->via = hd__bitmap_new(n)))
		return HD_ENOMEM;
	if (!hd_store_has_ref_names(s))
		return 0;
	if (hd__map_init(&cache, 64))
		return HD_ENOMEM;
	for (i = 0; i < n && !rc; i++) {
		hd_store_refs(s, i, &it);
		for (k = 0; hd_edge_iter_next(&it, &v) == 0 && !rc; k++) {
			if (!(p = hd_store_ref_name_at(s, i, k, &len, NULL)))
				continue;
			if (!(rc = via_matches(e, &cache, p, len, &ok)) && ok)
				hd__bit_set(e->via, v);
		}
	}
	for (c = 0; c < hd_store_root_count(s) && !rc; c++) {
		hd_store_root_refs(s, c, &it);
		for (k = 0; hd_edge_iter_next(&it, &v) == 0 && !rc; k++) {
			if (!(p = hd__store_root_name_at(s, c, k, &len)))
				continue;
			if (!(rc = via_matches(e, &cache, p, len, &ok)) && ok)
				hd__bit_set(e->via, v);
		}
	}
	hd__map_free(&cache);
	return rc;
}

static int test_class(struct eval *e, hd_node_id id, int *ok)
{
	hd_node_id c = hd_store_class(e->s, id);
	int type = hd_store_type(e->s, id);
	uint64_t key = ((uint64_t)c + 1) << 8 | (uint64_t)(type & 0xff);
	uint32_t v;
	int found;

	/* unresolvable classes are named by their address: no caching */
	if (c == HD_NODE_NONE && hd_store_class_address(e->s, id)) {
		hd_store_class_name(e->name, sizeof(e->name), e->s, id);
		*ok = class_matches(e->sel, e->name);
		return 0;
	}
	if (hd__map_get(&e->class_cache, key, &v)) {
		*ok = (int)v;
		return 0;
	}
	hd_store_class_name(e->name, sizeof(e->name), e->s, id);
	*ok = class_matches(e->sel, e->name);
	return hd__map_put(&e->class_cache, key, (uint32_t)*ok, &v, &found);
}

static int test_site(struct eval *e, hd_node_id id, int *ok)
{
	const hd_select *sel = e->sel;
	hd_site site;
	size_t i;
	uint32_t v;
	int found;

	*ok = 0;
	if (hd_store_site(&site, e->s, id) || !site.file)
		return 0;
	if (e->used & (1u << K_FILE)) {
		uint64_t key = (uint64_t)(uintptr_t)site.file;

		if (!hd__map_get(&e->file_cache, key, &v)) {
			v = 0;
			for (i = 0; i < sel->nfiles && !v; i++)
				v = strlen(sel->files[i]) == site.file_len &&
				    memcmp(sel->files[i], site.file,
					   site.file_len) == 0;
			if (hd__map_put(&e->file_cache, key, v, &v, &found))
				return HD_ENOMEM;
		}
		if (!v)
			return 0;
	}
	if (e->used & (1u << K_LOCATION)) {
		for (i = 0; i < sel->nlocs; i++)
			if (sel->locs[i].line == site.line &&
			    strlen(sel->locs[i].file) == site.file_len &&
			    memcmp(sel->locs[i].file, site.file,
				   site.file_len) == 0)
				break;
		if (i == sel->nlocs)
			return 0;
	}
	*ok = 1;
	return 0;
}

static int test_node(struct eval *e, hd_node_id id, int *ok)
{
	const hd_select *sel = e->sel;
	size_t i;
	int rc;

	*ok = 0;
	if ((e->used & (1u << K_TYPE)) &&
	    !(sel->types & (1u << hd_store_type(e->s, id))))
		return 0;
	if ((e->used & (1u << K_NAME)) && !test_name(e, id))
		return 0;
	if ((e->used & (1u << K_VIA)) && !hd__bit(e->via, id))
		return 0;
	if (e->used & (1u << K_GENERATION)) {
		uint64_t g = hd_store_generation(e->s, id);

		if (g == UINT64_MAX)
			return 0;
		for (i = 0; i < sel->ngens; i++)
			if (g >= sel->gens[i].lo && g <= sel->gens[i].hi)
				break;
		if (i == sel->ngens)
			return 0;
	}
	if (e->used & ((1u << K_FILE) | (1u << K_LOCATION))) {
		if ((rc = test_site(e, id, ok)) || !*ok)
			return rc;
	}
	if (e->used & (1u << K_CLASS)) {
		if ((rc = test_class(e, id, ok)) || !*ok)
			return rc;
	}
	*ok = 1;
	return 0;
}

static int push(hd_nodes *set, hd_node_id id)
{
	if (hd__grow((void **)&set->ids, &set->cap, set->n + 1,
		     sizeof(*set->ids)))
		return HD_ENOMEM;
	set->ids[set->n++] = id;
	return 0;
}

/* Candidates from addresses: sorted, unique node ids. */
static int from_addresses(const hd_select *sel, const hd_store *s,
			  hd_nodes *cand, uint64_t *missing)
{
	size_t i;

	if (sel->naddrs > 1) /* (qsort of NULL, 0 is undefined) */
		qsort(sel->addrs, sel->naddrs, sizeof(*sel->addrs), cmp_u64);
	for (i = 0; i < sel->naddrs; i++) {
		hd_node_id id;

		if (i && sel->addrs[i] == sel->addrs[i - 1])
			continue;
		id = hd_store_find(s, sel->addrs[i]);
		if (id == HD_NODE_NONE)
			(*missing)++;
		else if (push(cand, id)) /* ascending: ids follow addresses */
			return HD_ENOMEM;
	}
	return 0;
}

int hd__eval_init(struct eval *e, const hd_select *sel, const hd_store *s)
{
	memset(e, 0, sizeof(*e));
	e->sel = sel;
	e->s = s;
	e->used = sel->used;
	if (hd__map_init(&e->class_cache, 256) ||
	    hd__map_init(&e->file_cache, 64))
		return HD_ENOMEM;
	if ((sel->used & (1u << K_VIA)) && via_mark(e))
		return HD_ENOMEM;
	return 0;
}

void hd__eval_free(struct eval *e)
{
	hd__map_free(&e->class_cache);
	hd__map_free(&e->file_cache);
	hd__bitmap_free(e->via, hd_store_node_count(e->s));
	e->via = NULL;
}

/* The nodes meeting e->used, into out, or only counted in *count when
 * out is NULL; addresses that are no node counted in *miss. */
int hd__eval_run(struct eval *e, hd_nodes *out, uint64_t *count,
		 uint64_t *miss)
{
	hd_nodes cand = { NULL, 0, 0 };
	uint32_t i, n = hd_store_node_count(e->s);
	int ok, rc = 0;

	*count = 0;
	if (e->used & (1u << K_ADDRESS)) {
		if ((rc = from_addresses(e->sel, e->s, &cand, miss)))
			goto out;
		n = (uint32_t)cand.n;
	}
	for (i = 0; i < n; i++) {
		hd_node_id id = cand.ids ? cand.ids[i] : i;

		if ((rc = test_node(e, id, &ok)))
			goto out;
		if (ok && out && (rc = push(out, id)))
			goto out;
		*count += ok;
	}
out:
	hd_nodes_free(&cand);
	return rc;
}

int hd_select_nodes(hd_nodes *out, uint64_t *missing, const hd_select *sel,
		    const hd_store *s, hd_error *err)
{
	struct eval e;
	uint64_t miss = 0, n;

	HD_ASSERT_ARG(sel && s && out);
	memset(out, 0, sizeof(*out));
	if (hd__eval_init(&e, sel, s) || hd__eval_run(&e, out, &n, &miss)) {
		hd__eval_free(&e);
		hd_nodes_free(out);
		return hd__error(err, HD_ENOMEM, "out of memory");
	}
	if (missing)
		*missing = miss;
	hd__eval_free(&e);
	return 0;
}
