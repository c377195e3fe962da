// The worker side of the control protocol (core/protocol.h).
//
// A worker process calls run_worker() once: it reads its WorkerEnv, says
// HELLO to the controller, receives START, runs the registered train function
// on this thread with a live session (so train::report works), and ends with
// DONE or ERROR. A heartbeat thread with its own socket beats every
// heartbeat_s while the function runs. The process dies with its controller
// (PR_SET_PDEATHSIG), so no worker outlives a killed controller.
#pragma once

namespace train {

// Returns the process exit code: 0 when the function returned or was
// stopped, 1 when it raised or the protocol failed (the reason goes to the
// controller as ERROR when possible and always to stderr, the rank's log).
int run_worker();

}  // namespace train
