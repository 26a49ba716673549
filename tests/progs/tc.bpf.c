// SPDX-License-Identifier: GPL-2.0-only
/* A tc classifier: its last reference can be dropped from an RCU callback. */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>

SEC("tc")
int stash_tc(struct __sk_buff *skb)
{
	return skb->len > 1 ? TC_ACT_OK : TC_ACT_UNSPEC;
}

char LICENSE[] SEC("license") = "GPL";
