"""Shared helpers for the recipe examples: connect to the server named by
--port (default 6379), send ebb's commands and report results.

The examples talk to an ebb-server by default. With --module they talk to a
redis-server with ebb's module loaded (docs/module.md), where ebb's commands
are named `ebb.<command>`: every command on the ebb way's keys goes through
`ebb()`, reads included (`ebb.sismember`), because Redis's own commands
cannot read the module's keys. Generic key commands (DEL, EXISTS) and the
Redis way's commands are Redis's own either way."""

import argparse
import sys

import redis

MODULE = False  # set by connect() from --module


def connect():
    global MODULE
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=6379)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--module", action="store_true",
                    help="the server is redis-server with ebb's module: send ebb's commands as ebb.<command>")
    a = ap.parse_args()
    MODULE = a.module
    return redis.Redis(host=a.host, port=a.port, decode_responses=True)


def ebb(r, command, *args, **options):
    """Sends one of ebb's commands: `SADDEX key ...` to ebb-server, or
    `ebb.saddex key ...` to redis-server with the module (--module). Either
    way the reply is parsed as redis-py parses `command`'s, with redis-py's
    options for it (withscores=True)."""
    if not MODULE:
        return r.execute_command(command, *args, **options)
    reply = r.execute_command("ebb." + command.lower(), *args)
    parse = r.response_callbacks.get(command.upper())
    return parse(reply, **options) if parse else reply


def same(label, redis_way, ebb_way):
    """Prints both answers and exits non-zero if they differ."""
    ok = redis_way == ebb_way
    print(f"{label}: redis-way={redis_way!r} ebb-way={ebb_way!r} {'OK' if ok else 'MISMATCH'}")
    if not ok:
        sys.exit(1)
