// SPDX-License-Identifier: GPL-2.0-only
/*
 * perf_abi: PERF_RECORD_MMAP3 and perf_event_attr::mmap3 take no number
 * that mainline has assigned or queued, and every copy of them agrees.
 *
 * Built three times by tests/abi/check.sh, against the kernel tree's
 * include/uapi (with the series applied), against perf's copy in
 * tools/include/uapi, and with libbpfstash's mirror (-DLIBBPFSTASH), and
 * prints "<record type> <bit>" where bit is the attr bit's position in
 * declaration order (the first bit-field is 0), which is what mainline's
 * assignments below count in, whatever the byte order.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#ifdef LIBBPFSTASH
#include "internal.h"
#else
#include <linux/perf_event.h>
#endif

/*
 * Mainline's record types and attr bits, as of 2026-12.  0-21 and 0-37
 * are 6.12's (include/uapi/linux/perf_event.h there); the deferred user
 * callchain series ("perf: Support deferred user unwind", Josh Poimboeuf,
 * Steven Rostedt and Namhyung Kim, linux-perf-users and tip perf/core,
 * 2025-11, merged for 6.19) took record type 22 and the two bits after
 * sigtrap.  Extend both tables when mainline assigns more.
 */
static const struct {
	unsigned int nr;
	const char *name;
} mainline_types[] = {
	{ 0, "(none: 0 is never a record type)" },
	{ 1, "PERF_RECORD_MMAP" }, { 2, "PERF_RECORD_LOST" }, { 3, "PERF_RECORD_COMM" },
	{ 4, "PERF_RECORD_EXIT" }, { 5, "PERF_RECORD_THROTTLE" },
	{ 6, "PERF_RECORD_UNTHROTTLE" }, { 7, "PERF_RECORD_FORK" },
	{ 8, "PERF_RECORD_READ" }, { 9, "PERF_RECORD_SAMPLE" }, { 10, "PERF_RECORD_MMAP2" },
	{ 11, "PERF_RECORD_AUX" }, { 12, "PERF_RECORD_ITRACE_START" },
	{ 13, "PERF_RECORD_LOST_SAMPLES" }, { 14, "PERF_RECORD_SWITCH" },
	{ 15, "PERF_RECORD_SWITCH_CPU_WIDE" }, { 16, "PERF_RECORD_NAMESPACES" },
	{ 17, "PERF_RECORD_KSYMBOL" }, { 18, "PERF_RECORD_BPF_EVENT" },
	{ 19, "PERF_RECORD_CGROUP" }, { 20, "PERF_RECORD_TEXT_POKE" },
	{ 21, "PERF_RECORD_AUX_OUTPUT_HW_ID" },
	{ 22, "PERF_RECORD_CALLCHAIN_DEFERRED (6.19)" },
}, mainline_bits[] = {
	{ 0, "disabled" }, { 1, "inherit" }, { 2, "pinned" }, { 3, "exclusive" },
	{ 4, "exclude_user" }, { 5, "exclude_kernel" }, { 6, "exclude_hv" },
	{ 7, "exclude_idle" }, { 8, "mmap" }, { 9, "comm" }, { 10, "freq" },
	{ 11, "inherit_stat" }, { 12, "enable_on_exec" }, { 13, "task" },
	{ 14, "watermark" }, { 15, "precise_ip (first bit)" }, { 16, "precise_ip (second bit)" },
	{ 17, "mmap_data" }, { 18, "sample_id_all" }, { 19, "exclude_host" },
	{ 20, "exclude_guest" }, { 21, "exclude_callchain_kernel" },
	{ 22, "exclude_callchain_user" }, { 23, "mmap2" }, { 24, "comm_exec" },
	{ 25, "use_clockid" }, { 26, "context_switch" }, { 27, "write_backward" },
	{ 28, "namespaces" }, { 29, "ksymbol" }, { 30, "bpf_event" }, { 31, "aux_output" },
	{ 32, "cgroup" }, { 33, "text_poke" }, { 34, "build_id" }, { 35, "inherit_thread" },
	{ 36, "remove_on_exec" }, { 37, "sigtrap" },
	{ 38, "defer_callchain (6.19)" }, { 39, "defer_output (6.19)" },
};

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define PERF_USER_TYPE_START	64	/* perf's own records (tools/lib/perf) */

int main(void)
{
	unsigned char attr[256] = { 0 };
	uint64_t word;
	unsigned int type, bit = 64, i;
	int bad = 0;

#ifdef LIBBPFSTASH
	type = BST_PERF_RECORD_MMAP3;
	bst_attr_set_mmap3((struct perf_event_attr *)attr, 1);
	memcpy(&word, attr + BST_ATTR_FLAGS_OFF, sizeof(word));
#else
	struct perf_event_attr *a = (struct perf_event_attr *)attr;

	_Static_assert(sizeof(*a) <= sizeof(attr), "attr");
	type = PERF_RECORD_MMAP3;
	a->mmap3 = 1;
	memcpy(&word, attr + offsetof(struct perf_event_attr, read_format) + 8, sizeof(word));
#endif
	for (i = 0; i < 64; i++) {
		if (!(word >> i & 1))
			continue;
		if (bit != 64) {
			fprintf(stderr, "perf_abi: mmap3 sets more than one bit\n");
			return 1;
		}
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		bit = i;
#else
		bit = 63 - i;
#endif
	}
	if (bit == 64 || memcmp(attr, (unsigned char[40]){ 0 }, 40) ||
	    memcmp(attr + 48, (unsigned char[208]){ 0 }, 208)) {
		fprintf(stderr, "perf_abi: mmap3 is not one bit of the flags word\n");
		return 1;
	}
	for (i = 0; i < ARRAY_LEN(mainline_types); i++)
		if (mainline_types[i].nr == type) {
			fprintf(stderr, "perf_abi: record type %u is mainline's %s\n", type,
				mainline_types[i].name);
			bad = 1;
		}
	for (i = 0; i < ARRAY_LEN(mainline_bits); i++)
		if (mainline_bits[i].nr == bit) {
			fprintf(stderr, "perf_abi: attr bit %u is mainline's %s\n", bit,
				mainline_bits[i].name);
			bad = 1;
		}
	if (type >= PERF_USER_TYPE_START) {
		fprintf(stderr, "perf_abi: record type %u is in perf's own range\n", type);
		bad = 1;
	}
	printf("%u %u\n", type, bit);
	return bad;
}
