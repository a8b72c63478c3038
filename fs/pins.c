/*
 * Pin counts (pins.h): an atomic word with a waiter bit, and a futex for
 * the one thread that waits for the count to reach zero.
 */
#include "pins.h"

#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

void pins_take(struct pins *p)
{
	atomic_fetch_add(&p->word, 1);
}

void pins_drop(struct pins *p)
{
	if (atomic_fetch_sub(&p->word, 1) == (PINS_WAITER | 1))
		syscall(SYS_futex, &p->word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

void pins_wait(struct pins *p)
{
	unsigned v = atomic_load(&p->word);
	while (v & ~PINS_WAITER) {
		if (!(v & PINS_WAITER) &&
		    !atomic_compare_exchange_weak(&p->word, &v, v | PINS_WAITER))
			continue;
		/* Sleeps only while the word still holds what was seen. */
		syscall(SYS_futex, &p->word, FUTEX_WAIT_PRIVATE, v | PINS_WAITER, NULL, NULL, 0);
		v = atomic_load(&p->word);
	}
	if (v) /* no pin can be taken meanwhile (see pins_wait's contract) */
		atomic_fetch_and(&p->word, ~PINS_WAITER);
}
