/*
 * scan.c - the dump scanner: one line of a heap dump into one hd_record.
 *
 * This is not a general JSON parser. It knows the shape of dump records
 * (a flat object whose values are strings, numbers, booleans, an array of
 * address strings and the small "flags" object), reads the fields it
 * knows straight into the record and skips the rest generically. Nothing
 * is allocated per field: strings are spans of the input, references go
 * into a buffer reused from line to line.
 *
 * Ruby writes some fields unescaped (file, name, real_class_name and, up
 * to 2.7, method), so a string may contain raw quotes. In lenient mode a
 * closing quote is accepted only where what follows continues the object
 * (", \"key\":" or the final "}"); otherwise the scan goes on to the next
 * quote. When the structure is beyond that repair, salvage() recovers the
 * address, type, class and references the line still holds.
 *
 * Every read is bounds-checked against [line, line + len).
 */
#include "hd_int.h"

/* hd__scan_line inlines most of this file; a helper inlined there can
 * cost its loop more than the call (type_of: measured) */
#if defined(__GNUC__)
#define OUT_OF_LINE __attribute__((noinline))
#else
#define OUT_OF_LINE
#endif

struct cur {
	const char *p;
	const char *end;
	const char *start;       /* the line, for error columns */
	struct hd__scan *sc;
	int avx2;                /* simd.c's forms of the hot loops */
	int strict;              /* sc->strict, one load nearer */
};

/* A cursor at the start of the line [line, line + len) of sc. */
static inline void cur_init(struct cur *c, struct hd__scan *sc,
			    const char *line, size_t len, int avx2)
{
	c->start = line;
	c->p = line;
	c->end = line + len;
	c->sc = sc;
	c->avx2 = avx2;
	c->strict = sc->strict;
}

static int fail(struct cur *c, const char *at, const char *msg)
{
	c->sc->err_col = (size_t)(at - c->start);
	c->sc->err_msg = msg;
	return HD__SCAN_BAD;
}

static inline void skip_ws(struct cur *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' ||
				 *c->p == '\r' || *c->p == '\n'))
		c->p++;
}

/* hex digit values, 0xff for every other byte */
static const unsigned char hexv[256] = {
#define X16 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, \
	    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff
	X16, X16, X16,
	0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	0xff, 10, 11, 12, 13, 14, 15, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	0xff, 0xff, 0xff, X16,
	0xff, 10, 11, 12, 13, 14, 15, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	0xff, 0xff, 0xff, X16,
	X16, X16, X16, X16, X16, X16, X16, X16,
#undef X16
};

static inline int hexval(unsigned char ch)
{
	return hexv[ch] == 0xff ? -1 : hexv[ch];
}

int hd__parse_hex(const char *p, size_t n, uint64_t *out)
{
	uint64_t v = 0;
	size_t i = 0;
	unsigned bad = 0;

	if (n >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		i = 2;
	if (i == n || n - i > 16)
		return -1;
	/* no branch per digit: a non-digit sets the high bits of bad */
	for (; i < n; i++) {
		unsigned h = hexv[(unsigned char)p[i]];

		bad |= h;
		v = v << 4 | (uint64_t)(h & 15);
	}
	if (bad & 0xf0)
		return -1;
	*out = v;
	return 0;
}

/* ---- type names ---- */

static const char *const type_names[HD_T__COUNT] = {
	"UNKNOWN", "NONE",  "OBJECT", "CLASS",    "MODULE", "FLOAT",
	"STRING",  "REGEXP", "ARRAY", "HASH",     "STRUCT", "BIGNUM",
	"FILE",    "DATA",  "MATCH",  "COMPLEX",  "RATIONAL", "SYMBOL",
	"IMEMO",   "ICLASS", "NODE",  "ZOMBIE",
};

const char *hd_type_name(int type)
{
	if (type < 0 || type >= HD_T__COUNT)
		return "UNKNOWN";
	return type_names[type];
}


/*
 * The type of a name by a perfect hash: its first and last four bytes,
 * bit 5 of each cleared (case folding, as for letters), and its length,
 * multiplied by a constant chosen so that the 22 names land in 22
 * different entries of 32 (a search over random odd multipliers), then
 * one check of the same words and length against the entry's name. No
 * branch on the letters, which the types of consecutive records make
 * unpredictable.
 */
#define TYPE_MUL 0x54dd7fd9746d04e3ULL

static const unsigned char type_slot[32] = {
	HD_T_ARRAY,  HD_T_NODE,   HD_T_ZOMBIE,  0,
	HD_T_MODULE, HD_T_FILE,   0,            HD_T_NONE,
	HD_T_STRUCT, 0,           0,            HD_T_CLASS,
	HD_T_COMPLEX, HD_T_MATCH, HD_T_DATA,    0,
	0,           0,           HD_T_FLOAT,   HD_T_IMEMO,
	HD_T_STRING, HD_T_OBJECT, 0,            HD_T_SYMBOL,
	HD_T_ICLASS, HD_T_RATIONAL, HD_T_BIGNUM, 0,
	HD_T_HASH,   HD_T_REGEXP, 0,            0,
};

static const unsigned char type_len[HD_T__COUNT] = {
	7, 4, 6, 5, 6, 5, 6, 6, 5, 4, 6, 6, 4, 4, 5, 7, 8, 6, 5, 6, 4, 6,
};

/* Case-insensitive (bit 5 of each byte ignored, as before). */
int hd_type_from_name(const char *name, size_t len)
{
	const unsigned char *p = (const unsigned char *)name, *n;
	uint32_t w, w2;
	int t;

	if (len < 4 || len > 8)
		return HD_T_UNKNOWN;
	w = hd__le32(p) & 0xdfdfdfdfu;
	w2 = hd__le32(p + len - 4) & 0xdfdfdfdfu;
	t = type_slot[((w ^ (uint64_t)w2 << 32 ^ len) * TYPE_MUL) >> 59];
	n = (const unsigned char *)type_names[t];
	if (!t || type_len[t] != len || w != hd__le32(n) ||
	    w2 != hd__le32(n + len - 4))
		return HD_T_UNKNOWN;
	return t;
}

/* ---- strings ---- */

/* Is q (just after a closing quote) a plausible continuation of the
 * top-level object: `, "key":` or the final `}`? */
/* the bytes of a member key continues_object() accepts */
static const unsigned char keych[256] = {
	['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1,
	['6'] = 1, ['7'] = 1, ['8'] = 1, ['9'] = 1, ['_'] = 1,
	['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1,
	['g'] = 1, ['h'] = 1, ['i'] = 1, ['j'] = 1, ['k'] = 1, ['l'] = 1,
	['m'] = 1, ['n'] = 1, ['o'] = 1, ['p'] = 1, ['q'] = 1, ['r'] = 1,
	['s'] = 1, ['t'] = 1, ['u'] = 1, ['v'] = 1, ['w'] = 1, ['x'] = 1,
	['y'] = 1, ['z'] = 1,
	['A'] = 1, ['B'] = 1, ['C'] = 1, ['D'] = 1, ['E'] = 1, ['F'] = 1,
	['G'] = 1, ['H'] = 1, ['I'] = 1, ['J'] = 1, ['K'] = 1, ['L'] = 1,
	['M'] = 1, ['N'] = 1, ['O'] = 1, ['P'] = 1, ['Q'] = 1, ['R'] = 1,
	['S'] = 1, ['T'] = 1, ['U'] = 1, ['V'] = 1, ['W'] = 1, ['X'] = 1,
	['Y'] = 1, ['Z'] = 1,
};

static int continues_object(const char *q, const char *end)
{
	/* the dumper's ", \"" first */
	if (HD_LIKELY(end - q >= 3 && q[0] == ',' && q[1] == ' ' &&
		      q[2] == '"')) {
		q += 3;
		goto key;
	}
	while (q < end && (*q == ' ' || *q == '\t'))
		q++;
	if (q == end)
		return 0;
	if (*q == '}') {
		for (q++; q < end; q++)
			if (*q != ' ' && *q != '\t' && *q != '\r' &&
			    *q != ',' && *q != '\n')
				return 0;
		return 1;
	}
	if (*q != ',')
		return 0;
	for (q++; q < end && (*q == ' ' || *q == '\t'); q++)
		;
	if (q == end || *q != '"')
		return 0;
	q++;
key:
	while (q < end && keych[(unsigned char)*q])
		q++;
	return q + 1 < end && q[0] == '"' && q[1] == ':';
}

static int escaped(const char *q, const char *begin)
{
	size_t n = 0;

	while (q > begin && q[-1] == '\\') {
		q--;
		n++;
	}
	return n & 1;
}

/* The same two rules for the tools that rewrite records (replace_class.c):
 * one definition of where a string ends. */
int hd__continues_object(const char *q, const char *end)
{
	return continues_object(q, end);
}

int hd__quote_escaped(const char *q, const char *begin)
{
	return escaped(q, begin);
}

static int check_strict(struct cur *c, const char *s, const char *e)
{
	const unsigned char *p;

	for (p = (const unsigned char *)s; p < (const unsigned char *)e; p++)
		if (*p < 0x20)
			return fail(c, (const char *)p,
				    "control character in string");
	return 0;
}

/* ---- finding bytes, eight at a time ---- */

#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL

static inline uint64_t load8(const char *p)
{
	uint64_t x;

	memcpy(&x, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	x = __builtin_bswap64(x);
#endif
	return x;
}

/* The bytes below the n-th (all for n >= 8). */
static inline uint64_t low_bytes(size_t n)
{
	return n >= 8 ? ~(uint64_t)0 : ((uint64_t)1 << (8 * n)) - 1;
}

/* The high bit of each byte of x equal to b; exact up to the first one,
 * which is all a caller looks at (the lowest set bit). */
static inline uint64_t eq8(uint64_t x, unsigned char b)
{
	uint64_t y = x ^ (ONES * b);

	return (y - ONES) & ~y & HIGHS;
}

/* The first '"' or '\\' in [p, c->end), or c->end. */
static inline const char *strend(const struct cur *c, const char *p)
{
	if (c->avx2) {
#if defined(__SSE2__)
		/* the usual short string in one vector, inline (any CPU
		 * with AVX2 has SSE2) */
		if (c->end - p >= 16) {
			int i = hd__sse2_strend16(p);

			if (i >= 0)
				return p + i;
			p += 16;
		}
#endif
		return hd__avx2_strend(p, c->end);
	}
	while (c->end - p >= 8) {
		uint64_t x = load8(p), m = eq8(x, '"') | eq8(x, '\\');

		if (m)
			return p + (__builtin_ctzll(m) >> 3);
		p += 8;
	}
	while (p < c->end && *p != '"' && *p != '\\')
		p++;
	return p;
}

/* The first '"' in [p, c->end), or c->end. */
static inline const char *quote(const struct cur *c, const char *p)
{
	while (c->end - p >= 8) {
		uint64_t m = eq8(load8(p), '"');

		if (m)
			return p + (__builtin_ctzll(m) >> 3);
		p += 8;
	}
	while (p < c->end && *p != '"')
		p++;
	return p;
}

/*
 * Reads a string at c->p (on its opening quote) into out. member: the
 * string is a top-level member value, so a raw quote may be repaired by
 * looking for a closing quote that continues the object.
 */
static OUT_OF_LINE int read_string_all(struct cur *c, hd_str *out,
				       int member)
{
	const char *s = c->p + 1, *q = s;

	for (;;) {
		/* the next quote or backslash; a backslash takes the byte
		 * after it, so the quote found is never escaped */
		q = strend(c, q);
		if (HD_UNLIKELY(q < c->end && *q == '\\')) {
			q = c->end - q > 2 ? q + 2 : c->end;
			continue;
		}
		if (q == c->end) {
			c->sc->need_more = 1;
			return fail(c, c->p, "unterminated string");
		}
		if (!member || continues_object(q + 1, c->end))
			break;
		if (c->strict) {
			/* name the real problem if a later quote fits */
			const char *r = q + 1;

			while ((r = memchr(r, '"', (size_t)(c->end - r)))) {
				r++;
				if (!escaped(r - 1, s) &&
				    continues_object(r, c->end))
					return fail(c, q,
						    "unescaped quote in string");
			}
			break;
		}
		if (!c->sc->repaired) {
			c->sc->err_col = (size_t)(q - c->start);
			c->sc->err_msg = "unescaped quote in a string";
		}
		c->sc->repaired = 1;
		q++;
	}
	if (c->strict && check_strict(c, s, q))
		return HD__SCAN_BAD;
	out->ptr = s;
	out->len = (size_t)(q - s);
	c->p = q + 1;
	return 0;
}

/* read_string_all() inline for the usual string: no backslash before
 * its closing quote, which (for a member) continues the object, and no
 * --strict (whose check goes over the bytes); the rest from the start. */
static inline int read_string(struct cur *c, hd_str *out, int member)
{
	const char *s = c->p + 1, *q = strend(c, s);

	if (HD_LIKELY(q < c->end && *q == '"' && !c->strict) &&
	    (!member || continues_object(q + 1, c->end))) {
		out->ptr = s;
		out->len = (size_t)(q - s);
		c->p = q + 1;
		return 0;
	}
	return read_string_all(c, out, member);
}

/* Skips a key; leaves c->p after the colon. */
static int read_key(struct cur *c, const char **k, size_t *klen)
{
	const char *q;

	if (c->p >= c->end || *c->p != '"')
		return fail(c, c->p, "expected a key");
	/* keys are short: eight bytes at a time, inline */
	q = quote(c, c->p + 1);
	if (q == c->end)
		return fail(c, c->p, "unterminated key");
	*k = c->p + 1;
	*klen = (size_t)(q - c->p - 1);
	c->p = q + 1;
	if (HD_LIKELY(c->p < c->end && *c->p == ':')) {
		c->p++;
		if (HD_LIKELY(c->p < c->end && *c->p != ' '))
			return 0;
		skip_ws(c);
		return 0;
	}
	skip_ws(c);
	if (c->p >= c->end || *c->p != ':')
		return fail(c, c->p, "expected ':' after a key");
	c->p++;
	skip_ws(c);
	return 0;
}

/* ---- numbers and literals ---- */

/*
 * A number out of its field's range, at at: strict mode fails; lenient
 * mode keeps the record (saturated, or without the field) and reports the
 * line as repaired with msg.
 */
static int out_of_range(struct cur *c, const char *at, const char *msg)
{
	if (c->strict)
		return fail(c, at, msg);
	if (!c->sc->repaired) {
		c->sc->err_col = (size_t)(at - c->start);
		c->sc->err_msg = msg;
	}
	c->sc->repaired = 1;
	return 0;
}

static const char over_u64[] = "number out of range: saturated at 2^64-1";

/*
 * The usual number: 1 to 7 digits, the line going on after them with
 * neither '.', 'e' nor 'E'. Eight bytes loaded at once, the digits found
 * and converted without a loop (SWAR). Returns 0, or -1 (c untouched)
 * for read_u64_over() to decide.
 */
static inline int fast_u64(struct cur *c, uint64_t *out)
{
	const char *p = c->p;
	uint64_t x, nd, v;
	unsigned n, ch;

	if (c->end - p < 8)
		return -1;
	x = load8(p);
	/* the high bit of each byte that is not '0'..'9' */
	nd = ((x & 0xf0f0f0f0f0f0f0f0ULL) ^ 0x3030303030303030ULL) |
	     (((x & 0x0f0f0f0f0f0f0f0fULL) + 0x0606060606060606ULL) &
	      0xf0f0f0f0f0f0f0f0ULL);
	nd = ((nd & 0x7f7f7f7f7f7f7f7fULL) + 0x7f7f7f7f7f7f7f7fULL) | nd;
	nd &= HIGHS;
	if (!nd)
		return -1;
	n = (unsigned)__builtin_ctzll(nd) >> 3;
	/* the byte after the digits, p[n], is in x */
	ch = (unsigned)(x >> (8 * n)) & 0xff;
	if (!n || ch == '.' || (ch | 0x20) == 'e')
		return -1;
	/* the digits in the high bytes, zeros (leading '0's) below */
	v = (x & 0x0f0f0f0f0f0f0f0fULL) << (8 * (8 - n));
	v = (v * 10 + (v >> 8)) & 0x00ff00ff00ff00ffULL;
	v = (v * (1 + ((uint64_t)100 << 16)) >> 16) & 0x0000ffff0000ffffULL;
	v = (v * (1 + ((uint64_t)10000 << 32))) >> 32;
	*out = v;
	c->p = p + n;
	return 0;
}

/* *over is set when the number does not fit (then *out is UINT64_MAX). */
static int read_u64_over(struct cur *c, uint64_t *out, int *over)
{
	uint64_t v = 0;
	const char *p = c->p;

	*over = 0;
	if (p >= c->end || *p < '0' || *p > '9')
		return fail(c, p, "expected an unsigned number");
	/* up to 19 digits cannot overflow: no check per digit */
	{
		const char *lim = c->end - p > 19 ? p + 19 : c->end;

		while (p < lim && (unsigned char)(*p - '0') <= 9)
			v = v * 10 + (uint64_t)(*p++ - '0');
		if (p == c->end || (unsigned char)(*p - '0') > 9)
			goto done;
	}
	for (; p < c->end && *p >= '0' && *p <= '9'; p++) {
		unsigned d = (unsigned)(*p - '0');

		if (v > (UINT64_MAX - d) / 10) {
			v = UINT64_MAX;
			*over = 1;
		} else if (!*over) {
			v = v * 10 + d;
		}
	}
done:
	if (p < c->end && (*p == '.' || *p == 'e' || *p == 'E'))
		return fail(c, p, "expected an integer");
	c->p = p;
	*out = v;
	return 0;
}

/* read_u64() for all but the usual number */
static OUT_OF_LINE int read_u64_slow(struct cur *c, uint64_t *out)
{
	const char *at = c->p;
	int over;

	if (read_u64_over(c, out, &over))
		return HD__SCAN_BAD;
	return over ? out_of_range(c, at, over_u64) : 0;
}

/* An unsigned number; one past 2^64-1 is saturated and reported. */
static inline int read_u64(struct cur *c, uint64_t *out)
{
	if (HD_LIKELY(!fast_u64(c, out)))
		return 0;
	return read_u64_slow(c, out);
}

static int read_i64(struct cur *c, int64_t *out)
{
	uint64_t v;
	int neg = 0;

	if (c->p < c->end && *c->p == '-') {
		neg = 1;
		c->p++;
	}
	const char *at = c->p;
	int over;

	if (read_u64_over(c, &v, &over))
		return HD__SCAN_BAD;
	if (v > (uint64_t)INT64_MAX) {
		v = (uint64_t)INT64_MAX;
		over = 1;
	}
	*out = neg ? -(int64_t)v : (int64_t)v;
	return over ? out_of_range(c, at,
				   "number out of range: saturated at "
				   "+/-(2^63-1)") :
		      0;
}

static int read_lit(struct cur *c, int *val)
{
	size_t left = (size_t)(c->end - c->p);

	if (left >= 4 && memcmp(c->p, "true", 4) == 0) {
		c->p += 4;
		*val = 1;
		return 0;
	}
	if (left >= 5 && memcmp(c->p, "false", 5) == 0) {
		c->p += 5;
		*val = 0;
		return 0;
	}
	return fail(c, c->p, "expected true or false");
}

/*
 * The usual address string at s (after its opening quote): "0x", 1 to 16
 * hex digits and the closing quote, which is returned (NULL for anything
 * else). No quote or backslash comes before it, so a string read ends
 * there too, and hd__parse_hex gives the same value.
 */
/* The high bit of each byte of w that is not a hex digit (hexv): exact
 * in every byte, no borrow crosses one. */
static inline uint64_t nonhex8(uint64_t w)
{
	const uint64_t lo7 = 0x7f7f7f7f7f7f7f7fULL;
	uint64_t d = w ^ 0x3030303030303030ULL;            /* digit: < 10 */
	uint64_t l = (w | 0x2020202020202020ULL) ^
		     0x6060606060606060ULL;              /* a-f: 1..6 */
	uint64_t ge10 = ((d & lo7) + 0x7676767676767676ULL) | d;
	uint64_t ge7 = ((l & lo7) + 0x7979797979797979ULL) | l;
	uint64_t zero = ~(((l & lo7) + lo7) | l);

	return ge10 & (ge7 | zero) & HIGHS;
}

/* The value of the hex digits of w (byte 0 the first, zero bytes after
 * the last), 8 nibbles in 32 bits. */
static inline uint64_t hex8(uint64_t w, uint64_t keep)
{
	uint64_t n = ((w & 0x0f0f0f0f0f0f0f0fULL) +
		      ((w >> 6) & 0x0101010101010101ULL) * 9) & keep;

	n = ((n << 4) | (n >> 8)) & 0x00ff00ff00ff00ffULL;
	n = ((n << 8) | (n >> 16)) & 0x0000ffff0000ffffULL;
	return (n & 0xffff) << 16 | n >> 32;
}

/*
 * The usual address string at s (after its opening quote): "0x", 1 to 16
 * hex digits and the closing quote, which is returned (NULL for anything
 * else). No quote or backslash comes before it, so a string read ends
 * there too, and hd__parse_hex gives the same value. Two word loads,
 * no loop.
 */
static inline const char *canon_addr(const char *s, const char *end,
				     uint64_t *out)
{
	uint64_t w0, w1, m;
	size_t n;

	if (end - s < 20 || s[0] != '0' || s[1] != 'x')
		return NULL;
	w0 = load8(s + 2);
	w1 = load8(s + 10);
	if ((m = nonhex8(w0)))
		n = (size_t)__builtin_ctzll(m) >> 3;
	else if ((m = nonhex8(w1)))
		n = 8 + ((size_t)__builtin_ctzll(m) >> 3);
	else
		n = 16;
	if (!n || s[2 + n] != '"')
		return NULL;
	if (n <= 8)
		*out = hex8(w0, low_bytes(n)) >> (4 * (8 - n));
	else
		*out = (hex8(w0, ~(uint64_t)0) << 32 |
			hex8(w1, low_bytes(n - 8))) >> (4 * (16 - n));
	return s + 2 + n;
}

/* canon_addr(), in simd.c's form where the CPU has it */
static inline const char *addr_at(const struct cur *c, const char *s,
				  uint64_t *out)
{
	if (c->avx2)
		return hd__avx2_addr(s, c->end, out);
	return canon_addr(s, c->end, out);
}

static int read_addr(struct cur *c, uint64_t *out)
{
	const char *s, *q;

	if (c->p >= c->end || *c->p != '"')
		return fail(c, c->p, "expected an address string");
	s = c->p + 1;
	if ((q = addr_at(c, s, out))) {
		c->p = q + 1;
		return 0;
	}
	q = memchr(s, '"', (size_t)(c->end - s));
	if (!q)
		return fail(c, c->p, "unterminated address");
	if (hd__parse_hex(s, (size_t)(q - s), out))
		return fail(c, s, "invalid address");
	c->p = q + 1;
	return 0;
}

/* ---- generic values ---- */

/* Strict mode only: true, false, null or a JSON number. */
static int valid_scalar(const char *p, size_t n)
{
	size_t i = 0;

	if ((n == 4 && (!memcmp(p, "true", 4) || !memcmp(p, "null", 4))) ||
	    (n == 5 && !memcmp(p, "false", 5)))
		return 1;
	if (i < n && p[i] == '-')
		i++;
	if (i == n || p[i] < '0' || p[i] > '9' || (p[i] == '0' && i + 1 < n &&
						   p[i + 1] >= '0' && p[i + 1] <= '9'))
		return 0;
	while (i < n && p[i] >= '0' && p[i] <= '9')
		i++;
	if (i < n && p[i] == '.') {
		if (++i == n || p[i] < '0' || p[i] > '9')
			return 0;
		while (i < n && p[i] >= '0' && p[i] <= '9')
			i++;
	}
	if (i < n && (p[i] == 'e' || p[i] == 'E')) {
		i++;
		if (i < n && (p[i] == '+' || p[i] == '-'))
			i++;
		if (i == n || p[i] < '0' || p[i] > '9')
			return 0;
		while (i < n && p[i] >= '0' && p[i] <= '9')
			i++;
	}
	return i == n;
}

/*
 * Skips any JSON value iteratively: an explicit stack of container kinds
 * (one bit per level, 1 = object) instead of recursion on hostile input.
 */
static int skip_value(struct cur *c)
{
	uint64_t stack = 0;
	unsigned depth = 0;
	const char *k;
	size_t kl;
	hd_str tmp;

	for (;;) {
		skip_ws(c);
		if (c->p >= c->end)
			return fail(c, c->p, "unexpected end of line");
		if (*c->p == '{' || *c->p == '[') {
			int obj = *c->p == '{';

			if (depth == 64)
				return fail(c, c->p, "nesting too deep");
			stack = stack << 1 | (uint64_t)obj;
			depth++;
			c->p++;
			skip_ws(c);
			if (c->p < c->end && *c->p == (obj ? '}' : ']')) {
				c->p++;
				depth--;
				stack >>= 1;
			} else {
				if (obj && read_key(c, &k, &kl))
					return HD__SCAN_BAD;
				continue;
			}
		} else if (*c->p == '"') {
			if (read_string(c, &tmp, 0))
				return HD__SCAN_BAD;
		} else {
			const char *p = c->p;

			while (p < c->end && *p != ',' && *p != '}' &&
			       *p != ']' && *p != ' ' && *p != '\t')
				p++;
			if (p == c->p)
				return fail(c, p, "expected a value");
			if (c->strict && !valid_scalar(c->p, (size_t)(p - c->p)))
				return fail(c, c->p, "invalid literal");
			c->p = p;
		}
		/* after a value: close containers, or go to the next item */
		for (;;) {
			skip_ws(c);
			if (!depth)
				return 0;
			if (c->p >= c->end)
				return fail(c, c->p, "unexpected end of line");
			if (*c->p == ',') {
				c->p++;
				skip_ws(c);
				if ((stack & 1) && read_key(c, &k, &kl))
					return HD__SCAN_BAD;
				break;
			}
			if (*c->p != ((stack & 1) ? '}' : ']'))
				return fail(c, c->p,
					    "expected ',' or a closing bracket");
			c->p++;
			depth--;
			stack >>= 1;
		}
	}
}

/* ---- references ---- */

static int push_ref(struct hd__scan *sc, size_t n, uint64_t v)
{
	if (HD_UNLIKELY(n >= sc->refs_cap) &&
	    hd__grow((void **)&sc->refs, &sc->refs_cap, n + 1,
		     sizeof(*sc->refs)))
		return HD_ENOMEM;
	sc->refs[n] = v;
	return 0;
}

/* Reads ["0x..", "0x..", ...]: the hot loop of big arrays and hashes. */
static int read_refs(struct cur *c, hd_record *rec)
{
	struct hd__scan *sc = c->sc;
	size_t n = 0;
	uint64_t v;

	if (c->p >= c->end || *c->p != '[')
		return fail(c, c->p, "expected '[' for references");
	rec->refs_open = (size_t)(c->p - c->start);
	c->p++;
	skip_ws(c);
	if (c->p < c->end && *c->p == ']') {
		c->p++;
		goto done;
	}
	for (;;) {
		const char *p;

		/* long runs of canonical references: simd.c */
		if (c->avx2 && c->end - c->p >= 32) {
			if (n >= sc->refs_cap &&
			    hd__grow((void **)&sc->refs, &sc->refs_cap, n + 1,
				     sizeof(*sc->refs)))
				return HD_ENOMEM;
			n += hd__avx2_refs(&c->p, c->end, sc->refs + n,
					   sc->refs_cap - n);
		}
		p = c->p;
		/* fast path: "0x" followed by hex digits and a quote */
		if (HD_LIKELY(c->end - p > 3 && p[0] == '"' && p[1] == '0' &&
			      p[2] == 'x')) {
			int h, digits = 0;
			const char *q = addr_at(c, p + 1, &v);

			if (HD_LIKELY(q != NULL)) { /* the usual one */
				c->p = q + 1;
				goto pushed;
			}

			v = 0;
			p += 3;
			while (p < c->end && (h = hexval((unsigned char)*p)) >= 0 &&
			       digits < 17) {
				v = v << 4 | (uint64_t)h;
				p++;
				digits++;
			}
			if (p >= c->end || *p != '"' || !digits || digits > 16)
				return fail(c, c->p, "invalid reference");
			c->p = p + 1;
		} else if (read_addr(c, &v)) {
			return HD__SCAN_BAD;
		}
	pushed:
		if (push_ref(sc, n++, v))
			return HD_ENOMEM;
		if (HD_LIKELY(c->end - c->p >= 2 && c->p[0] == ',' &&
			      c->p[1] == ' ')) {
			c->p += 2;
			continue;
		}
		skip_ws(c);
		if (c->p < c->end && *c->p == ',') {
			c->p++;
			skip_ws(c);
			continue;
		}
		if (c->p < c->end && *c->p == ']') {
			c->p++;
			break;
		}
		return fail(c, c->p, "expected ',' or ']' in references");
	}
done:
	sc->refs_close = (size_t)(c->p - 1 - c->start);
	rec->refs_close = sc->refs_close;
	rec->refs = sc->refs;
	rec->nrefs = n;
	rec->has |= HD_HAS_REFERENCES;
	return 0;
}

/* ---- reference names ---- */

/*
 * Damaged ref_names at at: strict mode fails; lenient mode drops the
 * record's names and reports the line as repaired with msg.
 */
static int names_damage(struct cur *c, hd_record *rec, const char *at,
			const char *msg)
{
	rec->has &= ~HD_HAS_REF_NAMES;
	rec->ref_names = NULL;
	if (c->strict)
		return fail(c, at, msg);
	if (!c->sc->repaired) {
		c->sc->err_col = (size_t)(at - c->start);
		c->sc->err_msg = msg;
	}
	c->sc->repaired = 1;
	return 0;
}

static int push_name(struct hd__scan *sc, size_t n, const char *p,
		     size_t len)
{
	if (HD_UNLIKELY(n >= sc->names_cap) &&
	    hd__grow((void **)&sc->names, &sc->names_cap, n + 1,
		     sizeof(*sc->names)))
		return HD_ENOMEM;
	sc->names[n].ptr = p;
	sc->names[n].len = len;
	return 0;
}

/*
 * One entry of ref_names: a string, a non-negative integer of at most 10
 * digits, or null. Returns 0, 1 for a bad entry (c->p unchanged), or
 * HD__SCAN_BAD / HD_ENOMEM.
 */
static int read_name(struct cur *c, size_t n)
{
	const char *p = c->p;
	hd_str s;

	if (*p == '"') {
		if (read_string(c, &s, 0))
			return HD__SCAN_BAD;
		return push_name(c->sc, n, p, (size_t)(c->p - p));
	}
	if (*p >= '0' && *p <= '9') {
		while (p < c->end && *p >= '0' && *p <= '9')
			p++;
		if (p - c->p > 10 || (p - c->p > 1 && *c->p == '0') ||
		    (p < c->end && (*p == '.' || *p == 'e' || *p == 'E')))
			return 1;
		s.ptr = c->p;
		c->p = p;
		return push_name(c->sc, n, s.ptr, (size_t)(p - s.ptr));
	}
	if (c->end - p >= 4 && memcmp(p, "null", 4) == 0) {
		c->p = p + 4;
		return push_name(c->sc, n, NULL, 0);
	}
	return 1;
}

/* Reads "ref_names":[...]; key: the key's opening quote. */
static int read_ref_names(struct cur *c, hd_record *rec, const char *key)
{
	const char *open = c->p;
	size_t n = 0;
	int rc;

	if (rec->names_open) {
		if ((rc = skip_value(c)))
			return rc;
		return names_damage(c, rec, open, "ref_names appears twice");
	}
	rec->names_key = (size_t)(key - c->start);
	if (c->p >= c->end || *c->p != '[') {
		if ((rc = skip_value(c)))
			return rc;
		/* where it is, for writers that leave it out */
		rec->names_open = (size_t)(open - c->start);
		rec->names_close = (size_t)(c->p - 1 - c->start);
		return names_damage(c, rec, open, "ref_names is not an array");
	}
	rec->names_open = (size_t)(open - c->start);
	c->p++;
	skip_ws(c);
	if (c->p < c->end && *c->p == ']') {
		c->p++;
		goto done;
	}
	for (;;) {
		if (c->p >= c->end)
			return fail(c, c->p, "unexpected end of line");
		if ((rc = read_name(c, n)) == 1) {
			const char *at = c->p;

			c->p = open;
			if ((rc = skip_value(c)))
				return rc;
			rec->names_close = (size_t)(c->p - 1 - c->start);
			return names_damage(c, rec, at,
					    "invalid entry in ref_names");
		}
		if (rc)
			return rc;
		n++;
		skip_ws(c);
		if (c->p < c->end && *c->p == ',') {
			c->p++;
			skip_ws(c);
			continue;
		}
		if (c->p < c->end && *c->p == ']') {
			c->p++;
			break;
		}
		return fail(c, c->p, "expected ',' or ']' in ref_names");
	}
done:
	rec->names_close = (size_t)(c->p - 1 - c->start);
	rec->ref_names = c->sc->names;
	rec->has |= HD_HAS_REF_NAMES;
	/* the count is checked against references once the record ends */
	c->sc->nnames = n;
	return 0;
}

/* ---- flags ---- */

static uint32_t flag_bit(const char *k, size_t n)
{
#define F(name, bit)                                                  \
	if (memcmp(k, name, sizeof(name) - 1) == 0)                   \
		return bit
	switch (n) {
	case 3:
		F("old", HD_B_OLD);
		break;
	case 6:
		F("marked", HD_B_MARKED);
		F("pinned", HD_B_PINNED);
		break;
	case 7:
		F("marking", HD_B_MARKING);
		break;
	case 9:
		F("shareable", HD_B_SHAREABLE);
		break;
	case 10:
		F("long_lived", HD_B_UNCOLLECTIBLE);
		F("remembered", HD_B_REMEMBERED);
		break;
	case 12:
		F("wb_protected", HD_B_WB_PROTECTED);
		break;
	case 13:
		F("uncollectible", HD_B_UNCOLLECTIBLE);
		break;
	}
#undef F
	return 0;
}

/* memcmp(a, b, n) == 0 for the flags object, n > 0: word loads inline,
 * the last word overlapping, instead of a call per record */
static inline int same_bytes(const char *a, const char *b, size_t n)
{
	uint64_t d = 0;
	size_t i;

	if (n < 8)
		return memcmp(a, b, n) == 0;
	for (i = 0; i + 8 < n; i += 8)
		d |= load8(a + i) ^ load8(b + i);
	d |= load8(a + n - 8) ^ load8(b + n - 8);
	return d == 0;
}

/*
 * Most records of a dump have one of a few flags objects: the last four
 * of only true and false members and an "age" of at most 255 (Ruby 3.4
 * and later write one) are kept with what they gave, and the same bytes
 * again give the same without a parse (the parse of such an object
 * depends on nothing else; an age out of range is reported, so parsed
 * each time).
 */
static int read_flags(struct cur *c, hd_record *rec)
{
	struct hd__scan *sc = c->sc;
	const char *start = c->p;
	uint32_t bits = 0, has = 0, age = 0;
	int plain = 1;
	unsigned i, j;

	if (c->p >= c->end || *c->p != '{')
		return fail(c, c->p, "expected '{' for flags");
	/* the one that served last, then the others */
	for (i = 0, j = sc->flags_last & 3; i < 4; i++, j = (j + 1) & 3) {
		const struct hd__flags_memo *f = &sc->flags[j];

		if (f->len && (size_t)(c->end - c->p) >= f->len &&
		    same_bytes(c->p, f->text, f->len)) {
			rec->has |= HD_HAS_FLAGS | f->has;
			rec->bits |= f->bits;
			if (HD_UNLIKELY(f->has))
				rec->age = f->age;
			c->p += f->len;
			sc->flags_last = j;
			return 0;
		}
		if (i == 0 && !sc->flags[(j + 1) & 3].len)
			break; /* no other */
	}
	c->p++;
	skip_ws(c);
	rec->has |= HD_HAS_FLAGS;
	if (c->p < c->end && *c->p == '}') {
		c->p++;
		return 0;
	}
	for (;;) {
		const char *k;
		size_t kl;
		int b;

		if (read_key(c, &k, &kl))
			return HD__SCAN_BAD;
		if (kl == 3 && memcmp(k, "age", 3) == 0 && c->p < c->end &&
		    *c->p >= '0' && *c->p <= '9') {
			const char *at = c->p;
			uint64_t v;

			if (read_u64(c, &v))
				return HD__SCAN_BAD;
			if (v > 255) {
				plain = 0; /* reported: parse it each time */
				if (out_of_range(c, at, "age out of range: "
							"saturated at 255"))
					return HD__SCAN_BAD;
			}
			rec->age = age = v > 255 ? 255 : (uint32_t)v;
			rec->has |= has = HD_HAS_AGE;
		} else if (kl == 9 && memcmp(k, "object_id", 9) == 0 &&
			   c->p < c->end && *c->p >= '0' && *c->p <= '9') {
			plain = 0;
			if (read_u64(c, &rec->object_id))
				return HD__SCAN_BAD;
			rec->has |= HD_HAS_OBJECT_ID;
		} else if (c->p < c->end && (*c->p == 't' || *c->p == 'f')) {
			if (read_lit(c, &b))
				return HD__SCAN_BAD;
			if (b) {
				bits |= flag_bit(k, kl);
				rec->bits |= flag_bit(k, kl);
			}
		} else {
			plain = 0;
			if (skip_value(c))
				return HD__SCAN_BAD;
		}
		skip_ws(c);
		if (c->p < c->end && *c->p == ',') {
			c->p++;
			skip_ws(c);
			continue;
		}
		if (c->p < c->end && *c->p == '}') {
			c->p++;
			if (plain && (size_t)(c->p - start) <=
					     sizeof(sc->flags[0].text)) {
				struct hd__flags_memo *f =
					&sc->flags[sc->flags_next & 3];

				f->len = (unsigned)(c->p - start);
				f->bits = bits;
				f->has = has;
				f->age = age;
				memcpy(f->text, start, f->len);
				sc->flags_last = sc->flags_next;
				sc->flags_next = (sc->flags_next + 1) & 3;
			}
			return 0;
		}
		return fail(c, c->p, "expected ',' or '}' in flags");
	}
}

/* ---- members ---- */

#define KEY(s) (kl == sizeof(s) - 1 && memcmp(k, s, sizeof(s) - 1) == 0)

static int set_bool(struct cur *c, hd_record *rec, uint32_t bit)
{
	int b;

	if (read_lit(c, &b))
		return HD__SCAN_BAD;
	if (b)
		rec->bits |= bit;
	return 0;
}

static int set_u64(struct cur *c, hd_record *rec, uint64_t *dst,
		   uint32_t has)
{
	if (read_u64(c, dst))
		return HD__SCAN_BAD;
	rec->has |= has;
	return 0;
}

static int set_u32(struct cur *c, hd_record *rec, uint32_t *dst,
		   uint32_t has)
{
	const char *at = c->p;
	uint64_t v;

	if (read_u64(c, &v))
		return HD__SCAN_BAD;
	if (v > UINT32_MAX && out_of_range(c, at,
					   "number out of range: saturated "
					   "at 2^32-1"))
		return HD__SCAN_BAD;
	*dst = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
	rec->has |= has;
	return 0;
}

/*
 * No GC count reaches 2^64-1, which a store keeps for "untraced": such a
 * generation (or a larger one) is dropped and reported, so that the
 * object reads as untraced from the dump as from its store.
 */
static int set_generation(struct cur *c, hd_record *rec)
{
	const char *at = c->p;
	int over = 0;

	if (!fast_u64(c, &rec->generation)) {
		rec->has |= HD_HAS_GENERATION;
		return 0;
	}
	if (read_u64_over(c, &rec->generation, &over))
		return HD__SCAN_BAD;
	if (over || rec->generation == UINT64_MAX)
		return out_of_range(c, at,
				    "generation out of range: dropped "
				    "(the object reads as untraced)");
	rec->has |= HD_HAS_GENERATION;
	return 0;
}

/* A string Ruby escapes properly: it ends at the first unescaped quote. */
static int set_str(struct cur *c, hd_str *dst)
{
	if (c->p >= c->end || *c->p != '"')
		return fail(c, c->p, "expected a string");
	return read_string(c, dst, 0);
}

static int set_addr(struct cur *c, hd_record *rec, uint64_t *dst,
		    uint32_t has)
{
	if (read_addr(c, dst))
		return HD__SCAN_BAD;
	rec->has |= has;
	return 0;
}

/*
 * "class" is the class pointer or, in the output of replace-class, the
 * class's name, the pointer being in "class_address" (before or after).
 * Its position is kept for tools that edit records in place.
 */
static int set_class(struct cur *c, hd_record *rec)
{
	hd_str s;
	uint64_t v;
	const char *q;
	int not_hex = 0;

	if (c->p >= c->end || *c->p != '"')
		return fail(c, c->p, "expected an address string");
	c->sc->class_at = (size_t)(c->p - c->start);
	if ((q = addr_at(c, c->p + 1, &v))) {
		/* what read_string() and hd__parse_hex() would give */
		s.ptr = c->p + 1;
		s.len = (size_t)(q - s.ptr);
		c->p = q + 1;
	} else {
		if (read_string(c, &s, 0))
			return HD__SCAN_BAD;
		not_hex = hd__parse_hex(s.ptr, s.len, &v) != 0;
	}
	c->sc->class_end = (size_t)(c->p - c->start);
	if (not_hex ||
	    ((rec->has & HD_HAS_CLASS) && v != rec->class_addr)) {
		rec->class_name = s;
		rec->has |= HD_HAS_CLASS_NAME;
		return 0;
	}
	rec->class_addr = v;
	rec->has |= HD_HAS_CLASS;
	return 0;
}

/* The pointer of a named class. A value that is not an address (memdump
 * wrote names there) is ignored. */
static int set_class_address(struct cur *c, hd_record *rec)
{
	const struct hd__scan *sc = c->sc;
	uint64_t v;
	hd_str s;

	if (c->p >= c->end || *c->p != '"')
		return skip_value(c);
	if (read_string(c, &s, 0))
		return HD__SCAN_BAD;
	if (hd__parse_hex(s.ptr, s.len, &v))
		return 0;
	if ((rec->has & (HD_HAS_CLASS | HD_HAS_CLASS_NAME)) == HD_HAS_CLASS &&
	    v != rec->class_addr && sc->class_end > sc->class_at + 1) {
		/* the "class" before was a name that reads as hex: "Face" */
		rec->class_name.ptr = c->start + sc->class_at + 1;
		rec->class_name.len = sc->class_end - sc->class_at - 2;
		rec->has |= HD_HAS_CLASS_NAME;
	}
	rec->class_addr = v;
	rec->has |= HD_HAS_CLASS;
	return 0;
}

/* ---- member keys ---- */

/* Each key member() knows has an id, found by a hash without collisions
 * among them and one comparison: no chain of comparisons per key. */
enum key_id {
	K_OTHER = 0,
	K_ADDRESS,
	K_BYTESIZE,
	K_BROKEN,
	K_CLASS,
	K_CLASS_ADDRESS,
	K_CHILLED,
	K_COMPLEX_SHAPE,
	K_DEFAULT,
	K_EMBEDDED,
	K_ENCODING,
	K_EDGE_NAME,
	K_FILE,
	K_FLAGS,
	K_FROZEN,
	K_FSTRING,
	K_FD,
	K_GENERATION,
	K_IMEMO_TYPE,
	K_IVARS,
	K_ID,
	K_LINE,
	K_LENGTH,
	K_MEMSIZE,
	K_METHOD,
	K_NAME,
	K_NODE_TYPE,
	K_PARENT_ID,
	K_REFERENCES,
	K_REF_NAMES,
	K_REAL_CLASS_NAME,
	K_ROOT,
	K_SIZE,
	K_SHAPE_ID,
	K_SLOT_SIZE,
	K_SHARED,
	K_STRUCT,
	K_SUPERCLASS,
	K_SINGLETON,
	K_SHAPE_TYPE,
	K_TYPE,
	K_TOO_COMPLEX_SHAPE,
	K_VALUE,
	K_STACK,
	K__COUNT
};
typedef char hd__keys_fit[K__COUNT <= HD__SCAN_KEYS ? 1 : -1];

/* kh(): ((w0 + 3 w1) * 0x73f6e53d3853933dULL) >> 57, w0 and w1 the key's bytes
 * 0-7 and 8-15 as little-endian words, zero past the key */
#define KH_MUL 0x73f6e53d3853933dULL
static const struct kdef {
	uint64_t w0, w1;
	unsigned char len, id;
} ktab[128] = {
	[0] = { 0x0000000000006469ULL, 0x0000000000000000ULL, 2, K_ID }, /* id */
	[1] = { 0x656d616e5f666572ULL, 0x0000000000000073ULL, 9, K_REF_NAMES }, /* ref_names */
	[2] = { 0x616c637265707573ULL, 0x0000000000007373ULL, 10, K_SUPERCLASS }, /* superclass */
	[5] = { 0x0000006b63617473ULL, 0x0000000000000000ULL, 5, K_STACK }, /* stack */
	[12] = { 0x0073736572646461ULL, 0x0000000000000000ULL, 7, K_ADDRESS }, /* address */
	[16] = { 0x676e69646f636e65ULL, 0x0000000000000000ULL, 8, K_ENCODING }, /* encoding */
	[17] = { 0x00000000656d616eULL, 0x0000000000000000ULL, 4, K_NAME }, /* name */
	[18] = { 0x695f746e65726170ULL, 0x0000000000000064ULL, 9, K_PARENT_ID }, /* parent_id */
	[20] = { 0x0000007367616c66ULL, 0x0000000000000000ULL, 5, K_FLAGS }, /* flags */
	[31] = { 0x0064656c6c696863ULL, 0x0000000000000000ULL, 7, K_CHILLED }, /* chilled */
	[32] = { 0x79745f6570616873ULL, 0x0000000000006570ULL, 10, K_SHAPE_TYPE }, /* shape_type */
	[40] = { 0x69746172656e6567ULL, 0x0000000000006e6fULL, 10, K_GENERATION }, /* generation */
	[42] = { 0x00000000656c6966ULL, 0x0000000000000000ULL, 4, K_FILE }, /* file */
	[44] = { 0x6465646465626d65ULL, 0x0000000000000000ULL, 8, K_EMBEDDED }, /* embedded */
	[47] = { 0x616c635f6c616572ULL, 0x00656d616e5f7373ULL, 15, K_REAL_CLASS_NAME }, /* real_class_name */
	[49] = { 0x0000646572616873ULL, 0x0000000000000000ULL, 6, K_SHARED }, /* shared */
	[52] = { 0x6d616e5f65676465ULL, 0x0000000000000065ULL, 9, K_EDGE_NAME }, /* edge_name */
	[55] = { 0x636e657265666572ULL, 0x0000000000007365ULL, 10, K_REFERENCES }, /* references */
	[58] = { 0x00006e656b6f7262ULL, 0x0000000000000000ULL, 6, K_BROKEN }, /* broken */
	[59] = { 0x5f78656c706d6f63ULL, 0x0000006570616873ULL, 13, K_COMPLEX_SHAPE }, /* complex_shape */
	[63] = { 0x64695f6570616873ULL, 0x0000000000000000ULL, 8, K_SHAPE_ID }, /* shape_id */
	[64] = { 0x00676e6972747366ULL, 0x0000000000000000ULL, 7, K_FSTRING }, /* fstring */
	[70] = { 0x7a69735f746f6c73ULL, 0x0000000000000065ULL, 9, K_SLOT_SIZE }, /* slot_size */
	[76] = { 0x0000646f6874656dULL, 0x0000000000000000ULL, 6, K_METHOD }, /* method */
	[77] = { 0x79745f6f6d656d69ULL, 0x0000000000006570ULL, 10, K_IMEMO_TYPE }, /* imemo_type */
	[82] = { 0x0000000000006466ULL, 0x0000000000000000ULL, 2, K_FD }, /* fd */
	[85] = { 0x0000007373616c63ULL, 0x0000000000000000ULL, 5, K_CLASS }, /* class */
	[87] = { 0x0000746375727473ULL, 0x0000000000000000ULL, 6, K_STRUCT }, /* struct */
	[88] = { 0x0000000065707974ULL, 0x0000000000000000ULL, 4, K_TYPE }, /* type */
	[97] = { 0x00000000657a6973ULL, 0x0000000000000000ULL, 4, K_SIZE }, /* size */
	[98] = { 0x64615f7373616c63ULL, 0x0000007373657264ULL, 13, K_CLASS_ADDRESS }, /* class_address */
	[101] = { 0x0000007372617669ULL, 0x0000000000000000ULL, 5, K_IVARS }, /* ivars */
	[106] = { 0x00000000746f6f72ULL, 0x0000000000000000ULL, 4, K_ROOT }, /* root */
	[107] = { 0x00000000656e696cULL, 0x0000000000000000ULL, 4, K_LINE }, /* line */
	[109] = { 0x00006e657a6f7266ULL, 0x0000000000000000ULL, 6, K_FROZEN }, /* frozen */
	[112] = { 0x6f74656c676e6973ULL, 0x000000000000006eULL, 9, K_SINGLETON }, /* singleton */
	[113] = { 0x7079745f65646f6eULL, 0x0000000000000065ULL, 9, K_NODE_TYPE }, /* node_type */
	[116] = { 0x00657a69736d656dULL, 0x0000000000000000ULL, 7, K_MEMSIZE }, /* memsize */
	[117] = { 0x00000065756c6176ULL, 0x0000000000000000ULL, 5, K_VALUE }, /* value */
	[119] = { 0x657a697365747962ULL, 0x0000000000000000ULL, 8, K_BYTESIZE }, /* bytesize */
	[120] = { 0x00006874676e656cULL, 0x0000000000000000ULL, 6, K_LENGTH }, /* length */
	[122] = { 0x00746c7561666564ULL, 0x0000000000000000ULL, 7, K_DEFAULT }, /* default */
};


/* The id of the key of the words w0, w1 (zero past the key), kl bytes. */
static inline int key_id_words(uint64_t w0, uint64_t w1, size_t kl)
{
	const struct kdef *d = &ktab[((w0 + 3 * w1) * KH_MUL) >> 57];

	return d->len == kl && d->w0 == w0 && d->w1 == w1 ? d->id : K_OTHER;
}

/* The id of the key k of kl bytes, wherever it is. */
static int key_id(const char *k, size_t kl)
{
	uint64_t w[2] = { 0, 0 };
	size_t i;

	if (kl == 17 && memcmp(k, "too_complex_shape", 17) == 0)
		return K_TOO_COMPLEX_SHAPE;
	if (kl > 16)
		return K_OTHER;
	for (i = 0; i < kl; i++)
		w[i / 8] |= (uint64_t)(unsigned char)k[i] << (8 * (i % 8));
	return key_id_words(w[0], w[1], kl);
}

/*
 * read_key() and key_id() at once for the usual key: at most 16 bytes
 * that the line holds with room to spare, its quote and the colon right
 * after. Two word loads find the quote and give the words of the key.
 * Returns 0 and leaves c->p where read_key() would, or -1 (c untouched)
 * for read_key() to do.
 */
static inline int fast_key(struct cur *c, const char **k, size_t *klen,
			   int *id)
{
	const char *p = c->p;
	uint64_t w0, w1 = 0, m;
	size_t kl;

	if (c->end - p < 20 || *p != '"')
		return -1;
	w0 = load8(p + 1);
	if ((m = eq8(w0, '"'))) {
		kl = (size_t)__builtin_ctzll(m) >> 3;
		w0 &= low_bytes(kl);
	} else {
		w1 = load8(p + 9);
		if (!(m = eq8(w1, '"')))
			return -1;
		kl = 8 + ((size_t)__builtin_ctzll(m) >> 3);
		w1 &= low_bytes(kl - 8);
	}
	if (!kl || p[kl + 2] != ':')
		return -1;
	*k = p + 1;
	*klen = kl;
	*id = key_id_words(w0, w1, kl);
	c->p = p + kl + 3;
	if (HD_UNLIKELY(*c->p == ' '))
		skip_ws(c);
	return 0;
}

/*
 * The member separator and key the dumper writes, `, "key":`, of each
 * key of at most 11 bytes (16 in all): its bytes (zero after), their
 * count and the masks of them in the two words. A record's keys come in
 * an order that depends on its type (address, type, class, frozen, ...):
 * sc->next_key guesses the next one from the type and the key before,
 * and one 16-byte compare (two word ones without SSE2) confirms the
 * guess (next_member).
 */
#define KLEN(s) (sizeof(", \"" s "\":") - 1)
/* the low bytes of the first word, then of the second (every shift in
 * range, the one not taken too) */
#define KM0(n) (~0ULL >> (8 * (8 - ((n) < 8 ? (n) : 8))))
#define KM1(n) ((n) > 8 ? ~0ULL >> (8 * (16 - ((n) > 9 ? (n) : 9))) : 0)
#define KP(s) { ", \"" s "\":", KLEN(s), KM0(KLEN(s)), KM1(KLEN(s)) }
static const struct kpat {
	char text[16];
	unsigned char len;   /* 0: no pattern (a longer key, or none) */
	uint64_t m0, m1;     /* one 16-byte mask (key_follows) */
} kpat[HD__SCAN_KEYS] = {
	[K_ADDRESS] = KP("address"),
	[K_BYTESIZE] = KP("bytesize"),
	[K_BROKEN] = KP("broken"),
	[K_CLASS] = KP("class"),
	[K_CHILLED] = KP("chilled"),
	[K_DEFAULT] = KP("default"),
	[K_EMBEDDED] = KP("embedded"),
	[K_ENCODING] = KP("encoding"),
	[K_EDGE_NAME] = KP("edge_name"),
	[K_FILE] = KP("file"),
	[K_FLAGS] = KP("flags"),
	[K_FROZEN] = KP("frozen"),
	[K_FSTRING] = KP("fstring"),
	[K_FD] = KP("fd"),
	[K_GENERATION] = KP("generation"),
	[K_IMEMO_TYPE] = KP("imemo_type"),
	[K_IVARS] = KP("ivars"),
	[K_ID] = KP("id"),
	[K_LINE] = KP("line"),
	[K_LENGTH] = KP("length"),
	[K_MEMSIZE] = KP("memsize"),
	[K_METHOD] = KP("method"),
	[K_NAME] = KP("name"),
	[K_NODE_TYPE] = KP("node_type"),
	[K_PARENT_ID] = KP("parent_id"),
	[K_REFERENCES] = KP("references"),
	[K_REF_NAMES] = KP("ref_names"),
	[K_ROOT] = KP("root"),
	[K_SIZE] = KP("size"),
	[K_SHAPE_ID] = KP("shape_id"),
	[K_SLOT_SIZE] = KP("slot_size"),
	[K_SHARED] = KP("shared"),
	[K_STRUCT] = KP("struct"),
	[K_SUPERCLASS] = KP("superclass"),
	[K_SINGLETON] = KP("singleton"),
	[K_SHAPE_TYPE] = KP("shape_type"),
	[K_TYPE] = KP("type"),
	[K_VALUE] = KP("value"),
	[K_STACK] = KP("stack"),
};
#undef KP
typedef char hd__kpat_mask_whole[offsetof(struct kpat, m1) ==
					 offsetof(struct kpat, m0) + 8 ?
				 1 :
				 -1];
#undef KM1
#undef KM0
#undef KLEN

/*
 * The next member's separator and key when they are the guessed ones
 * (`, "key":`, more of the line after them): c->p is left where
 * scan_object()'s usual path would leave it, after the colon and any
 * whitespace, and *k at the key. Returns its id, or 0 (c untouched) for
 * the usual path to decide.
 */
/* Do the bytes at p, more than 16 before end, start with kpat[id]? */
static inline int key_follows(const char *p, const char *end, unsigned id)
{
	const struct kpat *kp = &kpat[id];

#if defined(__SSE2__)
	/* one 16-byte compare: m0 and m1 are the mask's two halves
	 * (measured: 1.5% of stats -j1's time, against two word ones) */
	__m128i v, m, t;

	if (!kp->len || end - p <= 16)
		return 0;
	v = _mm_loadu_si128((const __m128i *)(const void *)p);
	m = _mm_loadu_si128((const __m128i *)(const void *)&kp->m0);
	t = _mm_loadu_si128((const __m128i *)(const void *)kp->text);
	return _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_and_si128(v, m), t)) ==
	       0xffff;
#else
	return kp->len && end - p > 16 &&
	       !(((load8(p) & kp->m0) ^ load8(kp->text)) |
		 ((load8(p + 8) & kp->m1) ^ load8(kp->text + 8)));
#endif
}

static inline int next_member(struct cur *c, const unsigned char *guess,
			      const char **k)
{
	const struct kpat *kp = &kpat[*guess];
	const char *p = c->p;

	if (!key_follows(p, c->end, *guess))
		return 0;
	*k = p + 3;
	c->p = p + kp->len;
	if (HD_UNLIKELY(*c->p == ' '))
		skip_ws(c);
	return *guess;
}

/*
 * The type of the name at p (len bytes, at least 8 readable before end):
 * hd_type_from_name() in one word load, bit 5 of each byte cleared as it
 * does (case-insensitive), and a table without collisions among the
 * names, ((w * TH_MUL) >> 59) of the name's word.
 */
#define TH_MUL 0x9275f56eb4040e29ULL
static const struct tdef {
	uint64_t w;
	unsigned char len, type;
} ttab[32] = {
	[0] = { 0x0000544355525453ULL, 6, HD_T_STRUCT }, /* STRUCT */
	[1] = { 0x0000000045444f4eULL, 4, HD_T_NODE }, /* NODE */
	[4] = { 0x000000484354414dULL, 5, HD_T_MATCH }, /* MATCH */
	[5] = { 0x00004d554e474942ULL, 6, HD_T_BIGNUM }, /* BIGNUM */
	[7] = { 0x0000004f4d454d49ULL, 5, HD_T_IMEMO }, /* IMEMO */
	[8] = { 0x0000005941525241ULL, 5, HD_T_ARRAY }, /* ARRAY */
	[9] = { 0x00005353414c4349ULL, 6, HD_T_ICLASS }, /* ICLASS */
	[11] = { 0x0000474e49525453ULL, 6, HD_T_STRING }, /* STRING */
	[12] = { 0x00000000454c4946ULL, 4, HD_T_FILE }, /* FILE */
	[14] = { 0x004e574f4e4b4e55ULL, 7, HD_T_UNKNOWN }, /* UNKNOWN */
	[15] = { 0x0000000041544144ULL, 4, HD_T_DATA }, /* DATA */
	[16] = { 0x4c414e4f49544152ULL, 8, HD_T_RATIONAL }, /* RATIONAL */
	[17] = { 0x0058454c504d4f43ULL, 7, HD_T_COMPLEX }, /* COMPLEX */
	[19] = { 0x00004c4f424d5953ULL, 6, HD_T_SYMBOL }, /* SYMBOL */
	[20] = { 0x00000000454e4f4eULL, 4, HD_T_NONE }, /* NONE */
	[21] = { 0x00004549424d4f5aULL, 6, HD_T_ZOMBIE }, /* ZOMBIE */
	[24] = { 0x0000505845474552ULL, 6, HD_T_REGEXP }, /* REGEXP */
	[26] = { 0x00005443454a424fULL, 6, HD_T_OBJECT }, /* OBJECT */
	[27] = { 0x0000000048534148ULL, 4, HD_T_HASH }, /* HASH */
	[29] = { 0x0000005353414c43ULL, 5, HD_T_CLASS }, /* CLASS */
	[30] = { 0x0000454c55444f4dULL, 6, HD_T_MODULE }, /* MODULE */
	[31] = { 0x00000054414f4c46ULL, 5, HD_T_FLOAT }, /* FLOAT */
};

static OUT_OF_LINE int type_of(const char *p, size_t len, const char *end)
{
	const struct tdef *d;
	uint64_t w;

	if (len < 4 || len > 8 || end - p < 8)
		return hd_type_from_name(p, len);
	w = load8(p) & low_bytes(len) & ~(0x2020202020202020ULL);
	d = &ttab[(w * TH_MUL) >> 59];
	return d->len == len && d->w == w ? d->type : HD_T_UNKNOWN;
}

/*
 * A string some Ruby writes raw or garbles (file, name, real_class_name,
 * method, 3.0/3.1 escapes): a quote ends it only where the object goes
 * on. next: the key guessed after it (sc->next_key), whose `, "key":`
 * after the usual closing quote says so in two word compares.
 */
static int set_raw(struct cur *c, hd_str *dst, unsigned next)
{
	const char *s, *q;

	if (c->p >= c->end || *c->p != '"')
		return fail(c, c->p, "expected a string");
	s = c->p + 1;
	q = strend(c, s);
	if (HD_LIKELY(q < c->end && *q == '"' && !c->strict) &&
	    key_follows(q + 1, c->end, next)) {
		dst->ptr = s;
		dst->len = (size_t)(q - s);
		c->p = q + 1;
		return 0;
	}
	return read_string(c, dst, 1);
}

/* A STACK record's "frames": [1, 2, ...], unsigned integers. */
static int read_frames(struct cur *c, hd_record *rec)
{
	size_t n = 0;
	uint64_t v;

	if (c->p >= c->end || *c->p != '[')
		return fail(c, c->p, "expected '[' for frames");
	c->p++;
	skip_ws(c);
	if (c->p < c->end && *c->p == ']') {
		c->p++;
		goto done;
	}
	for (;;) {
		skip_ws(c);
		if (read_u64(c, &v))
			return HD__SCAN_BAD;
		if (push_ref(c->sc, n++, v))
			return HD_ENOMEM;
		skip_ws(c);
		if (c->p < c->end && *c->p == ',') {
			c->p++;
			continue;
		}
		if (c->p < c->end && *c->p == ']') {
			c->p++;
			break;
		}
		return fail(c, c->p, "expected ',' or ']' in frames");
	}
done:
	rec->frames = c->sc->refs;
	rec->nframes = n;
	return 0;
}

/* One member of a dump_all record. The value starts at c->p; next:
 * sc->next_key's row of the record's type. */
static int member(struct cur *c, hd_record *rec, const char *k, int id,
		  const unsigned char *next)
{
#define NEXT(id) next[id]
	switch (id) {
	case K_ADDRESS:
		return set_addr(c, rec, &rec->address, HD_HAS_ADDRESS);
	case K_BYTESIZE:
		return set_u64(c, rec, &rec->size, HD_HAS_SIZE);
	case K_BROKEN:
		return set_bool(c, rec, HD_B_BROKEN);
	case K_CLASS:
		return set_class(c, rec);
	case K_CLASS_ADDRESS:
		return set_class_address(c, rec);
	case K_CHILLED:
		return set_bool(c, rec, HD_B_CHILLED);
	case K_COMPLEX_SHAPE:
		return set_bool(c, rec, HD_B_TOO_COMPLEX);
	case K_DEFAULT:
		return set_addr(c, rec, &rec->default_addr, HD_HAS_DEFAULT);
	case K_EMBEDDED:
		return set_bool(c, rec, HD_B_EMBEDDED);
	case K_ENCODING:
		return set_str(c, &rec->encoding);
	case K_EDGE_NAME:
		return set_str(c, &rec->edge_name);
	case K_FILE:
		rec->has |= HD_HAS_FILE;
		return set_raw(c, &rec->file, NEXT(K_FILE));
	case K_FLAGS:
		return read_flags(c, rec);
	case K_FROZEN:
		return set_bool(c, rec, HD_B_FROZEN);
	case K_FSTRING:
		return set_bool(c, rec, HD_B_FSTRING);
	case K_FD:
		if (c->p < c->end &&
		    (*c->p == '-' || (*c->p >= '0' && *c->p <= '9'))) {
			rec->has |= HD_HAS_FD;
			return read_i64(c, &rec->fd);
		}
		break;
	case K_GENERATION:
		return set_generation(c, rec);
	case K_IMEMO_TYPE:
		return set_str(c, &rec->imemo_type);
	case K_IVARS:
		if (c->p < c->end && *c->p != '{')
			return set_u64(c, rec, &rec->size, HD_HAS_SIZE);
		break;
	case K_ID:
		return set_u32(c, rec, &rec->shape_id, HD_HAS_SHAPE_ID);
	case K_LINE:
		return set_u64(c, rec, &rec->line, HD_HAS_LINE);
	case K_LENGTH:
		return set_u64(c, rec, &rec->size, HD_HAS_SIZE);
	case K_MEMSIZE:
		return set_u64(c, rec, &rec->memsize, HD_HAS_MEMSIZE);
	case K_METHOD:
		rec->has |= HD_HAS_METHOD;
		return set_raw(c, &rec->method, NEXT(K_METHOD));
	case K_NAME:
		return set_raw(c, &rec->name, NEXT(K_NAME));
	case K_NODE_TYPE:
		return set_str(c, &rec->node_type);
	case K_PARENT_ID:
		return set_u32(c, rec, &rec->shape_parent, 0);
	case K_REFERENCES:
		return read_refs(c, rec);
	case K_REF_NAMES:
		return read_ref_names(c, rec, k - 1);
	case K_REAL_CLASS_NAME:
		return set_raw(c, &rec->real_class_name, NEXT(K_REAL_CLASS_NAME));
	case K_ROOT:
		return set_str(c, &rec->root);
	case K_SIZE:
		return set_u64(c, rec, &rec->size, HD_HAS_SIZE);
	case K_SHAPE_ID:
		return set_u32(c, rec, &rec->shape_id, HD_HAS_SHAPE_ID);
	case K_SLOT_SIZE:
		return set_u32(c, rec, &rec->slot_size, HD_HAS_SLOT_SIZE);
	case K_SHARED:
		return set_bool(c, rec, HD_B_SHARED);
	case K_STRUCT:
		return set_str(c, &rec->struct_name);
	case K_SUPERCLASS:
		return set_addr(c, rec, &rec->superclass, HD_HAS_SUPERCLASS);
	case K_SINGLETON:
		return set_bool(c, rec, HD_B_SINGLETON);
	case K_SHAPE_TYPE:
		return set_str(c, &rec->shape_type);
	case K_TYPE:
		if (set_str(c, &rec->type_name))
			return HD__SCAN_BAD;
		rec->type = type_of(rec->type_name.ptr, rec->type_name.len,
				    c->end);
		return 0;
	case K_TOO_COMPLEX_SHAPE:
		return set_bool(c, rec, HD_B_TOO_COMPLEX);
	case K_VALUE:
		if (c->p < c->end && *c->p == '"')
			return set_str(c, &rec->value);
		break;
	case K_STACK:
		return set_u32(c, rec, &rec->stack, HD_HAS_STACK);
	case K_OTHER:
		/* the keys of STACK and FRAME lines, rare: no slot of their
		 * own in ktab (the key is followed by its quote) */
		if (k[0] == 'f' && memcmp(k, "frames\"", 7) == 0)
			return read_frames(c, rec);
		if (k[0] == 'l' && memcmp(k, "label\"", 6) == 0)
			return set_str(c, &rec->label);
		break;
	}
#undef NEXT
	return skip_value(c);
}

/* ---- memprof ---- */

/*
 * memprof records have no references array: any string value that looks
 * like a pointer ("0x...") is a reference, at the top level or one level
 * down in an array or object (data, ivars, methods, variables, ...). The
 * own _id and the class pointer are not references.
 */
static int memprof_ptr(struct cur *c, hd_str s, size_t *n)
{
	uint64_t v;

	if (s.len > 2 && s.ptr[0] == '0' && s.ptr[1] == 'x' &&
	    !hd__parse_hex(s.ptr, s.len, &v))
		return push_ref(c->sc, (*n)++, v);
	return 0;
}

static int memprof_value(struct cur *c, size_t *n, int depth)
{
	hd_str s;

	skip_ws(c);
	if (c->p < c->end && *c->p == '"') {
		if (read_string(c, &s, depth == 0))
			return HD__SCAN_BAD;
		return memprof_ptr(c, s, n);
	}
	if (c->p < c->end && (*c->p == '[' || *c->p == '{') && depth < 2) {
		char close = *c->p == '[' ? ']' : '}';
		int obj = *c->p == '{';

		c->p++;
		skip_ws(c);
		if (c->p < c->end && *c->p == close) {
			c->p++;
			return 0;
		}
		for (;;) {
			if (obj) {
				/* keys can be pointers too (hash data) */
				if (c->p < c->end && *c->p == '"') {
					const char *k0 = c->p + 1;
					const char *k;
					size_t kl;

					if (read_key(c, &k, &kl))
						return HD__SCAN_BAD;
					s.ptr = k0;
					s.len = kl;
					if (memprof_ptr(c, s, n))
						return HD_ENOMEM;
				} else {
					return fail(c, c->p, "expected a key");
				}
			}
			if (memprof_value(c, n, depth + 1))
				return HD__SCAN_BAD;
			skip_ws(c);
			if (c->p < c->end && *c->p == ',') {
				c->p++;
				skip_ws(c);
				continue;
			}
			if (c->p < c->end && *c->p == close) {
				c->p++;
				return 0;
			}
			return fail(c, c->p, "expected ',' or a closing bracket");
		}
	}
	return skip_value(c);
}

static void memprof_kind(hd_record *rec)
{
	hd_str t = rec->type_name;

#define T(s) (t.len == sizeof(s) - 1 && memcmp(t.ptr, s, t.len) == 0)
	if (T("globals") || T("frame") || T("finalizers")) {
		rec->kind = HD_REC_ROOT;
		rec->root = t;
	} else if (T("lsof") || T("ps")) {
		rec->kind = HD_REC_OTHER;
	}
#undef T
}

static int memprof_member(struct cur *c, hd_record *rec, const char *k,
			  size_t kl, size_t *n)
{
	hd_str s;

	if (KEY("_id")) {
		if (set_str(c, &s))
			return HD__SCAN_BAD;
		if (!hd__parse_hex(s.ptr, s.len, &rec->address))
			rec->has |= HD_HAS_ADDRESS;
		return 0;
	}
	if (KEY("class"))
		return c->p < c->end && *c->p == '"' ?
			       set_addr(c, rec, &rec->class_addr, HD_HAS_CLASS) :
			       skip_value(c);
	if (KEY("type")) {
		if (set_str(c, &rec->type_name))
			return HD__SCAN_BAD;
		rec->type = hd_type_from_name(rec->type_name.ptr,
					      rec->type_name.len);
		return 0;
	}
	if (KEY("file") || KEY("name")) {
		if (c->p < c->end && *c->p != '"')
			return skip_value(c);
		if (KEY("file"))
			rec->has |= HD_HAS_FILE;
		return set_str(c, KEY("file") ? &rec->file : &rec->name);
	}
	if (KEY("line"))
		return set_u64(c, rec, &rec->line, HD_HAS_LINE);
	if (KEY("length"))
		return set_u64(c, rec, &rec->size, HD_HAS_SIZE);
	if (KEY("singleton") && c->p < c->end &&
	    (*c->p == 't' || *c->p == 'f'))
		return set_bool(c, rec, HD_B_SINGLETON);
	if (KEY("super")) {
		const char *v = c->p;

		if (memprof_value(c, n, 0))
			return HD__SCAN_BAD;
		if (*v == '"' && !hd__parse_hex(v + 1, (size_t)(c->p - v - 2),
						&rec->superclass))
			rec->has |= HD_HAS_SUPERCLASS;
		return 0;
	}
	if (KEY("data") && rec->type == HD_T_STRING && c->p < c->end &&
	    *c->p == '"')
		return set_str(c, &rec->value);
	return memprof_value(c, n, 0);
}

/* ---- salvage ---- */

static const char *find(const char *h, const char *end, const char *n)
{
	size_t nl = strlen(n);

	while (h && (size_t)(end - h) >= nl) {
		h = memchr(h, n[0], (size_t)(end - h) - nl + 1);
		if (!h)
			return NULL;
		if (memcmp(h, n, nl) == 0)
			return h + nl;
		h++;
	}
	return NULL;
}

static void salvage_u64(struct cur *c, const char *key, uint64_t *dst,
			uint32_t *has, uint32_t bit)
{
	const char *v = find(c->start, c->end, key);

	if (!v)
		return;
	c->p = v;
	skip_ws(c);
	if (!read_u64(c, dst))
		*has |= bit;
}

/*
 * Recovers what an invalid line still gives: address, type, class,
 * memsize, generation and the references up to the first damage. The
 * record is marked repaired. Returns 0 when an object or root was found.
 */
static int salvage(struct cur *c, hd_record *rec)
{
	const char *v;
	hd_str tmp;
	struct hd__scan *sc = c->sc;
	size_t n = 0;
	uint64_t a;

	memset(rec, 0, sizeof(*rec));
	if ((v = find(c->start, c->end, "\"type\":"))) {
		c->p = v;
		skip_ws(c);
		if (c->p < c->end && *c->p == '"' && !read_string(c, &tmp, 0)) {
			rec->type_name = tmp;
			rec->type = hd_type_from_name(tmp.ptr, tmp.len);
		}
	}
	if ((v = find(c->start, c->end, "\"address\":"))) {
		c->p = v;
		skip_ws(c);
		if (!read_addr(c, &rec->address))
			rec->has |= HD_HAS_ADDRESS;
	}
	if ((v = find(c->start, c->end, "\"root\":"))) {
		c->p = v;
		skip_ws(c);
		if (c->p < c->end && *c->p == '"' && !read_string(c, &tmp, 0))
			rec->root = tmp;
	}
	if ((v = find(c->start, c->end, "\"class\":"))) {
		c->p = v;
		skip_ws(c);
		if (!read_addr(c, &rec->class_addr))
			rec->has |= HD_HAS_CLASS;
	}
	salvage_u64(c, "\"memsize\":", &rec->memsize, &rec->has,
		    HD_HAS_MEMSIZE);
	salvage_u64(c, "\"generation\":", &rec->generation, &rec->has,
		    HD_HAS_GENERATION);
	if (rec->generation == UINT64_MAX)
		rec->has &= ~(uint32_t)HD_HAS_GENERATION;
	if ((v = find(c->start, c->end, "\"references\":"))) {
		c->p = v;
		skip_ws(c);
		if (c->p < c->end && *c->p == '[')
			c->p++;
		for (;;) {
			skip_ws(c);
			if (c->p >= c->end || *c->p != '"' || read_addr(c, &a))
				break;
			if (push_ref(sc, n++, a))
				return HD_ENOMEM;
			skip_ws(c);
			if (c->p < c->end && *c->p == ',')
				c->p++;
		}
		rec->refs = sc->refs;
		rec->nrefs = n;
		if (n)
			rec->has |= HD_HAS_REFERENCES;
	}
	if (rec->root.ptr && rec->type_name.len == 4 &&
	    memcmp(rec->type_name.ptr, "ROOT", 4) == 0) {
		rec->kind = HD_REC_ROOT;
		return 0;
	}
	if ((rec->has & HD_HAS_ADDRESS) && rec->type_name.ptr) {
		rec->kind = rec->type_name.len == 5 &&
					    memcmp(rec->type_name.ptr, "SHAPE", 5) == 0 ?
				    HD_REC_SHAPE :
				    HD_REC_OBJECT;
		return 0;
	}
	return -1;
}

/* ---- the line ---- */

static int classify(struct cur *c, hd_record *rec)
{
	hd_str t = rec->type_name;

	if (!t.ptr)
		return fail(c, c->start, "record has no type");
	if (t.len == 4 && memcmp(t.ptr, "ROOT", 4) == 0) {
		rec->kind = HD_REC_ROOT;
		if (!rec->root.ptr)
			return fail(c, c->start, "ROOT record has no root name");
		return HD__SCAN_OK;
	}
	if (t.len == 5 && memcmp(t.ptr, "SHAPE", 5) == 0) {
		rec->kind = HD_REC_SHAPE;
		return HD__SCAN_OK;
	}
	if (t.len == 5 && (memcmp(t.ptr, "STACK", 5) == 0 ||
			   memcmp(t.ptr, "FRAME", 5) == 0)) {
		rec->kind = t.ptr[0] == 'S' ? HD_REC_STACK : HD_REC_FRAME;
		if (!(rec->has & HD_HAS_SHAPE_ID) || !rec->shape_id)
			return fail(c, c->start, "STACK or FRAME record without an id");
		if (rec->kind == HD_REC_FRAME && rec->nrefs)
			return fail(c, c->start, "FRAME record with references");
		return HD__SCAN_OK;
	}
	/* e.g. {"type":"SYMBOL", "value":"x"} of ObjectSpace.dump(:x), or
	 * another tool's {"type":"METADATA"}: nothing of the heap graph */
	if (!(rec->has & HD_HAS_ADDRESS))
		return fail(c, c->start, "record has no address");
	rec->kind = HD_REC_OBJECT;
	return HD__SCAN_OK;
}

/*
 * After a member: the next key (returns 0, c->p after its colon, *id
 * its id or -1 when not known yet), or the record's closing '}'
 * (returns 1, c->p after it), or an error.
 */
static inline int after_member(struct cur *c, hd_record *rec,
			       const char **k, size_t *kl, int *id)
{
	int rc;

	*id = -1;
	/* the dumper's own separator, ", ", first */
	if (HD_LIKELY(c->end - c->p > 2 && c->p[0] == ',' && c->p[1] == ' ' &&
		      c->p[2] == '"')) {
		c->p += 2;
		if (fast_key(c, k, kl, id) && (rc = read_key(c, k, kl)))
			return rc;
		return 0;
	}
	skip_ws(c);
	if (c->p < c->end && *c->p == ',') {
		c->p++;
		skip_ws(c);
		if (fast_key(c, k, kl, id) && (rc = read_key(c, k, kl)))
			return rc;
		return 0;
	}
	if (c->p < c->end && *c->p == '}') {
		c->sc->obj_close = (size_t)(c->p - c->start);
		rec->obj_close = c->sc->obj_close;
		c->p++;
		return 1;
	}
	if (c->p >= c->end)
		c->sc->need_more = 1;
	return fail(c, c->p, "expected ',' or '}'");
}

/* The members of a memprof record, from the first key (k, kl) to the
 * closing '}'; *nmem counts the references found. */
static int memprof_members(struct cur *c, hd_record *rec, const char *k,
			   size_t kl, size_t *nmem)
{
	int rc, id;

	for (;;) {
		if ((rc = memprof_member(c, rec, k, kl, nmem)))
			return rc;
		if ((rc = after_member(c, rec, &k, &kl, &id)))
			return rc == 1 ? 0 : rc;
	}
}

/* The members of a dump_all record, from the first key (k, its id) to
 * the closing '}'. */
static int dump_members(struct cur *c, hd_record *rec, const char *k,
			int id)
{
	unsigned char (*next)[HD__SCAN_KEYS] = c->sc->next_key;
	unsigned char *row = next[rec->type];
	size_t kl;
	int rc;

	for (;;) {
		unsigned char *guess;

		if ((rc = member(c, rec, k, id, row)))
			return rc;
		/* the key that followed this one in the last record of this
		 * type: one compare when it comes again */
		guess = &row[id];
		/* the row of the record's type, once "type" is read (only
		 * member() of K_TYPE sets rec->type), for the keys after the
		 * next: the one after "type" is guessed from the row before
		 * (nearly always "class"), without waiting for the type */
		if (HD_UNLIKELY(id == K_TYPE))
			row = next[rec->type];
		if ((id = next_member(c, guess, &k)))
			continue;
		if ((rc = after_member(c, rec, &k, &kl, &id)))
			return rc == 1 ? 0 : rc;
		if (id < 0)
			id = key_id(k, kl);
		*guess = (unsigned char)id;
	}
}

static int scan_object(struct cur *c, hd_record *rec)
{
	int rc, memprof, id = -1;
	size_t nmem = 0;
	const char *k;
	size_t kl;

	c->p++; /* '{' */
	skip_ws(c);
	if (c->p < c->end && *c->p == '}') {
		c->p++;
		return fail(c, c->start, "empty object");
	}
	if (fast_key(c, &k, &kl, &id) && (rc = read_key(c, &k, &kl)))
		return rc;
	memprof = KEY("_id");
	if (HD_UNLIKELY(memprof))
		rc = memprof_members(c, rec, k, kl, &nmem);
	else
		rc = dump_members(c, rec, k, id >= 0 ? id : key_id(k, kl));
	if (rc)
		return rc;
	skip_ws(c);
	if (c->p < c->end && *c->p != ',')
		return fail(c, c->p, "text after the record");
	if ((rec->has & HD_HAS_REF_NAMES) && c->sc->nnames != rec->nrefs &&
	    names_damage(c, rec, c->start + rec->names_open,
			 "ref_names and references differ in length"))
		return HD__SCAN_BAD;
	if (memprof) {
		rec->origin |= HD_O_MEMPROF;
		rec->refs = c->sc->refs;
		rec->nrefs = nmem;
		if (nmem)
			rec->has |= HD_HAS_REFERENCES;
		/* its roots and lsof/ps records have no address */
		memprof_kind(rec);
		return rec->kind ? HD__SCAN_OK : classify(c, rec);
	}
	return classify(c, rec);
}

/*
 * Zeroes the record with plain 16-byte stores: memset of the whole
 * record compiles to `rep stos`, whose start-up cost per line was the
 * scanner's hottest instruction.
 */
typedef unsigned char hd__v16 __attribute__((vector_size(16), may_alias,
					    aligned(1)));

static inline void clear_record(hd_record *rec)
{
	unsigned char *p = (unsigned char *)rec;
	const hd__v16 z = { 0 };
	size_t i;

#if defined(__clang__)
#pragma unroll
#elif defined(__GNUC__)
#pragma GCC unroll 32
#endif
	for (i = 0; i + 16 <= sizeof(*rec); i += 16) {
		*(hd__v16 *)(void *)(p + i) = z;
		/* opaque, so that the loop is not made a memset again */
		__asm__("" : "+r"(p));
	}
	if (sizeof(*rec) % 16)
		memset(p + sizeof(*rec) / 16 * 16, 0, sizeof(*rec) % 16);
}

int hd__scan_line(struct hd__scan *sc, const char *line, size_t len,
		  hd_record *rec)
{
	struct cur c;
	int rc;

	cur_init(&c, sc, line, len, hd__simd_now() == HD__SIMD_AVX2);
	sc->repaired = 0;
	sc->need_more = 0;
	sc->err_msg = NULL;
	sc->err_col = 0;
	sc->class_at = sc->class_end = sc->refs_close = sc->obj_close = 0;
	clear_record(rec);
	while (c.end > c.p && (c.end[-1] == '\r' || c.end[-1] == ' ' ||
			       c.end[-1] == '\t'))
		c.end--;
	skip_ws(&c);
	/* heap_dump frames its records as one JSON array, a line each */
	if (c.p < c.end && (*c.p == '[' || *c.p == ',')) {
		c.p++;
		skip_ws(&c);
	}
	if (c.p == c.end || (c.end - c.p == 1 && *c.p == ']'))
		return HD__SCAN_SKIP;
	if (*c.p != '{')
		return fail(&c, c.p, "not a JSON object");
	rc = scan_object(&c, rec);
	if (rc == HD__SCAN_OK && sc->repaired)
		rec->origin |= HD_O_REPAIRED;
	return rc;
}

int hd__scan_salvage(struct hd__scan *sc, const char *line, size_t len,
		     hd_record *rec)
{
	struct cur c;

	cur_init(&c, sc, line, len, 0);
	if (salvage(&c, rec))
		return HD__SCAN_BAD;
	rec->origin |= HD_O_REPAIRED;
	return HD__SCAN_OK;
}

void hd__scan_free(struct hd__scan *sc)
{
	hd__free(sc->refs, sc->refs_cap * sizeof(*sc->refs));
	sc->refs = NULL;
	sc->refs_cap = 0;
	hd__free(sc->names, sc->names_cap * sizeof(*sc->names));
	sc->names = NULL;
	sc->names_cap = 0;
}
