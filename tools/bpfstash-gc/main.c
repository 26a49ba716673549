// SPDX-License-Identifier: GPL-2.0-only
/*
 * bpfstash-gc: expire bpfstash entries by age, size and count.
 *
 * The command line and everything the user sees; the policy is in gc.c.
 * Output: one summary line per run on stdout (a JSON object with --json),
 * and one line per entry on stderr with -v, in a dry run, or when stderr
 * is the journal, where each line starts with its syslog priority ("<6>")
 * for journald to parse (sd-daemon(3)).
 *
 * Exit status (sysexits.h): 0 done and every limit holds, 64 usage (a bad
 * option, or a --root that is not a stash), 69 the stash is unavailable
 * (not mounted, not readable, locked by another instance), 73 partial
 * failure (an entry could not be archived or removed, or a limit cannot be
 * met without removing entries of loaded programs), 76 entries of a format
 * this bpfstash-gc does not read were left alone (and nothing above), 1
 * anything else.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>

#include "gc.h"
#include "json_writer.h"

#define GC_VERSION "0.4"

enum { LOG_ERR = 3, LOG_WARNING = 4, LOG_NOTICE = 5, LOG_INFO = 6 };

static struct {
	bool json;
	bool verbose;
	bool journal_out, journal_err;	/* stdout/stderr are the journal */
	const char *age_by_name;
	/* JSON: the actions array is streamed as events come. */
	json_writer_t *jw;
} out = { .age_by_name = "load" };

static volatile sig_atomic_t stop;

/* JOURNAL_STREAM=<dev>:<ino> names the stream systemd connected (systemd.exec(5)). */
static bool is_journal(int fd)
{
	const char *s = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (!s || sscanf(s, "%llu:%llu", &dev, &ino) != 2 || fstat(fd, &st))
		return false;
	return st.st_dev == dev && st.st_ino == ino;
}

static void say(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(int prio, const char *fmt, ...)
{
	va_list ap;

	if (out.journal_err)
		fprintf(stderr, "<%d>", prio);
	else if (prio <= LOG_WARNING)
		fputs("bpfstash-gc: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* A usage error: the message, a hint, exit 64. */
static void __attribute__((noreturn, format(printf, 1, 2))) usage_error(const char *fmt, ...)
{
	va_list ap;

	if (out.journal_err)
		fprintf(stderr, "<%d>", LOG_ERR);
	fputs("bpfstash-gc: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'bpfstash-gc --help'.\n", stderr);
	if (out.json) {
		json_writer_t *jw = jsonw_new(stdout);

		if (jw) {
			jsonw_start_object(jw);
			jsonw_string_field(jw, "error", "usage");
			jsonw_int_field(jw, "exit", EX_USAGE);
			jsonw_end_object(jw);
			jsonw_destroy(&jw);
		}
	}
	exit(EX_USAGE);
}

static const char *reason_name(enum gc_reason r)
{
	switch (r) {
	case GC_REASON_AGE: return "age";
	case GC_REASON_SIZE: return "size";
	case GC_REASON_ENTRIES: return "entries";
	default: return "none";
	}
}

static const char *reason_text(enum gc_reason r)
{
	switch (r) {
	case GC_REASON_AGE: return "older than --max-age";
	case GC_REASON_SIZE: return "over --max-size";
	case GC_REASON_ENTRIES: return "over --max-entries";
	default: return "";
	}
}

static const char *err_text(int err)
{
	switch (err) {
	case -EXDEV: return "on another filesystem, not crossed";
	case -ENOTDIR: return "not a directory";
	case -EBADMSG: return "not a valid entry (meta or content does not check)";
	case -EDQUOT: return "its archive alone is over --archive-max-size";
	case -ESTALE: return "changed while being processed";
	case -EISDIR: return "holds a directory, which no entry does";
	case -EPROTONOSUPPORT: return "a format this bpfstash-gc does not read";
	default: return strerror(-err);
	}
}

/* Why an event's entry failed or was skipped; an entry of another format says which. */
static const char *ev_err_text(const struct gc_event *ev, char *buf, size_t size)
{
	if (ev->err != -EPROTONOSUPPORT || !ev->format)
		return err_text(ev->err);
	snprintf(buf, size, "format %u, this reader knows %u%s", ev->format,
		 bpfstash_format_version(),
		 ev->format > bpfstash_format_version() ? " (a newer bpfstash-gc reads it)" : "");
	return buf;
}

static const char *fmt_time(uint64_t ns, char *buf, size_t size)
{
	time_t t = ns / NSEC_PER_SEC;
	struct tm tm;

	if (ns == UINT64_MAX || !localtime_r(&t, &tm) || !strftime(buf, size, "%F %T", &tm))
		snprintf(buf, size, "-");
	return buf;
}

/*
 * The run's object, opened at its first action (or its summary): actions
 * are printed as they happen, the summary's fields follow them.
 */
static void json_start(void)
{
	if (out.jw)
		return;
	out.jw = jsonw_new(stdout);
	if (!out.jw)
		return;
	jsonw_start_object(out.jw);
	jsonw_name(out.jw, "actions");
	jsonw_start_array(out.jw);
}

static void json_action(const struct gc_event *ev)
{
	static const char *const names[][2] = {
		[GC_EV_REMOVE] = { "remove", "would_remove" },
		[GC_EV_ARCHIVE] = { "archive", "would_archive" },
		[GC_EV_KEEP_LIVE] = { "keep_live", "keep_live" },
		[GC_EV_ERROR] = { "error", "error" },
		[GC_EV_SKIP] = { "skip", "skip" },
		[GC_EV_ARCHIVE_EVICT] = { "evict_archive", "would_evict_archive" },
		[GC_EV_CLEANUP] = { "cleanup", "cleanup" },
	};

	json_start();
	if (!out.jw)
		return;
	jsonw_start_object(out.jw);
	jsonw_string_field(out.jw, "action", names[ev->type][ev->dry_run]);
	jsonw_string_field(out.jw, "name", ev->name);
	if (ev->reason)
		jsonw_string_field(out.jw, "reason", reason_name(ev->reason));
	if (ev->type != GC_EV_ERROR && ev->type != GC_EV_SKIP && ev->type != GC_EV_CLEANUP)
		jsonw_uint_field(out.jw, "bytes", ev->bytes);
	if (ev->time_ns) {
		char key[32];

		snprintf(key, sizeof(key), "%s_time_ns", out.age_by_name);
		jsonw_u64_string_field(out.jw, key, ev->time_ns);
	}
	if (ev->path)
		jsonw_string_field(out.jw, "path", ev->path);
	if (ev->err) {
		char buf[96];

		jsonw_string_field(out.jw, "error", ev_err_text(ev, buf, sizeof(buf)));
		if (ev->format)
			jsonw_uint_field(out.jw, "format", ev->format);
	}
	if (ev->what)
		jsonw_string_field(out.jw, "step", ev->what);
	jsonw_end_object(out.jw);
}

static void on_event(const struct gc_event *ev, void *ctx)
{
	bool lines = out.verbose || out.journal_err || ev->dry_run;
	char sz[32], tm[64], why[96];

	if (out.json) {
		json_action(ev);
		if (ev->type == GC_EV_ERROR)
			say(LOG_ERR, "Failed to %s %s: %s", ev->what, ev->name,
			    ev_err_text(ev, why, sizeof(why)));
		return;
	}
	switch (ev->type) {
	case GC_EV_REMOVE:
		if (lines)
			say(LOG_INFO, "%s %s: %s (%s, %s %s)",
			     ev->dry_run ? "Would remove" : "Removed", ev->name,
			     reason_text(ev->reason), gc_format_size(ev->bytes, sz, sizeof(sz)),
			     out.age_by_name, fmt_time(ev->time_ns, tm, sizeof(tm)));
		break;
	case GC_EV_ARCHIVE:
		if (lines && ev->dry_run)
			say(LOG_INFO, "Would archive %s", ev->name);
		else if (lines)
			say(LOG_INFO, "Archived %s to %s (%s)", ev->name, ev->path,
			     gc_format_size(ev->bytes, sz, sizeof(sz)));
		break;
	case GC_EV_KEEP_LIVE:
		if (lines)
			say(LOG_NOTICE, "Kept %s: its program is loaded (%s)", ev->name,
			     reason_text(ev->reason));
		break;
	case GC_EV_ERROR:
		say(LOG_ERR, "Failed to %s %s: %s", ev->what, ev->name,
			    ev_err_text(ev, why, sizeof(why)));
		break;
	case GC_EV_SKIP:
		say(LOG_WARNING, "Skipped %s: %s", ev->name, ev_err_text(ev, why, sizeof(why)));
		break;
	case GC_EV_ARCHIVE_EVICT:
		if (lines)
			say(LOG_INFO, "%s archive %s (%s): over --archive-max-size",
			     ev->dry_run ? "Would remove" : "Removed", ev->name,
			     gc_format_size(ev->bytes, sz, sizeof(sz)));
		break;
	case GC_EV_CLEANUP:
		if (lines)
			say(LOG_INFO, "Finished removing %s, left by an interrupted run", ev->name);
		break;
	}
}

/*
 * 73 (EX_CANTCREAT) when an entry could not be archived or removed or a
 * limit still does not hold; else 76 (EX_PROTOCOL) when entries of a
 * format this bpfstash-gc does not read were left alone; else 0.
 */
static int exit_status(const struct gc_result *r)
{
	if (r->errors || !r->limits_met)
		return EX_CANTCREAT;
	return r->other_format ? EX_PROTOCOL : EX_OK;
}

static void print_summary(const struct gc_opts *o, const struct gc_result *r)
{
	char a[32], b[32], c[32];
	const char *root = o->root ? o->root : BPFSTASH_DEFAULT_ROOT;

	if (out.json) {
		json_writer_t *jw;

		json_start();
		jw = out.jw;
		if (!jw)
			return;
		jsonw_end_array(jw);
		jsonw_string_field(jw, "root", root);
		jsonw_bool_field(jw, "mounted", r->mounted);
		jsonw_bool_field(jw, "dry_run", o->dry_run);
		jsonw_u64_string_field(jw, "now_ns", r->now_ns);
		jsonw_string_field(jw, "age_by", out.age_by_name);
		jsonw_u64_string_field(jw, "max_age_ns", o->max_age_ns);
		jsonw_uint_field(jw, "max_bytes", r->max_bytes);
		jsonw_uint_field(jw, "max_entries", r->max_entries);
		jsonw_uint_field(jw, "entries_before", r->entries);
		jsonw_uint_field(jw, "bytes_before", r->bytes);
		jsonw_uint_field(jw, "live", r->live);
		jsonw_uint_field(jw, "removed", r->removed);
		jsonw_uint_field(jw, "removed_bytes", r->removed_bytes);
		jsonw_uint_field(jw, "archived", r->archived);
		jsonw_uint_field(jw, "archived_bytes", r->archived_bytes);
		jsonw_uint_field(jw, "archive_evicted", r->archive_evicted);
		jsonw_uint_field(jw, "kept_live", r->kept_live);
		jsonw_uint_field(jw, "skipped", r->skipped);
		jsonw_uint_field(jw, "cleaned", r->cleaned);
		jsonw_uint_field(jw, "errors", r->errors);
		if (r->first_err)
			jsonw_string_field(jw, "first_error", err_text(r->first_err));
		else
			jsonw_null_field(jw, "first_error");
		jsonw_uint_field(jw, "entries_after", r->entries_left);
		jsonw_uint_field(jw, "bytes_after", r->bytes_left);
		jsonw_bool_field(jw, "limits_met", r->limits_met);
		if (o->archive_dir) {
			jsonw_uint_field(jw, "archive_bytes", r->archive_bytes);
			jsonw_uint_field(jw, "archive_max_bytes", r->archive_max_bytes);
		}
		jsonw_int_field(jw, "exit", exit_status(r));
		jsonw_end_object(jw);
		/* The object's newline. */
		jsonw_destroy(&out.jw);
		fflush(stdout);
		return;
	}

	if (out.journal_out)
		printf("<%d>", r->errors || !r->limits_met ? LOG_WARNING : LOG_INFO);
	printf("%s: %s %llu of %llu entries (%s), archived %llu, kept-live %llu, errors %llu; "
	       "%llu entries (%s) left",
	       root, o->dry_run ? "would remove" : "removed",
	       (unsigned long long)r->removed, (unsigned long long)r->entries,
	       gc_format_size(r->removed_bytes, a, sizeof(a)),
	       (unsigned long long)r->archived, (unsigned long long)r->kept_live,
	       (unsigned long long)r->errors, (unsigned long long)r->entries_left,
	       gc_format_size(r->bytes_left, b, sizeof(b)));
	if (!r->limits_met) {
		printf("; %s cannot be met without removing entries of loaded programs",
		       r->max_bytes && r->bytes_left > r->max_bytes ?
		       (r->max_entries && r->entries_left > r->max_entries ?
			"--max-size and --max-entries" : "--max-size") : "--max-entries");
	}
	if (o->archive_dir && !o->dry_run)
		printf("; archive %s of %s", gc_format_size(r->archive_bytes, c, sizeof(c)),
		       gc_format_size(r->archive_max_bytes, a, sizeof(a)));
	putchar('\n');
	fflush(stdout);
}

/* gc_run() could not start: say why, and pick the exit status. */
static int run_failed(const struct gc_opts *o, const struct gc_result *r, int err)
{
	const char *root = o->root ? o->root : BPFSTASH_DEFAULT_ROOT;
	const char *step = r->failed_step ? r->failed_step : "";
	char msg[PATH_MAX + 256];
	int status = EXIT_FAILURE;

	if (!strcmp(step, "root")) {
		bool bad = err == -GC_ENOTSTASH || err == -ENOENT || err == -ENOTDIR;

		struct utsname u;

		if (bad && !o->root && bpfstash_kernel_supported() == 0)
			snprintf(msg, sizeof(msg), "the running kernel (%s) has no bpfstash: no "
				 "\"bpfstash\" in /proc/filesystems (it needs CONFIG_BPFSTASH)",
				 uname(&u) ? "?" : u.release);
		else if (bad && !o->root)
			snprintf(msg, sizeof(msg), "%s: no bpfstash is mounted there "
				 "(mount -t bpfstash none %s)", root, root);
		else if (err == -GC_ENOTSTASH)
			snprintf(msg, sizeof(msg), "refusing --root %s: neither a mounted bpfstash "
				 "nor a copy of one (no entry directory with a meta file, no "
				 GC_MARKER ")", root);
		else if (err == -ENOTDIR)
			snprintf(msg, sizeof(msg), "refusing --root %s: not a directory, or a "
				 "symbolic link (never followed)", root);
		else
			snprintf(msg, sizeof(msg), "cannot open --root %s: %s", root,
				 strerror(-err));
		status = bad && o->root ? EX_USAGE : EX_UNAVAILABLE;
	} else if (!strcmp(step, "lock") && err == -EWOULDBLOCK) {
		snprintf(msg, sizeof(msg), "%s: another bpfstash-gc is running on it", root);
		status = EX_UNAVAILABLE;
	} else if (!strcmp(step, "limits") && err == -EOPNOTSUPP) {
		snprintf(msg, sizeof(msg), "%s: a percentage limit needs a mounted bpfstash "
			 "(it is a share of its size= or max_entries=)", root);
		status = EX_USAGE;
	} else if (!strcmp(step, "archive")) {
		if (err == -EWOULDBLOCK)
			snprintf(msg, sizeof(msg), "--archive %s: another bpfstash-gc is "
				 "writing to it", o->archive_dir);
		else
			snprintf(msg, sizeof(msg), "--archive %s: %s", o->archive_dir,
				 err == -ENOTDIR ? "not a directory, or a symbolic link" :
				 strerror(-err));
		status = err == -EWOULDBLOCK || err == -EACCES || err == -EPERM ||
			 err == -EROFS || err == -ENOTDIR || err == -ENOENT ?
			 EX_UNAVAILABLE : EX_CANTCREAT;
	} else {
		snprintf(msg, sizeof(msg), "%s: %s: %s", root, step, strerror(-err));
		if (err == -EACCES || err == -EPERM)
			status = EX_UNAVAILABLE;
	}
	if (!strcmp(step, "root") && (err == -EACCES || err == -EPERM))
		strncat(msg, " (reading a stash needs what reading JITed images needs: "
			"CAP_SYSLOG, or kptr_restrict=0 with perf_event_paranoid<=1)",
			sizeof(msg) - strlen(msg) - 1);
	say(LOG_ERR, "%s", msg);
	if (out.json) {
		/* After the actions so far, if any. */
		if (out.jw) {
			jsonw_end_array(out.jw);
		} else {
			out.jw = jsonw_new(stdout);
			if (out.jw)
				jsonw_start_object(out.jw);
		}
		if (out.jw) {
			jsonw_string_field(out.jw, "error", msg);
			jsonw_int_field(out.jw, "exit", status);
			jsonw_end_object(out.jw);
			jsonw_destroy(&out.jw);
		}
	}
	return status;
}

static void usage(void)
{
	printf(
"Usage: bpfstash-gc [OPTION]...\n"
"Expire bpfstash entries, oldest first, until every limit holds.\n"
"\n"
"Limits (0 disables one; all that are set hold together):\n"
"      --max-age DUR         remove entries older than DUR (7d, 12h, 30min, 1s)\n"
"      --max-size BYTES      keep the stash at most BYTES (512M, 1G, 4096),\n"
"                            or N%% of its size= on a mount\n"
"      --max-entries N       keep at most N entries, or N%% of max_entries=\n"
"      --age-by WHAT         load (default), unload or access: the time that\n"
"                            makes an entry old, and the removal order\n"
"Which entries (the limits apply to those alone):\n"
"      --loader-comm COMM    entries of programs loaded by a task named COMM\n"
"      --loader-cgroup ID    entries of programs loaded in cgroup ID (v2 id,\n"
"                            as bpfstash show and stat -c %%i of its directory say)\n"
"      --link-target GLOB    entries of programs whose last link attached to a\n"
"                            target matching GLOB (kprobe:tcp_*, cgroup:*)\n"
"Archive:\n"
"      --archive DIR         archive each entry before removing it, into\n"
"                            DIR/<2 hex>/<hash>.tar.zst (debuginfod -Z .tar.zst)\n"
"      --archive-max-size BYTES   the archive's quota, oldest archives removed\n"
"                            first (default: 10%% of its filesystem, at most 4G)\n"
"Run:\n"
"      --root DIR            the stash (default " BPFSTASH_DEFAULT_ROOT "), or a copy\n"
"  -n, --dry-run             remove nothing, say what would be removed\n"
"      --once                one pass, then exit (the default)\n"
"      --interval DUR        a pass every DUR until SIGTERM\n"
"  -j, --json                the summary as one JSON object\n"
"  -v, --verbose             one line per entry on stderr\n"
"      --now EPOCH           pretend the time is EPOCH seconds (for tests)\n"
"  -h, --help                this help\n"
"  -V, --version             the version\n"
"\n"
"Entries of loaded programs are never removed.  Exit status: 0 done, 64 usage,\n"
"69 stash unavailable, 73 partial failure or a limit not met, 76 entries of a\n"
"format this bpfstash-gc does not read left alone, 1 other.\n"
"See bpfstash-gc(8).\n");
}

enum {
	OPT_MAX_AGE = 256, OPT_MAX_SIZE, OPT_MAX_ENTRIES, OPT_AGE_BY, OPT_ARCHIVE,
	OPT_ARCHIVE_MAX, OPT_ROOT, OPT_ONCE, OPT_INTERVAL, OPT_NOW, OPT_LOADER_COMM,
	OPT_LOADER_CGROUP,
	OPT_LINK_TARGET,
};

static const struct option long_opts[] = {
	{ "max-age",		required_argument, NULL, OPT_MAX_AGE },
	{ "max-size",		required_argument, NULL, OPT_MAX_SIZE },
	{ "max-entries",	required_argument, NULL, OPT_MAX_ENTRIES },
	{ "age-by",		required_argument, NULL, OPT_AGE_BY },
	{ "archive",		required_argument, NULL, OPT_ARCHIVE },
	{ "archive-max-size",	required_argument, NULL, OPT_ARCHIVE_MAX },
	{ "root",		required_argument, NULL, OPT_ROOT },
	{ "dry-run",		no_argument,	   NULL, 'n' },
	{ "once",		no_argument,	   NULL, OPT_ONCE },
	{ "interval",		required_argument, NULL, OPT_INTERVAL },
	{ "json",		no_argument,	   NULL, 'j' },
	{ "verbose",		no_argument,	   NULL, 'v' },
	{ "now",		required_argument, NULL, OPT_NOW },
	{ "loader-comm",	required_argument, NULL, OPT_LOADER_COMM },
	{ "loader-cgroup",	required_argument, NULL, OPT_LOADER_CGROUP },
	{ "link-target",	required_argument, NULL, OPT_LINK_TARGET },
	{ "help",		no_argument,	   NULL, 'h' },
	{ "version",		no_argument,	   NULL, 'V' },
	{}
};

static void bad_value(const char *opt, const char *arg, int err, const char *want)
{
	usage_error("%s: '%s' is %s; %s", opt, arg,
		    err == -ERANGE ? "out of range" : "not valid", want);
}

static void on_signal(int sig)
{
	stop = 1;
}

/* Sleep @ns, or less if a signal asks us to stop. */
static void nap(uint64_t ns)
{
	struct timespec ts = { .tv_sec = ns / NSEC_PER_SEC, .tv_nsec = ns % NSEC_PER_SEC };

	while (!stop && nanosleep(&ts, &ts) && errno == EINTR)
		;
}

int main(int argc, char **argv)
{
	struct gc_opts o = { .age_by = GC_AGE_BY_LOAD, .event = on_event };
	struct gc_result r;
	uint64_t interval = 0;
	bool once = false;
	int c, err, status;

	out.journal_out = is_journal(STDOUT_FILENO);
	out.journal_err = is_journal(STDERR_FILENO);
	/* Options first: --json changes how usage errors look. */
	for (c = 1; c < argc; c++)
		if (!strcmp(argv[c], "--json") || !strcmp(argv[c], "-j"))
			out.json = true;

	while ((c = getopt_long(argc, argv, "njvhV", long_opts, NULL)) != -1) {
		switch (c) {
		case OPT_MAX_AGE:
			err = gc_parse_duration(optarg, &o.max_age_ns);
			if (err)
				bad_value("--max-age", optarg, err,
					  "give a duration such as 7d, 12h, 30min, 90s or 0 (no limit)");
			break;
		case OPT_MAX_SIZE:
			err = gc_parse_size(optarg, &o.max_bytes);
			if (err)
				bad_value("--max-size", optarg, err,
					  "give bytes such as 512M, 1G, 4096, 80% or 0 (no limit)");
			break;
		case OPT_MAX_ENTRIES:
			err = gc_parse_count(optarg, &o.max_entries);
			if (err)
				bad_value("--max-entries", optarg, err,
					  "give a count such as 10000, 80% or 0 (no limit)");
			break;
		case OPT_AGE_BY:
			if (!strcmp(optarg, "load"))
				o.age_by = GC_AGE_BY_LOAD;
			else if (!strcmp(optarg, "unload"))
				o.age_by = GC_AGE_BY_UNLOAD;
			else if (!strcmp(optarg, "access"))
				o.age_by = GC_AGE_BY_ACCESS;
			else
				usage_error("--age-by: '%s' is not valid; give load, unload or access",
					    optarg);
			out.age_by_name = optarg;
			break;
		case OPT_ARCHIVE:
			if (!*optarg)
				usage_error("--archive: give a directory");
			o.archive_dir = optarg;
			break;
		case OPT_ARCHIVE_MAX: {
			struct gc_limit lim;

			err = gc_parse_size(optarg, &lim);
			if (!err && lim.percent)
				err = -EINVAL;
			if (err)
				bad_value("--archive-max-size", optarg, err,
					  "give bytes such as 1G, 512M or 0 (no quota)");
			o.archive_max_bytes = lim.value;
			o.archive_max_set = true;
			break;
		}
		case OPT_ROOT:
			if (!*optarg)
				usage_error("--root: give a directory");
			o.root = optarg;
			break;
		case 'n':
			o.dry_run = true;
			break;
		case OPT_ONCE:
			once = true;
			break;
		case OPT_INTERVAL:
			err = gc_parse_duration(optarg, &interval);
			if (!err && !interval)
				err = -ERANGE;
			if (err)
				bad_value("--interval", optarg, err,
					  "give a duration above 0 such as 1h or 30min");
			break;
		case OPT_NOW:
			err = gc_parse_epoch(optarg, &o.now_ns);
			if (!err && !o.now_ns)
				err = -ERANGE;
			if (err)
				bad_value("--now", optarg, err, "give seconds since the epoch");
			break;
		case OPT_LOADER_COMM:
			if (!*optarg || strlen(optarg) >= BPFSTASH_COMM_LEN)
				usage_error("--loader-comm: give a task name of 1 to %d characters",
					    BPFSTASH_COMM_LEN - 1);
			o.loader_comm = optarg;
			break;
		case OPT_LOADER_CGROUP: {
			char *end;

			errno = 0;
			o.loader_cgroup = strtoull(optarg, &end, 10);
			if (errno || end == optarg || *end || *optarg == '-')
				bad_value("--loader-cgroup", optarg, errno ? -errno : -EINVAL,
					  "give a cgroup id, a number");
			o.loader_cgroup_set = true;
			break;
		}
		case OPT_LINK_TARGET:
			if (!*optarg || strlen(optarg) >= BPFSTASH_LINK_TARGET_LEN)
				usage_error("--link-target: give a pattern of 1 to %d characters",
					    BPFSTASH_LINK_TARGET_LEN - 1);
			o.link_target = optarg;
			break;
		case 'j':
			out.json = true;
			break;
		case 'v':
			out.verbose = true;
			break;
		case 'h':
			usage();
			return EX_OK;
		case 'V':
			printf("bpfstash-gc %s (libbpfstash %d.%d)\n", GC_VERSION,
			       LIBBPFSTASH_MAJOR_VERSION, LIBBPFSTASH_MINOR_VERSION);
			return EX_OK;
		default:
			usage_error("unknown or incomplete option");
		}
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	if (once && interval)
		usage_error("--once and --interval exclude each other");
	if (o.archive_max_set && !o.archive_dir)
		usage_error("--archive-max-size needs --archive");

	if (!interval) {
		err = gc_run(&o, &r);
		if (err)
			return run_failed(&o, &r, err);
		print_summary(&o, &r);
		return exit_status(&r);
	}

	/* A daemon: a pass every interval; a failed pass is retried at the next. */
	{
		struct sigaction sa = { .sa_handler = on_signal };

		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGINT, &sa, NULL);
	}
	status = EX_OK;
	while (!stop) {
		err = gc_run(&o, &r);
		if (err) {
			status = run_failed(&o, &r, err);
			if (status == EX_USAGE)
				return status;
		} else {
			print_summary(&o, &r);
		}
		nap(interval);
	}
	return EX_OK;
}
