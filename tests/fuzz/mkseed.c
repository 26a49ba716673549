// SPDX-License-Identifier: GPL-2.0-only
/*
 * Seed corpus for fuzz_entry: each entry directory given becomes one input
 * per mode (fuzz_entry.h).
 *
 *   mkseed OUTDIR ENTRYDIR...
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz_entry.h"

static void *slurp(const char *path, uint32_t *size)
{
	struct stat st;
	uint8_t *buf;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st) || st.st_size > (1 << 26))
		return NULL;
	buf = malloc(st.st_size + 1);
	if (!buf || read(fd, buf, st.st_size) != st.st_size) {
		free(buf);
		close(fd);
		return NULL;
	}
	close(fd);
	*size = st.st_size;
	return buf;
}

int main(int argc, char **argv)
{
	static const uint8_t modes[] = { 0, FUZZ_FIXUP, FUZZ_META_ONLY };
	int a, i, m;

	if (argc < 3) {
		fprintf(stderr, "usage: %s OUTDIR ENTRYDIR...\n", argv[0]);
		return 64;
	}
	for (a = 2; a < argc; a++) {
		const char *base = strrchr(argv[a], '/') ? strrchr(argv[a], '/') + 1 : argv[a];

		for (m = 0; m < (int)sizeof(modes); m++) {
			char path[4096];
			FILE *out;

			snprintf(path, sizeof(path), "%s/%.12s-%d", argv[1], base, modes[m]);
			out = fopen(path, "w");
			if (!out) {
				perror(path);
				return 1;
			}
			fputc(modes[m], out);
			for (i = 0; i < FUZZ_NR_FILES; i++) {
				uint32_t size = 0;
				void *buf;

				snprintf(path, sizeof(path), "%s/%s", argv[a], fuzz_files[i]);
				buf = slurp(path, &size);
				if (!buf && i >= FUZZ_CALLS) {
					/* no calls (a program's), no pokes: empty */
					size = 0;
					fwrite(&size, 4, 1, out);
					continue;
				}
				if (!buf) {
					fprintf(stderr, "%s: cannot read\n", path);
					return 1;
				}
				fwrite(&size, 4, 1, out);	/* little endian on the hosts we fuzz on */
				fwrite(buf, 1, size, out);
				free(buf);
			}
			if (fclose(out)) {
				perror(argv[1]);
				return 1;
			}
		}
	}
	return 0;
}
