/*
 * main.c - the packetfs program: global options (--help, --version), the
 * help command, and dispatch to the commands of cli.c.
 *
 * `packetfs STORE MOUNTPOINT [-o OPTIONS]`, where STORE is a directory, is
 * `packetfs mount`: the form mount.fuse3(8) runs for `mount -t
 * fuse.packetfs` and for /etc/fstab lines.
 *
 * Exit status: 0 success, 1 failure, 2 usage error.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "packetfs-config.h"

static void print_overview(FILE *f)
{
	const struct cli_command *c;

	fprintf(f, "usage: packetfs COMMAND [ARGUMENTS]\n"
		   "       packetfs STORE MOUNTPOINT [-o OPTIONS]   (packetfs mount)\n"
		   "       packetfs --help | --version | help COMMAND\n\n"
		   "A FUSE filesystem and pipeline engine for software work items.\n\n"
		   "Commands:\n");
	for (c = cli_commands; c->name; c++)
		fprintf(f, "  %-8s %s\n", c->name, c->summary);
	fprintf(f, "\nRun 'packetfs help COMMAND' for the arguments and options of one command.\n");
}

static int help(int argc, char **argv)
{
	const struct cli_command *c;

	if (argc < 1) {
		print_overview(stdout);
		return 0;
	}
	if (argc > 1) {
		fprintf(stderr, "packetfs: help: too many arguments\n"
				"usage: packetfs help [COMMAND]\n");
		return 2;
	}
	c = cli_find(argv[0]);
	if (c == NULL) {
		fprintf(stderr, "packetfs: help: %s: unknown command\n", argv[0]);
		return 2;
	}
	cli_print_help(stdout, c);
	return 0;
}

/* Whether path names a directory: 1 or 0. */
static int is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int main(int argc, char **argv)
{
	const struct cli_command *c;

	if (argc < 2) {
		print_overview(stderr);
		return 2;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
		return help(0, NULL);
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
		printf("packetfs %s\n", PACKETFS_VERSION);
		return 0;
	}
	if (strcmp(argv[1], "help") == 0)
		return help(argc - 2, argv + 2);
	c = cli_find(argv[1]);
	if (c == NULL && argc >= 3 && argv[1][0] != '-' && is_dir(argv[1])) {
		/* mount.fuse3's form: the arguments of `packetfs mount`. */
		static char mount[] = "mount";

		argv[0] = mount;
		return cli_find("mount")->run(argc, argv);
	}
	if (c == NULL) {
		fprintf(stderr, "packetfs: %s: unknown command (see packetfs --help)\n", argv[1]);
		return 2;
	}
	return c->run(argc - 1, argv + 1);
}
