/*
 * output.c - output files through the library's hd_outfile (man 1
 * heapdump, OUTPUTS), never over an input (input.c's registry), and the
 * signal handlers that remove temporary files before dying (and name the
 * input that shrank under its mapping).
 */
#include "common.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

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

/*
 * SIGBUS: a file the library has mapped (a dump being read, a store)
 * lost pages under it, truncated by another program. The temporary files
 * go, the error says which file, and the program exits 1 as after any
 * read error. A bus error anywhere else dies as it would have.
 */
static void on_bus_error(int sig, siginfo_t *si, void *uctx)
{
	static const char head[] = PROGRAM_NAME ": cannot read '";
	static const char tail[] = "': the file shrank while it was read "
				   "(another program truncated or rewrote "
				   "it)\n";
	/* a fault's address (si_code > 0), not kill(2)'s sender */
	const char *path = si && si->si_code > 0 ?
				   hd_mapped_path(si->si_addr) : NULL;
	char msg[1024], name[768];
	size_t len, n;

	(void)uctx;
	hd_outfile_cleanup();
	if (!path) {
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	/* escaped as every message's names are (cli_text_string) */
	cli_text(name, sizeof(name), path, strlen(path));
	n = strlen(name);
	len = sizeof(head) - 1;
	memcpy(msg, head, len);
	memcpy(msg + len, name, n);
	len += n;
	memcpy(msg + len, tail, sizeof(tail) - 1);
	len += sizeof(tail) - 1;
	(void)!write(2, msg, len);
	_exit(EXIT_FAIL);
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
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_bus_error;
	sa.sa_flags = SA_SIGINFO | SA_RESETHAND | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
}
