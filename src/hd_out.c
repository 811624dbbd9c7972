/*
 * hd_out.c - the dump's output: one malloc'ed buffer flushed with write(2)
 * or zlib, number formatting without printf, and JSON string escaping.
 * Nothing here touches Ruby objects: it runs inside the heap walk.
 */
#include "hd_ext.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

#define HD_OUT_CAP (256 * 1024)

int hdx_out_open(struct hdx_out *o, int fd, int gzip)
{
	memset(o, 0, sizeof(*o));
	o->fd = fd;
	o->cap = HD_OUT_CAP;
	if (!(o->buf = malloc(o->cap)))
		return ENOMEM;
	if (gzip) {
		/* gzdopen takes the fd: hdx_out_close closes it via gzclose */
		if (!(o->gz = gzdopen(fd, "wb1"))) {
			free(o->buf);
			o->buf = NULL;
			return errno ? errno : ENOMEM;
		}
		gzbuffer(o->gz, 128 * 1024);
	}
	return 0;
}

static void write_all(struct hdx_out *o, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(o->fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			o->err = w < 0 ? errno : EIO;
			return;
		}
		p += w;
		n -= (size_t)w;
	}
}

void hdx_out_flush(struct hdx_out *o)
{
	if (o->len && !o->err) {
		if (o->gz) {
			if (gzwrite(o->gz, o->buf, (unsigned)o->len) !=
			    (int)o->len)
				o->err = errno ? errno : EIO;
		} else {
			write_all(o, o->buf, o->len);
		}
	}
	o->bytes += o->len;
	o->len = 0;
}

int hdx_out_close(struct hdx_out *o)
{
	int err;

	hdx_out_flush(o);
	err = o->err;
	if (o->gz) {
		if (gzclose(o->gz) != Z_OK && !err)
			err = EIO;
	} else if (o->fd >= 0) {
		if (close(o->fd) != 0 && !err)
			err = errno;
	}
	o->gz = NULL;
	o->fd = -1;
	free(o->buf);
	o->buf = NULL;
	return err;
}

void hdx_put_cstr(struct hdx_out *o, const char *s)
{
	hdx_put(o, s, strlen(s));
}

void hdx_put_u64(struct hdx_out *o, uint64_t v)
{
	char b[24];
	int i = sizeof(b);

	do {
		b[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	hdx_put(o, b + i, sizeof(b) - (size_t)i);
}

void hdx_put_i64(struct hdx_out *o, int64_t v)
{
	if (v < 0) {
		HD_PUTS(o, "-");
		hdx_put_u64(o, (uint64_t)0 - (uint64_t)v);
	} else {
		hdx_put_u64(o, (uint64_t)v);
	}
}

void hdx_put_addr(struct hdx_out *o, VALUE v)
{
	static const char hex[] = "0123456789abcdef";
	uint64_t x = (uint64_t)v;
	char *p;
	int digits = (64 - __builtin_clzll(x | 1) + 3) / 4, i;

	if (o->len + 24 > o->cap)
		hdx_out_flush(o);
	p = o->buf + o->len;
	p[0] = '"';
	p[1] = '0';
	p[2] = 'x';
	for (i = digits; i > 0; i--) {
		p[2 + i] = hex[x & 15];
		x >>= 4;
	}
	p[3 + digits] = '"';
	o->len += (size_t)digits + 4;
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	size_t len, i;
	unsigned min;
	uint32_t cp;

	if (c >= 0xc2 && c <= 0xdf) {
		len = 2, min = 0x80, cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3, min = 0x800, cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4, min = 0x10000, cp = c & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

static void put_u00(struct hdx_out *o, unsigned char c)
{
	static const char hex[] = "0123456789abcdef";
	char e[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };

	hdx_put(o, e, sizeof(e));
}

static void put_escape(struct hdx_out *o, unsigned char c)
{
	switch (c) {
	case '"': HD_PUTS(o, "\\\""); break;
	case '\\': HD_PUTS(o, "\\\\"); break;
	case '\b': HD_PUTS(o, "\\b"); break;
	case '\t': HD_PUTS(o, "\\t"); break;
	case '\f': HD_PUTS(o, "\\f"); break;
	case '\n': HD_PUTS(o, "\\n"); break;
	case '\r': HD_PUTS(o, "\\r"); break;
	default: put_u00(o, c); break;
	}
}

void hdx_put_json(struct hdx_out *o, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, run = 0;

	HD_PUTS(o, "\"");
	while (i < n) {
		unsigned char c = s[i];
		size_t k;

		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
			i++;
			continue;
		}
		if (c >= 0x80 && (k = utf8_len(s + i, n - i)) > 0) {
			i += k;
			continue;
		}
		hdx_put(o, str + run, i - run);
		put_escape(o, c);
		run = ++i;
	}
	hdx_put(o, str + run, i - run);
	HD_PUTS(o, "\"");
}
