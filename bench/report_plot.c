/*
 * Plots through gnuplot (Debian package gnuplot-nox): the read-size
 * histogram in power-of-two buckets and, with --timeline, each read's size
 * and each of its device I/Os' device offset against time.
 *
 * Data structure: none in memory.  The timeline points are streamed to two
 * temporary files while the log is read (so memory stays constant; a
 * 10-million-row log makes files of a few hundred MB and a slow plot); at
 * the end the histogram goes to a third file, a gnuplot script is written
 * beside them, gnuplot runs as a child process (posix_spawnp, found on
 * PATH), and the temporary files are removed.
 */
#include <errno.h>
#include <stdbool.h>
#include <inttypes.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "report.h"

extern char **environ;

enum { TMP_READS, TMP_DEV, TMP_HIST, TMP_SCRIPT, TMP_COUNT };

struct plot {
	char *out;
	bool svg;
	bool timeline;
	char tmp[TMP_COUNT][64]; /* "" when not created */
	FILE *f[TMP_COUNT];
	uint64_t points[2]; /* timeline points written: reads, device I/Os */
	/* a log that names its devices: one colour of device offsets per device */
	bool named;
	char **devnames; /* by the log's device number (devio.device) */
	size_t ndevnames;
};

static void plot_free(struct plot *p)
{
	for (int i = 0; i < TMP_COUNT; i++) {
		if (p->f[i])
			fclose(p->f[i]);
		if (p->tmp[i][0])
			unlink(p->tmp[i]);
	}
	for (size_t i = 0; i < p->ndevnames; i++)
		free(p->devnames[i]);
	free(p->devnames);
	free(p->out);
	free(p);
}

void plot_discard(struct plot *p)
{
	if (p != NULL)
		plot_free(p);
}

static int tmp_file(struct plot *p, int i, char *err, size_t errlen)
{
	const char *dir = getenv("TMPDIR");
	if (dir == NULL || dir[0] == '\0' || strlen(dir) > 40)
		dir = "/tmp";
	snprintf(p->tmp[i], sizeof(p->tmp[i]), "%s/sfs-plot.XXXXXX", dir);
	int fd = mkstemp(p->tmp[i]);
	if (fd < 0) {
		int rc = -errno;
		snprintf(err, errlen, "--plot: temporary file in %s: %s", dir, strerror(errno));
		p->tmp[i][0] = '\0';
		return rc;
	}
	p->f[i] = fdopen(fd, "w");
	if (p->f[i] == NULL) {
		close(fd);
		return -ENOMEM;
	}
	return 0;
}

int plot_open(const char *out, bool timeline, struct plot **pp, char *err, size_t errlen)
{
	*pp = NULL;
	const char *dot = strrchr(out, '.');
	bool png = dot && strcasecmp(dot, ".png") == 0;
	bool svg = dot && strcasecmp(dot, ".svg") == 0;
	if (!png && !svg) {
		snprintf(err, errlen, "--plot %s: the file name must end in .png or .svg", out);
		return -EINVAL;
	}
	struct plot *p = calloc(1, sizeof(*p));
	if (p == NULL || (p->out = strdup(out)) == NULL) {
		free(p);
		return -ENOMEM;
	}
	p->svg = svg;
	p->timeline = timeline;
	if (timeline) {
		int rc = tmp_file(p, TMP_READS, err, errlen);
		if (rc == 0)
			rc = tmp_file(p, TMP_DEV, err, errlen);
		if (rc < 0) {
			plot_free(p);
			return rc;
		}
	}
	*pp = p;
	return 0;
}

int plot_add(struct plot *p, const struct log_row *row)
{
	if (!p->timeline || row->op != LOG_OPI_READ)
		return 0;
	double t = (double)row->ts_us / 1e6;
	fprintf(p->f[TMP_READS], "%.6f %" PRIu64 "\n", t, row->size);
	p->points[0]++;
	if (row->dev_named && row->ndev_names > p->ndevnames) {
		char **n = realloc(p->devnames, row->ndev_names * sizeof(*n));
		if (n == NULL)
			return -ENOMEM;
		p->devnames = n;
		for (; p->ndevnames < row->ndev_names; p->ndevnames++)
			if ((n[p->ndevnames] = strdup(row->dev_names[p->ndevnames])) == NULL)
				return -ENOMEM;
	}
	p->named |= row->dev_named;
	for (size_t i = 0; i < row->ndev; i++) {
		if (row->dev_named)
			fprintf(p->f[TMP_DEV], "%.6f %.6f %" PRIu32 "\n", t,
				(double)row->dev[i].offset / 1048576.0, row->dev[i].device);
		else
			fprintf(p->f[TMP_DEV], "%.6f %.6f\n", t,
				(double)row->dev[i].offset / 1048576.0);
	}
	p->points[1] += row->ndev;
	return 0;
}

/* A gnuplot single-quoted string: ' doubles, nothing else is special. */
static void gp_str(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\'')
			fputc('\'', f);
		fputc(*s, f);
	}
	fputc('\'', f);
}

static void bucket_text(unsigned b, char *buf, size_t len)
{
	static const char suffix[] = "KMGTPE";
	uint64_t v = hist_bucket_lo(b);
	int k = -1;
	while (v >= 1024 && v % 1024 == 0 && k < 5) {
		v /= 1024;
		k++;
	}
	if (k < 0)
		snprintf(buf, len, "%" PRIu64, v);
	else
		snprintf(buf, len, "%" PRIu64 "%c", v, suffix[k]);
}

static void write_script(struct plot *p, const struct report *rep, int bars)
{
	FILE *s = p->f[TMP_SCRIPT];
	int height = p->timeline ? 1200 : 500;

	fprintf(s, "set terminal %s size 1000,%d noenhanced\nset output ",
		p->svg ? "svg" : "pngcairo", height);
	gp_str(s, p->out);
	fputc('\n', s);
	if (p->timeline)
		fprintf(s, "set multiplot layout 3,1\n");
	fprintf(s,
		"set title 'Read sizes: %" PRIu64 " reads (power-of-two buckets; a bar labelled"
		" 8K holds the sizes from 8K up to 16K - 1)'\n"
		"set style fill solid 0.6\nset boxwidth 0.8\nset yrange [0:*]\n"
		"set xrange [-0.5:%d.5]\n"
		"set xlabel 'read size, bytes'\nset ylabel 'reads'\nset grid ytics\n"
		"plot ",
		rep->all.hist.n, (bars < 4 ? 4 : bars) - 1);
	gp_str(s, p->tmp[TMP_HIST]);
	fprintf(s, " using 0:2:xticlabels(1) with boxes notitle\n");
	if (p->timeline) {
		fprintf(s, "set autoscale\nset xtics auto\nset yrange [0:*]\n"
			   "set xlabel 'time since mount, s'\n"
			   "set title 'Read size of each read'\nset ylabel 'read size, bytes'\n"
			   "plot ");
		gp_str(s, p->tmp[TMP_READS]);
		fprintf(s, " using 1:2 with points pt 7 ps 0.3 notitle\n"
			   "set title 'Device offset of each device I/O of the reads'\n"
			   "set ylabel 'device offset, MiB'\n");
		if (p->named && p->ndevnames > 0) {
			/* each device in its colour, titled by its name ([A-Za-z0-9_.-]) */
			fprintf(s, "names = '");
			for (size_t i = 0; i < p->ndevnames; i++)
				fprintf(s, "%s%s", i ? " " : "", p->devnames[i]);
			fprintf(s, "'\nplot for [i=0:%zu] ", p->ndevnames - 1);
			gp_str(s, p->tmp[TMP_DEV]);
			fprintf(s, " using 1:($3 == i ? $2 : NaN) with points pt 7 ps 0.3 title "
				   "word(names, i + 1)\nunset multiplot\n");
		} else {
			fprintf(s, "plot ");
			gp_str(s, p->tmp[TMP_DEV]);
			fprintf(s, " using 1:2 with points pt 7 ps 0.3 notitle\nunset multiplot\n");
		}
	}
}

/* Whether an executable @name is in one of the directories of $PATH. */
static bool on_path(const char *name)
{
	const char *path = getenv("PATH");
	if (!path)
		return false;
	char buf[4096];
	while (*path) {
		size_t n = strcspn(path, ":");
		if (n && n + strlen(name) + 2 <= sizeof(buf)) {
			memcpy(buf, path, n);
			snprintf(buf + n, sizeof(buf) - n, "/%s", name);
			if (access(buf, X_OK) == 0)
				return true;
		}
		path += n + (path[n] == ':');
	}
	return false;
}

int plot_finish(struct plot *p, const struct report *rep, char *err, size_t errlen)
{
	int rc = tmp_file(p, TMP_HIST, err, errlen);
	if (rc == 0)
		rc = tmp_file(p, TMP_SCRIPT, err, errlen);
	if (rc < 0)
		goto out;

	char label[32];
	int bars = 0;
	for (unsigned b = 0; b < HIST_BUCKETS; b++) {
		if (rep->all.hist.bucket[b] == 0)
			continue;
		bucket_text(b, label, sizeof(label));
		fprintf(p->f[TMP_HIST], "%s %" PRIu64 "\n", label, rep->all.hist.bucket[b]);
		bars++;
	}
	if (bars == 0)
		fprintf(p->f[TMP_HIST], "none 0\n"); /* gnuplot refuses an empty file */
	/* Same for the timeline: one point at 0 keeps an empty panel plottable. */
	if (p->timeline && p->points[0] == 0)
		fprintf(p->f[TMP_READS], "0 0\n");
	if (p->timeline && p->points[1] == 0)
		fprintf(p->f[TMP_DEV], "0 0\n");
	write_script(p, rep, bars);
	for (int i = 0; i < TMP_COUNT; i++) {
		if (p->f[i] == NULL)
			continue;
		bool bad = ferror(p->f[i]) != 0;
		if (fclose(p->f[i]) != 0 || bad) {
			p->f[i] = NULL;
			snprintf(err, errlen, "--plot: writing %s failed", p->tmp[i]);
			rc = -EIO;
			goto out;
		}
		p->f[i] = NULL;
	}

	pid_t pid;
	char *argv[] = {(char *)"gnuplot", p->tmp[TMP_SCRIPT], NULL};
	/* Look for it first: an exec failure inside posix_spawnp() is not
	 * reported everywhere (not under valgrind, for one). */
	int e =
	    on_path("gnuplot") ? posix_spawnp(&pid, "gnuplot", NULL, NULL, argv, environ) : ENOENT;
	if (e != 0) {
		rc = -e;
		if (e == ENOENT)
			snprintf(
			    err, errlen,
			    "--plot needs gnuplot, which is not installed (not found on PATH); "
			    "install the Debian package gnuplot-nox: apt-get install "
			    "gnuplot-nox");
		else
			snprintf(err, errlen, "--plot: cannot run gnuplot: %s", strerror(e));
		goto out;
	}
	int status;
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			rc = -errno;
			snprintf(err, errlen, "--plot: waitpid: %s", strerror(errno));
			goto out;
		}
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		snprintf(err, errlen, "--plot: gnuplot failed (%s %d) writing %s",
			 WIFEXITED(status) ? "exit status" : "signal",
			 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), p->out);
		rc = -EIO;
		goto out;
	}
	struct stat st;
	if (stat(p->out, &st) != 0 || st.st_size == 0) {
		snprintf(err, errlen, "--plot: gnuplot did not write %s", p->out);
		rc = -EIO;
	}
out:
	plot_free(p);
	return rc;
}
