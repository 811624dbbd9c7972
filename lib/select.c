/*
 * select.c - selections of objects: the one grammar every graph command
 * takes (--address, --class, --name, --type, --file, --location,
 * --generation, --from, --via). Values of one key are alternatives; different
 * keys must all hold. This file parses the values into an hd_select;
 * select_from.c reads --from files, select_regex.c guards the C
 * library's regcomp, select_eval.c evaluates a selection over a store
 * and select_explain.c says why one picks nothing.
 */
#include "select_int.h"

#include <stdlib.h>

const char *const hd__select_keys[K__COUNT] = {
	"address", "class", "type", "file", "location", "generation", "from",
	"name", "via",
};

int hd_select_new(hd_select **out, hd_error *err)
{
	HD_ASSERT_ARG(out);
	*out = hd__calloc(1, sizeof(**out));
	return *out ? 0 : hd__error(err, HD_ENOMEM, "out of memory");
}

int hd_select_empty(const hd_select *sel)
{
	return !sel || !sel->used;
}

static char *dup_n(const char *s, size_t n)
{
	char *d = hd__malloc(n + 1);

	if (d) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

uint64_t hd_select_address_count(const hd_select *sel)
{
	return sel ? sel->naddrs : 0;
}

static int parse_u64(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (!n)
		return -1;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9' || v > (UINT64_MAX - 9) / 10)
			return -1;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*out = v;
	return 0;
}

/* N, N..M, N.. or ..M */
static int add_gen(hd_select *sel, const char *v, hd_error *err)
{
	const char *dots = strstr(v, "..");
	struct range r = { 0, UINT64_MAX };
	size_t n = strlen(v);

	if (!dots) {
		if (parse_u64(v, n, &r.lo))
			goto bad;
		r.hi = r.lo;
	} else {
		if (dots > v && parse_u64(v, (size_t)(dots - v), &r.lo))
			goto bad;
		if (dots[2] && parse_u64(dots + 2, strlen(dots + 2), &r.hi))
			goto bad;
		if ((dots == v && !dots[2]) || r.lo > r.hi)
			goto bad;
	}
	if (hd__grow((void **)&sel->gens, &sel->gens_cap, sel->ngens + 1,
		     sizeof(*sel->gens)))
		return hd__error(err, HD_ENOMEM, "out of memory");
	sel->gens[sel->ngens++] = r;
	return 0;
bad:
	return hd__error(err, HD_EINVAL,
			 "generation '%s': want N, N..M, N.. or ..M", v);
}

static void pattern_free(struct pattern *p)
{
	if (p->is_re)
		regfree(&p->re);
	hd__free(p->text, strlen(p->text) + 1);
}

/* A name or a /regex/ of key ("class", "name") onto *v. */
static int add_pattern(struct pattern **v, size_t *nv, size_t *cap,
		       const char *key, const char *value, hd_error *err)
{
	size_t n = strlen(value);
	struct pattern p;
	char msg[128];
	int rc;

	memset(&p, 0, sizeof(p));
	if (n >= 2 && value[0] == '/' && value[n - 1] == '/') {
		char *re;

		if ((rc = hd__re_check(key, value + 1, n - 2, err)))
			return rc;
		if (!(re = dup_n(value + 1, n - 2)))
			return hd__error(err, HD_ENOMEM, "out of memory");
		rc = regcomp(&p.re, re, REG_EXTENDED | REG_NOSUB);
		hd__free(re, n - 1);
		if (rc) {
			regerror(rc, &p.re, msg, sizeof(msg));
			return hd__error(err, HD_EINVAL, "%s %s: %s", key,
					 value, msg);
		}
		p.is_re = 1;
	}
	if (!(p.text = dup_n(value, n)) ||
	    hd__grow((void **)v, cap, *nv + 1, sizeof(**v))) {
		if (p.text)
			hd__free(p.text, n + 1);
		if (p.is_re)
			regfree(&p.re);
		return hd__error(err, HD_ENOMEM, "out of memory");
	}
	(*v)[(*nv)++] = p;
	return 0;
}

static int add_string(char ***v, size_t *n, size_t *cap, const char *s)
{
	char *d = dup_n(s, strlen(s));

	if (!d || hd__grow((void **)v, cap, *n + 1, sizeof(**v))) {
		if (d)
			hd__free(d, strlen(s) + 1);
		return HD_ENOMEM;
	}
	(*v)[(*n)++] = d;
	return 0;
}

static int add_location(hd_select *sel, const char *v, hd_error *err)
{
	const char *colon = strrchr(v, ':');
	struct location l;

	if (!colon || colon == v ||
	    parse_u64(colon + 1, strlen(colon + 1), &l.line))
		return hd__error(err, HD_EINVAL,
				 "location '%s': want FILE:LINE", v);
	if (!(l.file = dup_n(v, (size_t)(colon - v))) ||
	    hd__grow((void **)&sel->locs, &sel->locs_cap, sel->nlocs + 1,
		     sizeof(*sel->locs))) {
		if (l.file)
			hd__free(l.file, (size_t)(colon - v) + 1);
		return hd__error(err, HD_ENOMEM, "out of memory");
	}
	sel->locs[sel->nlocs++] = l;
	return 0;
}

int hd_select_add(hd_select *sel, const char *key, const char *value,
		  hd_error *err)
{
	unsigned k;
	uint64_t a;
	int t, rc = 0;

	HD_ASSERT_ARG(sel && key && value);
	for (k = 0; k < K__COUNT; k++)
		if (strcmp(key, hd__select_keys[k]) == 0)
			break;
	switch (k) {
	case K_ADDRESS:
		if (hd__parse_hex(value, strlen(value), &a))
			return hd__error(err, HD_EINVAL,
					 "address '%s' is not hexadecimal",
					 value);
		rc = hd__select_add_addr(sel, a);
		break;
	case K_CLASS:
		if ((rc = add_pattern(&sel->classes, &sel->nclasses,
				      &sel->classes_cap, key, value, err)))
			return rc;
		break;
	case K_NAME:
		if ((rc = add_pattern(&sel->names, &sel->nnames,
				      &sel->names_cap, key, value, err)))
			return rc;
		break;
	case K_VIA:
		if ((rc = add_pattern(&sel->vias, &sel->nvias,
				      &sel->vias_cap, key, value, err)))
			return rc;
		break;
	case K_TYPE:
		t = hd_type_from_name(value, strlen(value));
		if (t == HD_T_UNKNOWN && strcmp(value, "UNKNOWN") != 0)
			return hd__error(err, HD_EINVAL, "unknown type '%s'",
					 value);
		sel->types |= 1u << t;
		break;
	case K_FILE:
		rc = add_string(&sel->files, &sel->nfiles, &sel->files_cap,
				value);
		break;
	case K_LOCATION:
		if ((rc = add_location(sel, value, err)))
			return rc;
		break;
	case K_GENERATION:
		if ((rc = add_gen(sel, value, err)))
			return rc;
		break;
	case K_FROM:
		if ((rc = hd__select_add_from(sel, value, err)))
			return rc;
		k = K_ADDRESS; /* --from is a list of addresses */
		break;
	default:
		return hd__error(err, HD_EINVAL, "unknown selection key '%s'",
				 key);
	}
	if (rc)
		return hd__error(err, HD_ENOMEM, "out of memory");
	sel->used |= 1u << k;
	return 0;
}

void hd_select_free(hd_select *sel)
{
	size_t i;

	if (!sel)
		return;
	for (i = 0; i < sel->nclasses; i++)
		pattern_free(&sel->classes[i]);
	for (i = 0; i < sel->nnames; i++)
		pattern_free(&sel->names[i]);
	for (i = 0; i < sel->nvias; i++)
		pattern_free(&sel->vias[i]);
	for (i = 0; i < sel->nfiles; i++)
		hd__free(sel->files[i], strlen(sel->files[i]) + 1);
	for (i = 0; i < sel->nlocs; i++)
		hd__free(sel->locs[i].file, strlen(sel->locs[i].file) + 1);
	hd__free(sel->addrs, sel->addrs_cap * sizeof(*sel->addrs));
	hd__free(sel->classes, sel->classes_cap * sizeof(*sel->classes));
	hd__free(sel->names, sel->names_cap * sizeof(*sel->names));
	hd__free(sel->vias, sel->vias_cap * sizeof(*sel->vias));
	hd__free(sel->files, sel->files_cap * sizeof(*sel->files));
	hd__free(sel->locs, sel->locs_cap * sizeof(*sel->locs));
	hd__free(sel->gens, sel->gens_cap * sizeof(*sel->gens));
	hd__free(sel, sizeof(*sel));
}
