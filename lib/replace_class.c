/*
 * replace_class.c - hd_replace_class(): a dump rewritten with class names
 * instead of class pointers.
 *
 * Two passes over the input: the first feeds every record to a class
 * table and resolves the names, the second rewrites each line. A record
 * is edited where the scanner found its members (class_at, class_end,
 * refs_close, obj_close), so every other byte stays as it was, and then
 * goes through hd_json_repair(), which leaves valid JSON untouched.
 */
#include "hd_int.h"
#include "util/json_out.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * The output: hd_outfile (outfile.c) decides where it goes. An existing
 * regular file keeps its mode; a new one gets the input's. The input
 * itself is refused unless in place.
 */
static int out_open(hd_outfile **o, const char *path, const struct stat *in,
		    const char *like, int in_place, hd_error *err)
{
	struct stat sb;

	if (!in_place && in && strcmp(path, "-") != 0 &&
	    stat(path, &sb) == 0 && sb.st_dev == in->st_dev &&
	    sb.st_ino == in->st_ino)
		return hd__error(err, HD_EINVAL,
				 "'%s' is the input dump: rewrite it in place instead",
				 path);
	return hd_outfile_open(o, path, like, HD_OUTFILE_KEEP_MODE, err);
}

/* ===================================================================== */
/* hd_replace_class                                                      */
/* ===================================================================== */

struct job {
	hd_replace_options o;
	hd_replace_stats st;
	struct hd__intern strs;
	struct hd__classtab ct;
	struct hd__scan rescan;  /* for repaired records */
	hd_record rerec;
	struct hd__buf line;         /* the edited record */
	struct hd__buf fixed;        /* the repaired record */
	hd_outfile *out;
	uint64_t done;           /* bytes of the first pass */
	uint64_t total;          /* bytes of both passes, 0 if unknown */
};

/* The display name of the class at address; 0 if there is none. */
static int class_name(const struct job *j, uint64_t address, hd_str *name)
{
	const struct hd__class *cl = hd__classtab_find(&j->ct, address);
	size_t n;
	const char *p;

	if (!cl || cl->display == HD_STR_NONE)
		return 0;
	p = hd__intern_str(&j->strs, cl->display, &n);
	if (!n)
		return 0;
	name->ptr = p;
	name->len = n;
	return 1;
}

enum { ED_CLASS, ED_REF, ED_REFS };

struct edit {
	size_t at, end;
	int what;
};

/*
 * The record with its class value replaced by the name and the pointer
 * moved to class_address, and with --add-ref the pointer appended to the
 * references, every other byte as it was.
 */
static int edit_record(struct job *j, const hd_record *rec,
		       const struct hd__scan *sc, hd_str name)
{
	const char *t = rec->text;
	const char *ptr = t + sc->class_at;
	size_t plen = sc->class_end - sc->class_at, pos = 0, i;
	struct edit e[2];
	unsigned n = 1;
	struct hd__sink o;

	e[0].at = sc->class_at;
	e[0].end = sc->class_end;
	e[0].what = ED_CLASS;
	if (j->o.flags & HD_REPLACE_ADD_REF) {
		if ((rec->has & HD_HAS_REFERENCES) && sc->refs_close) {
			e[1].at = e[1].end = sc->refs_close;
			e[1].what = ED_REF;
		} else {
			e[1].at = e[1].end = sc->obj_close;
			e[1].what = ED_REFS;
		}
		if (e[1].at < e[0].at) {
			struct edit tmp = e[0];

			e[0] = e[1];
			e[1] = tmp;
		}
		n = 2;
	}
	j->line.len = 0;
	for (;;) {
		if (hd__buf_sink(&j->line, &o, rec->text_len + name.len * 6 +
						       plen * 2 + 64))
			return HD_ENOMEM;
		pos = 0;
		for (i = 0; i < n; i++) {
			hd__put(&o, t + pos, e[i].at - pos);
			if (e[i].what == ED_CLASS) {
				hd__put_json_str(&o, name.ptr, name.len);
				hd__put(&o, ", \"class_address\":", 18);
				hd__put(&o, ptr, plen);
			} else if (e[i].what == ED_REF) {
				if (rec->nrefs)
					hd__put(&o, ", ", 2);
				hd__put(&o, ptr, plen);
			} else {
				hd__put(&o, ", \"references\":[", 16);
				hd__put(&o, ptr, plen);
				hd__put_ch(&o, ']');
			}
			pos = e[i].end;
		}
		hd__put(&o, t + pos, rec->text_len - pos);
		if (o.len <= o.size)
			break;
		if (hd__buf_reserve(&j->line, o.len))
			return HD_ENOMEM;
	}
	j->line.len = o.len;
	return 0;
}

static void put_addr(struct hd__sink *o, const char *key, uint64_t v)
{
	char tmp[64];
	int n = snprintf(tmp, sizeof(tmp), "%s\"0x%llx\"", key,
			 (unsigned long long)v);

	hd__put(o, tmp, (size_t)n);
}

static void put_u64(struct hd__sink *o, const char *key, uint64_t v)
{
	char tmp[64];
	int n = snprintf(tmp, sizeof(tmp), "%s%llu", key,
			 (unsigned long long)v);

	hd__put(o, tmp, (size_t)n);
}

/*
 * A valid record from the fields the salvage of an invalid line
 * recovered; name is the class's name, or { NULL, 0 }.
 */
static void put_salvaged(const struct job *j, struct hd__sink *o,
			 const hd_record *rec, int cls, hd_str name)
{
	int add_ref = name.ptr && (j->o.flags & HD_REPLACE_ADD_REF);
	size_t i;

	hd__put_ch(o, '{');
	if (rec->kind == HD_REC_ROOT) {
		hd__put(o, "\"type\":\"ROOT\", \"root\":\"", 23);
		hd__put_content(o, rec->root.ptr, rec->root.len);
		hd__put_ch(o, '"');
	} else {
		if (rec->has & HD_HAS_ADDRESS)
			put_addr(o, "\"address\":", rec->address);
		if (rec->has & HD_HAS_ADDRESS)
			hd__put(o, ", ", 2);
		hd__put(o, "\"type\":\"", 8);
		if (rec->type != HD_T_UNKNOWN)
			hd__put(o, hd_type_name(rec->type),
				strlen(hd_type_name(rec->type)));
		else
			hd__put_content(o, rec->type_name.ptr,
					rec->type_name.len);
		hd__put_ch(o, '"');
	}
	if (cls && name.ptr) {
		hd__put(o, ", \"class\":", 10);
		hd__put_json_str(o, name.ptr, name.len);
		put_addr(o, ", \"class_address\":", rec->class_addr);
	} else if (cls) {
		put_addr(o, ", \"class\":", rec->class_addr);
	}
	if (rec->has & HD_HAS_MEMSIZE)
		put_u64(o, ", \"memsize\":", rec->memsize);
	if (rec->has & HD_HAS_GENERATION)
		put_u64(o, ", \"generation\":", rec->generation);
	if (rec->nrefs || add_ref) {
		hd__put(o, ", \"references\":[", 16);
		for (i = 0; i < rec->nrefs; i++)
			put_addr(o, i ? ", " : "", rec->refs[i]);
		if (add_ref)
			put_addr(o, rec->nrefs ? ", " : "", rec->class_addr);
		hd__put_ch(o, ']');
	}
	hd__put_ch(o, '}');
}

/* Writes rec as a record rebuilt from its salvaged fields. */
static int write_salvaged(struct job *j, const hd_record *rec,
			  hd_error *err)
{
	hd_str name = { NULL, 0 };
	int cls = rec->kind == HD_REC_OBJECT && (rec->has & HD_HAS_CLASS);
	size_t hint = 256 + rec->root.len * 6 + rec->type_name.len * 6 +
		      rec->nrefs * 24;
	struct hd__sink o;

	if (cls)
		class_name(j, rec->class_addr, &name);
	hint += name.len * 6;
	for (;;) {
		j->fixed.len = 0;
		if (hd__buf_sink(&j->fixed, &o, hint))
			return hd__error(err, HD_ENOMEM, "out of memory");
		put_salvaged(j, &o, rec, cls, name);
		hd__put_ch(&o, '\n');
		if (o.len <= o.size)
			break;
		hint = o.len;
	}
	j->st.salvaged++;
	if (cls && name.ptr)
		j->st.rewritten++;
	else if (cls)
		j->st.unresolved++;
	return hd_outfile_write(j->out, j->fixed.p, o.len, err);
}

/*
 * Writes text as one line of valid JSON. Returns HD_EPARSE, with nothing
 * written, when the repair cannot follow it.
 */
static int write_repaired(struct job *j, const char *text, size_t len,
			  hd_error *err)
{
	size_t n;
	int rc;

	if (hd__buf_reserve(&j->fixed, len + len / 8 + 64))
		return hd__error(err, HD_ENOMEM, "out of memory");
	rc = hd_json_repair(j->fixed.p, j->fixed.cap, &n, text, len, NULL);
	if (!rc && n + 1 > j->fixed.cap) {
		if (hd__buf_reserve(&j->fixed, n + 1))
			return hd__error(err, HD_ENOMEM, "out of memory");
		rc = hd_json_repair(j->fixed.p, j->fixed.cap, &n, text, len,
				    NULL);
	}
	if (rc)
		return rc;
	if (n != len || memcmp(j->fixed.p, text, len) != 0)
		j->st.escaped++;
	j->fixed.p[n++] = '\n';
	return hd_outfile_write(j->out, j->fixed.p, n, err);
}

enum { CL_NONE, CL_REWRITTEN, CL_UNRESOLVED, CL_NAMED };

/* One record of the second pass. */
static int rewrite(struct job *j, hd_reader *r, const hd_record *rec,
		   hd_error *err)
{
	const struct hd__scan *sc = hd__reader_scan(r);
	const hd_record *use = rec;
	const char *text = rec->text;
	size_t len = rec->text_len;
	int rc, what = CL_NONE;
	hd_str name;

	if (rec->origin & HD_O_REPAIRED) {
		/* the reader's positions may be those of a failed scan */
		rc = hd__scan_line(&j->rescan, rec->text, rec->text_len,
				   &j->rerec);
		if (rc < 0)
			return hd__error(err, rc, "out of memory");
		if (rc != HD__SCAN_OK)
			return write_salvaged(j, rec, err);
		j->rerec.text = rec->text;
		j->rerec.text_len = rec->text_len;
		j->rerec.origin |= rec->origin;
		use = &j->rerec;
		sc = &j->rescan;
	}
	if (use->kind == HD_REC_OBJECT && !(use->origin & HD_O_MEMPROF) &&
	    (use->has & HD_HAS_CLASS)) {
		if (use->has & HD_HAS_CLASS_NAME) {
			what = CL_NAMED;
		} else if (sc->class_end > sc->class_at + 2 &&
			   class_name(j, use->class_addr, &name)) {
			if (edit_record(j, use, sc, name))
				return hd__error(err, HD_ENOMEM,
						 "out of memory");
			text = j->line.p;
			len = j->line.len;
			what = CL_REWRITTEN;
		} else {
			what = CL_UNRESOLVED;
		}
	}
	rc = write_repaired(j, text, len, err);
	if (rc == HD_EPARSE)
		return write_salvaged(j, use, err);
	if (rc)
		return rc;
	if (what == CL_REWRITTEN)
		j->st.rewritten++;
	else if (what == CL_UNRESOLVED)
		j->st.unresolved++;
	else if (what == CL_NAMED)
		j->st.named++;
	return 0;
}

static void progress(struct job *j, hd_reader *r, uint64_t base)
{
	hd_read_stats rs;

	if (!j->o.progress)
		return;
	hd_reader_stats(&rs, r);
	j->o.progress(base + rs.bytes, j->total, j->o.progress_payload);
}

/* Pass 1: every class, then the names. */
static int read_classes(struct job *j, hd_reader *r, hd_error *err)
{
	const hd_record *rec;
	hd_read_stats rs;
	uint64_t n = 0;
	int rc;

	while ((rc = hd_reader_next(r, &rec, err)) == 0) {
		if (rec->kind == HD_REC_OBJECT && hd__classtab_add(&j->ct, rec))
			return hd__error(err, HD_ENOMEM, "out of memory");
		if ((++n & 0xffff) == 0)
			progress(j, r, 0);
	}
	if (rc != HD_ITEROVER)
		return rc;
	hd_reader_stats(&rs, r);
	j->done = rs.bytes;
	if (hd__classtab_resolve(&j->ct))
		return hd__error(err, HD_ENOMEM, "out of memory");
	return 0;
}

/* Pass 2: every line. */
static int write_records(struct job *j, hd_reader *r, hd_error *err)
{
	const hd_record *rec;
	uint64_t n = 0;
	int rc;

	while ((rc = hd_reader_next(r, &rec, err)) == 0) {
		if ((rc = rewrite(j, r, rec, err)))
			return rc;
		j->st.records++;
		if (rec->kind == HD_REC_OBJECT)
			j->st.objects++;
		if ((++n & 0xffff) == 0)
			progress(j, r, j->done);
	}
	if (rc != HD_ITEROVER)
		return rc;
	hd_reader_stats(&j->st.read, r);
	return 0;
}

int hd_replace_class(const char *in_path, const char *out_path,
		     const hd_replace_options *opts, hd_error *err)
{
	static const hd_replace_options defaults = HD_REPLACE_OPTIONS_INIT;
	struct job *j;
	hd_reader *r = NULL;
	hd_read_options ro;
	hd_read_stats rs;
	struct stat in_sb;
	hd_spool *spool = NULL; /* a copy: the input is read twice */
	const char *path = in_path;
	int rc, in_place = out_path == NULL;

	HD_ASSERT_ARG(in_path);
	HD_ASSERT_ARG(!opts || opts->version == HD_REPLACE_OPTIONS_VERSION);
	HD_ASSERT_ARG(!opts || !(opts->flags & ~HD_REPLACE_ADD_REF));
	if (in_place && strcmp(in_path, "-") == 0)
		return hd__error(err, HD_EINVAL,
				 "cannot rewrite standard input in place");
	if (!(j = hd__calloc(1, sizeof(*j))))
		return hd__error(err, HD_ENOMEM, "out of memory");
	j->o = opts ? *opts : defaults;
	if ((rc = hd__intern_init(&j->strs)) ||
	    (rc = hd__classtab_init(&j->ct, &j->strs))) {
		rc = hd__error(err, HD_ENOMEM, "out of memory");
		goto out;
	}
	if (strcmp(in_path, "-") == 0) {
		if ((rc = hd_spool_new(&spool, 0, "standard input", err)))
			goto out;
		path = hd_spool_path(spool);
	} else if (stat(in_path, &in_sb) == 0 && !S_ISREG(in_sb.st_mode) &&
		   !S_ISDIR(in_sb.st_mode)) {
		/* a pipe (a named one, or <(...)) can be read only once */
		int fd;

		if (in_place) {
			rc = hd__error(err, HD_EINVAL,
				       "'%s' is not a regular file: it cannot "
				       "be rewritten in place", in_path);
			goto out;
		}
		if ((fd = open(in_path, O_RDONLY | O_CLOEXEC)) < 0) {
			rc = hd__error_sys(err, errno, "cannot open '%s': %s",
					   in_path, strerror(errno));
			goto out;
		}
		rc = hd_spool_new(&spool, fd, in_path, err);
		close(fd);
		if (rc)
			goto out;
		path = hd_spool_path(spool);
	}
	if (stat(path, &in_sb) != 0) {
		rc = hd__error_sys(err, errno, "cannot open '%s': %s", path,
				   strerror(errno));
		goto out;
	}

	/* pass 1, without problem reports: pass 2 makes them */
	ro = j->o.read;
	ro.problem = NULL;
	if ((rc = hd_reader_open(&r, path, &ro, err)))
		goto out;
	hd_reader_stats(&rs, r);
	if (in_place && rs.gzip) {
		rc = hd__error(err, HD_EINVAL,
			       "'%s' is gzip-compressed: in place, plain JSON would replace it",
			       in_path);
		goto out;
	}
	j->total = rs.total_bytes * 2;
	if ((rc = out_open(&j->out, in_place ? in_path : out_path,
			   spool ? NULL : &in_sb, spool ? NULL : in_path,
			   in_place, err)))
		goto out;
	if ((rc = read_classes(j, r, err)))
		goto out;
	hd_reader_free(r);
	r = NULL;

	if ((rc = hd_reader_open(&r, path, &j->o.read, err)) ||
	    (rc = write_records(j, r, err)) ||
	    (rc = hd_outfile_commit(j->out, err)))
		goto out;
	if (j->o.stats)
		*j->o.stats = j->st;
out:
	hd_reader_free(r);
	hd_outfile_free(j->out);
	hd_spool_free(spool);
	hd__scan_free(&j->rescan);
	hd__free(j->line.p, j->line.cap);
	hd__free(j->fixed.p, j->fixed.cap);
	hd__classtab_free(&j->ct);
	hd__intern_free(&j->strs);
	hd__free(j, sizeof(*j));
	return rc;
}
