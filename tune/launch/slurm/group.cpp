// SlurmGroup (tune/launch/slurm/group.h): one srun job step per trial group.
#include "tune/launch/slurm/group.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <thread>
#include <utility>

#include "core/errors.h"
#include "tune/launch/nodes.h"
#include "tune/launch/slurm/state.h"

namespace tune::detail {
namespace {

constexpr auto kCancelWait = std::chrono::seconds(10);  // for srun to kill its step and exit

// One srun: every rank of the group is one of its tasks. srun's own lines
// (its stderr: srun.log, from `log_offset` on) say which node failed under
// it, and which task ended while the step goes on ("task 0: Killed": the
// rank's exit, seen at once through `log_watch`, an inotify descriptor on
// srun.log); squeue whether Slurm holds the step pending.
class SlurmGroup final : public LaunchedGroup {
 public:
  SlurmGroup(std::shared_ptr<SlurmState> state, std::string name, std::vector<int> nodes, int cpus,
             int gpus, ChildProcess srun, std::filesystem::path log, std::uintmax_t log_offset,
             int log_watch)
      : state_(std::move(state)),
        name_(std::move(name)),
        nodes_(std::move(nodes)),
        cpus_(cpus),
        gpus_(gpus),
        srun_(std::move(srun)),
        log_(std::move(log)),
        log_offset_(log_offset),
        failures_at_launch_(state_->allocation.failure_counts(nodes_)),
        log_watch_(log_watch),
        rank_exits_(nodes_.size()) {}
  ~SlurmGroup() override {
    if (!srun_.exit_status()) kill_and_wait();
    end();
    if (log_watch_ >= 0) ::close(log_watch_);
  }

  int size() const override { return static_cast<int>(nodes_.size()); }  // ranks
  int64_t pid(int) const override { return 0; }  // on another node: not comparable
  std::vector<int> exit_fds() const override {
    if (srun_.exit_status()) return {};
    if (log_watch_ < 0) return {srun_.pidfd()};
    return {srun_.pidfd(), log_watch_};
  }
  // A task srun reports ended is that rank's exit; srun ends when every
  // task ended (or the step was cancelled): the ranks not reported before
  // exit then, with srun's status (the worst of its tasks').
  std::vector<RankExit> reap() override {
    if (srun_.exit_status()) return {};
    drain_log_watch();
    std::vector<RankExit> exits;
    if (srun_.try_reap()) {
      end();
      for (int r = 0; r < size(); ++r) {
        if (!rank_exits_[r]) exits.push_back({r, *srun_.exit_status()});
      }
      return exits;
    }
    const std::string said = read_from(log_, log_offset_);
    // Slurm cancelled the step for the job (a time limit, the allocation
    // revoked): its tasks' ends are the allocation's, which Slurm's word
    // on the job says at once.
    if (step_cancelled_by_slurm(said)) {
      if (!std::exchange(cancel_seen_, true) && state_->job_end.empty()) state_->poll_slurm();
      return exits;
    }
    // A node's failure is srun's exit's to tell (its tasks there are lost, not ended).
    if (!read_srun_output(said).failed_nodes.empty()) return exits;
    for (const TaskExit& exit : read_task_exits(said)) {
      if (exit.task < 0 || exit.task >= size() || rank_exits_[exit.task]) continue;
      rank_exits_[exit.task] = exit.status;
      tasks_reported_ = true;
      exits.push_back({exit.task, exit.status});
    }
    return exits;
  }
  const std::optional<ExitStatus>& exit_status(int rank) const override {
    return rank_exits_.at(rank) ? rank_exits_[rank] : srun_.exit_status();
  }

  // srun forwards most signals to every task; on SIGTERM (and SIGKILL, which
  // srun cannot catch, so it is sent as SIGTERM) it kills the whole step.
  void signal(int signal) override {
    if (srun_.exit_status()) return;
    killed_ = true;
    ::kill(srun_.pid(), signal == SIGKILL ? SIGTERM : signal);
  }

  void kill_and_wait() override {
    signal(SIGTERM);
    const auto deadline = Clock::now() + kCancelWait;
    while (!srun_.exit_status() && !srun_.try_reap()) {
      if (Clock::now() > deadline) ::kill(srun_.pid(), SIGKILL);
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    end();
  }

  // srun's word on a node of the step, else a node of it that failed
  // since the launch (a probe there failed, Slurm reports it down).
  std::string node_failure() const override {
    if (!state_->job_end.empty()) return state_->job_end;
    if (!ended_) return {};
    if (!srun_failure_.empty()) return srun_failure_;
    const SlurmNode* node = state_->allocation.failed_since(nodes_, failures_at_launch_);
    return node ? fmt::format("node {} failed ({})", node->name, node->failure) : "";
  }

  // Undecided while a node of it is probed, or Slurm's word on it since
  // the step ended is yet to be read.
  bool nodes_decided() const override {
    if (!state_->job_end.empty()) return true;
    return std::none_of(nodes_.begin(), nodes_.end(), [&](int node) {
      const SlurmNode& n = state_->allocation.nodes[node];
      return (n.health == NodeHealth::kSuspected && !n.slurm_down) || n.step_ended;
    });
  }

  // srun waits while Slurm holds its step: squeue lists no step of that
  // name (srun's own "step creation temporarily disabled" line reaches its
  // log only later, buffered; once there, the reason quotes it: it says
  // why Slurm waits).
  std::string held_reason() override {
    if (srun_.exit_status() || tasks_reported_) return {};
    const auto steps = running_steps(state_->allocation.job_id);
    if (!steps || std::any_of(steps->begin(), steps->end(),
                              [&](const ListedStep& step) { return step.name == name_; })) {
      return {};
    }
    const SrunReport said = read_srun_output(read_from(log_, log_offset_));
    held_ = fmt::format(
        "Slurm holds its step pending, though the nodes' CPUs are free as tunerun counts them "
        "(squeue lists no step {} of job {}{}{})",
        name_, state_->allocation.job_id, said.step_pending ? "; " : "", said.pending_line);
    return held_;
  }

  void started() override {
    started_ = true;
    for (int node : nodes_) step_started(state_->allocation.nodes[node]);
  }

 private:
  // Slurm held the step for CPUs it still counts for a step that never
  // ends, not for its nodes' fault: a step whose node died (or whose slurmd
  // restarted under it) stays listed, holding its CPUs on every node of it
  // (the lost part never reports its end, and scancel cannot end it), even
  // after Slurm took the dead node out of a --no-kill job ("unable to update
  // job's core use information due to job resizing", slurmctld logs). Slurm
  // holds new exclusive steps there ("Requested nodes are busy") while probe
  // steps, which overlap, pass. Told from a sick node by squeue (a step
  // listed on a node of this one whose srun ended, or that is also on a lost
  // node: out of the job, down in Slurm, failed or suspected here) or by the
  // job's node list (Slurm shrank the job, every node of this step still in
  // it). The step's nodes are not charged; steps from then on overlap
  // (tunerun's own counts keep their CPUs apart).
  bool held_by_slurm(const SrunReport& said) {
    if (!said.step_pending && held_.empty()) return false;
    const std::string why = held_for_a_lost_step();
    if (why.empty()) return false;
    if (!std::exchange(state_->overlap_steps, true)) {
      state_->note(fmt::format(
          "Slurm holds new steps on nodes of allocation {}: {} ({}); their nodes are not "
          "charged, and steps from now on overlap (tunerun keeps their CPUs apart)",
          state_->allocation.job_id, why, said.step_pending ? said.pending_line : held_));
    }
    return true;
  }

  // What says that Slurm holds this step for a step it cannot end; empty: nothing.
  std::string held_for_a_lost_step() const {
    const std::string& job = state_->allocation.job_id;
    const auto in_job = job_nodes(job);
    auto out_of_job = [&](const std::string& name) {
      return in_job && std::find(in_job->begin(), in_job->end(), name) == in_job->end();
    };
    auto lost = [&](const std::string& name) {
      const int node = state_->allocation.find(name);
      if (node < 0 || out_of_job(name)) return true;
      const SlurmNode& n = state_->allocation.nodes[node];
      return n.slurm_down || n.health != NodeHealth::kUsable;
    };
    auto mine = [&](const std::string& name) {
      return std::any_of(nodes_.begin(), nodes_.end(),
                         [&](int node) { return state_->allocation.nodes[node].name == name; });
    };
    for (const ListedStep& step : running_steps(job).value_or(std::vector<ListedStep>{})) {
      if (step.name == name_ || step.nodelist.empty()) continue;
      std::vector<std::string> nodes;
      try {
        nodes = expand_hostnames(step.nodelist, "squeue -s: NODELIST");
      } catch (const Error&) {
        continue;  // not a node list as Slurm writes one
      }
      const auto here = std::find_if(nodes.begin(), nodes.end(), mine);
      if (here == nodes.end()) continue;
      if (state_->ended_steps.contains(step.name)) {
        return fmt::format("step {} is still listed on {}, though its srun ended", step.name,
                           *here);
      }
      const auto gone = std::find_if(nodes.begin(), nodes.end(), lost);
      if (gone != nodes.end()) {
        return fmt::format("step {} is still listed on {} and on {}, which is lost", step.name,
                           *here, *gone);
      }
    }
    if (!in_job || in_job->size() >= state_->allocation.nodes.size()) return {};
    for (int node : nodes_) {
      if (out_of_job(state_->allocation.nodes[node].name)) return {};
    }
    return fmt::format("Slurm shrank the job to {}", fmt::join(*in_job, ","));
  }

  void drain_log_watch() {
    if (log_watch_ < 0) return;
    char events[4096];
    while (::read(log_watch_, events, sizeof events) > 0) {
    }
  }

  // Gives the CPUs and GPUs back. Nodes srun names failed have failed; a
  // step held or cancelled before its ranks started is one more such step
  // on each of its nodes; a step that failed otherwise, or had to be
  // killed, makes its nodes suspected, unless srun reported a task's end
  // first (the node's slurmd answered: a rank, not a node, ended it); any
  // other has Slurm's word on its nodes checked.
  void end() {
    if (std::exchange(ended_, true)) return;
    state_->ended_steps.insert(name_);
    for (int node : nodes_) {
      state_->allocation.nodes[node].used -= cpus_;
      state_->allocation.nodes[node].gpus_used -= gpus_;
    }
    // The step's nodes as srun numbers them: in the allocation's order.
    std::vector<int> distinct = nodes_;
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    std::vector<std::string> step_nodes;
    for (int node : distinct) step_nodes.push_back(state_->allocation.nodes[node].name);
    const SrunReport said = read_srun_output(read_from(log_, log_offset_), step_nodes);
    for (const auto& [name, line] : said.failed_nodes) {
      const int node = state_->allocation.find(name);
      if (std::find(nodes_.begin(), nodes_.end(), node) == nodes_.end()) continue;
      if (srun_failure_.empty()) srun_failure_ = fmt::format("node {} failed ({})", name, line);
      state_->note(node_failed(state_->allocation.nodes[node], line));
    }
    if (!started_ && (said.step_pending || killed_) && !held_by_slurm(said)) {
      const std::string why = !held_.empty()      ? held_
                              : said.step_pending ? said.pending_line
                                                  : "cancelled before its ranks started";
      for (int node : distinct) state_->note(step_not_started(state_->allocation.nodes[node], why));
    }
    if (said.step_pending) {
      // Held by Slurm, never started: nothing more to say of its nodes.
    } else if ((killed_ || (srun_.exit_status() && !srun_.exit_status()->ok())) &&
               !(tasks_reported_ && said.failed_nodes.empty())) {
      state_->suspect(nodes_);
    } else {
      state_->step_ended(nodes_);
    }
  }

  std::shared_ptr<SlurmState> state_;
  std::string name_;        // its step's (srun --job-name)
  std::vector<int> nodes_;  // rank r's node
  int cpus_;                // per rank
  int gpus_;                // per rank
  bool killed_ = false;     // signalled before srun ended
  bool ended_ = false;      // its CPUs and GPUs were given back
  bool started_ = false;    // every rank said HELLO
  std::string held_;        // why Slurm held it, once held_reason() said so
  ChildProcess srun_;
  std::filesystem::path log_;                          // srun's own output
  std::uintmax_t log_offset_ = 0;                      // where this step's begins
  std::vector<int> failures_at_launch_;                // of rank r's node
  std::string srun_failure_;                           // the first node srun named failed
  int log_watch_ = -1;                                 // inotify on log_: readable when srun writes
  std::vector<std::optional<ExitStatus>> rank_exits_;  // as srun reported them, by rank
  bool tasks_reported_ = false;                        // srun reported a task's end
  bool cancel_seen_ = false;                           // srun said Slurm cancelled the step
};

}  // namespace

std::unique_ptr<LaunchedGroup> make_slurm_group(std::shared_ptr<SlurmState> state, std::string name,
                                                std::vector<int> nodes, int cpus, int gpus,
                                                ChildProcess srun, std::filesystem::path log,
                                                std::uintmax_t log_offset, int log_watch) {
  return std::make_unique<SlurmGroup>(std::move(state), std::move(name), std::move(nodes), cpus,
                                      gpus, std::move(srun), std::move(log), log_offset, log_watch);
}

}  // namespace tune::detail
