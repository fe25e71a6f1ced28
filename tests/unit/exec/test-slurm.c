/*
 * test-slurm.c - reading Slurm's answers (engine/exec/slurm_parse.c): one line of
 * `scontrol -o -d show job ID` as Slurm 22.05 (Debian 12's slurm-wlm)
 * prints it, captured from a one-node cluster: a GPU job running, the
 * same job completed (the GRES detail is gone then), a job cancelled
 * before it started, and made-up lines for what those runs could not show
 * (a failed job with its exit code, a signal, RunTime with days, GPU index
 * lists). Then the lines of `squeue --noheader --all --states=all
 * --jobs=... --Format=SLURM_QUEUE_FORMAT` that follow every job, captured
 * the same way (a GPU job running and completed, held, failed, not
 * launched, cancelled while pending, requeued), and made-up ones for long
 * run times and what must be refused. The end-to-end tests are
 * tests/pipeline/slurm-*.sh.
 */
#include <limits.h>
#include <string.h>

#include "slurm.h"
#include "test.h"

static const char running[] =
	"JobId=23 JobName=t1 UserId=root(0) GroupId=root(0) MCS_label=N/A Priority=4294901737 "
	"Nice=0 Account=(null) QOS=(null) JobState=RUNNING Reason=None Dependency=(null) "
	"Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0 DerivedExitCode=0:0 "
	"RunTime=00:00:00 TimeLimit=UNLIMITED TimeMin=N/A SubmitTime=2026-12-01T06:39:06 "
	"EligibleTime=2026-12-01T06:39:06 AccrueTime=2026-12-01T06:39:06 "
	"StartTime=2026-12-01T06:39:07 EndTime=Unknown Deadline=N/A SuspendTime=None "
	"SecsPreSuspend=0 LastSchedEval=2026-12-01T06:39:07 Scheduler=Main Partition=debug "
	"AllocNode:Sid=localhost:1239 ReqNodeList=(null) ExcNodeList=(null) NodeList=vm "
	"BatchHost=vm NumNodes=1 NumCPUs=1 NumTasks=1 CPUs/Task=1 ReqB:S:C:T=0:0:*:* "
	"TRES=cpu=1,node=1,billing=1 Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=* "
	"JOB_GRES=gpu:2   Nodes=vm CPU_IDs=0 Mem=0 GRES=gpu:2(IDX:0-1) MinCPUsNode=1 "
	"MinMemoryNode=0 MinTmpDiskNode=0 Features=(null) DelayBoot=00:00:00 OverSubscribe=OK "
	"Contiguous=0 Licenses=(null) Network=(null) Command=(null) WorkDir=/tmp "
	"StdErr=/tmp/x-23.out StdIn=/dev/null StdOut=/tmp/x-23.out Power= "
	"TresPerNode=gres:gpu:2 \n";

static const char completed[] =
	"JobId=23 JobName=t1 UserId=root(0) GroupId=root(0) MCS_label=N/A Priority=4294901737 "
	"Nice=0 Account=(null) QOS=(null) JobState=COMPLETED Reason=None Dependency=(null) "
	"Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0 DerivedExitCode=0:0 "
	"RunTime=00:00:02 TimeLimit=UNLIMITED TimeMin=N/A SubmitTime=2026-12-01T06:39:06 "
	"StartTime=2026-12-01T06:39:07 EndTime=2026-12-01T06:39:09 Partition=debug "
	"NodeList=vm BatchHost=vm NumNodes=1 NumCPUs=1 JOB_GRES=gpu:2   Nodes=vm CPU_IDs=0 "
	"Mem=0 GRES= MinCPUsNode=1 WorkDir=/tmp StdOut=/tmp/x-23.out Power= "
	"TresPerNode=gres:gpu:2 \n";

static const char cancelled_pending[] =
	"JobId=24 JobName=wrap UserId=root(0) GroupId=root(0) MCS_label=N/A "
	"Priority=4294901736 Nice=0 Account=(null) QOS=(null) JobState=CANCELLED Reason=None "
	"Dependency=(null) Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0 "
	"DerivedExitCode=0:0 RunTime=00:00:00 TimeLimit=UNLIMITED TimeMin=N/A "
	"StartTime=2026-12-01T06:39:12 EndTime=2026-12-01T06:39:12 Partition=debug NodeList= "
	"NumNodes=1 NumCPUs=1 NumTasks=N/A WorkDir=/tmp StdOut=/tmp/x-24.out Power= \n";

/* slurm_parse_job reads text into *in, with state, node and run_s
 * (seconds) as given. */
static void expect_job(const char *text, struct slurm_info *in, const char *state,
		       const char *node, long run_s)
{
	ASSERT_EQ(slurm_parse_job(text, in), 0);
	ASSERT_STREQ(in->state, state);
	ASSERT_STREQ(in->node, node);
	ASSERT_EQ(in->run_s, run_s);
}

/* in lists n GPUs, those of want in that order. */
static void expect_gpus(const struct slurm_info *in, int n, const int *want)
{
	int i;

	ASSERT_EQ(in->ngpus, n);
	for (i = 0; i < n; i++)
		ASSERT_EQ(in->gpus[i], want[i]);
}

TEST(running_gpu_job)
{
	struct slurm_info in;

	expect_job(running, &in, "RUNNING", "vm", 0);
	ASSERT_STREQ(in.reason, "");
	ASSERT_EQ(in.exit_code, 0);
	ASSERT_EQ(in.signal, 0);
	ASSERT_EQ(in.restarts, 0);
	expect_gpus(&in, 2, (const int[]){ 0, 1 });
	ASSERT(!slurm_state_final(in.state));
}

TEST(completed_job)
{
	struct slurm_info in;

	expect_job(completed, &in, "COMPLETED", "vm", 2);
	ASSERT_EQ(in.ngpus, 0);
	ASSERT(slurm_state_final(in.state));
}

TEST(cancelled_before_start)
{
	struct slurm_info in;

	expect_job(cancelled_pending, &in, "CANCELLED", "", 0);
	ASSERT(slurm_state_final(in.state));
}

TEST(exit_codes_and_times)
{
	struct slurm_info in;

	expect_job("JobId=5 JobState=FAILED Reason=NonZeroExitCode Restarts=2 ExitCode=3:0 "
		   "RunTime=1-02:03:04 BatchHost=n17 GRES=gpu(IDX:1,3,5-6)", &in, "FAILED", "n17",
		   93784);
	ASSERT_STREQ(in.reason, "NonZeroExitCode");
	ASSERT_EQ(in.exit_code, 3);
	ASSERT_EQ(in.signal, 0);
	ASSERT_EQ(in.restarts, 2);
	expect_gpus(&in, 4, (const int[]){ 1, 3, 5, 6 });
	expect_job("JobId=6 JobState=TIMEOUT Reason=TimeLimit ExitCode=0:15 RunTime=05:00", &in,
		   "TIMEOUT", "", 300);
	ASSERT_EQ(in.signal, 15);
	/* A key inside another key's name does not count. */
	ASSERT_EQ(slurm_parse_job("JobId=7 OldJobState=RUNNING", &in), -EINVAL);
	ASSERT_EQ(slurm_parse_job("slurm_load_jobs error: Invalid job id specified", &in), -EINVAL);
}

/* Numbers too large for their fields saturate instead of overflowing: a
 * run time past any int64_t of nanoseconds reads as SLURM_RUN_S_MAX, so a
 * timeout still fires; counts, codes and GPU indices stop at INT_MAX. */
TEST(huge_numbers)
{
	struct slurm_info in;
	char id[32];

	expect_job("JobId=5 JobState=RUNNING Restarts=99999999999999999999 "
		   "ExitCode=4294967296:99999999999 RunTime=106751991167300-15:30:08 "
		   "GRES=gpu(IDX:2147483646-99999999999999999999,0)", &in, "RUNNING", "",
		   SLURM_RUN_S_MAX);
	ASSERT_EQ(in.restarts, INT_MAX);
	ASSERT_EQ(in.exit_code, INT_MAX);
	ASSERT_EQ(in.signal, INT_MAX);
	expect_gpus(&in, 3, (const int[]){ 2147483646, 2147483647, 0 });
	expect_job("JobId=5 JobState=RUNNING RunTime=99999999999999999999999:00:00", &in,
		   "RUNNING", "", SLURM_RUN_S_MAX);
	expect_job("JobId=5 JobState=RUNNING RunTime=24855-03:14:07", &in, "RUNNING", "",
		   SLURM_RUN_S_MAX);
	expect_job("JobId=5 JobState=RUNNING RunTime=24855-03:14:06", &in, "RUNNING", "",
		   SLURM_RUN_S_MAX - 1);
	expect_job("JobId=5 JobState=RUNNING RunTime=UNLIMITED GRES=gpu(IDX:3000000000)", &in,
		   "RUNNING", "", -1);
	ASSERT_EQ(in.ngpus, 0);
	/* Signs and blanks are no numbers. */
	expect_job("JobId=5 JobState=RUNNING RunTime=-5-00:00:00 ExitCode=-1:0", &in, "RUNNING",
		   "", -1);
	ASSERT_EQ(in.exit_code, 0);
	expect_job("JobId=5 JobState=RUNNING RunTime=1-+2:00:00", &in, "RUNNING", "", -1);
	ASSERT_EQ(slurm_parse_queue("8|RUNNING|99999999999999999999|99999999999999:59:59|n17|None|",
				    id, &in), 0);
	ASSERT_EQ(in.restarts, INT_MAX);
	ASSERT_EQ(in.run_s, SLURM_RUN_S_MAX);
}

/* squeue's lines, as captured: "ID|STATE|RESTARTS|TIMEUSED|BATCHHOST|REASON|". */
TEST(queue_lines)
{
	static const struct {
		const char *line, *id, *state, *node, *reason;
		int restarts;
		long run_s;
	} cases[] = {
		{"86|RUNNING|0|0:07|vm|None|\n", "86", "RUNNING", "vm", "", 0, 7},
		{"86|COMPLETED|0|0:20|vm|None|\n", "86", "COMPLETED", "vm", "", 0, 20},
		{"87|PENDING|0|0:00|n/a|JobHeldUser|\n", "87", "PENDING", "", "JobHeldUser", 0, 0},
		{"88|FAILED|0|0:00|vm|NonZeroExitCode|\n", "88", "FAILED", "vm", "NonZeroExitCode", 0,
		 0},
		{"89|FAILED|0|0:00|vm|JobLaunchFailure|\n", "89", "FAILED", "vm", "JobLaunchFailure",
		 0, 0},
		{"90|CANCELLED|0|0:00|n/a|BeginTime|\n", "90", "CANCELLED", "", "BeginTime", 0, 0},
		/* scontrol requeue 91: the old attempt ends, then it waits */
		{"91|COMPLETING|1|0:00|vm|None|\n", "91", "COMPLETING", "vm", "", 1, 0},
		{"91|PENDING|1|0:00|n/a|BeginTime|\n", "91", "PENDING", "", "BeginTime", 1, 0},
		/* made up: hours, days, no newline, a reason with a space */
		{"7|RUNNING|0|12:34:56|n17|None|\n", "7", "RUNNING", "n17", "", 0, 45296},
		{"8|RUNNING|3|1-02:03:04|n17|None|", "8", "RUNNING", "n17", "", 3, 93784},
		{"9|PENDING|0|INVALID|n/a|some reason|\n", "9", "PENDING", "", "some reason", 0, -1},
	};
	struct slurm_info in;
	char id[32];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(&in, 0x55, sizeof(in));
		ASSERT_EQ(slurm_parse_queue(cases[i].line, id, &in), 0);
		ASSERT_STREQ(id, cases[i].id);
		ASSERT_STREQ(in.state, cases[i].state);
		ASSERT_STREQ(in.node, cases[i].node);
		ASSERT_STREQ(in.reason, cases[i].reason);
		ASSERT_EQ(in.restarts, cases[i].restarts);
		ASSERT_EQ(in.run_s, cases[i].run_s);
		ASSERT_EQ(in.exit_code, 0);
		ASSERT_EQ(in.signal, 0);
		ASSERT_EQ(in.ngpus, 0);
	}
}

TEST(queue_lines_refused)
{
	static const char *const bad[] = {
		"slurm_load_jobs error: Invalid job id specified\n",
		"slurm_load_jobs error: Unable to contact slurm controller (connect failure)\n",
		"",
		"\n",
		"86|RUNNING|0|0:07|vm|None\n",   /* no closing '|': cut short */
		"86|RUNNING|0|0:07|vm|\n",
		"86|RUNNING|0|0:07\n",
		"|RUNNING|0|0:07|vm|None|\n",   /* no id */
		"86||0|0:07|vm|None|\n",        /* no state */
		"x86|RUNNING|0|0:07|vm|None|\n",
		"86|RUNNING|n|0:07|vm|None|\n",
		"JOBID|STATE|RESTARTCNT|TIME|EXEC_HOST|REASON|\n", /* a header */
	};
	struct slurm_info in;
	char id[32];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ASSERT_EQ(slurm_parse_queue(bad[i], id, &in), -EINVAL);
}

TEST(final_states)
{
	static const char *const final[] = {"COMPLETED", "FAILED", "TIMEOUT", "CANCELLED",
					    "NODE_FAIL", "PREEMPTED", "OUT_OF_MEMORY",
					    "BOOT_FAIL", "DEADLINE"};
	static const char *const live[] = {"PENDING", "RUNNING", "COMPLETING", "CONFIGURING",
					   "SUSPENDED", "REQUEUED", "RESIZING", ""};
	size_t i;

	for (i = 0; i < sizeof(final) / sizeof(final[0]); i++)
		ASSERT(slurm_state_final(final[i]));
	for (i = 0; i < sizeof(live) / sizeof(live[0]); i++)
		ASSERT(!slurm_state_final(live[i]));
}

int main(void)
{
	RUN(running_gpu_job);
	RUN(completed_job);
	RUN(cancelled_before_start);
	RUN(exit_codes_and_times);
	RUN(huge_numbers);
	RUN(queue_lines);
	RUN(queue_lines_refused);
	RUN(final_states);
	return 0;
}
