/*
 * tests/under_valgrind.h: UNDER_VALGRIND() is true when the test runs on
 * valgrind's synthetic CPU (valgrind.h's RUNNING_ON_VALGRIND client
 * request; always false when the header is missing).  A unit test whose
 * iteration count is there for scale, not for an assertion (hundreds of
 * thousands of rows or extents), runs a smaller count of the same
 * assertions there: valgrind runs code some 20 to 50 times slower, and
 * finds a bad access in the first iterations as well as in the last.  The
 * native and ASan runs keep the full count.
 */
#ifndef SFS_TESTS_UNDER_VALGRIND_H
#define SFS_TESTS_UNDER_VALGRIND_H

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define UNDER_VALGRIND() (RUNNING_ON_VALGRIND != 0)
#endif
#endif
#ifndef UNDER_VALGRIND
#define UNDER_VALGRIND() 0
#endif

#endif
