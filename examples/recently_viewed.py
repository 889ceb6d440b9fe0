#!/usr/bin/env python3
"""Recipe 4: a user's N most recently viewed pages, newest first.

Redis 7.0 way: ZADD recent now page + ZREMRANGEBYRANK recent 0 -(N+1) +
EXPIRE recent ttl, three commands in a MULTI.
ebb way: ZADDEX recent CAP N EX ttl now page -- one command.
"""

from common import connect, ebb, same

N = 5


def view_redis_way(r, key, page, ts):
    p = r.pipeline(transaction=True)
    p.zadd(key, {page: ts})
    p.zremrangebyrank(key, 0, -(N + 1))
    p.expire(key, 3600)
    p.execute()


def view_ebb_way(r, key, page, ts):
    ebb(r, "ZADDEX", key, "CAP", N, "EX", 3600, ts, page)


def main():
    r = connect()
    r.delete("recent:redis", "recent:ebb")
    pages = ["/home", "/a", "/b", "/home", "/c", "/d", "/e", "/a", "/f"]
    for ts, page in enumerate(pages, start=1700000000):
        view_redis_way(r, "recent:redis", page, ts)
        view_ebb_way(r, "recent:ebb", page, ts)
    same("recent pages", r.zrevrange("recent:redis", 0, -1), ebb(r, "ZREVRANGE", "recent:ebb", 0, -1))
    same("capped", N, ebb(r, "ZCARD", "recent:ebb"))


if __name__ == "__main__":
    main()
