// Lockstep: how a launcher whose ranks live in virtual time (the simulated
// launcher with [simulation] time = "virtual", tune/launch/sim/launcher.h)
// drives the controller's clock (tune/system/clock.h). The controller never waits
// for time to pass: when nothing is ready it calls advance(), and the
// simulation, having first taken every control message the controller sent
// since the last step, moves its "now" to its next event or the
// controller's next deadline, whichever is first, runs what is due then,
// and says what its ranks sent, in order. The controller takes exactly
// those messages, in that order: what it decides depends on the simulation
// and the seed, never on the host's speed.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tune/system/clock.h"

namespace tune {

class Lockstep {
 public:
  virtual ~Lockstep() = default;
  // One step. `sent`: the routing id of each control message the controller
  // sent since the last step, in send order. `deadline`: the controller's
  // next own deadline; nullopt: none. Sets the virtual clock (VirtualTime)
  // to the simulation's new now, then, in the simulation's order, calls
  // `take` with the routing id of each control message a rank sent (the
  // controller receives and handles that one next) and handles its own
  // events (a rank's exit, a node lost) in between. Returns false when
  // nothing happened: the clock did not move and nothing was sent.
  virtual bool advance(std::optional<Clock::time_point> deadline,
                       const std::vector<std::string>& sent,
                       const std::function<void(const std::string& routing_id)>& take) = 0;
};

}  // namespace tune
