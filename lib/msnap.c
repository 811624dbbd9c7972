/*
 * msnap.c - the reader of malloc snapshots (man 5 heapdump-malloc): one
 * NDJSON file of a header line, site lines and the leak scan's lines,
 * which the malloc tracker (libheapdump-malloc.so) writes. The file is
 * read into memory whole (a snapshot holds one line per site: a few MB
 * at most; 1 GiB is refused) and parsed a line at a time by a small
 * JSON parser that unescapes strings in place. Like the dump reader, it
 * counts and skips damaged lines (strict mode fails at the first);
 * unknown line types and keys are passed over (forward compatibility);
 * a header that is missing or names another format is refused.
 */
#include "hd_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define MSNAP_MAX_BYTES (1ull << 30)
#define MSNAP_MAX_DEPTH 32

struct hd_msnap {
	char *buf;           /* the file, NUL-terminated */
	size_t len;
	size_t pos;          /* start of the next line */
	uint64_t lineno;     /* of the line last read */
	uint64_t skipped, first_skip;
	int strict;
	hd_msnap_header hdr;
};

/* ---- a line's members ---- */

enum { V_NONE, V_STR, V_NUM, V_BOOL };

struct mval {
	int kind;
	char *s;             /* V_STR: unescaped, NUL-terminated */
	size_t len;
	int is_uint;         /* V_NUM: a non-negative integer */
	uint64_t u;
	double d;
};

/* The members a line of any type may have; "totals" and "malloc" are
 * nested objects, "blind" an array of strings (joined by "; "). */
enum {
	K_TYPE, K_FORMAT, K_PID, K_TIME, K_RUBY, K_ALLOCATOR, K_TRACKING,
	K_WHY, K_REASON, K_GC_COUNT, K_RSS, K_SITE, K_KIND, K_ALLOCS,
	K_FREES, K_BYTES_ALLOCATED, K_LIVE_BYTES, K_LIVE_BLOCKS,
	K_GEN_OLDEST, K_GEN_MEAN, K_BLOCKS, K_BYTES, K_SCANNED_BYTES,
	K_UNREACHED_BLOCKS, K_UNREACHED_BYTES, K_SECONDS, K_BLIND,
	K_T_ALLOCS, K_T_FREES, K_T_BYTES_ALLOCATED, K_T_LIVE_BYTES,
	K_T_LIVE_BLOCKS, K_M_IN_USE, K_M_FREE, K__COUNT
};

static const char *const top_keys[] = {
	"type", "format", "pid", "time", "ruby", "allocator", "tracking",
	"why", "reason", "gc_count", "rss", "site", "kind", "allocs", "frees",
	"bytes_allocated", "live_bytes", "live_blocks", "gen_oldest",
	"gen_mean", "blocks", "bytes", "scanned_bytes", "unreached_blocks",
	"unreached_bytes", "seconds", "blind"
};
static const char *const totals_keys[] = { "allocs", "frees",
					   "bytes_allocated", "live_bytes",
					   "live_blocks" };
static const char *const malloc_keys[] = { "in_use", "free" };

struct line {
	struct mval v[K__COUNT];
};

struct jp {
	char *p, *end;
	char *start;         /* the line, for columns */
	int depth;
};

static void ws(struct jp *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' ||
				 *j->p == '\r' || *j->p == '\n'))
		j->p++;
}

/*
 * The string at j->p (on its quote), unescaped in place into dst (at or
 * before the quote). \u00XX is the byte XX, as the tracker writes an
 * invalid byte of a name (a valid character above U+007F is written as
 * itself); other \u escapes and surrogate pairs are UTF-8. Returns the
 * length, or -1 (no closing quote, a bad escape, a raw control byte).
 */
static long parse_string(struct jp *j, char *dst)
{
	char *o = dst, *s = j->p + 1;
	uint32_t cp, lo;

	while (s < j->end) {
		unsigned char c = (unsigned char)*s;

		if (c == '"') {
			j->p = s + 1;
			return (long)(o - dst);
		}
		if (c < 0x20)
			return -1;
		if (c != '\\') {
			*o++ = (char)c;
			s++;
			continue;
		}
		if (s + 1 >= j->end)
			return -1;
		switch (s[1]) {
		case '"': case '\\': case '/': *o++ = s[1]; break;
		case 'b': *o++ = '\b'; break;
		case 'f': *o++ = '\f'; break;
		case 'n': *o++ = '\n'; break;
		case 'r': *o++ = '\r'; break;
		case 't': *o++ = '\t'; break;
		case 'u':
			if (hd__json_hex4(s + 2, (size_t)(j->end - (s + 2)), &cp))
				return -1;
			s += 6;
			if (cp < 0x100) {
				*o++ = (char)cp;
				continue;
			}
			if (cp >= 0xd800 && cp < 0xdc00 && j->end - s >= 6 &&
			    s[0] == '\\' && s[1] == 'u' &&
			    !hd__json_hex4(s + 2, (size_t)(j->end - (s + 2)),
					   &lo) &&
			    lo >= 0xdc00 && lo < 0xe000) {
				cp = 0x10000 + ((cp - 0xd800) << 10) +
				     (lo - 0xdc00);
				s += 6;
			}
			o += hd__utf8_put(o, cp);
			continue;
		default:
			return -1;
		}
		s += 2;
	}
	return -1;
}

/* A JSON number: -?int(.frac)?(e[+-]?digits)?; integers kept exact
 * (saturated at 2^64-1), every number as a double too. */
static int parse_number(struct jp *j, struct mval *v)
{
	char tmp[64], *s = j->p;
	size_t n;
	int digits = 0, neg = 0, integral = 1;

	if (s < j->end && *s == '-') {
		neg = 1;
		s++;
	}
	while (s < j->end && *s >= '0' && *s <= '9') {
		s++;
		digits++;
	}
	if (!digits)
		return -1;
	if (s < j->end && *s == '.') {
		integral = 0;
		if (++s >= j->end || *s < '0' || *s > '9')
			return -1;
		while (s < j->end && *s >= '0' && *s <= '9')
			s++;
	}
	if (s < j->end && (*s == 'e' || *s == 'E')) {
		integral = 0;
		s++;
		if (s < j->end && (*s == '+' || *s == '-'))
			s++;
		if (s >= j->end || *s < '0' || *s > '9')
			return -1;
		while (s < j->end && *s >= '0' && *s <= '9')
			s++;
	}
	n = (size_t)(s - j->p);
	v->kind = V_NUM;
	v->is_uint = !neg && integral;
	v->u = 0;
	if (v->is_uint) {
		const char *q;

		for (q = j->p; q < s; q++) {
			unsigned d = (unsigned)(*q - '0');

			if (v->u > (UINT64_MAX - d) / 10) {
				v->u = UINT64_MAX;
				break;
			}
			v->u = v->u * 10 + d;
		}
	}
	if (n < sizeof(tmp)) {
		memcpy(tmp, j->p, n);
		tmp[n] = '\0';
		v->d = strtod(tmp, NULL);
	} else {
		v->d = v->is_uint ? (double)v->u : 0;
	}
	j->p = s;
	return 0;
}

static int skip_value(struct jp *j);

static int lit(struct jp *j, const char *w, size_t n)
{
	if ((size_t)(j->end - j->p) < n || memcmp(j->p, w, n))
		return -1;
	j->p += n;
	return 0;
}

/* skips an object or array at j->p (on its opening bracket) */
static int skip_container(struct jp *j)
{
	char close = *j->p == '{' ? '}' : ']';
	int obj = close == '}', first = 1;
	long n;

	if (++j->depth > MSNAP_MAX_DEPTH)
		return -1;
	j->p++;
	for (;;) {
		ws(j);
		if (j->p >= j->end)
			return -1;
		if (*j->p == close && first) {
			j->p++;
			break;
		}
		if (obj) {
			if (*j->p != '"' || (n = parse_string(j, j->p)) < 0)
				return -1;
			ws(j);
			if (j->p >= j->end || *j->p++ != ':')
				return -1;
		}
		if (skip_value(j))
			return -1;
		ws(j);
		first = 0;
		if (j->p < j->end && *j->p == ',') {
			j->p++;
			continue;
		}
		if (j->p < j->end && *j->p == close) {
			j->p++;
			break;
		}
		return -1;
	}
	j->depth--;
	return 0;
}

/* any value, into v when v is not NULL (containers only skipped) */
static int parse_value(struct jp *j, struct mval *v)
{
	struct mval tmp;
	long n;
	char *at;

	if (!v)
		v = &tmp;
	ws(j);
	if (j->p >= j->end)
		return -1;
	switch (*j->p) {
	case '"':
		at = j->p;
		if ((n = parse_string(j, at)) < 0)
			return -1;
		at[n] = '\0'; /* at or before the closing quote */
		v->kind = V_STR;
		v->s = at;
		v->len = (size_t)n;
		return 0;
	case '{':
	case '[':
		v->kind = V_NONE;
		return skip_container(j);
	case 't':
		v->kind = V_BOOL;
		v->u = 1;
		return lit(j, "true", 4);
	case 'f':
		v->kind = V_BOOL;
		v->u = 0;
		return lit(j, "false", 5);
	case 'n':
		v->kind = V_NONE;
		return lit(j, "null", 4);
	default:
		return parse_number(j, v);
	}
}

static int skip_value(struct jp *j)
{
	return parse_value(j, NULL);
}

static int key_index(const char *const *keys, size_t n, const char *k,
		     size_t len)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strlen(keys[i]) == len && !memcmp(keys[i], k, len))
			return (int)i;
	return -1;
}

/* "blind": an array of strings, joined by "; " in place */
static int parse_blind(struct jp *j, struct mval *v)
{
	char *o = j->p;
	long n;
	int first = 1;

	j->p++;
	v->kind = V_STR;
	v->s = o;
	for (;;) {
		ws(j);
		if (j->p >= j->end)
			return -1;
		if (*j->p == ']' && first) {
			j->p++;
			break;
		}
		if (*j->p != '"')
			return -1;
		if (!first) {
			memcpy(o, "; ", 2);
			o += 2;
		}
		/* the raw form of each item after the first starts at
		 * least 4 bytes past the output's end (the closing quote
		 * of the one before, the ',', its own quote): neither the
		 * "; " nor the unescaped item overtakes the input */
		if ((n = parse_string(j, o)) < 0)
			return -1;
		o += n;
		ws(j);
		first = 0;
		if (j->p < j->end && *j->p == ',') {
			j->p++;
			continue;
		}
		if (j->p < j->end && *j->p == ']') {
			j->p++;
			break;
		}
		return -1;
	}
	*o = '\0';
	v->len = (size_t)(o - v->s);
	return 0;
}

/* an object's members into L, through keys (offset base in L) */
static int parse_members(struct jp *j, struct line *L,
			 const char *const *keys, size_t nkeys, int base,
			 int top)
{
	char kbuf[32];
	char *k;
	long n;
	int i, first = 1;

	if (j->p >= j->end || *j->p != '{')
		return -1;
	if (++j->depth > MSNAP_MAX_DEPTH)
		return -1;
	j->p++;
	for (;;) {
		ws(j);
		if (j->p >= j->end)
			return -1;
		if (*j->p == '}' && first) {
			j->p++;
			break;
		}
		if (*j->p != '"')
			return -1;
		k = j->p;
		if ((n = parse_string(j, k)) < 0)
			return -1;
		i = -1;
		if ((size_t)n < sizeof(kbuf)) {
			memcpy(kbuf, k, (size_t)n);
			i = key_index(keys, nkeys, kbuf, (size_t)n);
		}
		ws(j);
		if (j->p >= j->end || *j->p++ != ':')
			return -1;
		ws(j);
		if (j->p >= j->end)
			return -1;
		if (top && n == 6 && !memcmp(kbuf, "totals", 6) &&
		    *j->p == '{') {
			if (parse_members(j, L, totals_keys, 5, K_T_ALLOCS, 0))
				return -1;
		} else if (top && n == 6 && !memcmp(kbuf, "malloc", 6) &&
			   *j->p == '{') {
			if (parse_members(j, L, malloc_keys, 2, K_M_IN_USE, 0))
				return -1;
		} else if (top && i == K_BLIND && *j->p == '[') {
			if (parse_blind(j, &L->v[K_BLIND]))
				return -1;
		} else if (parse_value(j, i >= 0 ? &L->v[base + i] : NULL)) {
			return -1;
		}
		ws(j);
		first = 0;
		if (j->p < j->end && *j->p == ',') {
			j->p++;
			continue;
		}
		if (j->p < j->end && *j->p == '}') {
			j->p++;
			break;
		}
		return -1;
	}
	j->depth--;
	return 0;
}

/* parses line s[0..n) (its bytes rewritten); 0, or -1 with *col */
static int parse_line(char *s, size_t n, struct line *L, uint64_t *col)
{
	struct jp j = { s, s + n, s, 0 };

	memset(L, 0, sizeof(*L));
	ws(&j);
	if (parse_members(&j, L, top_keys,
			  sizeof(top_keys) / sizeof(top_keys[0]), 0, 1))
		goto bad;
	ws(&j);
	if (j.p != j.end)
		goto bad;
	return 0;
bad:
	*col = (uint64_t)(j.p - j.start) + 1;
	return -1;
}

static int is_str(const struct line *L, int k, const char *w)
{
	return L->v[k].kind == V_STR && strlen(w) == L->v[k].len &&
	       !memcmp(L->v[k].s, w, L->v[k].len);
}

static int num(const struct line *L, int k, uint64_t *out)
{
	if (L->v[k].kind != V_NUM || !L->v[k].is_uint)
		return 0;
	*out = L->v[k].u;
	return 1;
}

static uint64_t num0(const struct line *L, int k)
{
	uint64_t v = 0;

	num(L, k, &v);
	return v;
}

static double dbl(const struct line *L, int k)
{
	return L->v[k].kind == V_NUM ? L->v[k].d : 0;
}

static void copy_str(char *dst, size_t size, const struct line *L, int k)
{
	size_t n = L->v[k].kind == V_STR ? L->v[k].len : 0;

	if (n >= size)
		n = size - 1;
	if (n)
		memcpy(dst, L->v[k].s, n);
	dst[n] = '\0';
}

/* ---- lines ---- */

/* The next non-blank line as [*s, *s + *n), NUL-terminated; 0 at the
 * end. */
static int next_line(hd_msnap *m, char **s, size_t *n)
{
	while (m->pos < m->len) {
		char *p = m->buf + m->pos, *e;
		size_t left = m->len - m->pos, k;

		e = memchr(p, '\n', left);
		k = e ? (size_t)(e - p) : left;
		m->pos += k + (e != NULL);
		m->lineno++;
		p[k] = '\0';
		if (k && p[k - 1] == '\r')
			p[--k] = '\0';
		for (left = 0; left < k; left++)
			if (p[left] != ' ' && p[left] != '\t')
				break;
		if (left == k)
			continue;
		*s = p;
		*n = k;
		return 1;
	}
	return 0;
}

/* A short, printable excerpt of line s for a message. */
static void excerpt(char *out, size_t size, const char *s, size_t n)
{
	size_t o = 0, i;

	for (i = 0; i < n && o + 5 < size && i < 40; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
			out[o++] = (char)c;
		} else {
			static const char hx[] = "0123456789abcdef";

			out[o++] = '\\';
			out[o++] = 'x';
			out[o++] = hx[c >> 4];
			out[o++] = hx[c & 15];
		}
	}
	out[o] = '\0';
}

static int read_header(hd_msnap *m, hd_error *err)
{
	hd_msnap_header *h = &m->hdr;
	struct line L;
	char *s, ex[200];
	size_t n;
	uint64_t col, f;

	if (!next_line(m, &s, &n))
		return hd__error(err, HD_EFORMAT,
				 "not a malloc snapshot: %s",
				 m->len ? "only blank lines" : "empty");
	excerpt(ex, sizeof(ex), s, n);
	if (parse_line(s, n, &L, &col) || !is_str(&L, K_TYPE, "malloc_snapshot"))
		return hd__error_at(err, HD_EFORMAT, m->lineno, 0, 0,
				    "not a malloc snapshot (line %llu: \"%s\")",
				    (unsigned long long)m->lineno, ex);
	if (!num(&L, K_FORMAT, &f))
		return hd__error(err, HD_EFORMAT,
				 "malloc snapshot without a \"format\": not "
				 "one this heapdump reads (format %d)",
				 HD_MSNAP_FORMAT);
	if (f != HD_MSNAP_FORMAT)
		return hd__error(err, HD_EFORMAT,
				 "malloc snapshot of format %llu: this "
				 "heapdump reads format %d",
				 (unsigned long long)f, HD_MSNAP_FORMAT);
	h->format = (int)f;
	h->tracking = L.v[K_TRACKING].kind == V_BOOL ?
			      (int)L.v[K_TRACKING].u :
			      1;
	h->pid = num(&L, K_PID, &f) && f <= INT64_MAX ? (int64_t)f : 0;
	h->time = dbl(&L, K_TIME);
	copy_str(h->ruby, sizeof(h->ruby), &L, K_RUBY);
	copy_str(h->allocator, sizeof(h->allocator), &L, K_ALLOCATOR);
	copy_str(h->reason, sizeof(h->reason), &L, K_REASON);
	copy_str(h->why, sizeof(h->why), &L, K_WHY);
	h->has_gc_count = num(&L, K_GC_COUNT, &h->gc_count);
	h->has_rss = num(&L, K_RSS, &h->rss);
	h->has_malloc = num(&L, K_M_IN_USE, &h->malloc_in_use);
	num(&L, K_M_FREE, &h->malloc_free);
	h->allocs = num0(&L, K_T_ALLOCS);
	h->frees = num0(&L, K_T_FREES);
	h->bytes_allocated = num0(&L, K_T_BYTES_ALLOCATED);
	h->live_bytes = num0(&L, K_T_LIVE_BYTES);
	h->live_blocks = num0(&L, K_T_LIVE_BLOCKS);
	return 0;
}

static int open_buf(hd_msnap **out, char *buf, size_t len,
		    const hd_msnap_options *opts, hd_error *err)
{
	hd_msnap *m;
	int rc;

	if (opts && opts->version != HD_MSNAP_OPTIONS_VERSION) {
		hd__free(buf, len + 1);
		return hd__error(err, HD_EINVAL,
				 "unknown hd_msnap_options version %u",
				 opts->version);
	}
	if (!(m = hd__calloc(1, sizeof(*m)))) {
		hd__free(buf, len + 1);
		return hd__error(err, HD_ENOMEM, "out of memory");
	}
	m->buf = buf;
	m->len = len;
	m->strict = opts ? opts->strict : 0;
	if ((rc = read_header(m, err))) {
		hd_msnap_close(m);
		return rc;
	}
	*out = m;
	return 0;
}

int hd_msnap_open_mem(hd_msnap **out, const char *data, size_t len,
		      const hd_msnap_options *opts, hd_error *err)
{
	char *buf;

	HD_ASSERT_ARG(out && (data || !len));
	*out = NULL;
	if (len > MSNAP_MAX_BYTES)
		return hd__error(err, HD_ELIMIT,
				 "malloc snapshot over 1 GiB");
	if (!(buf = hd__malloc(len + 1)))
		return hd__error(err, HD_ENOMEM, "out of memory");
	if (len)
		memcpy(buf, data, len);
	buf[len] = '\0';
	return open_buf(out, buf, len, opts, err);
}

/* the whole of fd into *buf (NUL-terminated) */
static int slurp(int fd, char **buf, size_t *len, hd_error *err)
{
	size_t cap = 1 << 16, n = 0;
	char *b = hd__malloc(cap), *nb;
	ssize_t r;

	if (!b)
		return hd__error(err, HD_ENOMEM, "out of memory");
	for (;;) {
		if (cap - n < 2) {
			if (cap > MSNAP_MAX_BYTES) {
				hd__free(b, cap);
				return hd__error(err, HD_ELIMIT,
						 "malloc snapshot over 1 GiB");
			}
			if (!(nb = hd__realloc(b, cap, cap * 2))) {
				hd__free(b, cap);
				return hd__error(err, HD_ENOMEM,
						 "out of memory");
			}
			b = nb;
			cap *= 2;
		}
		r = read(fd, b + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;

			hd__free(b, cap);
			return hd__error_sys(err, e, "cannot read");
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	/* shrink to len + 1, the size every free of buf gives */
	if ((nb = hd__realloc(b, cap, n + 1)))
		b = nb;
	else {
		hd__free(b, cap);
		return hd__error(err, HD_ENOMEM, "out of memory");
	}
	b[n] = '\0';
	*buf = b;
	*len = n;
	return 0;
}

int hd_msnap_open(hd_msnap **out, const char *path,
		  const hd_msnap_options *opts, hd_error *err)
{
	char *buf = NULL;
	size_t len = 0;
	int fd, rc;

	HD_ASSERT_ARG(out && path);
	*out = NULL;
	if (!strcmp(path, "-"))
		fd = 0;
	else if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return hd__error_sys(err, errno, "cannot open");
	rc = slurp(fd, &buf, &len, err);
	if (fd)
		close(fd);
	if (rc)
		return rc;
	return open_buf(out, buf, len, opts, err);
}

const hd_msnap_header *hd_msnap_header_get(const hd_msnap *m)
{
	return &m->hdr;
}

uint64_t hd_msnap_skipped(const hd_msnap *m)
{
	return m ? m->skipped : 0;
}

uint64_t hd_msnap_first_skip(const hd_msnap *m)
{
	return m ? m->first_skip : 0;
}

static int item_of(const struct line *L, hd_msnap_item *it)
{
	memset(it, 0, sizeof(*it));
	it->allocator = "";
	it->blind = "";
	if (is_str(L, K_TYPE, "site") || is_str(L, K_TYPE, "leaked")) {
		int site = is_str(L, K_TYPE, "site");

		if (L->v[K_SITE].kind != V_STR)
			return -1;
		it->type = site ? HD_MSNAP_SITE : HD_MSNAP_LEAKED;
		it->site = L->v[K_SITE].s;
		it->site_len = L->v[K_SITE].len;
		it->kind = is_str(L, K_KIND, "ruby") ? HD_MSITE_RUBY :
						      HD_MSITE_C;
		if (!site)
			return num(L, K_BLOCKS, &it->blocks) &&
					       num(L, K_BYTES, &it->bytes) ?
				       0 :
				       -1;
		if (!num(L, K_LIVE_BYTES, &it->live_bytes) ||
		    !num(L, K_ALLOCS, &it->allocs))
			return -1;
		it->frees = num0(L, K_FREES);
		it->bytes_allocated = num0(L, K_BYTES_ALLOCATED);
		it->live_blocks = num0(L, K_LIVE_BLOCKS);
		it->has_gen = num(L, K_GEN_OLDEST, &it->gen_oldest) &&
			      L->v[K_GEN_MEAN].kind == V_NUM;
		it->gen_mean = it->has_gen ? dbl(L, K_GEN_MEAN) : 0;
		return 0;
	}
	if (is_str(L, K_TYPE, "leakscan")) {
		it->type = HD_MSNAP_LEAKSCAN;
		it->live_blocks = num0(L, K_LIVE_BLOCKS);
		it->scanned_bytes = num0(L, K_SCANNED_BYTES);
		it->unreached_blocks = num0(L, K_UNREACHED_BLOCKS);
		it->unreached_bytes = num0(L, K_UNREACHED_BYTES);
		it->seconds = dbl(L, K_SECONDS);
		if (L->v[K_ALLOCATOR].kind == V_STR)
			it->allocator = L->v[K_ALLOCATOR].s;
		if (L->v[K_BLIND].kind == V_STR)
			it->blind = L->v[K_BLIND].s;
		return 0;
	}
	if (L->v[K_TYPE].kind != V_STR ||
	    is_str(L, K_TYPE, "malloc_snapshot"))
		return -1;
	return 1; /* another type: passed over */
}

int hd_msnap_next(hd_msnap *m, hd_msnap_item *out, hd_error *err)
{
	struct line L;
	char *s, ex[200];
	size_t n;
	uint64_t col;
	int rc;

	HD_ASSERT_ARG(m && out);
	while (next_line(m, &s, &n)) {
		excerpt(ex, sizeof(ex), s, n);
		col = 1;
		if (!parse_line(s, n, &L, &col)) {
			rc = item_of(&L, out);
			if (rc == 0)
				return 0;
			if (rc > 0)
				continue;
		}
		if (m->strict)
			return hd__error_at(err, HD_EPARSE, m->lineno, col, 0,
					    "damaged snapshot line (\"%s\")",
					    ex);
		if (!m->skipped++)
			m->first_skip = m->lineno;
	}
	return HD_ITEROVER;
}

void hd_msnap_close(hd_msnap *m)
{
	if (!m)
		return;
	hd__free(m->buf, m->len + 1);
	hd__free(m, sizeof(*m));
}
