// SPDX-License-Identifier: GPL-2.0-only
/*
 * Direct tail calls: the keys are constants, so the x86-64 JIT emits each
 * call as a patchable jump (emit_bpf_tail_call_direct()), which every
 * update of the prog array re-pokes while the program lives.
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u32);
} stash_jmp SEC(".maps");

SEC("tc")
int stash_tailcall(struct __sk_buff *skb)
{
	bpf_tail_call(skb, &stash_jmp, 0);
	bpf_tail_call(skb, &stash_jmp, 1);
	return TC_ACT_OK;
}

SEC("tc")
int stash_tail_target(struct __sk_buff *skb)
{
	return skb->len > 1 ? TC_ACT_SHOT : TC_ACT_UNSPEC;
}

char LICENSE[] SEC("license") = "GPL";
