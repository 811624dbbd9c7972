/*
 * fuzz_reader.c - libFuzzer target: a whole dump stream through the
 * reader, lenient and strict, then every record's fields are touched.
 */
#include "heapdump.h"

#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void touch(const hd_record *r, uint64_t *sink)
{
	size_t i;

	*sink += r->address ^ r->class_addr ^ r->memsize ^ r->nrefs;
	for (i = 0; i < r->nrefs; i++)
		*sink += r->refs[i];
	if (r->file.len)
		*sink += (unsigned char)r->file.ptr[r->file.len - 1];
	if (r->text_len)
		*sink += (unsigned char)r->text[r->text_len - 1];
	/* allocation stacks: an object's stack, a STACK's frames, a FRAME's
	 * label */
	*sink += r->stack + r->nframes;
	for (i = 0; i < r->nframes; i++)
		*sink += r->frames[i];
	if (r->label.len)
		*sink += (unsigned char)r->label.ptr[r->label.len - 1];
	if (r->has & HD_HAS_REF_NAMES) {
		char name[16];

		for (i = 0; i < r->nrefs; i++)
			*sink += hd_ref_name_decode(name, sizeof(name),
						    r->ref_names[i]);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	hd_read_options o = HD_READ_OPTIONS_INIT;
	const hd_record *rec;
	hd_reader *r;
	hd_error err;
	uint64_t sink = 0;
	int pass;

	for (pass = 0; pass < 2; pass++) {
		o.flags = pass ? HD_READ_STRICT : 0;
		if (hd_reader_open_mem(&r, data, size, &o, &err))
			return 0;
		while (hd_reader_next(r, &rec, &err) == 0)
			touch(rec, &sink);
		hd_reader_free(r);
	}
	return sink == 42 ? 0 : 0;
}
