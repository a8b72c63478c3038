/*
 * sfs-load: concurrent processes reading and writing files with
 * verification, for the load test (tests/mount/load.sh).
 *
 *   sfs-load DIR [--procs N] [--files N] [--seconds S] [--blocks N] [--seed N]
 *
 * Every file is an array of 4 KiB blocks.  Each block describes itself: a
 * header (magic, file, block, generation, writer) and a payload derived
 * from the header, so any process can check any block it reads.  Process p
 * owns the files f with f % procs == p: only it writes them (whole aligned
 * blocks, each write a new generation), and it also remembers the
 * generation of every block it wrote, so reads of its own files must match
 * exactly; reads of other processes' files must be well-formed blocks of
 * that file (a torn or misplaced block, or another file's data, is a
 * mismatch).  Exit 0 when every check held, 1 on a mismatch (reported with
 * the seed), 2 on a usage or system error.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "splitmix64.h"

#define BLOCK 4096
#define MAGIC UINT64_C(0x5343415454455246) /* "SCATTERF" */

struct header {
	uint64_t magic, file, block, generation, writer;
};


static void fill_block(unsigned char *b, const struct header *h)
{
	memcpy(b, h, sizeof *h);
	uint64_t s = h->file * 1000003 + h->block * 7919 + h->generation;
	for (size_t i = sizeof *h; i < BLOCK; i += 8) {
		uint64_t v = splitmix64_next(&s);
		memcpy(b + i, &v, 8);
	}
}

/* 0 when @b is a well-formed block @block of file @file (or all zeros: never written). */
static int check_block(const unsigned char *b, uint64_t file, uint64_t block, uint64_t *gen)
{
	struct header h;
	memcpy(&h, b, sizeof h);
	if (h.magic == 0) {
		for (size_t i = 0; i < BLOCK; i++)
			if (b[i])
				return -1;
		*gen = 0;
		return 0;
	}
	if (h.magic != MAGIC || h.file != file || h.block != block)
		return -1;
	unsigned char want[BLOCK];
	fill_block(want, &h);
	*gen = h.generation;
	return memcmp(want, b, BLOCK) ? -1 : 0;
}

static int run_proc(const char *dir, unsigned p, unsigned procs, unsigned files, unsigned blocks,
		    double seconds, uint64_t seed, uint64_t *ops_out)
{
	uint64_t rng = seed * 1000 + p;
	int *fds = calloc(files, sizeof *fds);
	uint64_t *gens = calloc((size_t)files * blocks, sizeof *gens);
	unsigned char *buf = aligned_alloc(BLOCK, BLOCK);
	if (!fds || !gens || !buf)
		return 2;
	for (unsigned f = 0; f < files; f++) {
		char path[4096];
		snprintf(path, sizeof path, "%s/load-%03u", dir, f);
		fds[f] = open(path, O_RDWR | O_CREAT, 0644);
		if (fds[f] < 0) {
			fprintf(stderr, "sfs-load: %s: %s\n", path, strerror(errno));
			return 2;
		}
	}
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	uint64_t ops = 0, generation = 0;
	for (;;) {
		if ((ops & 63) == 0) {
			clock_gettime(CLOCK_MONOTONIC, &t);
			if ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 >= seconds)
				break;
		}
		uint64_t r = splitmix64_next(&rng);
		unsigned f = (unsigned)(r % files);
		unsigned blk = (unsigned)((r >> 20) % blocks);
		bool own = f % procs == p;
		unsigned op = (unsigned)((r >> 40) % 100);
		if (own && op < 45) {
			struct header h = {MAGIC, f, blk, ++generation, p};
			fill_block(buf, &h);
			if (pwrite(fds[f], buf, BLOCK, (off_t)blk * BLOCK) != BLOCK) {
				fprintf(stderr, "sfs-load: proc %u: write file %u block %u: %s\n", p, f, blk,
					strerror(errno));
				return 2;
			}
			gens[(size_t)f * blocks + blk] = generation;
		} else if (own && op < 47) {
			if (fdatasync(fds[f])) {
				fprintf(stderr, "sfs-load: proc %u: fdatasync: %s\n", p, strerror(errno));
				return 2;
			}
		} else {
			ssize_t n = pread(fds[f], buf, BLOCK, (off_t)blk * BLOCK);
			if (n < 0) {
				fprintf(stderr, "sfs-load: proc %u: read: %s\n", p, strerror(errno));
				return 2;
			}
			if (n < BLOCK) /* past the end: reads as never written */
				memset(buf + n, 0, BLOCK - (size_t)n);
			uint64_t g = 0;
			if (check_block(buf, f, blk, &g) ||
			    (own && g != gens[(size_t)f * blocks + blk])) {
				fprintf(stderr,
					"sfs-load: MISMATCH proc %u op %" PRIu64 " file %u block %u: "
					"generation %" PRIu64 " expected %s%" PRIu64 " (seed %" PRIu64 ")\n",
					p, ops, f, blk, g, own ? "" : "any well-formed, last written ",
					gens[(size_t)f * blocks + blk], seed);
				return 1;
			}
		}
		ops++;
	}
	*ops_out = ops;
	return 0;
}

int main(int argc, char **argv)
{
	unsigned procs = 16, files = 64, blocks = 256;
	double seconds = 60;
	uint64_t seed = 1;
	if (argc < 2 || argv[1][0] == '-') {
		fprintf(stderr, "usage: sfs-load DIR [--procs N] [--files N] [--seconds S] [--blocks N] "
				"[--seed N]\n");
		return 2;
	}
	for (int i = 2; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--procs"))
			procs = (unsigned)atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--files"))
			files = (unsigned)atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--seconds"))
			seconds = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--blocks"))
			blocks = (unsigned)atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--seed"))
			seed = strtoull(argv[i + 1], NULL, 0);
		else {
			fprintf(stderr, "sfs-load: unknown option %s\n", argv[i]);
			return 2;
		}
	}
	if (!procs || !files || !blocks || procs > files) {
		fprintf(stderr, "sfs-load: need 0 < procs <= files and blocks > 0\n");
		return 2;
	}
	printf("sfs-load: %u processes, %u files of %u blocks, %.0f s, seed %" PRIu64 "\n", procs,
	       files, blocks, seconds, seed);
	fflush(stdout);
	int pipes[2];
	if (pipe(pipes))
		return 2;
	for (unsigned p = 0; p < procs; p++) {
		pid_t pid = fork();
		if (pid < 0)
			return 2;
		if (pid == 0) {
			uint64_t ops = 0;
			int rc = run_proc(argv[1], p, procs, files, blocks, seconds, seed, &ops);
			if (write(pipes[1], &ops, sizeof ops) != sizeof ops)
				rc = 2;
			_exit(rc);
		}
	}
	close(pipes[1]);
	int worst = 0;
	for (unsigned p = 0; p < procs; p++) {
		int st;
		wait(&st);
		int rc = WIFEXITED(st) ? WEXITSTATUS(st) : 2;
		if (rc == 1 || (rc && !worst))
			worst = rc;
	}
	uint64_t total = 0, ops;
	while (read(pipes[0], &ops, sizeof ops) == sizeof ops)
		total += ops;
	printf("sfs-load: %" PRIu64 " operations, %s\n", total,
	       worst == 0 ? "0 mismatches" : worst == 1 ? "MISMATCH" : "errors");
	return worst;
}
