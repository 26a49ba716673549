/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * bpfstash(8): the shared state of the command line tool.  Commands are in
 * the style of bpftool: a table of names, a do_<name>() each, JSON output
 * through one writer, errors through p_err().
 */
#ifndef BPFSTASH_TOOL_MAIN_H
#define BPFSTASH_TOOL_MAIN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "json_writer.h"
#include "libbpfstash.h"

/* Exit codes (sysexits.h). */
#define EXIT_OK		0
#define EXIT_FAIL	1	/* a failure, a mismatch, an entry not found */
#define EXIT_USAGE	64	/* EX_USAGE */
#define EXIT_NOSTASH	69	/* EX_UNAVAILABLE: the stash cannot be opened */
#define EXIT_FORMAT	76	/* EX_PROTOCOL: an entry of a format this tool does not read */

#define BPFSTASH_TOOL_VERSION "1.0"

struct opts {
	const char *root;	/* --root */
	const char *to;		/* export --to */
	bool root_given;	/* else the mount point, which must be mounted */
	bool json;
	bool pretty;
	bool verbose;
	const char *at;		/* resolve, decode --at TIME */
	bool source;		/* decode -s */
	const char *archive;	/* decode --archive DIR */
	const char *kallsyms;	/* decode --kallsyms FILE */
	bool boot_id_given;	/* resolve, decode --boot-id ID */
	uint8_t boot_id[BPFSTASH_BOOT_ID_SIZE];
	uint64_t count;		/* watch --count N */
	double duration;	/* watch --duration SECONDS */
	size_t pages;		/* watch --pages N */
	bool existing;		/* watch --existing */
	const char *input;	/* inject -i FILE */
	const char *output;	/* inject -o FILE */
	const char *buildid_dir;	/* inject --buildid-dir DIR */
};

extern struct opts opts;
extern json_writer_t *json_wtr;
extern const char *bin_name;

void p_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void p_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Whether --root is a mounted stash (decode, inject: then also used with --archive). */
bool default_stash_mounted(void);
/* Open --root; on failure report it and return EXIT_NOSTASH. */
int stash_open(struct bpfstash **stash);
/*
 * An entry by its name or a unique prefix of it (at least 4 hex digits).
 * Fills @name (BPFSTASH_HEX_LEN + 1 bytes); reports and returns EXIT_*.
 */
int stash_lookup(struct bpfstash *stash, const char *arg, char *name);
/* Load an entry, reporting failures; returns EXIT_*. */
int stash_load(struct bpfstash *stash, const char *name, unsigned int flags,
	       struct bpfstash_entry **entry);

const char *errstr(int err);
/*
 * Why entry @name did not load (@err): for a format this tool does not
 * read, "format N, this tool reads M", else errstr().  @buf holds it.
 */
const char *entry_errstr(struct bpfstash *stash, const char *name, int err, char *buf,
			 size_t size);
/* The exit code for an entry that did not load: EXIT_FORMAT or EXIT_FAIL. */
int entry_exit(int err);
void format_age(uint64_t seconds, char *buf, size_t size);
void format_time(uint64_t ns_epoch, char *buf, size_t size);
uint64_t now_real_ns(void);

int do_ls(int argc, char **argv);
int do_show(int argc, char **argv);
int do_lines(int argc, char **argv);
int do_render(int argc, char **argv);
int do_resolve(int argc, char **argv);
int do_verify(int argc, char **argv);
int do_export(int argc, char **argv);
int do_decode(int argc, char **argv);
int do_watch(int argc, char **argv);
int do_inject(int argc, char **argv);

/* Print the candidates of an ambiguous resolution (text: on stderr). */
void print_candidates(const struct bpfstash_candidates *c, bool only_at_time);
/* --at TIME into @o; reports and returns EXIT_USAGE if it is no time. */
int parse_at(const char *arg, struct bpfstash_resolve_opts *o);

#endif
