/*
 * fuzz_msnap.c - libFuzzer target: a malloc snapshot through the reader
 * (lenient and strict) and the report, as heapdump malloc reads it:
 * every site, the leak scan, the verdict.
 */
#include "heapdump.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void one(const uint8_t *data, size_t size, int strict)
{
	hd_msnap_options o = HD_MSNAP_OPTIONS_INIT;
	hd_mreport *r = NULL;
	hd_msnap *m = NULL;
	hd_msnap_item it;
	hd_error err;
	size_t i, n;

	o.strict = strict;
	if (hd_msnap_open_mem(&m, (const char *)data, size, &o, &err))
		return;
	if (strict) {
		/* every string within its length, NUL-terminated */
		while (hd_msnap_next(m, &it, &err) == 0)
			if ((it.site && strlen(it.site) > it.site_len) ||
			    strlen(it.blind) > size)
				__builtin_trap();
		hd_msnap_close(m);
		return;
	}
	if (hd_mreport_new(&r, NULL, &err) == 0 &&
	    hd_mreport_add(r, m, "fuzz", &err) == 0 &&
	    hd_mreport_finish(r, &err) == 0) {
		n = hd_mreport_site_count(r);
		for (i = 0; i < n; i++)
			if (!hd_mreport_site_get(r, i) ||
			    hd_mreport_site_get(r, i)->site[
				    hd_mreport_site_get(r, i)->site_len] != '\0')
				__builtin_trap();
		if (strlen(hd_mreport_verdict(r, NULL, NULL)) >= 512)
			__builtin_trap();
	}
	hd_mreport_free(r);
	hd_msnap_close(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	one(data, size, 0);
	one(data, size, 1);
	return 0;
}
