/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Enough of <linux/linkage.h> to assemble arch/x86/crypto/blake2s-core.S,
 * sha256_ni_asm.S and sha256-avx2-asm.S.
 */
#define SYM_FUNC_START(name)	.globl name; .type name, @function; .p2align 5; name:
#define SYM_FUNC_END(name)	.size name, . - name
#define RET			ret
