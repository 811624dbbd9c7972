/*
 * store_write.c - writing a store file: the header, the section table
 * and the section images, through hd_outfile (outfile.c: a temporary
 * file renamed over a regular destination, a device written in place).
 * On any failure nothing partial is ever found under the final name.
 */
#include "store_format.h"

#define TABLE_MAX \
	(HD__STORE_HEADER + HD__STORE_ENTRY * (HD__SEC__COUNT - 1))

/* Is section id written? Optional ones only when present. */
static int present(const hd_store *s, int id)
{
	return id < HD__SEC__REQUIRED || s->sec[id];
}

static size_t table_bytes(const hd_store *s)
{
	size_t n = HD__STORE_HEADER;
	int id;

	for (id = 1; id < HD__SEC__COUNT; id++)
		n += present(s, id) ? HD__STORE_ENTRY : 0;
	return n;
}

static uint64_t align8(uint64_t x)
{
	return (x + HD__STORE_ALIGN - 1) & ~(uint64_t)(HD__STORE_ALIGN - 1);
}

/* The header and section table; sections follow in id order. */
static uint64_t layout(const hd_store *s, unsigned char *head)
{
	size_t tb = table_bytes(s);
	uint64_t pos = align8(tb);
	unsigned char *e = head + HD__STORE_HEADER;
	int id;

	memset(head, 0, tb);
	memcpy(head, HD__STORE_MAGIC, HD__STORE_MAGIC_LEN);
	hd__put_le32(head + 8, HD__STORE_VERSION);
	hd__put_le32(head + 12, (uint32_t)((tb - HD__STORE_HEADER) /
					   HD__STORE_ENTRY));
	for (id = 1; id < HD__SEC__COUNT; id++) {
		if (!present(s, id))
			continue;
		hd__put_le32(e, (uint32_t)id);
		hd__put_le32(e + 4, id < HD__SEC__REQUIRED ?
					    0 : HD__SECF_OPTIONAL);
		hd__put_le64(e + 8, pos);
		hd__put_le64(e + 16, s->len[id]);
		pos = align8(pos + s->len[id]);
		e += HD__STORE_ENTRY;
	}
	hd__put_le64(head + 16, pos);
	return pos;
}

static int write_store(hd_outfile *o, const hd_store *s, hd_error *err)
{
	static const unsigned char zeros[HD__STORE_ALIGN];
	unsigned char head[TABLE_MAX];
	uint64_t pos = table_bytes(s);
	int id, rc;

	layout(s, head);
	if ((rc = hd_outfile_write(o, head, (size_t)pos, err)))
		return rc;
	for (id = 1; id < HD__SEC__COUNT; id++) {
		if (!present(s, id))
			continue;
		if ((rc = hd_outfile_write(o, zeros,
					   (size_t)(align8(pos) - pos), err)))
			return rc;
		pos = align8(pos);
		if (s->len[id] > SIZE_MAX)
			return hd__error(err, HD_ENOMEM, "out of memory");
		if ((rc = hd_outfile_write(o, s->sec[id], (size_t)s->len[id],
					   err)))
			return rc;
		pos += s->len[id];
	}
	return hd_outfile_write(o, zeros, (size_t)(align8(pos) - pos), err);
}

int hd_store_write(const hd_store *s, const char *path, hd_error *err)
{
	hd_outfile *o = NULL;
	hd_store_info si;
	hd_store w;
	unsigned char *sum = NULL;
	size_t sum_len = 0;
	int rc;

	HD_ASSERT_ARG(s && path);
	/* every written store carries the stats summary (store_stats.c):
	 * a shallow copy of s that has it is what gets written */
	w = *s;
	if (!s->sec[HD__SEC_STATS]) {
		if ((rc = hd__store_stats_image(s, &sum, &sum_len, err)))
			return rc;
		w.sec[HD__SEC_STATS] = sum;
		w.len[HD__SEC_STATS] = sum_len;
		hd__timing("summary");
	}
	/* the store holds the dump's strings: it gets the dump's mode */
	hd_store_info_get(&si, s);
	if (!(rc = hd_outfile_open(&o, path, si.source_path, 0, err)) &&
	    !(rc = write_store(o, &w, err))) {
		hd__timing("write");
		rc = hd_outfile_commit(o, err);
		hd__timing("commit");
	}
	hd_outfile_free(o);
	hd__free(sum, sum_len);
	return rc;
}
