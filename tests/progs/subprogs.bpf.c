// SPDX-License-Identifier: GPL-2.0-only
/*
 * A small XDP program with several real subprograms (bpf-to-bpf calls), BTF
 * and line info: the standard fixture of the bpfstash tests.  It is meant
 * to be run hot with BPF_PROG_TEST_RUN, so it does a little arithmetic in
 * each function, and every function has distinct source lines.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define ROUNDS 16

static __attribute__((noinline)) __u32 stash_mix(__u32 h, __u32 v)
{
	h ^= v;
	h *= 0x01000193;
	h ^= h >> 15;
	return h;
}

static __attribute__((noinline)) __u32 stash_fold(__u32 a, __u32 b)
{
	__u32 r = a;
	int i;

	for (i = 0; i < ROUNDS; i++) {
		r = stash_mix(r, b + i);
		b = (b << 3) | (b >> 29);
	}
	return r;
}

static __attribute__((noinline)) __u32 stash_finish(__u32 h)
{
	h ^= h >> 16;
	h *= 0x85ebca6b;
	h ^= h >> 13;
	h *= 0xc2b2ae35;
	h ^= h >> 16;
	return h;
}

SEC("xdp")
int stash_subprogs(struct xdp_md *ctx)
{
	__u32 len = ctx->data_end - ctx->data;
	__u32 h = 0x811c9dc5;

	h = stash_fold(h, len);
	h = stash_fold(h, ctx->ingress_ifindex);
	h = stash_finish(h);
	return h == 0xdeadbeef ? XDP_DROP : XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
