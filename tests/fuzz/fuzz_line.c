/*
 * fuzz_line.c - libFuzzer target: one line through the scanner, the
 * salvage path and the JSON unescaper, exactly as the reader calls them.
 */
#include "hd_int.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hd__scan sc;
	hd_record rec;
	char *copy, *out;
	int rc;

	/* a private copy, exactly size bytes, so ASan sees any over-read */
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	memset(&sc, 0, sizeof(sc));
	rc = hd__scan_line(&sc, copy, size, &rec);
	if (rc == HD__SCAN_OK && (rec.has & HD_HAS_REF_NAMES)) {
		char name[32];
		size_t k;

		/* ref_names is exactly parallel to references, each entry
		 * within the line */
		for (k = 0; k < rec.nrefs; k++) {
			hd_str t = rec.ref_names[k];

			if (t.ptr && (t.ptr < copy || t.ptr + t.len > copy + size))
				__builtin_trap();
			hd_ref_name_decode(name, sizeof(name), t);
		}
		if (!rec.names_close || rec.names_close >= size)
			__builtin_trap();
	}
	if (rc == HD__SCAN_BAD)
		hd__scan_salvage(&sc, copy, size, &rec);
	sc.strict = 1;
	hd__scan_line(&sc, copy, size, &rec);
	out = malloc(size ? size : 1);
	if (out) {
		hd_json_unescape(out, copy, size);
		free(out);
	}
	hd__scan_free(&sc);
	free(copy);
	return 0;
}
