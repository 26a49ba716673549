/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_MMAP3_H
#define __PERF_MMAP3_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

union perf_event;

/* Size of the fixed part of PERF_RECORD_MMAP3, before name[]. */
#define PERF_RECORD_MMAP3_FIXED_SIZE	64

int perf_event__mmap3_check(const union perf_event *event, size_t id_hdr_size,
			    const char **reason);
void perf_event__mmap3_swap(union perf_event *event, bool sample_id_all);
size_t perf_event__fprintf_mmap3(union perf_event *event, FILE *fp);
bool perf_event__mmap3_is_stashed(const union perf_event *event);

#endif /* __PERF_MMAP3_H */
