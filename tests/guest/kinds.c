// SPDX-License-Identifier: GPL-2.0-only
/*
 * What modern tools load, on a kernel with its own BTF: fentry, fexit,
 * tp_btf and LSM programs on kernel functions with a CO-RE read
 * (tests/progs/kinds.bpf.c), Debian's libbpf-tools, and bpftrace's kfunc
 * probes.  Each program's entry is what bpf_prog_get_info_by_fd() says,
 * names its attach target (the function, its BTF id, the id of the
 * kernel's BTF object), and outlives the program.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "../lib/test.h"
#include "../lib/proginfo.h"
#include "../lib/stashfs.h"
#include "../lib/entrycheck.h"
#include "../../tools/lib/bpfstash/libbpfstash.h"

#define MAX_NEW 64

/* The stash's meta of program @id, or -1. */
static int entry_meta(__u32 id, struct bpfstash_meta *m)
{
	char hex[41];
	size_t size;
	void *buf;
	int err;

	if (stash_find_prog(id, hex) || stash_read(hex, "meta", &buf, &size))
		return -1;
	err = size == sizeof(*m) ? 0 : -1;
	if (!err)
		memcpy(m, buf, sizeof(*m));
	free(buf);
	return err;
}

/* The name of BTF object @id ("vmlinux" for the kernel's), in @name. */
static int btf_obj_name(__u32 id, char *name, size_t size)
{
	struct bpf_btf_info info = {};
	__u32 len = sizeof(info);
	int fd = bpf_btf_get_fd_by_id(id), err;

	if (fd < 0)
		return -1;
	info.name = (unsigned long)name;
	info.name_len = size;
	err = bpf_obj_get_info_by_fd(fd, &info, &len);
	close(fd);
	return err;
}

/*
 * The entry of the loaded program @fd is exact, and names the kernel
 * function @target in the kernel's BTF.  Returns the program's id.
 */
static __u32 check_attached_entry(int fd, const char *what, const char *target)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	struct bpfstash_meta m;
	char btf_name[64] = "";

	if (!ASSERT_OK(bpf_obj_get_info_by_fd(fd, &info, &len), what))
		return 0;
	check_entry_matches(fd, what);
	if (!ASSERT_OK(entry_meta(info.id, &m), what))
		return info.id;
	if (target)
		ASSERT_STREQ(m.attach_func_name, target, what);
	ASSERT_NEQ(info.attach_btf_id, 0, what);
	ASSERT_EQ(m.content.attach_btf_id, info.attach_btf_id, what);
	ASSERT_EQ(m.attach_btf_obj_id, info.attach_btf_obj_id, what);
	if (ASSERT_OK(btf_obj_name(info.attach_btf_obj_id, btf_name, sizeof(btf_name)), what))
		ASSERT_STREQ(btf_name, "vmlinux", what);
	return info.id;
}

/*
 * The link program @fd was last attached by, as its entry's meta says: the
 * link's type and id, and its target, @target.
 */
static void check_link_target(int fd, struct bpf_link *link, const char *what,
			      const char *target)
{
	struct bpf_prog_info info = {};
	struct bpf_link_info li = {};
	__u32 len = sizeof(info), llen = sizeof(li);
	struct bpfstash_meta m;

	if (!ASSERT_OK(bpf_obj_get_info_by_fd(fd, &info, &len), what) ||
	    !ASSERT_OK(bpf_obj_get_info_by_fd(bpf_link__fd(link), &li, &llen), what) ||
	    !ASSERT_OK(entry_meta(info.id, &m), what))
		return;
	ASSERT_EQ(m.link_type, li.type, what);
	ASSERT_EQ(m.link_id, li.id, what);
	ASSERT_STREQ(m.link_target, target, what);
}

/* Poll until the entry of program @id says it is unloaded (frees are deferred). */
static bool entry_unloaded(__u32 id)
{
	struct bpfstash_meta m;
	int i;

	for (i = 0; i < 50; i++) {
		if (entry_meta(id, &m))
			return false;
		if (!(m.flags & BPFSTASH_META_LOADED))
			return true;
		usleep(100 * 1000);
	}
	return false;
}

static void test_vmlinux_btf(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	struct stat st;

	if (!ASSERT_OK(stat("/sys/kernel/btf/vmlinux", &st), "/sys/kernel/btf/vmlinux"))
		return;
	if (!ASSERT_PTR_OK(btf, "parse the kernel's BTF"))
		return;
	ASSERT_GT(btf__find_by_name_kind(btf, "bpf_fentry_test1", BTF_KIND_FUNC), 0,
		  "bpf_fentry_test1 in it");
	ASSERT_GT(btf__find_by_name_kind(btf, "task_struct", BTF_KIND_STRUCT), 0,
		  "task_struct in it");
	test__note("%lld KiB, %u types", (long long)st.st_size >> 10, btf__type_cnt(btf));
	btf__free(btf);
}

struct kinds_bss {
	__u64 calls, returns, work, last_tgid, switches, opens;
};

/*
 * fentry, fexit, tp_btf and lsm on kernel functions, with a CO-RE read:
 * they attach and run, and each entry is exact and names its target.
 */
static void test_kernel_functions(void)
{
	/* tp_btf attaches through a raw tracepoint link, the others a tracing one. */
	static const struct {
		const char *prog, *target, *link;
	} progs[] = {
		{ "kinds_fentry", "bpf_fentry_test1", "tracing:bpf_fentry_test1" },
		{ "kinds_fexit", "bpf_fentry_test1", "tracing:bpf_fentry_test1" },
		{ "kinds_tp_btf", "sched_switch", "raw_tracepoint:sched_switch" },
		{ "kinds_lsm", "bpf_lsm_file_open", "tracing:bpf_lsm_file_open" },
	};
	struct bpf_link *links[4] = {};
	__u32 ids[4] = {};
	struct kinds_bss bss = {};
	struct bpf_object *obj;
	struct bpf_map *map;
	int i, fd, err, zero = 0;

	if (!ASSERT_OK(stash_mount(NULL), "mount"))
		return;
	obj = bpf_object__open_file(test_prog_path("kinds"), NULL);
	if (!ASSERT_PTR_OK(obj, "open kinds.bpf.o"))
		goto out;
	err = bpf_object__load(obj);
	if (!ASSERT_OK(err, "load: CO-RE relocated, targets found in the kernel's BTF"))
		goto out_obj;
	for (i = 0; i < 4; i++) {
		struct bpf_program *p = bpf_object__find_program_by_name(obj, progs[i].prog);

		links[i] = bpf_program__attach(p);
		if (!ASSERT_PTR_OK(links[i], progs[i].prog))
			goto out_links;
	}
	/* Run them: BPF_PROG_TEST_RUN of the fentry program calls bpf_fentry_test1(). */
	for (i = 0; i < 20; i++) {
		LIBBPF_OPTS(bpf_test_run_opts, opts);

		fd = bpf_program__fd(bpf_object__find_program_by_name(obj, "kinds_fentry"));
		ASSERT_OK(bpf_prog_test_run_opts(fd, &opts), "test run");
	}
	close(open("/proc/self/status", O_RDONLY));
	usleep(20 * 1000);
	map = bpf_object__find_map_by_name(obj, ".bss");
	if (ASSERT_PTR_OK(map, ".bss") &&
	    ASSERT_OK(bpf_map__lookup_elem(map, &zero, sizeof(zero), &bss, sizeof(bss), 0), "read .bss")) {
		ASSERT_GE(bss.calls, 20, "fentry ran");
		ASSERT_GE(bss.returns, 20, "fexit ran, and saw the return value");
		ASSERT_EQ(bss.last_tgid, (__u64)getpid(), "CO-RE read of task->tgid");
		ASSERT_GT(bss.switches, 0, "tp_btf ran");
		ASSERT_GT(bss.opens, 0, "lsm ran");
	}
	for (i = 0; i < 4; i++) {
		fd = bpf_program__fd(bpf_object__find_program_by_name(obj, progs[i].prog));
		ids[i] = check_attached_entry(fd, progs[i].prog, progs[i].target);
		check_link_target(fd, links[i], progs[i].prog, progs[i].link);
	}
out_links:
	for (i = 0; i < 4; i++)
		bpf_link__destroy(links[i]);
out_obj:
	bpf_object__close(obj);
	for (i = 0; i < 4; i++)
		if (ids[i])
			ASSERT_TRUE(entry_unloaded(ids[i]), "entry kept, unloaded");
	check_stash_views("kernel-function programs, unloaded", 64);
out:
	stash_umount();
}

/*
 * Programs attached by links of other kinds: the entry names what each
 * attached to (perf_event links by their probe, a raw tracepoint by its
 * name), and keeps it once the program is gone.
 */
static void test_link_targets(void)
{
	static const struct {
		const char *prog, *target;
	} progs[] = {
		{ "links_kprobe", "kprobe:do_nanosleep" },
		{ "links_kretprobe", "kretprobe:do_nanosleep" },
		{ "links_raw_tp", "raw_tracepoint:sched_switch" },
		{ "links_tp", "tracepoint:sys_enter_nanosleep" },
	};
	struct bpf_link *links[4] = {};
	struct bpfstash_meta m;
	struct bpf_object *obj;
	__u32 ids[4] = {};
	int i, fd;

	if (!ASSERT_OK(stash_mount(NULL), "mount"))
		return;
	obj = bpf_object__open_file(test_prog_path("links"), NULL);
	if (!ASSERT_PTR_OK(obj, "open links.bpf.o"))
		goto out;
	if (!ASSERT_OK(bpf_object__load(obj), "load links.bpf.o"))
		goto out_obj;
	for (i = 0; i < 4; i++) {
		struct bpf_program *p = bpf_object__find_program_by_name(obj, progs[i].prog);
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);

		fd = bpf_program__fd(p);
		if (ASSERT_OK(bpf_obj_get_info_by_fd(fd, &info, &len), progs[i].prog) &&
		    ASSERT_OK(entry_meta(info.id, &m), progs[i].prog)) {
			ids[i] = info.id;
			ASSERT_EQ(m.link_type, 0, "no link before the attach");
			ASSERT_STREQ(m.link_target, "", "no target before the attach");
		}
		links[i] = bpf_program__attach(p);
		if (!ASSERT_PTR_OK(links[i], progs[i].prog))
			goto out_links;
		check_link_target(fd, links[i], progs[i].prog, progs[i].target);
	}
	usleep(20 * 1000);
out_links:
	for (i = 0; i < 4; i++)
		bpf_link__destroy(links[i]);
out_obj:
	bpf_object__close(obj);
	for (i = 0; i < 4; i++) {
		if (!ids[i])
			continue;
		ASSERT_TRUE(entry_unloaded(ids[i]), "entry kept, unloaded");
		if (ASSERT_OK(entry_meta(ids[i], &m), progs[i].prog))
			ASSERT_STREQ(m.link_target, progs[i].target, "the target kept after the unload");
	}
	check_stash_views("link-attached programs, unloaded", 64);
out:
	stash_umount();
}

/* The ids of loaded programs, sorted, in @ids; returns how many. */
static int prog_ids(__u32 *ids, int max)
{
	__u32 id = 0;
	int n = 0;

	while (n < max && !bpf_prog_get_next_id(id, &id))
		ids[n++] = id;
	return n;
}

static bool in(const __u32 *ids, int n, __u32 id)
{
	int i;

	for (i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Run @argv (a tool that loads its programs and runs until interrupted),
 * wait for its programs to be loaded, check each one's entry, stop it,
 * and check the entries outlive the programs.  Returns the number of its
 * programs, -1 if it did not start; @target, if not NULL, must be the
 * attach function of one of them.
 */
static int check_tool(char *const argv[], const char *target, double timeout)
{
	__u32 before[4096], now[4096], mine[MAX_NEW];
	int nb = prog_ids(before, 4096), n, i, nmine = 0, stable = 0, status;
	bool found_target = !target;
	double start = now_s();
	pid_t pid;

	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		execv(argv[0], argv);
		_exit(127);
	}
	if (!ASSERT_GT(pid, 0, "fork"))
		return -1;
	/* Loaded: new programs, and no more for half a second. */
	while (now_s() - start < timeout) {
		int count = 0;

		usleep(250 * 1000);
		if (waitpid(pid, &status, WNOHANG) == pid) {
			test__fail(__FILE__, __LINE__, "%s exited before it was stopped (status %d)",
				   argv[0], status);
			return -1;
		}
		n = prog_ids(now, 4096);
		for (i = 0; i < n; i++)
			count += !in(before, nb, now[i]);
		if (count && count == nmine) {
			if (++stable == 2)
				break;
		} else {
			stable = 0;
		}
		nmine = count;
	}
	nmine = 0;
	n = prog_ids(now, 4096);
	for (i = 0; i < n && nmine < MAX_NEW; i++)
		if (!in(before, nb, now[i]))
			mine[nmine++] = now[i];
	for (i = 0; i < nmine; i++) {
		int fd = bpf_prog_get_fd_by_id(mine[i]);
		struct bpfstash_meta m;

		if (fd < 0)
			continue;	/* a probe of the tool's, gone already */
		check_entry_matches(fd, argv[0]);
		if (!entry_meta(mine[i], &m) && target && !strcmp(m.attach_func_name, target))
			found_target = true;
		close(fd);
	}
	kill(pid, SIGINT);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		kill(pid, SIGKILL);
	ASSERT_GT(nmine, 0, argv[0]);
	ASSERT_TRUE(found_target, target ? target : "");
	for (i = 0; i < nmine; i++)
		ASSERT_TRUE(entry_unloaded(mine[i]), "entry kept after the tool exited");
	return nmine;
}

/*
 * Debian's libbpf-tools: CO-RE programs on syscall tracepoints, tp_btf
 * and kernel functions, as a distribution ships them.
 */
static void test_libbpf_tools(void)
{
	static const struct {
		const char *argv[4];
		const char *target;
	} tools[] = {
		{ { "/usr/sbin/execsnoop" }, NULL },
		{ { "/usr/sbin/opensnoop" }, NULL },
		{ { "/usr/sbin/runqlat" }, "sched_switch" },
		{ { "/usr/sbin/funclatency", "do_nanosleep" }, NULL },
	};
	size_t i;
	int n;

	if (access(tools[0].argv[0], X_OK)) {
		test__fail(__FILE__, __LINE__, "%s: not installed (scripts/deps.sh: libbpf-tools)",
			   tools[0].argv[0]);
		return;
	}
	if (!ASSERT_OK(stash_mount(NULL), "mount"))
		return;
	for (i = 0; i < sizeof(tools) / sizeof(tools[0]); i++) {
		n = check_tool((char *const *)tools[i].argv, tools[i].target, 60);
		test__note("%s: %d programs, each entry exact, kept after it exited",
			   tools[i].argv[0], n);
	}
	check_stash_views("libbpf-tools' programs, unloaded", 64);
	stash_umount();
}

/* bpftrace's kfunc probes: fentry programs it generates itself. */
static void test_bpftrace_kfunc(void)
{
	char *argv[] = { "/usr/bin/bpftrace", "-e",
			 "kfunc:do_nanosleep { @n = count(); }", NULL };
	int n;

	if (access(argv[0], X_OK)) {
		test__fail(__FILE__, __LINE__, "%s: not installed (scripts/deps.sh: bpftrace)",
			   argv[0]);
		return;
	}
	if (!ASSERT_OK(stash_mount(NULL), "mount"))
		return;
	n = check_tool(argv, "do_nanosleep", 120);
	test__note("bpftrace kfunc:do_nanosleep: %d programs, each entry exact", n);
	stash_umount();
}

/* An image's entry, as the binary files give it. */
struct image_entry {
	char hex[41];
	struct bpfstash_meta m;
	struct bpfstash_func f;
	char name[128];
	struct bpfstash_call calls[64];
	int nr_calls;
	unsigned char *jited;
	size_t jited_size;
};

/* Read image entry @hex; 0, or -1 if it is not an image's or cannot be read. */
static int image_read(const char *hex, struct image_entry *im)
{
	void *buf = NULL;
	size_t size;
	const char *names;

	memset(im, 0, sizeof(*im));
	snprintf(im->hex, sizeof(im->hex), "%s", hex);
	if (stash_read(hex, "meta", &buf, &size) || size < sizeof(im->m))
		goto err;
	memcpy(&im->m, buf, sizeof(im->m));
	free(buf);
	buf = NULL;
	if (!im->m.content.image_kind || im->m.content.prog_type != 0 ||
	    im->m.content.expected_attach_type != 0 || im->m.content.nr_funcs != 1)
		return -1;
	if (stash_read(hex, "funcs", &buf, &size) || size < sizeof(im->f) + 1)
		goto err;
	memcpy(&im->f, buf, sizeof(im->f));
	names = (const char *)buf + sizeof(im->f) + im->f.name_off;
	snprintf(im->name, sizeof(im->name), "%.*s", (int)(size - sizeof(im->f) - im->f.name_off),
		 names);
	free(buf);
	buf = NULL;
	if (!stash_read(hex, "calls", &buf, &size)) {
		if (size % sizeof(struct bpfstash_call) || size > sizeof(im->calls))
			goto err;
		memcpy(im->calls, buf, size);
		im->nr_calls = size / sizeof(struct bpfstash_call);
		free(buf);
		buf = NULL;
	}
	if (stash_read(hex, "jited", &buf, &size))
		goto err;
	im->jited = buf;
	im->jited_size = size;
	return 0;
err:
	free(buf);
	return -1;
}

/*
 * The image entries of kind @kind whose function is @name, into @out (at
 * most @max); returns how many there are.
 */
static int image_find(__u32 kind, const char *name, struct image_entry *out, int max)
{
	struct image_entry im;
	struct dirent *d;
	DIR *dir = opendir(STASH_ROOT);
	int n = 0;

	if (!dir)
		return -1;
	while ((d = readdir(dir))) {
		if (strlen(d->d_name) != 40 || image_read(d->d_name, &im))
			continue;
		if (im.m.content.image_kind != kind || strcmp(im.name, name)) {
			free(im.jited);
			continue;
		}
		if (n < max)
			out[n] = im;
		else
			free(im.jited);
		n++;
	}
	closedir(dir);
	return n;
}

static void image_free(struct image_entry *im, int n)
{
	while (n-- > 0)
		free(im[n].jited);
}

#if defined(__aarch64__)
/*
 * Whether arm64 code @code at @addr calls or jumps to @target: b or bl
 * (imm26), or blr/br through a register the code loaded with @target by
 * movz/movn and movk (emit_call() and emit_a64_mov_i64(), which the JIT and
 * the trampolines use when the target is beyond a branch's reach).  The
 * registers' values are followed in order, as those sequences are
 * emitted, without regard to other writes: a false match needs a
 * sequence that builds @target, or a branch that lands on it exactly.
 */
static bool image_reaches(const unsigned char *code, size_t size, __u64 addr, __u64 target)
{
	__u64 reg[32] = {};
	size_t i;

	for (i = 0; i + 4 <= size; i += 4) {
		__u32 insn, rd, hw;
		__u64 imm;

		memcpy(&insn, code + i, 4);
		if ((insn & 0x7c000000) == 0x14000000) {	/* b, bl */
			__s64 off = (__s64)((__u64)(insn & 0x03ffffff) << 38) >> 36;

			if (addr + i + off == target)
				return true;
			continue;
		}
		rd = insn & 0x1f;
		hw = (insn >> 21) & 3;
		imm = (__u64)((insn >> 5) & 0xffff) << (16 * hw);
		switch (insn & 0xff800000) {
		case 0xd2800000:	/* movz x */
			reg[rd] = imm;
			break;
		case 0x92800000:	/* movn x */
			reg[rd] = ~imm;
			break;
		case 0xf2800000:	/* movk x */
			reg[rd] = (reg[rd] & ~(0xffffULL << (16 * hw))) | imm;
			break;
		default:
			/* blr, br: d63f0000, d61f0000 | Rn << 5 */
			if (((insn & 0xfffffc1f) == 0xd63f0000 || (insn & 0xfffffc1f) == 0xd61f0000) &&
			    reg[(insn >> 5) & 0x1f] == target)
				return true;
		}
	}
	return false;
}
#else
/*
 * Whether x86-64 code @code at @addr calls or jumps to @target directly:
 * call or jmp rel32 (e8, e9), or jcc rel32 (0f 80-8f), decoded at every
 * byte.  A false match needs a displacement that happens to land exactly
 * on @target.
 */
static bool image_reaches(const unsigned char *code, size_t size, __u64 addr, __u64 target)
{
	size_t i, at;
	__s32 rel;

	for (i = 0; i + 5 <= size; i++) {
		if (code[i] == 0xe8 || code[i] == 0xe9)
			at = i + 1;
		else if (code[i] == 0x0f && i + 6 <= size && (code[i + 1] & 0xf0) == 0x80)
			at = i + 2;
		else
			continue;
		memcpy(&rel, code + at, sizeof(rel));
		if (addr + at + 4 + (__s64)rel == target)
			return true;
	}
	return false;
}
#endif

/* The stash's entry name of program @fd, its info in @info. */
static int prog_entry(int fd, struct bpf_prog_info *info, char hex[41])
{
	__u32 len = sizeof(*info);

	memset(info, 0, sizeof(*info));
	if (bpf_obj_get_info_by_fd(fd, info, &len))
		return -1;
	return stash_find_prog(info->id, hex);
}

/* The call record @c is program @fd, called as @kind. */
static void check_call(const struct bpfstash_call *c, int fd, __u32 kind, const char *what)
{
	struct bpf_prog_info info;
	__u64 ksym = 0;
	__u32 len = sizeof(info), nr = 1;
	char hex[41], got[41];
	int i;

	memset(&info, 0, sizeof(info));
	info.nr_jited_ksyms = nr;
	info.jited_ksyms = (unsigned long)&ksym;
	if (!ASSERT_OK(bpf_obj_get_info_by_fd(fd, &info, &len), what))
		return;
	ASSERT_EQ(c->kind, kind, what);
	ASSERT_EQ(c->prog_id, info.id, what);
	ASSERT_EQ(c->addr, ksym, what);
	ASSERT_MEMEQ(c->tag, info.tag, sizeof(c->tag), what);
	ASSERT_STREQ(c->name, info.name, what);
	if (ASSERT_OK(stash_find_prog(info.id, hex), what)) {
		for (i = 0; i < 20; i++)
			sprintf(got + 2 * i, "%02x", c->hash[i]);
		ASSERT_STREQ(got, hex, what);
	}
}

/* Poll until image entry @hex is unloaded; its meta then in @m. */
static bool image_unloaded(const char *hex, struct bpfstash_meta *m)
{
	size_t size;
	void *buf;
	int i;

	for (i = 0; i < 100; i++) {
		if (stash_read(hex, "meta", &buf, &size) || size != sizeof(*m))
			return false;
		memcpy(m, buf, sizeof(*m));
		free(buf);
		if (!(m->flags & BPFSTASH_META_LOADED))
			return true;
		usleep(100 * 1000);
	}
	return false;
}

/* The image entry @im verifies in libbpfstash: its hash covers its calls. */
static void check_image_verifies(const struct image_entry *im, const char *what)
{
	struct bpfstash_entry *e;
	struct bpfstash *s;

	if (!ASSERT_OK(bpfstash_open(STASH_ROOT, &s), what))
		return;
	if (ASSERT_OK(bpfstash_entry_load(s, im->hex, 0, &e), what)) {
		ASSERT_OK(bpfstash_entry_verify(e), what);
		bpfstash_entry_free(e);
	}
	bpfstash_close(s);
}

/*
 * A BPF trampoline, as fentry and fexit programs attach to one kernel
 * function: each version of its image is an entry named by its kallsyms
 * name, which holds its bytes, names its target, and lists the programs
 * it calls, in order; attaching the second program replaces the first
 * image, and detaching unloads the last.
 */
static void test_trampoline(void)
{
	struct image_entry ims[4];
	struct bpf_link *fentry = NULL, *fexit = NULL;
	struct bpf_prog_info info;
	struct bpfstash_meta m;
	struct bpf_object *obj;
	int n, i, live = -1, gone = -1, fd_entry, fd_exit;
	long long reloaded;
	char name[64], hex[41];

	if (!ASSERT_OK(stash_mount(NULL), "mount"))
		return;
	obj = bpf_object__open_file(test_prog_path("kinds"), NULL);
	if (!ASSERT_PTR_OK(obj, "open kinds.bpf.o") ||
	    !ASSERT_OK(bpf_object__load(obj), "load"))
		goto out;
	fd_entry = bpf_program__fd(bpf_object__find_program_by_name(obj, "kinds_fentry"));
	fd_exit = bpf_program__fd(bpf_object__find_program_by_name(obj, "kinds_fexit"));
	fentry = bpf_program__attach(bpf_object__find_program_by_name(obj, "kinds_fentry"));
	if (!ASSERT_PTR_OK(fentry, "attach fentry"))
		goto out_obj;
	fexit = bpf_program__attach(bpf_object__find_program_by_name(obj, "kinds_fexit"));
	if (!ASSERT_PTR_OK(fexit, "attach fexit") ||
	    !ASSERT_OK(prog_entry(fd_entry, &info, hex), "fentry's entry"))
		goto out_links;

	/*
	 * The trampoline's name is its key: for a kernel function, the BTF
	 * object's id, bit 31, and the function's BTF id
	 * (bpf_trampoline_compute_key()).
	 */
	snprintf(name, sizeof(name), "bpf_trampoline_%llu",
		 ((unsigned long long)info.attach_btf_obj_id << 32) | 0x80000000u |
		 info.attach_btf_id);
	n = image_find(BPFSTASH_IMAGE_TRAMPOLINE, name, ims, 4);
	if (!ASSERT_EQ(n, 2, "two versions: fentry alone, then fentry and fexit"))
		goto out_found;
	/* The second version calls both programs, the first fentry only. */
	live = ims[0].nr_calls == 2 ? 0 : 1;
	gone = 1 - live;
	ASSERT_TRUE(ims[live].m.flags & BPFSTASH_META_LOADED, "the second version is loaded");
	/* The first one's image is freed after an RCU tasks grace period. */
	if (!ASSERT_TRUE(image_unloaded(ims[gone].hex, &m), "the first one unloaded"))
		goto out_found;
	ims[gone].m = m;
	ASSERT_STREQ(ims[live].m.content.name, "trampoline", "content.name");
	ASSERT_EQ(ims[live].m.prog_id, 0, "no program id");
	ASSERT_EQ(ims[live].f.addr, kallsyms_addr(name), "at its kallsyms address");
	ASSERT_EQ(ims[live].f.len, ims[live].jited_size, "one function, the image");
	ASSERT_TRUE(ims[live].jited_size > 0 && ims[live].jited_size <= 4096, "image size");
	ASSERT_STREQ(ims[live].m.attach_func_name, "bpf_fentry_test1", "attached to");
	ASSERT_EQ(ims[live].m.content.attach_btf_id, info.attach_btf_id, "attach_btf_id");
	ASSERT_EQ(ims[live].m.attach_btf_obj_id, info.attach_btf_obj_id, "attach_btf_obj_id");
	if (ASSERT_EQ(ims[live].nr_calls, 2, "calls fentry and fexit")) {
		check_call(&ims[live].calls[0], fd_entry, BPFSTASH_CALL_FENTRY, "call 0");
		check_call(&ims[live].calls[1], fd_exit, BPFSTASH_CALL_FEXIT, "call 1");
		ASSERT_TRUE(image_reaches(ims[live].jited, ims[live].jited_size, ims[live].f.addr,
					ims[live].calls[0].addr), "the bytes call fentry");
		ASSERT_TRUE(image_reaches(ims[live].jited, ims[live].jited_size, ims[live].f.addr,
					ims[live].calls[1].addr), "and fexit");
	}
	if (ASSERT_EQ(ims[gone].nr_calls, 1, "the first version called fentry only")) {
		check_call(&ims[gone].calls[0], fd_entry, BPFSTASH_CALL_FENTRY, "first call 0");
		ASSERT_TRUE(image_reaches(ims[gone].jited, ims[gone].jited_size, ims[gone].f.addr,
					ims[gone].calls[0].addr), "its bytes call fentry");
	}
	ASSERT_GE(ims[gone].m.unload_time, ims[gone].m.load_time, "replaced after made");
	ASSERT_LE(ims[gone].m.unload_time, ims[live].m.load_time + 1000000000ULL,
		  "replaced when the second was made");
	check_image_verifies(&ims[live], "trampoline verifies");
	check_image_verifies(&ims[gone], "its first version verifies");
	test__note("%s: %zu then %zu bytes, %d then %d calls", name, ims[gone].jited_size,
		   ims[live].jited_size, ims[gone].nr_calls, ims[live].nr_calls);

	reloaded = stash_stat("reloaded");
	bpf_link__destroy(fexit);
	bpf_link__destroy(fentry);
	fexit = fentry = NULL;
	/* Detaching fexit makes a third version, detaching fentry unloads it. */
	if (ASSERT_TRUE(image_unloaded(ims[live].hex, &m), "detached: unloaded"))
		ASSERT_GE(m.unload_time, m.load_time, "unload time");
	image_free(ims, 2);
	/*
	 * The third version calls fentry alone, as the first did: at the
	 * first one's address, its bytes are the same, and it loads the
	 * first one's entry again.
	 */
	n = image_find(BPFSTASH_IMAGE_TRAMPOLINE, name, ims, 4);
	if (n == 2)
		ASSERT_EQ(stash_stat("reloaded"), reloaded + 1, "the first version's entry reloaded");
	else
		ASSERT_EQ(n, 3, "three versions");
	for (i = 0; i < n && i < 4; i++)
		ASSERT_TRUE(image_unloaded(ims[i].hex, &m), "every version unloaded");
	check_stash_views("trampolines", 64);
out_found:
	image_free(ims, n < 4 ? n : 4);
out_links:
	bpf_link__destroy(fexit);
	bpf_link__destroy(fentry);
out_obj:
	bpf_object__close(obj);
out:
	stash_umount();
}

/*
 * The XDP dispatcher: BPF_PROG_TEST_RUN of an XDP program with repeat > 1
 * puts it in the dispatcher, and takes it out after.  That version of the
 * dispatcher is an entry that calls the program, unloaded once replaced;
 * running again makes the same bytes, which load the same entry again.
 */
static void test_dispatcher(void)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 2 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	struct image_entry ims[4];
	struct bpfstash_meta m;
	unsigned char pkt[64] = {};
	long long reloaded;
	int fd, n = 0, k, mine = -1;
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

#ifndef __x86_64__
	/* arch_prepare_bpf_dispatcher() is x86-64's alone. */
	test__skip("no XDP dispatcher on this architecture: does not apply");
	return;
#endif

	if (!ASSERT_OK(stash_mount(NULL), "mount"))
		return;
	fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "stash_xdp", "GPL", (void *)insns, 2, NULL);
	if (!ASSERT_GE(fd, 0, "load XDP program"))
		goto out;
	memset(&info, 0, sizeof(info));
	ASSERT_OK(bpf_obj_get_info_by_fd(fd, &info, &len), "info");
	for (k = 0; k < 2; k++) {
		LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = pkt, .data_size_in = sizeof(pkt),
			    .repeat = 100);

		reloaded = stash_stat("reloaded");
		if (!ASSERT_OK(bpf_prog_test_run_opts(fd, &opts), "test run, repeat 100"))
			goto out_prog;
		ASSERT_EQ(opts.retval, 2, "XDP_PASS");
		image_free(ims, n < 4 ? n : 4);
		n = image_find(BPFSTASH_IMAGE_DISPATCHER, "bpf_dispatcher_xdp", ims, 4);
		mine = -1;
		for (int i = 0; i < n && i < 4; i++)
			if (ims[i].nr_calls == 1 && ims[i].calls[0].prog_id == info.id)
				mine = mine < 0 ? i : 4;
		if (!ASSERT_TRUE(mine >= 0 && mine < 4, "one dispatcher entry calls it"))
			goto out_prog;
		if (k)
			ASSERT_EQ(stash_stat("reloaded"), reloaded + 1,
				  "run again: the same version, its entry loaded again");
	}
	check_call(&ims[mine].calls[0], fd, BPFSTASH_CALL_DISPATCH, "dispatched to");
	ASSERT_STREQ(ims[mine].m.content.name, "dispatcher", "content.name");
	ASSERT_EQ(ims[mine].f.len, ims[mine].jited_size, "the half page in use");
	ASSERT_TRUE(image_reaches(ims[mine].jited, ims[mine].jited_size, ims[mine].f.addr,
				  ims[mine].calls[0].addr), "its bytes jump to the program");
	ASSERT_TRUE(image_unloaded(ims[mine].hex, &m), "taken out after the run: unloaded");
	check_image_verifies(&ims[mine], "dispatcher verifies");
	test__note("bpf_dispatcher_xdp at %llx, %zu bytes, %d versions in the stash",
		   (unsigned long long)ims[mine].f.addr, ims[mine].jited_size, n);
	check_stash_views("the dispatcher", 64);
out_prog:
	close(fd);
out:
	image_free(ims, n < 4 ? n : 4);
	stash_umount();
}

/*
 * A struct_ops map (a TCP congestion control in BPF, tests/progs/tcpca.bpf.c):
 * registering it makes a trampoline per member, each an entry named by
 * its kallsyms name that calls the member's program and names the member;
 * freeing the map unloads them.
 */
static void test_struct_ops(void)
{
	static const char *const members[] = { "ssthresh", "cong_avoid", "undo_cwnd" };
	struct image_entry ims[3][2];
	struct bpfstash_meta m;
	struct bpf_object *obj;
	struct bpf_link *link = NULL;
	int found[3] = {}, i, n;
	char name[64], prog[32];

	if (!ASSERT_OK(stash_mount(NULL), "mount"))
		return;
	obj = bpf_object__open_file(test_prog_path("tcpca"), NULL);
	if (!ASSERT_PTR_OK(obj, "open tcpca.bpf.o") ||
	    !ASSERT_OK(bpf_object__load(obj), "load: the members' programs and the map"))
		goto out;
	link = bpf_map__attach_struct_ops(bpf_object__find_map_by_name(obj, "stash_ca"));
	if (!ASSERT_PTR_OK(link, "register the congestion control"))
		goto out_obj;
	for (i = 0; i < 3; i++) {
		const struct image_entry *im = &ims[i][0];
		int fd;

		snprintf(name, sizeof(name), "bpf__tcp_congestion_ops_%s", members[i]);
		snprintf(prog, sizeof(prog), "stash_%s", members[i]);
		n = image_find(BPFSTASH_IMAGE_STRUCT_OPS, name, ims[i], 2);
		found[i] = n < 2 ? n : 2;
		if (!ASSERT_EQ(n, 1, name))
			continue;
		fd = bpf_program__fd(bpf_object__find_program_by_name(obj, prog));
		ASSERT_TRUE(im->m.flags & BPFSTASH_META_LOADED, "live");
		ASSERT_STREQ(im->m.content.name, "struct_ops", "content.name");
		ASSERT_EQ(im->f.addr, kallsyms_addr(name), "at its kallsyms address");
		ASSERT_STREQ(im->m.attach_func_name, members[i], "names its member");
		if (ASSERT_EQ(im->nr_calls, 1, "calls the member's program")) {
			check_call(&im->calls[0], fd, BPFSTASH_CALL_STRUCT_OPS, prog);
			ASSERT_TRUE(image_reaches(im->jited, im->jited_size, im->f.addr,
						  im->calls[0].addr), "its bytes call it");
		}
		check_image_verifies(im, name);
	}
	test__note("3 members, 3 trampolines of %zu, %zu and %zu bytes",
		   ims[0][0].jited_size, ims[1][0].jited_size, ims[2][0].jited_size);
	bpf_link__destroy(link);
	link = NULL;
	bpf_object__close(obj);
	obj = NULL;
	/* The map is freed after an RCU tasks grace period: poll. */
	for (i = 0; i < 3; i++)
		if (found[i] == 1)
			ASSERT_TRUE(image_unloaded(ims[i][0].hex, &m), "unloaded with the map");
	check_stash_views("struct_ops trampolines", 64);
out_obj:
	bpf_link__destroy(link);
	bpf_object__close(obj);
out:
	for (i = 0; i < 3; i++)
		image_free(ims[i], found[i]);
	stash_umount();
}

static const struct test tests[] = {
	{ "vmlinux_btf", test_vmlinux_btf },
	{ "kernel_functions", test_kernel_functions },
	{ "link_targets", test_link_targets },
	{ "libbpf_tools", test_libbpf_tools },
	{ "bpftrace_kfunc", test_bpftrace_kfunc },
	{ "trampoline", test_trampoline },
	{ "dispatcher", test_dispatcher },
	{ "struct_ops", test_struct_ops },
	{}
};

int main(int argc, char **argv)
{
	return test_main("kinds", tests, argc, argv);
}
