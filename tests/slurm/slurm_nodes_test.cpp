// Placement over an allocation's nodes and the nodes' health
// (tune/launch/nodes.h), and what srun and squeue say, without Slurm.
#include <doctest/doctest.h>

#include <csignal>

#include "core/errors.h"
#include "tune/launch/make_launcher.h"
#include "tune/launch/nodes.h"
#include "tune/launch/slurm/state.h"

using namespace tune;

TEST_CASE("allocation CPUs per node are read as Slurm writes them") {
  CHECK(parse_cpus_per_node("2(x3),1") == std::vector<int>{2, 2, 2, 1});
  CHECK(parse_cpus_per_node("4") == std::vector<int>{4});
  CHECK_THROWS_WITH_AS(parse_cpus_per_node("2(x"), doctest::Contains("'2(x'"), ConfigError);
  CHECK_THROWS_AS(parse_cpus_per_node(""), ConfigError);
}

TEST_CASE("a group is packed onto as few nodes as fit, spread only when it must") {
  std::vector<SlurmNode> nodes{{"n1", 4, 3}, {"n2", 4, 0}, {"n3", 2, 0}};
  CHECK(place_ranks(nodes, 2, 1) == std::vector<int>{2, 2});  // the fullest node that holds both
  CHECK(place_ranks(nodes, 4, 1) == std::vector<int>{1, 1, 1, 1});
  CHECK(place_ranks(nodes, 3, 2) == std::vector<int>{1, 1, 2});  // no node holds 6 CPUs
  CHECK(place_ranks(nodes, 4, 2).empty());                       // 7 free, but not in pairs
}

TEST_CASE(
    "an allocation's GPUs per node are read from scontrol show job as Slurm 22.05 writes it") {
  // Excerpts of `scontrol show -d job` in a 22.05 allocation.
  const std::string exclusive =
      "JobId=7 JobName=tunerun\n   NumNodes=2 NumCPUs=4 NumTasks=2 CPUs/Task=1\n"
      "   JOB_GRES=gpu:4\n     Nodes=n[1-2] CPU_IDs=0-1 Mem=0 GRES=gpu:2(IDX:0-1)\n"
      "   MinCPUsNode=1 MinMemoryNode=0\n";
  CHECK(parse_job_gpus(exclusive) == std::vector<std::pair<std::string, int>>{{"n[1-2]", 2}});
  const std::string uneven =
      "     Nodes=n1 CPU_IDs=0 Mem=0 GRES=gpu:a100:2(IDX:0-1),gpu:v100:1(IDX:3)\n"
      "     Nodes=n2 CPU_IDs=0 Mem=0 GRES=gpu(IDX:0,2-3),mps:100(0/100)\n"
      "     Nodes=n3 CPU_IDs=0-1 Mem=0 GRES=\n";
  CHECK(parse_job_gpus(uneven) ==
        std::vector<std::pair<std::string, int>>{{"n1", 3}, {"n2", 3}, {"n3", 0}});
  CHECK_THROWS_WITH_AS(parse_job_gpus("  Nodes=n1 GRES=gpu:lots(IDX:x)\n"),
                       doctest::Contains("'gpu:lots(IDX:x)'"), ConfigError);
}

TEST_CASE("a rank's GPUs are on its node: GPUs limit placement as CPUs do") {
  std::vector<SlurmNode> nodes{{"n1", 4, 0, 2}, {"n2", 4, 0, 2}};
  CHECK(place_ranks(nodes, 2, 1, 1) == std::vector<int>{0, 0});
  nodes[0].gpus_used = 2;  // n1's CPUs are free, its GPUs are not
  CHECK(place_ranks(nodes, 2, 1, 1) == std::vector<int>{1, 1});
  CHECK(place_ranks(nodes, 2, 1) == std::vector<int>{0, 0});  // ranks without GPUs still fit
  nodes[1].gpus_used = 1;
  CHECK(place_ranks(nodes, 2, 1, 1).empty());
  nodes[0].gpus_used = 1;
  CHECK(place_ranks(nodes, 2, 1, 1) == std::vector<int>{0, 1});  // spread when it must
  CHECK(could_ever_place(nodes, 4, 1, 1));
  CHECK_FALSE(could_ever_place(nodes, 1, 1, 3));  // no node has 3 GPUs
  CHECK_FALSE(could_ever_place(nodes, 5, 1, 1));  // 4 GPUs in all
}

TEST_CASE("Slurm's node states: down, drained and not responding nodes take no steps") {
  for (const char* up : {"idle", "mix", "alloc", "comp"}) CHECK(slurm_state_usable(up));
  for (const char* down : {"down", "down*", "idle*", "drain", "drng", "fail", "maint"}) {
    CHECK_FALSE(slurm_state_usable(down));
  }
}

TEST_CASE("a node whose step died is suspected until a probe step passes there") {
  std::vector<SlurmNode> nodes{{"n1", 2}, {"n2", 2}};
  suspect_node(nodes[1]);
  CHECK(place_ranks(nodes, 2, 1) == std::vector<int>{0, 0});
  CHECK(place_ranks(nodes, 2, 2).empty());  // n2 would be needed
  CHECK(could_ever_place(nodes, 2, 2));
  CHECK(probe_passed(nodes[1]).empty());  // never failed: nothing to say
  CHECK(nodes[1].failures == 0);
  CHECK(place_ranks(nodes, 2, 2) == std::vector<int>{0, 1});
}

TEST_CASE("a node that failed once comes back through Slurm and a probe but after twice never") {
  std::vector<SlurmNode> nodes{{"n1", 2}, {"n2", 2}};
  suspect_node(nodes[1]);
  CHECK(apply_slurm_state(nodes[1], "down*") ==
        "node n2 failed (Slurm reports it down*); no trial is placed there until Slurm "
        "reports it up");
  CHECK(nodes[1].health == NodeHealth::kDown);
  CHECK(place_ranks(nodes, 1, 1) == std::vector<int>{0});
  CHECK(apply_slurm_state(nodes[1], "down*").empty());  // still down: no new failure
  CHECK(nodes[1].failures == 1);
  apply_slurm_state(nodes[1], "idle");  // back in Slurm: probed before use
  CHECK(nodes[1].health == NodeHealth::kSuspected);
  CHECK(probe_passed(nodes[1]) == "node n2 is back: a probe step ran there");
  CHECK(place_ranks(nodes, 2, 2) == std::vector<int>{0, 1});

  suspect_node(nodes[1]);
  CHECK(node_failed(nodes[1], "a probe step there exited with code 1") ==
        "node n2 failed twice (a probe step there exited with code 1); it is not used again in "
        "this allocation");
  apply_slurm_state(nodes[1], "idle");
  CHECK(probe_passed(nodes[1]).empty());
  CHECK(nodes[1].health == NodeHealth::kRetired);
  CHECK(place_ranks(nodes, 1, 2) == std::vector<int>{0});
  CHECK_FALSE(could_ever_place(nodes, 2, 2));  // n1 alone can never hold 4 CPUs
  CHECK(could_ever_place(nodes, 1, 2));
}

TEST_CASE("a node Slurm drains takes no ranks while it is drained, without a failure") {
  std::vector<SlurmNode> nodes{{"n1", 2}, {"n2", 2}};
  CHECK(apply_slurm_state(nodes[0], "drain") ==
        "node n1 is drain in Slurm; no trial is placed there while it is");
  CHECK(apply_slurm_state(nodes[0], "drain").empty());  // said once
  CHECK(place_ranks(nodes, 2, 1) == std::vector<int>{1, 1});
  apply_slurm_state(nodes[0], "idle");
  CHECK(nodes[0].failures == 0);
  CHECK(place_ranks(nodes, 2, 2) == std::vector<int>{0, 1});
}

TEST_CASE("a step that ended well on a node Slurm then reports down counts as its failure") {
  // srun in a --no-kill allocation exits 0 when Slurm declares a node of its step failed.
  std::vector<SlurmNode> nodes{{"n1", 2}, {"n2", 2}};
  nodes[1].step_ended = true;
  CHECK(
      apply_slurm_state(nodes[1], "down*").starts_with("node n2 failed (Slurm reports it down*)"));
  CHECK(nodes[1].failures == 1);
  // Without a step there, a down node is only left alone.
  nodes[0].step_ended = false;
  CHECK(apply_slurm_state(nodes[0], "idle*").starts_with("node n1 is idle* in Slurm"));
  CHECK(nodes[0].failures == 0);
  // A drain is not a failure, even of a suspected node: it waits, then is probed.
  std::vector<SlurmNode> drained{{"n3", 2}};
  suspect_node(drained[0]);
  CHECK(apply_slurm_state(drained[0], "drain").empty());
  CHECK(drained[0].failures == 0);
  CHECK(drained[0].health == NodeHealth::kSuspected);
}

TEST_CASE("one failure of a node counts once, however many ways it is seen") {
  std::vector<SlurmNode> nodes{{"n1", 2}, {"n2", 2}};
  CHECK(node_failed(nodes[1], "srun: error: Node failure on n2").starts_with("node n2 failed ("));
  // A probe there fails, Slurm reports it down: the same failure.
  CHECK(node_failed(nodes[1], "a probe step there exited with code 1").empty());
  CHECK(apply_slurm_state(nodes[1], "down*").empty());
  CHECK(nodes[1].failures == 1);
  CHECK(nodes[1].failure == "srun: error: Node failure on n2");
}

TEST_CASE("a node Slurm took out of the allocation is retired without a second failure") {
  std::vector<SlurmNode> nodes{{"n1", 2}, {"n2", 2}};
  node_failed(nodes[1], "srun: error: Node failure on n2");
  apply_slurm_state(nodes[1], "idle");  // it came back, but no longer as the job's
  CHECK(nodes[1].health == NodeHealth::kSuspected);
  CHECK(node_left(nodes[1], "7") ==
        "node n2 is no longer in allocation 7 (Slurm took it out when it failed); it is not "
        "used again in this run");
  CHECK(nodes[1].health == NodeHealth::kRetired);
  CHECK(nodes[1].failures == 1);
  CHECK(node_left(nodes[1], "7").empty());
}

TEST_CASE("a node whose steps never start fails, though its probes pass") {
  std::vector<SlurmNode> nodes{{"n1", 2}, {"n2", 2}};
  const std::string held = "Slurm holds its step pending";
  // A step between that started there ends the row.
  CHECK(step_not_started(nodes[1], held).empty());
  CHECK(step_not_started(nodes[1], held).empty());
  step_started(nodes[1]);
  for (int i = 1; i < kUnstartedStepsFailed; ++i) {
    CHECK(step_not_started(nodes[1], held).empty());
    suspect_node(nodes[1]);
    probe_passed(nodes[1]);
    CHECK(nodes[1].usable());
  }
  CHECK(step_not_started(nodes[1], held) ==
        "node n2 failed (3 steps in a row there never started, though probe steps run there; "
        "the last: Slurm holds its step pending); no trial is placed there until Slurm reports "
        "it up");
  CHECK(nodes[1].failures == 1);
  CHECK_FALSE(nodes[1].usable());
  // Slurm says it is up; a probe passes; three more steps held there retire it.
  apply_slurm_state(nodes[1], "mix");
  probe_passed(nodes[1]);
  for (int i = 1; i < kUnstartedStepsFailed; ++i) CHECK(step_not_started(nodes[1], held).empty());
  CHECK(step_not_started(nodes[1], held).starts_with("node n2 failed twice (3 steps in a row"));
  CHECK(nodes[1].health == NodeHealth::kRetired);
  CHECK(nodes[0].unstarted_steps == 0);
}

TEST_CASE("failure counts of an earlier run carry over a resume") {
  std::vector<SlurmNode> nodes{{"n1", 2}, {"n2", 2}, {"n3", 2}};
  restore_node(nodes[0], 0);
  restore_node(nodes[1], 1);
  restore_node(nodes[2], 2);
  CHECK(nodes[0].health == NodeHealth::kUsable);
  CHECK(nodes[1].health == NodeHealth::kSuspected);  // probed before use
  CHECK(nodes[1].failures == 1);
  CHECK(nodes[2].health == NodeHealth::kRetired);
  // Its next failure is its second.
  probe_passed(nodes[1]);
  suspect_node(nodes[1]);
  CHECK(node_failed(nodes[1], "a probe step there exited with code 1")
            .starts_with("node n2 failed twice"));
}

TEST_CASE("a resume in a new allocation probes nodes that failed twice, and retires them next") {
  std::vector<SlurmNode> nodes{{"n1", 2}, {"n2", 2}};
  restore_node(nodes[0], 2, false);
  restore_node(nodes[1], 1, false);
  CHECK(nodes[0].health == NodeHealth::kSuspected);
  CHECK(nodes[0].failures == 2);
  CHECK(nodes[1].health == NodeHealth::kSuspected);
  probe_passed(nodes[0]);
  CHECK(nodes[0].usable());
  suspect_node(nodes[0]);
  CHECK(node_failed(nodes[0], "a probe step there exited with code 1")
            .starts_with("node n1 failed 3 times"));
  CHECK(nodes[0].health == NodeHealth::kRetired);
}

TEST_CASE("srun's own lines name the nodes that failed under a step, and a step Slurm holds") {
  const std::string crashed =
      "/usr/bin/setpriv --pdeathsig TERM -- /usr/bin/srun --jobid=7 ...\n"
      "srun: error: Node failure on n2\n"
      "srun: error: n1: task 0: Exited with exit code 1\n"
      "srun: error: Node failure on n2\n";
  SrunReport said = read_srun_output(crashed);
  REQUIRE(said.failed_nodes.size() == 1);
  CHECK(said.failed_nodes[0] ==
        std::pair<std::string, std::string>{"n2", "srun: error: Node failure on n2"});
  CHECK_FALSE(said.step_pending);
  said = read_srun_output(
      "srun: error: Task launch for StepId=7.3 failed on node n3: Communication connection "
      "failure\n");
  REQUIRE(said.failed_nodes.size() == 1);
  CHECK(said.failed_nodes[0].first == "n3");
  said = read_srun_output("srun: error: Cannot communicate with node 0.  Aborting job.\n", {"n2"});
  REQUIRE(said.failed_nodes.size() == 1);
  CHECK(said.failed_nodes[0].first == "n2");
  // A node that came back before Slurm noticed: srun numbers it among the step's nodes.
  said = read_srun_output(
      "srun: error: _server_write write failed: Bad file descriptor\n"
      "srun: error: Aborting, io error and missing step on node 1\n",
      {"n1", "n3"});
  REQUIRE(said.failed_nodes.size() == 1);
  CHECK(said.failed_nodes[0].first == "n3");
  said = read_srun_output(
      "srun: Job 7 step creation temporarily disabled, retrying (Requested nodes are busy)\n");
  CHECK(said.step_pending);
  CHECK(said.pending_line ==
        "srun: Job 7 step creation temporarily disabled, retrying (Requested nodes are busy)");
  said = read_srun_output(
      "srun: Job 7 step creation temporarily disabled, retrying (Requested nodes are busy)\n"
      "srun: Step created for job 7\n");
  CHECK_FALSE(said.step_pending);
}

TEST_CASE("a job's node list is read from scontrol show job, not its requested one") {
  CHECK(parse_job_nodelist("JobId=7 JobName=sh ReqNodeList=(null) ExcNodeList=(null) "
                           "NodeList=n[1,3] BatchHost=n1 NumNodes=2") == "n[1,3]");
  CHECK(parse_job_nodelist("JobId=7\n   ReqNodeList=n2 ExcNodeList=(null)\n   NodeList=n1\n") ==
        "n1");
  CHECK(parse_job_nodelist("JobId=7 NodeList=(null)").empty());
}

TEST_CASE("placement strategies as Ray's placement groups mean them") {
  using P = PlacementStrategy;
  std::vector<SlurmNode> nodes{{"n1", 4, 3}, {"n2", 4, 0}, {"n3", 2, 0}};
  // PACK is the default: as few nodes as fit.
  CHECK(place_ranks(nodes, 2, 1, 0, P::kPack) == place_ranks(nodes, 2, 1));
  // SPREAD: the node with fewest of the group's ranks, roomiest first; ranks per node consecutive.
  CHECK(place_ranks(nodes, 2, 1, 0, P::kSpread) == std::vector<int>{1, 2});
  CHECK(place_ranks(nodes, 4, 1, 0, P::kSpread) == std::vector<int>{0, 1, 1, 2});
  CHECK(place_ranks(nodes, 5, 1, 0, P::kSpread) == std::vector<int>{0, 1, 1, 2, 2});
  // STRICT_SPREAD: a node per rank, or nothing.
  CHECK(place_ranks(nodes, 3, 1, 0, P::kStrictSpread) == std::vector<int>{0, 1, 2});
  CHECK(place_ranks(nodes, 3, 2, 0, P::kStrictSpread).empty());  // n1 has 1 CPU free
  CHECK(could_ever_place(nodes, 3, 2, 0, P::kStrictSpread));
  CHECK_FALSE(could_ever_place(nodes, 4, 1, 0, P::kStrictSpread));  // three nodes
  // STRICT_PACK: one node, or nothing.
  CHECK(place_ranks(nodes, 2, 2, 0, P::kStrictPack) == std::vector<int>{1, 1});
  CHECK(place_ranks(nodes, 3, 2, 0, P::kStrictPack).empty());
  CHECK(place_ranks(nodes, 3, 2, 0, P::kPack) == std::vector<int>{1, 1, 2});
  CHECK_FALSE(could_ever_place(nodes, 3, 2, 0, P::kStrictPack));
  CHECK(could_ever_place(nodes, 2, 2, 0, P::kStrictPack));
  // Suspected and down nodes are not placed on, whatever the strategy.
  suspect_node(nodes[1]);
  CHECK(place_ranks(nodes, 2, 1, 0, P::kStrictSpread) == std::vector<int>{0, 2});
}

TEST_CASE("srun's lines of a task's end are that rank's exit, while the step goes on") {
  const auto exits = detail::read_task_exits(
      "srun: error: n1: task 0: Killed\n"
      "srun: error: n2: tasks 1-2,4: Exited with exit code 3\n"
      "srun: error: n1: task 0: Killed\n"
      "srun: error: n2: task 5: Segmentation fault (core dumped)\n"
      "srun: Job step aborted: Waiting up to 4 seconds for job step to finish.\n"
      "srun: error: Node failure on n3\n");
  REQUIRE(exits.size() == 5);
  CHECK(exits[0].task == 0);
  CHECK((exits[0].status.signaled && exits[0].status.signal == SIGKILL));
  CHECK(exits[1].task == 1);
  CHECK(exits[2].task == 2);
  CHECK(exits[3].task == 4);
  CHECK((!exits[3].status.signaled && exits[3].status.code == 3));
  CHECK((exits[4].task == 5 && exits[4].status.signal == SIGSEGV));
  CHECK(detail::read_task_exits("srun: error: Node failure on n3\n").empty());
}

TEST_CASE("srun's lines say when Slurm ended a step for the whole job") {
  CHECK(detail::step_cancelled_by_slurm(
      "slurmstepd-n1: error: *** STEP 4.0 ON n1 CANCELLED AT 2026-12-06T21:44:14 ***\n"));
  CHECK(detail::step_cancelled_by_slurm(
      "srun: Job step aborted: Waiting up to 4 seconds for job step to finish.\n"));
  CHECK(detail::step_cancelled_by_slurm("*** STEP 9.1 ON n2 CANCELLED AT x DUE TO TIME LIMIT ***"));
  CHECK_FALSE(detail::step_cancelled_by_slurm("srun: error: n1: task 0: Killed\n"));
}

TEST_CASE("squeue's time left is read in seconds, and no limit as none") {
  CHECK(detail::parse_time_left("59") == 59);
  CHECK(detail::parse_time_left("1:58") == 118);
  CHECK(detail::parse_time_left("2:00:01") == 7201);
  CHECK(detail::parse_time_left("1-00:00:10") == 86410);
  CHECK_FALSE(detail::parse_time_left("UNLIMITED"));
  CHECK_FALSE(detail::parse_time_left("NOT_SET"));
  CHECK_FALSE(detail::parse_time_left("x:y"));
}

TEST_CASE("a loopback control address is refused with the slurm launcher, naming the key") {
  CHECK(loopback_address("127.0.0.1"));
  CHECK(loopback_address("127.1.2.3"));
  CHECK(loopback_address("0.0.0.0"));
  CHECK(loopback_address("localhost"));
  CHECK(loopback_address("::1"));
  CHECK_FALSE(loopback_address("10.0.0.5"));
  CHECK_FALSE(loopback_address("198.18.0.1"));
  ExperimentSpec spec;
  spec.cluster.launcher = "slurm";
  spec.cluster.control_address = "127.0.0.1";
  try {
    check_control_address(spec);
    FAIL("a loopback address was accepted");
  } catch (const ConfigError& e) {
    CHECK(e.key() == "cluster.control_address");
    CHECK(std::string(e.what()).find("hostname -I") != std::string::npos);
  }
  spec.cluster.launcher = "local";
  CHECK_NOTHROW(check_control_address(spec));
  spec.cluster.launcher = "slurm";
  spec.cluster.control_address.clear();
  spec.cluster.control_interface = "lo";
  try {
    check_control_address(spec);
    FAIL("the loopback interface was accepted");
  } catch (const ConfigError& e) {
    CHECK(e.key() == "cluster.control_interface");
  }
}

TEST_CASE("squeue's steps are read as their names and node lists") {
  using Steps = std::vector<detail::ListedStep>;
  CHECK(detail::parse_listed_steps("spread_00000.2|n[1,3]\ntunerun-storage-probe|n2\n") ==
        Steps{{"spread_00000.2", "n[1,3]"}, {"tunerun-storage-probe", "n2"}});
  // A name with the separator in it keeps it; a line without one is no step.
  CHECK(detail::parse_listed_steps("a|b|n1\n\nbroken\n") == Steps{{"a|b", "n1"}});
}

TEST_CASE("a probe that fails on a failed node not yet back is the same outage, not a failure") {
  std::vector<SlurmNode> nodes{{"n1", 2}, {"n2", 2}};
  CHECK(node_failed(nodes[1], "srun: error: Node failure on n2") ==
        "node n2 failed (srun: error: Node failure on n2); no trial is placed there until Slurm "
        "reports it up");
  // Slurm never saw it down (it came back within SlurmdTimeout, or not yet):
  // probed, and the probe fails while it is still out.
  apply_slurm_state(nodes[1], "alloc");
  CHECK(nodes[1].health == NodeHealth::kSuspected);
  CHECK(node_failed(nodes[1], "a probe step there exited with code 233").empty());
  CHECK(nodes[1].health == NodeHealth::kDown);
  CHECK(nodes[1].failures == 1);
  // Back: the next probe passes, and the node takes ranks again.
  apply_slurm_state(nodes[1], "alloc");
  CHECK(probe_passed(nodes[1]) == "node n2 is back: a probe step ran there");
  CHECK(place_ranks(nodes, 2, 2) == std::vector<int>{0, 1});
  // A failure after that is its second.
  CHECK(node_failed(nodes[1], "srun: error: Node failure on n2") ==
        "node n2 failed twice (srun: error: Node failure on n2); it is not used again in this "
        "allocation");
}
