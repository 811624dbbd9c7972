/*
 * hd_util.h - lib/util/'s helpers for the front ends (the heapdump
 * program, the gem) and lib/: outputs and spools, the mapped-file
 * registry, JSON unescaping, name distance, the sidecar's time, the
 * saturated sum. Not heap analysis, so not in heapdump.h: libheapdump.so
 * does not export them (they are hidden in it); the program and the
 * tests link them from libheapdump.a, the gem compiles lib/util/ in.
 * Never installed. lib/util/util_int.h holds the hd__ internals.
 */
#ifndef HD_UTIL_H
#define HD_UTIL_H

#include "heapdump.h" /* hd_error and the error codes */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ===================================================================== */
/* Output files                                                          */
/* ===================================================================== */

/*
 * Every file the library or the heapdump program writes goes through
 * hd_outfile, with one set of rules (man 1 heapdump, OUTPUTS):
 *  - "-" is standard output;
 *  - an existing device, FIFO or socket is written in place (opened for
 *    writing, never replaced): a full device is an error;
 *  - a symbolic link is followed, never replaced: the output is the end
 *    of the chain (created if the link dangles);
 *  - a regular file, or a name that does not exist, is written to a
 *    temporary file beside it (NAME.tmpXXXXXX), which is synced and
 *    renamed over NAME on commit. Until then NAME is untouched; on any
 *    failure, and on hd_outfile_free() without a commit, the temporary
 *    file is removed.
 * Live temporary files (outputs and spools) are registered, so that a
 * program's SIGINT or SIGTERM handler can remove them with
 * hd_outfile_cleanup(). Checking that an output is not an input is the
 * caller's business (it knows its inputs).
 */
typedef struct hd_outfile hd_outfile;

/** hd_outfile_open flag: an existing regular file keeps its own
 *  permission bits (else the output gets those of like). */
#define HD_OUTFILE_KEEP_MODE 0x1u

/**
 * Opens an output by the rules above. A new or replaced file gets the
 * read and write permission bits of like when like is a regular file
 * (what is derived from a heap dump holds its secrets), else 0600.
 * @param out receives the output
 * @param path where to write, or "-"
 * @param like the input the output is derived from, or NULL
 * @param flags 0 or HD_OUTFILE_KEEP_MODE
 * @return 0, HD_EIO ("cannot create 'NAME.tmpXXXXXX': ...", "cannot open
 *         'NAME': ...", "cannot write 'DIR': Is a directory"), HD_ENOMEM,
 *         HD_EINVAL
 */
int hd_outfile_open(hd_outfile **out, const char *path,
			   const char *like, unsigned int flags, hd_error *err);

/**
 * Writes n bytes through a buffer. A failed write is remembered: later
 * writes and the commit fail with the same errno.
 * @return 0, HD_EIO ("cannot write 'PATH': No space left on device"),
 *         HD_ENOMEM, HD_EINVAL (after hd_outfile_stream)
 */
int hd_outfile_write(hd_outfile *o, const void *buf, size_t n,
			    hd_error *err);

/**
 * A stdio stream over the output, for callers that print (use it or
 * hd_outfile_write, not both). Owned by o: never fclose it; the commit
 * flushes it and reports its errors.
 * @return the stream, or NULL (err filled)
 */
FILE *hd_outfile_stream(hd_outfile *o, hd_error *err);

/**
 * Finishes the output: flushes it, and for a temporary file syncs it,
 * closes it and renames it over its target. On failure nothing is left
 * but what was there before. Free o afterwards in every case.
 * @return 0, HD_EIO (the message names the file and the errno), HD_EINVAL
 */
int hd_outfile_commit(hd_outfile *o, hd_error *err);

/** Closes and frees an output; an uncommitted temporary file is removed.
 *  NULL is a no-op. */
void hd_outfile_free(hd_outfile *o);

/**
 * Removes every live temporary file of the process (outputs not yet
 * committed, spools not yet freed). Async-signal-safe: meant for a
 * SIGINT or SIGTERM handler, which then re-raises its signal. The
 * objects stay allocated; the process is expected to end.
 */
void hd_outfile_cleanup(void);

/**
 * The path of the file the library has mapped at addr, or NULL. The
 * library maps the plain dumps it reads (hd_reader_open,
 * hd_stats_add_dump, the store build) and the stores it opens; a file
 * that another program truncates while it is mapped raises SIGBUS where
 * a lost page is read. Async-signal-safe: meant for a SIGBUS handler
 * (the signal's si_addr), to name the file that shrank.
 */
const char *hd_mapped_path(const void *addr);

/**
 * Moves the finished file from to the output to, by the rules above: a
 * rename when both are on one file system, else (and for a device or a
 * FIFO) a copy through hd_outfile, after which from is removed. On
 * failure to is untouched, from is kept, and the message names the real
 * cause (never EXDEV).
 * @return 0, HD_EIO, HD_ENOMEM, HD_EINVAL
 */
int hd_file_move(const char *from, const char *to, hd_error *err);

/** A spooled copy of an input that can be read only once (a pipe). */
typedef struct hd_spool hd_spool;

/**
 * Copies everything readable from fd into a new file in $TMPDIR (else
 * /tmp), registered for hd_outfile_cleanup(). fd is not closed.
 * @param name the input, for messages ("standard input")
 * @return 0, HD_EIO ("cannot spool NAME to 'FILE': No space left on
 *         device", "cannot read NAME: ..."), HD_ENOMEM, HD_EINVAL
 */
int hd_spool_new(hd_spool **out, int fd, const char *name,
			hd_error *err);

/** The spool's file name (borrowed: valid until hd_spool_free). */
const char *hd_spool_path(const hd_spool *sp);

/** Removes the spool's file and frees it. NULL is a no-op. */
void hd_spool_free(hd_spool *sp);

/* ===================================================================== */
/* Text and numbers                                                      */
/* ===================================================================== */

/**
 * Decodes the JSON escapes of src[0..len) into dst, which must hold len
 * bytes. Invalid escapes and raw bytes are copied through unchanged.
 * @return the decoded length (never more than len)
 */
size_t hd_json_unescape(char *dst, const char *src, size_t len);

/**
 * How far apart two names are, for "did you mean" suggestions: the
 * optimal string alignment distance (insertions, deletions,
 * substitutions and swaps of two neighbours, each 1), ASCII letters
 * compared without case, and a case-only difference counting 0 (so 0
 * means equal up to case). Work is bounded by max: any distance over
 * max, and names over 256 bytes, give max + 1.
 */
unsigned hd_name_distance(const char *a, size_t alen, const char *b,
				 size_t blen, unsigned max);

/** A UTC time as the gem's sidecar writes it ("2026-11-24T10:00:00.123456Z")
 * in microseconds since the epoch (hd_dump_origin.time_us); 0 when it is
 * not that. */
int64_t hd_time_us(const char *iso8601);

/**
 * a + b, stopping at 2^64-1 as every memsize sum of the library does;
 * sets *saturated (if not NULL) to 1 when it stopped there, and leaves
 * it alone otherwise.
 */
static inline uint64_t hd_u64_sat_add(uint64_t a, uint64_t b,
				      int *saturated)
{
	if (b > UINT64_MAX - a) {
		if (saturated)
			*saturated = 1;
		return UINT64_MAX;
	}
	return a + b;
}

#endif /* HD_UTIL_H */
