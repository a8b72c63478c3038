/*
 * POSIX ACLs as xattr bytes (see acl.h).  An ACL is a handful of 8-byte
 * entries, so every function walks it linearly; the kernel has already
 * validated what it passes (posix_acl_from_xattr()), and acl_valid() checks
 * again because the catalog keeps what it is given.
 */
#include <endian.h>
#include <errno.h>
#include <linux/posix_acl.h>
#include <linux/posix_acl_xattr.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include "acl.h"

#define HDR sizeof(struct posix_acl_xattr_header)
#define ENT sizeof(struct posix_acl_xattr_entry)

static size_t count(size_t size)
{
	return (size - HDR) / ENT;
}

/* The entries may sit at any alignment in the caller's buffer: copy them. */
static void get(const void *value, size_t i, uint16_t *tag, uint16_t *perm)
{
	struct posix_acl_xattr_entry e;
	memcpy(&e, (const char *)value + HDR + i * ENT, ENT);
	*tag = le16toh(e.e_tag);
	*perm = le16toh(e.e_perm);
}

static void set_perm(void *value, size_t i, uint16_t perm)
{
	uint16_t le = htole16(perm);
	memcpy((char *)value + HDR + i * ENT + offsetof(struct posix_acl_xattr_entry, e_perm), &le,
	       sizeof le);
}

int acl_valid(const void *value, size_t size)
{
	struct posix_acl_xattr_header h;
	if (size < HDR || (size - HDR) % ENT)
		return -EINVAL;
	memcpy(&h, value, HDR);
	if (le32toh(h.a_version) != POSIX_ACL_XATTR_VERSION)
		return -EINVAL;
	int user_obj = 0, group_obj = 0, other = 0, mask = 0, named = 0;
	for (size_t i = 0; i < count(size); i++) {
		uint16_t tag, perm;
		get(value, i, &tag, &perm);
		if (perm & ~(ACL_READ | ACL_WRITE | ACL_EXECUTE))
			return -EINVAL;
		switch (tag) {
		case ACL_USER_OBJ:
			user_obj++;
			break;
		case ACL_GROUP_OBJ:
			group_obj++;
			break;
		case ACL_OTHER:
			other++;
			break;
		case ACL_MASK:
			mask++;
			break;
		case ACL_USER:
		case ACL_GROUP:
			named++;
			break;
		default:
			return -EINVAL;
		}
	}
	if (count(size) == 0)
		return 0;
	if (user_obj != 1 || group_obj != 1 || other != 1 || mask > 1 || (named && !mask))
		return -EINVAL;
	return 0;
}

void acl_equiv_mode(const void *value, size_t size, mode_t *perm, bool *equiv)
{
	mode_t m = 0;
	bool eq = true;
	int mask = -1;
	for (size_t i = 0; i < count(size); i++) {
		uint16_t tag, p;
		get(value, i, &tag, &p);
		if (tag == ACL_USER_OBJ)
			m |= (mode_t)p << 6;
		else if (tag == ACL_GROUP_OBJ)
			m |= (mode_t)p << 3;
		else if (tag == ACL_OTHER)
			m |= p;
		else if (tag == ACL_MASK)
			mask = p;
		else
			eq = false;
	}
	if (mask >= 0) {
		m = (m & ~(mode_t)S_IRWXG) | ((mode_t)mask << 3);
		eq = false;
	}
	*perm = m;
	*equiv = eq;
}

void acl_chmod(void *value, size_t size, mode_t mode)
{
	size_t group_obj = SIZE_MAX, mask = SIZE_MAX;
	for (size_t i = 0; i < count(size); i++) {
		uint16_t tag, p;
		get(value, i, &tag, &p);
		if (tag == ACL_USER_OBJ)
			set_perm(value, i, (mode >> 6) & 7);
		else if (tag == ACL_OTHER)
			set_perm(value, i, mode & 7);
		else if (tag == ACL_GROUP_OBJ)
			group_obj = i;
		else if (tag == ACL_MASK)
			mask = i;
	}
	/* With a mask the group bits are the mask's: GROUP_OBJ keeps its own. */
	size_t g = mask != SIZE_MAX ? mask : group_obj;
	if (g != SIZE_MAX)
		set_perm(value, g, (mode >> 3) & 7);
}

void acl_create(void *value, size_t size, mode_t *mode, bool *equiv)
{
	mode_t m = *mode;
	bool eq = true;
	size_t group_obj = SIZE_MAX, mask = SIZE_MAX;
	for (size_t i = 0; i < count(size); i++) {
		uint16_t tag, p;
		get(value, i, &tag, &p);
		if (tag == ACL_USER_OBJ) {
			p &= (m >> 6) & 7;
			set_perm(value, i, p);
			m = (m & ~(mode_t)S_IRWXU) | ((mode_t)p << 6);
		} else if (tag == ACL_OTHER) {
			p &= m & 7;
			set_perm(value, i, p);
			m = (m & ~(mode_t)S_IRWXO) | p;
		} else if (tag == ACL_GROUP_OBJ) {
			group_obj = i;
		} else if (tag == ACL_MASK) {
			mask = i;
			eq = false;
		} else {
			eq = false;
		}
	}
	/* The group class is the mask's when there is one (acl(5)). */
	size_t g = mask != SIZE_MAX ? mask : group_obj;
	if (g != SIZE_MAX) {
		uint16_t tag, p;
		get(value, g, &tag, &p);
		p &= (m >> 3) & 7;
		set_perm(value, g, p);
		m = (m & ~(mode_t)S_IRWXG) | ((mode_t)p << 3);
	}
	*mode = m;
	*equiv = eq;
}

void acl_keep_perms(void *value, size_t size, unsigned keep)
{
	for (size_t i = 0; i < count(size); i++) {
		uint16_t tag, p;
		get(value, i, &tag, &p);
		set_perm(value, i, p & keep);
	}
}
