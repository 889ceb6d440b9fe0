#!/usr/bin/env python3
"""Recipe 3: de-duplication of processed ids for 60 days.

Redis 7.0 way: one set per day (SADD seen:<day> id + EXPIRE 60 days), and a
membership test that must look at every day in the window.
ebb way: SADDEX seen 5184000 id, and SISMEMBER: one key, one round trip,
each id expiring on its own 60 days after it was seen.
"""

from common import connect, ebb, same

WINDOW_S = 60 * 86400


def seen_redis_way(r, day, id_):
    keys = [f"seen:{d}" for d in range(day - 59, day + 1)]
    p = r.pipeline(transaction=False)
    for k in keys:
        p.sismember(k, id_)
    if any(p.execute()):
        return True
    p = r.pipeline(transaction=True)
    p.sadd(f"seen:{day}", id_)
    p.expire(f"seen:{day}", WINDOW_S)
    p.execute()
    return False


def seen_ebb_way(r, id_):
    if ebb(r, "SISMEMBER", "seen", id_):
        return True
    ebb(r, "SADDEX", "seen", WINDOW_S, id_)
    return False


def main():
    r = connect()
    r.delete("seen", *[f"seen:{d}" for d in range(0, 200)])
    stream = ["a", "b", "a", "c", "b", "d", "a", "e", "c"]
    day = 100
    redis_answers = [seen_redis_way(r, day, x) for x in stream]
    ebb_answers = [seen_ebb_way(r, x) for x in stream]
    same("duplicates detected", redis_answers, ebb_answers)
    same("distinct ids", 5, ebb(r, "SCARD", "seen"))
    ttl = ebb(r, "STTL", "seen", "MEMBERS", 1, "a")[0]
    same("ttl about 60 days", True, WINDOW_S - 5 <= ttl <= WINDOW_S)


if __name__ == "__main__":
    main()
