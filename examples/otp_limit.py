#!/usr/bin/env python3
"""Recipe 5: OTP / sliding-window rate limit -- at most X live codes per
phone in Y minutes.

Redis 7.0 way: ZREMRANGEBYSCORE old codes, ZCARD, then ZADD if below the
limit: three round trips with a race between the count and the add.
ebb way: SADDEX key LIMIT X Y*60 code -- atomic; replies -1 when full.
"""

from common import connect, ebb, same

LIMIT = 3
WINDOW_S = 300


def issue_redis_way(r, key, code, now):
    r.zremrangebyscore(key, "-inf", now - WINDOW_S)
    if r.zcard(key) >= LIMIT:
        return False
    r.zadd(key, {code: now})
    r.expire(key, WINDOW_S)
    return True


def issue_ebb_way(r, key, code):
    return ebb(r, "SADDEX", key, "LIMIT", LIMIT, WINDOW_S, code) != -1


def main():
    r = connect()
    r.delete("otp:redis", "otp:ebb")
    codes = ["111111", "222222", "333333", "444444", "555555"]
    now = 1700000000
    redis_answers = [issue_redis_way(r, "otp:redis", c, now + i) for i, c in enumerate(codes)]
    ebb_answers = [issue_ebb_way(r, "otp:ebb", c) for c in codes]
    same("codes admitted", redis_answers, ebb_answers)
    same("live codes", LIMIT, ebb(r, "SCARD", "otp:ebb"))


if __name__ == "__main__":
    main()
