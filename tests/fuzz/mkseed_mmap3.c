// SPDX-License-Identifier: GPL-2.0-only
/*
 * The seed corpus of fuzz_mmap3: well-formed PERF_RECORD_MMAP3 records as
 * the kernel writes them (stashed and refused, with and without a sample_id
 * trailer, names of several lengths), with the parameter byte first.
 *
 *   mkseed_mmap3 DIR
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>

#include "perfring.h"	/* struct mmap3_record */

int main(int argc, char **argv)
{
	static const char *names[] = {
		"bpf_prog_3fa4ed082e752d28_stash_fold", "bpf_prog_6deef7357e7b4530", "x",
		"bpf_prog_0123456789abcdef_a_rather_long_function_name_of_a_program",
	};
	unsigned int n = 0, i, trailer, flags;

	if (argc != 2)
		return 64;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		for (trailer = 0; trailer <= 3; trailer += 3) {
			for (flags = 1; flags <= 2; flags++) {
				unsigned char buf[1 + sizeof(struct mmap3_record) + 512 + 64 + 64] = {};
				struct mmap3_record *r = (void *)(buf + 1);
				size_t name_pad = (strlen(names[i]) + 1 + 7) & ~7UL;
				char path[4096];
				FILE *f;
				int k;

				buf[0] = trailer | (trailer ? 16 : 0);
				r->header.type = PERF_RECORD_MMAP3;
				r->header.size = 64 + name_pad + trailer * 8;
				r->addr = 0xffffffffa0000090ULL + i * 0x1000;
				r->len = 470;
				r->id = 5 + i;
				r->flags = flags == 1 ? PERF_RECORD_MMAP3_STASHED : PERF_RECORD_MMAP3_REFUSED_FULL;
				r->type = PERF_RECORD_KSYMBOL_TYPE_BPF;
				r->func_idx = i;
				r->hash_size = flags == 1 ? 20 : 0;
				for (k = 0; flags == 1 && k < 20; k++)
					r->hash[k] = 0xca + k * 7 + i;
				strcpy(r->name, names[i]);
				snprintf(path, sizeof(path), "%s/seed-%u", argv[1], n++);
				f = fopen(path, "wb");
				if (!f || fwrite(buf, 1, 1 + r->header.size, f) != 1 + r->header.size ||
				    fclose(f)) {
					perror(path);
					return 1;
				}
			}
		}
	}
	/*
	 * Header sections (HEADER_BPFSTASH_MMAP3, parameter bit 5): version
	 * 1, the records of the first names, in and out of time order.
	 */
	for (flags = 0; flags < 2; flags++) {
		unsigned char buf[4096] = {};
		size_t pos = 1 + 8;
		char path[4096];
		FILE *f;

		buf[0] = 32 | (flags ? 3 : 0);
		buf[1] = 1;			/* version, little-endian */
		buf[5] = 3;			/* nr */
		for (i = 0; i < 3; i++) {
			struct mmap3_record *r = (void *)(buf + pos + 16);
			size_t name_pad = (strlen(names[i]) + 1 + 7) & ~7UL;
			unsigned long long time = flags ? 3000 - i * 1000 : 1000 + i * 1000;
			unsigned int cpu = i, size = 64 + name_pad;
			int k;

			memcpy(buf + pos, &time, 8);
			memcpy(buf + pos + 8, &cpu, 4);
			memcpy(buf + pos + 12, &size, 4);
			r->header.type = PERF_RECORD_MMAP3;
			r->header.size = size;
			r->addr = 0xffffffffa0000090ULL + i * 0x1000;
			r->len = 470;
			r->id = 5 + i;
			r->flags = PERF_RECORD_MMAP3_STASHED;
			r->type = PERF_RECORD_KSYMBOL_TYPE_BPF;
			r->hash_size = 20;
			for (k = 0; k < 20; k++)
				r->hash[k] = 0xca + k * 7 + i;
			strcpy(r->name, names[i]);
			pos += 16 + size;
		}
		snprintf(path, sizeof(path), "%s/seed-%u", argv[1], n++);
		f = fopen(path, "wb");
		if (!f || fwrite(buf, 1, pos, f) != pos || fclose(f)) {
			perror(path);
			return 1;
		}
	}
	return 0;
}
