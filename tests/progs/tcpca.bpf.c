// SPDX-License-Identifier: GPL-2.0-only
/*
 * The smallest TCP congestion control the kernel registers (ssthresh,
 * cong_avoid, undo_cwnd), as a struct_ops map: registering it gives each
 * member a trampoline, which calls the member's program.  It is
 * registered and unregistered, never chosen by a socket.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

struct sock;

/* Only the members set; libbpf finds the rest in the kernel's BTF. */
struct tcp_congestion_ops {
	__u32 (*ssthresh)(struct sock *sk);
	void (*cong_avoid)(struct sock *sk, __u32 ack, __u32 acked);
	__u32 (*undo_cwnd)(struct sock *sk);
	char name[16];
};

SEC("struct_ops/stash_ssthresh")
__u32 BPF_PROG(stash_ssthresh, struct sock *sk)
{
	return 10;
}

SEC("struct_ops/stash_cong_avoid")
void BPF_PROG(stash_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
}

SEC("struct_ops/stash_undo_cwnd")
__u32 BPF_PROG(stash_undo_cwnd, struct sock *sk)
{
	return 10;
}

SEC(".struct_ops")
struct tcp_congestion_ops stash_ca = {
	.ssthresh	= (void *)stash_ssthresh,
	.cong_avoid	= (void *)stash_cong_avoid,
	.undo_cwnd	= (void *)stash_undo_cwnd,
	.name		= "bpfstash_ca",
};

char LICENSE[] SEC("license") = "GPL";
