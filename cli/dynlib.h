/*
 * dynlib.h - the libraries only some commands call (libmicrohttpd for
 * serve, Graphviz's libgvc for the drawings), loaded by dlopen(3) when
 * such a command first needs them, so that stats and every other
 * command start without mapping and relocating them (and the TLS and
 * codec libraries they pull in).
 */
#ifndef HD_CLI_DYNLIB_H
#define HD_CLI_DYNLIB_H

#include <stddef.h>

/* One function to look up: its name, and where in the caller's table of
 * function pointers (offsetof) its address goes. */
struct cli_dynsym {
	const char *name;
	size_t off;
};

/*
 * Loads the library file soname (RTLD_NOW | RTLD_LOCAL) and fills the
 * table at api with the n functions of syms, found in it or the
 * libraries it needs. Returns 0 (also at later calls, which do
 * nothing), or EXIT_FAIL after a message naming what to install (pkg);
 * a failure is remembered and said once. *state is the caller's: 0
 * before the first call.
 */
int cli_dynload(int *state, const char *soname, const char *pkg,
		const struct cli_dynsym *syms, size_t n, void *api);

#endif
