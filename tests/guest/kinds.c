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
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
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
#include "../../include/uapi/linux/bpfstash.h"

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
	static const struct {
		const char *prog, *target;
	} progs[] = {
		{ "kinds_fentry", "bpf_fentry_test1" },
		{ "kinds_fexit", "bpf_fentry_test1" },
		{ "kinds_tp_btf", "sched_switch" },
		{ "kinds_lsm", "bpf_lsm_file_open" },
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

static const struct test tests[] = {
	{ "vmlinux_btf", test_vmlinux_btf },
	{ "kernel_functions", test_kernel_functions },
	{ "libbpf_tools", test_libbpf_tools },
	{ "bpftrace_kfunc", test_bpftrace_kfunc },
	{}
};

int main(int argc, char **argv)
{
	return test_main("kinds", tests, argc, argv);
}
