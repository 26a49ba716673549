// SPDX-License-Identifier: GPL-2.0-only
/*
 * bpfstash inject driven as a user would, on the fixtures' stash and on
 * perf.data files written here (tests/lib/perfdata.h): which KSYMBOL it
 * matches to which entry, and what it leaves alone.
 *
 * Each recording is what perf record writes for a program loaded while it
 * runs: the KSYMBOL of the entry's first function, the program's
 * PERF_RECORD_BPF_EVENT (an id and a tag), a sample in the function, the
 * KSYMBOL's unregister.  The entry's meta names the latest load of its
 * content, so a recording of an earlier load of the same bytes at the same
 * address has another id: inject takes the entry when the tag agrees, its
 * functions are all the program's KSYMBOLs, and no other entry at that
 * address has the function's name and length.
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include <limits.h>
#include <linux/bpf.h>

#include "libbpfstash.h"
#include "fixtures.h"
#include "perfdata.h"

#ifndef BPFSTASH_BIN
#error "BPFSTASH_BIN must name the bpfstash binary"
#endif

#define SAMPLE_TYPE	(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_IDENTIFIER)

struct ctx {
	char dir[64];
	struct bpfstash *stash;
	struct bpfstash_entry *e;	/* a program's entry of one function */
	struct bpfstash_entry *multi;	/* one of several functions */
};

/* What the recording says of the program, against its entry. */
struct rec_opts {
	uint32_t id_delta;	/* added to meta's prog_id */
	uint64_t addr_delta;	/* added to the function's address */
	bool other_tag;		/* a tag with one bit flipped */
	bool multi;		/* of ctx's multi: a KSYMBOL per function */
	uint64_t last_delta;	/* ...the last function's address moved */
};

static int setup(void **state)
{
	struct ctx *c = calloc(1, sizeof(*c));
	char **names;
	size_t i, n;

	assert_non_null(c);
	strcpy(c->dir, "/tmp/test_inject.XXXXXX");
	assert_non_null(mkdtemp(c->dir));
	assert_int_equal(bpfstash_open(FIXTURES "/stash", &c->stash), 0);
	assert_int_equal(bpfstash_list(c->stash, &names, &n), 0);
	for (i = 0; i < n && (!c->e || !c->multi); i++) {
		struct bpfstash_entry *e;

		if (bpfstash_entry_load(c->stash, names[i], 0, &e))
			continue;
		if (!bpfstash_entry_meta(e)->prog_id || bpfstash_entry_meta(e)->content.image_kind)
			bpfstash_entry_free(e);
		else if (!c->e && bpfstash_entry_nr_funcs(e) == 1)
			c->e = e;
		else if (!c->multi && bpfstash_entry_nr_funcs(e) >= 2)
			c->multi = e;
		else
			bpfstash_entry_free(e);
	}
	bpfstash_names_free(names);
	assert_non_null(c->e);
	assert_non_null(c->multi);
	*state = c;
	return 0;
}

static int teardown(void **state)
{
	struct ctx *c = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", c->dir);
	assert_int_equal(system(cmd), 0);
	bpfstash_entry_free(c->e);
	bpfstash_entry_free(c->multi);
	bpfstash_close(c->stash);
	free(c);
	return 0;
}

static void write_recording(const struct ctx *c, const char *path, const struct rec_opts *o)
{
	const struct bpfstash_entry *e = o->multi ? c->multi : c->e;
	const struct bpfstash_meta *m = bpfstash_entry_meta(e);
	uint32_t i, n = o->multi ? bpfstash_entry_nr_funcs(e) : 1;
	struct pd_sid sid = { .pid = 176, .tid = 176, .time = 1000000000, .cpu = 0 };
	uint8_t tag[BPF_TAG_SIZE];
	FILE *out = fopen(path, "w+");
	struct pd pd;
	int err;

	assert_non_null(out);
	memcpy(tag, m->content.tag, sizeof(tag));
	if (o->other_tag)
		tag[3] ^= 0x10;
	err = pd_begin(&pd, out, false, SAMPLE_TYPE, 1);
	/* As the kernel registers them: the functions, then the program. */
	for (i = 0; i < n; i++) {
		const struct bpfstash_func *f = bpfstash_entry_func(e, i);
		uint64_t addr = f->addr + o->addr_delta + (i == n - 1 ? o->last_delta : 0);

		err = err || pd_ksymbol(&pd, addr, f->len, bpfstash_entry_func_name(e, i), false, &sid);
		sid.time += 1000;
	}
	err = err || pd_bpf_event(&pd, PERF_BPF_EVENT_PROG_LOAD, m->prog_id + o->id_delta, tag, &sid);
	for (i = 0; i < n; i++) {
		const struct bpfstash_func *f = bpfstash_entry_func(e, i);

		sid.time += 1000000;
		sid.pid = sid.tid = 200;
		err = err || pd_sample(&pd, f->addr + o->addr_delta + f->len / 2, &sid, 1, NULL, 0);
	}
	sid.pid = sid.tid = 176;
	for (i = 0; i < n; i++) {
		const struct bpfstash_func *f = bpfstash_entry_func(e, i);
		uint64_t addr = f->addr + o->addr_delta + (i == n - 1 ? o->last_delta : 0);

		sid.time += 1000;
		err = err || pd_ksymbol(&pd, addr, f->len, bpfstash_entry_func_name(e, i), true, &sid);
	}
	err = err || pd_end(&pd);
	assert_int_equal(err, 0);
	assert_int_equal(fclose(out), 0);
}

/* A field of inject -j's object: its number. */
static long long field(const char *json, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(json, pat);
	if (!p)
		fail_msg("no \"%s\" in %s", key, json);
	return strtoll(p + strlen(pat), NULL, 10);
}

/* inject -j of a recording made with @o: its JSON and stderr. */
static void inject(const struct ctx *c, const struct rec_opts *o, char *json, size_t jlen,
		   char *err, size_t elen)
{
	char in[128], out[128], cmd[1024];
	size_t n;
	FILE *p;
	int st;

	snprintf(in, sizeof(in), "%s/perf.data", c->dir);
	snprintf(out, sizeof(out), "%s/perf.data.bpf", c->dir);
	write_recording(c, in, o);
	snprintf(cmd, sizeof(cmd), "%s inject -j -v --root %s/stash --buildid-dir %s/debug "
		 "-i %s -o %s 2> %s/err", BPFSTASH_BIN, FIXTURES, c->dir, in, out, c->dir);
	p = popen(cmd, "r");
	assert_non_null(p);
	n = fread(json, 1, jlen - 1, p);
	json[n] = '\0';
	st = pclose(p);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	snprintf(cmd, sizeof(cmd), "%s/err", c->dir);
	p = fopen(cmd, "r");
	assert_non_null(p);
	n = fread(err, 1, elen - 1, p);
	err[n] = '\0';
	fclose(p);
}

/* The program's own load: its entry, by id. */
static void test_same_load(void **state)
{
	struct ctx *c = *state;
	struct rec_opts o = {};
	char json[4096], err[4096], elf[PATH_MAX], name[128];
	uint8_t bid[BPFSTASH_HASH_SIZE];
	char sbid[BPFSTASH_HEX_LEN + 1];
	struct stat st;

	inject(c, &o, json, sizeof(json), err, sizeof(err));
	assert_int_equal(field(json, "ksymbols"), 1);
	assert_int_equal(field(json, "injected"), 1);
	assert_int_equal(field(json, "reloaded"), 0);
	assert_int_equal(field(json, "not_found"), 0);
	/* The function's ELF, where perf's build-id cache has it. */
	assert_int_equal(bpfstash_entry_func_build_id(c->e, 0, bid), 0);
	bpfstash_hash_format(bid, sbid);
	snprintf(name, sizeof(name), "[bpfstash_%s_0]", bpfstash_entry_name(c->e));
	snprintf(elf, sizeof(elf), "%s/debug/%s/%s/elf", c->dir, name, sbid);
	assert_int_equal(stat(elf, &st), 0);
	assert_true(st.st_size > 0);
}

/*
 * An earlier load of the same bytes at the same address: the entry names
 * the later load's id.  Taken, by the tag, and counted as reloaded.
 */
static void test_reload(void **state)
{
	struct ctx *c = *state;
	struct rec_opts o = { .id_delta = 100000 };
	char json[4096], err[4096];

	inject(c, &o, json, sizeof(json), err, sizeof(err));
	assert_int_equal(field(json, "injected"), 1);
	assert_int_equal(field(json, "reloaded"), 1);
	assert_int_equal(field(json, "not_found"), 0);
}

/* Another program at that address (other instructions): left alone. */
static void test_reload_other_tag(void **state)
{
	struct ctx *c = *state;
	struct rec_opts o = { .id_delta = 100000, .other_tag = true };
	char json[4096], err[4096];

	inject(c, &o, json, sizeof(json), err, sizeof(err));
	assert_int_equal(field(json, "injected"), 0);
	assert_int_equal(field(json, "reloaded"), 0);
	assert_int_equal(field(json, "not_found"), 1);
	if (!strstr(err, "other instructions (tag)"))
		fail_msg("stderr does not say why: %s", err);
}

/*
 * A reload of a program of several functions: every one of them, by the
 * entry whose functions are all the program's KSYMBOLs.
 */
static void test_reload_functions(void **state)
{
	struct ctx *c = *state;
	struct rec_opts o = { .id_delta = 100000, .multi = true };
	long long n = bpfstash_entry_nr_funcs(c->multi);
	char json[4096], err[4096];

	inject(c, &o, json, sizeof(json), err, sizeof(err));
	assert_int_equal(field(json, "ksymbols"), n);
	assert_int_equal(field(json, "injected"), n);
	assert_int_equal(field(json, "reloaded"), n);
}

/*
 * The same instructions at the same main address, but a function that is
 * not where the entry has it: another load (another layout), whose entry
 * is gone.  Not the entry's: left alone.
 */
static void test_reload_other_layout(void **state)
{
	struct ctx *c = *state;
	struct rec_opts o = { .id_delta = 100000, .multi = true, .last_delta = 0x100000 };
	long long n = bpfstash_entry_nr_funcs(c->multi);
	char json[4096], err[4096];

	inject(c, &o, json, sizeof(json), err, sizeof(err));
	assert_int_equal(field(json, "ksymbols"), n);
	assert_int_equal(field(json, "injected"), 0);
	assert_int_equal(field(json, "reloaded"), 0);
}

/* The same name at an address no entry holds: left alone, and said. */
static void test_elsewhere(void **state)
{
	struct ctx *c = *state;
	struct rec_opts o = { .addr_delta = 0x100000 };
	char json[4096], err[4096];

	inject(c, &o, json, sizeof(json), err, sizeof(err));
	assert_int_equal(field(json, "injected"), 0);
	assert_int_equal(field(json, "elsewhere"), 1);
	if (!strstr(err, "in no stash at this address"))
		fail_msg("stderr does not say why: %s", err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_load),
		cmocka_unit_test(test_reload),
		cmocka_unit_test(test_reload_other_tag),
		cmocka_unit_test(test_reload_functions),
		cmocka_unit_test(test_reload_other_layout),
		cmocka_unit_test(test_elsewhere),
	};

	return cmocka_run_group_tests_name("inject", tests, setup, teardown);
}
