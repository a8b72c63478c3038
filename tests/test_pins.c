/*
 * Unit tests for fs/pins.c: pins_wait() returns at once without pins,
 * sleeps while any pin is held (however many are dropped before the last)
 * and returns when the last is dropped, leaving the word at zero.
 */
#undef NDEBUG
#include <criterion/criterion.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>

#include "pins.h"

struct waiter {
	struct pins *p;
	atomic_bool done;
};

static void *wait_thread(void *arg)
{
	struct waiter *w = arg;
	pins_wait(w->p);
	atomic_store(&w->done, true);
	return NULL;
}

static void sleep_ms(long ms)
{
	struct timespec t = {ms / 1000, (ms % 1000) * 1000000};
	nanosleep(&t, NULL);
}

Test(pins, wait_without_pins_returns_at_once)
{
	struct pins p = {0};
	pins_wait(&p);
	cr_assert_eq(atomic_load(&p.word), 0);
	pins_take(&p);
	pins_drop(&p);
	pins_wait(&p);
	cr_assert_eq(atomic_load(&p.word), 0);
}

Test(pins, wait_sleeps_until_the_last_pin_is_dropped, .timeout = 10)
{
	struct pins p = {0};
	pins_take(&p);
	pins_take(&p);
	pins_take(&p);
	struct waiter w = {.p = &p};
	pthread_t t;
	cr_assert_eq(pthread_create(&t, NULL, wait_thread, &w), 0);
	/* The waiter marks the word before it sleeps (the test's timeout ends
	 * this loop if it never does). */
	while (atomic_load(&p.word) != (PINS_WAITER | 3))
		sleep_ms(1);
	sleep_ms(50);
	cr_assert_eq(atomic_load(&w.done), false, "returned with 3 pins held");
	pins_drop(&p);
	pins_drop(&p);
	sleep_ms(50);
	cr_assert_eq(atomic_load(&w.done), false, "returned with 1 pin held");
	pins_drop(&p);
	cr_assert_eq(pthread_join(t, NULL), 0);
	cr_assert_eq(atomic_load(&w.done), true);
	cr_assert_eq(atomic_load(&p.word), 0, "the waiter bit is cleared");
}

/* The way scatterfs uses them: pins taken under a read lock, dropped by
 * other threads without it; the waiter holds the write lock. */
static pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
static struct pins shared;
static atomic_bool stop;

static void *reader_thread(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		pthread_rwlock_rdlock(&lock);
		pins_take(&shared);
		pthread_rwlock_unlock(&lock);
		sched_yield();
		pins_drop(&shared);
	}
	return NULL;
}

Test(pins, writers_see_no_pins_while_readers_churn, .timeout = 30)
{
	enum { READERS = 4, WRITES = 2000 };
	pthread_t t[READERS];
	for (int i = 0; i < READERS; i++)
		cr_assert_eq(pthread_create(&t[i], NULL, reader_thread, NULL), 0);
	for (int k = 0; k < WRITES; k++) {
		pthread_rwlock_wrlock(&lock);
		pins_wait(&shared);
		cr_assert_eq(atomic_load(&shared.word), 0, "pins left after pins_wait, round %d", k);
		pthread_rwlock_unlock(&lock);
	}
	atomic_store(&stop, true);
	for (int i = 0; i < READERS; i++)
		pthread_join(t[i], NULL);
	cr_assert_eq(atomic_load(&shared.word), 0);
}
