/*
 * POSIX ACLs in their extended-attribute form (system.posix_acl_access and
 * system.posix_acl_default): the kernel enforces them (FUSE_CAP_POSIX_ACL)
 * and the daemon stores them in the catalog's xattr table, but keeping the
 * file mode in step with the access ACL and giving new nodes their parent's
 * default ACL are the file system's job (libfuse's documentation of
 * FUSE_CAP_POSIX_ACL).  These functions do that on the xattr bytes: a
 * struct posix_acl_xattr_header (version 2) followed by 8-byte
 * struct posix_acl_xattr_entry, little-endian (<linux/posix_acl_xattr.h>).
 * The rules are those of POSIX.1e draft 17 (withdrawn) as Linux implements
 * them (acl(5)).  No FUSE, no catalog: pure functions.
 */
#ifndef SCATTERFS_ACL_H
#define SCATTERFS_ACL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define ACL_XATTR_ACCESS  "system.posix_acl_access"
#define ACL_XATTR_DEFAULT "system.posix_acl_default"
/* An ACL of no entry: the header alone (struct posix_acl_xattr_header). */
#define ACL_XATTR_EMPTY_SIZE 4

/**
 * acl_valid() - whether @value (@size bytes) is a well-formed ACL xattr:
 * version 2, whole entries, known tags, exactly one USER_OBJ, GROUP_OBJ
 * and OTHER, and a MASK when there are named USER or GROUP entries (acl(5),
 * "Valid ACLs").  An empty ACL (header only) is valid.
 * @return 0, -EINVAL.
 */
int acl_valid(const void *value, size_t size);

/**
 * acl_equiv_mode() - the permission bits (0777) that access ACL @value
 * stands for: owner from USER_OBJ, group from MASK when present (else
 * GROUP_OBJ), others from OTHER.  *@equiv is true when the ACL says no more
 * than those bits (no named entries, no mask), so it need not be stored.
 * @value must pass acl_valid().
 */
void acl_equiv_mode(const void *value, size_t size, mode_t *perm, bool *equiv);

/**
 * acl_chmod() - after a chmod to @mode, sets the ACL's USER_OBJ, MASK (or
 * GROUP_OBJ when there is no mask) and OTHER permissions from @mode's bits,
 * in place, as chmod(2) does to a file with an access ACL (acl(5)).
 * @value must pass acl_valid().
 */
void acl_chmod(void *value, size_t size, mode_t mode);

/**
 * acl_create() - turns a copy of the parent's default ACL (@value, in
 * place) into the access ACL of a new node created with @mode, and masks
 * @mode by it (acl(5), "Object creation and default ACLs": each permission
 * of the new ACL is the default's and the mode's).  *@equiv is true when
 * the result says no more than *@mode and need not be stored.  @value must
 * pass acl_valid().
 */
void acl_create(void *value, size_t size, mode_t *mode, bool *equiv);

/**
 * acl_keep_perms() - clears from every entry of ACL @value (in place) the
 * permission bits not in @keep (ACL_READ, ACL_WRITE, ACL_EXECUTE of
 * <linux/posix_acl.h>): what the mode's bits & (@keep * 0111) are to a
 * mode.  @value must pass acl_valid().
 */
void acl_keep_perms(void *value, size_t size, unsigned keep);

#endif
