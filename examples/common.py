"""Shared helpers for the recipe examples: connect to the server named by
--port (default 6379) and report results."""

import argparse
import sys

import redis


def connect():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=6379)
    ap.add_argument("--host", default="127.0.0.1")
    a = ap.parse_args()
    return redis.Redis(host=a.host, port=a.port, decode_responses=True)


def same(label, redis_way, ebb_way):
    """Prints both answers and exits non-zero if they differ."""
    ok = redis_way == ebb_way
    print(f"{label}: redis-way={redis_way!r} ebb-way={ebb_way!r} {'OK' if ok else 'MISMATCH'}")
    if not ok:
        sys.exit(1)
