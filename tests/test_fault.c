/*
 * Unit tests for fs/fault.c: each target, trigger and effect of a fault
 * rule on device I/Os described by hand, the keys' errors, and the
 * control channel's fault commands, with exact outcomes.  Expected random
 * draws are computed here from splitmix64 itself (layout/splitmix64.h),
 * as the rule's documentation says they are made.
 */
#undef NDEBUG
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fault.h"
#include "splitmix64.h"

static const char *const devs[] = {"main", "fast"};

static struct fault_set set;

static void setup(void)
{
	fault_set_init(&set, devs, 2);
}

static void teardown(void)
{
	fault_set_release(&set);
}

TestSuite(fault, .init = setup, .fini = teardown);

/* Runs @cmd; returns the reply (malloc'd). */
static char *run(const char *cmd)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	cr_assert_not_null(f);
	int rc = fault_command(&set, cmd, f);
	fclose(f);
	cr_assert_eq(rc, 0, "%s is a fault command", cmd);
	return buf;
}

static void ok(const char *cmd)
{
	char *r = run(cmd);
	cr_assert_str_eq(r, "ok\n", "%s", cmd);
	free(r);
}

static void refused(const char *cmd, const char *reply)
{
	char *r = run(cmd);
	cr_assert_str_eq(r, reply, "%s", cmd);
	free(r);
}

static struct fault_io rd(const char *path, uint64_t logical, uint64_t dev_off, uint64_t len)
{
	return (struct fault_io){.op = FAULT_READ,
				 .device = "main",
				 .dev_off = dev_off,
				 .len = len,
				 .path = path,
				 .has_logical = path != NULL,
				 .logical_off = logical};
}

Test(fault, empty_set_matches_nothing)
{
	struct fault_hit h;
	struct fault_io io = rd("a", 0, 0, 4096);
	cr_assert(fault_set_empty(&set));
	cr_assert_not(fault_set_match(&set, &io, &h));
}

Test(fault, nth_read_of_a_device_range_fails_with_eio)
{
	ok("fault add bad op=read device=main range=1M+64K after=2 count=1 error=EIO");
	struct fault_hit h;
	/* outside the range: not counted */
	struct fault_io out = rd("f", 0, 0, 4096);
	cr_assert_not(fault_set_match(&set, &out, &h));
	struct fault_io in = rd("f", 8192, (1 << 20) + 60 * 1024, 8192);
	cr_assert_not(fault_set_match(&set, &in, &h), "1st matching read passes");
	cr_assert_not(fault_set_match(&set, &in, &h), "2nd matching read passes");
	cr_assert(fault_set_match(&set, &in, &h), "3rd fails");
	cr_assert_eq(h.error, -EIO);
	cr_assert_str_eq(h.rule, "bad");
	/* only the part in the range: 4 KiB at 1M + 60K */
	cr_assert_eq(h.hit_off, (1 << 20) + 60 * 1024);
	cr_assert_eq(h.hit_len, 4096);
	cr_assert_not(fault_set_match(&set, &in, &h), "count = 1: the 4th passes");
	/* writes in the range are not its op */
	struct fault_io w = in;
	w.op = FAULT_WRITE;
	cr_assert_not(fault_set_match(&set, &w, &h));
	char *l = run("fault list");
	cr_assert_str_eq(l, "bad op=read device=main range=1M+64K after=2 count=1 error=EIO "
			    "matched=4 fired=1\nok\n");
	free(l);
}

Test(fault, device_target_needs_its_device)
{
	ok("fault add d device=fast error=EROFS");
	struct fault_hit h;
	struct fault_io io = rd(NULL, 0, 0, 512);
	cr_assert_not(fault_set_match(&set, &io, &h), "main is not fast");
	io.device = "fast";
	cr_assert(fault_set_match(&set, &io, &h));
	cr_assert_eq(h.error, -EROFS);
	refused("fault add e device=slow error=EIO",
		"error: fault add e: key 'device': no device 'slow'; the mount's: main, fast\n");
}

Test(fault, glob_target_and_logical_range)
{
	ok("fault add g op=write file=pg_wal/0000* range=16K+8K error=ENOSPC");
	struct fault_hit h;
	struct fault_io io = {.op = FAULT_WRITE,
			      .device = "main",
			      .dev_off = 1 << 20,
			      .len = 8192,
			      .path = "pg_wal/000000010000000000000001",
			      .has_logical = true,
			      .logical_off = 12288};
	cr_assert(fault_set_match(&set, &io, &h));
	cr_assert_eq(h.error, -ENOSPC);
	/* logical [16K, 20K) of the I/O's [12K, 20K): device 1M + 4K */
	cr_assert_eq(h.hit_off, (1 << 20) + 4096);
	cr_assert_eq(h.hit_len, 4096);
	io.logical_off = 24576;
	cr_assert_not(fault_set_match(&set, &io, &h), "past the range");
	io.logical_off = 16384;
	io.path = "base/1/1259";
	cr_assert_not(fault_set_match(&set, &io, &h), "another file");
	io.path = NULL;
	cr_assert_not(fault_set_match(&set, &io, &h), "an I/O of no known file");
}

Test(fault, glob_over_a_4000_byte_path)
{
	char path[4001];
	for (int i = 0; i < 4000; i++)
		path[i] = i % 100 == 99 ? '/' : 'a' + i % 26;
	path[4000] = '\0';
	path[3999] = 'z';
	ok("fault add long file=*z error=EIO");
	/* the glob itself may be as long: the path verbatim, through the command line */
	char *cmd;
	cr_assert(asprintf(&cmd, "fault add exact file=%s error=EBUSY", path) > 0);
	ok(cmd);
	free(cmd);
	struct fault_hit h;
	struct fault_io io = rd(path, 0, 0, 512);
	cr_assert(fault_set_match(&set, &io, &h));
	cr_assert_str_eq(h.rule, "long");
	ok("fault del long");
	cr_assert(fault_set_match(&set, &io, &h));
	cr_assert_str_eq(h.rule, "exact");
	cr_assert_eq(h.error, -EBUSY);
}

Test(fault, quoted_glob_with_a_space)
{
	ok("fault add q file=\"my db/*.dat\" error=EIO");
	struct fault_hit h;
	struct fault_io io = rd("my db/t.dat", 0, 0, 512);
	cr_assert(fault_set_match(&set, &io, &h));
	char *l = run("fault list");
	cr_assert_str_eq(l, "q file=\"my db/*.dat\" error=EIO matched=1 fired=1\nok\n");
	free(l);
}

Test(fault, probability_is_reproducible_from_the_seed)
{
	ok("fault add p op=read probability=0.25 seed=42 error=EIO");
	/* the draws the rule makes: one per matching read */
	uint64_t st = 42;
	bool want[200];
	unsigned nfire = 0;
	for (int i = 0; i < 200; i++) {
		want[i] = (double)(splitmix64_next(&st) >> 11) * 0x1.0p-53 < 0.25;
		nfire += want[i];
	}
	struct fault_hit h;
	struct fault_io io = rd("f", 0, 0, 512);
	for (int i = 0; i < 200; i++)
		cr_assert_eq(fault_set_match(&set, &io, &h), want[i], "read %d", i);
	cr_assert(nfire > 30 && nfire < 70, "%u of 200 near a quarter", nfire);
	/* a second rule after it does not move its draws */
	fault_set_release(&set);
	fault_set_init(&set, devs, 2);
	ok("fault add p op=read probability=0.25 seed=42 error=EIO");
	ok("fault add other op=read probability=0.5 seed=7 error=EIO");
	unsigned fired_p = 0;
	for (int i = 0; i < 200; i++)
		if (fault_set_match(&set, &io, &h) && strcmp(h.rule, "p") == 0) {
			cr_assert(want[i], "read %d", i);
			fired_p++;
		}
	cr_assert_eq(fired_p, nfire);
}

Test(fault, delay_only)
{
	ok("fault add slow op=write delay_ms=250");
	struct fault_hit h;
	struct fault_io io = rd("f", 0, 0, 512);
	cr_assert_not(fault_set_match(&set, &io, &h), "a read");
	io.op = FAULT_WRITE;
	cr_assert(fault_set_match(&set, &io, &h));
	cr_assert_eq(h.delay_ms, 250);
	cr_assert_eq(h.error, 0);
}

Test(fault, bitflip_names_one_bit_in_the_covered_part)
{
	ok("fault add flip op=read file=t range=4K+4K seed=9 corrupt=bitflip count=1");
	struct fault_hit h;
	struct fault_io io = rd("t", 0, 65536, 16384);
	cr_assert(fault_set_match(&set, &io, &h));
	cr_assert(h.bitflip);
	cr_assert_eq(h.error, 0);
	uint64_t st = 9;
	uint64_t want = 4096 * 8 + splitmix64_next(&st) % (4096 * 8);
	cr_assert_eq(h.bit, want);
	/* flipping it in a buffer changes exactly one bit */
	unsigned char *b = calloc(1, 16384);
	b[h.bit / 8] ^= (unsigned char)(1u << (h.bit % 8));
	unsigned bits = 0;
	for (int i = 0; i < 16384; i++)
		bits += (unsigned)__builtin_popcount(b[i]);
	cr_assert_eq(bits, 1);
	free(b);
}

Test(fault, torn_write_keeps_the_seeded_prefix)
{
	ok("fault add tear op=write torn=true sector_size=4K seed=5");
	struct fault_hit h;
	struct fault_io io = {.op = FAULT_WRITE, .device = "main", .dev_off = 8192, .len = 32768};
	cr_assert(fault_set_match(&set, &io, &h));
	uint64_t st = 5;
	cr_assert(h.torn);
	cr_assert_eq(h.error, 0);
	cr_assert_eq(h.torn_len, 4096 * (splitmix64_next(&st) % 8));
	/* an unaligned write is cut at the device's sector boundaries */
	io.dev_off = 4096 + 1000;
	io.len = 10000;
	cr_assert(fault_set_match(&set, &io, &h));
	/* boundaries at 8192 and 12288: prefixes 3096 and 7192 (15192 is past the end) */
	cr_assert_eq(h.torn_len, 3096 + 4096 * (splitmix64_next(&st) % 2));
}

Test(fault, flush_effects)
{
	ok("fault add ig op=flush flush=ignore count=1");
	ok("fault add lx op=flush flush=linux after=1 count=1");
	ok("fault add kd op=flush device=fast flush=keep-dirty error=ENOSPC after=1");
	struct fault_hit h;
	struct fault_io f = {.op = FAULT_FLUSH, .device = "main"};
	cr_assert(fault_set_match(&set, &f, &h));
	cr_assert_str_eq(h.rule, "ig");
	cr_assert_eq(h.flush, FAULT_FLUSH_IGNORE);
	cr_assert_eq(h.error, 0);
	cr_assert(fault_set_match(&set, &f, &h), "lx: its 2nd flush");
	cr_assert_str_eq(h.rule, "lx");
	cr_assert_eq(h.flush, FAULT_FLUSH_LINUX);
	cr_assert_eq(h.error, -EIO, "linux without error: EIO");
	cr_assert_not(fault_set_match(&set, &f, &h), "reported once");
	f.device = "fast";
	cr_assert_not(fault_set_match(&set, &f, &h), "kd: after = 1");
	for (int i = 0; i < 3; i++) {
		cr_assert(fault_set_match(&set, &f, &h));
		cr_assert_str_eq(h.rule, "kd");
		cr_assert_eq(h.error, -ENOSPC, "every time");
	}
}

Test(fault, keep_dirty_ignores_count_once_stuck)
{
	ok("fault add kd op=flush flush=keep-dirty count=1");
	struct fault_hit h;
	struct fault_io f = {.op = FAULT_FLUSH, .device = "main"};
	for (int i = 0; i < 4; i++)
		cr_assert(fault_set_match(&set, &f, &h), "flush %d", i);
}

Test(fault, trim_op)
{
	ok("fault add t op=trim error=EOPNOTSUPP");
	struct fault_hit h;
	struct fault_io io = {.op = FAULT_TRIM, .device = "main", .dev_off = 0, .len = 4096};
	cr_assert(fault_set_match(&set, &io, &h));
	cr_assert_eq(h.error, -EOPNOTSUPP);
}

Test(fault, first_firing_rule_decides_and_all_count)
{
	ok("fault add a op=read after=1 error=EIO");
	ok("fault add b op=read error=ENOSPC");
	struct fault_hit h;
	struct fault_io io = rd("f", 0, 0, 512);
	cr_assert(fault_set_match(&set, &io, &h));
	cr_assert_str_eq(h.rule, "b");
	cr_assert(fault_set_match(&set, &io, &h));
	cr_assert_str_eq(h.rule, "a");
	char *l = run("fault list");
	cr_assert_str_eq(l, "a op=read after=1 error=EIO matched=2 fired=1\n"
			    "b op=read error=ENOSPC matched=2 fired=1\nok\n");
	free(l);
}

Test(fault, malformed_commands_change_nothing)
{
	ok("fault add keep op=read error=EIO");
	refused("fault add keep op=write error=EIO", "error: fault add keep: a fault named "
						     "'keep' exists\n");
	refused("fault add x op=reed error=EIO",
		"error: fault add x: key 'op': 'reed' is not valid; allowed: read, write, flush, "
		"trim or any, several joined by ',' (':' in -o)\n");
	refused("fault add x error=EIOO",
		"error: fault add x: key 'error': 'EIOO' is not valid; allowed: an errno name "
		"(such as EIO, ENOSPC, EROFS)\n");
	refused("fault add x colour=red error=EIO",
		"error: fault add x: unknown key 'colour'; allowed: op, file, range, device, "
		"after, count, probability, seed, error, delay_ms, corrupt, torn, sector_size, "
		"flush\n");
	refused("fault add x error=EIO error=ENOSPC",
		"error: fault add x: key 'error' given twice\n");
	refused("fault add x op=read", "error: fault add: fault 'x' has no effect; give error, "
				       "delay_ms, corrupt, torn or flush\n");
	refused("fault add x range=0+4K error=EIO",
		"error: fault add: fault 'x': range needs file or device\n");
	refused("fault add x device=main range=4K+0 error=EIO",
		"error: fault add x: key 'range': '4K+0' is not valid; allowed: OFFSET+LENGTH in "
		"bytes or with K/M/G/T, LENGTH > 0 (such as 64K+4K)\n");
	refused("fault add x op=read flush=ignore",
		"error: fault add: fault 'x': flush = ignore needs op = flush\n");
	refused("fault add x op=flush flush=ignore error=EIO",
		"error: fault add: fault 'x': flush = ignore reports success; it takes no "
		"error\n");
	refused("fault add x op=read torn=true", "error: fault add: fault 'x': torn needs op = "
						 "write\n");
	refused("fault add x probability=0 error=EIO",
		"error: fault add x: key 'probability': '0' is not valid; allowed: a number "
		"greater than 0 and at most 1\n");
	refused("fault add x file=a device=main error=EIO",
		"error: fault add: fault 'x': file and device exclude each other (a file range "
		"is logical, a device range is on the device)\n");
	refused("fault add b/d error=EIO", "error: fault add: fault name 'b/d': use letters, "
					   "digits, '_', '.' and '-', at most 63\n");
	refused("fault add x file=\"a error=EIO", "error: unterminated quote\n");
	refused("fault add x noequals", "error: fault add x: 'noequals' is not KEY=VALUE\n");
	refused("fault del nosuch", "error: fault del: no fault named 'nosuch'\n");
	refused("fault frob", "error: unknown command 'fault frob'; allowed: fault add, fault "
			      "del, fault list\n");
	refused("fault", "error: usage: fault add|del|list ...\n");
	refused("fault list extra", "error: usage: fault list\n");
	char *l = run("fault list");
	cr_assert_str_eq(l, "keep op=read error=EIO matched=0 fired=0\nok\n");
	free(l);
}

Test(fault, other_commands_are_not_ours)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	cr_assert_eq(fault_command(&set, "sync-report", f), 1);
	cr_assert_eq(fault_command(&set, "faultless", f), 1);
	fclose(f);
	cr_assert_eq(len, 0);
	free(buf);
}

Test(fault, errno_names)
{
	cr_assert_eq(fault_errno_parse("EIO"), EIO);
	cr_assert_eq(fault_errno_parse("ENOSPC"), ENOSPC);
	cr_assert_eq(fault_errno_parse("EROFS"), EROFS);
	cr_assert_eq(fault_errno_parse("eio"), 0);
	cr_assert_eq(fault_errno_parse("5"), 0);
}

Test(fault, list_round_trips)
{
	ok("fault add r op=read,write device=fast range=1M+4K after=3 count=2 probability=0.5 "
	   "seed=11 delay_ms=5 error=EIO");
	char *l = run("fault list");
	cr_assert_str_eq(l, "r op=read,write device=fast range=1M+4K after=3 count=2 "
			    "probability=0.5 seed=11 error=EIO delay_ms=5 matched=0 fired=0\nok\n");
	/* the line without its counters is a command that adds the same rule */
	char *end = strstr(l, " matched=");
	*end = '\0';
	char *cmd;
	cr_assert(asprintf(&cmd, "fault add %s", l) > 0);
	ok("fault del r");
	ok(cmd);
	free(cmd);
	free(l);
}

#include "config.h"

/* Loads @text as a configuration file; its rules into the set.  Returns fault_set_load()'s. */
static int load_ini(const char *text, char *err, size_t errlen)
{
	char path[] = "/tmp/test_fault.XXXXXX";
	int fd = mkstemp(path);
	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	struct sfs_config c;
	config_init(&c);
	int rc = config_load_file(&c, path, err, errlen);
	if (!rc)
		rc = fault_set_load(&set, c.faults, c.nfaults, err, errlen);
	/* the messages name the file: make them the same in every run */
	for (char *at; rc && (at = strstr(err, path));) {
		memmove(at + 4, at + strlen(path), strlen(at + strlen(path)) + 1);
		memcpy(at, "FILE", 4);
	}
	config_free(&c);
	unlink(path);
	return rc;
}

Test(fault, ini_sections_become_rules)
{
	char err[1024] = "";
	cr_assert_eq(load_ini("[fault \"wal\"]\n"
			      "op = write\n"
			      "file = pg_wal/*\n"
			      "torn = true\n"
			      "seed = 3\n"
			      "\n"
			      "[fault \"slow\"]\n"
			      "delay_ms = 20\n",
			      err, sizeof err),
		     0, "%s", err);
	char *l = run("fault list");
	cr_assert_str_eq(l, "wal op=write file=pg_wal/* seed=3 torn=true matched=0 fired=0\n"
			    "slow delay_ms=20 matched=0 fired=0\nok\n");
	free(l);
}

Test(fault, ini_errors_name_file_line_and_key)
{
	char err[1024] = "";
	cr_assert_eq(load_ini("[fault \"a\"]\nop = read\nerror = EIOO\n", err, sizeof err),
		     -EINVAL);
	cr_assert_str_eq(err, "FILE:3: [fault \"a\"] key 'error': 'EIOO' is not valid; allowed: "
			      "an errno name (such as EIO, ENOSPC, EROFS)");
	cr_assert(fault_set_empty(&set));
	cr_assert_neq(load_ini("[fault \"a\"]\nerror = EIO\nerror = EROFS\n", err, sizeof err), 0);
	cr_assert_str_eq(err, "FILE:3: [fault \"a\"]: duplicated key 'error' (first at line 2)");
	cr_assert_neq(load_ini("[fault \"a\"]\nerror = EIO\n[fault \"a\"]\nerror = EIO\n", err,
			       sizeof err),
		      0);
	cr_assert_str_eq(err, "FILE:3: duplicated section [fault \"a\"] (first at FILE:1)");
	cr_assert_eq(load_ini("[fault \"b\"]\nop = read\n", err, sizeof err), -EINVAL);
	cr_assert_str_eq(err, "FILE:1: [fault \"b\"]: fault 'b' has no effect; give error, "
			      "delay_ms, corrupt, torn or flush");
	cr_assert_neq(load_ini("[fault]\nerror = EIO\n", err, sizeof err), 0);
	cr_assert_str_eq(err, "FILE:1: [fault] needs a name in double quotes: [fault \"NAME\"]");
}

Test(fault, linux_fails_once_then_lets_the_next_flush_through)
{
	/* before: without count it failed every flush, as keep-dirty does */
	ok("fault add lx op=flush flush=linux");
	struct fault_hit h;
	struct fault_io f = {.op = FAULT_FLUSH, .device = "main"};
	for (int i = 0; i < 4; i++)
		cr_assert_eq(fault_set_match(&set, &f, &h), i % 2 == 0, "flush %d", i);
	char *l = run("fault list");
	cr_assert_str_eq(l, "lx op=flush error=EIO flush=linux matched=4 fired=2\nok\n");
	free(l);
}

Test(fault, leading_slash_is_the_mount_root)
{
	ok("fault add s op=read file=/data/* error=EIO");
	struct fault_hit h;
	struct fault_io io = rd("data/x", 0, 0, 4096);
	cr_assert(fault_set_match(&set, &io, &h));
	char *l = run("fault list");
	cr_assert_str_eq(l, "s op=read file=data/* error=EIO matched=1 fired=1\nok\n");
	free(l);
}

Test(fault, device_range_within_the_device_and_sector_size_with_torn)
{
	fault_set_size(&set, 0, 32 << 20);
	refused("fault add far op=read device=main range=31M+2M error=EIO",
		"error: fault add far: key 'range': 31M+2M ends past the end of device 'main'; "
		"allowed: OFFSET+LENGTH within 0+32M\n");
	refused("fault add far op=read device=main range=32M+4K error=EIO",
		"error: fault add far: key 'range': 32M+4K ends past the end of device 'main'; "
		"allowed: OFFSET+LENGTH within 0+32M\n");
	ok("fault add near op=read device=main range=31M+1M error=EIO");
	ok("fault add other op=read device=fast range=1G+4K error=EIO"); /* size not known */
	refused("fault add ss op=write sector_size=4K error=EIO",
		"error: fault add: fault 'ss': sector_size goes with torn = true\n");
	ok("fault add ss op=write sector_size=4K torn=true");
}

Test(fault, cross_key_errors_name_the_key_line)
{
	char err[1024] = "";
	cr_assert_eq(load_ini("[fault \"r\"]\nop = read\nerror = EIO\nrange = 0+4K\n", err,
			      sizeof err),
		     -EINVAL);
	cr_assert_str_eq(err, "FILE:4: [fault \"r\"]: fault 'r': range needs file or device");
	cr_assert_eq(load_ini("[fault \"t\"]\ntorn = true\nop = read\n", err, sizeof err),
		     -EINVAL);
	cr_assert_str_eq(err, "FILE:2: [fault \"t\"]: fault 't': torn needs op = write");
	fault_set_size(&set, 0, 1 << 20);
	cr_assert_eq(load_ini("[fault \"d\"]\nrange = 1M+1\nop = read\ndevice = main\nerror = EIO\n",
			      err, sizeof err),
		     -EINVAL);
	cr_assert_str_eq(err, "FILE:2: [fault \"d\"]: key 'range': 1M+1 ends past the end of "
			      "device 'main'; allowed: OFFSET+LENGTH within 0+1M");
}

Test(fault, write_ini_sections_load_back)
{
	ok("fault add w op=write file=pg_wal/* after=2 torn=true sector_size=4K seed=9");
	ok("fault add \"q\" \"file=a ;b\" error=EIO");
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	fault_set_write_ini(&set, f);
	fclose(f);
	cr_assert_str_eq(buf, "\n# added through .scatterfs/control; as it stands: matched=0 "
			      "fired=0 (loaded back, it counts anew)\n"
			      "[fault \"w\"]\nop = write\nfile = pg_wal/*\nafter = 2\nseed = 9\n"
			      "torn = true\nsector_size = 4K\n"
			      "\n# fault 'q' (added through control) is left out: its file or "
			      "device value has a blank at an end or a ';' after a blank, which "
			      "an INI value cannot hold; as a command:\n"
			      "# fault add q file=\"a ;b\" error=EIO matched=0 fired=0\n");
	/* it loads back to the same rule w, and q's comment is a comment */
	fault_set_del(&set, "w");
	fault_set_del(&set, "q");
	char err[1024] = "";
	cr_assert_eq(load_ini(buf, err, sizeof err), 0, "%s", err);
	char *l = run("fault list");
	cr_assert_str_eq(l, "w op=write file=pg_wal/* after=2 seed=9 torn=true sector_size=4K "
			    "matched=0 fired=0\nok\n");
	free(l);
	free(buf);
}
