/*
 * dynlib.c - loads a library that only some commands call (dynlib.h).
 *
 * Neither libgvc, libmicrohttpd, libsqlite3 nor libedit is linked: each
 * is loaded with dlopen(3) by the file name (SONAME) the Makefile read
 * from the library it compiled against, when a drawing, serve, a query
 * or the query shell on a terminal first needs it, into a table of its
 * functions typed by its own header. So stats and every other command
 * start without mapping or relocating them and the TLS, codec and font
 * libraries they pull in (about three quarters of a start's
 * instructions; tests/cli/startup.sh).
 */
#include "dynlib.h"
#include "common.h"

#include <dlfcn.h>
#include <string.h>

enum { DL_NONE = 0, DL_LOADED = 1, DL_FAILED = 2 };

int cli_dynload(int *state, const char *soname, const char *pkg,
		const struct cli_dynsym *syms, size_t n, void *api)
{
	void *h, *fn;
	size_t i;

	if (*state == DL_LOADED)
		return EXIT_OK;
	if (*state == DL_FAILED)
		return EXIT_FAIL;
	*state = DL_FAILED;
	/* kept until exit: its functions are in api */
	if (!(h = dlopen(soname, RTLD_NOW | RTLD_LOCAL))) {
		cli_error("cannot load %s (%s): install %s (make deps)",
			  soname, dlerror(), pkg);
		return EXIT_FAIL;
	}
	for (i = 0; i < n; i++) {
		dlerror();
		if (!(fn = dlsym(h, syms[i].name))) {
			cli_error("%s has no function %s: install %s "
				  "(make deps), or build heapdump again",
				  soname, syms[i].name, pkg);
			return EXIT_FAIL;
		}
		/* POSIX: a function's address converts through void * */
		memcpy((char *)api + syms[i].off, &fn, sizeof(fn));
	}
	*state = DL_LOADED;
	return EXIT_OK;
}
