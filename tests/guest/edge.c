// SPDX-License-Identifier: GPL-2.0-only
/*
 * Edge programs: the most functions a program can have, a multi-megabyte
 * image, BTF near its size limit, and a program text-poked by an fentry
 * attach.  Each is stored exactly (bytes equal the kernel's info at load
 * time) or refused with a flag, never corrupt.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <bpf/btf.h>

#include "../lib/test.h"
#include "../lib/proginfo.h"
#include "../lib/stashfs.h"
#include "../lib/entrycheck.h"
#include "../../tools/lib/bpfstash/libbpfstash.h"

/*
 * The "functions" and "lines" views name each function as the funcs file
 * does.  The funcs file of 256 functions (17.6 KB) is held in pieces, and
 * some names straddle two of them.
 */
static void check_views_name_functions(int fd)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info), nr, i, named = 0;
	char hex[41], *text, *line, *save;
	const struct bpfstash_func *rec;
	void *funcs, *buf;
	size_t size, n;

	if (!ASSERT_OK(bpf_obj_get_info_by_fd(fd, &info, &len), "info") ||
	    !ASSERT_OK(stash_find_prog(info.id, hex), "entry") ||
	    !ASSERT_OK(stash_read(hex, "funcs", &funcs, &size), "read funcs"))
		return;
	nr = info.nr_jited_ksyms;
	rec = funcs;
	if (!ASSERT_GE(size, nr * sizeof(*rec), "funcs size") ||
	    !ASSERT_OK(stash_read(hex, "functions", &buf, &n), "read functions"))
		goto out;
	text = buf;
	text[n - 1] = 0;
	i = 0;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *name, *last;

		if (line[0] == '#')
			continue;
		last = strrchr(line, ' ');
		if (!ASSERT_LT(i, nr, "no more lines than functions"))
			break;
		name = (const char *)funcs + nr * sizeof(*rec) + rec[i].name_off;
		if (!ASSERT_STREQ(last ? last + 1 : "", name, "functions: name"))
			break;
		i++;
	}
	ASSERT_EQ(i, nr, "a line per function");
	free(buf);

	if (!ASSERT_OK(stash_read(hex, "lines", &buf, &n), "read lines"))
		goto out;
	text = buf;
	text[n - 1] = 0;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char fn[600], *plus;

		if (line[0] == '#' || sscanf(line, "%*x %599s", fn) != 1)
			continue;
		plus = strstr(fn, "+0x");
		if (!ASSERT_PTR_OK(plus, "function+offset"))
			break;
		*plus = 0;
		for (i = 0; i < nr; i++)
			if (!strcmp(fn, (const char *)funcs + nr * sizeof(*rec) + rec[i].name_off))
				break;
		if (!ASSERT_LT(i, nr, "lines: a function of the program"))
			break;
		named++;
	}
	ASSERT_GE(named, nr, "a line at least per function");
	free(buf);
out:
	free(funcs);
}

static void test_256_functions(void)
{
	struct prog_info_full pi;
	struct bpf_object *obj;
	int fd;

	if (!ASSERT_OK(stash_mount(NULL), "mount"))
		return;
	obj = test_prog_load("many", &fd);
	if (ASSERT_PTR_OK(obj, "load many.bpf.o")) {
		if (ASSERT_OK(prog_info_full_get(fd, &pi), "info")) {
			ASSERT_EQ(pi.info.nr_jited_ksyms, 256, "256 functions (BPF_MAX_SUBPROGS)");
			prog_info_full_free(&pi);
		}
		check_entry_matches(fd, "many");
		check_views_name_functions(fd);
		bpf_object__close(obj);
	}
	stash_umount();
}

static void test_multi_megabyte_image(void)
{
	struct prog_info_full pi;
	int fd;

	if (!ASSERT_OK(stash_mount("size=256M"), "mount"))
		return;
	fd = load_straight_prog("stash_huge", 200000, 0x12345);
	if (ASSERT_GE(fd, 0, "load 200000 instructions")) {
		if (ASSERT_OK(prog_info_full_get(fd, &pi), "info")) {
			test__note("%u bytes JITed", pi.info.jited_prog_len);
			ASSERT_GT(pi.info.jited_prog_len, 1 << 20, "a multi-megabyte image");
			prog_info_full_free(&pi);
		}
		check_entry_matches(fd, "huge");
		close(fd);
	}
	stash_umount();
}

/* BTF just under BTF_MAX_SIZE (16 MiB), shared by a program's func_info. */
static void test_btf_near_limit(void)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	struct bpf_func_info finfo = { .insn_off = 0 };
	LIBBPF_OPTS(bpf_prog_load_opts, opts);
	char name[256];
	struct btf *btf = btf__new_empty();
	const void *raw;
	__u32 raw_size = 0;
	int int_id, proto, func, i, btf_fd, fd;

	if (!ASSERT_PTR_OK(btf, "btf__new_empty"))
		return;
	int_id = btf__add_int(btf, "int", 4, BTF_INT_SIGNED);
	proto = btf__add_func_proto(btf, int_id);
	func = btf__add_func(btf, "stash_big_btf", BTF_FUNC_GLOBAL, proto);
	memset(name, 'n', sizeof(name));
	/* Long distinct names fill the string section fast. */
	for (i = 0; raw_size < (16u << 20) - (64u << 10); i++) {
		snprintf(name, 32, "s%07d_", i);
		name[8] = 'x';
		name[250] = '\0';
		btf__add_struct(btf, name, 4);
		btf__add_field(btf, "f", int_id, 0, 0);
		if (i % 1024 == 0)
			btf__raw_data(btf, &raw_size);
	}
	raw = btf__raw_data(btf, &raw_size);
	test__note("%u bytes of BTF, %d types", raw_size, btf__type_cnt(btf));
	btf_fd = bpf_btf_load(raw, raw_size, NULL);
	if (!ASSERT_GE(btf_fd, 0, "the kernel takes it (BTF_MAX_SIZE is 16 MiB)"))
		goto out;
	if (!ASSERT_OK(stash_mount("size=256M"), "mount"))
		goto out_btf;
	finfo.type_id = func;
	opts.prog_btf_fd = btf_fd;
	opts.func_info = &finfo;
	opts.func_info_cnt = 1;
	opts.func_info_rec_size = sizeof(finfo);
	fd = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "stash_big_btf", "GPL", insns, 2, &opts);
	if (ASSERT_GE(fd, 0, "load with it")) {
		check_entry_matches(fd, "big BTF");
		close(fd);
	}
	/* With size= smaller than the BTF: refused and counted, load unaffected. */
	stash_umount();
	if (ASSERT_OK(stash_mount("size=8M"), "mount size=8M")) {
		long long refused = stash_stat("refused_full");

		fd = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "stash_big_btf", "GPL", insns, 2,
				   &opts);
		ASSERT_GE(fd, 0, "the load succeeds when it cannot be stored");
		ASSERT_EQ(stash_stat("refused_full") - refused, 1, "refused: too big for size=");
		ASSERT_EQ(stash_stat("entries"), 0, "not stored");
		if (fd >= 0)
			close(fd);
	}
	stash_umount();
out_btf:
	close(btf_fd);
out:
	btf__free(btf);
}

/*
 * fentry on a BPF program text-pokes its image.  The entry keeps the bytes
 * of load time; the live image differs only at the poke site.
 */
static void test_fentry_patched(void)
{
	struct prog_info_full before, after;
	struct bpf_object *target, *tracer;
	struct bpfstash_entry *e = NULL;
	struct bpf_program *prog;
	struct bpf_link *link = NULL;
	struct bpfstash *s;
	const unsigned char *img;
	char hex[41];
	size_t size, i, first = (size_t)-1, last = 0;
	int tfd, err;

	if (!ASSERT_OK(stash_mount(NULL), "mount"))
		return;
	target = test_prog_load("subprogs", &tfd);
	if (!ASSERT_PTR_OK(target, "load target") ||
	    !ASSERT_OK(prog_info_full_get(tfd, &before), "info before"))
		goto out;
	tracer = bpf_object__open_file(test_prog_path("fentry"), NULL);
	if (!ASSERT_PTR_OK(tracer, "open fentry"))
		goto out_target;
	prog = bpf_object__next_program(tracer, NULL);
	bpf_program__set_attach_target(prog, tfd, "stash_subprogs");
	err = bpf_object__load(tracer);
	if (err == -EINVAL || err == -ENOTSUP || err == -524) {
		test__skip("fentry on BPF programs not available in this kernel (%d)", err);
		goto out_tracer;
	}
	if (!ASSERT_OK(err, "load fentry program"))
		goto out_tracer;
	link = bpf_program__attach_trace(prog);
	if (!ASSERT_PTR_OK(link, "attach: text-pokes the target"))
		goto out_tracer;
	if (!ASSERT_OK(prog_info_full_get(tfd, &after), "info after"))
		goto out_link;

	ASSERT_OK(stash_find_prog(before.info.id, hex), "entry");
	if (ASSERT_OK(bpfstash_open(STASH_ROOT, &s), "open") &&
	    ASSERT_OK(bpfstash_entry_load(s, hex, 0, &e), "load entry")) {
		img = bpfstash_entry_blob(e, BPFSTASH_JITED, &size);
		ASSERT_OK(bpfstash_entry_verify(e), "verifies");
		if (ASSERT_EQ(size, before.info.jited_prog_len, "size"))
			ASSERT_MEMEQ(img, before.jited, size, "entry == image at load time");
		if (ASSERT_EQ(size, after.info.jited_prog_len, "same size after")) {
			for (i = 0; i < size; i++) {
				if (img[i] != after.jited[i]) {
					if (first == (size_t)-1)
						first = i;
					last = i;
				}
			}
			ASSERT_NEQ(first, (size_t)-1, "the live image was poked");
			ASSERT_LT(last - first, 5, "only at one 5-byte poke site");
			test__note("poked bytes %zu..%zu of %zu", first, last, size);
		}
		bpfstash_entry_free(e);
		bpfstash_close(s);
	}
	/* The tracer's entry names its attach target in "info". */
	check_stash_views("fentry and its target", 64);
	prog_info_full_free(&after);
out_link:
	bpf_link__destroy(link);
out_tracer:
	bpf_object__close(tracer);
out_target:
	prog_info_full_free(&before);
	bpf_object__close(target);
out:
	stash_umount();
}

/* kinds.bpf.c's .bss: fentry calls first. */
static __u64 fentry_calls(struct bpf_object *obj)
{
	struct bpf_map *bss = bpf_object__find_map_by_name(obj, ".bss");
	__u64 v[6] = {};
	int zero = 0;

	if (!bss || bpf_map__lookup_elem(bss, &zero, sizeof(zero), v, sizeof(v), 0))
		return 0;
	return v[0];
}

/* Attach kinds_fentry, run it once through its trampoline; the link or NULL. */
static struct bpf_link *attach_and_run(struct bpf_object *obj, const char *what)
{
	struct bpf_program *p = bpf_object__find_program_by_name(obj, "kinds_fentry");
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	struct bpf_link *link = bpf_program__attach(p);
	__u64 before = fentry_calls(obj);

	if (!ASSERT_PTR_OK(link, what))
		return NULL;
	ASSERT_OK(bpf_prog_test_run_opts(bpf_program__fd(p), &opts), what);
	ASSERT_GT(fentry_calls(obj), before, what);
	return link;
}

/*
 * Trampolines under the store's limits and its stop: a full store refuses
 * the image (counted, the attach unaffected); stopping the store while the
 * trampoline lives takes its entry and gives all memory back; detaching
 * after that, and attaching again once started, work as ever.
 */
static void test_images_limits(void)
{
	struct bpf_object *obj;
	struct bpf_link *link;
	long long full, stored, live;
	int i;

	/* Room for one entry: the first of kinds.bpf.o's programs. */
	if (!ASSERT_OK(stash_mount("max_entries=1"), "mount, max_entries=1"))
		return;
	obj = bpf_object__open_file(test_prog_path("kinds"), NULL);
	if (!ASSERT_PTR_OK(obj, "open kinds.bpf.o") || !ASSERT_OK(bpf_object__load(obj), "load"))
		goto out;
	ASSERT_EQ(stash_stat("entries"), 1, "the store is full");
	full = stash_stat("refused_full");
	link = attach_and_run(obj, "attach to a full store");
	ASSERT_EQ(stash_stat("refused_full"), full + 1, "the trampoline refused, counted");
	ASSERT_EQ(stash_stat("entries"), 1, "nothing more stored");
	bpf_link__destroy(link);

	ASSERT_OK(stash_control("max_entries=100"), "room again");
	stored = stash_stat("stored");
	live = stash_stat("live_entries");
	link = attach_and_run(obj, "attach");
	ASSERT_EQ(stash_stat("stored"), stored + 1, "the trampoline stored");
	ASSERT_EQ(stash_stat("live_entries"), live + 1, "and live");
	/* Stop while it lives: the entry goes, and every byte with it. */
	ASSERT_OK(stash_control("off"), "stop");
	ASSERT_EQ(stash_stat("bytes"), 0, "stopped: no bytes held");
	ASSERT_EQ(stash_stat("live_entries"), 0, "no live entry");
	bpf_link__destroy(link);	/* its image goes with no entry */
	ASSERT_OK(stash_control("on"), "start again");
	stored = stash_stat("stored");
	live = stash_stat("live_entries");
	link = attach_and_run(obj, "attach after the restart");
	ASSERT_EQ(stash_stat("stored"), stored + 1, "the new trampoline stored");
	bpf_link__destroy(link);
	/* Its image is freed after an RCU tasks grace period. */
	for (i = 0; i < 100 && stash_stat("live_entries") > live; i++)
		usleep(100 * 1000);
	ASSERT_EQ(stash_stat("live_entries"), live, "detached: its entry unloaded");
	check_stash_views("trampolines and their program", 64);
out:
	bpf_object__close(obj);
	stash_umount();
}

static const struct test tests[] = {
	{ "256_functions", test_256_functions },
	{ "multi_megabyte_image", test_multi_megabyte_image },
	{ "btf_near_limit", test_btf_near_limit },
	{ "fentry_patched", test_fentry_patched },
	{ "images_limits", test_images_limits },
	{}
};

int main(int argc, char **argv)
{
	return test_main("edge", tests, argc, argv);
}
