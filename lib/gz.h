/*
 * gz.h - a gzip stream inflated on its own thread (gz.c), for the reader.
 */
#ifndef HD_GZ_H
#define HD_GZ_H

#include "hd_int.h"

typedef struct hd__gz hd__gz;

/* How the stream ended, once hd__gz_read has returned every byte. */
struct hd__gz_end {
	int sys_errno;      /* reading the input failed (errno) */
	int truncated;      /* the input ended inside a gzip member */
	uint64_t member_out; /* then: bytes inflated from that member */
	int rc;             /* else a damaged stream: HD_EPARSE, HD_ENOMEM */
	hd_error info;      /* its message */
};

/*
 * Inflates the gzip stream read from fd, whose first n bytes (head) were
 * already read, into a ring of buffers on a thread of its own (or on the
 * caller's, if no thread can be started). Every allocation is made here,
 * on the caller's thread.
 */
HD_HIDDEN int hd__gz_open(hd__gz **out, int fd, const void *head, size_t n,
			  hd_error *err);
/* Copies up to room inflated bytes to dst, waiting only when none is
 * ready; *got == 0 only at the end of the stream. */
HD_HIDDEN void hd__gz_read(hd__gz *g, void *dst, size_t room, size_t *got);
/* How the stream ended (after hd__gz_read gave 0 bytes). */
HD_HIDDEN void hd__gz_end(const hd__gz *g, struct hd__gz_end *end);
/* Stops the thread (even one waiting for input) and frees g. */
HD_HIDDEN void hd__gz_close(hd__gz *g);

#endif
