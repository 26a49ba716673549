// SPDX-License-Identifier: GPL-2.0-only
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "capture.h"
#include "proginfo.h"

static union bpf_attr *capture_into;
static const char *capture_name;
static long (*real_syscall)(long, ...);

static void resolve_real(void)
{
	if (!real_syscall)
		real_syscall = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
}

long syscall(long nr, ...)
{
	unsigned long a[5];
	va_list ap;
	int i;

	va_start(ap, nr);
	for (i = 0; i < 5; i++)
		a[i] = va_arg(ap, unsigned long);
	va_end(ap);
	resolve_real();
	if (nr == __NR_bpf && a[0] == BPF_PROG_LOAD && capture_into && capture_name) {
		const union bpf_attr *attr = (const void *)a[1];

		if (!strncmp(attr->prog_name, capture_name, sizeof(attr->prog_name) - 1))
			memcpy(capture_into, attr,
			       a[2] < sizeof(*capture_into) ? a[2] : sizeof(*capture_into));
	}
	return real_syscall(nr, a[0], a[1], a[2], a[3], a[4]);
}

int capture_prog_load(const char *name, struct captured_prog *cp)
{
	struct bpf_program *prog;
	int err;

	memset(cp, 0, sizeof(*cp));
	cp->obj = bpf_object__open_file(test_prog_path(name), NULL);
	if (!cp->obj)
		return -errno;
	prog = bpf_object__next_program(cp->obj, NULL);
	if (!prog)
		return -ENOENT;
	capture_into = &cp->attr;
	capture_name = bpf_program__name(prog);
	err = bpf_object__load(cp->obj);
	capture_into = NULL;
	capture_name = NULL;
	if (err)
		return err;
	return cp->attr.insn_cnt ? 0 : -ENOENT;
}

int capture_prog_reload(const struct captured_prog *cp)
{
	union bpf_attr attr = cp->attr;

	resolve_real();
	return real_syscall(__NR_bpf, BPF_PROG_LOAD, &attr, sizeof(attr));
}

void capture_prog_close(struct captured_prog *cp)
{
	bpf_object__close(cp->obj);
	memset(cp, 0, sizeof(*cp));
}
