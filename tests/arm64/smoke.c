// SPDX-License-Identifier: GPL-2.0-only
/*
 * The arm64 guest's PID 1 until it has a userland of its own: a static
 * program (raw syscalls, no libbpf) that checks the store on the arm64
 * kernel against bpf() itself, writes its exit status into the results
 * share (scripts/vm-run -k arm64), and powers off.  The boot before it has
 * run the store's KUnit tests.  It prints one "PASS arm64.<check>" or
 * "FAIL arm64.<check>: why" line per check, then "arm64: done N failed".
 *
 * Checks: the filesystem mounts; a program loaded with bpf() gets exactly
 * one entry, named in the index file; its meta says EM_AARCH64, its id and
 * tag; its jited file is, byte for byte, the image BPF_OBJ_GET_INFO_BY_FD
 * returns (no poke site in a program without calls or tail calls), at the
 * address jited_ksyms gives; the index file's range is that address and
 * length; closing the program marks the entry unloaded, with a time.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/bpf.h>
#include <linux/bpfstash.h>

#define ROOT "/sys/fs/bpfstash"
#ifndef EM_AARCH64
#define EM_AARCH64 183
#endif

static int failed;

static void check(int ok, const char *name, const char *fmt, ...)
{
	va_list ap;

	if (ok) {
		printf("PASS arm64.%s\n", name);
		return;
	}
	failed++;
	printf("FAIL arm64.%s: ", name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

static long sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

static void *read_all(const char *path, size_t *size)
{
	size_t cap = 4096, len = 0;
	char *p = malloc(cap);
	ssize_t n;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || !p) {
		free(p);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	while ((n = read(fd, p + len, cap - len)) > 0) {
		len += n;
		if (len == cap)
			p = realloc(p, cap *= 2);
	}
	close(fd);
	*size = len;
	return p;
}

/* The entry whose meta names program @id: its hex name into @hex. */
static int find_entry(uint32_t id, char hex[41], int *count)
{
	struct dirent *de;
	int found = 0;
	DIR *d = opendir(ROOT);

	*count = 0;
	while (d && (de = readdir(d))) {
		char path[128];
		struct bpfstash_meta *m;
		size_t size;

		if (strlen(de->d_name) != 40)
			continue;
		snprintf(path, sizeof(path), ROOT "/%s/meta", de->d_name);
		m = read_all(path, &size);
		if (m && size >= sizeof(*m) && m->prog_id == id) {
			memcpy(hex, de->d_name, 41);
			found++;
		}
		free(m);
		++*count;
	}
	if (d)
		closedir(d);
	return found;
}

static void test_store(void)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	static char license[] = "GPL";
	uint8_t image[4096];
	uint64_t ksym = 0;
	uint32_t jlen = 0;
	struct bpf_prog_info info = {};
	union bpf_attr attr = {};
	struct bpfstash_meta *m;
	char hex[41] = "", path[128];
	size_t size;
	void *buf;
	int fd, n, count;

	attr.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	attr.insns = (uintptr_t)insns;
	attr.insn_cnt = 2;
	attr.license = (uintptr_t)license;
	strcpy(attr.prog_name, "arm64_smoke");
	fd = sys_bpf(BPF_PROG_LOAD, &attr);
	check(fd >= 0, "prog_load", "bpf(BPF_PROG_LOAD): %s", strerror(errno));
	if (fd < 0)
		return;

	info.jited_prog_len = sizeof(image);
	info.jited_prog_insns = (uintptr_t)image;
	info.nr_jited_ksyms = 1;
	info.jited_ksyms = (uintptr_t)&ksym;
	info.nr_jited_func_lens = 1;
	info.jited_func_lens = (uintptr_t)&jlen;
	memset(&attr, 0, sizeof(attr));
	attr.info.bpf_fd = fd;
	attr.info.info_len = sizeof(info);
	attr.info.info = (uintptr_t)&info;
	check(!sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &attr), "prog_info", "%s", strerror(errno));

	n = find_entry(info.id, hex, &count);
	check(n == 1, "one_entry", "%d entries name program %u (of %d)", n, info.id, count);
	if (n != 1)
		goto out;

	snprintf(path, sizeof(path), ROOT "/%s/meta", hex);
	m = read_all(path, &size);
	if (m) {
		check(m->content.machine == EM_AARCH64, "meta_machine", "machine %u",
		      m->content.machine);
		check(!memcmp(m->content.tag, info.tag, sizeof(info.tag)), "meta_tag", "tag differs");
		check(m->flags & BPFSTASH_META_LOADED, "meta_loaded", "flags %#x", m->flags);
		check(!strcmp(m->content.name, "arm64_smoke"), "meta_name", "name %.16s",
		      m->content.name);
	}
	free(m);

	snprintf(path, sizeof(path), ROOT "/%s/jited", hex);
	buf = read_all(path, &size);
	check(buf && size == info.jited_prog_len && !memcmp(buf, image, size), "jited_equal",
	      "jited %zu bytes, bpf() says %u, %s", buf ? size : 0, info.jited_prog_len,
	      buf && size == info.jited_prog_len ? "bytes differ" : "sizes differ");
	free(buf);

	snprintf(path, sizeof(path), ROOT "/%s/funcs", hex);
	buf = read_all(path, &size);
	if (buf && size >= sizeof(struct bpfstash_func)) {
		struct bpfstash_func *f = buf;

		check(f->addr == ksym && f->len == jlen, "funcs_range",
		      "funcs %#llx+%u, bpf() %#llx+%u", (unsigned long long)f->addr, f->len,
		      (unsigned long long)ksym, jlen);
	}
	free(buf);

	buf = read_all(ROOT "/index", &size);
	if (buf && size >= sizeof(struct bpfstash_index_header)) {
		struct bpfstash_index_header *h = buf;
		uint8_t *p = buf;
		uint32_t i, hits = 0;

		check(h->magic == BPFSTASH_INDEX_MAGIC && h->size == size, "index_header",
		      "magic %#x size %llu of %zu", h->magic, (unsigned long long)h->size, size);
		for (i = 0; i < h->nr_entries && h->size == size; i++) {
			struct bpfstash_index_entry *e =
				(void *)(p + h->header_size + (size_t)i * h->entry_size);
			struct bpfstash_index_range *r =
				(void *)(p + h->header_size + (size_t)h->nr_entries * h->entry_size +
					 (size_t)e->first_range * h->range_size);

			if (e->prog_id == info.id && r->addr == ksym && r->len == jlen)
				hits++;
		}
		check(hits == 1, "index_range", "%u index entries with the program's range", hits);
	} else {
		check(0, "index_header", "index: %s", strerror(errno));
	}
	free(buf);
out:
	close(fd);
	if (hex[0]) {
		/* The unload is seen after an RCU grace period: wait a little. */
		for (n = 0; n < 50; n++) {
			snprintf(path, sizeof(path), ROOT "/%s/meta", hex);
			m = read_all(path, &size);
			if (m && !(m->flags & BPFSTASH_META_LOADED))
				break;
			free(m);
			m = NULL;
			usleep(100000);
		}
		check(m && m->unload_time >= m->load_time && m->unload_time, "unloaded",
		      "still loaded after 5 s");
		free(m);
	}
}

int main(void)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	mount("proc", "/proc", "proc", 0, NULL);
	mount("sys", "/sys", "sysfs", 0, NULL);
	check(!mount("none", ROOT, "bpfstash", 0, NULL), "mount", "mount -t bpfstash: %s",
	      strerror(errno));
	test_store();
	printf("arm64: done %d failed\n", failed);
	/* The exit status, where scripts/vm-run looks for it. */
	if (!mount("tmp", "/tmp", "tmpfs", 0, NULL) && !mkdir("/tmp/results", 0755) &&
	    !mount("results", "/tmp/results", "9p", 0, "trans=virtio,version=9p2000.L")) {
		FILE *f = fopen("/tmp/results/rc", "w");

		if (f) {
			fprintf(f, "%d\n", failed != 0);
			fclose(f);
		}
		umount("/tmp/results");
	}
	sync();
	reboot(RB_POWER_OFF);
	return failed != 0;
}
