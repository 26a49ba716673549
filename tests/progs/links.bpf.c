// SPDX-License-Identifier: GPL-2.0-only
/*
 * Programs attached by the kinds of BPF link whose target the stash
 * records (kinds.link_targets): a kprobe and a kretprobe (perf_event
 * links), a raw tracepoint and a tracepoint.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

__u64 hits;

SEC("kprobe/do_nanosleep")
int links_kprobe(void *ctx)
{
	hits++;
	return 0;
}

SEC("kretprobe/do_nanosleep")
int links_kretprobe(void *ctx)
{
	hits++;
	return 0;
}

SEC("raw_tp/sched_switch")
int links_raw_tp(void *ctx)
{
	hits++;
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_nanosleep")
int links_tp(void *ctx)
{
	hits++;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
