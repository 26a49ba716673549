// SPDX-License-Identifier: GPL-2.0-only
/* The smallest useful program: one function, BTF and line info. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int stash_tiny(struct xdp_md *ctx)
{
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
