/*
 * dynload.c - a library only some calls need (SQLite for hd_sql_open,
 * ISA-L for a gzip dump), loaded by dlopen(3) at its first use rather
 * than linked: linking them made every start of a program map and
 * relocate them (and what they pull in), which was a tenth of the time
 * `heapdump stats` took on a 100 MB dump. The caller's table of function
 * pointers, typed by the library's own header, is filled from the
 * library, once, under a lock: several threads may read gzip dumps.
 *
 * Not in the gem (src/extconf.rb leaves it out, with sql.c): the gem
 * inflates with zlib and has no SQL.
 */
#include "util_int.h"

#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static int load(struct hd__dynlib *lib, hd_error *err)
{
	void *h, *fn;
	size_t i;

	/* kept until exit: its functions are in lib->api */
	if (!(h = dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL)))
		return hd__error(err, HD_ERROR,
				 "cannot load %s (%s): install %s", lib->soname,
				 dlerror(), lib->pkg);
	for (i = 0; i < lib->n; i++) {
		dlerror();
		if (!(fn = dlsym(h, lib->syms[i].name)))
			return hd__error(err, HD_ERROR,
					 "%s has no function %s: install %s, "
					 "or build again against the one "
					 "installed", lib->soname,
					 lib->syms[i].name, lib->pkg);
		/* POSIX: a function's address converts through void * */
		memcpy((char *)lib->api + lib->syms[i].off, &fn, sizeof(fn));
	}
	return 0;
}

int hd__dynload(struct hd__dynlib *lib, hd_error *err)
{
	int rc = 0;

	if (__atomic_load_n(&lib->loaded, __ATOMIC_ACQUIRE))
		return 0;
	pthread_mutex_lock(&lock);
	/* a library that failed is tried again at the next call */
	if (!lib->loaded && !(rc = load(lib, err)))
		__atomic_store_n(&lib->loaded, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&lock);
	return rc;
}
