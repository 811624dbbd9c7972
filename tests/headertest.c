/* The public header must compile alone (see Makefile), and every
 * options struct has an initializer that compiles without a warning as
 * C89 and as C++. */
#include "heapdump.h"

int headertest_dummy(void);
int headertest_dummy(void)
{
	hd_read_options ro = HD_READ_OPTIONS_INIT;
	hd_index_options io = HD_INDEX_OPTIONS_INIT;
	hd_stats_options so = HD_STATS_OPTIONS_INIT;
	hd_diff_options dopt = HD_DIFF_OPTIONS_INIT;
	hd_leaks_options lo = HD_LEAKS_OPTIONS_INIT;
	hd_replace_options rpo = HD_REPLACE_OPTIONS_INIT;
	hd_export_options eo = HD_EXPORT_OPTIONS_INIT;
	hd_process_options po = HD_PROCESS_OPTIONS_INIT;
	hd_redact_options rdo = HD_REDACT_OPTIONS_INIT;
	hd_leak_json_options ljo = HD_LEAK_JSON_OPTIONS_INIT;
	hd_stack_options sto = HD_STACK_OPTIONS_INIT;

	return HD_OK + (int)(ro.version + io.version + so.version +
			     dopt.version + lo.version + rpo.version +
			     eo.version + po.version + rdo.version +
			     ljo.version + sto.version) * 0;
}
