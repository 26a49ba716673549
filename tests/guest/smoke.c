// SPDX-License-Identifier: GPL-2.0-only
/*
 * Proves that the test kernel and the BPF toolchain are real: a program
 * written in C with subprograms, BTF and line info is loaded through libbpf
 * and the kernel reports a JITed image with several functions and jited
 * line info for it.
 */
#include <unistd.h>

#include "../lib/test.h"
#include "../lib/proginfo.h"

static void test_jited_subprogs(void)
{
	struct prog_info_full pi;
	struct bpf_object *obj;
	int fd, err;

	obj = test_prog_load("subprogs", &fd);
	if (!ASSERT_PTR_OK(obj, "load subprogs.bpf.o"))
		return;
	err = prog_info_full_get(fd, &pi);
	if (!ASSERT_OK(err, "bpf_prog_get_info_by_fd"))
		goto out;

	ASSERT_GT(pi.info.jited_prog_len, 0, "jited_prog_len");
	ASSERT_GT(pi.info.nr_jited_ksyms, 1, "nr_jited_ksyms");
	ASSERT_EQ(pi.info.nr_jited_ksyms, pi.info.nr_jited_func_lens, "ksyms vs lens");
	ASSERT_GT(pi.info.nr_func_info, 1, "nr_func_info (BTF)");
	ASSERT_GT(pi.info.nr_line_info, 0, "nr_line_info");
	ASSERT_EQ(pi.info.nr_jited_line_info, pi.info.nr_line_info, "nr_jited_line_info");
	ASSERT_NEQ(pi.info.btf_id, 0, "btf_id");
	ASSERT_NEQ(pi.ksyms[0], 0, "jited_ksyms[0] (raw addresses visible to root)");
	test__note("%u functions, %u bytes JITed, %u line info records",
		   pi.info.nr_jited_ksyms, pi.info.jited_prog_len,
		   pi.info.nr_jited_line_info);
	prog_info_full_free(&pi);
out:
	bpf_object__close(obj);
}

static const struct test tests[] = {
	{ "jited_subprogs", test_jited_subprogs },
	{}
};

int main(int argc, char **argv)
{
	return test_main("smoke", tests, argc, argv);
}
