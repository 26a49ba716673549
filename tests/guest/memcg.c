// SPDX-License-Identifier: GPL-2.0-only
/*
 * Memory cgroups, the way BPF maps use them: the store charges the cgroup
 * of whoever started it through an obj_cgroup.  Once that cgroup is
 * removed the store keeps storing, its charges go to the parent, and the
 * removed cgroup is not pinned while the store runs; with
 * cgroup.memory=nobpf on the kernel's command line (the bench kernel's
 * boot in make check) nothing is charged to the starter's cgroup.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../lib/test.h"
#include "../lib/cgroup.h"
#include "../lib/stashfs.h"

#define CG_PARENT CG_ROOT "/bpfstash-memcg"
#define CG_STARTER CG_PARENT "/starter"
#define LOADS 60
#define INSNS 1000

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Load and close @n programs of INSNS instructions, each new (its own
 * constants): about 5 KiB of JITed code each, so that the charges are
 * well above memory.stat's per-CPU batching.  Returns how many loaded.
 */
static int load_new(int n)
{
	static unsigned int seq;
	int i, ok = 0;

	if (!seq)
		seq = (unsigned int)(mono_s() * 1000) & 0xffffff;
	for (i = 0; i < n; i++) {
		int fd = load_straight_prog("memcg_new", INSNS, (int)(seq++ * INSNS));

		if (fd >= 0) {
			ok++;
			close(fd);
		}
	}
	return ok;
}

/* Whether the kernel was booted with cgroup.memory=nobpf. */
static bool nobpf(void)
{
	char line[4096] = "";
	FILE *f = fopen("/proc/cmdline", "r");

	if (f) {
		if (!fgets(line, sizeof(line), f))
			line[0] = 0;
		fclose(f);
	}
	return strstr(line, "cgroup.memory=nobpf") != NULL;
}

/* CG_PARENT and CG_STARTER, with the memory controller.  0 or -errno. */
static int cg_setup(void)
{
	if (access(CG_ROOT "/cgroup.subtree_control", W_OK))
		return -ENOENT;
	rmdir(CG_STARTER);
	rmdir(CG_PARENT);
	write_file(CG_ROOT "/cgroup.subtree_control", "+memory");
	if (mkdir(CG_PARENT, 0755) && errno != EEXIST)
		return -errno;
	if (write_file(CG_PARENT "/cgroup.subtree_control", "+memory"))
		return -EIO;
	if (mkdir(CG_STARTER, 0755) && errno != EEXIST)
		return -errno;
	return access(CG_STARTER "/memory.stat", R_OK) ? -ENOENT : 0;
}

/*
 * CG_PARENT/CG_STARTER with the memory controller, and the store started
 * from a child in CG_STARTER, which then exits: 0, 1 (skipped) or -1.
 */
static int start_from_starter(void)
{
	int err, status;
	pid_t pid;

	err = cg_setup();
	if (err) {
		test__skip("no cgroup v2 memory controller (%s)", strerror(-err));
		return 1;
	}
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid)
		_exit(cg_enter(CG_STARTER) ? 2 : stash_mount(NULL) ? 1 : 0);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		status = -1;
	return ASSERT_OK(status, "start the store from " CG_STARTER) ? 0 : -1;
}

static void stop_and_remove(void)
{
	stash_umount();
	rmdir(CG_STARTER);
	rmdir(CG_PARENT);
}

/*
 * Load LOADS new programs and return in @grown what the store grew by, in
 * @charged what @cg was charged meanwhile: memory.stat's per-CPU counters
 * lag, so this waits up to 3 s for it to count at least half of @grown.
 */
static void grow(const char *cg, long long *grown, long long *charged)
{
	long long b0 = stash_stat("bytes"), k0 = cg_kmem(cg);
	double end = mono_s() + 3;

	ASSERT_EQ(load_new(LOADS), LOADS, "loads");
	*grown = stash_stat("bytes") - b0;
	do {
		*charged = cg_kmem(cg) - k0;
		if (*charged >= *grown / 2)
			break;
		usleep(100 * 1000);
	} while (mono_s() < end);
}

static void test_starter_removed(void)
{
	long long grown, charged, stored0, dying = -1;
	double end;

	if (start_from_starter())
		goto out;

	/* While the starter's cgroup exists, it is charged. */
	grow(CG_STARTER, &grown, &charged);
	test__note("the store grew by %lld bytes, the starter's cgroup by %lld", grown, charged);
	if (!nobpf())
		ASSERT_GE(charged, grown / 2, "charged to the starter's cgroup");

	/* Removed: the store keeps storing, and charges the parent. */
	if (!ASSERT_OK(rmdir(CG_STARTER), "rmdir the starter's cgroup"))
		goto out;
	stored0 = stash_stat("stored");
	grow(CG_PARENT, &grown, &charged);
	ASSERT_EQ(stash_stat("stored") - stored0, LOADS, "every one stored after the removal");
	test__note("after the removal: the store grew by %lld bytes, the parent by %lld",
		   grown, charged);
	if (!nobpf())
		ASSERT_GE(charged, grown / 2, "charged to the parent");

	/*
	 * Nothing pins the removed cgroup while the store runs: it is freed
	 * once RCU and the css release work are done with it.
	 */
	end = mono_s() + 10;
	do {
		dying = cg_value(CG_PARENT, "cgroup.stat", "nr_dying_descendants");
		if (dying == 0)
			break;
		usleep(200 * 1000);
	} while (mono_s() < end);
	ASSERT_EQ(dying, 0, "no dying cgroup left under the parent while the store runs");
	ASSERT_EQ(load_new(2), 2, "the store still runs");
out:
	stop_and_remove();
}

/*
 * The positive control of the debug kernel's boot, and the bench kernel's
 * boot with cgroup.memory=nobpf: there, the starter's cgroup is charged
 * nothing for what the store holds (grow() then waits its 3 s).
 */
static void test_nobpf(void)
{
	long long grown, charged;
	bool off = nobpf();

	if (start_from_starter())
		goto out;
	grow(CG_STARTER, &grown, &charged);
	ASSERT_GT(grown, 0, "the store grew");
	test__note("cgroup.memory=nobpf %s: the store grew by %lld bytes, the starter's cgroup by %lld",
		   off ? "set" : "not set", grown, charged);
	if (off)
		ASSERT_LT(charged, grown / 10, "nothing charged to the starter's cgroup");
	else
		ASSERT_GE(charged, grown / 2, "charged to the starter's cgroup");
out:
	stop_and_remove();
}

static const struct test tests[] = {
	{ "starter_removed", test_starter_removed, true },
	{ "nobpf", test_nobpf, true },
	{}
};

int main(int argc, char **argv)
{
	return test_main("memcg", tests, argc, argv);
}
