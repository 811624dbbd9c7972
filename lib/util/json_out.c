/*
 * json_out.c - JSON text into a caller's buffer: the escapes of JSON
 * strings (valid escapes kept, everything else escaped) and the
 * growable line buffer (json_out.h).
 */
#include "json_out.h"

static void put_u00(struct hd__sink *o, unsigned char ch)
{
	static const char hex[] = "0123456789abcdef";
	char e[6] = { '\\', 'u', '0', '0', 0, 0 };

	e[4] = hex[ch >> 4];
	e[5] = hex[ch & 15];
	hd__put(o, e, 6);
}

static int hex4(const char *s, size_t left, unsigned *cp)
{
	unsigned v = 0;
	int i;

	if (left < 4)
		return -1;
	for (i = 0; i < 4; i++) {
		char ch = s[i];

		v <<= 4;
		if (ch >= '0' && ch <= '9')
			v |= (unsigned)(ch - '0');
		else if ((ch | 0x20) >= 'a' && (ch | 0x20) <= 'f')
			v |= (unsigned)((ch | 0x20) - 'a' + 10);
		else
			return -1;
	}
	*cp = v;
	return 0;
}

/*
 * The length of a valid escape at s[0] == '\\', or 0. \u escapes must be
 * BMP characters or whole surrogate pairs: jq rejects lone surrogates.
 */
static size_t valid_escape(const char *s, size_t n)
{
	unsigned cp, lo;

	if (n < 2)
		return 0;
	switch (s[1]) {
	case '"': case '\\': case '/':
	case 'b': case 'f': case 'n': case 'r': case 't':
		return 2;
	case 'u':
		if (hex4(s + 2, n - 2, &cp))
			return 0;
		if (cp < 0xd800 || cp > 0xdfff)
			return 6;
		if (cp < 0xdc00 && n >= 12 && s[6] == '\\' && s[7] == 'u' &&
		    !hex4(s + 8, n - 8, &lo) && lo >= 0xdc00 && lo <= 0xdfff)
			return 12;
		return 0;
	default:
		return 0;
	}
}

/* The JSON escape of one byte that cannot stand raw in a string. */
static void put_escape(struct hd__sink *o, unsigned char ch)
{
	switch (ch) {
	case '"': hd__put(o, "\\\"", 2); break;
	case '\\': hd__put(o, "\\\\", 2); break;
	case '\b': hd__put(o, "\\b", 2); break;
	case '\f': hd__put(o, "\\f", 2); break;
	case '\n': hd__put(o, "\\n", 2); break;
	case '\r': hd__put(o, "\\r", 2); break;
	case '\t': hd__put(o, "\\t", 2); break;
	default: put_u00(o, ch); break;
	}
}

/*
 * Writes s as JSON string content, without the quotes: control
 * characters, quotes and backslashes escaped; with keep_escapes, a valid
 * escape already in s is copied as it stands.
 */
static void put_escaped(struct hd__sink *o, const char *s, size_t n,
			int keep_escapes)
{
	size_t i = 0, run, e;

	while (i < n) {
		unsigned char ch;

		for (run = i; i < n; i++) {
			ch = (unsigned char)s[i];
			if (ch < 0x20 || ch == '"' || ch == '\\')
				break;
		}
		hd__put(o, s + run, i - run);
		if (i == n)
			break;
		ch = (unsigned char)s[i];
		if (keep_escapes && ch == '\\' &&
		    (e = valid_escape(s + i, n - i))) {
			hd__put(o, s + i, e);
			i += e;
			continue;
		}
		i++;
		put_escape(o, ch);
	}
}

/*
 * Writes the bytes between a string's quotes as valid JSON string
 * content: valid escapes are kept, a raw quote, the backslash of an
 * invalid escape and control characters are escaped.
 */
void hd__put_content(struct hd__sink *o, const char *s, size_t n)
{
	put_escaped(o, s, n, 1);
}

/* Writes raw bytes (a class name) as a JSON string, quotes included. */
void hd__put_json_str(struct hd__sink *o, const char *s, size_t n)
{
	hd__put_ch(o, '"');
	put_escaped(o, s, n, 0);
	hd__put_ch(o, '"');
}

/* Formats into a sink over the buffer's free space, growing and retrying
 * when it did not fit. */
int hd__buf_sink(struct hd__buf *b, struct hd__sink *o, size_t hint)
{
	if (hd__buf_reserve(b, b->len + hint))
		return HD_ENOMEM;
	o->p = b->p + b->len;
	o->size = b->cap - b->len;
	o->len = 0;
	return 0;
}
