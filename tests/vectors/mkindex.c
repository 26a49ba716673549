// SPDX-License-Identifier: GPL-2.0-only
/*
 * mkindex: the index file of a stash's entries, made from their meta and
 * funcs files as include/uapi/linux/bpfstash.h describes it, for test
 * vectors and to check the kernel's own against.  It shares no code with
 * the kernel or libbpfstash.
 *
 *   mkindex [-t] [-g GENERATION] DIR [HASH...]
 *
 * The entries are the HASHes given, in that order, or else every entry of
 * DIR in name order.  The index goes to standard output, or with -t its
 * records as text, one line each.  The header's boot is the first entry's.
 */
#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/bpfstash.h>

static void *read_all(const char *dir, const char *hex, const char *file, size_t *size)
{
	char path[4096];
	size_t cap = 4096, len = 0, n;
	char *p = malloc(cap);
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/%s", dir, hex, file);
	f = fopen(path, "rb");
	if (!f || !p) {
		fprintf(stderr, "mkindex: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	while ((n = fread(p + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len == cap && !(p = realloc(p, cap *= 2)))
			exit(1);
	}
	fclose(f);
	*size = len;
	return p;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void put(const void *p, size_t n)
{
	if (fwrite(p, 1, n, stdout) != n)
		exit(1);
}

int main(int argc, char **argv)
{
	unsigned long long gen = 0;
	struct bpfstash_index_header h = {};
	struct bpfstash_meta *m;
	struct bpfstash_func *f;
	size_t *fsizes, nr = 0, i, j, ranges = 0, names = 0, msize;
	void **metas, **funcs;
	char **hexes;
	int opt, text = 0;
	uint32_t off;

	while ((opt = getopt(argc, argv, "tg:")) != -1) {
		if (opt == 't')
			text = 1;
		else if (opt == 'g')
			gen = strtoull(optarg, NULL, 0);
		else
			return 64;
	}
	if (optind >= argc) {
		fprintf(stderr, "usage: mkindex [-t] [-g GENERATION] DIR [HASH...]\n");
		return 64;
	}
	if (optind + 1 < argc) {
		hexes = argv + optind + 1;
		nr = argc - optind - 1;
	} else {
		DIR *d = opendir(argv[optind]);
		struct dirent *de;

		if (!d) {
			fprintf(stderr, "mkindex: %s: %s\n", argv[optind], strerror(errno));
			return 1;
		}
		hexes = NULL;
		while ((de = readdir(d)))
			if (strlen(de->d_name) == 2 * BPFSTASH_HASH_SIZE) {
				hexes = realloc(hexes, (nr + 1) * sizeof(*hexes));
				hexes[nr++] = strdup(de->d_name);
			}
		closedir(d);
		qsort(hexes, nr, sizeof(*hexes), cmp_name);
	}
	metas = calloc(nr + 1, sizeof(*metas));
	funcs = calloc(nr + 1, sizeof(*funcs));
	fsizes = calloc(nr + 1, sizeof(*fsizes));
	for (i = 0; i < nr; i++) {
		metas[i] = read_all(argv[optind], hexes[i], "meta", &msize);
		funcs[i] = read_all(argv[optind], hexes[i], "funcs", &fsizes[i]);
		m = metas[i];
		if (msize < sizeof(*m) || le32toh(m->content.version) != BPFSTASH_VERSION) {
			fprintf(stderr, "mkindex: %s: not a format %u meta\n", hexes[i],
				BPFSTASH_VERSION);
			return 1;
		}
		ranges += le32toh(m->content.nr_funcs);
		names += fsizes[i] - le32toh(m->content.nr_funcs) * sizeof(*f);
	}

	h.magic = htole32(BPFSTASH_INDEX_MAGIC);
	h.version = htole32(BPFSTASH_INDEX_VERSION);
	h.header_size = htole32(sizeof(h));
	h.generation = htole64(gen);
	h.nr_entries = htole32(nr);
	h.entry_size = htole32(sizeof(struct bpfstash_index_entry));
	h.nr_ranges = htole32(ranges);
	h.range_size = htole32(sizeof(struct bpfstash_index_range));
	h.names_size = htole32(names);
	h.size = htole64(sizeof(h) + nr * sizeof(struct bpfstash_index_entry) +
			 ranges * sizeof(struct bpfstash_index_range) + names);
	if (nr)
		memcpy(h.boot_id, ((struct bpfstash_meta *)metas[0])->boot_id, sizeof(h.boot_id));
	if (text)
		printf("header version %u generation %llu flags 0 entries %zu ranges %zu names %zu size %llu\n",
		       BPFSTASH_INDEX_VERSION, gen, nr, ranges, names,
		       (unsigned long long)le64toh(h.size));
	else
		put(&h, sizeof(h));

	for (i = 0, j = 0; i < nr; i++) {
		struct bpfstash_index_entry e = {};

		m = metas[i];
		memcpy(e.hash, m->hash, sizeof(e.hash));
		e.flags = m->flags;
		e.prog_id = m->prog_id;
		e.image_kind = m->content.image_kind;
		e.first_range = htole32(j);
		e.nr_ranges = m->content.nr_funcs;
		e.load_time = m->load_time;
		e.load_time_real = m->load_time_real;
		e.unload_time = m->unload_time;
		e.unload_time_real = m->unload_time_real;
		e.prog_type = m->content.prog_type;
		e.uid = m->uid;
		memcpy(e.name, m->content.name, sizeof(e.name));
		memcpy(e.tag, m->content.tag, sizeof(e.tag));
		j += le32toh(e.nr_ranges);
		if (!text) {
			put(&e, sizeof(e));
			continue;
		}
		printf("entry %zu %s flags %u prog_id %u image_kind %u prog_type %u uid %u "
		       "load_time %llu load_time_real %llu unload_time %llu unload_time_real %llu "
		       "name %.16s tag ", i, hexes[i], le32toh(e.flags), le32toh(e.prog_id),
		       le32toh(e.image_kind), le32toh(e.prog_type), le32toh(e.uid),
		       (unsigned long long)le64toh(e.load_time),
		       (unsigned long long)le64toh(e.load_time_real),
		       (unsigned long long)le64toh(e.unload_time),
		       (unsigned long long)le64toh(e.unload_time_real), e.name);
		for (off = 0; off < sizeof(e.tag); off++)
			printf("%02x", e.tag[off]);
		printf(" first_range %u nr_ranges %u\n", le32toh(e.first_range),
		       le32toh(e.nr_ranges));
	}
	for (i = 0, j = 0, off = 0; i < nr; i++) {
		uint32_t n;

		m = metas[i];
		f = funcs[i];
		n = le32toh(m->content.nr_funcs);
		for (uint32_t k = 0; k < n; k++, j++) {
			struct bpfstash_index_range r = {
				.addr = f[k].addr,
				.len = f[k].len,
				.entry = htole32(i),
				.func = htole32(k),
				.name_off = htole32(off + le32toh(f[k].name_off)),
			};

			if (text)
				printf("range %zu entry %zu func %u addr %#llx len %u name_off %u name %s\n",
				       j, i, k, (unsigned long long)le64toh(r.addr), le32toh(r.len),
				       le32toh(r.name_off),
				       (char *)(f + n) + le32toh(f[k].name_off));
			else
				put(&r, sizeof(r));
		}
		off += fsizes[i] - n * sizeof(*f);
	}
	if (!text)
		for (i = 0; i < nr; i++) {
			m = metas[i];
			f = funcs[i];
			put((char *)(f + le32toh(m->content.nr_funcs)),
			    fsizes[i] - le32toh(m->content.nr_funcs) * sizeof(*f));
		}
	return fflush(stdout) ? 1 : 0;
}
