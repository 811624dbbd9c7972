/*
 * store_refnames.c - reference names in the store: their optional sections
 * (man 5 heapdump-store, REFERENCE NAMES), the inference of class
 * constants for dumps without names, the accessors and the one hop
 * formatter every path printer uses.
 *
 * A name is a string of the store's string table (one copy per distinct
 * name: "@cache", "::CACHE", "[3]"). The edge -> name map is laid out in
 * whichever of three encodings is smallest: a sparse table of (edge,
 * string) pairs sorted by edge (few names: inferred ones), or a dense
 * column parallel to the edges of u16 or u32 codes (string id + 1, 0 for
 * none). A store without names has none of these sections, and does not
 * grow at all.
 */
#include "store_format.h"

#include <stdio.h>

/* ---- printed text of a dump token ---- */

size_t hd_ref_name_decode(char *buf, size_t size, hd_str token)
{
	size_t n;

	if (!token.ptr || !token.len) {
		if (size)
			buf[0] = '\0';
		return 0;
	}
	if (token.ptr[0] != '"') {
		int w = snprintf(buf, size, "[%.*s]", (int)token.len,
				 token.ptr);

		return w < 0 ? 0 : (size_t)w;
	}
	if (token.len < 2)
		return hd_ref_name_decode(buf, size, (hd_str){ NULL, 0 });
	/* unescaping never lengthens: decode in place when it fits */
	if (token.len - 2 < size) {
		n = hd_json_unescape(buf, token.ptr + 1, token.len - 2);
		buf[n] = '\0';
		return n;
	}
	{
		char *tmp = hd__malloc(token.len);

		if (!tmp) {
			if (size)
				buf[0] = '\0';
			return 0;
		}
		n = hd_json_unescape(tmp, token.ptr + 1, token.len - 2);
		if (size) {
			size_t c = n < size ? n : size - 1;

			memcpy(buf, tmp, c);
			buf[c] = '\0';
		}
		hd__free(tmp, token.len);
		return n;
	}
}

/* ---- building ---- */

int hd__refname_intern(struct hd__intern *t, hd_str token, uint32_t *code)
{
	char tmp[16];
	uint32_t sid;
	int w;

	*code = 0;
	if (!token.ptr || !token.len)
		return 0;
	if (token.ptr[0] == '"') {
		hd_str body = { token.ptr + 1, token.len - 2 };

		if (token.len < 2 || hd__intern_json(t, body, &sid))
			return token.len < 2 ? 0 : HD_ENOMEM;
	} else {
		w = snprintf(tmp, sizeof(tmp), "[%.*s]", (int)token.len,
			     token.ptr);
		if (w < 0 || (size_t)w >= sizeof(tmp) ||
		    hd__intern_put(t, tmp, (size_t)w, &sid))
			return HD_ENOMEM;
	}
	if (sid >= UINT32_MAX - 1)
		return HD_ELIMIT;
	*code = sid + 1;
	return 0;
}

/* Is name = parent "::" Ident (an ASCII constant name)? *ident: Ident. */
static int nested_in(const char *parent, size_t plen, const char *name,
		     size_t nlen, size_t *ident)
{
	size_t i;

	if (!plen || nlen < plen + 3 || parent[0] == '#' ||
	    memcmp(name, parent, plen) || name[plen] != ':' ||
	    name[plen + 1] != ':')
		return 0;
	i = plen + 2;
	if (name[i] < 'A' || name[i] > 'Z')
		return 0;
	for (i++; i < nlen; i++) {
		char ch = name[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '_'))
			return 0;
	}
	*ident = plen;
	return 1;
}

static int is_mod(int t)
{
	return t == HD_T_CLASS || t == HD_T_MODULE;
}

/*
 * The class constants of a dump without names: each CLASS or MODULE
 * whose name is N and that references a CLASS or MODULE named N::X gets
 * the name "::X" for that reference (every one of them, since nothing
 * else could be that edge's name). Fills enm (edge order codes, zeroed)
 * and returns the number named in *count.
 */
static int infer(const hd_store *s, struct hd__intern *t, uint32_t *enm,
		 size_t *count)
{
	const uint8_t *type = s->sec[HD__SEC_TYPE];
	const unsigned char *aux = s->sec[HD__SEC_AUX];
	const unsigned char *off = s->sec[HD__SEC_REFS_OFF];
	const unsigned char *refs = s->sec[HD__SEC_REFS];
	char *tmp = NULL;
	size_t tmp_cap = 0;
	uint32_t i, e, e1, m, ps, ms, sid;
	size_t plen, mlen, at;
	const char *pn, *mn;

	uint64_t N = s->len[HD__SEC_TYPE]; /* s->nodes is not set yet */

	*count = 0;
	for (i = 0; i < N; i++) {
		if (!is_mod(type[i]) ||
		    (ps = hd__le32(aux + (size_t)i * 4)) == HD_STR_NONE)
			continue;
		pn = hd__intern_str(t, ps, &plen);
		e1 = hd__le32(off + ((size_t)i + 1) * 4);
		for (e = hd__le32(off + (size_t)i * 4); e < e1; e++) {
			m = hd__le32(refs + (size_t)e * 4);
			if (m >= N || !is_mod(type[m]) ||
			    (ms = hd__le32(aux + (size_t)m * 4)) ==
				    HD_STR_NONE)
				continue;
			/* the parent's string may move as names are added */
			pn = hd__intern_str(t, ps, &plen);
			mn = hd__intern_str(t, ms, &mlen);
			if (!nested_in(pn, plen, mn, mlen, &at))
				continue;
			if (mlen - at + 1 > tmp_cap) {
				char *p = hd__realloc(tmp, tmp_cap,
						      mlen - at + 1);

				if (!p) {
					hd__free(tmp, tmp_cap);
					return HD_ENOMEM;
				}
				tmp = p;
				tmp_cap = mlen - at + 1;
			}
			memcpy(tmp, mn + at, mlen - at);
			if (hd__intern_put(t, tmp, mlen - at, &sid)) {
				hd__free(tmp, tmp_cap);
				return HD_ENOMEM;
			}
			enm[e] = sid + 1;
			++*count;
		}
	}
	hd__free(tmp, tmp_cap);
	return 0;
}

int hd__store_names_build(hd_store *s, struct hd__intern *t,
			  const uint32_t *enm_in, const uint32_t *rnm,
			  hd_error *err)
{
	uint64_t E = s->len[HD__SEC_REFS] / 4;
	uint64_t R = s->len[HD__SEC_ROOT_REFS] / 4;
	uint32_t *enm = NULL, maxc = 0;
	size_t count = 0, rcount = 0, k, map_len, w;
	unsigned enc, flags = 0;
	unsigned char *info, *map, *root;
	int sid[3] = { HD__SEC_NAME_INFO, HD__SEC_NAME_MAP,
		       HD__SEC_NAME_ROOT };
	void *img[3];
	size_t len[3];
	int rc;

	if (!enm_in && !rnm) {
		if (!(enm = hd__array_alloc(E ? E : 1, 4)))
			return hd__error(err, HD_ENOMEM, "out of memory");
		memset(enm, 0, (E ? E : 1) * 4);
		if ((rc = infer(s, t, enm, &count))) {
			hd__free(enm, (E ? E : 1) * 4);
			return hd__error(err, rc, "out of memory");
		}
		enm_in = enm;
		flags = HD_NAME_INFERRED;
	} else if (enm_in) {
		for (k = 0; k < E; k++)
			count += enm_in[k] != 0;
	}
	for (k = 0; rnm && k < R; k++)
		rcount += rnm[k] != 0;
	if (!count && !rcount) {
		hd__free(enm, (E ? E : 1) * 4);
		return 0;
	}
	for (k = 0; k < E && enm_in; k++)
		maxc = enm_in[k] > maxc ? enm_in[k] : maxc;
	enc = ENC_SPARSE;
	map_len = count * 8;
	if (maxc <= 0xffff && E * 2 < map_len) {
		enc = ENC_DENSE16;
		map_len = E * 2;
	} else if (E * 4 < map_len) {
		enc = ENC_DENSE32;
		map_len = E * 4;
	}
	w = rcount ? R * 4 : 0;
	info = hd__malloc(NI__COUNT * 8);
	map = hd__malloc(map_len ? map_len : 1);
	root = hd__malloc(w ? w : 1);
	if (!info || !map || !root) {
		hd__free(info, NI__COUNT * 8);
		hd__free(map, map_len ? map_len : 1);
		hd__free(root, w ? w : 1);
		hd__free(enm, (E ? E : 1) * 4);
		return hd__error(err, HD_ENOMEM, "out of memory");
	}
	hd__put_le64(info + 8 * NI_ENCODING, enc);
	hd__put_le64(info + 8 * NI_ENTRIES, count);
	hd__put_le64(info + 8 * NI_FLAGS, flags);
	hd__put_le64(info + 8 * NI_ROOT_ENTRIES, rcount);
	if (enc == ENC_SPARSE) {
		unsigned char *p = map;

		for (k = 0; k < E && enm_in; k++)
			if (enm_in[k]) {
				hd__put_le32(p, (uint32_t)k);
				hd__put_le32(p + 4, enm_in[k] - 1);
				p += 8;
			}
	} else {
		for (k = 0; k < E; k++) {
			if (enc == ENC_DENSE16) {
				map[k * 2] = (unsigned char)enm_in[k];
				map[k * 2 + 1] = (unsigned char)(enm_in[k] >> 8);
			} else {
				hd__put_le32(map + k * 4, enm_in[k]);
			}
		}
	}
	for (k = 0; w && k < R; k++)
		hd__put_le32(root + k * 4, rnm[k]);
	hd__free(enm, (E ? E : 1) * 4);
	img[0] = info;
	img[1] = map;
	img[2] = root;
	len[0] = NI__COUNT * 8;
	len[1] = map_len;
	len[2] = w;
	return hd__store_attach(s, sid, img, len, 3, err);
}

/* ---- reading ---- */

int hd_store_has_ref_names(const hd_store *s)
{
	return s->sec[HD__SEC_NAME_INFO] != NULL ||
	       s->meta[HD__M_CLASS_EDGES] != 0;
}

/* The name of every class edge (man 5 heapdump-store, CLASS
 * REFERENCES), made by the store: HD_NAME_INFERRED. */
static const char class_ref_name[] = "(class)";

static const char *class_name_of_edge(size_t *len, unsigned *flags)
{
	if (len)
		*len = sizeof(class_ref_name) - 1;
	if (flags)
		*flags = HD_NAME_INFERRED;
	return class_ref_name;
}

/* The name of every reference of an ephemeron table (man 5
 * heapdump-store, WEAK MAPS) that has none of its own: HD_NAME_INFERRED. */
static const char eph_ref_name[] = "(ephemeron value)";

/* Is node id an ephemeron table: ObjectSpace::WeakKeyMap's DATA, whose
 * references (its values, each alive while its key is) are so named? */
int hd__wkmap(const hd_store *s, hd_node_id id)
{
	const char *p;
	size_t len;

	if (hd_store_type(s, id) != HD_T_DATA)
		return 0;
	p = hd_store_aux(s, id, &len);
	return p && len == 10 && memcmp(p, "weakkeymap", 10) == 0;
}

static const char *eph_name(size_t *len, unsigned *flags)
{
	if (len)
		*len = sizeof(eph_ref_name) - 1;
	if (flags)
		*flags = HD_NAME_INFERRED;
	return eph_ref_name;
}

static const char *sid_str(const hd_store *s, uint32_t sid, size_t *len)
{
	const unsigned char *offs = s->sec[HD__SEC_STROFFS];
	uint32_t a = hd__le32(offs + (size_t)sid * 4);
	uint32_t b = hd__le32(offs + ((size_t)sid + 1) * 4);

	if (len)
		*len = b - a - 1;
	return (const char *)s->sec[HD__SEC_STRINGS] + a;
}

/* The code (string id + 1, 0 none) of edge e. */
static uint32_t edge_code(const hd_store *s, uint64_t e)
{
	const unsigned char *info = s->sec[HD__SEC_NAME_INFO];
	const unsigned char *map = s->sec[HD__SEC_NAME_MAP];
	uint64_t enc = hd__le64(info + 8 * NI_ENCODING);
	uint64_t lo = 0, hi = hd__le64(info + 8 * NI_ENTRIES), mid, x;

	if (enc == ENC_DENSE16)
		return (uint32_t)(map[e * 2] | map[e * 2 + 1] << 8);
	if (enc == ENC_DENSE32)
		return hd__le32(map + e * 4);
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		x = hd__le32(map + mid * 8);
		if (x < e)
			lo = mid + 1;
		else if (x > e)
			hi = mid;
		else
			return hd__le32(map + mid * 8 + 4) + 1;
	}
	return 0;
}

static const char *code_str(const hd_store *s, uint32_t code, size_t *len,
			    unsigned *flags)
{
	if (!code)
		return NULL;
	if (flags)
		*flags = (unsigned)hd__le64(s->sec[HD__SEC_NAME_INFO] +
					    8 * NI_FLAGS) & HD_NAME_INFERRED;
	return sid_str(s, code - 1, len);
}

const char *hd_store_ref_name_at(const hd_store *s, hd_node_id from,
				 uint32_t k, size_t *len, unsigned *flags)
{
	const unsigned char *off = s->sec[HD__SEC_REFS_OFF];
	const char *n;
	uint32_t a, b, ck;

	if (len)
		*len = 0;
	if (flags)
		*flags = 0;
	if (from >= s->nodes)
		return NULL;
	if (hd__store_class_edge(s, from, &ck) && k == ck)
		return class_name_of_edge(len, flags);
	a = hd__le32(off + (size_t)from * 4);
	b = hd__le32(off + ((size_t)from + 1) * 4);
	if (k >= b - a)
		return NULL;
	n = s->sec[HD__SEC_NAME_INFO] ?
		    code_str(s, edge_code(s, (uint64_t)a + k), len, flags) :
		    NULL;
	if (n || !hd__wkmap(s, from))
		return n;
	return eph_name(len, flags);
}

const char *hd_store_ref_name(const hd_store *s, hd_node_id from,
			      hd_node_id to, size_t *len, unsigned *flags)
{
	const unsigned char *off = s->sec[HD__SEC_REFS_OFF];
	const unsigned char *refs = s->sec[HD__SEC_REFS];
	uint32_t a, b, e, code, ck;
	int ce, found = 0;

	if (len)
		*len = 0;
	if (flags)
		*flags = 0;
	if (from >= s->nodes)
		return NULL;

	ce = hd__store_class_edge(s, from, &ck);
	a = hd__le32(off + (size_t)from * 4);
	b = hd__le32(off + ((size_t)from + 1) * 4);
	for (e = a; e < b; e++) {
		if (hd__le32(refs + (size_t)e * 4) != to)
			continue;
		if (ce && e - a == ck)
			return class_name_of_edge(len, flags);
		found = 1;
		if (s->sec[HD__SEC_NAME_INFO] && (code = edge_code(s, e)))
			return code_str(s, code, len, flags);
	}
	return found && hd__wkmap(s, from) ? eph_name(len, flags) :
						      NULL;
}

const char *hd_store_root_ref_name(const hd_store *s, uint32_t i,
				   hd_node_id to, size_t *len)
{
	const unsigned char *off = s->sec[HD__SEC_ROOT_OFF];
	const unsigned char *refs = s->sec[HD__SEC_ROOT_REFS];
	const unsigned char *nm = s->sec[HD__SEC_NAME_ROOT];
	uint32_t a, b, e, code;

	if (len)
		*len = 0;
	if (!nm || !s->len[HD__SEC_NAME_ROOT] ||
	    i >= s->meta[HD__M_ROOT_CATEGORIES])
		return NULL;
	a = hd__le32(off + (size_t)i * 4);
	b = hd__le32(off + ((size_t)i + 1) * 4);
	for (e = a; e < b; e++)
		if (hd__le32(refs + (size_t)e * 4) == to &&
		    (code = hd__le32(nm + (size_t)e * 4)))
			return sid_str(s, code - 1, len);
	return NULL;
}

size_t hd_store_hop_text(char *buf, size_t size, const hd_store *s,
			 hd_node_id from, hd_node_id to)
{
	size_t n = hd_store_node_name(buf, size, s, from), nl, c;
	const char *name;

	if (to == HD_NODE_NONE ||
	    !(name = hd_store_ref_name(s, from, to, &nl, NULL)))
		return n;
	/* " name" after what fits of the node name */
	c = n < size ? n : (size ? size - 1 : 0);
	if (c + 1 < size) {
		buf[c++] = ' ';
		if (nl > size - 1 - c)
			nl = size - 1 - c;
		memcpy(buf + c, name, nl);
		buf[c + nl] = '\0';
	}
	hd_store_ref_name(s, from, to, &nl, NULL);
	return n + 1 + nl;
}

const char *hd__store_root_name_at(const hd_store *s, uint32_t c, uint32_t k,
				   size_t *len)
{
	const unsigned char *nm = s->sec[HD__SEC_NAME_ROOT];
	uint32_t a, b, code;

	if (len)
		*len = 0;
	if (!nm || !s->len[HD__SEC_NAME_ROOT] ||
	    c >= s->meta[HD__M_ROOT_CATEGORIES])
		return NULL;
	a = hd__le32(s->sec[HD__SEC_ROOT_OFF] + (size_t)c * 4);
	b = hd__le32(s->sec[HD__SEC_ROOT_OFF] + ((size_t)c + 1) * 4);
	if (k >= b - a || !(code = hd__le32(nm + ((size_t)a + k) * 4)))
		return NULL;
	return sid_str(s, code - 1, len);
}
