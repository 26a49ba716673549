/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A small test harness for the in-guest suites, in the style of
 * tools/testing/selftests/bpf/test_progs.h: ASSERT_*() evaluate to true on
 * success, print what they compared on failure, and let the test go on.
 *
 * A suite is a table of tests:
 *
 *	static const struct test tests[] = {
 *		{ "load_and_info", test_load_and_info },
 *		{}
 *	};
 *	int main(int argc, char **argv) { return test_main("smoke", tests, argc, argv); }
 *
 * Each test prints exactly one result line, which make check counts:
 *
 *	PASS suite.test
 *	FAIL suite.test: why
 *	SKIP suite.test: why
 */
#ifndef BPFSTASH_TEST_H
#define BPFSTASH_TEST_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>

struct test {
	const char *name;
	void (*fn)(void);
	/* Tests that change global state (sysctls, mounts) say so. */
	bool serial;
};

/* State of the running test. */
extern const char *test__suite;
extern const char *test__name;
extern int test__failed;
extern char test__skip_reason[256];

void test__fail(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void test__skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void test__note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int test_main(const char *suite, const struct test *tests, int argc, char **argv);

#define ASSERT_TRUE(cond, name) ({					\
	bool ___ok = (cond);						\
	if (!___ok)							\
		test__fail(__FILE__, __LINE__, "%s: unexpected false: %s",\
			   (name), #cond);				\
	___ok;								\
})
#define ASSERT_FALSE(cond, name) ASSERT_TRUE(!(cond), name)

#define ASSERT_OK(res, name) ({						\
	long long ___res = (res);					\
	bool ___ok = ___res == 0;					\
	if (!___ok)							\
		test__fail(__FILE__, __LINE__, "%s: unexpected error: %lld (errno %d: %s)",\
			   (name), ___res, errno, strerror(errno));	\
	___ok;								\
})

#define ASSERT_ERR(res, name) ({					\
	long long ___res = (res);					\
	bool ___ok = ___res < 0;					\
	if (!___ok)							\
		test__fail(__FILE__, __LINE__, "%s: unexpected success: %lld",\
			   (name), ___res);				\
	___ok;								\
})

#define ASSERT_ERRNO(res, err, name) ({					\
	long long ___res = (res);					\
	int ___errno = errno;						\
	bool ___ok = ___res < 0 && ___errno == (err);			\
	if (!___ok)							\
		test__fail(__FILE__, __LINE__, "%s: want errno %d (%s), got res %lld errno %d (%s)",\
			   (name), (err), strerror(err), ___res, ___errno, strerror(___errno));\
	___ok;								\
})

#define ASSERT_OP(a, op, b, name) ({					\
	long long ___a = (long long)(a), ___b = (long long)(b);	\
	bool ___ok = ___a op ___b;					\
	if (!___ok)							\
		test__fail(__FILE__, __LINE__, "%s: unexpected %s: %lld %s %lld fails",\
			   (name), #a " " #op " " #b, ___a, #op, ___b);	\
	___ok;								\
})
/* The same for measured figures, compared as doubles. */
#define ASSERT_OPF(a, op, b, name) ({					\
	double ___a = (a), ___b = (b);					\
	bool ___ok = ___a op ___b;					\
	if (!___ok)							\
		test__fail(__FILE__, __LINE__, "%s: unexpected %s: %g %s %g fails",\
			   (name), #a " " #op " " #b, ___a, #op, ___b);	\
	___ok;								\
})

#define ASSERT_LTF(a, b, name) ASSERT_OPF(a, <, b, name)

#define ASSERT_EQ(a, b, name) ASSERT_OP(a, ==, b, name)
#define ASSERT_NEQ(a, b, name) ASSERT_OP(a, !=, b, name)
#define ASSERT_GT(a, b, name) ASSERT_OP(a, >, b, name)
#define ASSERT_GE(a, b, name) ASSERT_OP(a, >=, b, name)
#define ASSERT_LT(a, b, name) ASSERT_OP(a, <, b, name)
#define ASSERT_LE(a, b, name) ASSERT_OP(a, <=, b, name)

#define ASSERT_STREQ(a, b, name) ({					\
	const char *___a = (a), *___b = (b);				\
	bool ___ok = ___a && ___b && !strcmp(___a, ___b);		\
	if (!___ok)							\
		test__fail(__FILE__, __LINE__, "%s: \"%s\" != \"%s\"",	\
			   (name), ___a ?: "(null)", ___b ?: "(null)");	\
	___ok;								\
})

#define ASSERT_MEMEQ(a, b, len, name) ({				\
	size_t ___len = (len);						\
	bool ___ok = !memcmp((a), (b), ___len);			\
	if (!___ok)							\
		test__fail(__FILE__, __LINE__, "%s: %zu bytes differ",	\
			   (name), ___len);				\
	___ok;								\
})

#define ASSERT_PTR_OK(p, name) ({					\
	const void *___p = (p);						\
	bool ___ok = ___p != NULL;					\
	if (!___ok)							\
		test__fail(__FILE__, __LINE__, "%s: NULL (errno %d: %s)",\
			   (name), errno, strerror(errno));		\
	___ok;								\
})

#endif /* BPFSTASH_TEST_H */
