// SPDX-License-Identifier: GPL-2.0
/*
 * Programs for the bpfstash test (prog_tests/bpfstash.c): one without
 * subprograms and one with two, each JITed as a function of its own and
 * named in the program's BTF.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char _license[] SEC("license") = "GPL";

static __noinline __u32 stash_mix(__u32 h, __u32 v)
{
	h ^= v;
	h *= 0x01000193;
	return h ^ (h >> 15);
}

static __noinline __u32 stash_fold(__u32 h, __u32 v)
{
	int i;

	for (i = 0; i < 4; i++)
		h = stash_mix(h, v + i);
	return h;
}

SEC("xdp")
int stash_subprogs(struct xdp_md *ctx)
{
	__u32 h = stash_fold(0x811c9dc5, ctx->data_end - ctx->data);

	return h == 0xdeadbeef ? XDP_DROP : XDP_PASS;
}

SEC("xdp")
int stash_tiny(struct xdp_md *ctx)
{
	return XDP_PASS;
}
