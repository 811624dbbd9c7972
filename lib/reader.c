/*
 * reader.c - the streaming, tolerant dump reader.
 *
 * A plain regular file is read where it is mapped (filemap.c) if the page
 * cache holds it so that this pays, the pages behind the reader dropped
 * as it goes; other input (pipes, standard
 * input, gzip) is read in large chunks into one buffer. Either way memory
 * stays bounded by the longest line, not the dump. The reader splits
 * lines, hands each to the scanner and deals with the failures: a record
 * split by a raw newline is joined with the lines that continue it; other
 * invalid lines are salvaged or skipped and reported through the problem
 * callback, or, in strict mode, fail the read.
 */
#include "hd_int.h"
#include "gz.h"
#include "store_format.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#define CHUNK ((size_t)256 << 10)   /* read at a time: in the L2 cache */
#define MAX_LINE ((size_t)1 << 32)  /* 4 GiB */
#define MAX_JOIN 8                   /* physical lines joined into one */
/* Not a heap dump: this many skipped lines before any record, or at the
 * end more skipped lines than records (see hd_reader_next). */
#define NOT_DUMP_LINES 32
#define CITE 40                      /* bytes of the cited line */
#define RANGE_LINE ((size_t)1 << 30) /* longest line of a range */
#define RANGE_CHUNK ((size_t)1 << 18)  /* a range's buffer: in the L2 cache */
#define CUT_WINDOW ((size_t)16 << 10)  /* read to find a cut */

struct hd_reader {
	int fd;
	int own_fd;
	int eof;            /* no more input to read into buf */
	int failed;         /* a sticky error code */
	const char *name;
	/* buffer: buf[0..len) holds input bytes from offset base */
	char *buf;
	size_t cap, len;
	size_t pos;         /* start of the next line in buf */
	size_t scanned;     /* buf[pos..scanned) has no newline */
	int mem;            /* buf holds the whole input: no refill */
	int avx2;           /* lines' ends found by simd.c's AVX2 loop */
	int map_own;        /* buf is our mapping of the file (cap bytes) */
	/* a mapped file: the pages before dropped go once pos is
	 * drop_every past it (SIZE_MAX: never, for any other input) */
	size_t dropped, drop_every;
	/* a line from pos this long or longer fails the read (range
	 * readers, mapped files: the limit a buffer has elsewhere) */
	size_t line_max;
	uint64_t base;
	/* gzip, inflated on a thread of its own (gz.c) */
	hd__gz *gz;
	int zdone;          /* the end of the gzip stream was seen */
	int zerr;           /* a gzip error held back until its data is read */
	int gz_cut;         /* 1: stream truncated, not yet reported; 2: done */
	hd_error zerr_info;
	hd_read_options opts;
	hd_read_stats st;
	struct hd__scan sc;
	hd_record rec;
	hd_error saved;     /* the sticky error */
	/* problems of the lines before the first record, held back until a
	 * record shows that the input is a dump */
	hd_problem held[NOT_DUMP_LINES];
	unsigned nheld;
	/* the first skipped line, cited if the input is not a dump */
	uint64_t bad_line, bad_offset;
	char bad_text[CITE];
	size_t bad_len, bad_full;
	const char *bad_msg;
	int bad_cut;        /* it was the last line, cut short */
	/* a range of a dump file (hd__reader_open_range), read with pread:
	 * buf[0..len) holds the file's bytes from base; end is its size */
	int range;
	int after_records;
	uint64_t stop, end;
	/* a range's stop is a claim, renewed by claim() when reached: 0
	 * and a new stop past the offset, or nonzero, the range's end */
	int (*claim)(void *payload, uint64_t at, uint64_t *stop);
	void *claim_payload;
};

static int read_raw(hd_reader *r, void *dst, size_t n, size_t *got)
{
	ssize_t k;

	do
		k = read(r->fd, dst, n);
	while (k < 0 && errno == EINTR);
	if (k < 0)
		return -1;
	*got = (size_t)k;
	return 0;
}

/* A range reader's next bytes, at their place in the file, up to its
 * end (the size it had when the ranges were cut). */
static int read_at(hd_reader *r, size_t *got)
{
	uint64_t at = r->base + r->len;
	size_t n = r->cap - r->len;
	ssize_t k;

	if (at >= r->end) {
		*got = 0;
		return 0;
	}
	if (n > r->end - at)
		n = (size_t)(r->end - at);
	do
		k = pread(r->fd, r->buf + r->len, n, (off_t)at);
	while (k < 0 && errno == EINTR);
	if (k < 0)
		return -1;
	*got = (size_t)k;
	return 0;
}

/*
 * A gzip stream that stops before its end is a dump cut short, like a
 * plain dump without its last newline: lenient mode reports it and goes
 * on with what was read; strict mode fails (after the data before it).
 */
static void gz_truncated(hd_reader *r, uint64_t member_out)
{
	r->st.truncated = 1;
	if (!(r->opts.flags & HD_READ_STRICT)) {
		r->gz_cut = 1; /* reported with the cut line, or at the end */
		return;
	}
	r->zerr = hd__error(&r->zerr_info, HD_EPARSE,
			    "gzip stream is truncated after %llu bytes",
			    (unsigned long long)member_out);
}

/* A held gzip error, placed at the line being read when it surfaces. */
static int gz_error(hd_reader *r, hd_error *err)
{
	uint64_t line = r->st.lines + 1;

	return hd__error_at(err, r->zerr, line, 1, r->base + r->pos,
			    "%s:%llu:1: %s", r->name, (unsigned long long)line,
			    r->zerr_info.msg);
}

/*
 * Appends inflated bytes at buf + len, up to room bytes. A damaged or
 * truncated stream (see gz.c) is reported only after the bytes before
 * the damage have been handed out, so that no readable record is lost.
 */
static int read_gz(hd_reader *r, size_t room, size_t *got, hd_error *err)
{
	struct hd__gz_end end;

	if (r->zerr)
		return gz_error(r, err);
	hd__gz_read(r->gz, r->buf + r->len, room, got);
	if (*got || r->zdone)
		return 0;
	r->zdone = 1;
	hd__gz_end(r->gz, &end);
	if (end.sys_errno)
		return hd__error_sys(err, end.sys_errno, "cannot read '%s': %s",
				     r->name, strerror(end.sys_errno));
	if (end.truncated) {
		gz_truncated(r, end.member_out);
	} else if (end.rc) {
		r->zerr = end.rc;
		r->zerr_info = end.info;
	}
	if (r->zerr)
		return gz_error(r, err);
	return 0;
}

/* the longest line, less one byte (tests lower it) */
size_t hd__reader_max_line = MAX_LINE;

/* A line of hd__reader_max_line bytes or more, from pos: the read fails
 * (the message says the real limit's size). */
static int long_line(hd_reader *r, hd_error *err)
{
	return hd__error_at(err, HD_ELIMIT, r->st.lines + 1, 0,
			    r->base + r->pos,
			    "'%s': a line is longer than 4 GiB", r->name);
}

/* Moves the unread tail to the front and reads more; sets eof. */
static int refill(hd_reader *r, hd_error *err)
{
	size_t got = 0;
	int rc;

	if (r->mem || r->eof) {
		r->eof = 1;
		return 0;
	}
	if (r->pos) {
		memmove(r->buf, r->buf + r->pos, r->len - r->pos);
		r->base += r->pos;
		r->len -= r->pos;
		r->scanned -= r->pos;
		r->pos = 0;
	}
	if (r->len == r->cap) {
		size_t ncap = r->cap * 2;
		char *nb;

		if (r->cap >= hd__reader_max_line)
			return long_line(r, err);
		nb = hd__realloc(r->buf, r->cap, ncap);
		if (!nb)
			return hd__error(err, HD_ENOMEM,
					 "out of memory for a long line");
		r->buf = nb;
		r->cap = ncap;
	}
	if (r->gz) {
		rc = read_gz(r, r->cap - r->len, &got, err);
		if (rc)
			return rc;
	} else if (r->range) {
		if (read_at(r, &got))
			return hd__error_sys(err, errno, "cannot read '%s': %s",
					     r->name, strerror(errno));
	} else if (read_raw(r, r->buf + r->len, r->cap - r->len, &got)) {
		return hd__error_sys(err, errno, "cannot read '%s': %s",
				     r->name, strerror(errno));
	}
	if (!got)
		r->eof = 1;
	r->len += got;
	return 0;
}

/*
 * Finds the end of the line starting at from (an index into buf), reading
 * more input as needed. *nl receives the index of its newline, or len at
 * the end of input. from may move when the buffer is compacted, so it is
 * passed and returned by pointer.
 */
static int line_end(hd_reader *r, size_t *from, size_t *nl, hd_error *err)
{
	size_t off = *from - r->pos;
	size_t scan = r->scanned > *from ? r->scanned : *from;
	int rc;

	for (;;) {
		const char *q = memchr(r->buf + scan, '\n', r->len - scan);

		if (q) {
			*nl = (size_t)(q - r->buf);
			if (*nl - r->pos >= r->line_max)
				break;
			return 0;
		}
		scan = r->len;
		if (r->eof) {
			*nl = r->len;
			if (*nl - r->pos >= r->line_max)
				break;
			return 0;
		}
		r->scanned = scan;
		if (scan - r->pos >= r->line_max)
			break;
		{
			size_t before = r->pos;

			if ((rc = refill(r, err)))
				return rc;
			scan -= before - r->pos;
		}
		*from = r->pos + off;
	}
	/* a range: the streaming reader's limit, or near it: the caller
	 * reads the file again without ranges, to fail as it does */
	if (r->range)
		return hd__error(err, HD_ELIMIT, "a long line in a range");
	return long_line(r, err);
}

static uint64_t records(const hd_reader *r)
{
	return (uint64_t)r->after_records + r->st.objects + r->st.roots + r->st.shapes + r->st.others;
}

static void flush_held(hd_reader *r)
{
	unsigned i;

	for (i = 0; i < r->nheld && r->opts.problem; i++)
		r->opts.problem(&r->held[i], r->opts.payload);
	r->nheld = 0;
}

/*
 * Reports a problem. The skipped lines before the first record are held
 * back: if no record follows, the input is not a dump and one error says
 * so instead of a report per line.
 */
static void report(hd_reader *r, uint64_t line, uint64_t col,
		   uint64_t offset, int repaired, const char *msg)
{
	hd_problem p;

	p.line = line;
	p.column = col;
	p.offset = offset;
	p.repaired = repaired;
	p.msg = msg;
	if (!repaired && !records(r) && r->nheld < NOT_DUMP_LINES) {
		r->held[r->nheld++] = p;
		return;
	}
	flush_held(r);
	if (r->opts.problem)
		r->opts.problem(&p, r->opts.payload);
}

/* Keeps the first skipped line, to cite it if the input is no dump. */
static void note_skipped(hd_reader *r, uint64_t line, uint64_t offset,
			 const char *text, size_t len, const char *msg)
{
	if (r->bad_line)
		return;
	while (len && text[len - 1] == '\r')
		len--;
	r->bad_line = line;
	r->bad_offset = offset;
	r->bad_full = len;
	r->bad_len = len < CITE ? len : CITE;
	if (r->bad_len)
		memcpy(r->bad_text, text, r->bad_len);
	r->bad_msg = msg;
}

/* The cited line, escaped: printable ASCII as it is, the rest \xNN. */
static void cite(const hd_reader *r, char *out, size_t size)
{
	static const char hex[] = "0123456789abcdef";
	size_t i, n = 0;

	for (i = 0; i < r->bad_len && n + 5 < size; i++) {
		unsigned char ch = (unsigned char)r->bad_text[i];

		if (ch == '"' || ch == '\\') {
			out[n++] = '\\';
			out[n++] = (char)ch;
		} else if (ch >= 0x20 && ch < 0x7f) {
			out[n++] = (char)ch;
		} else {
			out[n++] = '\\';
			out[n++] = 'x';
			out[n++] = hex[ch >> 4];
			out[n++] = hex[ch & 15];
		}
	}
	out[n] = '\0';
}

/*
 * The input is not a heap dump. early: NOT_DUMP_LINES lines were skipped
 * before any record.
 */
static int not_dump(hd_reader *r, int early, hd_error *err)
{
	char text[CITE * 4 + 1];
	const char *more = r->bad_full > r->bad_len ? "..." : "";
	unsigned long long line = (unsigned long long)r->bad_line;

	if (!r->bad_line)
		return hd__error(err, HD_ENOTDUMP, "%s: not a heap dump (%s)",
				 r->name,
				 r->st.lines ? "only blank lines" : "empty");
	cite(r, text, sizeof(text));
	if (!r->bad_len && r->bad_msg)
		return hd__error_at(err, HD_ENOTDUMP, line, 1, r->bad_offset,
				    "%s: not a heap dump (line %llu: %s)",
				    r->name, line, r->bad_msg);
	if (early)
		return hd__error_at(err, HD_ENOTDUMP, line, 1, r->bad_offset,
				    "%s: not a heap dump (line %llu: \"%s\"%s; "
				    "no record in its first %d lines)",
				    r->name, line, text, more, NOT_DUMP_LINES);
	if (!records(r))
		return hd__error_at(err, HD_ENOTDUMP, line, 1, r->bad_offset,
				    "%s: not a heap dump (line %llu: "
				    "\"%s\"%s%s%s)",
				    r->name, line, text, more,
				    r->bad_cut ? "; " : "",
				    r->bad_cut ? r->bad_msg : "");
	return hd__error_at(err, HD_ENOTDUMP, line, 1, r->bad_offset,
			    "%s: not a heap dump (line %llu: \"%s\"%s; %llu of "
			    "%llu lines are not heap records)",
			    r->name, line, text, more,
			    (unsigned long long)r->st.skipped,
			    (unsigned long long)(r->st.skipped + records(r)));
}

/*
 * At the end of the input: no record at all (unless HD_READ_ALLOW_EMPTY
 * and no line was skipped either), or more skipped lines than records,
 * is not a heap dump.
 */
static int check_dump(hd_reader *r, hd_error *err)
{
	uint64_t n = records(r);

	if (!n && !r->st.skipped && (r->opts.flags & HD_READ_ALLOW_EMPTY))
		return 0;
	if (!n || r->st.skipped > n)
		return not_dump(r, 0, err);
	return 0;
}

/*
 * The first newline in [p, end), or NULL: memchr, inline, 32 bytes a
 * step with SSE2 where there are that many (AVX2's 64, simd.c, where
 * the CPU has it). A dump's line is a few hundred bytes, so memchr's
 * call and set-up were 7% of a read.
 */
static inline const char *newline(const char *p, const char *end)
{
#if defined(__SSE2__)
	const __m128i nl = _mm_set1_epi8('\n');

	for (; end - p >= 32; p += 32) {
		__m128i a = _mm_loadu_si128((const __m128i *)(const void *)p);
		__m128i b = _mm_loadu_si128(
			(const __m128i *)(const void *)(p + 16));
		unsigned m = (unsigned)_mm_movemask_epi8(
				     _mm_cmpeq_epi8(a, nl)) |
			     (unsigned)_mm_movemask_epi8(
				     _mm_cmpeq_epi8(b, nl)) << 16;

		if (m)
			return p + __builtin_ctz(m);
	}
#endif
	return memchr(p, '\n', (size_t)(end - p));
}

/*
 * Does a line start a record: `{"key":` with a plain identifier as key, or
 * heap_dump's `[`/`,` framing? Ruby 3.1.2's escape garbage can hold a
 * newline followed by `{"\u00ff...`, which must be joined, not taken for
 * a new record.
 */
static int starts_object(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p < end && (*p == '[' || *p == ','))
		return 1;
	if (end - p < 4 || p[0] != '{' || p[1] != '"')
		return 0;
	for (p += 2; p < end && ((*p >= 'a' && *p <= 'z') || *p == '_'); p++)
		;
	return end - p >= 2 && p[0] == '"' && p[1] == ':';
}

/*
 * Tries to complete a record cut by raw newlines by joining the following
 * lines that do not start a record. On success sets *end to the newline
 * ending the joined record and *joined to the lines added.
 */
static int try_join(hd_reader *r, size_t *start, size_t *end,
		    unsigned *joined, hd_error *err)
{
	size_t e = *end, nl;
	unsigned k;
	int rc;

	for (k = 1; k <= MAX_JOIN && e < r->len; k++) {
		size_t next = e + 1, old_pos = r->pos, shift;

		if ((rc = line_end(r, &next, &nl, err)))
			return rc;
		/* the buffer may have been compacted under us */
		shift = old_pos - r->pos;
		e -= shift;
		*start -= shift;
		*end -= shift;
		if (starts_object(r->buf + next, r->buf + nl))
			return 1;
		rc = hd__scan_line(&r->sc, r->buf + *start, nl - *start,
				   &r->rec);
		if (rc == HD__SCAN_OK) {
			*end = nl;
			*joined = k;
			return 0;
		}
		if (rc < 0)
			return rc;
		if (!r->sc.need_more || nl >= r->len)
			return 1;
		e = nl;
	}
	return 1;
}

static int strict_fail(hd_reader *r, uint64_t lineno, size_t start,
		       hd_error *err)
{
	size_t col = r->sc.err_col;
	int rc;

	rc = hd__error_at(err, HD_EPARSE, lineno, col + 1, r->base + start,
			  "%s:%llu:%llu: %s", r->name,
			  (unsigned long long)lineno,
			  (unsigned long long)col + 1,
			  r->sc.err_msg ? r->sc.err_msg : "invalid record");
	return rc;
}

/* Handles an invalid line in lenient mode: join, salvage or skip. */
static int recover(hd_reader *r, size_t *start, size_t *nl,
		   uint64_t lineno, int *got, hd_error *err)
{
	size_t col = r->sc.err_col;
	const char *msg = r->sc.err_msg ? r->sc.err_msg : "invalid record";
	unsigned joined = 0;
	int rc, cut;

	*got = 0;
	/* a record cut by the end of the input says so, whatever broke */
	cut = *nl == r->len &&
	      starts_object(r->buf + *start, r->buf + *nl);
	if (cut && r->gz_cut) {
		msg = "gzip stream is truncated: the last line is cut short";
		r->gz_cut = 2;
	} else if (cut) {
		msg = "the last line is cut short: the dump is incomplete";
	}
	if (r->sc.need_more && *nl < r->len) {
		rc = try_join(r, start, nl, &joined, err);
		if (rc < 0)
			return rc;
		if (rc == 0) {
			r->st.lines += joined;
			r->rec.origin |= HD_O_JOINED | HD_O_REPAIRED;
			r->st.repaired++;
			report(r, lineno, col + 1, r->base + *start, 1,
			       "record split by a raw newline: lines joined");
			*got = 1;
			return 0;
		}
	}
	if (hd__scan_salvage(&r->sc, r->buf + *start, *nl - *start,
			     &r->rec) == HD__SCAN_OK) {
		r->st.repaired++;
		report(r, lineno, col + 1, r->base + *start, 1, msg);
		*got = 1;
		return 0;
	}
	/* salvage found an address but no type: an address list's line */
	if ((r->opts.flags & HD_READ_ADDRESSES) &&
	    (r->rec.has & HD_HAS_ADDRESS) && !r->rec.type_name.ptr) {
		r->rec.kind = HD_REC_OTHER;
		*got = 1;
		return 0;
	}
	note_skipped(r, lineno, r->base + *start, r->buf + *start,
		     *nl - *start, msg);
	if (r->bad_line == lineno)
		r->bad_cut = cut;
	r->st.skipped++;
	report(r, lineno, col + 1, r->base + *start, 0, msg);
	return 0;
}

static void count(hd_reader *r, const hd_record *rec)
{
	switch (rec->kind) {
	case HD_REC_OBJECT:
		r->st.objects++;
		break;
	case HD_REC_ROOT:
		r->st.roots++;
		break;
	case HD_REC_SHAPE:
		r->st.shapes++;
		break;
	default:
		r->st.others++;
		break;
	}
	if (rec->origin & HD_O_MEMPROF)
		r->st.memprof = 1;
}

int hd_reader_next(hd_reader *r, const hd_record **out, hd_error *err)
{
	HD_ASSERT_ARG(r && out);
	if (r->failed) {
		if (err)
			*err = r->saved;
		return r->failed;
	}
	for (;;) {
		size_t start = r->pos, nl;
		const char *q;
		uint64_t lineno;
		int rc, got;

		if (HD_UNLIKELY(r->pos - r->dropped >= r->drop_every))
			r->dropped = hd__map_drop(r->buf, r->dropped, r->pos);
		if (r->range && r->base + r->pos >= r->stop &&
		    (!r->claim ||
		     r->claim(r->claim_payload, r->base + r->pos, &r->stop)))
			return HD_ITEROVER;
		if (r->pos >= r->len && !r->eof && (rc = refill(r, err)))
			goto fail;
		start = r->pos;
		if (start >= r->len && r->eof) {
			if (r->gz_cut == 1) {
				static const char cut[] =
					"gzip stream is truncated: the dump is "
					"incomplete";

				r->gz_cut = 2;
				note_skipped(r, r->st.lines + 1,
					     r->base + r->len, NULL, 0, cut);
				r->st.skipped++;
				report(r, r->st.lines + 1, 1, r->base + r->len, 0,
				       cut);
			}
			if ((rc = check_dump(r, err)))
				goto fail;
			return HD_ITEROVER;
		}
		/* line_end()'s common case inline: the newline in the
		 * buffer, past what an earlier call scanned, on a line
		 * shorter than the limit (start is r->pos) */
		if (r->scanned <= start &&
		    (q = r->avx2 ? hd__avx2_newline(r->buf + start,
						     r->buf + r->len) :
				   newline(r->buf + start, r->buf + r->len)) &&
		    (size_t)(q - r->buf) - start < r->line_max)
			nl = (size_t)(q - r->buf);
		else if ((rc = line_end(r, &start, &nl, err)))
			goto fail;
		lineno = ++r->st.lines;
		if (nl == r->len)
			r->st.truncated = 1;
		rc = hd__scan_line(&r->sc, r->buf + start, nl - start,
				   &r->rec);
		if (rc < 0) {
			hd__error(err, rc, "out of memory");
			goto fail;
		}
		if (rc == HD__SCAN_SKIP) {
			r->st.blank++;
			r->pos = r->scanned = nl + (nl < r->len);
			continue;
		}
		if (rc == HD__SCAN_OK && r->sc.repaired) {
			if (r->opts.flags & HD_READ_STRICT) {
				rc = strict_fail(r, lineno, start, err);
				goto fail;
			}
			r->st.repaired++;
			report(r, lineno, r->sc.err_col + 1, r->base + start,
			       1, r->sc.err_msg ? r->sc.err_msg : "repaired");
		} else if (rc == HD__SCAN_BAD) {
			if (r->opts.flags & HD_READ_STRICT) {
				rc = strict_fail(r, lineno, start, err);
				goto fail;
			}
			if ((rc = recover(r, &start, &nl, lineno, &got, err)))
				goto fail;
			if (!got) {
				r->pos = r->scanned = nl + (nl < r->len);
				if (!records(r) &&
				    r->nheld == NOT_DUMP_LINES) {
					rc = not_dump(r, 1, err);
					goto fail;
				}
				continue;
			}
		}
		if (nl == r->len && nl > start)
			r->rec.origin |= HD_O_LAST_CUT;
		r->rec.text = r->buf + start;
		r->rec.text_len = nl - start;
		while (r->rec.text_len && r->rec.text[r->rec.text_len - 1] == '\r')
			r->rec.text_len--;
		r->rec.offset = r->base + start;
		r->rec.lineno = lineno;
		r->pos = r->scanned = nl + (nl < r->len);
		r->st.bytes = r->base + r->pos;
		if (r->nheld)
			flush_held(r);
		count(r, &r->rec);
		*out = &r->rec;
		return 0;
	fail:
		r->failed = rc;
		if (err)
			r->saved = *err;
		else
			hd__error(&r->saved, rc, "%s", hd_strerror(rc));
		return rc;
	}
}

static int reader_new(hd_reader **out, const hd_read_options *opts,
		      const char *name, hd_error *err)
{
	hd_reader *r = hd__calloc(1, sizeof(*r));

	if (!r)
		return hd__error(err, HD_ENOMEM, "out of memory");
	if (opts) {
		if (opts->version != HD_READ_OPTIONS_VERSION) {
			hd__free(r, sizeof(*r));
			return hd__error(err, HD_EINVAL,
					 "unknown read options version %u",
					 opts->version);
		}
		r->opts = *opts;
	}
	r->fd = -1;
	r->name = name;
	r->sc.strict = (r->opts.flags & HD_READ_STRICT) != 0;
	r->drop_every = SIZE_MAX;
	r->line_max = SIZE_MAX;
	r->avx2 = hd__simd_level() == HD__SIMD_AVX2;
	*out = r;
	return 0;
}

/* r reads the len bytes of the file mapped at map (the whole input in
 * buf), from offset from, dropping the pages it has gone past. */
static void use_map(hd_reader *r, const char *map, size_t len, size_t from)
{
	r->buf = (char *)(uintptr_t)map;
	r->len = r->cap = len;
	r->mem = 1;
	r->eof = 1;
	r->base = 0;
	r->pos = r->scanned = r->dropped = from;
	r->drop_every = hd__map_budget ? hd__map_budget : 1;
}

void hd__reader_set_window(hd_reader *r, size_t bytes)
{
	if (r->drop_every != SIZE_MAX)
		r->drop_every = bytes ? bytes : 1;
}

/* A store is read by hd_store_open(), never as a dump. */
static int not_store(const hd_reader *r, hd_error *err)
{
	if (r->len < HD__STORE_MAGIC_LEN ||
	    memcmp(r->buf, HD__STORE_MAGIC, HD__STORE_MAGIC_LEN))
		return 0;
	return hd__error(err, HD_ENOTDUMP,
			 "%s: not a heap dump but a heapdump store", r->name);
}

int hd_reader_open_mem(hd_reader **out, const void *buf, size_t len,
		       const hd_read_options *opts, hd_error *err)
{
	hd_reader *r;
	int rc;

	HD_ASSERT_ARG(out && (buf || !len));
	if ((rc = reader_new(&r, opts, "(memory)", err)))
		return rc;
	r->mem = 1;
	r->eof = 1;
	r->buf = (char *)(uintptr_t)buf;
	r->len = r->cap = len;
	r->st.total_bytes = len;
	if ((rc = not_store(r, err))) {
		hd__free(r, sizeof(*r));
		return rc;
	}
	*out = r;
	return 0;
}

int hd__reader_open_range(hd_reader **out, int fd, size_t len,
			  size_t from, size_t stop, int after_records,
			  const hd_read_options *opts, const char *name,
			  hd_error *err)
{
	return hd__reader_open_claim(out, fd, NULL, len, from, stop,
				     after_records,
				     NULL, NULL, opts, name, err);
}

int hd__reader_open_claim(hd_reader **out, int fd, const char *map,
			  size_t len, size_t from, size_t stop,
			  int after_records,
			  int (*claim)(void *payload, uint64_t at,
				       uint64_t *stop),
			  void *claim_payload, const hd_read_options *opts,
			  const char *name, hd_error *err)
{
	hd_reader *r;
	int rc;

	if ((rc = reader_new(&r, opts, name, err)))
		return rc;
	r->fd = fd; /* the caller's, shared by every range: pread only */
	r->range = 1;
	r->line_max = RANGE_LINE;
	r->after_records = after_records != 0;
	r->end = len;
	if (map) {
		use_map(r, map, len, from);
	} else {
		r->cap = RANGE_CHUNK;
		if (!(r->buf = hd__malloc(r->cap))) {
			hd__free(r, sizeof(*r));
			return hd__error(err, HD_ENOMEM, "out of memory");
		}
		hd__prefault(r->buf, r->cap); /* every read fills it */
		r->base = from;
	}
	r->stop = stop;
	r->claim = claim;
	r->claim_payload = claim_payload;
	r->st.total_bytes = len;
	*out = r;
	return 0;
}

/*
 * The newline at or after off in fd's first len bytes, or len; w is a
 * window of wsize bytes to read into.
 */
static size_t next_newline(int fd, size_t len, size_t off, char *w,
			   size_t wsize)
{
	while (off < len) {
		size_t n = len - off < wsize ? len - off : wsize;
		ssize_t k = pread(fd, w, n, (off_t)off);
		const char *q;

		if (k <= 0)
			return len;
		if ((q = memchr(w, '\n', (size_t)k)))
			return off + (size_t)(q - w);
		off += (size_t)k;
	}
	return len;
}

size_t hd__reader_cut(int fd, size_t len, size_t at)
{
	char w[CUT_WINDOW];
	size_t p = at, nl, n, i;
	const char *q;
	ssize_t k;

	if (at) {
		if (pread(fd, w, 1, (off_t)(at - 1)) != 1)
			return len;
		if (w[0] != '\n') {
			nl = next_newline(fd, len, at, w, sizeof(w));
			if (nl >= len)
				return len;
			p = nl + 1;
		}
	}
	while (p < len) {
		n = len - p < sizeof(w) ? len - p : sizeof(w);
		if ((k = pread(fd, w, n, (off_t)p)) <= 0)
			return len;
		n = (size_t)k;
		/* the lines that end in the window */
		for (i = 0; (q = memchr(w + i, '\n', n - i)); i = (size_t)(q - w) + 1)
			if (starts_object(w + i, q))
				return p + i;
		if (p + n >= len)
			return len; /* the last line: no cut before it */
		if (i) {
			p += i; /* the next window from the line's start */
			continue;
		}
		/* a line longer than the window, judged on its first
		 * CUT_WINDOW bytes: a start that needs more is taken for
		 * none, and the cut moves on (later, never wrong) */
		if (starts_object(w, w + n))
			return p;
		if ((nl = next_newline(fd, len, p + n, w, sizeof(w))) >= len)
			return len;
		p = nl + 1;
	}
	return len;
}

static int start_gzip(hd_reader *r, hd_error *err)
{
	int rc;

	r->st.gzip = 1;
	r->st.total_bytes = 0;
	/* the magic bytes already read are inflated first */
	if ((rc = hd__gz_open(&r->gz, r->fd, r->buf, r->len, err)))
		return rc;
	r->len = 0;
	return 0;
}

int hd_reader_open(hd_reader **out, const char *path,
		   const hd_read_options *opts, hd_error *err)
{
	hd_reader *r;
	struct stat sb;
	const char *map;
	size_t n;
	int rc, at_end = 0, is_reg, fills;

	HD_ASSERT_ARG(out && path);
	*out = NULL;
	if ((rc = reader_new(&r, opts, path, err)))
		return rc;
	if (strcmp(path, "-") == 0) {
		r->fd = 0;
		r->name = "(stdin)";
	} else {
		r->fd = open(path, O_RDONLY | O_CLOEXEC);
		if (r->fd < 0) {
			rc = hd__error_sys(err, errno, "cannot open '%s': %s",
					   path, strerror(errno));
			goto out;
		}
		r->own_fd = 1;
	}
	if (fstat(r->fd, &sb) != 0)
		memset(&sb, 0, sizeof(sb)); /* neither regular nor a directory */
	is_reg = S_ISREG(sb.st_mode) && (uint64_t)sb.st_size <= SIZE_MAX / 2;
	if (is_reg)
		r->st.total_bytes = (uint64_t)sb.st_size;
	if (S_ISDIR(sb.st_mode)) {
		rc = hd__error_sys(err, EISDIR, "cannot read '%s': %s", path,
				   strerror(EISDIR));
		goto out;
	}
	r->cap = CHUNK;
	if (!(r->buf = hd__malloc(r->cap))) {
		rc = hd__error(err, HD_ENOMEM, "out of memory");
		goto out;
	}
	/* sniff the gzip magic (1f 8b) and the store's */
	while (r->len < HD__STORE_MAGIC_LEN) {
		if (read_raw(r, r->buf + r->len, HD__STORE_MAGIC_LEN - r->len,
			     &n)) {
			rc = hd__error_sys(err, errno, "cannot read '%s': %s",
					   path, strerror(errno));
			goto out;
		}
		if (!n) {
			at_end = 1;
			break;
		}
		r->len += n;
	}
	if ((rc = not_store(r, err)))
		goto out;
	fills = r->st.total_bytes >= r->cap; /* a dump that fills buf */
	if (r->len >= 2 && (unsigned char)r->buf[0] == 0x1f &&
	    (unsigned char)r->buf[1] == 0x8b) {
		if ((rc = start_gzip(r, err)))
			goto out;
	} else if (is_reg && (map = hd__map_dump(r->fd, (size_t)sb.st_size,
						 path))) {
		/* the bytes sniffed are read again where they are mapped */
		hd__free(r->buf, r->cap);
		use_map(r, map, (size_t)sb.st_size, 0);
		r->map_own = 1;
		r->line_max = hd__reader_max_line;
	} else if (at_end) {
		r->eof = 1;
	}
	if (fills && !r->map_own)
		hd__prefault(r->buf, r->cap);
	*out = r;
	return 0;
out:
	hd_reader_free(r);
	return rc;
}

const struct hd__scan *hd__reader_scan(const hd_reader *r)
{
	return &r->sc;
}

void hd_reader_stats(hd_read_stats *out, const hd_reader *r)
{
	*out = r->st;
	out->bytes = r->base + r->pos;
	if (out->bytes > r->base + r->len)
		out->bytes = r->base + r->len;
}

void hd_reader_free(hd_reader *r)
{
	if (!r)
		return;
	hd__gz_close(r->gz); /* its thread reads fd */
	if (r->own_fd && r->fd >= 0)
		close(r->fd);
	if (r->map_own)
		hd__unmap_file(r->buf, r->cap);
	else if (r->drop_every != SIZE_MAX) /* a range of pscan's mapping */
		hd__map_drop(r->buf, r->dropped, r->pos); /* on its thread */
	else if (!r->mem)
		hd__free(r->buf, r->cap);
	hd__scan_free(&r->sc);
	hd__free(r, sizeof(*r));
}
