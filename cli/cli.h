/*
 * cli.h - the commands of the packetfs command line (SPEC §7): their table,
 * usage and help texts, and their implementations.
 *
 * Every command's run function takes the arguments after "packetfs" (argv[0]
 * is the command name), prints errors on stderr as "packetfs: what: why"
 * and returns the exit status: 0 success, 1 failure, 2 usage error.
 */
#ifndef PACKETFS_CLI_H
#define PACKETFS_CLI_H

#include <stdio.h>

struct cli_command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *usage;   /* the arguments, e.g. "STORE --repo REPO [--pipeline FILE]" */
	const char *summary; /* one line for the command list */
	const char *help;    /* what it does and its options, several lines */
};

/* All commands, in the order --help lists them, ending with a NULL name. */
extern const struct cli_command cli_commands[];

/* The command called name, or NULL. */
const struct cli_command *cli_find(const char *name);

/* Prints "usage: packetfs NAME USAGE" and the help text of c to f. */
void cli_print_help(FILE *f, const struct cli_command *c);

/*
 * The commands, each the run function of its entry in cli_commands (the
 * contract above; the help texts there say what each does). They run on
 * the main thread, one per process: each restarts getopt's global parse.
 */
int cli_init(int argc, char **argv);    /* cli_store.c */
int cli_mount(int argc, char **argv);   /* cli_mount.c */
int cli_umount(int argc, char **argv);  /* cli_mount.c */
int cli_new(int argc, char **argv);     /* cli_mount.c */
int cli_status(int argc, char **argv);  /* cli_status.c */
int cli_log(int argc, char **argv);     /* cli_store.c */
int cli_check(int argc, char **argv);   /* cli_store.c */
int cli_gc(int argc, char **argv);      /* cli_store.c */
int cli_export(int argc, char **argv);  /* cli_carry.c */
int cli_import(int argc, char **argv);  /* cli_carry.c */
int cli_record(int argc, char **argv);  /* cli_record.c */
int cli_ctl(int argc, char **argv);     /* cli_ctl.c */
int cli_follow(int argc, char **argv);  /* cli_follow.c */
int cli_top(int argc, char **argv);     /* cli_top.c */
int cli_attest(int argc, char **argv);  /* cli_attest.c */
int cli_verify(int argc, char **argv);  /* cli_attest.c */

#endif
