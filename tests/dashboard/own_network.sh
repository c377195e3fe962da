#!/bin/sh
# Runs a command in a network namespace of its own, where only loopback is
# up, when this machine allows it (root): the local Slurm cluster's bridge and
# addresses (tests/slurm/local_cluster.sh) then never reach it, and Chromium
# cannot fail a page load with net::ERR_NETWORK_CHANGED while a Slurm case
# runs beside it. Where namespaces are refused, that cluster cannot run
# either, and the command runs as it is.
if unshare --net true 2>/dev/null; then
  exec unshare --net sh -c 'ip link set lo up && exec "$@"' sh "$@"
fi
exec "$@"
