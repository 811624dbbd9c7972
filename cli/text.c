/*
 * text.c - what the commands print: sizes and counts for people, JSON
 * strings, the text escaper every name from a dump goes through
 * (cli_text_string, cli_text), sites, nodes' class names and nodes as
 * JSON.
 *
 * Every name from a dump or a store that a text or TSV output prints
 * goes through cli_text_string/cli_text or the helpers built on them
 * (cli_node_class, cli_class_name, cli_site_text, cli_hop_text,
 * cli_hops_text, cli_root_text, which leaks and dominators share; a
 * path's runs folded by the library's hd_path_fold in cli_hops_text,
 * cli_path_lines, cli_text_path and cli_fold_text; the path rule's note,
 * cli_path_note/cli_path_rule_json), and so do the paths and arguments
 * the user typed that a message echoes; JSON through cli_json_string.
 * Controls, invalid bytes and the bidi controls (U+202A-U+202E,
 * U+2066-U+2069) are written escaped. A memsize sum that stopped at
 * 2^64-1 ends its text line with cli_saturated(). Text output writes
 * counts with thousands separators (cli_commas), JSON and TSV plain
 * numbers.
 */
#define _GNU_SOURCE /* memmem */
#include "common.h"

#include <string.h>
#include <strings.h>

const char *cli_human_bytes(uint64_t n, char *buf, size_t size)
{
	hd_bytes_text(buf, size, n);
	return buf;
}

const char *cli_commas(uint64_t n, char *buf, size_t size)
{
	char tmp[32];
	int len = snprintf(tmp, sizeof(tmp), "%llu", (unsigned long long)n);
	size_t o = 0;
	int i;

	for (i = 0; i < len && o + 2 < size; i++) {
		if (i && (len - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = tmp[i];
	}
	buf[o] = '\0';
	return buf;
}

void cli_json_string(FILE *f, const char *s, size_t n)
{
	hd_json_write_string(f, s, n);
}

/* Writes a backslash, tag and the low digits hex digits of v to out;
 * returns their count. No stdio: cli_text serves a signal handler. */
static size_t esc_hex(char *out, char tag, unsigned v, int digits)
{
	static const char hex[] = "0123456789abcdef";
	int k;

	out[0] = '\\';
	out[1] = tag;
	for (k = 0; k < digits; k++)
		out[2 + k] = hex[(v >> (4 * (digits - 1 - k))) & 15];
	return (size_t)digits + 2;
}

/*
 * The length of the escape of the character at s[0..n) (n > 0) into out
 * (at least 7 bytes), and in *used how many input bytes it stands for.
 */
static size_t text_char(const unsigned char *s, size_t n, char *out,
			size_t *used)
{
	unsigned c = s[0];
	size_t len, i;
	unsigned lo = 0x80, hi = 0xbf;

	*used = 1;
	if (c < 0x80) {
		switch (c) {
		case '\t': memcpy(out, "\\t", 2); return 2;
		case '\n': memcpy(out, "\\n", 2); return 2;
		case '\r': memcpy(out, "\\r", 2); return 2;
		default:
			if (c < 0x20 || c == 0x7f)
				return esc_hex(out, 'u', c, 4);
			out[0] = (char)c;
			return 1;
		}
	}
	/* UTF-8 (RFC 3629): no overlong forms, surrogates or > U+10FFFF */
	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4;
	else
		len = 0;
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (len && n >= len && s[1] >= lo && s[1] <= hi) {
		for (i = 2; i < len && s[i] >= 0x80 && s[i] <= 0xbf; i++)
			;
		if (i == len) {
			*used = len;
			if (c == 0xc2 && s[1] <= 0x9f) /* C1 control */
				return esc_hex(out, 'u', s[1], 4);
			/* bidi embeddings, overrides (U+202A-U+202E) and
			 * isolates (U+2066-U+2069) reorder what a terminal
			 * shows around them */
			if (c == 0xe2 &&
			    ((s[1] == 0x80 && s[2] >= 0xaa && s[2] <= 0xae) ||
			     (s[1] == 0x81 && s[2] >= 0xa6 && s[2] <= 0xa9)))
				return esc_hex(out, 'u',
					       0x2000u | (s[1] & 0x3fu) << 6 |
						       (s[2] & 0x3fu),
					       4);
			memcpy(out, s, len);
			return len;
		}
	}
	return esc_hex(out, 'x', c, 2);
}

void cli_text_string(FILE *f, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, used, len;
	char e[8];

	while (i < n) {
		size_t j = i;

		/* a run of printable ASCII at once */
		while (j < n && p[j] >= 0x20 && p[j] < 0x7f)
			j++;
		if (j > i)
			fwrite(p + i, 1, j - i, f);
		if (j == n)
			break;
		len = text_char(p + j, n - j, e, &used);
		fwrite(e, 1, len, f);
		i = j + used;
	}
}

const char *cli_text(char *buf, size_t size, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, o = 0, used, len;
	char e[8];

	if (!size)
		return buf;
	while (i < n) {
		len = text_char(p + i, n - i, e, &used);
		if (o + len >= size)
			break;
		memcpy(buf + o, e, len);
		o += len;
		i += used;
	}
	buf[o] = '\0';
	return buf;
}

void cli_site_text(FILE *f, const hd_site *site, int with_method)
{
	if (site->file)
		cli_text_string(f, site->file, site->file_len);
	fprintf(f, ":%llu", (unsigned long long)site->line);
	if (with_method && site->method) {
		fputs(" in ", f);
		cli_text_string(f, site->method, site->method_len);
	}
}

/* A class or module by its own name, anything else by its class's: the
 * library's one naming rule (hd_store_node_name), as GML and DOT use. */
void cli_node_class_raw(const hd_store *s, hd_node_id id, char *buf,
			size_t size)
{
	hd_store_node_name(buf, size, s, id);
}

/* The same name, control bytes escaped for people (cli_text). */
void cli_node_class(const hd_store *s, hd_node_id id, char *buf,
		    size_t size)
{
	char raw[512];
	size_t len = hd_store_node_name(raw, sizeof(raw), s, id);

	cli_text(buf, size, raw, len < sizeof(raw) ? len : sizeof(raw) - 1);
}

void cli_class_name(const hd_store *s, hd_node_id id, char *buf,
		    size_t size)
{
	char raw[512];
	size_t len = hd_store_class_name(raw, sizeof(raw), s, id);

	cli_text(buf, size, raw, len < sizeof(raw) ? len : sizeof(raw) - 1);
}

void cli_node_json(FILE *f, const hd_store *s, hd_node_id v)
{
	cli_hop_json(f, s, v, HD_NODE_NONE);
}

void cli_hop_json(FILE *f, const hd_store *s, hd_node_id v, hd_node_id next)
{
	fputc('{', f);
	cli_hop_json_fields(f, s, v, next);
	fputc('}', f);
}

void cli_node_json_fields(FILE *f, const hd_store *s, hd_node_id v)
{
	cli_hop_json_fields(f, s, v, HD_NODE_NONE);
}

void cli_hop_json_fields(FILE *f, const hd_store *s, hd_node_id v,
			 hd_node_id next)
{
	hd_node_json_fields(f, s, v, next);
}

void cli_name_json(FILE *f, const char *name, size_t len, unsigned flags)
{
	if (!name)
		return;
	fputs(",\"name\":", f);
	cli_json_string(f, name, len);
	if (flags & HD_NAME_INFERRED)
		fputs(",\"inferred\":true", f);
}

void cli_hop_text(FILE *f, const hd_store *s, hd_node_id from,
		  hd_node_id to)
{
	char buf[1024];
	size_t n = hd_store_hop_text(buf, sizeof(buf), s, from, to);

	cli_text_string(f, buf, n < sizeof(buf) ? n : sizeof(buf) - 1);
}

/* The hops [i, i + n) of nodes, each followed by its arrow: "A -> B ->". */
static void hops_arrows(FILE *f, const hd_store *s, const hd_node_id *nodes,
			size_t i, size_t n)
{
	for (; n--; i++) {
		cli_hop_text(f, s, nodes[i], nodes[i + 1]);
		fputs(n ? " -> " : " ->", f);
	}
}

void cli_hops_text(FILE *f, const hd_store *s, const hd_node_id *nodes,
		   size_t n)
{
	hd_path_runs runs = { 0 };
	size_t i = 0, r = 0;

	if (hd_path_fold(&runs, s, nodes, n, NULL, NULL))
		runs.n = 0; /* out of memory: every hop */
	while (i < n) {
		if (r < runs.n && runs.runs[r].start == i) {
			const hd_path_run *u = &runs.runs[r++];

			fputc('(', f);
			hops_arrows(f, s, nodes, i, u->period);
			fprintf(f, ") x%zu ", u->count);
			i += u->period * u->count;
			continue;
		}
		cli_hop_text(f, s, nodes[i], i + 1 < n ? nodes[i + 1] :
							 HD_NODE_NONE);
		if (++i < n)
			fputs(" -> ", f);
	}
	hd_path_runs_free(&runs);
}

void cli_fold_text(FILE *f, const char *text, size_t len,
		   void (*put)(FILE *, const char *, size_t))
{
	hd_path_runs runs = { 0 };
	size_t i = 0, r = 0, k, a = 0, part;
	const char *p;
	char c[32];

	if (hd_path_text_fold(&runs, text, len, NULL, NULL))
		runs.n = 0;
	for (;;) {
		p = memmem(text + a, len - a, " -> ", 4);
		part = p ? (size_t)(p - (text + a)) : len - a;
		if (r < runs.n && runs.runs[r].start == i)
			put(f, "(", 1);
		put(f, text + a, part);
		if (!p)
			break;
		a = (size_t)(p - text) + 4;
		i++;
		if (r < runs.n && i == runs.runs[r].start + runs.runs[r].period) {
			/* the pattern written: its repetitions skipped (each
			 * part of a run has an arrow after it) */
			const hd_path_run *u = &runs.runs[r++];

			snprintf(c, sizeof(c), " ->) x%zu ", u->count);
			put(f, c, strlen(c));
			for (k = 0; k < u->period * (u->count - 1); k++, i++)
				a = (size_t)((const char *)memmem(text + a,
								  len - a,
								  " -> ", 4) -
					     text) + 4;
			continue;
		}
		put(f, " -> ", 4);
	}
	hd_path_runs_free(&runs);
}

void cli_text_path(FILE *f, const char *text, size_t len)
{
	cli_fold_text(f, text, len, cli_text_string);
}

void cli_path_lines(FILE *f, const hd_store *s, const hd_node_id *nodes,
		    size_t n, const char *indent,
		    void (*line)(const hd_store *, hd_node_id, size_t, void *),
		    void *payload)
{
	hd_path_runs runs = { 0 };
	size_t i = 0, r = 0, k, rest;
	uint64_t mem;
	char a[32], b[32];

	if (hd_path_fold(&runs, s, nodes, n, NULL, NULL))
		runs.n = 0;
	while (i < n) {
		line(s, nodes[i], i, payload);
		if (r < runs.n && i + 1 ==
		    runs.runs[r].start + runs.runs[r].period) {
			/* the first repetition printed: the others in a line */
			const hd_path_run *u = &runs.runs[r++];

			i = u->start + u->period;
			rest = u->period * (u->count - 1);
			for (mem = 0, k = i; k < i + rest; k++)
				mem += hd_store_memsize(s, nodes[k]);
			fprintf(f, "%s... (", indent);
			hops_arrows(f, s, nodes, u->start, u->period);
			fprintf(f, ") x%zu: %s more objects, memsize %s\n",
				u->count, cli_commas(rest, a, sizeof(a)),
				cli_commas(mem, b, sizeof(b)));
			i += rest;
			continue;
		}
		i++;
	}
	hd_path_runs_free(&runs);
}

int cli_hops_named(const hd_store *s, uint32_t root, const hd_node_id *nodes,
		   size_t n)
{
	size_t i;

	if (!n || !hd_store_has_ref_names(s))
		return 0;
	if (root != UINT32_MAX &&
	    hd_store_root_ref_name(s, root, nodes[0], NULL))
		return 1;
	for (i = 0; i + 1 < n; i++)
		if (hd_store_ref_name(s, nodes[i], nodes[i + 1], NULL, NULL))
			return 1;
	return 0;
}

void cli_root_text(FILE *f, const hd_store *s, uint32_t root,
		   hd_node_id first)
{
	const char *name = hd_store_root_name(s, root);
	size_t n;

	cli_text_string(f, name, strlen(name));
	if (first != HD_NODE_NONE &&
	    (name = hd_store_root_ref_name(s, root, first, &n))) {
		fputc(' ', f);
		cli_text_string(f, name, n);
	}
}

int cli_type_adds(const hd_store *s, hd_node_id v, const char *cls)
{
	int t = hd_store_type(s, v);
	const char *tn = hd_type_name(t);

	if (t == HD_T_OBJECT || cls[0] == '(' || strncmp(cls, "IMEMO/", 6) == 0 ||
	    strncmp(cls, "DATA/", 5) == 0)
		return 0;
	return strcasecmp(cls, tn) != 0;
}

void cli_path_note(FILE *f, const hd_root_path *p, const char *indent)
{
	char buf[256];

	if (!hd_path_note(buf, sizeof(buf), p))
		return;
	fprintf(f, "%s(%s; man 1 heapdump-path)\n", indent, buf);
}

void cli_path_rule_json(FILE *f, const hd_root_path *p)
{
	unsigned bit, k = 0;

	if (!p->passed_over)
		return;
	fputs(",\"passed_over\":[", f);
	for (bit = 1; bit <= HD_PATH_VIA_STACK; bit <<= 1)
		if (p->passed_over & bit)
			fprintf(f, "%s\"%s\"", k++ ? "," : "",
				hd_path_via_name(bit));
	fputc(']', f);
}
