// SPDX-License-Identifier: GPL-2.0-only
/*
 * bpfstash(8): list, show, resolve, verify and export the entries of a
 * bpfstash filesystem, or of a copy of one.
 *
 * Dispatch as in bpftool: a command table matched by unique prefix, each
 * command a do_<name>(argc, argv); --json output through one writer, and
 * errors through p_err(), which respects it.  Options may come before or
 * after the command.  Exit codes are sysexits: 0, 1, 64 usage, 69 no stash.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/utsname.h>

#include <bpf/libbpf.h>

#include "main.h"

struct opts opts = { .root = BPFSTASH_DEFAULT_ROOT };
json_writer_t *json_wtr;
const char *bin_name = "bpfstash";

void p_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (json_wtr) {
		jsonw_start_object(json_wtr);
		jsonw_name(json_wtr, "error");
		jsonw_vprintf_enquote(json_wtr, fmt, ap);
		jsonw_end_object(json_wtr);
	} else {
		fprintf(stderr, "Error: ");
		vfprintf(stderr, fmt, ap);
		fprintf(stderr, "\n");
	}
	va_end(ap);
}

void p_info(const char *fmt, ...)
{
	va_list ap;

	if (json_wtr)
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
}

int usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (json_wtr) {
		jsonw_start_object(json_wtr);
		jsonw_name(json_wtr, "error");
		jsonw_vprintf_enquote(json_wtr, fmt, ap);
		jsonw_end_object(json_wtr);
	} else {
		fprintf(stderr, "Error: ");
		vfprintf(stderr, fmt, ap);
		fprintf(stderr, "\nTry '%s --help'.\n", bin_name);
	}
	va_end(ap);
	return EXIT_USAGE;
}

const char *errstr(int err)
{
	switch (err) {
	case -EBADMSG: {
		static char buf[320];
		const char *why = bpfstash_error_detail();

		if (!*why)
			return "corrupt (a file is truncated, oversized or inconsistent)";
		snprintf(buf, sizeof(buf), "corrupt: %s", why);
		return buf;
	}
	case -EPROTONOSUPPORT:
		return "a format this bpfstash does not read";
	default:
		return strerror(err < 0 ? -err : err);
	}
}

const char *entry_errstr(struct bpfstash *stash, const char *name, int err, char *buf,
			 size_t size)
{
	uint32_t version;

	if (err != -EPROTONOSUPPORT || bpfstash_entry_version(stash, name, &version))
		return errstr(err);
	snprintf(buf, size, "format %u, this reader knows %u%s", version,
		 bpfstash_format_version(),
		 version > bpfstash_format_version() ? " (a newer bpfstash reads it)" : "");
	return buf;
}

int entry_exit(int err)
{
	return err == -EPROTONOSUPPORT ? EXIT_FORMAT : EXIT_FAIL;
}

/* The default root cannot be used: is it that the kernel has no bpfstash? */
static bool no_kernel_support(void)
{
	struct utsname u;

	if (opts.root_given || bpfstash_kernel_supported() != 0)
		return false;
	p_err("the running kernel (%s) has no bpfstash: no \"bpfstash\" in "
	      "/proc/filesystems (it needs CONFIG_BPFSTASH; --root reads a copy of a stash)",
	      uname(&u) ? "?" : u.release);
	return true;
}

int stash_open(struct bpfstash **stash)
{
	int err;

	if (no_kernel_support())
		return EXIT_NOSTASH;
	err = bpfstash_open(opts.root, stash);
	if (err) {
		p_err("cannot open the stash at %s: %s%s", opts.root, strerror(-err),
		      err == -ENOENT && !strcmp(opts.root, BPFSTASH_DEFAULT_ROOT) ?
		      " (mount -t bpfstash none " BPFSTASH_DEFAULT_ROOT ")" : "");
		return EXIT_NOSTASH;
	}
	/* The default root is the mount point, in sysfs: empty unless mounted. */
	if (!opts.root_given && !bpfstash_is_mounted(*stash)) {
		p_err("no bpfstash filesystem is mounted at %s (mount -t bpfstash none %s)",
		      opts.root, opts.root);
		bpfstash_close(*stash);
		*stash = NULL;
		return EXIT_NOSTASH;
	}
	return EXIT_OK;
}

/* Whether the default root is a mounted stash (without a word if not). */
bool default_stash_mounted(void)
{
	struct bpfstash *s;
	bool mounted;

	if (bpfstash_open(opts.root, &s))
		return false;
	mounted = bpfstash_is_mounted(s);
	bpfstash_close(s);
	return mounted;
}

int stash_lookup(struct bpfstash *stash, const char *arg, char *name)
{
	size_t len = strlen(arg), i, count, found = 0;
	char **names;
	int err;

	if (bpfstash_name_valid(arg)) {
		memcpy(name, arg, BPFSTASH_HEX_LEN + 1);
		return EXIT_OK;
	}
	for (i = 0; i < len; i++)
		if (!((arg[i] >= '0' && arg[i] <= '9') || (arg[i] >= 'a' && arg[i] <= 'f')))
			break;
	if (i != len || len < 4 || len > BPFSTASH_HEX_LEN)
		return usage_error("'%s' is not an entry name (4 to %d lowercase hex digits)",
				   arg, BPFSTASH_HEX_LEN);
	err = bpfstash_list(stash, &names, &count);
	if (err) {
		p_err("cannot list %s: %s", opts.root, strerror(-err));
		return EXIT_NOSTASH;
	}
	for (i = 0; i < count; i++) {
		if (strncmp(names[i], arg, len))
			continue;
		if (found++) {
			p_err("'%s' is ambiguous: %s, %s...", arg, name, names[i]);
			break;
		}
		memcpy(name, names[i], BPFSTASH_HEX_LEN + 1);
	}
	bpfstash_names_free(names);
	if (found == 1)
		return EXIT_OK;
	if (!found)
		p_err("no entry %s... in %s", arg, opts.root);
	return EXIT_FAIL;
}

int stash_load(struct bpfstash *stash, const char *name, unsigned int flags,
	       struct bpfstash_entry **entry)
{
	int err = bpfstash_entry_load(stash, name, flags, entry);
	char buf[96];

	if (err == -ENOENT)
		p_err("%s: no such entry, or a file of it is missing", name);
	else if (err)
		p_err("%s: %s", name, entry_errstr(stash, name, err, buf, sizeof(buf)));
	return err ? entry_exit(err) : EXIT_OK;
}

void format_age(uint64_t s, char *buf, size_t size)
{
	if (s < 120)
		snprintf(buf, size, "%llus", (unsigned long long)s);
	else if (s < 2 * 3600)
		snprintf(buf, size, "%llum", (unsigned long long)s / 60);
	else if (s < 2 * 86400)
		snprintf(buf, size, "%lluh", (unsigned long long)s / 3600);
	else
		snprintf(buf, size, "%llud", (unsigned long long)s / 86400);
}

void format_time(uint64_t ns, char *buf, size_t size)
{
	time_t t = ns / 1000000000ull;
	struct tm tm;

	if (!ns || !gmtime_r(&t, &tm) || !strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, size, "-");
}

uint64_t now_real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int do_help(int argc, char **argv)
{
	if (json_wtr) {
		jsonw_null(json_wtr);
		return EXIT_OK;
	}
	printf("Usage: %s [OPTIONS] COMMAND [ARGS]\n"
	       "\n"
	       "  ls                        list the entries: name, functions, size, state, age\n"
	       "  show HASH                 an entry's metadata and functions\n"
	       "  lines HASH                its line info, with the source and the JITed bytes\n"
	       "  render HASH FILE          the text file FILE (info, functions, lines) as the\n"
	       "                            kernel shows it, rendered from the binary files\n"
	       "  resolve [--at TIME] ADDR|HASH+OFF...\n"
	       "                            function and source line of an address (held at\n"
	       "                            TIME), or of an offset into an entry's jited file\n"
	       "  verify [HASH...]          recompute the hashes (all entries by default)\n"
	       "  export HASH... --to DIR   write ELF files into DIR/.build-id/xx/yyyy.debug\n"
	       "  decode [-s] [--at TIME] [--archive DIR] [--kallsyms FILE]\n"
	       "                            copy stdin to stdout, each BPF frame of a stack\n"
	       "                            trace (dmesg, oops, bpftrace, /proc/PID/stack, perf\n"
	       "                            script) followed by file:line:col (-s: and source)\n"
	       "  inject [-i IN] [-o OUT] [--archive DIR] [--buildid-dir DIR]\n"
	       "                            a perf.data (or perf record -o - stream) in which a\n"
	       "                            perf without bpfstash resolves BPF programs, gone or\n"
	       "                            not, to function and source line: each function's\n"
	       "                            ELF goes into perf's build-id cache (default\n"
	       "                            $PERF_BUILDID_DIR, else ~/.debug); IN, OUT: - (stdin,\n"
	       "                            stdout) by default\n"
	       "  watch [--existing] [--count N] [--duration S] [--pages N]\n"
	       "                            print each program loaded and unloaded as a JSON\n"
	       "                            line (lost records: a \"lost\" line, then the stash is\n"
	       "                            read again and a \"recovered\" line), until SIGINT\n"
	       "  help                      this text\n"
	       "\n"
	       "  HASH is an entry's name, or a unique prefix of at least 4 hex digits;\n"
	       "  ADDR and OFF are hex (0x optional for ADDR; OFF: 0x for hex, else decimal).\n"
	       "  An address reused by several entries is ambiguous (exit 1, the candidates\n"
	       "  listed) unless a time says whose it was.  TIME: 123.456 seconds since boot\n"
	       "  (as dmesg prints it), @EPOCH_SECONDS[.F], or YYYY-MM-DDTHH:MM:SS[.F][Z] (UTC).\n"
	       "\n"
	       "Options:\n"
	       "  -r, --root DIR   the stash (default " BPFSTASH_DEFAULT_ROOT "), or a copy of it\n"
	       "  -j, --json       JSON output\n"
	       "  -p, --pretty     indented JSON output (implies --json)\n"
	       "  -t, --to DIR     export's destination\n"
	       "  -a, --at TIME    resolve and decode: when the address was seen\n"
	       "  -s, --source     decode: append the source line too\n"
	       "  -A, --archive DIR decode, inject: also the entries bpfstash-gc archived into DIR\n"
	       "  -i, --input FILE inject: the perf.data to read (default: stdin)\n"
	       "  -o, --output FILE inject: the perf.data to write (default: stdout)\n"
	       "      --buildid-dir DIR inject: perf's build-id cache\n"
	       "      --kallsyms FILE decode: the boot's /proc/kallsyms (default: this one's),\n"
	       "                   to recompute frames named after the wrong kernel symbol\n"
	       "      --existing   watch: first, what the stash already holds (source scan)\n"
	       "      --count N    watch: stop after N lines\n"
	       "      --duration S watch: stop after S seconds\n"
	       "      --pages N    watch: ring pages per CPU, a power of two (default 64)\n"
	       "  -v, --verbose    let libbpf print its warnings\n"
	       "  -V, --version    print the version\n"
	       "  -h, --help       print this help\n"
	       "\n"
	       "Exit status: 0 ok, 1 failure or mismatch, 64 usage, 69 stash unavailable.\n",
	       bin_name);
	return EXIT_OK;
}

static int do_version(int argc, char **argv)
{
	if (json_wtr) {
		jsonw_start_object(json_wtr);
		jsonw_string_field(json_wtr, "version", BPFSTASH_TOOL_VERSION);
		jsonw_name(json_wtr, "libbpfstash_version");
		jsonw_printf(json_wtr, "\"%d.%d\"", LIBBPFSTASH_MAJOR_VERSION,
			     LIBBPFSTASH_MINOR_VERSION);
		jsonw_string_field(json_wtr, "libbpf_version", libbpf_version_string());
		jsonw_end_object(json_wtr);
	} else {
		printf("%s v%s\nusing libbpfstash %d.%d, libbpf %s\n", bin_name,
		       BPFSTASH_TOOL_VERSION, LIBBPFSTASH_MAJOR_VERSION,
		       LIBBPFSTASH_MINOR_VERSION, libbpf_version_string());
	}
	return EXIT_OK;
}

struct cmd {
	const char *name;
	int (*func)(int argc, char **argv);
	const char *opts;	/* the short ids of its own options (see main()) */
};

/* What every command takes: --json, --pretty, --root, --verbose, --version, --help. */
#define GLOBAL_OPTS	"jprvVh"

static const struct cmd commands[] = {
	{ "ls",		do_ls,		"" },
	{ "show",	do_show,	"" },
	{ "lines",	do_lines,	"" },
	{ "render",	do_render,	"" },
	{ "resolve",	do_resolve,	"aB" },
	{ "verify",	do_verify,	"" },
	{ "export",	do_export,	"t" },
	{ "decode",	do_decode,	"saABK" },
	{ "inject",	do_inject,	"ioAU" },
	{ "watch",	do_watch,	"CDPE" },
	{ "help",	do_help,	"" },
	{ "version",	do_version,	"" },
	{ NULL }
};

/* The options given, by id: their long names. */
static const char *given[128];

/* A command by its name or a unique prefix of it ("l" is ls or lines). */
static int cmd_select(int argc, char **argv)
{
	const struct cmd *found = NULL, *c;
	size_t len = strlen(argv[0]);
	int id;

	for (c = commands; c->name; c++) {
		if (!strcmp(c->name, argv[0])) {
			found = c;
			break;
		}
		if (!strncmp(c->name, argv[0], len)) {
			if (found)
				return usage_error("'%s' is ambiguous: %s or %s?", argv[0],
						   found->name, c->name);
			found = c;
		}
	}
	if (!found)
		return usage_error("unknown command '%s'", argv[0]);
	for (id = 1; id < 128; id++)
		if (given[id] && !strchr(GLOBAL_OPTS, id) && !strchr(found->opts, id))
			return usage_error("option '--%s' does not apply to '%s'", given[id],
					   found->name);
	return found->func(argc - 1, argv + 1);
}

static int quiet_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "json",	no_argument,		NULL, 'j' },
		{ "pretty",	no_argument,		NULL, 'p' },
		{ "root",	required_argument,	NULL, 'r' },
		{ "to",		required_argument,	NULL, 't' },
		{ "at",		required_argument,	NULL, 'a' },
		{ "source",	no_argument,		NULL, 's' },
		{ "archive",	required_argument,	NULL, 'A' },
		{ "boot-id",	required_argument,	NULL, 'B' },
		{ "kallsyms",	required_argument,	NULL, 'K' },
		{ "verbose",	no_argument,		NULL, 'v' },
		{ "version",	no_argument,		NULL, 'V' },
		{ "help",	no_argument,		NULL, 'h' },
		{ "count",	required_argument,	NULL, 'C' },
		{ "duration",	required_argument,	NULL, 'D' },
		{ "pages",	required_argument,	NULL, 'P' },
		{ "existing",	no_argument,		NULL, 'E' },
		{ "input",	required_argument,	NULL, 'i' },
		{ "output",	required_argument,	NULL, 'o' },
		{ "buildid-dir", required_argument,	NULL, 'U' },
		{ NULL }
	};
	bool help = false, version = false;
	char **args;
	int opt, nargs = 0, ret;

	setlinebuf(stdout);
	args = calloc(argc + 1, sizeof(*args));
	if (!args)
		return EXIT_FAIL;
	opterr = 0;
	/* "-" returns non-options in order as 1: options go anywhere. */
	while ((opt = getopt_long(argc, argv, "-jpr:t:a:A:svVhi:o:", options, NULL)) != -1) {
		if (opt > 1 && opt < 128) {
			const struct option *o;

			for (o = options; o->name; o++)
				if (o->val == opt)
					given[opt] = o->name;
		}
		switch (opt) {
		case 1:
			args[nargs++] = optarg;
			break;
		case 'p':
			opts.pretty = true;
			/* fall through */
		case 'j':
			opts.json = true;
			break;
		case 'r':
			opts.root = optarg;
			opts.root_given = true;
			break;
		case 't':
			opts.to = optarg;
			break;
		case 'a':
			opts.at = optarg;
			break;
		case 's':
			opts.source = true;
			break;
		case 'A':
			opts.archive = optarg;
			break;
		case 'K':
			opts.kallsyms = optarg;
			break;
		case 'B':
			if (bpfstash_boot_id_parse(optarg, opts.boot_id)) {
				ret = usage_error("--boot-id needs a boot id (as "
						  "/proc/sys/kernel/random/boot_id shows it), "
						  "not '%s'", optarg);
				free(args);
				return ret;
			}
			opts.boot_id_given = true;
			break;
		case 'v':
			opts.verbose = true;
			break;
		case 'V':
			version = true;
			break;
		case 'h':
			help = true;
			break;
		case 'C':
		case 'D':
		case 'P': {
			char *endp;
			double v = strtod(optarg, &endp);

			if (endp == optarg || *endp || v < 0 || (opt != 'D' && v != (uint64_t)v)) {
				ret = usage_error("--%s needs a %snumber, not '%s'",
						  opt == 'C' ? "count" : opt == 'D' ? "duration" : "pages",
						  opt == 'D' ? "" : "whole ", optarg);
				free(args);
				return ret;
			}
			if (opt == 'C')
				opts.count = v;
			else if (opt == 'D')
				opts.duration = v;
			else
				opts.pages = v;
			break;
		}
		case 'E':
			opts.existing = true;
			break;
		case 'i':
			opts.input = optarg;
			break;
		case 'o':
			opts.output = optarg;
			break;
		case 'U':
			opts.buildid_dir = optarg;
			break;
		default:
			if (optopt && strchr("rtaACDPioU", optopt))
				ret = usage_error("option '%s' needs an argument", argv[optind - 1]);
			else
				ret = usage_error("unknown option '%s'", argv[optind - 1]);
			free(args);
			return ret;
		}
	}
	while (optind < argc)		/* after "--" */
		args[nargs++] = argv[optind++];

	if (!opts.verbose)
		libbpf_set_print(quiet_print);
	if (opts.json) {
		json_wtr = jsonw_new(stdout);
		if (!json_wtr) {
			free(args);
			return EXIT_FAIL;
		}
		jsonw_pretty(json_wtr, opts.pretty);
	}

	if (help)
		ret = do_help(0, NULL);
	else if (version)
		ret = do_version(0, NULL);
	else if (!nargs)
		ret = usage_error("no command given");
	else
		ret = cmd_select(nargs, args);

	if (json_wtr)
		jsonw_destroy(&json_wtr);
	free(args);
	return ret;
}
