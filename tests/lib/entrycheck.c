// SPDX-License-Identifier: GPL-2.0-only
#include <stdlib.h>
#include <unistd.h>

#include "test.h"
#include "proginfo.h"
#include "stashfs.h"
#include "entrycheck.h"
#include "../../tools/lib/bpfstash/libbpfstash.h"

/* Raw BTF of @btf_id, as the kernel returns it. */
static int btf_raw(__u32 btf_id, void **data, __u32 *size)
{
	struct bpf_btf_info info = {};
	__u32 len = sizeof(info);
	int fd, err;

	fd = bpf_btf_get_fd_by_id(btf_id);
	if (fd < 0)
		return fd;
	err = bpf_obj_get_info_by_fd(fd, &info, &len);
	if (!err) {
		*size = info.btf_size;
		*data = calloc(1, info.btf_size + 1);
		info = (struct bpf_btf_info){ .btf = (__u64)(unsigned long)*data,
					      .btf_size = *size };
		len = sizeof(info);
		err = bpf_obj_get_info_by_fd(fd, &info, &len);
	}
	close(fd);
	return err;
}

/*
 * The entry of the program behind @prog_fd matches what the kernel reports
 * for it, file by file, and its name is the hash of its content.
 */
void check_entry_matches(int prog_fd, const char *what)
{
	struct bpfstash_entry *e = NULL;
	struct prog_info_full pi;
	struct bpfstash *stash;
	const struct bpfstash_meta *m;
	const struct bpfstash_jited_line *jl;
	const void *blob;
	char hex[41];
	size_t size;
	__u32 i;

	if (!ASSERT_OK(prog_info_full_get(prog_fd, &pi), "get info"))
		return;
	if (!ASSERT_OK(stash_find_prog(pi.info.id, hex), what))
		goto out_info;
	if (!ASSERT_OK(bpfstash_open(STASH_ROOT, &stash), "open stash"))
		goto out_info;
	if (!ASSERT_OK(bpfstash_entry_load(stash, hex, 0, &e), "load entry"))
		goto out;
	ASSERT_OK(bpfstash_entry_verify(e), "hash of content == name");

	m = bpfstash_entry_meta(e);
	ASSERT_TRUE(bpfstash_entry_loaded(e), "loaded flag");
	ASSERT_EQ(m->content.prog_type, pi.info.type, "type");
	ASSERT_MEMEQ(m->content.tag, pi.info.tag, 8, "tag");
	ASSERT_STREQ(m->content.name, pi.info.name, "name");
	ASSERT_EQ(m->load_time, pi.info.load_time, "load_time");
	ASSERT_EQ(m->content.xlated_len, pi.info.xlated_prog_len, "xlated_len");
	ASSERT_EQ(m->content.verified_insns, pi.info.verified_insns, "verified_insns");
	ASSERT_EQ(m->btf_id, pi.info.btf_id, "btf_id");
	ASSERT_EQ(m->uid, getuid(), "uid");

	/* jited_prog_insns, jited_ksyms, jited_func_lens */
	blob = bpfstash_entry_blob(e, BPFSTASH_JITED, &size);
	if (ASSERT_EQ(size, pi.info.jited_prog_len, "jited size"))
		ASSERT_MEMEQ(blob, pi.jited, size, "jited bytes");
	if (ASSERT_EQ(bpfstash_entry_nr_funcs(e), pi.info.nr_jited_ksyms, "nr funcs")) {
		for (i = 0; i < pi.info.nr_jited_ksyms; i++) {
			const struct bpfstash_func *f = bpfstash_entry_func(e, i);

			ASSERT_EQ(f->addr, pi.ksyms[i], "func addr == jited_ksyms[i]");
			ASSERT_EQ(f->len, pi.func_lens[i], "func len == jited_func_lens[i]");
		}
	}
	/* line_info, jited_line_info, func_info */
	blob = bpfstash_entry_blob(e, BPFSTASH_LINE_INFO, &size);
	if (ASSERT_EQ(size, pi.info.nr_line_info * pi.info.line_info_rec_size, "line_info size"))
		ASSERT_MEMEQ(blob, pi.line_info, size, "line_info bytes");
	jl = bpfstash_entry_blob(e, BPFSTASH_JITED_LINE_INFO, &size);
	if (ASSERT_EQ(size / sizeof(*jl), pi.info.nr_jited_line_info, "jited_line_info count")) {
		for (i = 0; i < pi.info.nr_jited_line_info; i++)
			if (!ASSERT_EQ(bpfstash_entry_func(e, jl[i].func)->addr + jl[i].off,
				       pi.jited_line_info[i], "(func, off) == jited_line_info[i]"))
				break;
	}
	blob = bpfstash_entry_blob(e, BPFSTASH_FUNC_INFO, &size);
	if (ASSERT_EQ(size, pi.info.nr_func_info * pi.info.func_info_rec_size, "func_info size"))
		ASSERT_MEMEQ(blob, pi.func_info, size, "func_info bytes");

	/* BTF */
	blob = bpfstash_entry_blob(e, BPFSTASH_BTF, &size);
	if (pi.info.btf_id) {
		void *raw = NULL;
		__u32 raw_size = 0;

		if (ASSERT_OK(btf_raw(pi.info.btf_id, &raw, &raw_size), "btf get info") &&
		    ASSERT_EQ(size, raw_size, "btf size"))
			ASSERT_MEMEQ(blob, raw, size, "btf bytes");
		free(raw);
	} else {
		ASSERT_EQ(size, 0, "no btf");
	}
	bpfstash_entry_free(e);
out:
	bpfstash_close(stash);
out_info:
	prog_info_full_free(&pi);
}

