// SPDX-License-Identifier: GPL-2.0-only
/*
 * The stash shows nothing to anyone who could not already see it: the
 * kptr_restrict x perf_event_paranoid matrix against /proc/kallsyms itself,
 * bpf_jit_harden, and lockdown (integrity, then confidentiality, which is
 * irreversible: keep lockdown_confidentiality last).  The user namespace,
 * f_cred, classic BPF and write-like cases are in the stash suite; the
 * MMAP3 bit's gating in the mmap3 suite.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "../lib/test.h"
#include "../lib/proginfo.h"
#include "../lib/stashfs.h"
#include "../lib/perfring.h"
#include "../../tools/lib/bpfstash/libbpfstash.h"

/* Whether /proc/kallsyms shows this process real addresses. */
static int kallsyms_shows_addresses(void)
{
	char line[256];
	int shown = 0;
	FILE *f = fopen("/proc/kallsyms", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "0000000000000000", 16)) {
			shown = 1;
			break;
		}
	}
	fclose(f);
	return shown;
}

/* 1: the stash lets us list and read; 0: it does not. */
static int stash_readable(const char *hex)
{
	char path[256], buf[16];
	DIR *d = opendir(STASH_ROOT);
	int fd, ok;

	if (!d)
		return 0;
	closedir(d);
	snprintf(path, sizeof(path), STASH_ROOT "/%s/jited", hex);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	ok = read(fd, buf, sizeof(buf)) > 0;
	close(fd);
	return ok;
}

struct probe {
	const char *hex;
	int kallsyms, stash;
};

static int probe_both(void *arg)
{
	struct probe *p = arg;

	return kallsyms_shows_addresses() * 2 + stash_readable(p->hex);
}

static void test_kallsyms_matrix(void)
{
	static const char *const kptr[] = { "0", "1", "2" };
	static const char *const paranoid[] = { "-1", "0", "1", "2" };
	char old_kptr[16], old_paranoid[16], hex[41];
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	struct probe p = { hex };
	size_t i, j;
	int pfd;

	/*
	 * DAC lets uid 1000 in (mode 0755, group 1000), and the mount
	 * delegates reading: only kallsyms' rule decides.
	 */
	if (!ASSERT_OK(stash_mount("mode=0755,gid=1000,delegate_readers"), "mount"))
		return;
	pfd = load_raw_prog("stash_matrix");
	bpf_obj_get_info_by_fd(pfd, &info, &len);
	if (!ASSERT_OK(stash_find_prog(info.id, hex), "entry"))
		goto out;
	sysctl_set("/proc/sys/kernel/kptr_restrict", "0", old_kptr, sizeof(old_kptr));
	sysctl_set("/proc/sys/kernel/perf_event_paranoid", "2", old_paranoid, sizeof(old_paranoid));
	for (i = 0; i < 3; i++) {
		for (j = 0; j < 4; j++) {
			int unpriv, root, want_unpriv, want_root;
			char what[96];

			sysctl_set("/proc/sys/kernel/kptr_restrict", kptr[i], NULL, 0);
			sysctl_set("/proc/sys/kernel/perf_event_paranoid", paranoid[j], NULL, 0);
			unpriv = run_unprivileged(probe_both, &p);
			root = probe_both(&p);
			/* kallsyms_show_value(): 0 and paranoid <= 1 for all; CAP_SYSLOG unless 2. */
			want_unpriv = i == 0 && atoi(paranoid[j]) <= 1;
			want_root = i != 2;
			snprintf(what, sizeof(what), "kptr_restrict=%s perf_event_paranoid=%s: unprivileged",
				 kptr[i], paranoid[j]);
			ASSERT_EQ(unpriv & 1, want_unpriv, what);
			ASSERT_EQ(unpriv >> 1, unpriv & 1, "unprivileged: stash decides as /proc/kallsyms");
			snprintf(what, sizeof(what), "kptr_restrict=%s perf_event_paranoid=%s: root",
				 kptr[i], paranoid[j]);
			ASSERT_EQ(root & 1, want_root, what);
			ASSERT_EQ(root >> 1, root & 1, "root: stash decides as /proc/kallsyms");
		}
	}
	sysctl_set("/proc/sys/kernel/kptr_restrict", old_kptr, NULL, 0);
	sysctl_set("/proc/sys/kernel/perf_event_paranoid", old_paranoid, NULL, 0);
out:
	close(pfd);
	stash_umount();
}

/*
 * The gate, operation by operation, for uid 0 with one set of capabilities
 * at a time (DAC lets uid 0 in everywhere: only the gate decides), under
 * each kptr_restrict and perf_event_paranoid, with and without
 * delegate_readers.  The rule (Documentation/ABI/testing/bpfstash):
 *   raw    = kallsyms would show addresses (kptr_restrict 0 and
 *            perf_event_paranoid <= 1, or kptr_restrict <= 1 and CAP_SYSLOG)
 *   reader = raw and (delegate_readers, CAP_PERFMON or CAP_SYS_ADMIN)
 *   list, read: reader; stats: anyone; control (write): CAP_SYS_ADMIN;
 *   rmdir of a known name: reader or CAP_SYS_ADMIN.
 */
#define CAP(c) (1ULL << (c))

struct gate_case {
	const char *hex;
	__u64 caps;
};

enum { OP_LIST, OP_READ, OP_STATS, OP_CONTROL, OP_RMDIR, NR_OPS };
static const char *const op_names[NR_OPS] = { "list", "read", "stats", "control", "rmdir" };

static int gate_try(void *arg)
{
	struct gate_case *c = arg;
	char path[256], buf[64];
	int got = 0, fd;
	DIR *d;

	set_caps_only(c->caps);
	d = opendir(STASH_ROOT);
	if (d) {
		got |= (readdir(d) != NULL) << OP_LIST;
		closedir(d);
	}
	snprintf(path, sizeof(path), STASH_ROOT "/%s/meta", c->hex);
	fd = open(path, O_RDONLY);
	if (fd >= 0) {
		got |= (read(fd, buf, sizeof(buf)) > 0) << OP_READ;
		close(fd);
	}
	fd = open(STASH_ROOT "/stats", O_RDONLY);
	if (fd >= 0) {
		got |= (read(fd, buf, sizeof(buf)) > 0) << OP_STATS;
		close(fd);
	}
	fd = open(STASH_ROOT "/control", O_WRONLY);
	if (fd >= 0) {
		got |= 1 << OP_CONTROL;
		close(fd);
	}
	snprintf(path, sizeof(path), STASH_ROOT "/%s", c->hex);
	got |= !rmdir(path) << OP_RMDIR;
	return got;
}

/* @fn's result in a child that stays uid 0 (it may drop capabilities). */
static int run_as_root_child(int (*fn)(void *), void *arg)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (!pid)
		_exit(fn(arg));
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

static void test_gate_matrix(void)
{
	static const struct { const char *name; __u64 caps; } sets[] = {
		{ "all capabilities", ~0ULL >> 23 },	/* 0..40 */
		{ "CAP_PERFMON", CAP(38) },
		{ "CAP_SYS_ADMIN", CAP(21) },
		{ "CAP_SYSLOG", CAP(34) },
		{ "CAP_SYSLOG+CAP_PERFMON", CAP(34) | CAP(38) },
		{ "none", 0 },
	};
	char old_kptr[16], old_paranoid[16], hex[41], what[160];
	int kptr, paranoid, delegate, op, cells = 0, allowed = 0;
	size_t i;

	if (!ASSERT_OK(stash_mount(NULL), "mount"))
		return;
	sysctl_set("/proc/sys/kernel/kptr_restrict", "0", old_kptr, sizeof(old_kptr));
	sysctl_set("/proc/sys/kernel/perf_event_paranoid", "2", old_paranoid, sizeof(old_paranoid));
	for (delegate = 0; delegate <= 1; delegate++) {
		ASSERT_OK(stash_remount(delegate ? "delegate_readers" : "nodelegate_readers"),
			  "remount");
		for (kptr = 0; kptr <= 2; kptr++) {
			for (paranoid = 1; paranoid <= 2; paranoid++) {
				for (i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
					__u64 caps = sets[i].caps;
					bool syslog = caps & CAP(34), admin = caps & CAP(21);
					bool perfmon = caps & CAP(38), raw, reader;
					struct gate_case c = { hex, caps };
					struct bpf_prog_info info = {};
					__u32 len = sizeof(info);
					int pfd, got, want;
					char v[8];

					/* A fresh entry for each case: rmdir may delete it. */
					sysctl_set("/proc/sys/kernel/kptr_restrict", "0", NULL, 0);
					pfd = load_raw_prog("stash_gate");
					bpf_obj_get_info_by_fd(pfd, &info, &len);
					close(pfd);
					if (!ASSERT_OK(stash_find_prog(info.id, hex), "entry"))
						goto out;
					snprintf(v, sizeof(v), "%d", kptr);
					sysctl_set("/proc/sys/kernel/kptr_restrict", v, NULL, 0);
					snprintf(v, sizeof(v), "%d", paranoid);
					sysctl_set("/proc/sys/kernel/perf_event_paranoid", v, NULL, 0);

					raw = (kptr == 0 && paranoid <= 1) || (kptr <= 1 && syslog);
					reader = raw && (delegate || perfmon || admin);
					want = reader << OP_LIST | reader << OP_READ | 1 << OP_STATS |
					       admin << OP_CONTROL | (reader || admin) << OP_RMDIR;
					got = run_as_root_child(gate_try, &c);
					for (op = 0; op < NR_OPS; op++) {
						snprintf(what, sizeof(what),
							 "%s, kptr_restrict=%d, perf_event_paranoid=%d, %s: %s",
							 sets[i].name, kptr, paranoid,
							 delegate ? "delegate_readers" : "no delegation",
							 op_names[op]);
						ASSERT_EQ(got >> op & 1, want >> op & 1, what);
						cells++;
						allowed += got >> op & 1;
					}
				}
			}
		}
	}
	test__note("%d cells (6 capability sets x kptr_restrict 0-2 x perf_event_paranoid 1-2 x delegation x 5 operations), %d allowed",
		   cells, allowed);
out:
	sysctl_set("/proc/sys/kernel/kptr_restrict", old_kptr, NULL, 0);
	sysctl_set("/proc/sys/kernel/perf_event_paranoid", old_paranoid, NULL, 0);
	stash_umount();
}

static int bpf_prog_lines_in_kallsyms(void)
{
	char line[512];
	int n = 0;
	FILE *f = fopen("/proc/kallsyms", "r");

	/* JITed BPF functions are listed as "<addr> t bpf_prog_<tag>_<name>\t[bpf]". */
	while (f && fgets(line, sizeof(line), f))
		n += strstr(line, "[bpf]") != NULL;
	if (f)
		fclose(f);
	return n;
}

static void count_mmap3(const struct perf_event_header *h, void *ctx)
{
	if (h->type == PERF_RECORD_MMAP3)
		(*(int *)ctx)++;
}

/* Hardening hides BPF symbols from kallsyms: the stash keeps nothing of them. */
static void check_jit_harden(const char *level)
{
	struct perf_event_attr attr;
	struct ring ring;
	char old[16], hex[41];
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	long long skipped;
	int pfd, records;

	if (!ASSERT_OK(stash_mount(NULL), "mount"))
		return;
	/*
	 * libbpf's first bpf_prog_load() in a process loads programs of its
	 * own to probe the kernel (program names, memcg accounting): load
	 * once before hardening and before the ring, so that only the
	 * test's load is counted below (run alone, there were 3).
	 */
	pfd = load_raw_prog("stash_harden");
	ASSERT_GE(pfd, 0, "a load before hardening");
	close(pfd);
	ring_attr_init(&attr);
	attr.mmap3 = 1;
	ASSERT_OK(ring_open(&attr, 0, -1, 16, &ring), "mmap3 event");
	skipped = stash_stat("skipped_hardened");
	sysctl_set("/proc/sys/net/core/bpf_jit_harden", level, old, sizeof(old));
	pfd = load_raw_prog("stash_harden");
	ASSERT_GE(pfd, 0, "the load itself succeeds");
	bpf_obj_get_info_by_fd(pfd, &info, &len);
	ASSERT_EQ(bpf_prog_lines_in_kallsyms(), 0, "kallsyms shows no BPF symbol");
	ASSERT_ERR(stash_find_prog(info.id, hex), "no entry");
	ASSERT_EQ(stash_stat("skipped_hardened") - skipped, 1, "counted as skipped_hardened");
	records = 0;
	ring_drain(&ring, count_mmap3, &records);
	ASSERT_EQ(records, 0, "no MMAP3 address or hash");
	close(pfd);
	sysctl_set("/proc/sys/net/core/bpf_jit_harden", old, NULL, 0);
	/* Back to normal: stored again. */
	pfd = load_raw_prog("stash_harden");
	info = (struct bpf_prog_info){};
	len = sizeof(info);
	bpf_obj_get_info_by_fd(pfd, &info, &len);
	ASSERT_OK(stash_find_prog(info.id, hex), "stored once hardening is off");
	close(pfd);
	ring_close(&ring);
	stash_umount();
}

static void test_jit_harden_1(void)
{
	check_jit_harden("1");
}

static void test_jit_harden_2(void)
{
	check_jit_harden("2");
}

/* Entries of trampolines (images named bpf_trampoline_*), by reading every meta and funcs. */
static int trampoline_entries(void)
{
	DIR *dir = opendir(STASH_ROOT);
	struct dirent *d;
	int n = 0;

	while (dir && (d = readdir(dir))) {
		struct bpfstash_meta *m;
		void *meta = NULL, *funcs = NULL;
		size_t size, fsize;

		if (strlen(d->d_name) != 40 || stash_read(d->d_name, "meta", &meta, &size))
			continue;
		m = meta;
		if (size >= sizeof(*m) && m->content.image_kind &&
		    !stash_read(d->d_name, "funcs", &funcs, &fsize) &&
		    fsize > sizeof(struct bpfstash_func) + 15 &&
		    !strncmp((char *)funcs + sizeof(struct bpfstash_func), "bpf_trampoline_", 15))
			n++;
		free(meta);
		free(funcs);
	}
	if (dir)
		closedir(dir);
	return n;
}

/*
 * A trampoline made while hardening hides BPF symbols is not stored
 * either, nor announced in MMAP3; the attach is unaffected.
 */
static void test_jit_harden_trampoline(void)
{
	struct perf_event_attr attr;
	struct bpf_object *obj;
	struct bpf_link *link;
	struct ring ring;
	char old[16];
	long long skipped;
	int records, before;

	if (!ASSERT_OK(stash_mount(NULL), "mount"))
		return;
	obj = bpf_object__open_file(test_prog_path("kinds"), NULL);
	if (!ASSERT_PTR_OK(obj, "open kinds.bpf.o") || !ASSERT_OK(bpf_object__load(obj), "load"))
		goto out;
	ring_attr_init(&attr);
	attr.mmap3 = 1;
	ASSERT_OK(ring_open(&attr, 0, -1, 16, &ring), "mmap3 event");
	before = trampoline_entries();
	skipped = stash_stat("skipped_hardened");
	sysctl_set("/proc/sys/net/core/bpf_jit_harden", "2", old, sizeof(old));
	link = bpf_program__attach(bpf_object__find_program_by_name(obj, "kinds_fentry"));
	ASSERT_PTR_OK(link, "the attach succeeds");
	ASSERT_EQ(stash_stat("skipped_hardened") - skipped, 1, "counted as skipped_hardened");
	ASSERT_EQ(trampoline_entries(), before, "no trampoline entry");
	records = 0;
	ring_drain(&ring, count_mmap3, &records);
	ASSERT_EQ(records, 0, "no MMAP3 address or hash");
	sysctl_set("/proc/sys/net/core/bpf_jit_harden", old, NULL, 0);
	bpf_link__destroy(link);
	ring_close(&ring);
out:
	bpf_object__close(obj);
	stash_umount();
}

static int set_lockdown(const char *level)
{
	mkdir("/sys/kernel/security", 0755);
	mount("securityfs", "/sys/kernel/security", "securityfs", 0, NULL);
	return sysctl_set("/sys/kernel/security/lockdown", level, NULL, 0);
}

static void test_lockdown_integrity(void)
{
	char hex[41];
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	int pfd;

	int err = set_lockdown("integrity");

	if (err == -ENOENT) {
		test__skip("no lockdown LSM in this kernel");
		return;
	}
	if (!ASSERT_OK(err, "lockdown=integrity"))
		return;
	if (!ASSERT_OK(stash_mount(NULL), "mount under integrity"))
		return;
	pfd = load_raw_prog("stash_lockdown");
	bpf_obj_get_info_by_fd(pfd, &info, &len);
	if (ASSERT_OK(stash_find_prog(info.id, hex), "entry"))
		ASSERT_EQ(stash_readable(hex), 1, "readable under integrity");
	close(pfd);
	stash_umount();
}

static void test_lockdown_confidentiality(void)
{
	char hex[41];
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	int pfd;

	if (access("/sys/kernel/security/lockdown", F_OK)) {
		test__skip("no lockdown LSM in this kernel");
		return;
	}
	if (!ASSERT_OK(stash_mount(NULL), "mount before lockdown"))
		return;
	pfd = load_raw_prog("stash_lockdown");
	bpf_obj_get_info_by_fd(pfd, &info, &len);
	if (!ASSERT_OK(stash_find_prog(info.id, hex), "entry"))
		goto out;
	/* Irreversible for this boot. */
	if (!ASSERT_OK(set_lockdown("confidentiality"), "lockdown=confidentiality"))
		goto out;
	ASSERT_EQ(stash_readable(hex), 0, "an existing mount can no longer be read");
	{
		char path[256], buf[64];
		int fd;

		snprintf(path, sizeof(path), STASH_ROOT "/%s/meta", hex);
		ASSERT_ERRNO(open(path, O_RDONLY), EPERM, "open refused with EPERM");
		/* What stops and trims a store stays reachable. */
		fd = open(STASH_ROOT "/stats", O_RDONLY);
		ASSERT_GE(fd, 0, "stats opens under lockdown");
		if (fd >= 0) {
			ASSERT_GT(read(fd, buf, sizeof(buf)), 0, "and reads");
			close(fd);
		}
		ASSERT_EQ(stash_control("on"), -EPERM, "control: on refused under lockdown");
		close(pfd);
		pfd = -1;
		snprintf(path, sizeof(path), STASH_ROOT "/%s", hex);
		ASSERT_OK(rmdir(path), "rmdir of a known entry under lockdown");
		ASSERT_OK(stash_control("off"), "control: off stops the store under lockdown");
		ASSERT_EQ(stash_stat("bytes"), 0, "and drops every entry");
	}
	stash_umount();
	ASSERT_ERRNO(mount("none", STASH_ROOT, "bpfstash", 0, NULL), EPERM,
		     "a new mount refused");
out:
	if (pfd >= 0)
		close(pfd);
	stash_umount();
}

static const struct test tests[] = {
	{ "kallsyms_matrix", test_kallsyms_matrix, true },
	{ "gate_matrix", test_gate_matrix, true },
	{ "jit_harden_1", test_jit_harden_1, true },
	{ "jit_harden_2", test_jit_harden_2, true },
	{ "jit_harden_trampoline", test_jit_harden_trampoline, true },
	{ "lockdown_integrity", test_lockdown_integrity, true },
	/* Must stay last: lockdown cannot be lowered again. */
	{ "lockdown_confidentiality", test_lockdown_confidentiality, true },
	{}
};

int main(int argc, char **argv)
{
	return test_main("security", tests, argc, argv);
}
