/*
 * preload/json.c - a buffered writer of NDJSON to a file descriptor that
 * allocates nothing (the tracker writes snapshots from inside a process
 * whose allocator it wraps, and from a forked child). Strings are
 * escaped: control bytes and invalid UTF-8 bytes as \u00XX.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "hdm.h"

void hdm_out_init(struct hdm_out *o, int fd)
{
	o->fd = fd;
	o->err = 0;
	o->n = 0;
}

int hdm_out_flush(struct hdm_out *o)
{
	size_t off = 0;

	while (off < o->n && !o->err) {
		ssize_t w = write(o->fd, o->buf + off, o->n - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			o->err = w < 0 ? errno : EIO;
		else
			off += (size_t)w;
	}
	o->n = 0;
	return o->err ? -1 : 0;
}

void hdm_out_raw(struct hdm_out *o, const char *s, size_t n)
{
	while (n) {
		size_t k = sizeof o->buf - o->n;

		if (k == 0) {
			hdm_out_flush(o);
			continue;
		}
		if (k > n)
			k = n;
		memcpy(o->buf + o->n, s, k);
		o->n += k;
		s += k;
		n -= k;
	}
}

void hdm_out_str(struct hdm_out *o, const char *s)
{
	hdm_out_raw(o, s, strlen(s));
}

/* the length of the valid UTF-8 sequence at s (n bytes left), 0 if invalid */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t len, i;
	unsigned cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return len;
}

void hdm_out_json(struct hdm_out *o, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = strlen(str), i = 0;
	char esc[8];

	hdm_out_raw(o, "\"", 1);
	while (i < n) {
		size_t len = utf8_len(s + i, n - i);

		if (len == 0 || s[i] < 0x20 || s[i] == 0x7f) {
			snprintf(esc, sizeof esc, "\\u%04x", s[i]);
			hdm_out_raw(o, esc, 6);
			i++;
		} else if (s[i] == '"' || s[i] == '\\') {
			esc[0] = '\\';
			esc[1] = (char)s[i];
			hdm_out_raw(o, esc, 2);
			i++;
		} else {
			hdm_out_raw(o, (const char *)s + i, len);
			i += len;
		}
	}
	hdm_out_raw(o, "\"", 1);
}

void hdm_out_u64(struct hdm_out *o, uint64_t v)
{
	char b[24];
	int k = snprintf(b, sizeof b, "%llu", (unsigned long long)v);

	hdm_out_raw(o, b, (size_t)k);
}

void hdm_out_i64(struct hdm_out *o, int64_t v)
{
	char b[24];
	int k = snprintf(b, sizeof b, "%lld", (long long)v);

	hdm_out_raw(o, b, (size_t)k);
}

void hdm_out_double(struct hdm_out *o, double v, int decimals)
{
	char b[64];
	int k = snprintf(b, sizeof b, "%.*f", decimals, v);

	hdm_out_raw(o, b, (size_t)k);
}
