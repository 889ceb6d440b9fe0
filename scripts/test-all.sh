#!/usr/bin/env bash
# Runs every test: Rust unit/property/integration tests, then the black-box
# suite (redis-py, redis-cli, redis-benchmark smoke) against the built binary.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --workspace --all-targets
cargo test --workspace
python3 -m pytest -q tests/python "$@"
