/*
 * A pin count: how many operations in flight still use an object, taken
 * and dropped by any thread, and a wait for it to reach zero.  One word:
 * the count in bits 0-30, PINS_WAITER (bit 31) set while a thread sleeps
 * on it (a futex), so dropping a pin costs a system call only when someone
 * waits.  scatterfs pins an inode for each queued device read (fs/io.c):
 * a read/write lock cannot be released by the completion thread, which is
 * not the thread that took it.
 */
#ifndef SCATTERFS_PINS_H
#define SCATTERFS_PINS_H

#include <stdatomic.h>

#define PINS_WAITER 0x80000000u

struct pins {
	atomic_uint word; /* zero-initialised: no pins */
};

/** pins_take() - adds a pin.  The caller must exclude pins_wait() meanwhile (a lock). */
void pins_take(struct pins *p);
/**
 * pins_drop() - drops a pin; wakes the waiter when it was the last.  After
 * the last pin is dropped it touches @p only through a private futex wake,
 * which reads no memory, so the waiter may free @p at once.
 */
void pins_drop(struct pins *p);
/**
 * pins_wait() - returns once @p has no pins.  One waiter at a time, and no
 * pins_take() until it returns (the caller holds the lock pins_take()'s
 * callers hold for reading, for writing).
 */
void pins_wait(struct pins *p);

#endif
