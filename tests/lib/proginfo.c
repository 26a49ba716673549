// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proginfo.h"

int prog_info_full_get(int prog_fd, struct prog_info_full *pi)
{
	struct bpf_prog_info *info = &pi->info;
	__u32 len = sizeof(*info);
	struct bpf_prog_info sizes = {};
	int err;

	memset(pi, 0, sizeof(*pi));
	err = bpf_obj_get_info_by_fd(prog_fd, &sizes, &len);
	if (err)
		return err;

	*info = (struct bpf_prog_info){
		.jited_prog_len = sizes.jited_prog_len,
		.nr_jited_ksyms = sizes.nr_jited_ksyms,
		.nr_jited_func_lens = sizes.nr_jited_func_lens,
		.nr_func_info = sizes.nr_func_info,
		.func_info_rec_size = sizes.func_info_rec_size,
		.nr_line_info = sizes.nr_line_info,
		.line_info_rec_size = sizes.line_info_rec_size,
		.nr_jited_line_info = sizes.nr_jited_line_info,
		.jited_line_info_rec_size = sizeof(__u64),
	};
	pi->jited = calloc(1, sizes.jited_prog_len + 1);
	pi->ksyms = calloc(sizes.nr_jited_ksyms + 1, sizeof(__u64));
	pi->func_lens = calloc(sizes.nr_jited_func_lens + 1, sizeof(__u32));
	pi->func_info = calloc(sizes.nr_func_info + 1, sizes.func_info_rec_size ?: 8);
	pi->line_info = calloc(sizes.nr_line_info + 1, sizes.line_info_rec_size ?: 16);
	pi->jited_line_info = calloc(sizes.nr_jited_line_info + 1, sizeof(__u64));
	if (!pi->jited || !pi->ksyms || !pi->func_lens || !pi->func_info ||
	    !pi->line_info || !pi->jited_line_info) {
		prog_info_full_free(pi);
		errno = ENOMEM;
		return -ENOMEM;
	}
	info->jited_prog_insns = (__u64)(unsigned long)pi->jited;
	info->jited_ksyms = (__u64)(unsigned long)pi->ksyms;
	info->jited_func_lens = (__u64)(unsigned long)pi->func_lens;
	info->func_info = (__u64)(unsigned long)pi->func_info;
	info->line_info = (__u64)(unsigned long)pi->line_info;
	info->jited_line_info = (__u64)(unsigned long)pi->jited_line_info;
	len = sizeof(*info);
	err = bpf_obj_get_info_by_fd(prog_fd, info, &len);
	if (err) {
		prog_info_full_free(pi);
		return err;
	}
	return 0;
}

void prog_info_full_free(struct prog_info_full *pi)
{
	free(pi->jited);
	free(pi->ksyms);
	free(pi->func_lens);
	free(pi->func_info);
	free(pi->line_info);
	free(pi->jited_line_info);
	memset(pi, 0, sizeof(*pi));
}

const char *test_prog_path(const char *name)
{
	static char path[PATH_MAX];
	const char *top = getenv("BPFSTASH_TOP");

	snprintf(path, sizeof(path), "%s/build/tests/progs/%s.bpf.o",
		 top ? top : ".", name);
	return path;
}

struct bpf_object *test_prog_load(const char *name, int *prog_fd)
{
	struct bpf_program *prog;
	struct bpf_object *obj;
	int err;

	obj = bpf_object__open_file(test_prog_path(name), NULL);
	if (!obj)
		return NULL;
	err = bpf_object__load(obj);
	if (err) {
		bpf_object__close(obj);
		errno = -err;
		return NULL;
	}
	prog = bpf_object__next_program(obj, NULL);
	if (!prog) {
		bpf_object__close(obj);
		errno = ENOENT;
		return NULL;
	}
	*prog_fd = bpf_program__fd(prog);
	return obj;
}

__u64 kallsyms_addr(const char *name)
{
	char line[512], sym[256];
	unsigned long long addr;
	FILE *f = fopen("/proc/kallsyms", "r");
	__u64 found = 0;

	while (f && !found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %*s %255s", &addr, sym) == 2 && !strcmp(sym, name))
			found = addr;
	if (f)
		fclose(f);
	return found;
}
