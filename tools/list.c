/*
 * list.c - `bakery list [--json]`: every region in the shm directory that
 * the caller can read, one line each (lslocks' system-wide view).
 */
#include "config.h"

#include "cli.h"

int cmd_list(struct cli *c, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return cli_fail(c, "not yet");
}
