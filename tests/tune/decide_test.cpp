// decide() and judge_end(): every rule of what a result and the end of a
// group mean for a trial, without processes.
#include "tune/execution/decide.h"

#include <doctest/doctest.h>

using namespace tune;

namespace {

ResultVerdicts at(int64_t iteration, Decision scheduler, int64_t checkpoint = 0) {
  ResultVerdicts v;
  v.iteration = iteration;
  v.scheduler = scheduler;
  v.scheduler_name = "ASHA";
  v.checkpoint_iteration = checkpoint;
  return v;
}

}  // namespace

TEST_CASE("decide: the scheduler's decision, with its reason") {
  CHECK(decide(at(3, Decision::kContinue)).kind == Action::Kind::kContinue);
  const Action stop = decide(at(3, Decision::kStop));
  CHECK(stop.kind == Action::Kind::kStop);
  CHECK(stop.reason == "stopped by scheduler ASHA at iteration 3");
  CHECK(stop.decision() == Decision::kStop);
  const Action pause = decide(at(4, Decision::kPause, 4));
  CHECK(pause.kind == Action::Kind::kPause);
  CHECK(pause.reason == "paused by scheduler at iteration 4 (checkpoint 4)");
  CHECK(pause.decision() == Decision::kPause);
}

TEST_CASE("decide: a scheduler that gives its reason is quoted, not named by its status line") {
  ResultVerdicts v = at(3, Decision::kStop);
  v.scheduler_reason =
      "AsyncHyperBand at rung 2 of 3 (milestone 3): score 0.1 is below the cut-off";
  CHECK(decide(v).reason ==
        "stopped by scheduler AsyncHyperBand at rung 2 of 3 (milestone 3): score 0.1 is below "
        "the cut-off, at iteration 3");
  v = at(4, Decision::kPause, 4);
  v.scheduler_reason = "MedianStoppingRule at training_iteration 4: worse than the median";
  CHECK(decide(v).reason ==
        "paused by scheduler at iteration 4 (checkpoint 4): "
        "MedianStoppingRule at training_iteration 4: worse than the median");
  CHECK(judge_end({.phase = TrialPhase::kRunning, .all_done = true, .iteration = 1}).reason ==
        "completed after 1 iteration");
}

TEST_CASE("decide: a stopper's STOP overrides the scheduler's CONTINUE and PAUSE, not its STOP") {
  ResultVerdicts v = at(5, Decision::kPause, 5);
  v.stopper_reason = "training_iteration >= 5";
  CHECK(decide(v).kind == Action::Kind::kStop);
  CHECK(decide(v).reason == "training_iteration >= 5");
  v.scheduler = Decision::kStop;
  CHECK(decide(v).reason == "stopped by scheduler ASHA at iteration 5");
}

TEST_CASE("decide: stop_all stops every trial at its next result") {
  ResultVerdicts v = at(2, Decision::kContinue);
  v.stop_all_reason = "time budget of 10 s used";
  CHECK(decide(v).kind == Action::Kind::kStop);
  CHECK(decide(v).reason == "time budget of 10 s used");
}

TEST_CASE("decide: an interrupt pauses a continuing trial to keep its progress") {
  ResultVerdicts v = at(6, Decision::kContinue, 5);
  v.pause_requested = true;
  CHECK(decide(v).kind == Action::Kind::kPause);
  CHECK(decide(v).reason == "interrupted; resumes from checkpoint 5");
  v.scheduler = Decision::kStop;  // a stop is final, interrupt or not
  CHECK(decide(v).kind == Action::Kind::kStop);
}

TEST_CASE("decide: a pause of a trial that never checkpointed pauses it, never fails it") {
  const Action a = decide(at(2, Decision::kPause, 0));
  CHECK(a.kind == Action::Kind::kPause);
  CHECK(a.decision() == Decision::kPause);
  CHECK(a.reason == "paused by scheduler at iteration 2 (no checkpoint)");
  // When its ranks cannot wait in place, its reason says it restarts from scratch.
  const std::string from_scratch = paused_from_scratch_reason("HyperBand", 2);
  CHECK(from_scratch.find("HyperBand at iteration 2 without a checkpoint") != std::string::npos);
  CHECK(from_scratch.find("restarts from scratch") != std::string::npos);
}

TEST_CASE("judge_end: where a trial goes when its group is gone") {
  GroupEnd end;
  end.iteration = 8;
  SUBCASE("every rank said DONE") {
    end.all_done = true;
    CHECK(judge_end(end).next == TrialPhase::kTerminated);
    CHECK(judge_end(end).reason == "completed after 8 iterations");
    end.phase = TrialPhase::kStopping;
    end.end_reason = "stopped by stopper";
    CHECK(judge_end(end).reason == "stopped by stopper");
    end.phase = TrialPhase::kPausing;
    CHECK(judge_end(end).next == TrialPhase::kPaused);
    CHECK_FALSE(judge_end(end).failure);
  }
  SUBCASE("a failure is retried within max_failures, then ERROR") {
    end.phase = TrialPhase::kFailing;
    end.error = "rank 1 exited with code 3";
    end.checkpoint_iteration = 4;
    end.max_failures = 2;
    end.num_failures = 1;
    EndOutcome retry = judge_end(end);
    CHECK(retry.next == TrialPhase::kPending);
    CHECK(retry.failure);
    CHECK(retry.reason ==
          "restarting after failure 2 (from checkpoint 4): rank 1 exited with code 3");
    end.num_failures = 2;
    CHECK(judge_end(end).next == TrialPhase::kError);
    CHECK(judge_end(end).reason == "rank 1 exited with code 3");
    end.max_failures = -1;
    CHECK(judge_end(end).next == TrialPhase::kPending);
    end.experiment_stopping = true;  // no retries while the experiment stops
    CHECK(judge_end(end).next == TrialPhase::kError);
  }
  SUBCASE("a run the cluster ended is retried uncounted, past max_failures too") {
    end.phase = TrialPhase::kFailing;
    end.error = "node n2 failed (srun: error: Node failure on n2)";
    end.checkpoint_iteration = 4;
    end.max_failures = 1;
    end.num_failures = 1;
    end.cluster_fault = true;
    EndOutcome retry = judge_end(end);
    CHECK(retry.next == TrialPhase::kPending);
    CHECK_FALSE(retry.failure);
    CHECK(retry.reason ==
          "restarting from checkpoint 4 (not counted against max_failures): node n2 failed "
          "(srun: error: Node failure on n2)");
    end.experiment_stopping = true;
    CHECK(judge_end(end).next == TrialPhase::kError);
  }
  SUBCASE("the cluster ending a trial's runs again and again without a result counts once") {
    end.phase = TrialPhase::kFailing;
    end.error = "Slurm holds its step pending";
    end.checkpoint_iteration = 4;
    end.max_failures = 1;
    end.cluster_fault = true;
    end.cluster_ends_in_row = kClusterEndsCharged - 2;
    CHECK_FALSE(judge_end(end).failure);
    end.cluster_ends_in_row = kClusterEndsCharged - 1;
    EndOutcome charged = judge_end(end);
    CHECK(charged.next == TrialPhase::kPending);
    CHECK(charged.failure);
    CHECK(charged.reason ==
          "restarting after failure 1 (from checkpoint 4): Slurm holds its step pending; the "
          "cluster ended 10 runs of the trial in a row without a new result, so this one counts "
          "against max_failures");
    end.num_failures = 1;
    CHECK(judge_end(end).next == TrialPhase::kError);
  }
  SUBCASE("a rank that exits without DONE is a failure even without an error") {
    end.all_done = false;
    CHECK(judge_end(end).next == TrialPhase::kError);
  }
  SUBCASE("a group killed for an interrupt pauses, whatever its ranks said") {
    end.phase = TrialPhase::kInterrupted;
    CHECK(judge_end(end).next == TrialPhase::kPaused);
    CHECK(judge_end(end).reason == "interrupted; restarts from scratch (no checkpoint)");
    end.checkpoint_iteration = 3;
    CHECK(judge_end(end).reason == "interrupted; resumes from checkpoint 3");
    CHECK_FALSE(judge_end(end).failure);
  }
}
