#!/usr/bin/env python3
"""Runs the benchmark workloads against redis-server and ebb-server side by
side (same run, alternating), and prints medians and ebb/redis ratios.

Workloads:
  std     redis-benchmark standard commands, 50 clients, -P 1 and -P 16;
          GET and SET from one client
  recipes the five recipes: Redis's best way (one EVALSHA per operation)
          against ebb's native command, 50 clients, -P 1 and -P 16
  memory  used_memory_rss per member: 1,000,000 sorted-set members with
          TTLs over 1,000 keys, and 10,000 keys of 30 members; 1,000,000 set
          members (SADDEX) and hash fields (HSET + HPEXPIRE) with TTLs over
          1,000 keys against Redis's without TTL; per key: 100,000 small
          lists and 1,000,000 string keys (each case on a freshly started
          server)
  expiry  1,000,000 members of one sorted set sharing one deadline
  cores   the standard commands again, each server pinned to one core and
          then given two (taskset), ebb with one connection thread and then
          two (`io-threads 2`): how each server's throughput grows with a
          core
  module  the recipes and the two sorted-set memory cases again, with ebb
          as a module loaded into the same redis-server (`ebb.zaddex`, …)
          against Redis's EVALSHA scripts and recipe sorted sets
"""

import argparse
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import redis

HERE = os.path.dirname(os.path.abspath(__file__))


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def raw_reply(port, *args):
    """One command on a raw socket: the start of its reply, or None when
    nothing answers. For start-up polls: a client library's own retries
    (redis-py backs off up to seconds on -LOADING) would be timed too."""
    req = b"*%d\r\n" % len(args) + b"".join(
        b"$%d\r\n%s\r\n" % (len(a), a) for a in (str(x).encode() for x in args))
    try:
        with socket.create_connection(("127.0.0.1", port), 1) as s:
            s.sendall(req)
            return s.recv(256)
    except OSError:
        return None


class Server:
    # ebb's `io-threads` (Redis always runs with its default, 1: its own
    # threaded I/O busy-polls, which only slows it down on a small machine).
    io_threads = 1

    def __init__(self, kind, binary, cores, module=None, io_threads=None):
        self.kind = kind
        io_threads = Server.io_threads if io_threads is None else io_threads
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix=f"bench-{kind}-")
        # ebb as a module: redis-server with the module loaded, its
        # commands under the `ebb.` prefix.
        self.prefix = "ebb." if module else ""
        cmd = [binary, "--port", str(self.port), "--save", "", "--appendonly", "no", "--dir", self.dir]
        if module:
            cmd += ["--loadmodule", os.path.abspath(module)]
        elif kind == "ebb" and io_threads != 1:
            cmd += ["--io-threads", str(io_threads)]
        if cores:
            cmd = ["taskset", "-c", cores] + cmd
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        c = redis.Redis(port=self.port)
        for _ in range(200):
            try:
                c.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.05)
        self.c = c

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


def bench(port, args):
    out = subprocess.run(
        ["redis-benchmark", "-p", str(port), "-q", "--csv", *args],
        capture_output=True, text=True, timeout=600,
    ).stdout
    res = {}
    for line in out.splitlines():
        m = re.match(r'"([^"]+)","([0-9.]+)"', line)
        if m:
            res[m.group(1)] = float(m.group(2))
    return res


def table(title, med, higher_is_better=True, unit="rps"):
    print(f"\n## {title}\n")
    print(f"| workload | redis ({unit}) | ebb ({unit}) | ebb/redis |")
    print("|---|---:|---:|---:|")
    names = list(med.get("redis", {}).keys()) or list(med.get("ebb", {}).keys())
    for n in names:
        r = med.get("redis", {}).get(n)
        e = med.get("ebb", {}).get(n)
        ratio = (e / r if higher_is_better else r / e) if r and e else float("nan")
        fmt = lambda x: "n/a" if x is None else (f"{x:,.0f}" if x >= 100 else f"{x:.2f}")
        print(f"| {n} | {fmt(r)} | {fmt(e)} | {ratio:.2f}x |")


STD_TESTS = ["set", "get", "incr", "lpush", "rpop", "sadd", "hset", "zadd", "mset"]


def scaled(n, pipeline):
    """Requests per run: pipelined runs are ~10x faster, so they get 5x the
    requests (a run of a few milliseconds says nothing)."""
    return n * 5 if pipeline > 1 else n


def paired(servers, rounds, cases):
    """Runs every case on each server back to back (the order flipping each
    round), `rounds` times. On a machine shared with other work the load
    changes from minute to minute: a ratio taken from two runs seconds
    apart is far steadier than one taken from runs minutes apart.
    `cases` maps a name to fn(server) -> requests per second. Returns
    medians per server and the median of the per-round ebb/redis ratios."""
    samples = {s.kind: {} for s in servers}
    ratios = {}
    for r in range(rounds):
        for name, fn in cases.items():
            got = {}
            for s in (servers if r % 2 == 0 else list(reversed(servers))):
                got[s.kind] = fn(s)
                samples[s.kind].setdefault(name, []).append(got[s.kind])
            if got.get("redis") and got.get("ebb"):
                ratios.setdefault(name, []).append(got["ebb"] / got["redis"])
    med = {k: {n: statistics.median(v) for n, v in d.items()} for k, d in samples.items()}
    return med, {n: statistics.median(v) for n, v in ratios.items()}


def paired_table(title, med, ratios):
    print(f"\n## {title}\n")
    print("| workload | redis (rps) | ebb (rps) | ebb/redis (median of paired runs) |")
    print("|---|---:|---:|---:|")
    for n in med.get("redis", {}):
        r = med["redis"].get(n)
        e = med.get("ebb", {}).get(n)
        print(f"| {n} | {r:,.0f} | {e:,.0f} | {ratios.get(n, float('nan')):.2f}x |")
    sys.stdout.flush()


def std_setup(servers):
    for s in servers:
        s.c.flushall()
        s.c.zadd("zr100", {f"m{i}": i for i in range(100)})


def std_cases(n, pipeline):
    """redis-benchmark's standard tests at one pipeline depth, each as
    fn(server) -> requests per second."""
    def case(test):
        def fn(s):
            r = bench(s.port, ["-c", "50", "-n", str(scaled(n, pipeline)), "-P", str(pipeline), "-t", test])
            return next(iter(r.values()), 0.0)
        return fn

    def zrange(s):
        r = bench(s.port, ["-c", "50", "-n", str(scaled(n, pipeline) // 2), "-P", str(pipeline), "ZRANGE", "zr100", "0", "99"])
        return next(iter(r.values()), 0.0)

    names = {"mset": "MSET (10 keys)"}
    cases = {names.get(t, t.upper()): case(t) for t in STD_TESTS}
    cases["ZRANGE zr100 0 99"] = zrange
    return cases


def std_workload(servers, n, rounds):
    std_setup(servers)
    for p in (1, 16):
        cases = std_cases(n, p)
        med, ratios = paired(servers, rounds, cases)
        paired_table(f"redis-benchmark, 50 clients, -P {p}, -n {scaled(n, p)}", med, ratios)

    # One client waiting for each reply: the round trip itself (network
    # stack, waking the server and the client), what a lone application
    # thread sees.
    lone = max(n // 5, 2000)

    def one_client(test):
        def fn(s):
            return next(iter(bench(s.port, ["-c", "1", "-n", str(lone), "-t", test]).values()), 0.0)
        return fn

    med, ratios = paired(servers, rounds, {t.upper(): one_client(t) for t in ("get", "set")})
    paired_table(f"redis-benchmark, 1 client, -P 1, -n {lone}", med, ratios)


def cores_workload(binaries, n, rounds):
    """The standard commands with each server pinned to one core, then to
    two: Redis as it runs (one thread executes and does the I/O), ebb with
    one connection thread on one core and two (`io-threads 2`) on two.
    redis-benchmark is not pinned: with the servers on cpu 1 it has cpu 0 to
    itself; with the servers on both cpus it shares them, so on a 2-core
    machine this shows what a second core adds while the client competes
    for it."""
    configs = [("1 core", "1", 1), ("2 cores", "0-1", 2)]
    got = {}
    for label, cpus, io in configs:
        servers = [Server("redis", binaries["redis"], cpus),
                   Server("ebb", binaries["ebb"], cpus, io_threads=io)]
        try:
            std_setup(servers)
            for p in (1, 16):
                got[(label, p)], _ = paired(servers, rounds, std_cases(n, p))
        finally:
            for s in servers:
                s.stop()
    for p in (1, 16):
        one, two = got[("1 core", p)], got[("2 cores", p)]
        print(f"\n## cores: servers on 1 core (taskset -c 1) and on 2 (taskset -c 0-1), 50 clients, -P {p}\n")
        print("| workload | redis 1 core | redis 2 cores | redis 2/1 | ebb 1 core, 1 thread | ebb 2 cores, io-threads 2 | ebb 2/1 |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for name in one["redis"]:
            r1, r2 = one["redis"][name], two["redis"][name]
            e1, e2 = one["ebb"][name], two["ebb"][name]
            print(f"| {name} | {r1:,.0f} | {r2:,.0f} | {r2 / r1:.2f}x | {e1:,.0f} | {e2:,.0f} | {e2 / e1:.2f}x |")
        sys.stdout.flush()


# --- recipes: Redis's best way (EVAL) against ebb's native command ---------

LUA = {
    "expiring push": (
        "redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2]); "
        "redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1] - ARGV[3]); return 1"
    ),
    "bucket counter": (
        "local v = redis.call('ZINCRBY', KEYS[1], 1, ARGV[1]); "
        "redis.call('ZADD', KEYS[2], 'NX', ARGV[2], ARGV[1]); "
        "local old = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[3]); "
        "for _, b in ipairs(old) do redis.call('ZREM', KEYS[1], b); redis.call('ZREM', KEYS[2], b) end; return v"
    ),
    "dedup add+check": (
        "local s = redis.call('ZSCORE', KEYS[1], ARGV[1]); "
        "redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[2]); "
        "if s and tonumber(s) > tonumber(ARGV[2]) then return 0 end; "
        "redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1]); return 1"
    ),
    "capped recency": (
        "redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2]); "
        "redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -(tonumber(ARGV[3]) + 1)); "
        "redis.call('EXPIRE', KEYS[1], ARGV[4]); return 1"
    ),
    "limit admission": (
        "redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1] - ARGV[2]); "
        "if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return -1 end; "
        "redis.call('ZADD', KEYS[1], ARGV[1], ARGV[4]); return 1"
    ),
}


def recipe_commands(s):
    """Each recipe as one command line: EVALSHA of Redis's script, or ebb's
    native command."""
    if s.kind == "redis":
        sha = {k: s.c.script_load(v) for k, v in LUA.items()}
        now = "1700000000000"
        return {
            "expiring push": ["EVALSHA", sha["expiring push"], "1", "ts", now, "v:__rand_int__", "120000"],
            "bucket counter": ["EVALSHA", sha["bucket counter"], "2", "cnt", "cntt", "b:__rand_int__", now, "0"],
            "dedup add+check": ["EVALSHA", sha["dedup add+check"], "1", "seen", "id:__rand_int__", "0", "9999999999999"],
            "capped recency": ["EVALSHA", sha["capped recency"], "1", "recent", now, "p:__rand_int__", "30", "3600"],
            "limit admission": ["EVALSHA", sha["limit admission"], "1", "otp", now, "300000", "3", "c:__rand_int__"],
        }
    z, sx = s.prefix + "ZADDEX", s.prefix + "SADDEX"
    return {
        "expiring push": [z, "ts", "PX", "120000", "1700000000000", "v:__rand_int__"],
        "bucket counter": [z, "cnt", "INCR", "KEEPTTL", "EX", "3600", "1", "b:__rand_int__"],
        "dedup add+check": [sx, "seen", "5184000", "id:__rand_int__"],
        "capped recency": [z, "recent", "CAP", "30", "EX", "3600", "1700000000000", "p:__rand_int__"],
        "limit admission": [sx, "otp", "LIMIT", "3", "300", "c:__rand_int__"],
    }


def recipes_workload(servers, n, rounds, what="ebb native command"):
    """Each recipe as redis-benchmark traffic (50 clients, random member
    ids), unpipelined and with -P 16."""
    cmds = {}
    for s in servers:
        s.c.flushall()
        cmds[s.kind] = recipe_commands(s)

    def case(name, pipeline):
        def fn(s):
            r = bench(s.port, ["-c", "50", "-n", str(scaled(n, pipeline)), "-r", "100000", "-P", str(pipeline), *cmds[s.kind][name]])
            return next(iter(r.values()), 0.0)
        return fn

    for p in (1, 16):
        cases = {name: case(name, p) for name in LUA}
        med, ratios = paired(servers, rounds, cases)
        paired_table(
            f"recipes: Redis EVALSHA script vs {what} (50 clients, -P {p}, -n {scaled(n, p)})",
            med,
            ratios,
        )


def fill(s, keys, per_key, name, write):
    """Fills `keys` keys with `per_key` names each, one pipeline per key,
    by calls write(pipeline, key, names, offset) of at most 1,000 names."""
    for k in range(keys):
        p = s.c.pipeline(transaction=False)
        names = [f"{name}:{k:05d}:{i:06d}" for i in range(per_key)]
        for i in range(0, per_key, 1000):
            write(p, f"key:{k}", names[i:i + 1000], i)
        p.execute()


def fill_members(s, keys, per_key):
    """Members with a TTL: Redis's recipe (score = deadline) against ZADDEX."""
    deadline = int(time.time() * 1000) + 3_600_000

    def write(p, key, chunk, _):
        if s.kind == "redis":
            # The recipe's way: the score is the member's deadline.
            p.zadd(key, {m: deadline + j for j, m in enumerate(chunk)})
        else:
            flat = []
            for j, m in enumerate(chunk):
                flat += [deadline + j, m]
            p.execute_command(s.prefix + "ZADDEX", key, "PXAT", deadline, *flat)

    fill(s, keys, per_key, "member", write)


def fill_set_members(s, keys, per_key):
    """Set members: Redis SADD (no TTL) against SADDEX (a TTL on each)."""

    def write(p, key, chunk, _):
        if s.kind == "redis":
            p.sadd(key, *chunk)
        else:
            p.execute_command("SADDEX", key, 3600, *chunk)

    fill(s, keys, per_key, "member", write)


def fill_hash_fields(s, keys, per_key):
    """Hash fields with 10-byte values: Redis HSET (no TTL) against HSET
    then HPEXPIRE on every field."""

    def write(p, key, chunk, at):
        flat = []
        for j, f in enumerate(chunk):
            flat += [f, "value:%04d" % ((at + j) % 10000)]
        p.execute_command("HSET", key, *flat)
        if s.kind != "redis":
            p.execute_command("HPEXPIRE", key, 3_600_000, "FIELDS", len(chunk), *chunk)

    fill(s, keys, per_key, "field", write)


def fill_admissions(s, keys):
    """The limit-admission shape: many keys of 3 members (codes per phone).
    Redis: the recipe's sorted set scored by time; ebb: SADDEX LIMIT 3."""
    now = int(time.time() * 1000)
    for start in range(0, keys, 1000):
        p = s.c.pipeline(transaction=False)
        for k in range(start, min(keys, start + 1000)):
            key = f"otp:+1555{k:07d}"
            codes = [f"{(k * 7 + j) % 1000000:06d}" for j in range(3)]
            if s.kind == "redis":
                p.zadd(key, {c: now + j for j, c in enumerate(codes)})
            else:
                p.execute_command("SADDEX", key, "LIMIT", 3, 300, *codes)
        p.execute()


def fill_small_hashes(s, keys):
    """Objects as small hashes (user:NNN with 5 short fields), HSET on both
    servers: Redis keeps each in a listpack, ebb in a packed buffer."""
    for start in range(0, keys, 1000):
        p = s.c.pipeline(transaction=False)
        for k in range(start, min(keys, start + 1000)):
            p.hset(f"user:{k:08d}", mapping={
                "name": f"name{k}", "email": f"u{k}@example.com", "age": str(k % 90),
                "city": "Amsterdam", "score": str(k * 7)})
        p.execute()


def fill_lists(s, keys):
    """Small lists (three 2-byte elements), RPUSH on both servers: Redis
    keeps each in a listpack."""
    for start in range(0, keys, 1000):
        p = s.c.pipeline(transaction=False)
        for k in range(start, min(keys, start + 1000)):
            p.rpush(f"list:{k:07d}", "a1", "b2", "c3")
        p.execute()


def fill_capped_lists(s, keys, cap):
    """Capped recency lists, the plain-Redis way on both servers: LPUSH a
    page id then LTRIM to the newest `cap`, 40 pushes per key."""
    for start in range(0, keys, 250):
        p = s.c.pipeline(transaction=False)
        for k in range(start, min(keys, start + 250)):
            key = f"viewed:{k:07d}"
            for i in range(40):
                p.lpush(key, f"/page/{(k * 7 + i) % 5000:05d}")
                p.ltrim(key, 0, cap - 1)
        p.execute()


def fill_queue(s, n):
    """One big list, a job queue: RPUSH of 12-byte job ids."""
    for start in range(0, n, 10000):
        p = s.c.pipeline(transaction=False)
        p.rpush("queue", *[f"job:{i:08d}" for i in range(start, min(n, start + 10000))])
        p.execute()


def fill_strings(s, n, ttl=None):
    """Plain string keys: SET key:NNNNNNN with a 10-byte value (with EX
    ttl when given: session-style keys)."""
    for start in range(0, n, 10000):
        p = s.c.pipeline(transaction=False)
        for i in range(start, min(n, start + 10000)):
            p.set(f"key:{i:07d}", "value:%04d" % (i % 10000), ex=ttl)
        p.execute()


def rss(s):
    return int(s.c.info("memory")["used_memory_rss"])


def memory_workload(servers, binaries, cores, memory_cases=()):
    """Each measurement on a freshly started server, so RSS deltas are not
    blurred by memory a previous workload freed but the allocator kept."""
    cases = [
        ("1M members / 1,000 keys (B/member)", lambda s: fill_members(s, 1000, 1000), 1_000_000),
        ("10,000 keys x 30 members (B/member)", lambda s: fill_members(s, 10000, 30), 300_000),
        ("1M set members / 1,000 keys, Redis without TTL (B/member)", lambda s: fill_set_members(s, 1000, 1000), 1_000_000),
        ("1M hash fields / 1,000 keys, Redis without TTL (B/field)", lambda s: fill_hash_fields(s, 1000, 1000), 1_000_000),
        ("100,000 keys x 3 members, limit admission (B/key)", lambda s: fill_admissions(s, 100_000), 100_000),
        ("100,000 hashes of 5 fields, no TTL on either (B/key)", lambda s: fill_small_hashes(s, 100_000), 100_000),
        ("100,000 lists of 3 elements, no TTL on either (B/key)", lambda s: fill_lists(s, 100_000), 100_000),
        ("10,000 capped lists of 30 page ids, LPUSH+LTRIM (B/key)", lambda s: fill_capped_lists(s, 10_000, 30), 10_000),
        ("1M-element list, a job queue (B/element)", lambda s: fill_queue(s, 1_000_000), 1_000_000),
        ("1M string keys (B/key)", lambda s: fill_strings(s, 1_000_000), 1_000_000),
        ("1M string keys with a TTL, SET EX (B/key)", lambda s: fill_strings(s, 1_000_000, 3600), 1_000_000),
    ]
    if memory_cases:
        cases = [c for c in cases if any(w in c[0] for w in memory_cases)]
    res = rss_per_item(cases, lambda kind: Server(kind, binaries[kind], cores))
    table("memory per member with a TTL, per string key (RSS delta)", res, higher_is_better=False, unit="bytes")


def rss_per_item(cases, server):
    """RSS growth per item of each (name, fill, count) case, on a server of
    each kind started by server(kind) for that case alone."""
    res = {"redis": {}, "ebb": {}}
    for name, fill, count in cases:
        for kind in ("redis", "ebb"):
            s = server(kind)
            try:
                time.sleep(0.3)
                base = rss(s)
                fill(s)
                time.sleep(0.3)
                res[kind][name] = (rss(s) - base) / count
            finally:
                s.stop()
    return res


def module_workload(redis_bin, module, cores, n, rounds):
    """ebb as a module in redis-server: the recipes, and memory per sorted-set
    member with a TTL, against plain redis-server running Redis's way."""
    servers = [Server("redis", redis_bin, cores), Server("ebb", redis_bin, cores, module=module)]
    try:
        recipes_workload(servers, n, rounds, what="the module's command in the same redis-server")
    finally:
        for s in servers:
            s.stop()
    cases = [
        ("1M members / 1,000 keys (B/member)", lambda s: fill_members(s, 1000, 1000), 1_000_000),
        ("10,000 keys x 30 members (B/member)", lambda s: fill_members(s, 10000, 30), 300_000),
    ]
    res = rss_per_item(cases, lambda kind: Server(kind, redis_bin, cores, module=module if kind == "ebb" else None))
    table("module: memory per sorted-set member with a TTL (RSS delta; ebb = the module in redis-server)",
          res, higher_is_better=False, unit="bytes")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ebb", required=True)
    ap.add_argument("--module", default="", help="the module library, for the `module` workload")
    ap.add_argument("--redis", default=shutil.which("redis-server") or "redis-server")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--cores", default="", help="taskset CPU list for the servers, e.g. 0 or 0-1")
    ap.add_argument("--only", default="std,recipes,memory,expiry,module,cores")
    ap.add_argument("--rounds", type=int, default=3, help="paired rounds per workload (not with --quick)")
    ap.add_argument("--memory-cases", default="", help="comma-separated words: only memory cases whose name has one")
    ap.add_argument("--io-threads", type=int, default=1, help="ebb's io-threads (threads serving connections)")
    a = ap.parse_args()
    n = 20000 if a.quick else 100000
    rounds = 1 if a.quick else a.rounds
    only = a.only.split(",")
    Server.io_threads = a.io_threads
    print(f"# ebb vs redis-server, {os.cpu_count()} cores, servers on cpus '{a.cores or 'all'}', io-threads {a.io_threads}")
    print(subprocess.run([a.redis, "--version"], capture_output=True, text=True).stdout.strip())
    servers = [Server("redis", a.redis, a.cores), Server("ebb", a.ebb, a.cores)]
    try:
        if "std" in only:
            std_workload(servers, n, rounds)
        if "recipes" in only:
            recipes_workload(servers, n, rounds)
        if "memory" in only:
            memory_workload(servers, {"redis": a.redis, "ebb": a.ebb}, a.cores,
                            [w for w in a.memory_cases.split(",") if w])
        if "expiry" in only:
            ebb = servers[1]
            print("\n## mass expiry on ebb (1,000,000 members, one deadline)\n")
            sys.stdout.flush()
            subprocess.run([sys.executable, os.path.join(HERE, "mass_expiry.py"), "--port", str(ebb.port),
                            "--members", "200000" if a.quick else "1000000", "--ttl-ms", "20000"])
        if "module" in only and a.module:
            module_workload(a.redis, a.module, a.cores, n, rounds)
    finally:
        for s in servers:
            s.stop()
    if "cores" in only:
        # Half the standard runs' requests: four server setups instead of two.
        cores_workload({"redis": a.redis, "ebb": a.ebb}, n // 2, rounds)


if __name__ == "__main__":
    main()
