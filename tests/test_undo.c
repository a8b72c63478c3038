/*
 * Unit tests for fs/undo.c's forgetting (flush = linux, dev_volatile.c):
 * undo_take() moves one file's entries to the forgotten log less what it
 * covers, undo_subtract() cuts entries around another log's, and
 * undo_overlay() lays old bytes over a read, a fresh entry (space its
 * file never wrote) comes back as zeros; exact offsets, lengths and
 * bytes on a 64-byte device held in memory.
 */
#undef NDEBUG
#include <criterion/criterion.h>
#include <string.h>

#include "undo.h"

static unsigned char dev[64];

static int rd(void *ctx, void *buf, uint64_t len, uint64_t off)
{
	(void)ctx;
	memcpy(buf, dev + off, len);
	return 0;
}

static int wr(void *ctx, const void *buf, uint64_t len, uint64_t off)
{
	(void)ctx;
	memcpy(dev + off, buf, len);
	return 0;
}

/* "off+len:ino" for each entry of @u, space-separated. */
static const char *shape(const struct undo *u)
{
	static char s[256];
	s[0] = '\0';
	for (size_t i = 0; i < u->n; i++)
		snprintf(s + strlen(s), sizeof s - strlen(s), "%s%llu+%llu:%llu", i ? " " : "",
			 (unsigned long long)u->v[i].off, (unsigned long long)u->v[i].len,
			 (unsigned long long)u->v[i].ino);
	return s;
}

/* Writes @len bytes of @c at @off after noting them in @u as file @ino's. */
static void put(struct undo *u, uint64_t off, uint64_t len, char c, uint64_t ino)
{
	cr_assert_eq(undo_note(u, off, len, rd, NULL, ino, off, "f", false), 0);
	memset(dev + off, c, len);
}

Test(undo, take_subtract_overlay)
{
	struct undo u = {0}, lost = {0};
	memset(dev, '0', sizeof dev);
	put(&u, 0, 16, 'a', 1);
	put(&u, 16, 8, 'b', 2);
	put(&u, 32, 16, 'c', 1);
	/* file 1's entries forgotten, file 2's stay */
	cr_assert_eq(undo_take(&lost, &u, 1), 0);
	cr_assert_str_eq(shape(&u), "16+8:2");
	cr_assert_str_eq(shape(&lost), "0+16:1 32+16:1");
	cr_assert_eq(u.bytes, 8);
	cr_assert_eq(lost.bytes, 32);
	/* a rewrite of 8..40 reads the durable bytes: the forgotten ones' old '0's */
	unsigned char buf[32];
	memcpy(buf, dev + 8, 32);
	undo_overlay(&lost, buf, 32, 8);
	cr_assert_eq(memcmp(buf, "00000000bbbbbbbb0000000000000000", 32), 0);
	/* a flush: the written-again bytes of the forgotten log are durable now */
	struct undo flushed = {0};
	cr_assert_eq(undo_note(&flushed, 8, 32, rd, NULL, 1, 8, NULL, false), 0);
	cr_assert_eq(undo_subtract(&lost, &flushed), 0);
	cr_assert_str_eq(shape(&lost), "0+8:1 40+8:1");
	cr_assert_eq(lost.bytes, 16);
	cr_assert_eq(lost.v[1].logical, 40);
	/* taking again: what @lost covers stays its older copy */
	cr_assert_eq(undo_take(&lost, &u, 0), 0);
	cr_assert_str_eq(shape(&lost), "0+8:1 16+8:2 40+8:1");
	cr_assert_eq(u.n, 0);
	/* the crash: the forgotten bytes come back */
	cr_assert_eq(undo_apply(&lost, wr, NULL, NULL, 0, NULL, "t"), 0);
	cr_assert_eq(memcmp(dev, "00000000aaaaaaaa00000000" "00000000" "cccccccc00000000", 48),
		     0);
	undo_free(&u);
	undo_free(&lost);
	undo_free(&flushed);
}

/*
 * A fresh entry (a write into space its file never wrote, over another
 * file's freed bytes) is forgotten as zeros, over an older forgotten
 * entry of those bytes too (another file's write that a failed flush
 * forgot before the space was freed and given again: its old bytes came
 * back); an entry that is not fresh keeps its old bytes, and a fresh one
 * that is not forgotten too (a crash brings the space's bytes back, as
 * the disk held them).
 */
Test(undo, take_fresh_as_zeros)
{
	struct undo u = {0}, lost = {0};
	memset(dev, 's', sizeof dev);
	cr_assert_eq(undo_note(&u, 0, 16, rd, NULL, 1, 0, NULL, true), 0);
	cr_assert_eq(undo_note(&u, 16, 16, rd, NULL, 1, 16, NULL, false), 0);
	cr_assert_eq(undo_note(&u, 32, 16, rd, NULL, 2, 0, NULL, true), 0);
	memset(dev, 'n', 48);
	/* an older forgotten entry in the middle of the fresh one: the fresh one replaces it */
	struct undo older = {0};
	cr_assert_eq(undo_note(&older, 4, 4, rd, NULL, 1, 4, NULL, false), 0);
	memset(older.v[0].old, 'o', 4);
	cr_assert_eq(undo_take(&lost, &older, 1), 0);
	cr_assert_eq(undo_take(&lost, &u, 1), 0);
	cr_assert_str_eq(shape(&lost), "0+16:1 16+16:1");
	cr_assert_eq(lost.bytes, 32);
	cr_assert_str_eq(shape(&u), "32+16:2");
	cr_assert_eq(undo_apply(&lost, wr, NULL, NULL, 0, NULL, "t"), 0);
	cr_assert_eq(undo_apply(&u, wr, NULL, NULL, 0, NULL, "t"), 0);
	cr_assert_eq(memcmp(dev, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0"
				 "ssssssssssssssss"
				 "ssssssssssssssss",
			    48),
		     0);
	undo_free(&u);
	undo_free(&lost);
	undo_free(&older);
}

/*
 * A fresh write over bytes an earlier write of the period noted (an
 * overwrite, then a zero range made the space unwritten, then a write):
 * those bytes become fresh, cut at the write's ends, so a forgetting
 * gives zeros there and the old bytes around it (they came back).
 */
Test(undo, fresh_write_marks_older_entries)
{
	struct undo u = {0}, lost = {0};
	memset(dev, 'D', sizeof dev);
	put(&u, 0, 32, 'X', 1);
	cr_assert_eq(undo_note(&u, 8, 16, rd, NULL, 1, 8, NULL, true), 0);
	memset(dev + 8, 'Y', 16);
	cr_assert_str_eq(shape(&u), "0+8:1 8+16:1 24+8:1");
	cr_assert_eq(u.bytes, 32);
	cr_assert(!u.v[0].fresh && u.v[1].fresh && !u.v[2].fresh);
	cr_assert_eq(u.v[2].logical, 24);
	cr_assert_eq(undo_take(&lost, &u, 1), 0);
	cr_assert_eq(undo_apply(&lost, wr, NULL, NULL, 0, NULL, "t"), 0);
	cr_assert_eq(memcmp(dev, "DDDDDDDD\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0DDDDDDDD", 32), 0);
	undo_free(&u);
	undo_free(&lost);
}
