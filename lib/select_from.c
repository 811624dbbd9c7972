/*
 * select_from.c - the --from reader: the addresses an NDJSON file
 * carries (another command's output, or jq's), with a count of the lines
 * that carry none.
 */
#include "select_int.h"

static void skip_line(hd_select *sel, uint64_t line)
{
	if (!sel->from_skipped++)
		sel->from_first = line;
}

/* A line the reader skips: it carries no address (with
 * HD_READ_ADDRESSES a line with one is returned). */
static void from_problem(const hd_problem *p, void *payload)
{
	if (!p->repaired)
		skip_line(payload, p->line);
}

/*
 * The addresses an NDJSON file carries: of its object records, and of
 * any line with an "address" member, with or without a "type" (jq's
 * output). The other lines are counted, blank and ROOT lines aside.
 */
int hd__select_add_from(hd_select *sel, const char *path, hd_error *err)
{
	hd_read_options o = HD_READ_OPTIONS_INIT;
	hd_reader *r = NULL;
	const hd_record *rec;
	int rc;

	/* an empty selection (diff -o with nothing new) is no error; a
	 * line with an address but no type is one (jq's '{address}') */
	o.flags = HD_READ_ALLOW_EMPTY | HD_READ_ADDRESSES;
	o.problem = from_problem;
	o.payload = sel;
	sel->from_skipped = sel->from_first = 0;
	if ((rc = hd_reader_open(&r, path, &o, err)))
		return rc;
	while ((rc = hd_reader_next(r, &rec, err)) == 0) {
		if (rec->kind == HD_REC_ROOT || rec->kind == HD_REC_SHAPE)
			continue;
		if (!(rec->has & HD_HAS_ADDRESS)) {
			skip_line(sel, rec->lineno);
			continue;
		}
		if (hd__select_add_addr(sel, rec->address)) {
			rc = hd__error(err, HD_ENOMEM, "out of memory");
			break;
		}
	}
	hd_reader_free(r);
	return rc == HD_ITEROVER ? 0 : rc;
}

uint64_t hd_select_from_skipped(const hd_select *sel, uint64_t *first_line)
{
	if (first_line)
		*first_line = sel ? sel->from_first : 0;
	return sel ? sel->from_skipped : 0;
}
