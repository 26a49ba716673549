// SPDX-License-Identifier: GPL-2.0-only
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/bpfstash.h>
#include <linux/capability.h>
#include <bpf/bpf.h>

#include "stashfs.h"

#define BPFSTASH_MAGIC 0x62707374

bool stash_mounted(void)
{
	struct statfs sfs;

	return !statfs(STASH_ROOT, &sfs) && sfs.f_type == BPFSTASH_MAGIC;
}

void stash_detach(void)
{
	while (stash_mounted())
		if (umount(STASH_ROOT))
			break;
}

int stash_control(const char *words)
{
	/* As the shell's "echo off > control" opens it. */
	int fd = open(STASH_ROOT "/control", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ssize_t n;
	int err;

	if (fd < 0)
		return -errno;
	n = write(fd, words, strlen(words));
	err = n < 0 ? -errno : 0;
	close(fd);
	return err;
}

int stash_control_read(char *buf, size_t size)
{
	int fd = open(STASH_ROOT "/control", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

void stash_umount(void)
{
	if (stash_mounted())
		stash_control("off");
	stash_detach();
}

int stash_mount(const char *opts)
{
	/*
	 * A store may run with no view (the boot parameter, a suite that
	 * unmounted without stopping it): mount it to stop it.
	 */
	if (!stash_mounted())
		mount("none", STASH_ROOT, "bpfstash", 0, NULL);
	stash_umount();
	return mount("none", STASH_ROOT, "bpfstash", 0, opts);
}

int stash_remount(const char *opts)
{
	return mount(NULL, STASH_ROOT, NULL, MS_REMOUNT, opts);
}

long long stash_stat(const char *key)
{
	char line[256], k[128];
	long long v, found = -1;
	FILE *f = fopen(STASH_ROOT "/stats", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%127s %lld", k, &v) == 2 && !strcmp(k, key))
			found = v;
	fclose(f);
	return found;
}

static bool is_entry_name(const char *s)
{
	size_t i;

	for (i = 0; i < 40; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return s[40] == '\0';
}

int stash_count(void)
{
	struct dirent *de;
	int n = 0;
	DIR *d = opendir(STASH_ROOT);

	if (!d)
		return -errno;
	while ((de = readdir(d)))
		n += is_entry_name(de->d_name);
	closedir(d);
	return n;
}

int stash_read(const char *hex, const char *file, void **buf, size_t *size)
{
	char path[256];
	size_t cap = 4096, len = 0;
	char *p = malloc(cap);
	ssize_t n;
	int fd, err;

	snprintf(path, sizeof(path), STASH_ROOT "/%s/%s", hex, file);
	fd = open(path, O_RDONLY);
	if (fd < 0 || !p) {
		err = fd < 0 ? -errno : -ENOMEM;
		if (fd >= 0)
			close(fd);
		free(p);
		return err;
	}
	while ((n = read(fd, p + len, cap - len)) > 0) {
		len += n;
		if (len == cap) {
			char *q = realloc(p, cap *= 2);

			if (!q) {
				free(p);
				close(fd);
				return -ENOMEM;
			}
			p = q;
		}
	}
	err = n < 0 ? -errno : 0;
	close(fd);
	if (err) {
		free(p);
		return err;
	}
	*buf = p;
	*size = len;
	return 0;
}

int stash_find_prog(__u32 prog_id, char hex[41])
{
	struct dirent *de;
	int err = -ENOENT;
	DIR *d = opendir(STASH_ROOT);

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		struct bpfstash_meta *m;
		size_t size;

		if (!is_entry_name(de->d_name))
			continue;
		if (stash_read(de->d_name, "meta", (void **)&m, &size))
			continue;
		if (size >= sizeof(*m) && m->prog_id == prog_id) {
			memcpy(hex, de->d_name, 41);
			err = 0;
		}
		free(m);
		if (!err)
			break;
	}
	closedir(d);
	return err;
}

int sysctl_set(const char *path, const char *val, char *old, size_t old_size)
{
	int fd = open(path, O_RDWR);
	ssize_t n;

	if (fd < 0)
		return -errno;
	if (old) {
		n = read(fd, old, old_size - 1);
		old[n > 0 ? n : 0] = '\0';
		if (n > 0 && old[n - 1] == '\n')
			old[n - 1] = '\0';
		lseek(fd, 0, SEEK_SET);
	}
	n = write(fd, val, strlen(val));
	close(fd);
	return n < 0 ? -errno : 0;
}

int run_unprivileged(int (*fn)(void *), void *arg)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		/* Changing every uid away from 0 clears all capabilities. */
		if (setgroups(0, NULL) || setresgid(1000, 1000, 1000) ||
		    setresuid(1000, 1000, 1000))
			_exit(100);
		/* Keep /proc/self ours (uid_map and friends). */
		prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
		_exit(fn(arg));
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

int load_raw_prog(const char *name)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};

	return bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, name, "GPL", insns, 2, NULL);
}

int load_straight_prog(const char *name, int n, int imm0)
{
	struct bpf_insn *insns = calloc(n, sizeof(*insns));
	int i, fd;

	if (!insns)
		return -1;
	insns[0] = (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 };
	for (i = 1; i < n - 1; i++)
		insns[i] = (struct bpf_insn){ .code = BPF_ALU64 | BPF_ADD | BPF_K,
					      .dst_reg = BPF_REG_0, .imm = imm0 + i };
	insns[n - 1] = (struct bpf_insn){ .code = BPF_JMP | BPF_EXIT };
	fd = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, name, "GPL", insns, n, NULL);
	free(insns);
	return fd;
}

int load_close_n(int n)
{
	int i, ok = 0;

	for (i = 0; i < n; i++) {
		int fd = load_raw_prog("stash_storm");

		if (fd >= 0) {
			ok++;
			close(fd);
		}
	}
	return ok;
}

void set_caps_only(__u64 keep)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = {};
	int cap;

	for (cap = 0; cap <= 63; cap++)
		if (!(keep & (1ULL << cap)))
			prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
	d[0].effective = d[0].permitted = d[0].inheritable = (__u32)keep;
	d[1].effective = d[1].permitted = d[1].inheritable = (__u32)(keep >> 32);
	if (syscall(SYS_capset, &h, d))
		_exit(120);
}
