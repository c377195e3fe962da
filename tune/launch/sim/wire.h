// The wire between the SimLauncher (tune/launch/sim/launcher.h, in the
// controller) and its peer process (tunerun-sim, tune/launch/sim/peer_host.h): one
// socketpair of SOCK_SEQPACKET, each packet one message, a msgpack map
// with "op" naming it.
//
//   launcher -> peers
//     init    {simulation, nodes, now}
//                                     first and once: [simulation], the node names, and
//                                     where virtual time starts (ns on the steady clock)
//     launch  {group, env, ranks: [{rank, pid, node, env, log}]}
//                                     a group's ranks start (env: "NAME=value", the
//                                     rank's own after the group's)
//     signal  {group, signal}         every live rank of the group is killed by it
//     lose    {node}                  the node is lost now: its ranks die
//   peers -> launcher
//     exit    {group, rank, code, signal, node_lost}
//                                     a rank ended: its exit code, or the signal that
//                                     killed it (0: none); node_lost: why, when it died
//                                     with its node, else empty
//     busy    {group, rank, busy}     a rank runs a trial (START) or waits idle (DONE
//                                     of a kept rank): an idle one holds no CPUs
//     node    {node, up, why}         a node was lost (up false) or is back
//   in virtual time ([simulation] time = "virtual", tune/launch/lockstep.h)
//   launcher -> peers
//     advance {sent, to}              sent: the routing id of each control message the
//                                     controller sent since the last advance, in order
//                                     (the peers take exactly those first); to: its
//                                     next deadline (ns on the steady clock, null: none)
//   peers -> launcher
//     step    {now, happened}         the answer, and the only message in virtual time:
//                                     the new now (ns), and in order each control
//                                     message a peer sent (its routing id, a string)
//                                     and each exit, busy and node above (a map)
#pragma once

#include <optional>

#include "core/config.h"
#include "tune/spec/experiment.h"

namespace tune::sim {

// [simulation] as the init message carries it, and back.
Json simulation_to_json(const SimulationSpec& simulation);
SimulationSpec simulation_from_json(const Json& json);

// Sends one message on `fd`. Blocking: waits while the socket's buffer is
// full. Throws Error when the other end is gone.
void send_message(int fd, const Json& message);

// Sends one message without waiting; false when the buffer is full (try
// again once `fd` is writable). Throws Error when the other end is gone.
bool try_send_message(int fd, const Json& message);

// The next message on `fd`, without waiting; nullopt when none waits.
// Throws Error when the other end is gone (end of file) or sent what is no
// message.
std::optional<Json> receive_message(int fd);

}  // namespace tune::sim
