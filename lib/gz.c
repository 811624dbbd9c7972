/*
 * gz.c - a gzip stream inflated on a thread of its own.
 *
 * The reader scans on the caller's thread while a producer thread reads
 * the compressed input and inflates it into a ring of buffers, so that a
 * gzip dump costs about the longer of inflating and scanning, not their
 * sum. Memory stays bounded: NSLOT buffers of SLOT bytes, one input
 * buffer, the inflater's state.
 *
 * The stream is inflated as gzip does it: a concatenation of members is
 * one stream, zero bytes after the last member are padding, anything
 * else after them is an error. How the stream ended (cleanly, cut short,
 * damaged, a read error) is kept for the reader, which reports it only
 * after it has scanned every byte inflated before it (reader.c).
 *
 * Two inflaters: Intel's ISA-L (igzip, several times faster) when built
 * with it (HD_HAVE_ISAL), else zlib. Both report the same errors with the
 * same messages.
 *
 * The producer never allocates: the allocator may not be thread-safe
 * (tests count its calls), so zlib's state and window come from an arena
 * allocated up front, and ISA-L's state is one block.
 */
#include "gz.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <unistd.h>

#ifdef HD_HAVE_ISAL
#include <isa-l/igzip_lib.h>
#else
#include <zlib.h>
#endif

#define SLOT ((size_t)1 << 20)   /* one buffer of inflated bytes */
#define NSLOT 8                  /* buffers in the ring */
#define IN_CHUNK ((size_t)1 << 20) /* compressed bytes read at once */
#define ARENA ((size_t)64 << 10) /* zlib's state and its 32 KiB window */

enum { GZ_MORE, GZ_MEMBER_END, GZ_FAIL };

struct hd__gz {
	int fd;
	int cancel[2];       /* a byte written to [1] stops a blocked read */
	/* the producer's: input and the inflater */
	unsigned char *in;   /* next compressed byte */
	size_t avail;        /* compressed bytes at in */
	unsigned char *zin;  /* IN_CHUNK bytes */
	uint64_t zin_total;  /* compressed bytes read */
	int zend;            /* the last member ended cleanly */
	int zpad;            /* reading the zero padding after it */
#ifdef HD_HAVE_ISAL
	struct inflate_state *is;
	uint64_t member_out;
	int at_header;       /* no byte of this member inflated yet */
#else
	z_stream zs;
	int zs_live;
	unsigned char *arena;
	size_t arena_used;
#endif
	struct hd__gz_end end;
	/* the ring: the producer fills slot[head], the consumer reads
	 * slot[tail] from off; count slots are full (under mu) */
	unsigned char *slots;
	size_t len[NSLOT];
	unsigned head, tail, count;
	size_t off;
	int done;            /* the producer has finished; end is final */
	int stop;            /* the consumer asks the producer to stop */
	int threaded;
	pthread_t tid;
	pthread_mutex_t mu;
	pthread_cond_t can_fill, can_take;
};

/* ---- the inflaters: in/avail in, bytes out; GZ_MORE, _MEMBER_END,
 * _FAIL (end.rc and end.info set) ---- */

static void corrupt(hd__gz *g, const char *why)
{
	g->end.rc = hd__error(&g->end.info, HD_EPARSE,
			      "corrupt gzip stream near compressed byte %llu: "
			      "%s",
			      (unsigned long long)(g->zin_total - g->avail),
			      why);
}

#ifdef HD_HAVE_ISAL

#ifndef HD_ISAL_SONAME
#error "HD_ISAL_SONAME: the file name of libisal to load (the Makefile's)"
#endif

/* ISA-L's functions, loaded at the first gzip dump (dynload.c): the
 * other inputs never map the library */
static struct isal_api {
	HD__DYNFN(isal_inflate);
	HD__DYNFN(isal_inflate_init);
	HD__DYNFN(isal_inflate_reset);
} isal;
static const struct hd__dynsym isal_syms[] = {
	HD__DYNSYM(isal_api, isal_inflate),
	HD__DYNSYM(isal_api, isal_inflate_init),
	HD__DYNSYM(isal_api, isal_inflate_reset),
};
static struct hd__dynlib isal_lib = {
	HD_ISAL_SONAME, "libisal2", isal_syms,
	sizeof(isal_syms) / sizeof(isal_syms[0]), &isal, 0,
};

static int inflater_init(hd__gz *g, hd_error *err)
{
	int rc;

	if ((rc = hd__dynload(&isal_lib, err)))
		return rc;
	g->is = hd__malloc(sizeof(*g->is));
	if (!g->is)
		return hd__error(err, HD_ENOMEM, "out of memory");
	isal.isal_inflate_init(g->is);
	g->is->crc_flag = ISAL_GZIP;
	g->at_header = 1;
	return 0;
}

static void inflater_free(hd__gz *g)
{
	hd__free(g->is, sizeof(*g->is));
}

/* zlib's words for ISA-L's errors, so that both builds say the same */
static const char *isal_why(int rc)
{
	switch (rc) {
	case ISAL_INVALID_WRAPPER:
		return "incorrect header check";
	case ISAL_UNSUPPORTED_METHOD:
		return "unknown compression method";
	case ISAL_INVALID_LOOKBACK:
		return "invalid distance too far back";
	case ISAL_INVALID_SYMBOL:
		return "invalid code";
	case ISAL_INVALID_BLOCK:
		return "invalid block type";
	default:
		return "data error";
	}
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/*
 * A member's trailer does not match: zlib checks its CRC first, and says
 * so after its 4 bytes, then the length after 8. ISA-L has read all 8 and
 * says only "checksum": tell which, from the trailer just read.
 */
static void bad_trailer(hd__gz *g)
{
	if ((size_t)(g->in - g->zin) >= 8 &&
	    le32(g->in - 8) == g->is->crc) {
		corrupt(g, "incorrect length check");
		return;
	}
	if ((size_t)(g->in - g->zin) >= 8) {
		g->avail += 4; /* zlib stops after the CRC */
		corrupt(g, "incorrect data check");
		g->avail -= 4;
		return;
	}
	corrupt(g, "incorrect data check");
}

static int inflate_some(hd__gz *g, unsigned char *out, size_t room,
			size_t *made)
{
	struct inflate_state *s = g->is;
	uint32_t cap = room > UINT32_MAX ? UINT32_MAX : (uint32_t)room;
	int rc;

	*made = 0;
	/* zlib reads the magic bytes, then the method and the flags, and
	 * fails on them there; ISA-L would wait for a whole header */
	if (g->at_header && g->avail >= 2) {
		const char *why = NULL;
		size_t at = 2;

		if (g->in[0] != 0x1f || g->in[1] != 0x8b)
			why = "incorrect header check";
		else if (g->avail >= 4 && g->in[2] != 8)
			why = "unknown compression method", at = 4;
		else if (g->avail >= 4 && (g->in[3] & 0xe0))
			why = "unknown header flags set", at = 4;
		if (why) {
			g->in += at;
			g->avail -= at;
			corrupt(g, why);
			return GZ_FAIL;
		}
		g->at_header = 0;
	}
	s->next_in = g->in;
	s->avail_in = (uint32_t)g->avail;
	s->next_out = out;
	s->avail_out = cap;
	rc = isal.isal_inflate(s);
	*made = cap - s->avail_out;
	g->member_out += *made;
	g->in = s->next_in;
	g->avail = s->avail_in;
	if (rc == ISAL_INCORRECT_CHECKSUM && s->block_state == ISAL_BLOCK_FINISH) {
		bad_trailer(g);
		return GZ_FAIL;
	}
	if (rc < 0) {
		/* the offset as zlib says it: the bytes ISA-L holds
		 * unread in its bit buffer are not read yet */
		size_t held = s->read_in_length > 0 ?
				      (size_t)s->read_in_length / 8 : 0;

		g->avail += held;
		corrupt(g, rc == ISAL_INCORRECT_CHECKSUM ? "header crc mismatch"
							 : isal_why(rc));
		g->avail -= held;
		return GZ_FAIL;
	}
	if (s->block_state == ISAL_BLOCK_FINISH) {
		/* a concatenation of gzip members is one stream */
		isal.isal_inflate_reset(s);
		s->crc_flag = ISAL_GZIP;
		g->member_out = 0;
		g->at_header = 1;
		return GZ_MEMBER_END;
	}
	return GZ_MORE;
}

static uint64_t member_out(const hd__gz *g)
{
	return g->member_out;
}

#else /* zlib */

/* zlib's blocks come from the arena: the producer thread never calls the
 * allocator. */
static voidpf z_alloc(voidpf opaque, uInt items, uInt size)
{
	hd__gz *g = opaque;
	size_t n = (size_t)items * size;

	if (size && n / size != items)
		return NULL;
	n = (n + 15) & ~(size_t)15;
	if (n > ARENA - g->arena_used)
		return NULL;
	g->arena_used += n;
	return g->arena + g->arena_used - n;
}

static void z_free(voidpf opaque, voidpf ptr)
{
	(void)opaque;
	(void)ptr;
}

static int inflater_init(hd__gz *g, hd_error *err)
{
	g->arena = hd__malloc(ARENA);
	if (!g->arena)
		return hd__error(err, HD_ENOMEM, "out of memory");
	g->zs.zalloc = z_alloc;
	g->zs.zfree = z_free;
	g->zs.opaque = g;
	if (inflateInit2(&g->zs, 15 + 16) != Z_OK)
		return hd__error(err, HD_ENOMEM, "cannot start zlib");
	g->zs_live = 1;
	return 0;
}

static void inflater_free(hd__gz *g)
{
	if (g->zs_live)
		inflateEnd(&g->zs);
	hd__free(g->arena, ARENA);
}

static int inflate_some(hd__gz *g, unsigned char *out, size_t room,
			size_t *made)
{
	uInt cap = room > UINT32_MAX ? UINT32_MAX : (uInt)room;
	int zrc;

	g->zs.next_in = g->in;
	g->zs.avail_in = (uInt)g->avail;
	g->zs.next_out = out;
	g->zs.avail_out = cap;
	zrc = inflate(&g->zs, Z_NO_FLUSH);
	*made = cap - g->zs.avail_out;
	g->in = g->zs.next_in;
	g->avail = g->zs.avail_in;
	if (zrc == Z_STREAM_END) {
		/* a concatenation of gzip members is one stream */
		if (inflateReset(&g->zs) != Z_OK) {
			g->end.rc = hd__error(&g->end.info, HD_ERROR,
					      "zlib reset");
			return GZ_FAIL;
		}
		return GZ_MEMBER_END;
	}
	if (zrc == Z_OK || (zrc == Z_BUF_ERROR && !g->avail))
		return GZ_MORE;
	if (zrc == Z_MEM_ERROR) {
		g->end.rc = hd__error(&g->end.info, HD_ENOMEM,
				      "out of memory for zlib");
		return GZ_FAIL;
	}
	corrupt(g, g->zs.msg ? g->zs.msg : "data error");
	return GZ_FAIL;
}

static uint64_t member_out(const hd__gz *g)
{
	return g->zs.total_out;
}

#endif

/* ---- the producer ---- */

/* Reads compressed input; 0 with *n == 0 at its end, -1 on an error
 * (end.sys_errno) or when asked to stop. */
static int read_in(hd__gz *g, size_t *n)
{
	ssize_t k;

	for (;;) {
		if (g->threaded) {
			struct pollfd p[2];

			p[0].fd = g->fd;
			p[0].events = POLLIN;
			p[1].fd = g->cancel[0];
			p[1].events = POLLIN;
			p[0].revents = p[1].revents = 0;
			if (poll(p, 2, -1) < 0 && errno == EINTR)
				continue;
			if (p[1].revents)
				return -1;
		}
		k = read(g->fd, g->zin, IN_CHUNK);
		if (k >= 0)
			break;
		if (errno != EINTR) {
			g->end.sys_errno = errno;
			return -1;
		}
	}
	*n = (size_t)k;
	return 0;
}

/* Is input ready to read now? (A pipe whose writer pauses is not.) */
static int input_ready(const hd__gz *g)
{
	struct pollfd p;

	p.fd = g->fd;
	p.events = POLLIN;
	p.revents = 0;
	return poll(&p, 1, 0) != 0;
}

/*
 * Zero bytes after the last gzip member are padding (tape blocks, some
 * copy tools), accepted silently as gzip does; anything after them is
 * not. Returns 1 with end.rc set on a non-zero byte.
 */
static int zero_padding(hd__gz *g)
{
	g->zpad = 1;
	while (g->avail && !g->in[0]) {
		g->in++;
		g->avail--;
	}
	if (!g->avail)
		return 0;
	g->end.rc = hd__error(
		&g->end.info, HD_EPARSE,
		"data after the zero padding of the gzip stream at "
		"compressed byte %llu",
		(unsigned long long)(g->zin_total - g->avail));
	return 1;
}

/* Inflates into out until it is full, the stream ends (returns 1) or
 * the input pauses. */
static int fill(hd__gz *g, unsigned char *out, size_t cap, size_t *len)
{
	size_t n, made;
	int end = 0;

	*len = 0;
	while (*len < cap) {
		if (!g->avail) {
			/* what was inflated goes to the reader while a pipe's
			 * writer pauses */
			if (*len && g->threaded && !input_ready(g))
				break;
			if (read_in(g, &n)) {
				end = 1;
				break;
			}
			if (!n) {
				if (!g->zend) {
					g->end.truncated = 1;
					g->end.member_out = member_out(g);
				}
				end = 1;
				break;
			}
			g->in = g->zin;
			g->avail = n;
			g->zin_total += n;
		}
		if (g->zend && (g->zpad || !g->in[0])) {
			if (zero_padding(g)) {
				end = 1;
				break;
			}
			continue;
		}
		switch (inflate_some(g, out + *len, cap - *len, &made)) {
		case GZ_MORE:
			*len += made;
			g->zend = 0;
			break;
		case GZ_MEMBER_END:
			*len += made;
			g->zend = 1;
			break;
		default:
			*len += made;
			end = 1;
			break;
		}
		if (end)
			break;
	}
	return end;
}

static void *producer(void *arg)
{
	hd__gz *g = arg;
	unsigned slot;
	size_t len;
	int end;

	for (;;) {
		pthread_mutex_lock(&g->mu);
		while (g->count == NSLOT && !g->stop)
			pthread_cond_wait(&g->can_fill, &g->mu);
		if (g->stop) {
			pthread_mutex_unlock(&g->mu);
			return NULL;
		}
		slot = g->head;
		pthread_mutex_unlock(&g->mu);
		end = fill(g, g->slots + (size_t)slot * SLOT, SLOT, &len);
		pthread_mutex_lock(&g->mu);
		if (len) {
			g->len[slot] = len;
			g->head = (slot + 1) % NSLOT;
			g->count++;
		}
		if (end)
			g->done = 1;
		pthread_cond_signal(&g->can_take);
		pthread_mutex_unlock(&g->mu);
		if (end)
			return NULL;
	}
}

/* ---- the consumer ---- */

void hd__gz_read(hd__gz *g, void *dst, size_t room, size_t *got)
{
	unsigned full, used = 0;
	size_t n = 0;

	if (!g->threaded) {
		/* no thread: inflate here, one slot at a time */
		if (!g->count && !g->done) {
			size_t len;

			g->done = fill(g, g->slots, SLOT, &len);
			g->head = g->tail = 0;
			g->off = 0;
			g->len[0] = len;
			g->count = len != 0;
		}
		full = g->count;
	} else {
		pthread_mutex_lock(&g->mu);
		while (!g->count && !g->done)
			pthread_cond_wait(&g->can_take, &g->mu);
		full = g->count;
		pthread_mutex_unlock(&g->mu);
	}
	/* the full slots are the consumer's until it gives them back */
	while (used < full && n < room) {
		unsigned s = (g->tail + used) % NSLOT;
		size_t k = g->len[s] - g->off;

		if (k > room - n)
			k = room - n;
		memcpy((char *)dst + n, g->slots + (size_t)s * SLOT + g->off,
		       k);
		n += k;
		g->off += k;
		if (g->off == g->len[s]) {
			g->off = 0;
			used++;
		}
	}
	if (used) {
		if (g->threaded)
			pthread_mutex_lock(&g->mu);
		g->tail = (g->tail + used) % NSLOT;
		g->count -= used;
		if (g->threaded) {
			pthread_cond_signal(&g->can_fill);
			pthread_mutex_unlock(&g->mu);
		}
	}
	*got = n;
}

void hd__gz_end(const hd__gz *g, struct hd__gz_end *end)
{
	*end = g->end;
}

/* ---- open and close ---- */

int hd__gz_open(hd__gz **out, int fd, const void *head, size_t n,
		hd_error *err)
{
	hd__gz *g;
	int rc;

	*out = NULL;
	if (!(g = hd__calloc(1, sizeof(*g))))
		return hd__error(err, HD_ENOMEM, "out of memory");
	g->fd = fd;
	g->cancel[0] = g->cancel[1] = -1;
	if (!(g->zin = hd__malloc(IN_CHUNK)) ||
	    !(g->slots = hd__malloc(NSLOT * SLOT))) {
		rc = hd__error(err, HD_ENOMEM, "out of memory");
		goto fail;
	}
	if ((rc = inflater_init(g, err)))
		goto fail;
	/* the bytes already read (the magic) are inflated first */
	memcpy(g->zin, head, n);
	g->in = g->zin;
	g->avail = n;
	g->zin_total = n;
	if (pipe(g->cancel) == 0) {
		fcntl(g->cancel[0], F_SETFD, FD_CLOEXEC);
		fcntl(g->cancel[1], F_SETFD, FD_CLOEXEC);
		pthread_mutex_init(&g->mu, NULL);
		pthread_cond_init(&g->can_fill, NULL);
		pthread_cond_init(&g->can_take, NULL);
		g->threaded = 1;
		if (pthread_create(&g->tid, NULL, producer, g)) {
			g->threaded = 0;
			pthread_mutex_destroy(&g->mu);
			pthread_cond_destroy(&g->can_fill);
			pthread_cond_destroy(&g->can_take);
		}
	}
	*out = g;
	return 0;
fail:
	hd__gz_close(g);
	return rc;
}

void hd__gz_close(hd__gz *g)
{
	ssize_t k;

	if (!g)
		return;
	if (g->threaded) {
		pthread_mutex_lock(&g->mu);
		g->stop = 1;
		pthread_cond_signal(&g->can_fill);
		pthread_mutex_unlock(&g->mu);
		do
			k = write(g->cancel[1], "", 1);
		while (k < 0 && errno == EINTR);
		pthread_join(g->tid, NULL);
		pthread_mutex_destroy(&g->mu);
		pthread_cond_destroy(&g->can_fill);
		pthread_cond_destroy(&g->can_take);
	}
	if (g->cancel[0] >= 0)
		close(g->cancel[0]);
	if (g->cancel[1] >= 0)
		close(g->cancel[1]);
	inflater_free(g);
	hd__free(g->slots, NSLOT * SLOT);
	hd__free(g->zin, IN_CHUNK);
	hd__free(g, sizeof(*g));
}
