/* The public header must compile alone (see Makefile). */
#include "heapdump.h"

int headertest_dummy(void);
int headertest_dummy(void)
{
	return HD_OK;
}
