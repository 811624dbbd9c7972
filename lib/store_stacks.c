/*
 * store_stacks.c - allocation stacks in the store (man 5 heapdump-store,
 * STACKS): what the build gathers of a dump's STACK and FRAME records,
 * the sections made of it, their checks on open, and the accessors
 * (hd_store_node_stack, hd_store_stack_frames, hd_store_frame).
 *
 * A dump written by HeapDump.trace_allocations(stacks: true) numbers
 * its stacks and frames itself (man 5 heapdump-dump, STACKS); the store
 * numbers them again densely, in the order of their records, so that a
 * stack id indexes STACK_OFF and a frame id STACK_FRAME.
 */
#include "store_format.h"

#include <stdio.h>

/* ---- gathering (store_build.c, while it reads) ---- */

static int intern_opt(struct hd__intern *t, hd_str v, uint32_t *sid)
{
	*sid = HD_STR_NONE;
	if (!v.ptr)
		return 0;
	return hd__intern_json(t, v, sid) ? HD_ENOMEM : 0;
}

static int add_frame(struct hd__stk_acc *a, struct hd__intern *t,
		     const hd_record *rec)
{
	struct hd__stk_frame f;

	memset(&f, 0, sizeof(f));
	f.id = rec->shape_id;
	f.line = rec->has & HD_HAS_LINE ? rec->line : 0;
	if (intern_opt(t, rec->has & HD_HAS_FILE ? rec->file : (hd_str){ 0 },
		       &f.file) ||
	    intern_opt(t, rec->has & HD_HAS_METHOD ? rec->method :
						   (hd_str){ 0 },
		       &f.method) ||
	    intern_opt(t, rec->class_name, &f.cls) ||
	    intern_opt(t, rec->label, &f.label) ||
	    hd__grow((void **)&a->fr, &a->fr_cap, a->nfr + 1, sizeof(*a->fr)))
		return HD_ENOMEM;
	a->fr[a->nfr++] = f;
	return 0;
}

static int add_stack(struct hd__stk_acc *a, const hd_record *rec)
{
	size_t k;

	if (rec->nframes > UINT32_MAX - a->nent)
		return HD_ELIMIT;
	if (hd__grow((void **)&a->sid, &a->sid_cap, a->nst + 1,
		     sizeof(*a->sid)) ||
	    hd__grow((void **)&a->soff, &a->soff_cap, a->nst + 1,
		     sizeof(*a->soff)) ||
	    hd__grow((void **)&a->slen, &a->slen_cap, a->nst + 1,
		     sizeof(*a->slen)) ||
	    hd__grow((void **)&a->ent, &a->ent_cap, a->nent + rec->nframes + 1,
		     sizeof(*a->ent)))
		return HD_ENOMEM;
	a->sid[a->nst] = rec->shape_id;
	a->soff[a->nst] = (uint32_t)a->nent;
	a->slen[a->nst++] = (uint32_t)rec->nframes;
	for (k = 0; k < rec->nframes; k++)
		a->ent[a->nent++] = rec->frames[k] > UINT32_MAX ?
					    0 :
					    (uint32_t)rec->frames[k];
	return 0;
}

int hd__stk_add(struct hd__stk_acc *a, struct hd__intern *t,
		const hd_record *rec)
{
	if (rec->kind == HD_REC_FRAME)
		return add_frame(a, t, rec);
	if (rec->kind == HD_REC_STACK)
		return add_stack(a, rec);
	return 0;
}

static uint32_t map_sid(const uint32_t *str, uint32_t id)
{
	return id == HD_STR_NONE ? id : str[id];
}

int hd__stk_merge(struct hd__stk_acc *a, const struct hd__stk_acc *p,
		  const uint32_t *str)
{
	size_t i;

	a->used |= p->used;
	if (!p->nfr && !p->nst)
		return 0;
	if (p->nent > UINT32_MAX - a->nent)
		return HD_ELIMIT;
	if (hd__grow((void **)&a->fr, &a->fr_cap, a->nfr + p->nfr + 1,
		     sizeof(*a->fr)) ||
	    hd__grow((void **)&a->sid, &a->sid_cap, a->nst + p->nst + 1,
		     sizeof(*a->sid)) ||
	    hd__grow((void **)&a->soff, &a->soff_cap, a->nst + p->nst + 1,
		     sizeof(*a->soff)) ||
	    hd__grow((void **)&a->slen, &a->slen_cap, a->nst + p->nst + 1,
		     sizeof(*a->slen)) ||
	    hd__grow((void **)&a->ent, &a->ent_cap, a->nent + p->nent + 1,
		     sizeof(*a->ent)))
		return HD_ENOMEM;
	for (i = 0; i < p->nfr; i++) {
		struct hd__stk_frame f = p->fr[i];

		f.file = map_sid(str, f.file);
		f.method = map_sid(str, f.method);
		f.cls = map_sid(str, f.cls);
		f.label = map_sid(str, f.label);
		a->fr[a->nfr++] = f;
	}
	for (i = 0; i < p->nst; i++) {
		a->sid[a->nst] = p->sid[i];
		a->soff[a->nst] = p->soff[i] + (uint32_t)a->nent;
		a->slen[a->nst++] = p->slen[i];
	}
	if (p->nent)
		memcpy(a->ent + a->nent, p->ent, p->nent * sizeof(*a->ent));
	a->nent += p->nent;
	return 0;
}

void hd__stk_free(struct hd__stk_acc *a)
{
	HD_FREE(a->fr, a->fr_cap);
	HD_FREE(a->sid, a->sid_cap);
	HD_FREE(a->soff, a->soff_cap);
	HD_FREE(a->slen, a->slen_cap);
	HD_FREE(a->ent, a->ent_cap);
	memset(a, 0, sizeof(*a));
}

/* ---- the sections ---- */

/* dump id -> store id + 0 (1-based), first record wins */
static int dense_ids(struct hd__map *m, const uint32_t *ids, size_t n,
		     size_t stride, uint32_t *keep)
{
	size_t i;
	uint32_t got, next = 0;
	int found;

	for (i = 0; i < n; i++) {
		uint32_t id = *(const uint32_t *)((const unsigned char *)ids +
						  i * stride);

		if (hd__map_put(m, id, next + 1, &got, &found))
			return HD_ENOMEM;
		keep[i] = found ? 0 : ++next;
	}
	return 0;
}

static uint32_t map_lookup(const struct hd__map *m, uint32_t id)
{
	uint32_t v;

	return hd__map_get(m, id, &v) ? v : 0;
}

static void put_frame(unsigned char *p, const struct hd__stk_frame *f)
{
	hd__put_le32(p, f->file);
	hd__put_le32(p + 4, f->method);
	hd__put_le32(p + 8, f->cls);
	hd__put_le32(p + 12, f->label);
	hd__put_le64(p + 16, f->line);
}

struct stk_out {
	uint32_t *fkeep, *skeep; /* per record: store id, 0 dropped */
	size_t nframes, nstacks, nent;
	unsigned char *info, *off, *ent, *frame;
};

static void stk_out_free(struct stk_out *o, const struct hd__stk_acc *a)
{
	HD_FREE(o->fkeep, a->nfr ? a->nfr : 1);
	HD_FREE(o->skeep, a->nst ? a->nst : 1);
}

static int frames_image(struct stk_out *o, const struct hd__stk_acc *a)
{
	size_t i;

	for (i = 0; i < a->nfr; i++)
		o->nframes += o->fkeep[i] != 0;
	if (!(o->frame = hd__array_alloc(o->nframes ? o->nframes : 1,
					 HD__FRAME_SIZE)))
		return HD_ENOMEM;
	for (i = 0; i < a->nfr; i++)
		if (o->fkeep[i])
			put_frame(o->frame + (size_t)(o->fkeep[i] - 1) *
						     HD__FRAME_SIZE,
				  &a->fr[i]);
	return 0;
}

static int stacks_image(struct stk_out *o, const struct hd__stk_acc *a,
			const struct hd__map *fm)
{
	size_t i, k, at = 0;

	for (i = 0; i < a->nst; i++) {
		if (!o->skeep[i])
			continue;
		o->nstacks++;
		for (k = 0; k < a->slen[i]; k++)
			o->nent += map_lookup(fm, a->ent[a->soff[i] + k]) != 0;
	}
	if (!(o->off = hd__array_alloc(o->nstacks + 1, 4)) ||
	    !(o->ent = hd__array_alloc(o->nent ? o->nent : 1, 4)))
		return HD_ENOMEM;
	hd__put_le32(o->off, 0);
	for (i = 0; i < a->nst; i++) {
		if (!o->skeep[i])
			continue;
		for (k = 0; k < a->slen[i]; k++) {
			uint32_t f = map_lookup(fm, a->ent[a->soff[i] + k]);

			if (f)
				hd__put_le32(o->ent + 4 * at++, f);
		}
		hd__put_le32(o->off + 4 * (size_t)o->skeep[i], (uint32_t)at);
	}
	return 0;
}

/* The NODE section: col itself, little-endian, or the pairs of its
 * nodes that have a stack when they are fewer than half. */
static int node_image(uint32_t *col, size_t nodes, size_t with, void **img,
		      size_t *len, size_t *cap)
{
	unsigned char *p;
	size_t i, k = 0;

	if (with * 2 >= nodes) {
		for (i = 0; i < nodes; i++)
			hd__put_le32((unsigned char *)&col[i], col[i]);
		*img = col;
		*len = nodes * 4;
		*cap = (nodes ? nodes : 1) * 4;
		return 0;
	}
	if (!(p = hd__array_alloc(with ? with : 1, 8)))
		return HD_ENOMEM;
	for (i = 0; i < nodes; i++)
		if (col[i]) {
			hd__put_le32(p + 8 * k, (uint32_t)i);
			hd__put_le32(p + 8 * k++ + 4, col[i]);
		}
	*img = p;
	*len = with * 8;
	*cap = (with ? with : 1) * 8;
	return 0;
}

int hd__stk_sections(const struct hd__stk_acc *a, uint32_t *col,
		     size_t nodes, void *img[5], size_t len[5], size_t cap[5])
{
	struct hd__map fm, sm;
	struct stk_out o;
	size_t i, with = 0;
	int rc = HD_ENOMEM;

	memset(&o, 0, sizeof(o));
	memset(&fm, 0, sizeof(fm));
	memset(&sm, 0, sizeof(sm));
	if (hd__map_init(&fm, a->nfr + 16) || hd__map_init(&sm, a->nst + 16) ||
	    !HD_ALLOC(o.fkeep, a->nfr ? a->nfr : 1) ||
	    !HD_ALLOC(o.skeep, a->nst ? a->nst : 1) ||
	    (a->nfr && dense_ids(&fm, &a->fr[0].id, a->nfr, sizeof(*a->fr),
				 o.fkeep)) ||
	    dense_ids(&sm, a->sid, a->nst, sizeof(*a->sid), o.skeep) ||
	    frames_image(&o, a) || stacks_image(&o, a, &fm) ||
	    !(o.info = hd__array_alloc(HD__STK_INFO_COUNT, 8)))
		goto out;
	for (i = 0; i < nodes; i++)
		if (col[i] && (col[i] = map_lookup(&sm, col[i])))
			with++;
	if (node_image(col, nodes, with, &img[4], &len[4], &cap[4]))
		goto out;
	hd__put_le64(o.info + 8 * HD__STK_NODES, with);
	hd__put_le64(o.info + 8 * HD__STK_ENCODING,
		     img[4] == col ? HD__STK_DENSE : HD__STK_SPARSE);
	hd__put_le64(o.info + 8 * HD__STK_VERSION, HD__STK_LAYOUT);
	hd__put_le64(o.info + 8 * HD__STK_STACKS, o.nstacks);
	hd__put_le64(o.info + 8 * HD__STK_FRAMES, o.nframes);
	hd__put_le64(o.info + 8 * HD__STK_ENTRIES, o.nent);
	img[0] = o.info;
	cap[0] = len[0] = HD__STK_INFO_COUNT * 8;
	img[1] = o.off;
	cap[1] = len[1] = (o.nstacks + 1) * 4;
	img[2] = o.ent;
	len[2] = o.nent * 4;
	cap[2] = (o.nent ? o.nent : 1) * 4;
	img[3] = o.frame;
	len[3] = o.nframes * HD__FRAME_SIZE;
	cap[3] = (o.nframes ? o.nframes : 1) * HD__FRAME_SIZE;
	o.info = o.off = o.ent = o.frame = NULL;
	rc = 0;
out:
	hd__free(o.info, HD__STK_INFO_COUNT * 8);
	hd__free(o.off, (o.nstacks + 1) * 4);
	hd__free(o.ent, (o.nent ? o.nent : 1) * 4);
	hd__free(o.frame, (o.nframes ? o.nframes : 1) * HD__FRAME_SIZE);
	stk_out_free(&o, a);
	hd__map_free(&fm);
	hd__map_free(&sm);
	return rc;
}

/* ---- checks on open ---- */

static uint64_t info(const hd_store *s, int field)
{
	return hd__le64(s->sec[HD__SEC_STACK_INFO] + 8 * (size_t)field);
}

static uint64_t mul(uint64_t a, uint64_t b)
{
	return a && b > UINT64_MAX / a ? UINT64_MAX : a * b;
}

uint64_t hd__store_stacks_size(const hd_store *s, int id)
{
	if (id == HD__SEC_STACK_INFO)
		return (uint64_t)HD__STK_INFO_COUNT * 8;
	if (!s->sec[HD__SEC_STACK_INFO] ||
	    s->len[HD__SEC_STACK_INFO] != (uint64_t)HD__STK_INFO_COUNT * 8)
		return UINT64_MAX;
	switch (id) {
	case HD__SEC_STACK_NODE:
		return info(s, HD__STK_ENCODING) == HD__STK_SPARSE ?
			       mul(info(s, HD__STK_NODES), 8) :
			       mul(s->meta[HD__M_NODES], 4);
	case HD__SEC_STACK_OFF:
		return info(s, HD__STK_STACKS) >= UINT32_MAX ?
			       UINT64_MAX :
			       (info(s, HD__STK_STACKS) + 1) * 4;
	case HD__SEC_STACK_ENT:
		return mul(info(s, HD__STK_ENTRIES), 4);
	case HD__SEC_STACK_FRAME:
		return mul(info(s, HD__STK_FRAMES), HD__FRAME_SIZE);
	}
	return UINT64_MAX;
}

static int corrupt(hd_error *err, const char *what)
{
	return hd__error(err, HD_EFORMAT, "store %s section is corrupt",
			 what);
}

static int check_entries(const hd_store *s, hd_error *err)
{
	uint64_t S = info(s, HD__STK_STACKS), F = info(s, HD__STK_FRAMES);
	uint64_t E = info(s, HD__STK_ENTRIES), i, prev = 0;
	const unsigned char *fr = s->sec[HD__SEC_STACK_FRAME];
	const unsigned char *nd = s->sec[HD__SEC_STACK_NODE];
	uint64_t with = 0;

	if (info(s, HD__STK_ENCODING) == HD__STK_SPARSE) {
		for (i = 0; i < info(s, HD__STK_NODES); i++) {
			uint64_t v = hd__le32(nd + 8 * i);
			uint64_t st = hd__le32(nd + 8 * i + 4);

			if (v >= s->meta[HD__M_NODES] || (i && v <= prev) ||
			    !st || st > S)
				return corrupt(err, "node stack");
			prev = v;
		}
		prev = 0;
	} else {
		for (i = 0; i < s->meta[HD__M_NODES]; i++) {
			uint64_t st = hd__le32(nd + 4 * i);

			if (st > S)
				return corrupt(err, "node stack");
			with += st != 0;
		}
		if (with != info(s, HD__STK_NODES))
			return corrupt(err, "stack info");
	}
	for (i = 0; i <= S; i++) {
		uint64_t o = hd__le32(s->sec[HD__SEC_STACK_OFF] + 4 * i);

		if (o < prev || o > E || (i == 0 && o))
			return corrupt(err, "stack offset");
		prev = o;
	}
	if (prev != E)
		return corrupt(err, "stack offset");
	for (i = 0; i < E; i++) {
		uint64_t f = hd__le32(s->sec[HD__SEC_STACK_ENT] + 4 * i);

		if (!f || f > F)
			return corrupt(err, "stack frame id");
	}
	for (i = 0; i < F * 4; i++) {
		uint32_t sid = hd__le32(fr + (i / 4) * HD__FRAME_SIZE +
					4 * (i % 4));

		if (sid != HD_STR_NONE && sid >= s->nstrings)
			return corrupt(err, "frame");
	}
	return 0;
}

int hd__store_stacks_check(const hd_store *s, int full, hd_error *err)
{
	int id;

	for (id = HD__SEC_STACK_INFO; id <= HD__SEC_STACK_FRAME; id++)
		if (!s->sec[id] != !s->sec[HD__SEC_STACK_INFO])
			return hd__error(err, HD_EFORMAT,
					 "store %s section is missing",
					 s->sec[id] ? "stack info" : "stack");
	if (!s->sec[HD__SEC_STACK_INFO])
		return 0;
	if (info(s, HD__STK_VERSION) != HD__STK_LAYOUT)
		return hd__error(err, HD_EFORMAT,
				 "store stack sections have layout %llu, not "
				 "%u: index the dump again",
				 (unsigned long long)info(s, HD__STK_VERSION),
				 HD__STK_LAYOUT);
	if (info(s, HD__STK_STACKS) >= UINT32_MAX ||
	    info(s, HD__STK_FRAMES) >= UINT32_MAX ||
	    info(s, HD__STK_NODES) > s->meta[HD__M_NODES] ||
	    (info(s, HD__STK_ENCODING) != HD__STK_DENSE &&
	     info(s, HD__STK_ENCODING) != HD__STK_SPARSE))
		return corrupt(err, "stack info");
	return full ? check_entries(s, err) : 0;
}

/* ---- accessors ---- */

uint32_t hd_store_stack_count(const hd_store *s)
{
	return s->sec[HD__SEC_STACK_INFO] ?
		       (uint32_t)info(s, HD__STK_STACKS) :
		       0;
}

uint32_t hd_store_frame_count(const hd_store *s)
{
	return s->sec[HD__SEC_STACK_INFO] ?
		       (uint32_t)info(s, HD__STK_FRAMES) :
		       0;
}

uint32_t hd_store_node_stack(const hd_store *s, hd_node_id id)
{
	const unsigned char *p = s->sec[HD__SEC_STACK_NODE];
	uint64_t lo = 0, hi, mid;
	uint32_t v;

	if (!s->sec[HD__SEC_STACK_INFO] || id >= s->nodes)
		return 0;
	if (info(s, HD__STK_ENCODING) != HD__STK_SPARSE)
		return hd__le32(p + 4 * (size_t)id);
	hi = info(s, HD__STK_NODES);
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		v = hd__le32(p + 8 * mid);
		if (v == id)
			return hd__le32(p + 8 * mid + 4);
		if (v < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

size_t hd_store_stack_frames(const hd_store *s, uint32_t stack,
			     const uint32_t **frames)
{
	const unsigned char *off = s->sec[HD__SEC_STACK_OFF];
	uint32_t a, b;

	*frames = NULL;
	if (!stack || stack > hd_store_stack_count(s))
		return 0;
	a = hd__le32(off + 4 * (size_t)(stack - 1));
	b = hd__le32(off + 4 * (size_t)stack);
	*frames = (const uint32_t *)(const void *)(s->sec[HD__SEC_STACK_ENT] +
						   4 * (size_t)a);
	return b - a;
}

uint32_t hd_store_stack_frame(const hd_store *s, uint32_t stack, size_t k)
{
	const uint32_t *f;
	size_t n = hd_store_stack_frames(s, stack, &f);

	return k < n ? hd__le32((const unsigned char *)(f + k)) : 0;
}

static const char *frame_str(const hd_store *s, uint32_t sid, size_t *len)
{
	uint32_t a, b;

	*len = 0;
	if (sid == HD_STR_NONE || sid >= s->nstrings)
		return NULL;
	a = hd__le32(s->sec[HD__SEC_STROFFS] + 4 * (size_t)sid);
	b = hd__le32(s->sec[HD__SEC_STROFFS] + 4 * (size_t)sid + 4);
	*len = b - a - 1;
	return (const char *)s->sec[HD__SEC_STRINGS] + a;
}

int hd_store_frame(hd_frame *out, const hd_store *s, uint32_t frame)
{
	const unsigned char *p;

	memset(out, 0, sizeof(*out));
	if (!frame || frame > hd_store_frame_count(s))
		return HD_ENOTFOUND;
	p = s->sec[HD__SEC_STACK_FRAME] + (size_t)(frame - 1) * HD__FRAME_SIZE;
	out->file = frame_str(s, hd__le32(p), &out->file_len);
	out->method = frame_str(s, hd__le32(p + 4), &out->method_len);
	out->class_name = frame_str(s, hd__le32(p + 8), &out->class_len);
	out->label = frame_str(s, hd__le32(p + 12), &out->label_len);
	out->line = hd__le64(p + 16);
	return 0;
}

size_t hd_frame_name(char *buf, size_t size, const hd_frame *f)
{
	int n;

	if (f->label)
		n = snprintf(buf, size, "%.*s", (int)f->label_len, f->label);
	else if (f->class_name && f->method)
		n = snprintf(buf, size, "%.*s#%.*s", (int)f->class_len,
			     f->class_name, (int)f->method_len, f->method);
	else if (f->method)
		n = snprintf(buf, size, "%.*s", (int)f->method_len, f->method);
	else
		n = snprintf(buf, size, "(unknown)");
	return n < 0 ? 0 : (size_t)n;
}

size_t hd_frame_text(char *buf, size_t size, const hd_frame *f)
{
	size_t n = hd_frame_name(buf, size, f);
	int m;

	if (!f->file)
		return n;
	m = f->line ? snprintf(n < size ? buf + n : NULL, n < size ? size - n : 0,
			       " (%.*s:%llu)", (int)f->file_len, f->file,
			       (unsigned long long)f->line) :
		      snprintf(n < size ? buf + n : NULL, n < size ? size - n : 0,
			       " (%.*s)", (int)f->file_len, f->file);
	return n + (m < 0 ? 0 : (size_t)m);
}

size_t hd_store_flame_stack(void *ctx, hd_node_id node, const char **frames,
			    size_t *lens, size_t max)
{
	const hd_store *s = ctx;
	uint32_t st = hd_store_node_stack(s, node);
	size_t n, k;
	hd_frame fr;

	if (!st)
		return 0;
	n = hd_store_stack_frames(s, st, &(const uint32_t *){ NULL });
	if (n > max)
		n = max;
	for (k = 0; k < n; k++) {
		hd_store_frame(&fr, s, hd_store_stack_frame(s, st, k));
		if (fr.label) {
			frames[k] = fr.label;
			lens[k] = fr.label_len;
		} else if (fr.method) {
			frames[k] = fr.method;
			lens[k] = fr.method_len;
		} else if (fr.file) {
			frames[k] = fr.file;
			lens[k] = fr.file_len;
		} else {
			frames[k] = "(unknown)";
			lens[k] = 9;
		}
	}
	return n;
}
