/*
 * Unit tests for fs/acl.c, on ACL xattrs built here byte by byte: what is
 * valid (acl(5), "Valid ACLs"), the mode an access ACL stands for, what
 * chmod does to an ACL, and what a new node gets from a default ACL.  The
 * expected values are those ext4 gives for the same setfacl/chmod/creat
 * commands (checked with getfacl on ext4).
 */
#undef NDEBUG
#include <criterion/criterion.h>
#include <endian.h>
#include <errno.h>
#include <linux/posix_acl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include "acl.h"

struct ent {
	uint16_t tag, perm;
	uint32_t id;
};

/* The xattr form of @n entries into @buf: 4-byte version 2, then 8 bytes each. */
static size_t build(unsigned char *buf, const struct ent *e, size_t n)
{
	uint32_t v = htole32(2);
	memcpy(buf, &v, 4);
	for (size_t i = 0; i < n; i++) {
		uint16_t t = htole16(e[i].tag), p = htole16(e[i].perm);
		uint32_t id = htole32(e[i].id);
		memcpy(buf + 4 + 8 * i, &t, 2);
		memcpy(buf + 6 + 8 * i, &p, 2);
		memcpy(buf + 8 + 8 * i, &id, 4);
	}
	return 4 + 8 * n;
}

static uint16_t perm_of(const unsigned char *buf, size_t i)
{
	uint16_t p;
	memcpy(&p, buf + 6 + 8 * i, 2);
	return le16toh(p);
}

#define U      ACL_USER_OBJ
#define G      ACL_GROUP_OBJ
#define O      ACL_OTHER
#define K      ACL_MASK
#define NU     ACL_USER
#define NG     ACL_GROUP
#define NOBODY 65534

Test(acl, valid)
{
	unsigned char b[128];
	struct ent min[] = {{U, 6, 0}, {G, 4, 0}, {O, 4, 0}};
	cr_assert_eq(acl_valid(b, build(b, min, 3)), 0);
	cr_assert_eq(acl_valid(b, build(b, NULL, 0)), 0, "empty");
	struct ent named[] = {{U, 6, 0}, {NU, 0, NOBODY}, {G, 4, 0}, {K, 4, 0}, {O, 4, 0}};
	cr_assert_eq(acl_valid(b, build(b, named, 5)), 0);
	struct ent nomask[] = {{U, 6, 0}, {NU, 0, NOBODY}, {G, 4, 0}, {O, 4, 0}};
	cr_assert_eq(acl_valid(b, build(b, nomask, 4)), -EINVAL, "named entry without a mask");
	struct ent twouser[] = {{U, 6, 0}, {U, 6, 0}, {G, 4, 0}, {O, 4, 0}};
	cr_assert_eq(acl_valid(b, build(b, twouser, 4)), -EINVAL, "two USER_OBJ");
	struct ent noother[] = {{U, 6, 0}, {G, 4, 0}};
	cr_assert_eq(acl_valid(b, build(b, noother, 2)), -EINVAL, "no OTHER");
	struct ent badperm[] = {{U, 8, 0}, {G, 4, 0}, {O, 4, 0}};
	cr_assert_eq(acl_valid(b, build(b, badperm, 3)), -EINVAL, "permission bit 8");
	struct ent badtag[] = {{U, 6, 0}, {G, 4, 0}, {O, 4, 0}, {0x40, 4, 0}};
	cr_assert_eq(acl_valid(b, build(b, badtag, 4)), -EINVAL, "unknown tag");
	size_t n = build(b, min, 3);
	cr_assert_eq(acl_valid(b, n - 1), -EINVAL, "partial entry");
	cr_assert_eq(acl_valid(b, 3), -EINVAL, "short header");
	uint32_t v1 = htole32(1);
	memcpy(b, &v1, 4);
	cr_assert_eq(acl_valid(b, n), -EINVAL, "version 1");
}

Test(acl, equiv_mode)
{
	unsigned char b[128];
	mode_t perm;
	bool equiv;
	struct ent min[] = {{U, 7, 0}, {G, 5, 0}, {O, 1, 0}};
	acl_equiv_mode(b, build(b, min, 3), &perm, &equiv);
	cr_assert_eq(perm, 0751);
	cr_assert(equiv);
	/* setfacl -m u:nobody:--- on a 0644 file: mode stays 0644, the group bits are the mask's */
	struct ent deny[] = {{U, 6, 0}, {NU, 0, NOBODY}, {G, 4, 0}, {K, 4, 0}, {O, 4, 0}};
	acl_equiv_mode(b, build(b, deny, 5), &perm, &equiv);
	cr_assert_eq(perm, 0644);
	cr_assert(!equiv);
	/* setfacl -m u:nobody:rw on a 0600 file: 0660 */
	struct ent grant[] = {{U, 6, 0}, {NU, 6, NOBODY}, {G, 0, 0}, {K, 6, 0}, {O, 0, 0}};
	acl_equiv_mode(b, build(b, grant, 5), &perm, &equiv);
	cr_assert_eq(perm, 0660);
	cr_assert(!equiv);
	/* a mask alone makes it not equivalent, and its bits win over GROUP_OBJ's */
	struct ent mask[] = {{U, 6, 0}, {G, 7, 0}, {K, 5, 0}, {O, 0, 0}};
	acl_equiv_mode(b, build(b, mask, 4), &perm, &equiv);
	cr_assert_eq(perm, 0650);
	cr_assert(!equiv);
}

Test(acl, chmod)
{
	unsigned char b[128];
	/* chmod 600 of a file with user:nobody:rw-: the mask becomes --- */
	struct ent grant[] = {{U, 6, 0}, {NU, 6, NOBODY}, {G, 0, 0}, {K, 6, 0}, {O, 0, 0}};
	size_t n = build(b, grant, 5);
	acl_chmod(b, n, S_IFREG | 0600);
	uint16_t want[] = {6, 6, 0, 0, 0};
	for (size_t i = 0; i < 5; i++)
		cr_assert_eq(perm_of(b, i), want[i], "entry %zu", i);
	/* chmod 754: USER_OBJ 7, the mask (not GROUP_OBJ) 5, OTHER 4 */
	struct ent g[] = {{U, 6, 0}, {G, 2, 0}, {NG, 7, 100}, {K, 0, 0}, {O, 0, 0}};
	n = build(b, g, 5);
	acl_chmod(b, n, 0754);
	uint16_t want2[] = {7, 2, 7, 5, 4};
	for (size_t i = 0; i < 5; i++)
		cr_assert_eq(perm_of(b, i), want2[i], "entry %zu", i);
	/* without a mask GROUP_OBJ takes the group bits */
	struct ent min[] = {{U, 0, 0}, {G, 0, 0}, {O, 0, 0}};
	n = build(b, min, 3);
	acl_chmod(b, n, 0751);
	cr_assert_eq(perm_of(b, 0), 7);
	cr_assert_eq(perm_of(b, 1), 5);
	cr_assert_eq(perm_of(b, 2), 1);
}

Test(acl, create)
{
	unsigned char b[128];
	mode_t mode;
	bool equiv;
	/* setfacl -d -m u:nobody:rwx,g::r-x,o::- DIR, then creat(DIR/file, 0666):
	 * user::rw- user:nobody:rwx (effective rw-) group::r-x mask::rw- other::---, mode 0660 */
	struct ent dflt[] = {{U, 7, 0}, {NU, 7, NOBODY}, {G, 5, 0}, {K, 7, 0}, {O, 0, 0}};
	size_t n = build(b, dflt, 5);
	mode = S_IFREG | 0666;
	acl_create(b, n, &mode, &equiv);
	cr_assert_eq(mode, S_IFREG | 0660);
	cr_assert(!equiv);
	uint16_t want[] = {6, 7, 5, 6, 0};
	for (size_t i = 0; i < 5; i++)
		cr_assert_eq(perm_of(b, i), want[i], "entry %zu", i);
	/* mkdir(DIR/sub, 0777) under the same default: 0770, set-group-ID kept */
	n = build(b, dflt, 5);
	mode = S_IFDIR | S_ISGID | 0777;
	acl_create(b, n, &mode, &equiv);
	cr_assert_eq(mode, S_IFDIR | S_ISGID | 0770);
	/* a default with no named entry and no mask: equivalent to the mode */
	struct ent min[] = {{U, 7, 0}, {G, 5, 0}, {O, 5, 0}};
	n = build(b, min, 3);
	mode = S_IFREG | 0640;
	acl_create(b, n, &mode, &equiv);
	cr_assert_eq(mode, S_IFREG | 0640);
	cr_assert(equiv);
	cr_assert_eq(perm_of(b, 0), 6);
	cr_assert_eq(perm_of(b, 1), 4);
	cr_assert_eq(perm_of(b, 2), 0);
}

Test(acl, keep_perms)
{
	unsigned char b[128];
	/* an extent map's mirror of a file with user::rwx user:nobody:r-x
	 * group::rwx mask::r-x other::--x keeps only read and write */
	struct ent e[] = {{U, 7, 0}, {NU, 5, NOBODY}, {G, 7, 0}, {K, 5, 0}, {O, 1, 0}};
	size_t n = build(b, e, 5);
	acl_keep_perms(b, n, ACL_READ | ACL_WRITE);
	cr_assert_eq(acl_valid(b, n), 0);
	uint16_t want[] = {6, 4, 6, 4, 0};
	for (size_t i = 0; i < 5; i++)
		cr_assert_eq(perm_of(b, i), want[i], "entry %zu", i);
	uint32_t id;
	memcpy(&id, b + 8 + 8 * 1, 4);
	cr_assert_eq(le32toh(id), NOBODY, "the qualifier stays");
	mode_t perm;
	bool equiv;
	acl_equiv_mode(b, n, &perm, &equiv);
	cr_assert_eq(perm, 0640);
	acl_keep_perms(b, build(b, NULL, 0), ACL_READ); /* empty: nothing to do */
}
