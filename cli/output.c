/*
 * output.c - output files through the library's hd_outfile (man 1
 * heapdump, OUTPUTS), never over an input (input.c's registry), and the
 * signal handler that removes temporary files before dying.
 */
#include "common.h"

#include <signal.h>
#include <string.h>

int cli_out_open(struct cli_out *o, const char *path, const char *like)
{
	hd_error err = { 0 };
	int rc;

	memset(o, 0, sizeof(*o));
	if (!path || strcmp(path, "-") == 0) {
		o->f = stdout;
		return 0;
	}
	/* -o naming an input would replace it with the output */
	if ((rc = cli_out_check(path)))
		return rc;
	if (hd_outfile_open(&o->out, path, like, 0, &err) ||
	    !(o->f = hd_outfile_stream(o->out, &err))) {
		cli_out_abort(o);
		return cli_lib_error(&err);
	}
	return 0;
}

int cli_out_commit(struct cli_out *o)
{
	hd_error err = { 0 };
	int rc = 0;

	if (!o->out)
		return 0;
	if (hd_outfile_commit(o->out, &err))
		rc = cli_lib_error(&err);
	cli_out_abort(o);
	return rc;
}

void cli_out_abort(struct cli_out *o)
{
	hd_outfile_free(o->out);
	o->out = NULL;
	o->f = NULL;
}

/* SIGINT, SIGTERM, SIGHUP, SIGPIPE (a reader of standard output that
 * went away): the temporary files go, then the signal does what it
 * would have done (the exit status says which signal). */
static void on_signal(int sig)
{
	hd_outfile_cleanup();
	raise(sig); /* SA_RESETHAND: the default action now */
}

void cli_signals_init(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };
	struct sigaction sa, old;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESETHAND | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		/* an ignored signal (nohup, a background job) stays so */
		if (sigaction(sigs[i], NULL, &old) == 0 &&
		    old.sa_handler != SIG_IGN)
			sigaction(sigs[i], &sa, NULL);
	}
}
