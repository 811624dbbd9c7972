/*
 * cmd.h - the subcommands. Each lives in cli/cmd_<name>.c, takes argv with
 * argv[0] = its name, and returns the exit code (0 ok, 1 failure, 2 usage).
 */
#ifndef CLI_CMD_H
#define CLI_CMD_H

int cmd_stats(int argc, char **argv);
int cmd_index(int argc, char **argv);
int cmd_replace_class(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_interface_with(int argc, char **argv);
int cmd_roots_of(int argc, char **argv);
int cmd_path(int argc, char **argv);
int cmd_query(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_dominators(int argc, char **argv);
int cmd_leaks(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_trend(int argc, char **argv);
int cmd_strings(int argc, char **argv);
int cmd_waste(int argc, char **argv);
int cmd_subgraph_of(int argc, char **argv);
int cmd_to_gml(int argc, char **argv);
int cmd_to_dot(int argc, char **argv);
int cmd_render(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_console(int argc, char **argv);
int cmd_malloc(int argc, char **argv);
int cmd_help(int argc, char **argv);
int cmd_version(int argc, char **argv);
int cmd_memory(int argc, char **argv);
int cmd_redact(int argc, char **argv);
int cmd_mcp(int argc, char **argv);
int cmd_flame(int argc, char **argv);

struct cli_command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

/* The table, NULL-terminated (main.c). */
extern const struct cli_command cli_commands[];

#endif
