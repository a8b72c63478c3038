/* scatterfs-plan clone (plan_clone.c). */
#ifndef SCATTERFS_PLAN_CLONE_H
#define SCATTERFS_PLAN_CLONE_H

/**
 * plan_clone() - writes to @out_path a configuration that reproduces the
 * layout of the regular files under @dir (FIEMAP), and their map files in
 * @out_path.maps/ (see plan_clone.c).  Messages on standard error.
 * @return the exit status: 0, or 1 on an error.
 */
int plan_clone(const char *dir, const char *out_path);

#endif
