#!/usr/bin/env bash
# Side-by-side benchmark of ebb against redis-server on this machine.
# Builds ebb in release mode, starts both servers on free loopback ports,
# runs each workload on both servers back to back (paired runs, the order
# flipping each round), prints medians and ebb/redis ratios, and stops both
# servers.
# Usage: bench/run.sh [--quick] [--cores 0|0-1] [--only std,recipes,memory,expiry,module,cores] [--rounds N] [--io-threads N]
#        [--memory-cases lists,strings]  (only the memory cases whose name has one of the words)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -p ebb-server -p ebb-module >&2
exec python3 bench/compare.py --ebb target/release/ebb-server --module target/release/libebb_module.so "$@"
