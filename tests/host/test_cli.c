// SPDX-License-Identifier: GPL-2.0-only
/*
 * bpfstash(8) driven as a user would, on the fixtures: help, usage errors
 * and their exit codes, JSON that jq accepts and that says what the library
 * says, and verify failing on a tampered copy.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include <endian.h>
#include <limits.h>
#include <linux/bpf.h>

#include "libbpfstash.h"
#include "fixtures.h"

#ifndef BPFSTASH_BIN
#error "BPFSTASH_BIN must name the bpfstash binary"
#endif

#define ROOT " --root " FIXTURES "/stash "

/* Run a shell command line; stdout (and stderr with 2>&1) into *out. */
static int sh(char **out, const char *fmt, ...)
{
	size_t len = 0, cap = 4096, n;
	char *cmd, *buf = malloc(cap);
	va_list ap;
	FILE *p;
	int st;

	assert_non_null(buf);
	va_start(ap, fmt);
	assert_true(vasprintf(&cmd, fmt, ap) > 0);
	va_end(ap);
	p = popen(cmd, "r");
	assert_non_null(p);
	while ((n = fread(buf + len, 1, cap - len - 1, p)) > 0) {
		len += n;
		if (cap - len < 2) {
			cap *= 2;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
	}
	buf[len] = '\0';
	st = pclose(p);
	free(cmd);
	if (out)
		*out = buf;
	else
		free(buf);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_help_and_version(void **state)
{
	char *out;

	assert_int_equal(sh(&out, BPFSTASH_BIN " --help"), 0);
	assert_non_null(strstr(out, "Usage: bpfstash"));
	assert_non_null(strstr(out, "export HASH... --to DIR"));
	assert_non_null(strstr(out, "watch [--existing] [--count N] [--duration S] [--pages N]"));
	free(out);
	assert_int_equal(sh(&out, BPFSTASH_BIN " help"), 0);
	assert_non_null(strstr(out, "Usage: bpfstash"));
	free(out);
	assert_int_equal(sh(&out, BPFSTASH_BIN " -V"), 0);
	assert_non_null(strstr(out, "bpfstash v"));
	free(out);
	assert_int_equal(sh(NULL, BPFSTASH_BIN " -j --version | jq -e '.version | length > 0'"), 0);
}

/* Usage errors exit 64 with a message; a missing stash exits 69. */
static void test_exit_codes(void **state)
{
	static const char *const usage[] = {
		"", "bogus", "l", "--bogus ls", "ls extra", "show", "show a b", "show xyz",
		"show 12", "lines", "resolve", "resolve zzz", "resolve cadd+zz", "export cadd",
		"export --to /tmp", "--root", "-j frobnicate", "render", "render cadd", "render cadd meta",
		"render cadd lines extra", "watch extra", "watch --pages 3", "watch --count x",
		"watch --duration -1", "watch --pages", "watch --pages 1.5",
		/* Options of other commands. */
		"ls --to /x --count 3", "ls --at 1", "show cadd --source", "export cadd --to /tmp --at 1",
		"resolve --to /tmp cadd+0", "decode --count 3", "watch --archive /tmp", "verify -s",
		"--existing lines cadd",
	};
	char *out;
	size_t i;

	for (i = 0; i < sizeof(usage) / sizeof(usage[0]); i++) {
		int rc = sh(&out, BPFSTASH_BIN ROOT "%s 2>&1", usage[i]);

		if (rc != 64)
			fail_msg("'bpfstash %s' exited %d, not 64: %s", usage[i], rc, out);
		assert_true(strlen(out) > 0);
		free(out);
	}
	/* It names the option and the command. */
	assert_int_equal(sh(&out, BPFSTASH_BIN ROOT " ls --count 3 2>&1"), 64);
	assert_non_null(strstr(out, "option '--count' does not apply to 'ls'"));
	free(out);
	assert_int_equal(sh(&out, BPFSTASH_BIN " --root /nonexistent/stash ls 2>&1"), 69);
	assert_non_null(strstr(out, "/nonexistent/stash"));
	free(out);
	assert_int_equal(sh(NULL, BPFSTASH_BIN " --root /nonexistent/stash verify 2>/dev/null"), 69);
	/* Errors are JSON strings, escaped: a root with a quote in it. */
	assert_int_equal(sh(NULL, BPFSTASH_BIN " -j --root '/nonexistent/\"q' ls | "
			    "jq -e '.error | test(\"nonexistent/\\\"q\")' > /dev/null"), 0);
	/* A kernel without bpfstash (the host's, normally) is named as such. */
	if (bpfstash_kernel_supported() == 0) {
		assert_int_equal(sh(&out, BPFSTASH_BIN " ls 2>&1"), 69);
		assert_non_null(strstr(out, "has no bpfstash"));
		free(out);
	}
	/* an entry that is not there, an address in none */
	assert_int_equal(sh(NULL, BPFSTASH_BIN ROOT "show 0000 2>/dev/null"), 1);
	assert_int_equal(sh(NULL, BPFSTASH_BIN ROOT "resolve 0x1000 2>/dev/null"), 1);
}

/*
 * watch needs the kernel's PERF_RECORD_MMAP3: on a kernel without it (the
 * host's, normally) it says so and exits 69; the guest suite "agent"
 * checks its lines.
 */
static void test_watch_unavailable(void **state)
{
	char *out;
	int rc;

	if (bpfstash_kernel_supported() > 0)
		skip();
	rc = sh(&out, BPFSTASH_BIN ROOT "watch --duration 0.1 2>&1");
	if (rc != 69 || !strstr(out, "cannot open the perf events: this kernel has no PERF_RECORD_MMAP3"))
		fail_msg("watch on a kernel without MMAP3: exit %d: %s", rc, out);
	free(out);
	/* with --json, the error is a JSON object too */
	rc = sh(&out, BPFSTASH_BIN ROOT "-j watch --duration 0.1 | jq -e '.error | test(\"perf events\")'");
	if (rc != 0)
		fail_msg("watch -j on a kernel without MMAP3: %d: %s", rc, out);
	free(out);
}

static void test_ls(void **state)
{
	struct fixture fx;
	char *out;

	fixture_get("subprogs", &fx);
	assert_int_equal(sh(&out, BPFSTASH_BIN ROOT "ls"), 0);
	assert_non_null(strstr(out, fx.hash));
	assert_non_null(strstr(out, "stash_subprogs"));
	free(out);
	/* JSON: three entries, the states of the manifest */
	assert_int_equal(sh(NULL, BPFSTASH_BIN ROOT "ls -j | jq -e 'length == 3'"), 0);
	assert_int_equal(sh(NULL, BPFSTASH_BIN ROOT "-p ls | jq -e "
			    "'[.[] | select(.loaded)] | length == 1 and .[0].hash == \"%s\"'", fx.hash),
			 0);
	assert_int_equal(sh(NULL, BPFSTASH_BIN ROOT "-j ls | jq -e "
			    "'.[] | select(.hash == \"%s\") | .nr_funcs == 4 and .jited_len == 690'",
			    fx.hash), 0);
}

static void test_show_and_lines(void **state)
{
	struct bpfstash_entry *e;
	struct fixture fx;
	char prefix[9], *out, *p;
	uint32_t n = 0;

	fixture_get("subprogs", &fx);
	e = fixture_load(&fx);
	snprintf(prefix, sizeof(prefix), "%.8s", fx.hash);
	assert_int_equal(sh(NULL, BPFSTASH_BIN ROOT "-j show %s | jq -e "
			    "'.hash == \"%s\" and .verified and (.functions | length) == 4 and "
			    ".functions[1].addr == \"0x%llx\" and .functions[1].name == \"%s\"'",
			    prefix, fx.hash, (unsigned long long)bpfstash_entry_func(e, 1)->addr,
			    bpfstash_entry_func_name(e, 1)), 0);
	/* lines: one annotation per line record, bpftool's format */
	assert_int_equal(sh(&out, BPFSTASH_BIN ROOT "lines %s", prefix), 0);
	for (p = out; (p = strstr(p, " line_num:")); p++)
		n++;
	assert_int_equal(n, bpfstash_entry_nr_lines(e));
	assert_non_null(strstr(out, "; int stash_subprogs(struct xdp_md *ctx) [file:"));
	free(out);
	assert_int_equal(sh(NULL, BPFSTASH_BIN ROOT "-j lines %s | jq -e "
			    "'[.[].lines[]] | length == %u'", prefix, bpfstash_entry_nr_lines(e)), 0);
	bpfstash_entry_free(e);
}

/* render gives the kernel's text files, byte for byte, and JSON. */
static void test_render(void **state)
{
	static const char *const files[] = { "info", "functions", "lines" };
	struct fixture fx;
	size_t i;

	fixture_get("large", &fx);
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		assert_int_equal(sh(NULL, BPFSTASH_BIN ROOT "render %.8s %s | cmp -s - '%s/stash/%s/%s'",
				    fx.hash, files[i], FIXTURES, fx.hash, files[i]), 0);
		assert_int_equal(sh(NULL, BPFSTASH_BIN ROOT "-j render %.8s %s | jq -j .text | "
				    "cmp -s - '%s/stash/%s/%s'", fx.hash, files[i], FIXTURES, fx.hash,
				    files[i]), 0);
	}
}

/* The annotations of `lines` are bpftool's, in the same order. */
static void test_lines_like_bpftool(void **state)
{
	static const char *const names[] = { "subprogs", "tiny", "large" };
	char tmp[] = "/tmp/bpfstash-lines-XXXXXX";
	size_t i;
	int fd = mkstemp(tmp);

	assert_true(fd >= 0);
	close(fd);
	for (i = 0; i < 3; i++) {
		struct fixture fx;

		fixture_get(names[i], &fx);
		assert_int_equal(sh(NULL, BPFSTASH_BIN ROOT "lines %s | grep '^; ' > %s", fx.hash,
				    tmp), 0);
		if (sh(NULL, "grep '^; ' %s/bpftool/%s.linum | cmp -s - %s", FIXTURES, names[i], tmp))
			fail_msg("bpfstash lines %s: the annotations differ from bpftool's", names[i]);
	}
	unlink(tmp);
}

/* resolve prints what the library finds, in text and in JSON. */
static void test_resolve(void **state)
{
	struct bpfstash_location loc;
	struct bpfstash_entry *e;
	struct fixture fx;
	char want[512], *out;
	uint64_t addr;

	fixture_get("subprogs", &fx);
	e = fixture_load(&fx);
	addr = bpfstash_entry_func(e, 1)->addr + 0x22;
	assert_int_equal(bpfstash_entry_resolve(e, addr, &loc), 0);
	assert_true(loc.has_line);
	assert_int_equal(sh(&out, BPFSTASH_BIN ROOT "resolve %llx", (unsigned long long)addr), 0);
	snprintf(want, sizeof(want), "%016llx\t%s\tloaded\t%s+0x22\t%s:%u:%u\t%s\n",
		 (unsigned long long)addr, fx.hash, loc.func_name, loc.file, loc.line, loc.col,
		 loc.source);
	assert_string_equal(out, want);
	free(out);
	/* HASH+OFF: the same place, through the jited file */
	assert_int_equal(sh(NULL, BPFSTASH_BIN ROOT "-j resolve %.6s+0x%x | jq -e "
			    "'.[0].func == \"%s\" and .[0].func_off == 34 and .[0].line == %u and "
			    ".[0].col == %u'", fx.hash, bpfstash_entry_func(e, 1)->offset + 0x22,
			    loc.func_name, loc.line, loc.col), 0);
	bpfstash_entry_free(e);
}

/* verify: 0 on the fixtures, 1 and the entry named on a tampered copy. */
static void test_verify_tampered(void **state)
{
	char dir[] = "/tmp/bpfstash-cli-XXXXXX", path[512], *out;
	struct fixture fx, other;
	unsigned char *buf;
	size_t size;

	assert_int_equal(sh(&out, BPFSTASH_BIN ROOT "verify"), 0);
	assert_non_null(strstr(out, "OK "));
	free(out);
	fixture_get("large", &fx);
	fixture_get("tiny", &other);
	assert_non_null(mkdtemp(dir));
	fixture_copy(&fx, dir);
	fixture_copy(&other, dir);
	snprintf(path, sizeof(path), "%s/%s/jited", dir, fx.hash);
	buf = fixture_read_path(path, &size);
	buf[size / 2] ^= 1;
	fixture_write_path(path, buf, size);
	free(buf);

	assert_int_equal(sh(&out, BPFSTASH_BIN " --root %s verify 2>/dev/null", dir), 1);
	snprintf(path, sizeof(path),
		 "FAIL %s: content does not hash to its name (the content hashes to ", fx.hash);
	assert_non_null(strstr(out, path));
	snprintf(path, sizeof(path), "OK %s", other.hash);
	assert_non_null(strstr(out, path));
	free(out);
	/* only the good one named: success */
	assert_int_equal(sh(NULL, BPFSTASH_BIN " --root %s verify %s", dir, other.hash), 0);
	assert_int_equal(sh(NULL, BPFSTASH_BIN " --root %s -j verify | jq -e "
			    "'map(select(.ok | not)) | length == 1 and .[0].hash == \"%s\"'",
			    dir, fx.hash), 0);
	/* a truncated file: corrupt, reported, not a crash */
	snprintf(path, sizeof(path), "%s/%s/funcs", dir, fx.hash);
	assert_int_equal(truncate(path, 7), 0);
	assert_int_equal(sh(&out, BPFSTASH_BIN " --root %s verify %s 2>/dev/null", dir, fx.hash), 1);
	/* which check failed, and on what */
	assert_non_null(strstr(out, "corrupt: funcs: 7 bytes, meta's funcs_size says "));
	free(out);
	/* export refuses it */
	assert_int_equal(sh(NULL, BPFSTASH_BIN " --root %s export %s --to %s/out 2>/dev/null",
			    dir, fx.hash, dir), 1);
	fixture_rmtree(dir);
}

static void test_export(void **state)
{
	char dir[] = "/tmp/bpfstash-cli-XXXXXX", path[512], *out;
	struct fixture a, b;
	struct stat st;

	fixture_get("subprogs", &a);
	fixture_get("tiny", &b);
	assert_non_null(mkdtemp(dir));
	assert_int_equal(sh(&out, BPFSTASH_BIN ROOT "export %s %.10s --to %s", a.hash, b.hash, dir), 0);
	snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", dir, a.hash, a.hash + 2);
	assert_int_equal(stat(path, &st), 0);
	assert_non_null(strstr(out, path));
	free(out);
	snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", dir, b.hash, b.hash + 2);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(sh(NULL, "readelf -n %s | grep -q 'Build ID: %s'", path, b.hash), 0);
	fixture_rmtree(dir);
}

/*
 * Entries of formats this bpfstash does not read: said so, "format N, this
 * reader knows M", and exit 76, never "corrupt"; the other entries listed
 * as usual.
 */
static void test_other_formats(void **state)
{
	char dir[] = "/tmp/bpfstash-cli-formats-XXXXXX", newer[41], older[41];
	struct fixture sub;
	char *out;
	int rc;

	fixture_other_formats(dir, newer, older);
	fixture_get("subprogs", &sub);
	rc = sh(&out, BPFSTASH_BIN " --root %s ls 2>&1", dir);
	assert_int_equal(rc, 76);
	if (!strstr(out, "format 4, this reader knows 3 (a newer bpfstash reads it)") ||
	    !strstr(out, "format 2, this reader knows 3") || !strstr(out, sub.hash) ||
	    strstr(out, "corrupt"))
		fail_msg("ls of other formats: %s", out);
	free(out);
	rc = sh(&out, BPFSTASH_BIN " --root %s show %s 2>&1", dir, newer);
	assert_int_equal(rc, 76);
	assert_non_null(strstr(out, "format 4, this reader knows 3"));
	free(out);
	rc = sh(&out, BPFSTASH_BIN " --root %s verify 2>&1", dir);
	assert_int_equal(rc, 76);
	assert_non_null(strstr(out, "format 2, this reader knows 3"));
	free(out);
	/* JSON: the entry's error says it, the others are there. */
	rc = sh(&out, BPFSTASH_BIN " --root %s -j ls | jq -e '[.[] | select(.error | "
		"test(\"format 4, this reader knows 3\")?)] | length == 1' 2>&1", dir);
	assert_int_equal(rc, 0);
	free(out);
	/* A stash of format 3 only: 0, and show names who made the entry. */
	rc = sh(&out, BPFSTASH_BIN ROOT "show %s", sub.hash);
	assert_int_equal(rc, 0);
	if (!strstr(out, "loader           pid ") || !strstr(out, " comm bpftool cgroup ") ||
	    !strstr(out, "machine          x86_64") || !strstr(out, "boot_id          "))
		fail_msg("show: %s", out);
	free(out);
	assert_int_equal(sh(NULL, BPFSTASH_BIN ROOT "-j show %s | jq -e '.loader.comm == \"bpftool\""
			    " and (.boot_id | length) == 36 and .machine == \"x86_64\"'", sub.hash), 0);
	fixture_rmtree(dir);
}

/*
 * What a link attached the program to, as show and ls print it: "-" and
 * null without one (the fixtures), the target, type and id with one (a
 * copy of a fixture whose meta names a tracing link).
 */
static void test_link_shown(void **state)
{
	char dir[] = "/tmp/bpfstash-cli-link-XXXXXX", path[PATH_MAX];
	struct bpfstash_meta m;
	struct fixture sub;
	char *out;
	FILE *f;

	fixture_get("subprogs", &sub);
	assert_int_equal(sh(&out, BPFSTASH_BIN ROOT "show %s", sub.hash), 0);
	if (!strstr(out, "\nlink             -\n"))
		fail_msg("show without a link: %s", out);
	free(out);
	assert_int_equal(sh(NULL, BPFSTASH_BIN ROOT "-j show %s | jq -e '.link == null'",
			    sub.hash), 0);

	assert_non_null(mkdtemp(dir));
	assert_int_equal(sh(NULL, "cp -r %s/stash/%s %s/", FIXTURES, sub.hash, dir), 0);
	snprintf(path, sizeof(path), "%s/%s/meta", dir, sub.hash);
	f = fopen(path, "r+b");
	assert_non_null(f);
	assert_int_equal(fread(&m, 1, sizeof(m), f), sizeof(m));
	m.link_type = htole32(BPF_LINK_TYPE_TRACING);
	m.link_id = htole32(7);
	snprintf(m.link_target, sizeof(m.link_target), "tracing:tcp_sendmsg");
	rewind(f);
	assert_int_equal(fwrite(&m, 1, sizeof(m), f), sizeof(m));
	assert_int_equal(fclose(f), 0);
	assert_int_equal(sh(&out, BPFSTASH_BIN " --root %s show %s", dir, sub.hash), 0);
	if (!strstr(out, "\nlink             tracing:tcp_sendmsg (tracing link 7)\n"))
		fail_msg("show with a link: %s", out);
	free(out);
	assert_int_equal(sh(NULL, BPFSTASH_BIN " --root %s -j show %s | jq -e '.link == "
			    "{\"type\": \"tracing\", \"id\": 7, \"target\": \"tracing:tcp_sendmsg\"}'",
			    dir, sub.hash), 0);
	assert_int_equal(sh(NULL, BPFSTASH_BIN " --root %s -j ls | jq -e "
			    "'.[0].link.target == \"tracing:tcp_sendmsg\"'", dir), 0);
	/* An unterminated target is a malformed meta, not a long name. */
	memset(m.link_target, 'A', sizeof(m.link_target));
	f = fopen(path, "r+b");
	assert_non_null(f);
	assert_int_equal(fwrite(&m, 1, sizeof(m), f), sizeof(m));
	assert_int_equal(fclose(f), 0);
	assert_int_not_equal(sh(&out, BPFSTASH_BIN " --root %s show %s 2>&1", dir, sub.hash), 0);
	if (!strstr(out, "corrupt") && !strstr(out, "malformed") && !strstr(out, "Bad message"))
		fail_msg("show of an unterminated link target: %s", out);
	free(out);
	fixture_rmtree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_other_formats),
		cmocka_unit_test(test_link_shown),
		cmocka_unit_test(test_help_and_version),
		cmocka_unit_test(test_exit_codes),
		cmocka_unit_test(test_watch_unavailable),
		cmocka_unit_test(test_ls),
		cmocka_unit_test(test_show_and_lines),
		cmocka_unit_test(test_render),
		cmocka_unit_test(test_lines_like_bpftool),
		cmocka_unit_test(test_resolve),
		cmocka_unit_test(test_verify_tampered),
		cmocka_unit_test(test_export),
	};

	return cmocka_run_group_tests_name("cli", tests, NULL, NULL);
}
