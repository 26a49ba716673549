// SPDX-License-Identifier: GPL-2.0-only
/*
 * Programs of the kinds modern tools load, attached to kernel functions
 * through the kernel's own BTF (/sys/kernel/btf/vmlinux): fentry and fexit
 * on bpf_fentry_test1() (which BPF_PROG_TEST_RUN of a tracing program
 * calls), tp_btf on sched_switch, lsm on file_open, and a CO-RE read of
 * the current task, relocated by libbpf against the kernel's BTF.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

/* Only what is read; libbpf finds the offsets in the kernel's BTF. */
struct task_struct {
	int pid;
	int tgid;
} __attribute__((preserve_access_index));

__u64 calls, returns, work, last_tgid, switches, opens;

/* Enough work per call for a profile to land in it. */
static __attribute__((noinline)) __u64 kinds_mix(__u64 seed)
{
	__u64 acc = seed;
	int i;

	for (i = 0; i < 8192; i++)
		acc = acc * 6364136223846793005ULL + 1442695040888963407ULL + i;
	return acc;
}

SEC("fentry/bpf_fentry_test1")
int BPF_PROG(kinds_fentry, int a)
{
	struct task_struct *task = (void *)bpf_get_current_task();

	last_tgid = BPF_CORE_READ(task, tgid);
	work += kinds_mix(a + calls);
	calls++;
	return 0;
}

SEC("fexit/bpf_fentry_test1")
int BPF_PROG(kinds_fexit, int a, int ret)
{
	returns += ret == a + 1;
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(kinds_tp_btf, int preempt, struct task_struct *prev, struct task_struct *next)
{
	switches++;
	return 0;
}

SEC("lsm/file_open")
int BPF_PROG(kinds_lsm, void *file)
{
	opens++;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
