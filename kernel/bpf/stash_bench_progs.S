/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The captured bpfstash entries that KUnit's benchmark of the load hook
 * (stash_bench_kunit.c) rebuilds its programs from: the files of each
 * entry as the bpfstash filesystem shows them, from the directory
 * CONFIG_BPFSTASH_KUNIT_BENCH_PROGS names (the assembler's include path),
 * one subdirectory per program.  Each program is a struct bench_entry:
 * where each file starts and ends, from the end of that table, then the
 * files, each aligned to 8 bytes.
 */
	.section .rodata, "a"

.macro bench_range prog, file
	.long .L\file\()_\prog - .Ldata_\prog, .L\file\()_end_\prog - .Ldata_\prog
.endm

.macro bench_file prog, file
	.balign 8
.L\file\()_\prog:
	.incbin "\prog/\file"
.L\file\()_end_\prog:
.endm

.macro bench_entry prog
	.balign 8
	.globl bpfstash_bench_\prog
bpfstash_bench_\prog:
	.irp file, meta, funcs, jited, line_info, jited_line_info, func_info, btf
	bench_range \prog, \file
	.endr
	.balign 8
.Ldata_\prog:
	.irp file, meta, funcs, jited, line_info, jited_line_info, func_info, btf
	bench_file \prog, \file
	.endr
.endm

	bench_entry trivial
	bench_entry subprogs
	bench_entry insns4096
	bench_entry large
	bench_entry funcs256
