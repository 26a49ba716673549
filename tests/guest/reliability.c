// SPDX-License-Identifier: GPL-2.0-only
/*
 * Reliability: stashing never breaks a load, under systematic and random
 * allocation failures and targeted error injection; concurrent readers,
 * loaders, deleters and mount cycles leave no torn read and no leak; a
 * program freed from an RCU callback (softirq) is fine; a hostile CAP_BPF
 * loader in a memory cgroup cannot grow the stash past size=, is not
 * charged for it, and loads into a full stash as fast as with none.
 *
 * Runs on the debug kernel: KASAN, lockdep, atomic-sleep checks and
 * kmemleak report through the console, which fails the run.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <linux/capability.h>

#include "../lib/test.h"
#include "../lib/cgroup.h"
#include "../lib/proginfo.h"
#include "../lib/stashfs.h"
#include "../lib/perfring.h"
#include "../lib/capture.h"
#include "../lib/stashtrace.h"
#include "../../tools/lib/bpfstash/libbpfstash.h"

#define DEBUGFS "/sys/kernel/debug"
#define ENOTSUPP_ERRNO 524	/* the kernel's ENOTSUPP, not in userspace headers */

static long read_long(const char *path);

/*
 * Switch make-it-fail off for this task.  The write is itself an
 * allocation that can fail while it is on: retried until it reads back 0,
 * or a failure here would go on failing every test after this one (and
 * the threads they start, which inherit it).
 */
static void make_it_fail_off(void)
{
	int i;

	for (i = 0; i < 100000; i++)
		if (!write_file("/proc/self/make-it-fail", "0") &&
		    read_long("/proc/self/make-it-fail") == 0)
			return;
}

static long read_long(const char *path)
{
	char buf[64] = "";
	int fd = open(path, O_RDONLY), n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 ? strtol(buf, NULL, 10) : -1;
}

/* Write @val to @file of both failslab and fail_page_alloc. */
static void fault_attrs_write(const char *file, const char *val)
{
	static const char *const attrs[] = { "failslab", "fail_page_alloc" };
	char path[128];
	size_t i;

	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), DEBUGFS "/%s/%s", attrs[i], file);
		write_file(path, val);
	}
}

/*
 * fail-nth only reaches allocations that may sleep when failslab and
 * fail_page_alloc are told not to ignore them.
 */
static void faults_reach_sleeping_allocations(void)
{
	/* Quiet: a stack trace per injected failure floods the console. */
	fault_attrs_write("verbose", "0");
	fault_attrs_write("ignore-gfp-wait", "N");
	/* No stack filter unless a test sets one. */
	fault_attrs_write("require-start", "0");
	fault_attrs_write("require-end", "0xffffffffffffffff");
	write_file(DEBUGFS "/fail_page_alloc/ignore-gfp-highmem", "N");
	write_file(DEBUGFS "/fail_page_alloc/min-order", "0");
}

/*
 * Restrict injected failures to allocations made on behalf of the kernel
 * function @fn: a stack frame inside it.  Returns 0, or -ENOENT without
 * the stack trace filter or @fn.
 */
static int faults_only_in(const char *fn)
{
	unsigned long long addr, start = 0, end = ~0ULL;
	char line[512], type, name[256], val[32];
	FILE *f = fopen("/proc/kallsyms", "r");

	if (access(DEBUGFS "/failslab/require-start", W_OK))
		return -ENOENT;
	/* The function's end is the next symbol's start. */
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3)
			continue;
		if (!strcmp(name, fn))
			start = addr;
		else if (start && addr > start && addr < end)
			end = addr;
	}
	if (f)
		fclose(f);
	if (!start || end == ~0ULL)
		return -ENOENT;
	snprintf(val, sizeof(val), "0x%llx", start);
	fault_attrs_write("require-start", val);
	snprintf(val, sizeof(val), "0x%llx", end);
	fault_attrs_write("require-end", val);
	fault_attrs_write("stacktrace-depth", "32");
	return 0;
}

/* Only allocations made on behalf of the program load hook. */
static int faults_only_in_the_stash(void)
{
	return faults_only_in("__bpfstash_prog_load");
}

/* The kind of program a sweep loads. */
struct loader {
	const char *name;
	struct captured_prog cp;	/* object programs */
	bool raw;
	unsigned int seq;
};

static int loader_load(struct loader *l)
{
	char name[16];

	/* A distinct name per load: distinct content, never an earlier entry. */
	snprintf(name, sizeof(name), "f%u", l->seq++);
	if (l->raw)
		return load_raw_prog(name);
	memset(l->cp.attr.prog_name, 0, sizeof(l->cp.attr.prog_name));
	memcpy(l->cp.attr.prog_name, name, strlen(name));
	return capture_prog_reload(&l->cp);
}

struct sweep {
	int calls;		/* N = 1 .. calls */
	int failed;		/* loads that failed */
	int errnos[4096];	/* errno of each failed load, in N order */
	int ok;			/* loads that succeeded */
	int ok_stored;		/* ... whose program has an entry */
	int ok_refused;		/* ... refused (and flagged in MMAP3) */
	__u32 ok_ids[4096];
};

/*
 * Load once per N = 1, 2, ...: the Nth allocation of the load fails.  Stop
 * when no fault was injected (N is past the last allocation).
 */
static void sweep_fail_nth(struct loader *l, struct sweep *sw)
{
	char path[64], val[16];
	int n, fd, err;
	long left;

	snprintf(path, sizeof(path), "/proc/thread-self/fail-nth");
	memset(sw, 0, sizeof(*sw));
	for (n = 1; n < 4096; n++) {
		snprintf(val, sizeof(val), "%d", n);
		if (write_file(path, val))
			break;
		fd = loader_load(l);
		err = errno;
		left = read_long(path);
		write_file(path, "0");
		if (fd >= 0) {
			struct bpf_prog_info info = {};
			__u32 len = sizeof(info);

			bpf_obj_get_info_by_fd(fd, &info, &len);
			sw->ok_ids[sw->ok++] = info.id;
			close(fd);
		} else {
			sw->errnos[sw->failed++] = err;
		}
		if (left != 0)
			break;	/* not injected: every allocation was tried */
	}
	sw->calls = n;
}

/* Programs whose MMAP3 records say REFUSED_NOMEM, by id. */
static __u32 nomem_ids[4096];
static int nomem_records;

static void count_nomem(const struct perf_event_header *h, void *ctx)
{
	const struct mmap3_record *m = (const void *)h;

	if (h->type == PERF_RECORD_MMAP3 && m->func_idx == 0 &&
	    (m->flags & PERF_RECORD_MMAP3_REFUSED_NOMEM) && nomem_records < 4096)
		nomem_ids[nomem_records++] = m->id;
}

static bool flagged_nomem(__u32 id)
{
	int i;

	for (i = 0; i < nomem_records; i++)
		if (nomem_ids[i] == id)
			return true;
	return false;
}

/*
 * The loads that fail with the stash mounted fail as they do without it:
 * one errno per failure point, from the same set.  (The points themselves
 * can shift by one between sweeps: allocations such as the stack depot's
 * do not happen on every call.)
 */
static void check_fail_nth_whole(struct loader *l)
{
	struct sweep *plain = calloc(1, sizeof(*plain));
	struct sweep *stashed = calloc(1, sizeof(*stashed));
	long long refused0;
	int i, j;

	stash_umount();
	sweep_fail_nth(l, plain);
	if (!ASSERT_OK(stash_mount("max_entries=100000,size=1G"), "mount"))
		goto out;
	refused0 = stash_stat("refused_nomem");
	sweep_fail_nth(l, stashed);
	test__note("%s: %d allocation points without the stash, %d with; %d and %d loads failed",
		   l->name, plain->calls, stashed->calls, plain->failed, stashed->failed);
	ASSERT_GT(plain->failed, 0, "loads do fail without the stash");
	/*
	 * Not "more allocation points with the stash": how many allocations
	 * a load makes varies by more than the stash's dozen (the sweep stops
	 * at the first load that made fewer than N), and with two CPUs the
	 * sweep without the stash saw 539 and the one with it 509.  Nor "some
	 * load succeeded without an entry": tiny's sweep had none (57 points
	 * without the stash, 65 with).  That every allocation of the stash is
	 * reached, fails alone and is counted is check_fail_nth_stash()'s
	 * job; this sweep checks that failures of the whole load stay the
	 * load's own, and that every success without an entry is counted.
	 */
	for (i = 0; i < stashed->failed; i++) {
		for (j = 0; j < plain->failed; j++)
			if (stashed->errnos[i] == plain->errnos[j])
				break;
		/*
		 * A JIT that cannot allocate fails the load with ENOTSUPP
		 * (BPF_JIT_ALWAYS_ON), stash or not; whether a sweep meets the
		 * allocation of a new bpf_prog_pack depends on how full the
		 * current one is, which earlier suites decide.
		 */
		if (j == plain->failed && stashed->errnos[i] == ENOTSUPP_ERRNO) {
			test__note("errno %d (the JIT's pack allocation) in this sweep only",
				   ENOTSUPP_ERRNO);
			continue;
		}
		if (!ASSERT_LT(j, plain->failed, "a failure the load also has without the stash"))
			test__note("errno %d", stashed->errnos[i]);
	}
	for (i = 0, j = 0; i < stashed->ok; i++) {
		char hex[41];

		j += stash_find_prog(stashed->ok_ids[i], hex) != 0;
	}
	ASSERT_EQ(stash_stat("refused_nomem") - refused0, j,
		  "every success without an entry counted as refused_nomem");
out:
	stash_umount();
	free(plain);
	free(stashed);
}

/*
 * Failures injected only into allocations made for the stash: every load
 * succeeds, and each one either has its entry or is refused, counted and
 * flagged REFUSED_NOMEM in its MMAP3 records.
 */
static void check_fail_nth_stash(struct loader *l)
{
	struct sweep *sw = calloc(1, sizeof(*sw));
	struct perf_event_attr attr;
	struct ring ring;
	cpu_set_t set;
	int i, cpu, missing = 0;
	long long stored0, refused0;

	if (faults_only_in_the_stash()) {
		test__skip("no fault injection stack trace filter in this kernel");
		free(sw);
		return;
	}
	/* libbpf loads probe programs on its first load: not in the counts. */
	close(loader_load(l));
	if (!ASSERT_OK(stash_mount("max_entries=100000,size=1G"), "mount"))
		goto out;
	ring_attr_init(&attr);
	attr.mmap3 = 1;
	/* One CPU's ring is enough when the loader stays on that CPU. */
	cpu = sched_getcpu();
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
	if (!ASSERT_OK(ring_open(&attr, -1, cpu, 512, &ring), "mmap3 event"))
		goto out;
	stored0 = stash_stat("stored");
	refused0 = stash_stat("refused_nomem");
	sweep_fail_nth(l, sw);
	faults_reach_sleeping_allocations();	/* clears the filter */

	test__note("%s: %d allocation points in the stash", l->name, sw->calls - 1);
	ASSERT_EQ(sw->failed, 0, "no load fails because of the stash");
	ASSERT_GT(sw->calls, 2, "the stash allocates");
	nomem_records = 0;
	ring_drain(&ring, count_nomem, NULL);
	/* Each load: its entry, or refused and flagged so, never both. */
	for (i = 0; i < sw->ok; i++) {
		char hex[41];
		bool stored = !stash_find_prog(sw->ok_ids[i], hex);
		bool flagged = flagged_nomem(sw->ok_ids[i]);

		missing += !stored;
		if (!ASSERT_TRUE(stored != flagged, "stored, or refused and flagged REFUSED_NOMEM"))
			test__note("load %d (prog %u): stored %d, flagged %d", i, sw->ok_ids[i],
				   stored, flagged);
	}
	ASSERT_GT(missing, 0, "some stash allocations were failed");
	ASSERT_EQ(stash_stat("refused_nomem") - refused0, nomem_records,
		  "refused_nomem counts every flagged refusal");
	ASSERT_EQ(stash_stat("stored") - stored0, sw->ok - missing, "every other load stored");
	ring_close(&ring);
	CPU_ZERO(&set);
	for (i = 0; i < CPU_SETSIZE && i < 64; i++)
		CPU_SET(i, &set);
	sched_setaffinity(0, sizeof(set), &set);
out:
	stash_umount();
	free(sw);
}

static void test_fail_nth_tiny(void)
{
	struct loader l = { .name = "tiny (raw, no BTF)", .raw = true };

	faults_reach_sleeping_allocations();
	check_fail_nth_stash(&l);
	faults_reach_sleeping_allocations();
	check_fail_nth_whole(&l);
}

static void test_fail_nth_subprogs(void)
{
	struct loader l = { .name = "subprogs (4 functions, BTF)" };

	faults_reach_sleeping_allocations();
	if (!ASSERT_OK(capture_prog_load("subprogs", &l.cp), "prepare"))
		return;
	check_fail_nth_stash(&l);
	faults_reach_sleeping_allocations();
	check_fail_nth_whole(&l);
	capture_prog_close(&l.cp);
}

/* The most functions and the largest BTF of the test programs. */
static void test_fail_nth_many(void)
{
	struct loader l = { .name = "many (256 functions, 256-function BTF)" };

	faults_reach_sleeping_allocations();
	if (!ASSERT_OK(capture_prog_load("many", &l.cp), "prepare"))
		return;
	check_fail_nth_stash(&l);
	capture_prog_close(&l.cp);
}

/* MMAP3 records of trampolines flagged REFUSED_NOMEM, and all of them. */
static int tramp_nomem, tramp_records;

static void count_tramp_nomem(const struct perf_event_header *h, void *ctx)
{
	const struct mmap3_record *m = (const void *)h;

	if (h->type != PERF_RECORD_MMAP3 || m->id || strncmp(m->name, "bpf_trampoline_", 15))
		return;
	tramp_records++;
	tramp_nomem += !!(m->flags & PERF_RECORD_MMAP3_REFUSED_NOMEM);
}

/* What tramp_prepare() did, undone; @ring may be NULL. */
static void tramp_unprepare(struct bpf_object *obj, struct ring *ring)
{
	cpu_set_t set;
	int n;

	faults_reach_sleeping_allocations();	/* clears the filter */
	if (ring)
		ring_close(ring);
	CPU_ZERO(&set);
	for (n = 0; n < CPU_SETSIZE && n < 64; n++)
		CPU_SET(n, &set);
	sched_setaffinity(0, sizeof(set), &set);
	stash_umount();
	bpf_object__close(obj);
}

/*
 * The fentry program of kinds.bpf.o, loaded, with failures injected only
 * on behalf of @fn, a started store, and an MMAP3 ring on the CPU this
 * task is pinned to.  0, 1 (skipped: no stack filter or no @fn), or -1.
 * tramp_unprepare() undoes what it did.
 */
static int tramp_prepare(const char *fn, struct bpf_object **obj, struct bpf_program **prog,
			 struct ring *ring)
{
	struct perf_event_attr attr;
	cpu_set_t set;

	faults_reach_sleeping_allocations();
	*obj = bpf_object__open_file(test_prog_path("kinds"), NULL);
	if (!ASSERT_PTR_OK(*obj, "open kinds.bpf.o"))
		return -1;
	if (!ASSERT_OK(bpf_object__load(*obj), "load"))
		goto out_obj;
	*prog = bpf_object__find_program_by_name(*obj, "kinds_fentry");
	if (faults_only_in(fn)) {
		test__skip("no fault injection stack trace filter, or no %s, in this kernel", fn);
		bpf_object__close(*obj);
		return 1;
	}
	if (!ASSERT_OK(stash_mount(NULL), "mount"))
		goto out_obj;
	ring_attr_init(&attr);
	attr.mmap3 = 1;
	CPU_ZERO(&set);
	CPU_SET(sched_getcpu(), &set);
	sched_setaffinity(0, sizeof(set), &set);
	if (ASSERT_OK(ring_open(&attr, -1, sched_getcpu(), 512, ring), "mmap3 event"))
		return 0;
	tramp_unprepare(*obj, NULL);
	return -1;
out_obj:
	bpf_object__close(*obj);
	return -1;
}

/*
 * A trampoline's image under allocation failures, injected only into the
 * allocations made to store it: the Nth fails for N = 1, 2, ...  Every
 * attach succeeds and its program runs; each image has one MMAP3 record,
 * and is stored, or refused, counted as refused_nomem and flagged
 * REFUSED_NOMEM in that record.
 */
static void test_fail_nth_trampoline(void)
{
	long long stored0, refused0;
	__u64 bssv[6], runs0 = 0;	/* kinds.bpf.c's .bss: calls first */
	struct bpf_program *prog;
	struct bpf_object *obj;
	struct bpf_map *bss;
	struct ring ring;
	char path[64], val[16];
	int n, fd, attached = 0, zero = 0;
	long left = 0;

	if (tramp_prepare("__bpfstash_trampoline_load", &obj, &prog, &ring))
		return;
	fd = bpf_program__fd(prog);
	bss = bpf_object__find_map_by_name(obj, ".bss");
	stored0 = stash_stat("stored");
	refused0 = stash_stat("refused_nomem");
	snprintf(path, sizeof(path), "/proc/thread-self/fail-nth");
	for (n = 1; n < 1024; n++) {
		LIBBPF_OPTS(bpf_test_run_opts, opts);
		struct bpf_link *link;

		snprintf(val, sizeof(val), "%d", n);
		if (write_file(path, val))
			break;
		link = bpf_program__attach(prog);
		left = read_long(path);
		write_file(path, "0");
		if (!ASSERT_PTR_OK(link, "attach succeeds whatever the stash could store"))
			break;
		attached++;
		/* Through the trampoline: the test run calls bpf_fentry_test1(). */
		ASSERT_OK(bpf_prog_test_run_opts(fd, &opts), "run");
		memset(bssv, 0, sizeof(bssv));
		ASSERT_OK(bpf_map__lookup_elem(bss, &zero, sizeof(zero), bssv, sizeof(bssv), 0),
			  "read .bss");
		ASSERT_GT(bssv[0], runs0, "the program ran");
		runs0 = bssv[0];
		bpf_link__destroy(link);
		if (left != 0)
			break;	/* not injected: every allocation was tried */
	}
	faults_reach_sleeping_allocations();	/* clears the filter */
	ring_drain(&ring, count_tramp_nomem, NULL);
	test__note("%d attaches, %d allocations failed while storing the trampoline, %d images refused",
		   attached, n - 1, tramp_nomem);
	ASSERT_NEQ(left, 0, "the sweep reached an attach without a failure");
	ASSERT_GT(n, 2, "storing a trampoline allocates");
	ASSERT_EQ(tramp_records, attached, "one MMAP3 record per trampoline");
	/*
	 * Not every injected failure refuses the image: kmemleak's own
	 * allocation for each object falls back to its pool when it fails.
	 */
	ASSERT_GT(tramp_nomem, 0, "failures refused images, flagged REFUSED_NOMEM");
	ASSERT_LE(tramp_nomem, n - 1, "no more than failures were injected");
	ASSERT_EQ(stash_stat("refused_nomem") - refused0, tramp_nomem, "and counted");
	ASSERT_EQ(stash_stat("stored") - stored0, attached - tramp_nomem, "every other one stored");
	tramp_unprepare(obj, &ring);
}

/*
 * An attach whose trampoline never goes live: the first allocation of
 * ftrace's register_ftrace_direct() fails, so the attach fails after the
 * image was written.  No entry and no MMAP3 record may be left for an image
 * that never ran; the next attach is stored and announced.
 */
static void test_trampoline_attach_fails(void)
{
	long long stored0, considered0;
	struct bpf_program *prog;
	struct bpf_object *obj;
	struct bpf_link *link;
	struct ring ring;
	long left;
	int n;

	if (tramp_prepare("register_ftrace_direct", &obj, &prog, &ring))
		return;
	tramp_records = tramp_nomem = 0;
	stored0 = stash_stat("stored");
	considered0 = stash_stat("considered");
	write_file("/proc/thread-self/fail-nth", "1");
	link = bpf_program__attach(prog);
	left = read_long("/proc/thread-self/fail-nth");
	write_file("/proc/thread-self/fail-nth", "0");
	faults_reach_sleeping_allocations();	/* clears the filter */
	ASSERT_EQ(left, 0, "a failure was injected into register_ftrace_direct()");
	if (!ASSERT_TRUE(link == NULL, "the attach fails"))
		bpf_link__destroy(link);
	ring_drain(&ring, count_tramp_nomem, NULL);
	n = tramp_records;
	ASSERT_EQ(n, 0, "no MMAP3 record of the image that never ran");
	ASSERT_EQ(stash_stat("stored") - stored0, 0, "no entry of it");
	ASSERT_EQ(stash_stat("considered") - considered0, 0, "not even considered");
	link = bpf_program__attach(prog);
	if (ASSERT_PTR_OK(link, "the next attach succeeds")) {
		ring_drain(&ring, count_tramp_nomem, NULL);
		ASSERT_EQ(tramp_records - n, 1, "its trampoline announced once");
		ASSERT_EQ(stash_stat("stored") - stored0, 1, "and stored");
		bpf_link__destroy(link);
	}
	tramp_unprepare(obj, &ring);
}

/* fail_function: the store's insert fails with -ENOMEM, every time. */
static void test_fail_function_insert(void)
{
	long long stored, refused;
	int loaded;

	if (access(DEBUGFS "/fail_function/inject", W_OK)) {
		test__skip("no fail_function in debugfs");
		return;
	}
	if (!ASSERT_OK(stash_mount(NULL), "mount"))
		return;
	ASSERT_OK(write_file(DEBUGFS "/fail_function/inject", "bpfstash_store_insert"),
		  "inject bpfstash_store_insert");
	write_file(DEBUGFS "/fail_function/bpfstash_store_insert/retval", "0xfffffffffffffff4");
	write_file(DEBUGFS "/fail_function/probability", "100");
	write_file(DEBUGFS "/fail_function/interval", "1");
	write_file(DEBUGFS "/fail_function/times", "-1");
	write_file(DEBUGFS "/fail_function/verbose", "0");
	stored = stash_stat("stored");
	refused = stash_stat("refused_nomem");
	loaded = load_close_n(100);
	ASSERT_EQ(loaded, 100, "every load succeeds");
	ASSERT_EQ(stash_stat("refused_nomem") - refused, 100, "every insert refused and counted");
	ASSERT_EQ(stash_stat("stored") - stored, 0, "nothing stored");
	ASSERT_OK(write_file(DEBUGFS "/fail_function/inject", ""), "stop injecting");
	loaded = load_close_n(100);
	ASSERT_EQ(loaded, 100, "loads after");
	ASSERT_EQ(stash_stat("stored") - stored, 100, "stored again once injection stops");
	stash_umount();
}

/*
 * Random slab and page allocation failures for the loader, while a deleter
 * empties the stash; counters stay consistent.
 */
static void test_random_faults(void)
{
	const char *s = getenv("STASH_FAULT_LOADS");
	int loads = s ? atoi(s) : 1000, i, ok = 0;
	long long considered, stored, full, nomem;
	pid_t deleter;

	if (!ASSERT_OK(stash_mount("max_entries=200"), "mount"))
		return;

	/*
	 * The deleter: bpfstash-gc if built, else rmdir of everything
	 * unloaded.  Forked before any fault is armed, and retried: the test
	 * is about the loads, not about fork().
	 */
	for (i = 0; i < 10; i++) {
		deleter = fork();
		if (deleter >= 0 || (errno != EAGAIN && errno != ENOMEM))
			break;
		usleep(100 * 1000);
	}
	if (deleter < 0) {
		test__note("fork: %s", strerror(errno));
		ASSERT_GT(deleter, 0, "fork the deleter");
		stash_umount();
		return;
	}
	if (deleter == 0) {
		/* Its own process group: killing it kills a running gc too. */
		setpgid(0, 0);
		char gc[512];

		snprintf(gc, sizeof(gc), "%s/build/bpfstash-gc/bpfstash-gc", getenv("BPFSTASH_TOP"));
		if (!access(gc, X_OK)) {
			for (;;) {
				pid_t p = fork();

				if (p == 0) {
					int null = open("/dev/null", O_WRONLY);

					dup2(null, 1);
					dup2(null, 2);
					execl(gc, gc, "--max-entries", "50", "--once", NULL);
					_exit(127);
				}
				waitpid(p, NULL, 0);
				usleep(50000);
			}
		}
		for (;;) {
			DIR *d = opendir(STASH_ROOT);
			struct dirent *de;

			while (d && (de = readdir(d))) {
				char path[256];

				if (strlen(de->d_name) != 40)
					continue;
				snprintf(path, sizeof(path), STASH_ROOT "/%s", de->d_name);
				rmdir(path);
			}
			if (d)
				closedir(d);
			usleep(20000);
		}
	}
	faults_reach_sleeping_allocations();
	/* Only tasks with make-it-fail, before any failure is likely. */
	fault_attrs_write("task-filter", "Y");
	fault_attrs_write("times", "-1");
	fault_attrs_write("probability", "5");

	considered = stash_stat("considered");
	stored = stash_stat("stored");
	full = stash_stat("refused_full");
	nomem = stash_stat("refused_nomem");

	write_file("/proc/self/make-it-fail", "1");
	for (i = 0; i < loads; i++) {
		int fd = load_raw_prog("stash_random");

		if (fd >= 0) {
			ok++;
			close(fd);
		}
	}
	make_it_fail_off();
	/* Its process group: a bpfstash-gc it is running dies with it. */
	kill(-deleter, SIGKILL);
	kill(deleter, SIGKILL);
	waitpid(deleter, NULL, 0);
	/* Files the gc had open keep their entries until closed: let it die. */
	usleep(300 * 1000);
	fault_attrs_write("probability", "0");

	test__note("%d of %d loads succeeded under random faults; stored %lld, refused full %lld, nomem %lld",
		   ok, loads, stash_stat("stored") - stored, stash_stat("refused_full") - full,
		   stash_stat("refused_nomem") - nomem);
	ASSERT_GT(ok, 0, "some loads succeeded");
	ASSERT_EQ(stash_stat("considered") - considered,
		  (stash_stat("stored") - stored) + (stash_stat("refused_full") - full) +
		  (stash_stat("refused_nomem") - nomem), "stored + refused == considered");
	/* A load can fail after the hook (installing its fd): it may be counted. */
	ASSERT_LE(stash_stat("considered") - considered, loads, "at most one count per load");
	ASSERT_LE(stash_stat("entries"), 200, "within max_entries");
	stash_umount();
	ASSERT_OK(stash_mount(NULL), "remount");
	ASSERT_EQ(stash_stat("bytes"), 0, "memory back after the stop");
	stash_umount();
}

/*
 * Races: readers, loaders, a deleter and mount/unmount cycles and stops at once.  A
 * read either fails at open or verifies against the hash: never torn.
 */
struct race {
	atomic_int stop;
	atomic_int reads, verified, open_failed, torn, loads, deletes, cycles, stops;
	atomic_int index_reads, index_bad;
};

/* The index file, whole and consistent in itself, however the store changes. */
static bool index_consistent(const void *buf, size_t size)
{
	const struct bpfstash_index_header *h = buf;
	const unsigned char *p = buf;
	size_t entries, ranges, names;
	unsigned int i, next = 0;

	if (size < sizeof(*h) || le32toh(h->magic) != BPFSTASH_INDEX_MAGIC ||
	    le64toh(h->size) != size)
		return false;
	entries = le32toh(h->header_size);
	ranges = entries + (size_t)le32toh(h->nr_entries) * le32toh(h->entry_size);
	names = ranges + (size_t)le32toh(h->nr_ranges) * le32toh(h->range_size);
	if (names + le32toh(h->names_size) != size)
		return false;
	for (i = 0; i < le32toh(h->nr_entries); i++) {
		const struct bpfstash_index_entry *e =
			(const void *)(p + entries + (size_t)i * le32toh(h->entry_size));

		if (le32toh(e->first_range) != next || !e->nr_ranges)
			return false;
		next += le32toh(e->nr_ranges);
	}
	if (next != le32toh(h->nr_ranges))
		return false;
	for (i = 0; i < next; i++) {
		const struct bpfstash_index_range *rg =
			(const void *)(p + ranges + (size_t)i * le32toh(h->range_size));

		if (le32toh(rg->entry) >= le32toh(h->nr_entries) || !rg->len ||
		    le32toh(rg->name_off) >= le32toh(h->names_size) ||
		    !memchr(p + names + le32toh(rg->name_off), 0,
			    le32toh(h->names_size) - le32toh(rg->name_off)))
			return false;
	}
	return true;
}

static void *race_indexer(void *arg)
{
	struct race *r = arg;

	while (!atomic_load(&r->stop)) {
		size_t size;
		void *buf;

		if (stash_read(".", "index", &buf, &size))
			continue;	/* unmounted, or stopped meanwhile */
		atomic_fetch_add(&r->index_reads, 1);
		if (!index_consistent(buf, size))
			atomic_fetch_add(&r->index_bad, 1);
		free(buf);
	}
	return NULL;
}

static void *race_reader(void *arg)
{
	struct race *r = arg;

	while (!atomic_load(&r->stop)) {
		struct bpfstash *s;
		char **names;
		size_t n, i;

		if (bpfstash_open(STASH_ROOT, &s))
			continue;
		if (!bpfstash_is_mounted(s) || bpfstash_list(s, &names, &n)) {
			bpfstash_close(s);
			continue;
		}
		for (i = 0; i < n && !atomic_load(&r->stop); i += 1 + rand() % 3) {
			struct bpfstash_entry *e;
			int err = bpfstash_entry_load(s, names[i], 0, &e);

			atomic_fetch_add(&r->reads, 1);
			if (err == -ENOENT || err == -ENODEV || err == -EBADF) {
				atomic_fetch_add(&r->open_failed, 1);
				continue;
			}
			if (err) {
				atomic_fetch_add(&r->torn, 1);
				continue;
			}
			if (bpfstash_entry_verify(e))
				atomic_fetch_add(&r->torn, 1);
			else
				atomic_fetch_add(&r->verified, 1);
			bpfstash_entry_free(e);
		}
		bpfstash_names_free(names);
		bpfstash_close(s);
	}
	return NULL;
}

static void *race_loader(void *arg)
{
	struct race *r = arg;
	struct bpf_object *obj;
	int fd;

	while (!atomic_load(&r->stop)) {
		obj = test_prog_load("subprogs", &fd);
		if (obj) {
			atomic_fetch_add(&r->loads, 1);
			bpf_object__close(obj);
		}
		atomic_fetch_add(&r->loads, load_close_n(3));
	}
	return NULL;
}

static void *race_deleter(void *arg)
{
	struct race *r = arg;

	while (!atomic_load(&r->stop)) {
		DIR *d = opendir(STASH_ROOT);
		struct dirent *de;

		while (d && (de = readdir(d))) {
			char path[256];

			if (strlen(de->d_name) != 40 || rand() % 2)
				continue;
			snprintf(path, sizeof(path), STASH_ROOT "/%s", de->d_name);
			if (!rmdir(path))
				atomic_fetch_add(&r->deletes, 1);
		}
		if (d)
			closedir(d);
		usleep(1000);
	}
	return NULL;
}

static void test_races(void)
{
	const char *s = getenv("STASH_RACE_SECONDS");
	int seconds = s ? atoi(s) : 20, i;
	pthread_t th[6];
	struct race r = {};
	time_t end;

	if (!ASSERT_OK(stash_mount(NULL), "mount"))
		return;
	pthread_create(&th[0], NULL, race_reader, &r);
	pthread_create(&th[1], NULL, race_reader, &r);
	pthread_create(&th[2], NULL, race_loader, &r);
	pthread_create(&th[3], NULL, race_loader, &r);
	pthread_create(&th[4], NULL, race_deleter, &r);
	pthread_create(&th[5], NULL, race_indexer, &r);
	end = time(NULL) + seconds;
	while (time(NULL) < end) {
		/*
		 * Lazy unmount while everything runs, then mount again;
		 * every other time, stop the store first (the mount starts
		 * it again).
		 */
		usleep(700 * 1000);
		if (r.cycles % 2 == 0 && !stash_control("off"))
			r.stops++;
		if (!umount2(STASH_ROOT, MNT_DETACH))
			r.cycles++;
		usleep(100 * 1000);
		mount("none", STASH_ROOT, "bpfstash", 0, NULL);
	}
	atomic_store(&r.stop, 1);
	for (i = 0; i < 6; i++)
		pthread_join(th[i], NULL);
	test__note("%d s: %d reads (%d verified, %d gone at open), %d index reads, %d loads, "
		   "%d deletes, %d unmounts, %d stops",
		   seconds, r.reads, r.verified, r.open_failed, r.index_reads, r.loads, r.deletes,
		   r.cycles, r.stops);
	ASSERT_EQ(r.torn, 0, "no torn or inconsistent read");
	ASSERT_GT(r.index_reads, 0, "index files read");
	ASSERT_EQ(r.index_bad, 0, "every index file consistent in itself");
	ASSERT_GT(r.verified, 0, "reads verified");
	ASSERT_GT(r.deletes, 0, "deletes happened");
	ASSERT_GT(r.cycles, 0, "unmounts happened");
	ASSERT_GT(r.stops, 0, "stops happened");
	stash_umount();
	/* Every detached instance is gone once nothing uses it. */
	usleep(200 * 1000);
	ASSERT_OK(stash_mount(NULL), "mount");
	ASSERT_EQ(stash_stat("bytes"), 0, "memory back to baseline");
	ASSERT_EQ(stash_stat("blobs"), 0, "no blob left");
	stash_umount();
}

/*
 * A program loaded again with the same content at the same address finds
 * its old entry, and the kernel rewrites that entry's state (prog id, uid,
 * times, loaded) while readers may be reading meta.  Each read must be one
 * load's state: the (prog id, load time) pair of a real load, loaded with
 * no unload time, or unloaded after it was loaded.  The loader loads and
 * closes one program, so the JIT often puts it back at the same address
 * (stats: reloaded); two readers read the entry's meta meanwhile.
 */
#define STATE_MAX_LOADS	65536

struct state_race {
	atomic_int stop;
	char hex[41];
	int nloads;
	__u32 ids[STATE_MAX_LOADS];
	__u64 load_times[STATE_MAX_LOADS];
	atomic_int reads, bad, loaded_reads;
	char why[256];
};

static void *state_loader(void *arg)
{
	struct state_race *r = arg;

	while (!atomic_load(&r->stop) && r->nloads < STATE_MAX_LOADS) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd = load_raw_prog("stash_state");

		if (fd < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(fd, &info, &len)) {
			r->ids[r->nloads] = info.id;
			r->load_times[r->nloads] = info.load_time;
			/* Readers look the pair up only among those published. */
			__atomic_store_n(&r->nloads, r->nloads + 1, __ATOMIC_RELEASE);
		}
		close(fd);
	}
	return NULL;
}

/* Whether (@id, @load_time) is a load the loader made. */
static bool state_known(struct state_race *r, __u32 id, __u64 load_time)
{
	int n = __atomic_load_n(&r->nloads, __ATOMIC_ACQUIRE), i;

	for (i = n - 1; i >= 0; i--)
		if (r->ids[i] == id)
			return r->load_times[i] == load_time;
	return true;	/* a load not yet published: nothing to compare */
}

static void *state_reader(void *arg)
{
	struct state_race *r = arg;
	char path[128];
	int fd;

	/* One open file, read again and again: as many reads as can be. */
	snprintf(path, sizeof(path), STASH_ROOT "/%s/meta", r->hex);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return NULL;
	while (!atomic_load(&r->stop)) {
		struct bpfstash_meta m;
		const char *why = NULL;

		if (pread(fd, &m, sizeof(m), 0) == sizeof(m)) {
			atomic_fetch_add(&r->reads, 1);
			if (m.flags & BPFSTASH_META_LOADED) {
				atomic_fetch_add(&r->loaded_reads, 1);
				if (m.unload_time || m.unload_time_real)
					why = "loaded, with an unload time";
			} else if (m.unload_time < m.load_time || !m.unload_time_real) {
				why = "unloaded before it was loaded";
			}
			if (!why && !state_known(r, m.prog_id, m.load_time))
				why = "one load's id with another's load time";
			if (why && atomic_fetch_add(&r->bad, 1) == 0)
				snprintf(r->why, sizeof(r->why), "%s: prog_id %u load %llu unload %llu flags %u",
					 why, m.prog_id, (unsigned long long)m.load_time,
					 (unsigned long long)m.unload_time, m.flags);
		}
	}
	close(fd);
	return NULL;
}

static void test_state_consistent(void)
{
	const char *s = getenv("STASH_STATE_SECONDS");
	int seconds = s ? atoi(s) : 15, i, fd;
	struct state_race *r = calloc(1, sizeof(*r));
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	long long reloaded;
	pthread_t th[3];

	if (!ASSERT_PTR_OK(r, "alloc") || !ASSERT_OK(stash_mount(NULL), "mount"))
		goto out;
	fd = load_raw_prog("stash_state");
	if (!ASSERT_GE(fd, 0, "load") || !ASSERT_OK(bpf_obj_get_info_by_fd(fd, &info, &len), "info") ||
	    !ASSERT_OK(stash_find_prog(info.id, r->hex), "entry")) {
		stash_umount();
		goto out;
	}
	close(fd);
	reloaded = stash_stat("reloaded");
	pthread_create(&th[0], NULL, state_loader, r);
	pthread_create(&th[1], NULL, state_reader, r);
	pthread_create(&th[2], NULL, state_reader, r);
	sleep(seconds);
	atomic_store(&r->stop, 1);
	for (i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	reloaded = stash_stat("reloaded") - reloaded;
	test__note("%d s: %d loads, %lld of them onto the first entry (reloaded), %d reads "
		   "(%d while loaded), %d inconsistent", seconds, r->nloads, reloaded,
		   atomic_load(&r->reads), atomic_load(&r->loaded_reads), atomic_load(&r->bad));
	if (reloaded == 0) {
		test__skip("the JIT never put the program back at its first address: no entry "
			   "was loaded again to race with");
	} else {
		ASSERT_GT(atomic_load(&r->reads), 0, "reads");
		if (!ASSERT_EQ(atomic_load(&r->bad), 0, "every read is one load's state"))
			test__note("first: %s", r->why);
	}
	stash_umount();
out:
	free(r);
}

/*
 * The last reference of a tc program dropped from an RCU callback
 * (softirq): the unload hook must not sleep.  The entry survives.
 */
static void test_softirq_unload(void)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = 1, .attach_point = BPF_TC_INGRESS);
	LIBBPF_OPTS(bpf_tc_opts, opts, .handle = 1, .priority = 1);
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	struct bpfstash_entry *e;
	struct bpfstash *s;
	struct bpf_object *obj;
	char hex[41];
	int fd, i;

	if (!ASSERT_OK(stash_mount(NULL), "mount"))
		return;
	system("ip link set lo up 2>/dev/null");
	for (i = 0; i < 20; i++) {
		obj = test_prog_load("tc", &fd);
		if (!ASSERT_PTR_OK(obj, "load tc program"))
			break;
		memset(&info, 0, sizeof(info));
		len = sizeof(info);
		ASSERT_OK(bpf_obj_get_info_by_fd(fd, &info, &len), "info");
		bpf_tc_hook_create(&hook);
		opts.prog_fd = fd;
		opts.prog_id = 0;
		opts.flags = 0;
		if (!ASSERT_OK(bpf_tc_attach(&hook, &opts), "attach to lo ingress")) {
			bpf_object__close(obj);
			break;
		}
		bpf_object__close(obj);	/* the filter holds the last reference */
		/* Traffic through lo runs it in softirq. */
		system("ping -c 1 -W 1 127.0.0.1 > /dev/null 2>&1");
		hook.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
		ASSERT_OK(bpf_tc_hook_destroy(&hook), "delete the qdisc");
		hook.attach_point = BPF_TC_INGRESS;
	}
	/* Freed from call_rcu: give the grace period time. */
	usleep(500 * 1000);
	if (ASSERT_OK(stash_find_prog(info.id, hex), "entry of the last program") &&
	    ASSERT_OK(bpfstash_open(STASH_ROOT, &s), "open")) {
		if (ASSERT_OK(bpfstash_entry_load(s, hex, 0, &e), "load")) {
			ASSERT_FALSE(bpfstash_entry_loaded(e), "unloaded from the RCU callback");
			ASSERT_OK(bpfstash_entry_verify(e), "complete");
			bpfstash_entry_free(e);
		}
		bpfstash_close(s);
	}
	stash_umount();
}

/*
 * Hostile load: a process with CAP_BPF alone, in a memory cgroup of its
 * own, loads and closes programs as fast as it can.  The stash was mounted
 * from another cgroup, which it charges (as a map charges its creator):
 * the loader cannot make the stash grow past size=, the stash's memory is
 * not the loader's, nothing is OOM-killed, and a load into a full stash
 * is no slower than a load with no stash at all.  Rounds alternate the
 * two sides, so both see the same drift of the machine.
 */
#define CG_MOUNTER CG_ROOT "/bpfstash-mounter"
#define CG_LOADER CG_ROOT "/bpfstash-hostile"
#define HOSTILE_MAX 40000

struct hostile_load {
	double start;		/* CLOCK_MONOTONIC, s */
	float us;		/* the bpf(BPF_PROG_LOAD) call */
};

struct hostile_run {
	int loads, failed, status;
	struct hostile_load l[HOSTILE_MAX];
};

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static long long vmstat(const char *key)
{
	return cg_value("/proc", "vmstat", key);
}

/* The loader, forked: CAP_BPF only, in CG_LOADER, for @secs seconds. */
static void hostile_loader(struct hostile_run *r, int round, double secs)
{
	double end;

	if (cg_enter(CG_LOADER))
		_exit(121);
	set_caps_only(1ULL << CAP_BPF);
	end = mono_s() + secs;
	while (r->loads < HOSTILE_MAX) {
		double t0 = mono_s(), t1;
		char name[16];
		int fd;

		if (t0 >= end)
			break;
		/* A new name each time: new content, a new entry if there is room. */
		snprintf(name, sizeof(name), "h%d_%d", round, r->loads);
		fd = load_raw_prog(name);
		t1 = mono_s();
		if (fd < 0) {
			r->failed++;
			continue;
		}
		close(fd);
		r->l[r->loads].start = t0;
		r->l[r->loads].us = (t1 - t0) * 1e6;
		r->loads++;
	}
	_exit(0);
}

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;

	return (x > y) - (x < y);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* p50 of the loads that started at or after @from; their number in *n. */
static double hostile_p50(const struct hostile_run *r, double from, int *n)
{
	static float us[HOSTILE_MAX];
	int i;

	for (*n = 0, i = 0; i < r->loads; i++)
		if (r->l[i].start >= from)
			us[(*n)++] = r->l[i].us;
	if (!*n)
		return 0;
	qsort(us, *n, sizeof(us[0]), cmp_float);
	return us[*n / 2];
}

/* Fork the hostile loader for @secs seconds and wait for it; false if it failed. */
static bool hostile_phase(struct hostile_run *r, int phase, double secs)
{
	int status = 0;
	pid_t pid;

	memset(r, 0, sizeof(*r));
	pid = fork();
	if (!ASSERT_GE(pid, 0, "fork the loader"))
		return false;
	if (pid == 0)
		hostile_loader(r, phase, secs);
	waitpid(pid, &status, 0);
	return ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status),
			   "the loader ran to its end (not killed)") &&
	       ASSERT_EQ(r->failed, 0, "every load succeeded");
}

/* A phase's trace records: their sums, and each load's hook time. */
struct hook_times {
	struct stash_trace_sum sum;
	double *ns;
	int n, cap;
};

static void hook_times_add(const struct stash_trace_rec *rec, void *ctx)
{
	struct hook_times *h = ctx;

	stash_trace_add(rec, &h->sum);
	if (h->n < h->cap)
		h->ns[h->n++] = rec->ns;
}

static void test_hostile_load(void)
{
	const int rounds = 3;
	const double secs = 2;
	const long long size = 16 << 10;	/* full after a few dozen loads */
	struct hostile_run *r;
	double none_p50[3], full_p50[3], ratio[3], hook_ratio[3], med_none, med_full, med_ratio;
	long long oom0 = vmstat("oom_kill");
	struct stash_trace_sum hook = {};
	struct stash_trace *trace = NULL;
	/* Every refused load's hook time, over the rounds. */
	struct hook_times times = { .cap = 1 << 20 };
	double hook_med;
	int round, n;

	r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (!ASSERT_TRUE(r != MAP_FAILED, "shared results"))
		return;
	times.ns = calloc(times.cap, sizeof(double));
	if (!ASSERT_TRUE(times.ns != NULL, "room for the hook's times"))
		goto out;
	write_file(CG_ROOT "/cgroup.subtree_control", "+memory");
	mkdir(CG_MOUNTER, 0755);
	mkdir(CG_LOADER, 0755);
	if (!ASSERT_OK(write_file(CG_LOADER "/memory.max", "64M"), "memory.max of the loader's cgroup"))
		goto out;
	/* libbpf's feature probe, once per process: before the loaders fork. */
	close(load_raw_prog("warm"));
	/* The hook's own account of a refusal: bpfstash:bpfstash_store. */
	trace = stash_trace_open();
	if (!ASSERT_TRUE(trace != NULL, "open bpfstash:bpfstash_store"))
		goto out;

	for (round = 0; round < rounds; round++) {
		long long considered, stored, refused, charged0, charged, loader0, loader;
		long long refused0;
		int err, fill, tries;
		char opts[64];

		/* No stash. */
		stash_umount();
		if (!hostile_phase(r, round * 3, secs))
			goto out;
		none_p50[round] = hostile_p50(r, 0, &n);

		/* Mounted from CG_MOUNTER, which the stash then charges. */
		charged0 = cg_kmem(CG_MOUNTER);
		loader0 = cg_kmem(CG_LOADER);
		snprintf(opts, sizeof(opts), "size=%lld,max_entries=1000000", size);
		cg_enter(CG_MOUNTER);
		err = stash_mount(opts);
		cg_enter(CG_ROOT);
		if (!ASSERT_OK(err, "mount from the mounter's cgroup"))
			goto out;
		/*
		 * The loader fills it: a second at a time, until a load is
		 * refused (a slow emulator may need more than one).  Each try
		 * loads new names, so that nothing is a reload.
		 */
		for (fill = 0, tries = 0; tries < 10; tries++) {
			if (!hostile_phase(r, round * 3 + 1 + 100 * (tries + 1), secs / 2))
				goto out;
			fill += r->loads;
			if (stash_stat("refused_full") > 0)
				break;
		}
		considered = stash_stat("considered");
		stored = stash_stat("stored");
		refused = stash_stat("refused_full");
		ASSERT_EQ(considered, fill, "every load considered");
		ASSERT_EQ(stored + refused + stash_stat("refused_nomem"), considered,
			  "stored + refused = loads");
		ASSERT_GT(refused, 0, "the loader filled the stash");
		ASSERT_LE(stash_stat("bytes"), size, "within size=");
		/* ...and goes on loading into the full stash. */
		if (!ASSERT_GE(stash_trace_read(trace, NULL, NULL), fill, "fill loads traced"))
			goto out;
		refused0 = refused;
		{
			struct stash_trace_sum phase = {};
			int first = times.n;

			if (!hostile_phase(r, round * 3 + 2, secs))
				goto out;
			refused = stash_stat("refused_full") - refused0;
			ASSERT_EQ(refused, r->loads,
				  "every load into the full stash refused and counted");
			ASSERT_EQ(stash_stat("stored"), stored, "nothing more stored");
			ASSERT_LE(stash_stat("bytes"), size, "still within size=");
			times.sum = (struct stash_trace_sum){};
			stash_trace_read(trace, hook_times_add, &times);
			phase = times.sum;
			ASSERT_EQ(times.n - first, phase.n, "each load's hook time kept");
			/* This round's median refusal, against its own load with no stash. */
			qsort(times.ns + first, times.n - first, sizeof(double), cmp_double);
			hook_ratio[round] = times.n > first ?
				times.ns[first + (times.n - first) / 2] : 0;
			ASSERT_EQ(phase.n, r->loads, "one trace record per load");
			ASSERT_EQ(phase.by_outcome[STASH_REFUSED_FULL], r->loads,
				  "traced as refused_full");
			ASSERT_EQ(phase.bytes + phase.hashed, 0, "refused: nothing stored or hashed");
			hook.ns += phase.ns;
			hook.n += phase.n;
		}
		full_p50[round] = hostile_p50(r, 0, &n);

		/*
		 * The stash's memory is the mounter's, not the loader's.  The
		 * loader's own programs are freed after it exits, by RCU and
		 * work items, and memory.stat lags: wait up to 3 s for its
		 * figure to come down.  What the entries held would not.
		 */
		charged = cg_kmem(CG_MOUNTER) - charged0;
		for (n = 0; n < 30; n++) {
			loader = cg_kmem(CG_LOADER) - loader0;
			if (loader < stash_stat("bytes"))
				break;
			usleep(100 * 1000);
		}
		ASSERT_GE(charged, stash_stat("bytes"), "charged to the mounter's cgroup");
		ASSERT_LT(loader, stash_stat("bytes"), "not charged to the loader's cgroup");
		test__note("round %d: %lld stored, then %d loads in %.0f s refused full; slab+vmalloc: "
			   "mounter +%lld KiB for a %lld KiB stash, loader +%lld KiB; "
			   "p50 %.1f us full vs %.1f us with no stash",
			   round, stored, r->loads, secs, charged >> 10,
			   stash_stat("bytes") >> 10, loader >> 10, full_p50[round],
			   none_p50[round]);
		stash_umount();
		/* Stopping gives the charge back (entries go after RCU). */
		for (n = 0; n < 40; n++) {
			if (cg_kmem(CG_MOUNTER) - charged0 < charged / 4 + (4 << 10))
				break;
			usleep(50 * 1000);
		}
		ASSERT_LT(cg_kmem(CG_MOUNTER) - charged0, charged / 4 + (4 << 10),
			  "uncharged at the stop");
	}
	ASSERT_EQ(cg_value(CG_LOADER, "memory.events", "oom_kill"), 0,
		  "no OOM kill in the loader's cgroup");
	ASSERT_EQ(vmstat("oom_kill"), oom0, "no OOM kill anywhere");
	for (round = 0; round < rounds; round++) {
		ratio[round] = full_p50[round] / none_p50[round];
		hook_ratio[round] /= none_p50[round] * 1e3;
	}
	qsort(hook_ratio, rounds, sizeof(double), cmp_double);
	qsort(none_p50, rounds, sizeof(double), cmp_double);
	qsort(full_p50, rounds, sizeof(double), cmp_double);
	qsort(ratio, rounds, sizeof(double), cmp_double);
	med_none = none_p50[rounds / 2];
	med_full = full_p50[rounds / 2];
	med_ratio = ratio[rounds / 2];
	qsort(times.ns, times.n, sizeof(double), cmp_double);
	hook_med = times.n ? times.ns[times.n / 2] : 0;
	test__note("median of %d rounds: p50 %.1f us into a full stash, %.1f us with no stash; "
		   "median of the rounds' ratios x%.3f; the hook refusing a load: median %.2f us, "
		   "mean %.2f us over %d loads, median of the rounds' hook/load %.2f%%",
		   rounds, med_full, med_none, med_ratio, hook_med / 1e3, hook.ns / hook.n / 1e3,
		   times.n, hook_ratio[rounds / 2] * 100);
	ASSERT_EQ(stash_trace_lost(trace), 0, "no trace record lost");
	/*
	 * What the stash adds to a refused load, measured in the kernel: each
	 * round's median refusal against that round's load with no stash
	 * (whose p50 moves by a third from round to round under TCG), the
	 * median of the rounds; the mean, which the debug kernel's own work
	 * (kmemleak scans, RCU callbacks) reaches in a few samples, is held to
	 * twice that.
	 */
	ASSERT_LTF(hook_ratio[rounds / 2], 0.01, "refusing costs the hook under 1% of a load");
	ASSERT_LTF(hook.ns / hook.n, med_none * 1e3 / 50,
		   "and its mean, with the emulator's outliers, under 2%");
	/*
	 * End to end, under TCG, a phase's p50 moves by up to 30% from one
	 * round to the next whatever the stash does: three runs of this
	 * test gave ratios of 0.91-1.32 per round, while the hook refused
	 * each load in 28-37 us of 5-7 ms.  Their medians of the rounds'
	 * separate p50s, 1.10, 1.13 and 1.26, failed a bound of 1.2 once.
	 * Each round's full phase is now compared with its own phase with no
	 * stash, and the median of those ratios is held to a bound that
	 * catches a gross slowdown of loads into a full stash (a lock or a
	 * retry on the load path), not the hook's own cost: that is the
	 * tracepoint's check above.
	 */
	ASSERT_LTF(med_ratio, 1.35, "a full stash costs a load about what no stash does");

out:
	stash_trace_close(trace);
	stash_umount();
	cg_enter(CG_ROOT);
	rmdir(CG_LOADER);
	rmdir(CG_MOUNTER);
	free(times.ns);
	munmap(r, sizeof(*r));
}

static const struct test tests[] = {
	{ "fail_nth_tiny", test_fail_nth_tiny, true },
	{ "fail_nth_subprogs", test_fail_nth_subprogs, true },
	{ "fail_nth_many", test_fail_nth_many, true },
	{ "fail_function_insert", test_fail_function_insert, true },
	{ "fail_nth_trampoline", test_fail_nth_trampoline, true },
	{ "trampoline_attach_fails", test_trampoline_attach_fails, true },
	{ "random_faults", test_random_faults, true },
	{ "races", test_races, true },
	{ "state_consistent", test_state_consistent, true },
	{ "softirq_unload", test_softirq_unload },
	{ "hostile_load", test_hostile_load, true },
	{}
};

int main(int argc, char **argv)
{
	return test_main("reliability", tests, argc, argv);
}
