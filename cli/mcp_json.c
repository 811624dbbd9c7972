/*
 * mcp_json.c - a small strict JSON parser for heapdump mcp's requests:
 * RFC 8259 values, nesting at most MJ_MAX_DEPTH, strings decoded to
 * UTF-8 (a lone surrogate becomes U+FFFD), numbers kept as text.
 */
#include "mcp_json.h"

#include <stdlib.h>
#include <string.h>

struct mp {
	const char *p, *end;
	const char *why;
	int oom;
};

static void ws(struct mp *m)
{
	while (m->p < m->end && (*m->p == ' ' || *m->p == '\t' ||
				 *m->p == '\n' || *m->p == '\r'))
		m->p++;
}

static int fail(struct mp *m, const char *why)
{
	if (!m->why)
		m->why = why;
	return -1;
}

static int hex4(const char *p, unsigned *v)
{
	int i;

	*v = 0;
	for (i = 0; i < 4; i++) {
		char c = p[i];

		*v <<= 4;
		if (c >= '0' && c <= '9')
			*v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			*v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			*v |= (unsigned)(c - 'A' + 10);
		else
			return -1;
	}
	return 0;
}

static size_t utf8(char *d, unsigned c)
{
	if (c < 0x80) {
		d[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		d[0] = (char)(0xc0 | (c >> 6));
		d[1] = (char)(0x80 | (c & 63));
		return 2;
	}
	if (c < 0x10000) {
		d[0] = (char)(0xe0 | (c >> 12));
		d[1] = (char)(0x80 | ((c >> 6) & 63));
		d[2] = (char)(0x80 | (c & 63));
		return 3;
	}
	d[0] = (char)(0xf0 | (c >> 18));
	d[1] = (char)(0x80 | ((c >> 12) & 63));
	d[2] = (char)(0x80 | ((c >> 6) & 63));
	d[3] = (char)(0x80 | (c & 63));
	return 4;
}

/* At '"': the decoded string into *s (malloc'ed), *n its length. */
static int str(struct mp *m, char **s, size_t *n)
{
	const char *p = m->p + 1;
	char *d, *o;
	unsigned c, lo;

	/* decoded is never longer than the text */
	const char *q = p;

	while (q < m->end && *q != '"')
		q += *q == '\\' ? 2 : 1;
	if (q >= m->end)
		return fail(m, "a string without its closing quote");
	if (!(d = malloc((size_t)(q - p) + 1))) {
		m->oom = 1;
		return -1;
	}
	for (o = d; p < q; p++) {
		unsigned char ch = (unsigned char)*p;

		if (ch < 0x20) {
			free(d);
			return fail(m, "a control character in a string");
		}
		if (ch != '\\') {
			*o++ = (char)ch;
			continue;
		}
		switch (*++p) {
		case '"': *o++ = '"'; break;
		case '\\': *o++ = '\\'; break;
		case '/': *o++ = '/'; break;
		case 'b': *o++ = '\b'; break;
		case 'f': *o++ = '\f'; break;
		case 'n': *o++ = '\n'; break;
		case 'r': *o++ = '\r'; break;
		case 't': *o++ = '\t'; break;
		case 'u':
			if (q - p < 5 || hex4(p + 1, &c)) {
				free(d);
				return fail(m, "a bad \\u escape");
			}
			p += 4;
			if (c >= 0xd800 && c < 0xdc00 && q - p >= 7 &&
			    p[1] == '\\' && p[2] == 'u' && !hex4(p + 3, &lo) &&
			    lo >= 0xdc00 && lo < 0xe000) {
				c = 0x10000 + ((c - 0xd800) << 10) + (lo - 0xdc00);
				p += 6;
			} else if (c >= 0xd800 && c < 0xe000) {
				c = 0xfffd;
			}
			/* (6 bytes of text make at most 4) */
			o += utf8(o, c);
			break;
		default:
			free(d);
			return fail(m, "a bad escape in a string");
		}
	}
	*o = 0;
	*s = d;
	*n = (size_t)(o - d);
	m->p = q + 1;
	return 0;
}

static int value(struct mp *m, struct mj *v, int depth);

static int push(struct mj *v, size_t *cap)
{
	if (v->nk < *cap)
		return 0;
	*cap = *cap ? *cap * 2 : 4;
	{
		struct mj *k = realloc(v->kids, *cap * sizeof(*k));

		if (!k)
			return -1;
		v->kids = k;
	}
	if (v->t == MJ_OBJ) {
		char **ks = realloc(v->keys, *cap * sizeof(*ks));

		if (!ks)
			return -1;
		v->keys = ks;
	}
	return 0;
}

static int container(struct mp *m, struct mj *v, int depth)
{
	char close = v->t == MJ_OBJ ? '}' : ']';
	size_t cap = 0;

	m->p++;
	ws(m);
	if (m->p < m->end && *m->p == close) {
		m->p++;
		return 0;
	}
	for (;;) {
		char *key = NULL;
		size_t kn;

		ws(m);
		if (v->t == MJ_OBJ) {
			if (m->p >= m->end || *m->p != '"')
				return fail(m, "an object's key is not a string");
			if (str(m, &key, &kn))
				return -1;
			ws(m);
			if (m->p >= m->end || *m->p != ':') {
				free(key);
				return fail(m, "no ':' after a key");
			}
			m->p++;
		}
		if (push(v, &cap)) {
			free(key);
			m->oom = 1;
			return -1;
		}
		memset(&v->kids[v->nk], 0, sizeof(v->kids[0]));
		if (v->t == MJ_OBJ)
			v->keys[v->nk] = key;
		v->nk++;
		if (value(m, &v->kids[v->nk - 1], depth + 1))
			return -1;
		ws(m);
		if (m->p < m->end && *m->p == ',') {
			m->p++;
			continue;
		}
		if (m->p < m->end && *m->p == close) {
			m->p++;
			return 0;
		}
		return fail(m, close == '}' ? "no ',' or '}' in an object" :
					      "no ',' or ']' in an array");
	}
}

static int number(struct mp *m, struct mj *v)
{
	const char *b = m->p, *p = m->p;

	if (p < m->end && *p == '-')
		p++;
	if (p >= m->end || *p < '0' || *p > '9')
		return fail(m, "not a JSON value");
	if (*p == '0')
		p++;
	else
		while (p < m->end && *p >= '0' && *p <= '9')
			p++;
	if (p < m->end && *p == '.') {
		p++;
		if (p >= m->end || *p < '0' || *p > '9')
			return fail(m, "a bad number");
		while (p < m->end && *p >= '0' && *p <= '9')
			p++;
	}
	if (p < m->end && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < m->end && (*p == '+' || *p == '-'))
			p++;
		if (p >= m->end || *p < '0' || *p > '9')
			return fail(m, "a bad number");
		while (p < m->end && *p >= '0' && *p <= '9')
			p++;
	}
	v->t = MJ_NUM;
	v->n = (size_t)(p - b);
	if (!(v->s = malloc(v->n + 1))) {
		m->oom = 1;
		return -1;
	}
	memcpy(v->s, b, v->n);
	v->s[v->n] = 0;
	m->p = p;
	return 0;
}

static int lit(struct mp *m, const char *w)
{
	size_t n = strlen(w);

	if ((size_t)(m->end - m->p) < n || memcmp(m->p, w, n))
		return fail(m, "not a JSON value");
	m->p += n;
	return 0;
}

static int value(struct mp *m, struct mj *v, int depth)
{
	int rc;

	if (depth > MJ_MAX_DEPTH)
		return fail(m, "nested too deeply");
	ws(m);
	v->raw = m->p;
	if (m->p >= m->end)
		return fail(m, "a value is missing");
	switch (*m->p) {
	case '{':
		v->t = MJ_OBJ;
		rc = container(m, v, depth);
		break;
	case '[':
		v->t = MJ_ARR;
		rc = container(m, v, depth);
		break;
	case '"':
		v->t = MJ_STR;
		rc = str(m, &v->s, &v->n);
		break;
	case 't':
		v->t = MJ_BOOL;
		v->b = 1;
		rc = lit(m, "true");
		break;
	case 'f':
		v->t = MJ_BOOL;
		rc = lit(m, "false");
		break;
	case 'n':
		v->t = MJ_NULL;
		rc = lit(m, "null");
		break;
	default:
		rc = number(m, v);
		break;
	}
	v->rawlen = (size_t)(m->p - v->raw);
	return rc;
}

void mj_free(struct mj *v)
{
	size_t i;

	if (!v)
		return;
	for (i = 0; i < v->nk; i++) {
		mj_free(&v->kids[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->kids);
	free(v->keys);
	free(v->s);
	memset(v, 0, sizeof(*v));
}

int mj_parse(struct mj *out, const char *text, size_t len, const char **why)
{
	struct mp m = { text, text + len, NULL, 0 };
	int rc;

	memset(out, 0, sizeof(*out));
	rc = value(&m, out, 0);
	if (!rc) {
		ws(&m);
		if (m.p != m.end)
			rc = fail(&m, "text after the value");
	}
	if (rc) {
		mj_free(out);
		*why = m.oom ? "out of memory" : m.why;
		return m.oom ? -2 : -1;
	}
	return 0;
}

const struct mj *mj_get(const struct mj *o, const char *key)
{
	size_t i;

	if (!o || o->t != MJ_OBJ)
		return NULL;
	for (i = 0; i < o->nk; i++)
		if (strcmp(o->keys[i], key) == 0)
			return &o->kids[i];
	return NULL;
}
