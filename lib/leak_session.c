/*
 * leak_session.c - the leak hunt wired once: order check, diff, leak
 * model, growth over the steps, totals and the caveats that qualify the
 * verdict. heapdump leaks, report, serve and the gem each open one
 * (hd_leak_session_new, hd_leak_session_run) and only render what it
 * holds, so that they judge the same dumps alike.
 *
 * The caveats were decided by the report's HTML page alone; here they
 * are a set of bits on the session, each with a name (heapdump-json(5))
 * and a sentence, for every front end to print.
 */
#include "hd_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct hd_leak_session {
	hd_store *s[HD_LEAK_SESSION_MAX_DUMPS];
	size_t n;
	size_t at;       /* the examined store: LATER, else AFTER */
	hd_leak_session_options o;
	hd_order_pair pairs[HD_LEAK_SESSION_MAX_DUMPS - 1];
	hd_diff_result *d;
	hd_leaks *l;
	hd_growth *g;
	hd_leaks_totals t;
	unsigned int caveats;
	int ran;
};

int hd_leak_session_new(hd_leak_session **out, hd_store *const *stores,
			size_t n, const hd_leak_session_options *opts,
			hd_error *err)
{
	hd_leak_session_options def = HD_LEAK_SESSION_OPTIONS_INIT;
	hd_leak_session *ls;
	size_t k;
	int rc;

	if (!out)
		return hd__error(err, HD_EINVAL, "leak session: no output");
	*out = NULL;
	if (!opts)
		opts = &def;
	if (!stores || n < 2 || n > HD_LEAK_SESSION_MAX_DUMPS)
		return hd__error(err, HD_EINVAL,
				 "leak session: 2 to %d dumps, not %zu",
				 HD_LEAK_SESSION_MAX_DUMPS, n);
	if (opts->version < 1 || opts->version > HD_LEAK_SESSION_OPTIONS_VERSION)
		return hd__error(err, HD_EINVAL,
				 "leak session: options version %u",
				 opts->version);
	if (!(opts->min_share >= 0.0 && opts->min_share <= 1.0) ||
	    !opts->top)
		return hd__error(err, HD_EINVAL,
				 "leak session: min_share 0 to 1, top 1 or "
				 "more");
	for (k = 0; k < n; k++)
		if (!stores[k])
			return hd__error(err, HD_EINVAL,
					 "leak session: no store %zu", k);
	if (!(ls = calloc(1, sizeof(*ls))))
		return hd__error(err, HD_ENOMEM, "out of memory");
	memcpy(ls->s, stores, n * sizeof(*stores));
	ls->n = n;
	ls->o = *opts;
	ls->o.origins = NULL; /* not kept: the pairs hold them */
	if ((rc = hd_order_check(ls->pairs, (const hd_store *const *)stores,
				 opts->origins, n, err))) {
		free(ls);
		return rc;
	}
	*out = ls;
	return 0;
}

const hd_order_pair *hd_leak_session_order(const hd_leak_session *ls,
					   size_t *n_out)
{
	if (n_out)
		*n_out = ls ? ls->n - 1 : 0;
	return ls ? ls->pairs : NULL;
}

/* The caveats of a run session: what the report's page listed. */
static unsigned int judge(const hd_leak_session *ls)
{
	const hd_diff_result *d = ls->d;
	const hd_leaks_totals *t = &ls->t;
	unsigned int c = 0;
	size_t k;

	for (k = 0; k + 1 < ls->n; k++) {
		if (ls->pairs[k].flags & HD_ORDER_REVERSED)
			c |= HD_CAVEAT_ORDER;
		if (ls->pairs[k].flags & HD_ORDER_OTHER_PROCESS)
			c |= HD_CAVEAT_OTHER_PROCESS;
		else if (ls->pairs[k].flags & HD_ORDER_FEW_SHARED)
			c |= HD_CAVEAT_FEW_SHARED;
		/* traced dumps follow moved objects by their generation */
		if (ls->pairs[k].flags & HD_ORDER_COMPACTED &&
		    !(ls->pairs[k].traced[0] && ls->pairs[k].traced[1]))
			c |= HD_CAVEAT_COMPACTED;
	}
	if (!d->has_later)
		c |= HD_CAVEAT_TWO_DUMPS;
	if (!d->added.n)
		c |= HD_CAVEAT_NOTHING_NEW;
	else if (d->has_later && !t->leak_count)
		c |= HD_CAVEAT_NOTHING_LEFT;
	else if (!t->groups)
		c |= HD_CAVEAT_NO_SUSPECTS;
	if (d->uncertain)
		c |= HD_CAVEAT_UNCERTAIN;
	if (d->object_id_skipped)
		c |= HD_CAVEAT_OBJECT_ID_SKIPPED;
	if (d->untraced_grew[0] || d->untraced_grew[1])
		c |= HD_CAVEAT_TRACE_LOST;
	if (t->saturated || d->memsize_saturated)
		c |= HD_CAVEAT_SATURATED;
	if (t->folded)
		c |= HD_CAVEAT_FOLDED;
	if (t->vm_count || t->unreached_count || t->joint ||
	    t->passed_memsize)
		c |= HD_CAVEAT_SHARES;
	return c;
}

int hd_leak_session_run(hd_leak_session *ls, hd_error *err)
{
	hd_leaks_options lo = HD_LEAKS_OPTIONS_INIT;
	int rc;

	if (!ls)
		return hd__error(err, HD_EINVAL, "leak session: NULL");
	if (ls->ran)
		return 0;
	if ((rc = hd_diff(&ls->d, ls->s[0], ls->s[1],
			  ls->n > 2 ? ls->s[ls->n - 1] : NULL, &ls->o.diff,
			  err)))
		return rc;
	/* with LATER, the leak as LATER holds it */
	ls->at = ls->d->has_later ? ls->n - 1 : 1;
	lo.flags = ls->o.leaks_flags;
	lo.min_share = ls->o.min_share;
	lo.top = ls->o.top;
	lo.min_leak = ls->o.min_leak;
	lo.before = ls->d->has_later ? NULL : ls->s[0];
	if ((rc = hd_leaks_build(&ls->l, ls->s[ls->at], ls->d, &lo, err)))
		return rc;
	/* the verdict names a collection that grows at every step (three
	 * dumps or more) and weighs the growth in place (two or more) */
	if (((rc = hd_growth_build(&ls->g, (const hd_store *const *)ls->s,
				   ls->n, err)) ||
	     (rc = hd_leaks_set_growth(ls->l, ls->g, err))))
		return rc;
	/* a collection replaced at every step, followed through its
	 * holder's slot */
	hd__leaks_follow_slot(ls->l, (const hd_store *const *)ls->s, ls->n);
	hd_leaks_totals_get(&ls->t, ls->l);
	ls->caveats = judge(ls);
	ls->ran = 1;
	return 0;
}

hd_store *const *hd__leak_session_stores(const hd_leak_session *ls,
					 size_t *n)
{
	*n = ls ? ls->n : 0;
	return ls ? ls->s : NULL;
}

size_t hd_leak_session_ndumps(const hd_leak_session *ls)
{
	return ls ? ls->n : 0;
}

size_t hd_leak_session_at(const hd_leak_session *ls)
{
	return ls ? ls->at : 0;
}

const hd_store *hd_leak_session_store(const hd_leak_session *ls)
{
	return ls && ls->ran ? ls->s[ls->at] : NULL;
}

const hd_diff_result *hd_leak_session_diff(const hd_leak_session *ls)
{
	return ls ? ls->d : NULL;
}

const hd_leaks *hd_leak_session_leaks(const hd_leak_session *ls)
{
	return ls ? ls->l : NULL;
}

const hd_growth *hd_leak_session_growth(const hd_leak_session *ls)
{
	/* two dumps make one step: no collection is said to grow (the
	 * growth in place is weighed all the same, hd_leaks_set_growth) */
	return ls && ls->n > 2 ? ls->g : NULL;
}

const hd_leaks_totals *hd_leak_session_totals(const hd_leak_session *ls)
{
	return ls && ls->ran ? &ls->t : NULL;
}

const hd_leak_session_options *hd_leak_session_options_get(
	const hd_leak_session *ls)
{
	return ls ? &ls->o : NULL;
}

unsigned int hd_leak_session_caveats(const hd_leak_session *ls)
{
	return ls && ls->ran ? ls->caveats : 0;
}

/* ---- the caveats in words ---- */

static const struct {
	unsigned int bit;
	const char *name;
	int warning;
} caveat_info[HD_CAVEAT__COUNT] = {
	{ HD_CAVEAT_ORDER, "order", 1 },
	{ HD_CAVEAT_OTHER_PROCESS, "other-process", 1 },
	{ HD_CAVEAT_FEW_SHARED, "few-shared", 1 },
	{ HD_CAVEAT_TWO_DUMPS, "two-dumps", 1 },
	{ HD_CAVEAT_NOTHING_NEW, "nothing-new", 0 },
	{ HD_CAVEAT_NOTHING_LEFT, "nothing-left", 0 },
	{ HD_CAVEAT_NO_SUSPECTS, "no-suspects", 1 },
	{ HD_CAVEAT_UNCERTAIN, "uncertain", 0 },
	{ HD_CAVEAT_OBJECT_ID_SKIPPED, "object-id-skipped", 1 },
	{ HD_CAVEAT_SATURATED, "saturated", 1 },
	{ HD_CAVEAT_FOLDED, "folded", 0 },
	{ HD_CAVEAT_SHARES, "shares", 0 },
	{ HD_CAVEAT_TRACE_LOST, "trace-lost", 1 },
	{ HD_CAVEAT_COMPACTED, "compacted", 1 },
};

static int caveat_index(unsigned int caveat)
{
	int i;

	for (i = 0; i < HD_CAVEAT__COUNT; i++)
		if (caveat_info[i].bit == caveat)
			return i;
	return -1;
}

const char *hd_caveat_name(unsigned int caveat)
{
	int i = caveat_index(caveat);

	return i < 0 ? NULL : caveat_info[i].name;
}

int hd_caveat_is_warning(unsigned int caveat)
{
	int i = caveat_index(caveat);

	return i < 0 ? 0 : caveat_info[i].warning;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* snprintf that returns a size_t (0 on an encoding error) */
static size_t put(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n < 0 ? 0 : (size_t)n;
}

/* The first pair (1-based dump numbers in *a) with one of flags. */
static int pair_with(const hd_leak_session *ls, unsigned int flags,
		     size_t *a)
{
	size_t k;

	for (k = 0; k + 1 < ls->n; k++)
		if (ls->pairs[k].flags & flags) {
			*a = k + 1;
			return 1;
		}
	return 0;
}

static size_t order_text(char *buf, size_t size, const hd_leak_session *ls,
			 unsigned int caveat)
{
	size_t a = 0;
	const hd_order_pair *p;
	char x[32], y[32];

	if (caveat == HD_CAVEAT_ORDER) {
		pair_with(ls, HD_ORDER_REVERSED, &a);
		return put(buf, size,
			   "dumps %zu and %zu seem to be in the wrong order: "
			   "they were compared as given (forced), and what "
			   "looks new may be what was freed", a, a + 1);
	}
	if (caveat == HD_CAVEAT_OTHER_PROCESS) {
		pair_with(ls, HD_ORDER_OTHER_PROCESS, &a);
		p = &ls->pairs[a - 1];
		return put(buf, size,
			   "dumps %zu (pid %llu) and %zu (pid %llu) are of two "
			   "different processes, by their sidecars: the "
			   "objects of one are all new to the other", a,
			   (unsigned long long)p->origin[0].pid, a + 1,
			   (unsigned long long)p->origin[1].pid);
	}
	pair_with(ls, HD_ORDER_FEW_SHARED, &a);
	p = &ls->pairs[a - 1];
	return put(buf, size,
		   "dumps %zu and %zu have only %s of %s addresses in "
		   "common: dumps of two different processes, or a compaction "
		   "moved nearly everything between them; then every object "
		   "looks new", a, a + 1, hd__commas(p->shared, x),
		   hd__commas(p->objects[0] < p->objects[1] ? p->objects[0] :
							      p->objects[1],
			      y));
}

static size_t shares_text(char *buf, size_t size, const hd_leak_session *ls)
{
	const hd_leaks_totals *t = &ls->t;
	const char *what = ls->d->has_later ? "leak" : "growth";
	uint64_t sus = t->leak_memsize - t->folded_memsize - t->vm_memsize -
		       t->unreached_memsize;
	char x[32];
	size_t n = put(buf, size,
		       "shares of the %s: suspects %.1f%% (%s of them held "
		       "jointly), folded %.1f%%, the VM's own tables %.1f%%, "
		       "unreached %.1f%%: 100%%", what,
		       pct(sus, t->leak_memsize), hd__commas(t->joint, x),
		       pct(t->folded_memsize, t->leak_memsize),
		       pct(t->vm_memsize, t->leak_memsize),
		       pct(t->unreached_memsize, t->leak_memsize));

	if (t->passed_memsize)
		n += put(n < size ? buf + n : NULL, n < size ? size - n : 0,
			 "; the verdict passed over %.1f%% held by stacks or "
			 "bounded caches", pct(t->passed_memsize,
					       t->leak_memsize));
	return n;
}

size_t hd_leak_session_caveat_text(char *buf, size_t size,
				   const hd_leak_session *ls,
				   unsigned int caveat)
{
	const hd_diff_result *d;
	const hd_leaks_totals *t;
	char x[32], y[32], bytes[32];

	if (size)
		buf[0] = '\0';
	if (!ls || !ls->ran || !(ls->caveats & caveat) ||
	    caveat_index(caveat) < 0)
		return 0;
	d = ls->d;
	t = &ls->t;
	switch (caveat) {
	case HD_CAVEAT_ORDER:
	case HD_CAVEAT_OTHER_PROCESS:
	case HD_CAVEAT_FEW_SHARED:
		return order_text(buf, size, ls, caveat);
	case HD_CAVEAT_TWO_DUMPS:
		return put(buf, size,
			   "two dumps: this is growth, not yet a leak; what a "
			   "request allocates and frees later counts here too "
			   "(a third dump, LATER, keeps only what stays "
			   "alive)");
	case HD_CAVEAT_NOTHING_NEW:
		return put(buf, size,
			   "no object of after's %s is new since before: "
			   "nothing grew between the dumps, or they are the "
			   "same moment", hd__commas(d->objects[1], x));
	case HD_CAVEAT_NOTHING_LEFT:
		return put(buf, size,
			   "later holds none of the %s objects new in after; "
			   "objects new only in later were not examined",
			   hd__commas(d->added.n, x));
	case HD_CAVEAT_NO_SUSPECTS:
		return put(buf, size,
			   "no suspects: nothing new is held by an old object "
			   "or a root; the new objects are held only by each "
			   "other");
	case HD_CAVEAT_UNCERTAIN:
		return put(buf, size,
			   "%s objects were judged old on an uncertain match "
			   "(same address, type and class); %s",
			   hd__commas(d->uncertain, x),
			   d->traced ? "the dumps are traced, but these "
				       "objects have no allocation generation" :
				       "allocation tracing in the dumps makes "
				       "it certain");
	case HD_CAVEAT_COMPACTED: {
		const hd_order_pair *p;
		size_t a = 0;

		pair_with(ls, HD_ORDER_COMPACTED, &a);
		p = &ls->pairs[a - 1];
		return put(buf, size,
			   "a compaction ran between dumps %zu and %zu "
			   "(GC.stat compact_count %llu -> %llu, by their "
			   "sidecars): without allocation tracing an object it "
			   "moved looks new, and the leak may hold old objects; "
			   "trace allocations (HeapDump.trace_allocations_start) "
			   "or take the dumps with GC.auto_compact off", a,
			   a + 1,
			   (unsigned long long)(p->origin[0].compactions - 1),
			   (unsigned long long)(p->origin[1].compactions - 1));
	}
	case HD_CAVEAT_TRACE_LOST: {
		int k = d->untraced_grew[0] ? 0 : 1;

		return put(buf, size,
			   "dumps %d and %d are traced, but the second has %s "
			   "more objects without an allocation generation: %s; "
			   "such an object may be new, and is judged by its "
			   "address", k + 1, k + 2,
			   hd__commas(d->untraced_grew[k], x),
			   d->moved[k] ? "compaction moved objects between "
					 "them and the tracer lost the "
					 "allocations of some (Ruby 3.3 does; "
					 "take the dumps with GC.auto_compact "
					 "off, or on Ruby 3.4 or later)" :
				         "tracing was stopped between them");
	}
	case HD_CAVEAT_OBJECT_ID_SKIPPED:
		return put(buf, size,
			   "object ids were not compared: a source dump could "
			   "not be read again");
	case HD_CAVEAT_SATURATED:
		return put(buf, size,
			   "some memsizes add up to 2^64-1 bytes or more: "
			   "those sums stop there and are lower bounds");
	case HD_CAVEAT_FOLDED:
		hd_bytes_text(bytes, sizeof(bytes), t->folded_memsize);
		return put(buf, size,
			   "%s group%s under %g%% of the %s each were folded: "
			   "%s objects, %s", hd__commas(t->folded, x),
			   t->folded == 1 ? "" : "s", ls->o.min_share * 100.0,
			   d->has_later ? "leak" : "growth",
			   hd__commas(t->folded_count, y), bytes);
	default:
		return shares_text(buf, size, ls);
	}
}

void hd_leak_session_free(hd_leak_session *ls)
{
	if (!ls)
		return;
	hd_growth_free(ls->g);
	hd_leaks_free(ls->l);
	hd_diff_result_free(ls->d);
	free(ls);
}
