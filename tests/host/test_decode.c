// SPDX-License-Identifier: GPL-2.0-only
/*
 * bpfstash decode and resolve --at, driven as a user would, on copies of
 * the fixtures with known load/unload windows (tiny 100..200 s, large from
 * 300 s and still loaded: tiny's image lies inside large's).  The expected
 * annotations come from the library's per-entry resolution of the same
 * address (checked against bpftool in test_resolve), never from decode.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "libbpfstash.h"
#include "fixtures.h"

#ifndef BPFSTASH_BIN
#error "BPFSTASH_BIN must name the bpfstash binary"
#endif

#define NS FIXTURE_NS
#define EPOCH FIXTURE_EPOCH

struct scene {
	char dir[64];
	struct fixture fx[3];	/* tiny, large, subprogs */
	struct bpfstash_entry *e[3];
	uint64_t shared;
};

static int setup(void **state)
{
	static const char *const names[] = { "tiny", "large", "subprogs" };
	struct scene *sc = calloc(1, sizeof(*sc));
	int i;

	assert_non_null(sc);
	strcpy(sc->dir, "/tmp/bpfstash-decode-XXXXXX");
	assert_non_null(mkdtemp(sc->dir));
	for (i = 0; i < 3; i++) {
		fixture_get(names[i], &sc->fx[i]);
		sc->e[i] = fixture_load(&sc->fx[i]);
		fixture_copy(&sc->fx[i], sc->dir);
	}
	fixture_set_times(sc->dir, sc->fx[0].hash, 100, 200);
	fixture_set_times(sc->dir, sc->fx[1].hash, 300, 0);
	sc->shared = bpfstash_entry_func(sc->e[0], 0)->addr + 8;
	*state = sc;
	return 0;
}

static int teardown(void **state)
{
	struct scene *sc = *state;
	int i;

	fixture_rmtree(sc->dir);
	for (i = 0; i < 3; i++)
		bpfstash_entry_free(sc->e[i]);
	free(sc);
	return 0;
}

/* " file:line:col" (": source" with @src) of @addr in entry @e, as decode must append it. */
static void note(const struct bpfstash_entry *e, uint64_t addr, bool src, char *buf, size_t size)
{
	struct bpfstash_location loc;

	assert_int_equal(bpfstash_entry_resolve(e, addr, &loc), 0);
	assert_true(loc.has_line);
	snprintf(buf, size, " %s:%u:%u%s%s", loc.file, loc.line, loc.col, src ? ": " : "",
		 src ? loc.source : "");
}

/* A growing buffer of bytes (NULs allowed). */
struct buf {
	char *p;
	size_t len;
};

static void put(struct buf *b, const void *s, size_t n)
{
	b->p = realloc(b->p, b->len + n + 1);
	assert_non_null(b->p);
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

static void puts_(struct buf *b, const char *s)
{
	put(b, s, strlen(s));
}

/* Input line @in; expected output: @in with @ann before its end. */
static void line(struct buf *in, struct buf *want, const char *text, const char *ann,
		 const char *eol)
{
	puts_(in, text);
	puts_(in, eol);
	puts_(want, text);
	puts_(want, ann);
	puts_(want, eol);
}

/* Run decode on @in with @args; its output must be @want, byte for byte. */
static void check_decode(struct scene *sc, const struct buf *in, const struct buf *want,
			 const char *args)
{
	char inp[600], outp[600];
	size_t size;
	char *out;

	snprintf(inp, sizeof(inp), "%s/in", sc->dir);
	snprintf(outp, sizeof(outp), "%s/out", sc->dir);
	fixture_write_path(inp, in->p, in->len);
	assert_int_equal(fixture_sh(BPFSTASH_BIN " --root %s decode %s < %s > %s", sc->dir, args, inp,
			    outp), 0);
	out = fixture_read_path(outp, &size);
	if (size != want->len || memcmp(out, want->p, size)) {
		char cmd[1400];

		snprintf(cmd, sizeof(cmd), "%s/want", sc->dir);
		fixture_write_path(cmd, want->p, want->len);
		snprintf(cmd, sizeof(cmd), "diff -a %s/want %s >&2", sc->dir, outp);
		(void)!system(cmd);
		fail_msg("decode %s: the output differs (%zu bytes, expected %zu)", args, size,
			 want->len);
	}
	free(out);
}

/* Every input format, each frame with its expected annotation. */
static void test_formats(void **state)
{
	struct scene *sc = *state;
	const struct bpfstash_entry *tiny = sc->e[0], *large = sc->e[1], *sub = sc->e[2];
	const struct bpfstash_func *ft = bpfstash_entry_func(tiny, 0);
	const struct bpfstash_func *fl = bpfstash_entry_func(large, 0);
	const struct bpfstash_func *fs0 = bpfstash_entry_func(sub, 0);
	const struct bpfstash_func *fs1 = bpfstash_entry_func(sub, 1);
	const char *nt = bpfstash_entry_func_name(tiny, 0);
	const char *nl = bpfstash_entry_func_name(large, 0);
	const char *ns0 = bpfstash_entry_func_name(sub, 0);
	const char *ns1 = bpfstash_entry_func_name(sub, 1);
	uint64_t lo = sc->shared - fl->addr;	/* the shared address, in large */
	struct buf in = {}, want = {};
	char t[1024], a[2048];
	int src;

	for (src = 0; src < 2; src++) {
		in.len = want.len = 0;
		/* oops / WARN / dmesg: the line's time picks the entry */
		line(&in, &want, "[  150.000000] Call Trace:", "", "\n");
		snprintf(t, sizeof(t), "[  150.123456]  %s+0x8/0x%x", nt, ft->len);
		note(tiny, ft->addr + 8, src, a, sizeof(a));
		line(&in, &want, t, a, "\n");
		snprintf(t, sizeof(t), "[  350.123456]  ? %s+0x%llx/0x%x", nl,
			 (unsigned long long)lo, fl->len);
		note(large, sc->shared, src, a, sizeof(a));
		line(&in, &want, t, a, "\n");
		snprintf(t, sizeof(t), "<4>[  350.1] RIP: 0010:%s+0x%llx/0x%x", nl,
			 (unsigned long long)lo, fl->len);
		line(&in, &want, t, a, "\n");
		/* a raw address: by the time on the line */
		snprintf(t, sizeof(t), "[  150.5] 0x%llx", (unsigned long long)sc->shared);
		note(tiny, sc->shared, src, a, sizeof(a));
		line(&in, &want, t, a, "\n");
		snprintf(t, sizeof(t), "[  350.5] %llx", (unsigned long long)sc->shared);
		note(large, sc->shared, src, a, sizeof(a));
		line(&in, &want, t, a, "\n");
		/* ... and without one: ambiguous, never a guess */
		snprintf(t, sizeof(t), "ip %llx", (unsigned long long)sc->shared);
		line(&in, &want, t, " (ambiguous: 2 entries)", "\n");
		/* between the windows */
		snprintf(t, sizeof(t), "[  250.000000] %llx", (unsigned long long)sc->shared);
		line(&in, &want, t, " (not loaded at that time: 2 entries at other times)", "\n");
		/* bpftrace kstack: decimal offset, no size */
		snprintf(t, sizeof(t), "        %s+%u", ns1, 34);
		note(sub, fs1->addr + 34, src, a, sizeof(a));
		line(&in, &want, t, a, "\n");
		/* /proc/PID/stack */
		snprintf(t, sizeof(t), "[<0>] %s+0x1c/0x%x", ns0, fs0->len);
		note(sub, fs0->addr + 0x1c, src, a, sizeof(a));
		line(&in, &want, t, a, "\n");
		/* perf script: the sample header's time holds for its callchain */
		line(&in, &want, "swapper     0 [000]   150.250000:     250000 cpu-clock:", "", "\n");
		snprintf(t, sizeof(t), "\t%llx %s+0x8 ([kernel.kallsyms])",
			 (unsigned long long)sc->shared, nt);
		note(tiny, sc->shared, src, a, sizeof(a));
		line(&in, &want, t, a, "\n");
		snprintf(t, sizeof(t), "\t%llx %s+0x1c (%s)", (unsigned long long)fs0->addr + 0x1c,
			 ns0, ns0);
		note(sub, fs0->addr + 0x1c, src, a, sizeof(a));
		line(&in, &want, t, a, "\n");
		snprintf(t, sizeof(t), "\t%llx [unknown] (%s)", (unsigned long long)sc->shared, nt);
		note(tiny, sc->shared, src, a, sizeof(a));
		line(&in, &want, t, a, "\n");
		line(&in, &want, "", "", "\n");
		/* a CRLF line: the annotation before the CR */
		snprintf(t, sizeof(t), "[<0>] %s+0x1c/0x%x", ns0, fs0->len);
		note(sub, fs0->addr + 0x1c, src, a, sizeof(a));
		line(&in, &want, t, a, "\r\n");
		/* not ours: a wrong size, a name nobody has, a kernel address, text */
		snprintf(t, sizeof(t), "[<0>] %s+0x1c/0x%x", ns0, fs0->len + 1);
		line(&in, &want, t, "", "\n");
		line(&in, &want, " bpf_prog_0123456789abcdef_nobody+0x10/0x20", "", "\n");
		line(&in, &want, "RAX: ffff888100000000 RBX: 0000000000000000", "", "\n");
		line(&in, &want, "[    1.000000]  do_syscall_64+0x82/0x190", "", "\n");
		put(&in, "bin\0ary\x01\xff\n", 11);
		put(&want, "bin\0ary\x01\xff\n", 11);
		/* a last line without its end */
		snprintf(t, sizeof(t), "        %s+%u", ns1, 34);
		note(sub, fs1->addr + 34, src, a, sizeof(a));
		line(&in, &want, t, a, "");
		check_decode(sc, &in, &want, src ? "-s" : "");
	}
	/* --at decides for the lines without a time */
	in.len = want.len = 0;
	snprintf(t, sizeof(t), "ip %llx", (unsigned long long)sc->shared);
	note(large, sc->shared, 0, a, sizeof(a));
	line(&in, &want, t, a, "\n");
	check_decode(sc, &in, &want, "--at 400");
	in.len = want.len = 0;
	note(tiny, sc->shared, 0, a, sizeof(a));
	line(&in, &want, t, a, "\n");
	check_decode(sc, &in, &want, "--at @1700000120");
	free(in.p);
	free(want.p);
}

/*
 * A frame named after the kernel symbol before it, as bpftrace prints
 * kstack frames of programs unloaded before it exits ("_einittext+NNN"):
 * with the boot's kallsyms (--kallsyms), its address is recomputed and
 * decoded as a bare address: by the time on the line, else ambiguous.
 * Frames within their symbol, names kallsyms holds twice or lacks, and
 * offsets past the last symbol are left alone.
 */
static void test_misnamed_frames(void **state)
{
	struct scene *sc = *state;
	const struct bpfstash_entry *sub = sc->e[2], *tiny = sc->e[0];
	const struct bpfstash_func *fs1 = bpfstash_entry_func(sub, 1);
	uint64_t text = 0xffffffff82e00000ULL, at = fs1->addr + 34;
	struct bpfstash_location loc;
	struct buf in = {}, want = {};
	char t[1024], a[2048], ks[600], pre[700];
	FILE *f;

	assert_true(at > text + 0x10);
	snprintf(ks, sizeof(ks), "%s/kallsyms", sc->dir);
	f = fopen(ks, "w");
	assert_non_null(f);
	fprintf(f, "ffffffff81000000 T _stext\n"
		   "ffffffff81a00000 T bpf_test_run\n"
		   "ffffffff81a00400 T bpf_test_finish\n"
		   "ffffffff81b00000 t twice\n"
		   "ffffffff81b00100 t twice\n"
		   "%llx T _einittext\n"
		   "%llx t after_einittext\n"
		   "ffffffffc0000000 t last_symbol\t[some_module]\n"
		   "not a line\n", (unsigned long long)text, (unsigned long long)text + 0x10);
	fclose(f);

	assert_int_equal(bpfstash_entry_resolve(sub, at, &loc), 0);
	snprintf(pre, sizeof(pre), " (0x%llx: %s+0x%x)", (unsigned long long)at, loc.func_name,
		 loc.func_off);
	/* bpftrace's kstack: decimal; only subprogs holds this address */
	snprintf(t, sizeof(t), "        _einittext+%llu", (unsigned long long)(at - text));
	note(sub, at, false, a, sizeof(a));
	snprintf(ks + 300, 300, "%s", pre);
	strncat(ks + 300, a, 299 - strlen(ks + 300));
	line(&in, &want, t, ks + 300, "\n");
	/* a dmesg-like frame: hex offset and a size */
	snprintf(t, sizeof(t), "[  150.1]  _einittext+0x%llx/0x10", (unsigned long long)(at - text));
	line(&in, &want, t, ks + 300, "\n");
	/* the shared address, without a time: ambiguous, with what it is */
	snprintf(t, sizeof(t), "        _einittext+%llu", (unsigned long long)(sc->shared - text));
	snprintf(a, sizeof(a), " (0x%llx) (ambiguous: 2 entries)", (unsigned long long)sc->shared);
	line(&in, &want, t, a, "\n");
	/* ... and with one: tiny's */
	snprintf(t, sizeof(t), "[  150.2] _einittext+%llu", (unsigned long long)(sc->shared - text));
	assert_int_equal(bpfstash_entry_resolve(tiny, sc->shared, &loc), 0);
	snprintf(a, sizeof(a), " (0x%llx: %s+0x%x)", (unsigned long long)sc->shared,
		 loc.func_name, loc.func_off);
	note(tiny, sc->shared, false, pre, sizeof(pre));
	strncat(a, pre, sizeof(a) - strlen(a) - 1);
	line(&in, &want, t, a, "\n");
	/* left alone: a recomputed address no entry holds, ... */
	line(&in, &want, "        _einittext+4096", "", "\n");
	/* ... and frames that are not misnamed */
	line(&in, &want, "        bpf_test_run+484", "", "\n");
	line(&in, &want, "        twice+4096", "", "\n");
	line(&in, &want, "        nobody_has_me+4096", "", "\n");
	line(&in, &want, "        last_symbol+4096", "", "\n");
	line(&in, &want, "a+b and 1+2 are no frames", "", "\n");
	snprintf(t, sizeof(t), "--kallsyms %s/kallsyms", sc->dir);
	check_decode(sc, &in, &want, t);

	/* A kallsyms that hides its addresses, or none: a usage error. */
	f = fopen(ks, "w");
	assert_non_null(f);
	fprintf(f, "0000000000000000 T _stext\n0000000000000000 T _einittext\n");
	fclose(f);
	assert_int_equal(fixture_sh(BPFSTASH_BIN " --root %s decode --kallsyms %s < /dev/null "
				    "2> %s/err", sc->dir, ks, sc->dir), 64);
	assert_int_equal(fixture_sh("grep -q 'every address is 0' %s/err", sc->dir), 0);
	assert_int_equal(fixture_sh(BPFSTASH_BIN " --root %s decode --kallsyms %s/none < /dev/null "
				    "2> /dev/null", sc->dir, sc->dir), 64);
	/* decode's option only */
	assert_int_equal(fixture_sh(BPFSTASH_BIN " --root %s ls --kallsyms %s > /dev/null 2>&1",
				    sc->dir, ks), 64);
	free(in.p);
	free(want.p);
}

/*
 * decode reads the stash once, and again when a frame is in no entry (a
 * second after the last read at the soonest): a trace read as it is
 * written has frames of programs stored after decode started.
 */
static void test_live_trace(void **state)
{
	struct scene *sc = *state;
	const struct bpfstash_entry *sub = sc->e[2], *tiny = sc->e[0];
	const struct bpfstash_func *fs1 = bpfstash_entry_func(sub, 1);
	const struct bpfstash_func *ft = bpfstash_entry_func(tiny, 0);
	char dir[] = "/tmp/bpfstash-live-XXXXXX", t1[512], t2[512], a1[2048], a2[2048];
	char want[5000], path[600];
	size_t size;
	char *out;

	assert_non_null(mkdtemp(dir));
	fixture_copy(&sc->fx[0], dir);
	snprintf(t1, sizeof(t1), " %s+0x8/0x%x", bpfstash_entry_func_name(tiny, 0), ft->len);
	note(tiny, ft->addr + 8, false, a1, sizeof(a1));
	snprintf(t2, sizeof(t2), "        %s+%u", bpfstash_entry_func_name(sub, 1), 34);
	note(sub, fs1->addr + 34, false, a2, sizeof(a2));
	/* The second frame's entry arrives after decode has read the stash. */
	assert_int_equal(fixture_sh("(printf '%%s\\n' '%s'; sleep 0.5; cp -r %s/stash/%s %s/; "
				    "sleep 1.5; printf '%%s\\n' '%s') | "
				    BPFSTASH_BIN " --root %s decode > %s/out",
				    t1, FIXTURES, sc->fx[2].hash, dir, t2, dir, dir), 0);
	snprintf(path, sizeof(path), "%s/out", dir);
	out = fixture_read_path(path, &size);
	snprintf(want, sizeof(want), "%s%s\n%s%s\n", t1, a1, t2, a2);
	if (size != strlen(want) || memcmp(out, want, size))
		fail_msg("got '%.*s', want '%s'", (int)size, out, want);
	free(out);
	fixture_rmtree(dir);
}

/* Junk in, the same junk out: binary, NULs, 1 MB lines, no end of line. */
static void test_junk(void **state)
{
	struct scene *sc = *state;
	struct buf in = {}, want = {};
	char t[256];
	size_t i;

	srand(22);
	for (i = 0; i < (1u << 20); i++) {
		char c = rand() & 0xff;

		put(&in, &c, 1);
	}
	put(&in, "\n", 1);
	/* a 1 MB line with a frame at its end: copied through, not looked at */
	for (i = 0; i < (1u << 20); i++)
		put(&in, "x", 1);
	snprintf(t, sizeof(t), " %s+0x8/0x%x\n", bpfstash_entry_func_name(sc->e[0], 0),
		 bpfstash_entry_func(sc->e[0], 0)->len);
	puts_(&in, t);
	for (i = 0; i < 4096; i++)
		put(&in, "\0", 1);
	for (i = 0; i < 3000; i++)
		puts_(&in, "[ 99999999999999999999.9] bpf_prog_+0x/0x ffff 0xffffffffffff"
		      "ffffff bpf_prog_0123456789abcdeg_x+0x1\n");
	puts_(&in, "[<0>] bpf_prog_0123456789abcdef_");
	put(&want, in.p, in.len);
	check_decode(sc, &in, &want, "-s");
	free(in.p);
	free(want.p);
	/* usage errors */
	assert_int_equal(fixture_sh(BPFSTASH_BIN " --root %s decode extra < /dev/null 2>/dev/null",
			    sc->dir), 64);
	assert_int_equal(fixture_sh(BPFSTASH_BIN " --root %s decode --at yesterday < /dev/null 2>/dev/null",
			    sc->dir), 64);
	assert_int_equal(fixture_sh(BPFSTASH_BIN " --root %s -j decode < /dev/null > /dev/null", sc->dir),
			 64);
	assert_int_equal(fixture_sh(BPFSTASH_BIN " --root /nonexistent decode < /dev/null 2>/dev/null"),
			 69);
}

/* resolve --at: the entry of that time; without one, ambiguous, exit 1, candidates. */
static void test_resolve_at_cli(void **state)
{
	struct scene *sc = *state;
	unsigned long long a = sc->shared;
	const char *d = sc->dir;

	assert_int_equal(fixture_sh(BPFSTASH_BIN " --root %s -j resolve --at 150.5 %llx | jq -e "
			    "'.[0].hash == \"%s\"' > /dev/null", d, a, sc->fx[0].hash), 0);
	assert_int_equal(fixture_sh(BPFSTASH_BIN " --root %s -j resolve --at 2023-11-14T22:15:50Z %llx | "
			    "jq -e '.[0].hash == \"%s\"' > /dev/null", d, a, sc->fx[0].hash), 0);
	assert_int_equal(fixture_sh(BPFSTASH_BIN " --root %s resolve --at 1000 %llx | grep -q '\t%s\t'",
			    d, a, sc->fx[1].hash), 0);
	/* ambiguous: exit 1, both listed with their windows */
	assert_int_equal(fixture_sh(BPFSTASH_BIN " --root %s resolve %llx > /dev/null 2> %s/err", d, a, d),
			 1);
	assert_int_equal(fixture_sh("grep -q 'ambiguous: held by 2 entries' %s/err && "
			    "grep -q 'candidate %s stash_tiny .*+100.000000000..+200.000000000 s' %s/err && "
			    "grep -q 'candidate %s stash_large .*still loaded' %s/err", d, sc->fx[0].hash,
			    d, sc->fx[1].hash, d), 0);
	assert_int_equal(fixture_sh(BPFSTASH_BIN " --root %s -j resolve %llx | jq -e '.[0].candidates | "
			    "length == 2 and .[0].hash == \"%s\" and .[0].load_time_boot_ns == \"%llu\" "
			    "and .[1].unload_time_ns == \"0\"' > /dev/null", d, a, sc->fx[0].hash,
			    100 * NS), 0);
	/* between the windows: none, and who held it */
	assert_int_equal(fixture_sh(BPFSTASH_BIN " --root %s -j resolve --at 250 %llx | jq -e "
			    "'.[0].error and (.[0].candidates | length == 2)' > /dev/null", d, a), 0);
	assert_int_equal(fixture_sh(BPFSTASH_BIN " --root %s resolve --at 250 %llx 2>/dev/null", d, a), 1);
	assert_int_equal(fixture_sh(BPFSTASH_BIN " --root %s resolve --at 12x %llx 2>/dev/null", d, a), 64);
	assert_int_equal(fixture_sh(BPFSTASH_BIN " --root %s resolve --at 2026-13-45T00:00:00Z %llx "
			    "2>/dev/null", d, a), 64);
}

/*
 * --archive: entries bpfstash-gc expired are read from its archive, as if
 * they were still in the stash, with the stash for the others.  Archives
 * are untrusted: a corrupt one, and one whose members are a symlink and a
 * path out of its directory, are skipped with a word; nothing is written
 * outside decode's private directory, which is gone afterwards.
 */
static void test_archive(void **state)
{
	struct scene *sc = *state;
	const struct bpfstash_entry *tiny = sc->e[0], *large = sc->e[1];
	const struct bpfstash_func *ft = bpfstash_entry_func(tiny, 0);
	const char *nt = bpfstash_entry_func_name(tiny, 0);
	const char *d = sc->dir, *th = sc->fx[0].hash;
	struct buf in = {}, want = {}, none = {};
	char ar[128], tmp[128], t[1024], a[2048];

	snprintf(ar, sizeof(ar), "%s.archive", d);
	snprintf(tmp, sizeof(tmp), "%s.tmp", d);
	assert_int_equal(fixture_sh("rm -rf %s %s && mkdir %s", ar, tmp, tmp), 0);
	/* tiny is the only unloaded entry: the only one to expire */
	assert_int_equal(fixture_sh(BPFSTASH_GC_BIN " --root %s --archive %s --max-age 1s --now 4000000000 "
			    "> /dev/null", d, ar), 0);
	assert_int_equal(fixture_sh("test ! -e %s/%s && test -f %s/%.2s/%s.tar.zst", d, th, ar, th, th), 0);

	/* tiny's frame, large's at its time, both for the address they shared */
	snprintf(t, sizeof(t), "[  150.123456]  %s+0x8/0x%x", nt, ft->len);
	note(tiny, ft->addr + 8, false, a, sizeof(a));
	line(&in, &want, t, a, "\n");
	line(&none, &none, t, "", "\n");
	snprintf(t, sizeof(t), "[  150.5] %llx", (unsigned long long)sc->shared);
	note(tiny, sc->shared, false, a, sizeof(a));
	line(&in, &want, t, a, "\n");
	snprintf(t, sizeof(t), "[  350.5] %llx", (unsigned long long)sc->shared);
	note(large, sc->shared, false, a, sizeof(a));
	line(&in, &want, t, a, "\n");
	/* one entry in each source: ambiguous without a time, as before */
	snprintf(t, sizeof(t), "ip %llx", (unsigned long long)sc->shared);
	line(&in, &want, t, " (ambiguous: 2 entries)", "\n");
	snprintf(t, sizeof(t), "[  250.000000] %llx", (unsigned long long)sc->shared);
	line(&in, &want, t, " (not loaded at that time: 2 entries at other times)", "\n");
	snprintf(t, sizeof(t), "--archive %s", ar);
	check_decode(sc, &in, &want, t);
	/* without the archive, tiny is gone */
	check_decode(sc, &none, &none, "");

	/* hostile archives next to the good one: skipped, the good one still used */
	assert_int_equal(fixture_sh("mkdir -p %s/00 && head -c 5000 /dev/urandom > "
			    "%s/00/0000000000000000000000000000000000000000.tar.zst", ar, ar), 0);
	assert_int_equal(fixture_sh("cd %s && mkdir -p 1111111111111111111111111111111111111111 && "
			    "ln -s /etc/passwd 1111111111111111111111111111111111111111/meta && "
			    "echo evil > escape && mkdir -p %s/11 && tar --zstd -cf "
			    "%s/11/1111111111111111111111111111111111111111.tar.zst "
			    "1111111111111111111111111111111111111111/meta ../%s/escape "
			    "--transform 's,^\\.\\./[^/]*/escape,1111111111111111111111111111111111111111/../../escape,' "
			    "2>/dev/null && rm -rf 1111111111111111111111111111111111111111 escape",
			    tmp, ar, ar, strrchr(tmp, '/') + 1), 0);
	snprintf(t, sizeof(t), "--archive %s 2> %s/err", ar, tmp);
	assert_int_equal(setenv("TMPDIR", tmp, 1), 0);
	check_decode(sc, &in, &want, t);
	assert_int_equal(unsetenv("TMPDIR"), 0);
	assert_int_equal(fixture_sh("grep -q '0000000000000000000000000000000000000000.tar.zst: .*; skipped' "
			    "%s/err", tmp), 0);
	/* nothing left in TMPDIR but the error output: no escape, no private directory */
	assert_int_equal(fixture_sh("test \"$(ls -A %s)\" = err && test ! -e %s/escape && "
			    "test ! -e %s/../escape", tmp, tmp, d), 0);

	/*
	 * The total is capped: past BPFSTASH_DECODE_ARCHIVE_MAX bytes, what
	 * the archive that crossed it gave is left out, the archives not read
	 * are counted, and the private directory is gone all the same.
	 */
	snprintf(t, sizeof(t), "--archive %s 2> %s/err", ar, tmp);
	assert_int_equal(setenv("TMPDIR", tmp, 1), 0);
	assert_int_equal(setenv("BPFSTASH_DECODE_ARCHIVE_MAX", "100", 1), 0);
	check_decode(sc, &none, &none, t);
	assert_int_equal(unsetenv("BPFSTASH_DECODE_ARCHIVE_MAX"), 0);
	assert_int_equal(unsetenv("TMPDIR"), 0);
	assert_int_equal(fixture_sh("grep -q 'reached 100 bytes (BPFSTASH_DECODE_ARCHIVE_MAX): "
			    "[1-9][0-9]* archives not read' %s/err", tmp), 0);
	assert_int_equal(fixture_sh("test \"$(ls -A %s)\" = err", tmp), 0);
	assert_int_equal(fixture_sh("BPFSTASH_DECODE_ARCHIVE_MAX=lots " BPFSTASH_BIN " --root %s "
			    "decode --archive %s < /dev/null 2>/dev/null", d, ar), 64);

	/* errors: no such archive directory (69), and no argument (64) */
	assert_int_equal(fixture_sh(BPFSTASH_BIN " --root %s decode --archive %s/none < /dev/null "
			    "2>/dev/null", d, tmp), 69);
	assert_int_equal(fixture_sh(BPFSTASH_BIN " --root %s decode --archive < /dev/null 2>/dev/null",
			    d), 64);
	assert_int_equal(fixture_sh("rm -rf %s %s", ar, tmp), 0);
	free(in.p);
	free(want.p);
	free(none.p);
}

/* Say in entry @hash's meta that it was made in the boot whose id is 16 times @byte. */
static void set_boot(const char *dir, const char *hash, uint8_t byte)
{
	struct bpfstash_meta *m;
	char path[512];
	size_t size;

	snprintf(path, sizeof(path), "%s/%s/meta", dir, hash);
	m = fixture_read_path(path, &size);
	memset(m->boot_id, byte, sizeof(m->boot_id));
	fixture_write_path(path, m, size);
	free(m);
}

/*
 * Archives of several boots: tiny's entry, archived, of one boot (loaded
 * from 100 to 200 s since it), large's in the stash of another (from 150 s
 * on), at the address they shared.  At 175 s either could hold it: without
 * --boot-id that is ambiguous, with it each boot's entry answers.  An
 * archive of a format decode does not read is left out with a word, and
 * decode exits 76.
 */
static void test_archive_boots(void **state)
{
	static const char *const boot_a = "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa";
	static const char *const boot_b = "bbbbbbbb-bbbb-bbbb-bbbb-bbbbbbbbbbbb";
	struct scene *sc = *state;
	const struct bpfstash_entry *tiny = sc->e[0], *large = sc->e[1];
	const char *d = sc->dir, *th = sc->fx[0].hash;
	struct buf in = {}, amb = {}, want_a = {}, want_b = {}, none_ = {};
	char ar[128], t[1024], a[2048], args[512];
	struct bpfstash_meta *m;
	struct fixture sub;
	size_t size;

	fixture_set_times(d, th, 100, 200);
	fixture_set_times(d, sc->fx[1].hash, 150, 0);
	set_boot(d, th, 0xaa);
	set_boot(d, sc->fx[1].hash, 0xbb);
	snprintf(ar, sizeof(ar), "%s.archive", d);
	assert_int_equal(fixture_sh("rm -rf %s", ar), 0);
	assert_int_equal(fixture_sh(BPFSTASH_GC_BIN " --root %s --archive %s --max-age 1s --now 4000000000 "
			    "> /dev/null", d, ar), 0);
	assert_int_equal(fixture_sh("test ! -e %s/%s && test -f %s/%.2s/%s.tar.zst", d, th, ar, th, th), 0);

	snprintf(t, sizeof(t), "[  175.000000] %llx", (unsigned long long)sc->shared);
	line(&in, &amb, t, " (ambiguous: 2 entries)", "\n");
	note(tiny, sc->shared, false, a, sizeof(a));
	line(&none_, &want_a, t, a, "\n");
	note(large, sc->shared, false, a, sizeof(a));
	line(&none_, &want_b, t, a, "\n");
	snprintf(args, sizeof(args), "--archive %s", ar);
	check_decode(sc, &in, &amb, args);
	snprintf(args, sizeof(args), "--archive %s --boot-id %s", ar, boot_a);
	check_decode(sc, &in, &want_a, args);
	snprintf(args, sizeof(args), "--archive %s --boot-id %s", ar, boot_b);
	check_decode(sc, &in, &want_b, args);
	assert_int_equal(fixture_sh(BPFSTASH_BIN " --root %s decode --boot-id nope < /dev/null "
			    "2>/dev/null", d), 64);

	/* An archive of format 4, as bpfstash-gc archives: left out, exit 76. */
	fixture_get("subprogs", &sub);
	assert_int_equal(fixture_sh("mkdir -p %s.v4 && cp -r %s/stash/%s %s.v4/ && chmod -R u+w %s.v4",
			    d, FIXTURES, sub.hash, d, d), 0);
	snprintf(t, sizeof(t), "%s.v4/%s/meta", d, sub.hash);
	m = fixture_read_path(t, &size);
	m->content.version = 4;
	fixture_write_path(t, m, size);
	free(m);
	assert_int_equal(fixture_sh("mkdir -p %s/%.2s && tar --zstd -C %s.v4 -cf %s/%.2s/%s.tar.zst %s",
			    ar, sub.hash, d, ar, sub.hash, sub.hash, sub.hash), 0);
	assert_int_equal(fixture_sh(BPFSTASH_BIN " --root %s decode --archive %s < /dev/null "
			    "2> %s.v4/err", d, ar, d), 76);
	assert_int_equal(fixture_sh("grep -q '%s.tar.zst: format 4, this reader knows 3; skipped' "
			    "%s.v4/err", sub.hash, d), 0);
	assert_int_equal(fixture_sh("rm -rf %s %s.v4", ar, d), 0);
	free(in.p);
	free(amb.p);
	free(want_a.p);
	free(want_b.p);
	free(none_.p);
}

/*
 * A frame that names its entry (perf script's DSO, /sys/fs/bpfstash/HASH)
 * is resolved in that entry: at an address two entries shared, without a
 * time.  Without the entry at hand, debuginfod serves its ELF file (what
 * bpfstash export writes), whose line table gives the same file:line:col
 * for every address of the entry, and for a symbol and offset.
 */
static void test_debuginfod(void **state)
{
	struct scene *sc = *state;
	const struct bpfstash_entry *tiny = sc->e[0], *sub = sc->e[2];
	const char *d = sc->dir, *th = sc->fx[0].hash, *sh2 = sc->fx[2].hash;
	struct buf in = {}, want = {}, local = {};
	char srv[128], t[1024], a[2048], env[256];
	uint32_t i, off;
	int port = 20000 + getpid() % 20000, tries;

	/* by hash, locally: the shared address is tiny's, as its DSO says */
	snprintf(t, sizeof(t), "\t%llx [unknown] (/sys/fs/bpfstash/%s)",
		 (unsigned long long)sc->shared, th);
	note(tiny, sc->shared, false, a, sizeof(a));
	line(&in, &local, t, a, "\n");
	check_decode(sc, &in, &local, "");
	in.len = local.len = 0;

	if (fixture_sh("command -v debuginfod > /dev/null && command -v debuginfod-find > /dev/null")) {
		free(in.p);
		free(local.p);
		print_message("debuginfod is not installed (apt-get install debuginfod)\n");
		skip();
	}
	snprintf(srv, sizeof(srv), "%s.srv", d);
	assert_int_equal(fixture_sh("rm -rf %s && mkdir -p %s/empty %s/exp && " BPFSTASH_BIN
			    " --root %s export %s %s --to %s/exp > /dev/null", srv, srv, srv, d, th,
			    sh2, srv), 0);
	assert_int_equal(fixture_sh("cd %s && { debuginfod -d db.sqlite -p %d -F -t 1 exp > log 2>&1 & "
			    "echo $! > pid; }", srv, port), 0);
	for (tries = 0; tries < 60; tries++) {
		/* A fresh cache each time: the client remembers a miss for 10 min. */
		if (!fixture_sh("DEBUGINFOD_CACHE_PATH=%s/probe%d DEBUGINFOD_URLS=http://127.0.0.1:%d "
			"debuginfod-find debuginfo %s > /dev/null 2>&1 && "
			"DEBUGINFOD_CACHE_PATH=%s/probe%d DEBUGINFOD_URLS=http://127.0.0.1:%d "
			"debuginfod-find debuginfo %s > /dev/null 2>&1", srv, tries, port, th, srv,
			tries, port, sh2))
			break;
		usleep(250000);
	}
	if (tries == 60) {
		(void)!fixture_sh("kill $(cat %s/pid); tail -n 3 %s/log >&2", srv, srv);
		fail_msg("debuginfod on 127.0.0.1:%d never served the entries", port);
	}
	/* every 5th byte of subprogs' functions, and tiny's first, by address */
	for (i = 0; i < bpfstash_entry_nr_funcs(sub); i++) {
		const struct bpfstash_func *fn = bpfstash_entry_func(sub, i);

		for (off = 0; off < fn->len; off += 5) {
			snprintf(t, sizeof(t), "\t%llx [unknown] (/sys/fs/bpfstash/%s)",
				 (unsigned long long)fn->addr + off, sh2);
			note(sub, fn->addr + off, false, a, sizeof(a));
			line(&in, &want, t, a, "\n");
		}
	}
	/* by symbol and offset */
	snprintf(t, sizeof(t), "\tffffffff %s+0x8 (/sys/fs/bpfstash/%s)",
		 bpfstash_entry_func_name(tiny, 0), th);
	/* (not an address: 8 digits) */
	note(tiny, bpfstash_entry_func(tiny, 0)->addr + 8, false, a, sizeof(a));
	line(&in, &want, t, a, "\n");
	/* an entry the server does not have: untouched */
	snprintf(t, sizeof(t), "\t%llx [unknown] (/sys/fs/bpfstash/%040d)",
		 (unsigned long long)sc->shared, 0);
	line(&in, &want, t, "", "\n");
	snprintf(env, sizeof(env), "http://127.0.0.1:%d", port);
	setenv("DEBUGINFOD_URLS", env, 1);
	snprintf(env, sizeof(env), "%s/cache", srv);
	setenv("DEBUGINFOD_CACHE_PATH", env, 1);
	{
		/* an empty stash: everything comes from the server */
		char root[160];
		struct scene empty = *sc;

		snprintf(root, sizeof(root), "%s/empty", srv);
		strcpy(empty.dir, root);
		check_decode(&empty, &in, &want, "");
		/* without a server, nothing is annotated */
		unsetenv("DEBUGINFOD_URLS");
		local.len = 0;
		put(&local, in.p, in.len);
		check_decode(&empty, &in, &local, "");
	}
	unsetenv("DEBUGINFOD_CACHE_PATH");
	assert_int_equal(fixture_sh("kill $(cat %s/pid) && rm -rf %s", srv, srv), 0);
	free(in.p);
	free(want.p);
	free(local.p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_formats, setup, teardown),
		cmocka_unit_test_setup_teardown(test_archive, setup, teardown),
		cmocka_unit_test_setup_teardown(test_archive_boots, setup, teardown),
		cmocka_unit_test_setup_teardown(test_debuginfod, setup, teardown),
		cmocka_unit_test_setup_teardown(test_misnamed_frames, setup, teardown),
		cmocka_unit_test_setup_teardown(test_live_trace, setup, teardown),
		cmocka_unit_test_setup_teardown(test_junk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_resolve_at_cli, setup, teardown),
	};

	return cmocka_run_group_tests_name("decode", tests, NULL, NULL);
}
