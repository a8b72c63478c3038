/*
 * bench-end-check: what the daemon's look at a backing's size costs against
 * the request it guards (bench/README.md, "A backing's end").  Not a test:
 * it prints numbers.
 *
 *   bench-end-check BACKING FILE N [BLOCKDEV]
 *
 * In blocks of 1,000 calls, interleaved so that the load of a shared
 * machine falls on each kind alike, until N of each: fstat(2) of BACKING
 * (what the daemon adds to a write, a zero-fill and a spliced read of a
 * regular-file backing), the BLKGETSIZE64 ioctl of BLOCKDEV when given (a
 * block device's zero-fill and spliced read), 8 KiB pwrite(2) and 8 KiB
 * pread(2) at random 8 KiB-aligned offsets of FILE, a file on a scatterfs
 * mount of BACKING.  Prints one line: nanoseconds per call of each, and
 * the ratios of a size check to a request.  The process runs a second,
 * idle thread, as the daemon runs several, so that fstat takes the file
 * reference that a multi-threaded process takes.
 */
#include <fcntl.h>
#include <linux/fs.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BLOCK 1000
#define IO    8192

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void *idle(void *p)
{
	for (;;)
		pause();
	return p;
}

/* xorshift64 (Marsaglia, "Xorshift RNGs", 2003): the offsets' sequence. */
static uint64_t next(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

int main(int argc, char **argv)
{
	static char buf[IO] __attribute__((aligned(4096)));
	uint64_t tf = 0, ti = 0, tw = 0, tr = 0, t0, bytes, x = 88172645463325252ull;
	struct stat st;
	pthread_t t;

	if (argc < 4 || argc > 5) {
		fprintf(stderr, "usage: bench-end-check BACKING FILE N [BLOCKDEV]\n");
		return 2;
	}
	int bfd = open(argv[1], O_RDONLY), ffd = open(argv[2], O_RDWR);
	int dfd = argc > 4 ? open(argv[4], O_RDONLY) : -1;
	long n = atol(argv[3]);
	if (bfd < 0 || ffd < 0 || (argc > 4 && dfd < 0) || n < BLOCK || fstat(ffd, &st) ||
	    st.st_size < IO) {
		fprintf(stderr,
			"bench-end-check: cannot open the files, or N < %d, or FILE < %d bytes\n",
			BLOCK, IO);
		return 1;
	}
	if (pthread_create(&t, NULL, idle, NULL))
		return 1;
	uint64_t blocks = (uint64_t)st.st_size / IO;
	for (long done = 0; done < n; done += BLOCK) {
		t0 = now_ns();
		for (int i = 0; i < BLOCK; i++)
			fstat(bfd, &st);
		tf += now_ns() - t0;
		if (dfd >= 0) {
			t0 = now_ns();
			for (int i = 0; i < BLOCK; i++)
				ioctl(dfd, BLKGETSIZE64, &bytes);
			ti += now_ns() - t0;
		}
		t0 = now_ns();
		for (int i = 0; i < BLOCK; i++)
			if (pwrite(ffd, buf, IO, (off_t)(next(&x) % blocks * IO)) != IO) {
				perror("bench-end-check: pwrite");
				return 1;
			}
		tw += now_ns() - t0;
		t0 = now_ns();
		for (int i = 0; i < BLOCK; i++)
			if (pread(ffd, buf, IO, (off_t)(next(&x) % blocks * IO)) != IO) {
				perror("bench-end-check: pread");
				return 1;
			}
		tr += now_ns() - t0;
	}
	n = n / BLOCK * BLOCK;
	double f = (double)tf / n, io = (double)ti / n, w = (double)tw / n, r = (double)tr / n;
	printf("fstat_ns %.0f ioctl_ns %.0f write_ns %.0f read_ns %.0f fstat/write %.4f "
	       "fstat/read %.4f ioctl/read %.4f\n",
	       f, io, w, r, f / w, f / r, io / r);
	return 0;
}
