/*
 * json_repair.c - hd_json_repair(), which turns the records Ruby writes
 * as invalid JSON into valid JSON and leaves valid JSON untouched: one
 * object walked iteratively, its structure copied, its strings and bare
 * values repaired (json_out.c writes them).
 */
#include "hd_int.h"
#include "util/json_out.h"

#define MAX_DEPTH 64

static int is_ws(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n';
}

struct rp {
	const char *p;
	const char *end;
	struct hd__sink *o;
};

/* Copies whitespace; a raw newline (a joined record) becomes a space. */
static void copy_ws(struct rp *r)
{
	while (r->p < r->end && is_ws(*r->p)) {
		hd__put_ch(r->o, *r->p == '\n' ? ' ' : *r->p);
		r->p++;
	}
}

/*
 * A string at r->p (its opening quote). A member's value ends at the
 * first quote that continues the object, keys and nested strings at the
 * first unescaped quote (keys: the first quote), as the reader reads
 * them.
 */
static int repair_string(struct rp *r, int member, int key)
{
	const char *s = r->p + 1, *q = s;

	for (;;) {
		q = memchr(q, '"', (size_t)(r->end - q));
		if (!q)
			return HD_EPARSE;
		if (key || (!hd__quote_escaped(q, s) &&
			    (!member || hd__continues_object(q + 1, r->end))))
			break;
		q++;
	}
	hd__put_ch(r->o, '"');
	hd__put_content(r->o, s, (size_t)(q - s));
	hd__put_ch(r->o, '"');
	r->p = q + 1;
	return 0;
}

/* Is s[0..n) a JSON number? */
static int json_number(const char *s, size_t n)
{
	size_t i = 0, d;

	if (i < n && s[i] == '-')
		i++;
	if (i < n && s[i] == '0')
		i++;
	else if (i < n && s[i] >= '1' && s[i] <= '9')
		while (i < n && s[i] >= '0' && s[i] <= '9')
			i++;
	else
		return 0;
	if (i < n && s[i] == '.') {
		for (d = ++i; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			;
		if (i == d)
			return 0;
	}
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < n && (s[i] == '+' || s[i] == '-'))
			i++;
		for (d = i; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			;
		if (i == d)
			return 0;
	}
	return i == n;
}

/* A bare value: a number or literal is copied, anything else quoted. */
static int repair_bare(struct rp *r)
{
	const char *t = r->p;
	size_t n, z = 0;

	while (r->p < r->end && !is_ws(*r->p) && *r->p != ',' &&
	       *r->p != '}' && *r->p != ']' && *r->p != ':' &&
	       *r->p != '"' && *r->p != '{' && *r->p != '[')
		r->p++;
	n = (size_t)(r->p - t);
	if (!n)
		return HD_EPARSE;
	if (json_number(t, n) || (n == 4 && memcmp(t, "true", 4) == 0) ||
	    (n == 5 && memcmp(t, "false", 5) == 0) ||
	    (n == 4 && memcmp(t, "null", 4) == 0)) {
		hd__put(r->o, t, n);
		return 0;
	}
	while (z + 1 < n && t[z] == '0')
		z++;
	if (z && json_number(t + z, n - z)) {
		hd__put(r->o, t + z, n - z); /* "007": leading zeros */
		return 0;
	}
	hd__put_ch(r->o, '"');
	hd__put_content(r->o, t, n);
	hd__put_ch(r->o, '"');
	return 0;
}

/*
 * Walks one JSON object iteratively (a bit stack of container kinds, as
 * scan.c's skip_value), copying the structure and repairing the strings.
 */
static int repair(struct rp *r)
{
	uint64_t stack = 0;
	unsigned depth = 0;
	int rc;

	goto value;
key:
	if (r->p >= r->end || *r->p != '"' ||
	    (rc = repair_string(r, 0, 1)))
		return HD_EPARSE;
	copy_ws(r);
	if (r->p >= r->end || *r->p != ':')
		return HD_EPARSE;
	hd__put_ch(r->o, ':');
	r->p++;
value:
	copy_ws(r);
	if (r->p >= r->end)
		return HD_EPARSE;
	if (*r->p == '{' || *r->p == '[') {
		int obj = *r->p == '{';

		if (depth == MAX_DEPTH)
			return HD_EPARSE;
		stack = stack << 1 | (uint64_t)obj;
		depth++;
		hd__put_ch(r->o, *r->p++);
		copy_ws(r);
		if (r->p < r->end && *r->p == (obj ? '}' : ']')) {
			hd__put_ch(r->o, *r->p++);
			depth--;
			stack >>= 1;
		} else if (obj) {
			goto key;
		} else {
			goto value;
		}
	} else if (*r->p == '"') {
		if ((rc = repair_string(r, depth == 1 && (stack & 1), 0)))
			return rc;
	} else if ((rc = repair_bare(r))) {
		return rc;
	}
	/* after a value: the next item, or close containers */
	for (;;) {
		if (!depth)
			return 0;
		copy_ws(r);
		if (r->p >= r->end)
			return HD_EPARSE;
		if (*r->p == ',') {
			hd__put_ch(r->o, *r->p++);
			if (stack & 1) {
				copy_ws(r);
				goto key;
			}
			goto value;
		}
		if (*r->p != ((stack & 1) ? '}' : ']'))
			return HD_EPARSE;
		hd__put_ch(r->o, *r->p++);
		depth--;
		stack >>= 1;
	}
}

int hd_json_repair(char *dst, size_t size, size_t *out_len,
		   const char *src, size_t len, hd_error *err)
{
	struct hd__sink o;
	struct rp r;
	int rc;

	HD_ASSERT_ARG(out_len && (src || !len) && (dst || !size));
	*out_len = 0;
	o.p = dst;
	o.size = size;
	o.len = 0;
	r.p = src;
	r.end = src + len;
	r.o = &o;
	/* the heap_dump gem frames its records as one array, a line each */
	while (r.p < r.end && is_ws(*r.p))
		r.p++;
	if (r.p < r.end && (*r.p == '[' || *r.p == ','))
		r.p++;
	while (r.p < r.end && is_ws(*r.p))
		r.p++;
	if (r.p >= r.end || *r.p != '{')
		return hd__error(err, HD_EPARSE, "not a JSON object");
	rc = repair(&r);
	if (rc)
		return hd__error(err, rc,
				 "cannot follow the record at byte %zu",
				 (size_t)(r.p - src));
	while (r.p < r.end && is_ws(*r.p))
		r.p++;
	if (r.p < r.end && *r.p != ',')
		return hd__error(err, HD_EPARSE, "text after the record");
	*out_len = o.len;
	return 0;
}
