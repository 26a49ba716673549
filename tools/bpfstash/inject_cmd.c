// SPDX-License-Identifier: GPL-2.0-only
/*
 * bpfstash inject -i IN -o OUT: the command around inject_run() (inject.c):
 * which stashes, which build-id cache, what it says.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "main.h"
#include "decode.h"
#include "inject.h"

static void summary(const struct inject *inj, const char *out, const char *dir, double secs)
{
	const struct inject_stats *st = &inj->stats;

	if (json_wtr) {
		jsonw_start_object(json_wtr);
		jsonw_string_field(json_wtr, "output", out);
		jsonw_string_field(json_wtr, "format", st->pipe ? "pipe" : "file");
		jsonw_uint_field(json_wtr, "records", st->records);
		jsonw_uint_field(json_wtr, "bytes_in", st->bytes_in);
		jsonw_uint_field(json_wtr, "bytes_out", st->bytes_out);
		jsonw_uint_field(json_wtr, "ksymbols", st->ksymbols);
		jsonw_uint_field(json_wtr, "injected", st->injected);
		jsonw_uint_field(json_wtr, "functions", st->functions);
		jsonw_uint_field(json_wtr, "not_found", st->not_found);
		jsonw_uint_field(json_wtr, "ambiguous", st->ambiguous);
		jsonw_uint_field(json_wtr, "elsewhere", st->elsewhere);
		jsonw_uint_field(json_wtr, "reloaded", st->reloaded);
		jsonw_uint_field(json_wtr, "malformed", st->malformed);
		jsonw_bool_field(json_wtr, "by_time", st->used_time);
		jsonw_string_field(json_wtr, "buildid_dir", dir ? dir : "");
		jsonw_uint_field(json_wtr, "elf_written", st->elf_written);
		jsonw_uint_field(json_wtr, "elf_present", st->elf_present);
		jsonw_uint_field(json_wtr, "elf_failed", st->elf_failed);
		jsonw_float_field_fmt(json_wtr, "seconds", "%.3f", secs);
		jsonw_end_object(json_wtr);
		return;
	}
	fprintf(stderr, "bpfstash inject: %" PRIu64 " records (%s), %" PRIu64 " -> %" PRIu64
		" bytes in %.2f s\n", st->records, st->pipe ? "a stream" : "a file", st->bytes_in,
		st->bytes_out, secs);
	fprintf(stderr, "bpfstash inject: %" PRIu64 " BPF functions registered: %" PRIu64
		" injected (%" PRIu64 " distinct; %" PRIu64 " by the entry of a later load of the"
		" same code), %" PRIu64 " in no stash, %" PRIu64 " ambiguous, %" PRIu64
		" in no stash at their address (their name at others)\n", st->ksymbols,
		st->injected, st->functions, st->reloaded, st->not_found, st->ambiguous,
		st->elsewhere);
	if (dir)
		fprintf(stderr, "bpfstash inject: %s: %" PRIu64 " ELF files written, %" PRIu64
			" already there%s%.0" PRIu64 "%s\n", dir, st->elf_written, st->elf_present,
			st->elf_failed ? ", " : "", st->elf_failed,
			st->elf_failed ? " failed" : "");
}

int do_inject(int argc, char **argv)
{
	const char *in = opts.input ? opts.input : "-";
	const char *out = opts.output ? opts.output : "-";
	struct inject inj = { .max_warnings = opts.verbose ? UINT_MAX : 10 };
	struct decode_archive ar = {};
	struct bpfstash *stash = NULL;
	char dirbuf[PATH_MAX], tmp[PATH_MAX];
	const char *dir;
	struct timespec t0, t1;
	bool created = false;
	int in_fd = STDIN_FILENO, out_fd = STDOUT_FILENO, ret;

	if (argc)
		return usage_error("inject takes no argument ('%s' given): -i IN -o OUT", argv[0]);
	if (json_wtr && !strcmp(out, "-"))
		return usage_error("--json writes on stdout, which is the output: give -o FILE");
	if (!strcmp(out, "-") && isatty(STDOUT_FILENO))
		return usage_error("the output would go to a terminal: give -o FILE, or a pipe");
	dir = opts.buildid_dir ? opts.buildid_dir : getenv("PERF_BUILDID_DIR");
	if (!dir || !*dir) {
		const char *home = getenv("HOME");

		if (!home || !*home)
			return usage_error("no build-id directory: $HOME is not set (give "
					   "--buildid-dir DIR)");
		snprintf(dirbuf, sizeof(dirbuf), "%s/.debug", home);
		dir = dirbuf;
	}

	if (opts.archive) {
		ret = decode_archive_open(opts.archive, &ar);
		if (ret)
			return ret;
	}
	/* As decode: with an archive, the stash if one is mounted; --root always. */
	if (!opts.archive || opts.root_given || default_stash_mounted()) {
		ret = stash_open(&stash);
		if (ret) {
			decode_archive_close(&ar);
			return ret;
		}
	}
	inj.stash[0] = stash;
	inj.stash[1] = ar.stash;
	inj.buildid_dir = dir;

	ret = EXIT_FAIL;
	if (strcmp(in, "-")) {
		in_fd = open(in, O_RDONLY | O_CLOEXEC);
		if (in_fd < 0) {
			p_err("%s: %s", in, strerror(errno));
			goto out;
		}
	}
	/* Written beside @out and renamed over it once whole: -o IN works too. */
	if (strcmp(out, "-")) {
		if ((size_t)snprintf(tmp, sizeof(tmp), "%s.XXXXXX", out) >= sizeof(tmp)) {
			p_err("%s: %s", out, strerror(ENAMETOOLONG));
			goto out;
		}
		out_fd = mkostemp(tmp, O_CLOEXEC);
		if (out_fd < 0) {
			p_err("%s: %s", tmp, strerror(errno));
			goto out;
		}
		created = true;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (inject_run(&inj, in_fd, out_fd)) {
		p_err("%s: %s", in, inj.err);
		goto out;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (created) {
		int err = fchmod(out_fd, 0600) || fsync(out_fd) ? errno : 0;

		if (close(out_fd) && !err)
			err = errno;
		out_fd = -1;
		if (!err && rename(tmp, out))
			err = errno;
		if (err) {
			p_err("%s: %s", out, strerror(err));
			goto out;
		}
		created = false;
	}
	summary(&inj, out, dir, (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	ret = ar.newer ? EXIT_FORMAT : EXIT_OK;
out:
	if (in_fd > STDIN_FILENO)
		close(in_fd);
	if (out_fd > STDOUT_FILENO)
		close(out_fd);
	if (created)
		unlink(tmp);
	bpfstash_close(stash);
	decode_archive_close(&ar);
	return ret;
}
