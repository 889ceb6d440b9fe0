"""Keyspace notifications of ebb-server and of a redis-server side by side.

Both servers get the same `notify-keyspace-events` flags (KEA unless a
sequence sets others) and a subscriber connection that does
PSUBSCRIBE `__key*__:*` and SUBSCRIBE to a marker channel. The command
lines of a sequence then run on a second connection of each server. After
every command (after EXEC for a transaction) that connection PUBLISHes a
numbered marker, and the subscriber reads until that marker arrives, so
each command's reply is paired with exactly the notifications it caused,
in order, without waiting on timers. The lists of (kind, pattern, channel,
payload) and the raw replies must be the same on both servers. The
subscriber also SUBSCRIBEs to a few keyspace and keyevent channels by
name, so the order of `message` and `pmessage` deliveries is compared too;
some sequences run again with a RESP3 subscriber, and one test has a
RESP3 connection receive the notifications of its own commands, compared
byte for byte with its replies.

The sequences cover the write commands of strings, lists, sets, hashes,
sorted sets and the generic key commands, lazy and active expiry, key
misses (`m`), key creation (`n`), transactions, scripts, clients blocked on
a key, narrower flag sets, and CONFIG SET / CONFIG GET of the flag string
itself. Active expiry happens at a time of each server's choosing, so for
it only the arrival of an `expired` event for the key is compared; every
other sequence runs with the active expiry turned off (DEBUG
SET-ACTIVE-EXPIRE 0), so keys past their TTL go only when a command meets
them.

A line is a command split with shell quoting rules (with a leading `~`
its reply is not compared, only its notifications: a random pick), or one
of:
  `SLEEP ms`          wait (for a key with a short TTL to lapse);
  `&<command>`        send on a third connection without reading the reply
                      (a client that blocks);
  `&READ`             read that connection's reply;
  `WAITBLOCKED n`     wait until the server counts n blocked clients;
  `WAITEXPIRED key`   wait (at most 2 s) for an `expired` event for key.

Left out: RESTORE (a DUMP payload is ebb's own format, docs/compat.md);
streams, GEO and HyperLogLog commands (out of scope or missing,
docs/compat.md); `evicted` events (they depend on each server's memory
accounting and eviction timing); DEBUG POPULATE (its keys raise `set`
events in ebb by design, docs/compat.md); ebb's own commands, member
events and the subkey-channel flags `S`, `T`, `I`, `V` (additions to
Redis's set, docs/operations.md "Notifications" and
docs/commands/member-ttl.md; Redis 7.0 refuses those letters); replies that
are random picks (SPOP with a count).

Skipped when redis-server is not installed."""

import shlex
import shutil
import socket
import time

import pytest

from conftest import EbbServer, Raw, RedisServer, sha


PATTERN = "__key*__:*"
MARK = "notif-mark"
EXACT = ["__keyspace@0__:a", "__keyevent@0__:del", "__keyevent@0__:new",
         "__keyevent@1__:move_to"]

# A mix of commands of every class, run under each of the narrower flag
# sets of FLAG_SETS.
MIXED = [
    "SET s v",
    "SET s2 v EX 100",
    "APPEND s x",
    "INCR n",
    "PERSIST s2",
    "EXPIRE s 100",
    "RPUSH l a b",
    "LPOP l 2",
    "SADD st a",
    "SREM st a",
    "HSET h f v",
    "HDEL h f",
    "ZADD z 1 a",
    "ZREM z a",
    "RENAME s s3",
    "DEL s3 n",
    "GET missing",
    "MGET missing missing2",
    "SET px v PX 1",
    "SLEEP 20",
    "GET px",
]

FLAG_SETS = ["KEA", "Kg", "E$", "Elsh", "Ez", "Ex", "Ed", "Kx", "KEm", "Em",
             "AKEn", "Kgn", "En", "K", "E", "g$lshzxe", "A", "KA", "AE", ""]

# CONFIG SET notify-keyspace-events values whose reply and following
# CONFIG GET are compared: valid strings in several orders, repeated
# letters, `A` with and without `n` and `m`, and invalid letters. ebb's
# own letters (S, T, I, V) are left out: an addition (docs/operations.md).
CONFIG_VALUES = ["KEA", "AKE", "EKA", "Kg", "gK", "E$", "$E", "Elsh", "hslE",
                 "Ez", "Ex", "Ed", "Et", "Ee", "Em", "KEm", "AKEn", "KEAn",
                 "nAKE", "Kn", "KEAm", "KEAmn", "g$lshzxetd", "g$lshzxetdKE",
                 "g$lshzxetdnKE", "g$lshzxetdmKE", "AAKKEE", "A", "K", "E", "",
                 "KE", "x", "Q", "KEQ", "kea", "KEa", "K E", " ", "KE A",
                 "K,E", "1", "KEA\u00e9"]

INCR_SCRIPT = "return redis.call('incr', KEYS[1])"

SEQUENCES = {
    # ------------------------------------------------------------ strings
    "set-variants": [
        "SET k v",
        "SET k v2 GET",
        "SET k v3 EX 100",
        "SET k v4 KEEPTTL",
        "SET k v5 PX 100000 GET",
        "SET k v6 EXAT 4102444800",
        "SET k v7 PXAT 4102444800000",
        "SET k v8 NX",
        "SET k v9 XX",
        "SET nk v XX",
        "SET nk v NX GET",
        "SET nk2 v NX EX 100",
        "SET k v10 EX 0",
        "SET k v10 KEEPTTL EX 5",
        "SET k v11 XX KEEPTTL GET",
        "RPUSH lst a",
        "SET lst v GET",
        "SET lst v",
        "TTL k",
        "SET 'a b' v",
        "SET 'key\nwith newline' v",
        "DEL 'a b' 'key\nwith newline'",
        "SET '\u043a\u043b\u044e\u0447' v",
        "EXPIRE k 9223372036854775807",
        "SET k v EX 9223372036854775807",
    ],
    "setnx-setex-getset": [
        "SETNX a 1",
        "SETNX a 2",
        "SETEX b 100 v",
        "SETEX b 0 v",
        "SETEX b -5 v",
        "PSETEX c 100000 v",
        "GETSET a 3",
        "GETSET new 1",
        "EXPIRE a 100",
        "GETSET a 4",
        "TTL a",
    ],
    "getdel-getex": [
        "SET a 1",
        "GETDEL a",
        "GETDEL a",
        "SET b 2",
        "GETEX b",
        "GETEX b EX 100",
        "GETEX b PX 200000",
        "GETEX b EXAT 4102444800",
        "GETEX b PXAT 4102444800000",
        "GETEX b PERSIST",
        "GETEX b PERSIST",
        "GETEX nokey EX 10",
        "GETEX b EX 0",
        "GETEX b EXAT 1",
        "EXISTS b",
        "SET c 3",
        "GETEX c PXAT 1",
        "EXISTS c",
        "RPUSH l a",
        "GETDEL l",
        "GETEX l PERSIST",
    ],
    "append-setrange": [
        "APPEND a hello",
        "APPEND a world",
        "APPEND a ''",
        "SETRANGE a 0 J",
        "SETRANGE a 0 ''",
        "SETRANGE b 0 ''",
        "SETRANGE b 3 x",
        "SETRANGE c 0 xyz",
        "SETRANGE a -1 x",
        "GET b",
    ],
    "incr-decr": [
        "INCR n",
        "INCR n",
        "DECR n",
        "INCRBY n 10",
        "DECRBY n 3",
        "DECR m",
        "INCRBY m 0",
        "INCRBYFLOAT f 1.5",
        "INCRBYFLOAT f 0",
        "INCRBYFLOAT n 1e3",
        "SET s abc",
        "INCR s",
        "INCRBYFLOAT s 1",
        "SET big 9223372036854775807",
        "INCR big",
        "INCRBYFLOAT f inf",
    ],
    "mset-msetnx": [
        "MSET a 1 b 2 c 3",
        "MSET a 1 a 2",
        "MSETNX d 4 e 5",
        "MSETNX e 6 f 7",
        "MSETNX g 1 g 2",
        "MGET a b c d e f g",
    ],
    "setbit-bitop-bitfield": [
        "SETBIT b 7 1",
        "SETBIT b 7 1",
        "SETBIT b 7 0",
        "SETBIT b2 100 0",
        "SETBIT b 2 x",
        "SET x1 abc",
        "SET x2 ab",
        "BITOP AND d x1 x2",
        "BITOP OR d x1 x2",
        "BITOP NOT d2 x1",
        "BITOP AND d nokey1 nokey2",
        "EXISTS d",
        "BITOP OR d3 nokey1",
        "BITFIELD bf SET u8 0 255",
        "BITFIELD bf SET u8 0 255",
        "BITFIELD bf INCRBY u8 0 1",
        "BITFIELD bf OVERFLOW FAIL INCRBY u8 0 300",
        "BITFIELD bf GET u8 0",
        "BITFIELD bf2 GET u8 0",
        "BITFIELD_RO bf GET u8 0",
        "BITFIELD bf3 INCRBY u4 0 0",
        "EXISTS bf2 bf3",
    ],
    # ------------------------------------------------------------ lists
    "list-push-pop": [
        "LPUSH l a b c",
        "RPUSH l d e",
        "LPUSHX l f",
        "RPUSHX l g",
        "LPUSHX nol a",
        "RPUSHX nol a",
        "LPOP l",
        "RPOP l",
        "LPOP l 2",
        "RPOP l 0",
        "LPOP l 0",
        "LPOP nol",
        "LPOP nol 2",
        "RPOP l 10",
        "EXISTS l",
        "RPUSH l2 a",
        "RPOP l2",
        "SET s v",
        "LPUSH s a",
    ],
    "list-edit": [
        "RPUSH l a b c a b c",
        "LINSERT l BEFORE b X",
        "LINSERT l AFTER zz X",
        "LINSERT nol AFTER a X",
        "LSET l 0 Z",
        "LSET l 100 Z",
        "LREM l 0 zz",
        "LREM l 1 a",
        "LREM l 0 b",
        "LTRIM l 0 -1",
        "LTRIM l 1 2",
        "LRANGE l 0 -1",
        "LTRIM l 5 1",
        "EXISTS l",
        "RPUSH l2 a a",
        "LREM l2 0 a",
        "EXISTS l2",
        "LTRIM nol 0 1",
    ],
    "list-move": [
        "RPUSH src a b c",
        "LMOVE src dst LEFT RIGHT",
        "LMOVE src dst RIGHT LEFT",
        "RPOPLPUSH src dst",
        "EXISTS src",
        "LMOVE src dst LEFT LEFT",
        "RPUSH rot 1 2 3",
        "LMOVE rot rot LEFT RIGHT",
        "RPOPLPUSH rot rot",
        "RPUSH one x",
        "LMOVE one one LEFT RIGHT",
        "LRANGE one 0 -1",
        "RPOPLPUSH dst dst2",
        "SET str v",
        "LMOVE dst str LEFT LEFT",
        "LRANGE dst 0 -1",
    ],
    "lmpop": [
        "RPUSH a 1 2 3",
        "RPUSH b 4",
        "LMPOP 2 nokey a LEFT",
        "LMPOP 2 a b RIGHT COUNT 5",
        "LMPOP 2 a b LEFT COUNT 5",
        "LMPOP 1 b LEFT",
        "EXISTS a b",
    ],
    "list-blocking-immediate": [
        "RPUSH l a b c",
        "BLPOP l 0",
        "BRPOP nokey l 0",
        "BLMOVE l dst LEFT RIGHT 0",
        "BRPOPLPUSH dst dst2 0",
        "RPUSH m 1 2",
        "BLMPOP 0 2 nokey m RIGHT COUNT 5",
        "EXISTS l dst dst2 m",
    ],
    # Clients blocked on a key, served by a push, a transaction's pushes
    # (the served pop's events follow the transaction's).
    "list-blocked-served": [
        "&BLPOP bl 0",
        "WAITBLOCKED 1",
        "RPUSH bl a b",
        "&READ",
        "&BLMOVE src2 dst LEFT RIGHT 0",
        "WAITBLOCKED 1",
        "LPUSH src2 x",
        "&READ",
        "EXISTS src2",
        "&BRPOP bl3 0",
        "WAITBLOCKED 1",
        "MULTI",
        "LPUSH bl3 p q",
        "LPOP bl3",
        "EXEC",
        "&READ",
    ],
    # ------------------------------------------------------------ sets
    "sets": [
        "SADD s a b c",
        "SADD s a",
        "SREM s zz",
        "SREM s a",
        "SREM s b c",
        "EXISTS s",
        "SADD s2 x y",
        "SPOP s2 0",
        "~SPOP s2 5",
        "EXISTS s2",
        "SADD s3 only",
        "SPOP s3",
        "SPOP nos",
        "SPOP nos 2",
        "SADD s4 1 2 3",
        "~SPOP s4 1",
        "SADD m1 a b",
        "SMOVE m1 m2 a",
        "SMOVE m1 m2 zz",
        "SMOVE m1 m2 b",
        "SMOVE m2 m2 a",
        "EXISTS m1",
        "SMOVE nos m2 a",
        "SET str v",
        "SADD m3 a",
        "SMOVE m3 str a",
        "SMOVE str m3 a",
    ],
    "set-store": [
        "SADD a 1 2 3",
        "SADD b 2 3 4",
        "SINTERSTORE d a b",
        "SUNIONSTORE d a b",
        "SDIFFSTORE d a b",
        "SINTERSTORE d a nokey",
        "EXISTS d",
        "SINTERSTORE d a nokey",
        "SUNIONSTORE e nokey",
        "SUNIONSTORE e a",
        "SDIFFSTORE e a a",
        "EXISTS e",
        "SDIFFSTORE e nokey a",
        "SINTERSTORE a a b",
        "SET str v",
        "SUNIONSTORE str a",
        "TYPE str",
        "SINTERSTORE x str a",
    ],
    # ------------------------------------------------------------ hashes
    "hashes": [
        "HSET h a 1 b 2",
        "HSET h a 1",
        "HMSET h c 3",
        "HSETNX h a 9",
        "HSETNX h d 4",
        "HSETNX h2 a 1",
        "HINCRBY h a 5",
        "HINCRBY h new 0",
        "HINCRBYFLOAT h b 1.5",
        "HINCRBYFLOAT h fl 0",
        "HINCRBY h c x",
        "HDEL h zz",
        "HDEL h a b",
        "HDEL h c d new fl",
        "EXISTS h",
        "HDEL h2 a",
        "HINCRBY h3 f 1",
        "HINCRBYFLOAT h4 f 1",
    ],
    # ------------------------------------------------------------ sorted sets
    "zadd-zincr": [
        "ZADD z 1 a 2 b",
        "ZADD z 1 a",
        "ZADD z 5 a",
        "ZADD z NX 9 a",
        "ZADD z XX 9 new",
        "ZADD z XX CH 7 a",
        "ZADD z INCR 2 a",
        "ZADD z NX INCR 2 a",
        "ZADD z INCR 0 a",
        "ZADD z GT 1 a",
        "ZADD z LT 1 a",
        "ZADD z2 XX 1 a",
        "ZINCRBY z 3 b",
        "ZINCRBY z 0 b",
        "ZINCRBY z 1 c",
        "ZINCRBY z2 1 c",
        "ZADD z INCR 1 a 2 b",
        "ZADD z nan a",
    ],
    "zrem-ranges": [
        "ZADD z 1 a 2 b 3 c 4 d 5 e",
        "ZREM z zz",
        "ZREM z a",
        "ZREMRANGEBYSCORE z 100 200",
        "ZREMRANGEBYSCORE z 2 2",
        "ZREMRANGEBYRANK z 0 0",
        "ZREMRANGEBYRANK z 10 20",
        "ZADD lex 0 a 0 b 0 c",
        "ZREMRANGEBYLEX lex [a [b",
        "ZREMRANGEBYLEX lex [x [z",
        "ZREMRANGEBYLEX lex - +",
        "EXISTS lex",
        "ZREMRANGEBYRANK z 0 -1",
        "EXISTS z",
        "ZADD y 1 a 2 b",
        "ZREM y a b",
        "ZREM y a",
        "ZREMRANGEBYSCORE nokey 0 1",
    ],
    "zpop": [
        "ZADD z 1 a 2 b 3 c 4 d",
        "ZPOPMIN z",
        "ZPOPMAX z",
        "ZPOPMIN z 0",
        "ZPOPMAX z 10",
        "EXISTS z",
        "ZPOPMIN nokey",
        "ZADD a 1 x 2 y",
        "ZADD b 3 q",
        "ZMPOP 2 nokey a MIN",
        "ZMPOP 2 a b MAX COUNT 10",
        "ZMPOP 1 b MIN",
        "EXISTS a b",
        "ZADD c 1 m 2 n",
        "BZPOPMIN c 0",
        "BZPOPMAX nokey c 0",
        "ZADD d 1 o",
        "BZMPOP 0 1 d MIN COUNT 3",
        "EXISTS c d",
    ],
    "zset-store": [
        "ZADD a 1 x 2 y 3 z",
        "ZADD b 2 y 4 w",
        "ZRANGESTORE d a 0 1",
        "ZRANGESTORE d a 5 10",
        "EXISTS d",
        "ZRANGESTORE d a 5 10",
        "ZRANGESTORE d a (1 +inf BYSCORE",
        "ZUNIONSTORE u 2 a b",
        "ZINTERSTORE i 2 a b",
        "ZDIFFSTORE f 2 a b",
        "ZINTERSTORE i 2 a nokey",
        "EXISTS i",
        "ZUNIONSTORE u 1 nokey",
        "EXISTS u",
        "ZDIFFSTORE f 2 a a",
        "EXISTS f",
        "ZDIFFSTORE f 2 nokey a",
        "ZUNIONSTORE a 2 a b WEIGHTS 1 2",
        "SADD set m",
        "ZUNIONSTORE u 2 set a",
        "ZINTERSTORE set 1 a",
        "TYPE set",
    ],
    # ------------------------------------------------------------ generic
    "del-unlink": [
        "MSET a 1 b 2 c 3",
        "DEL a",
        "DEL a",
        "DEL b c nokey",
        "RPUSH l x",
        "SADD s x",
        "UNLINK l s nokey",
        "UNLINK l",
    ],
    "expire-family": [
        "SET k v",
        "EXPIRE k 100",
        "PEXPIRE k 100000",
        "EXPIREAT k 4102444800",
        "PEXPIREAT k 4102444800000",
        "EXPIRE k 100 NX",
        "EXPIRE k 50 XX",
        "EXPIRE k 10 GT",
        "EXPIRE k 1000 LT",
        "EXPIRE nokey 10",
        "PERSIST k",
        "PERSIST k",
        "PERSIST nokey",
        "EXPIRE k 10 XX",
        "SET a 1",
        "EXPIRE a 0",
        "EXISTS a",
        "SET b 1",
        "EXPIRE b -10",
        "SET c 1",
        "PEXPIRE c -1",
        "SET d 1",
        "EXPIREAT d 1",
        "SET e 1",
        "PEXPIREAT e 1000",
        "SET f 1",
        "EXPIREAT f 0 NX",
        "SET g 1",
        "EXPIRE g 100",
        "EXPIRE g 0 GT",
        "EXPIRE g -1 LT",
        "EXISTS b c d e f g",
    ],
    "rename": [
        "SET a 1",
        "RENAME a b",
        "SET c 2",
        "RENAME b c",
        "RENAME c c",
        "RENAME nokey x",
        "SET d 1",
        "RENAMENX c d",
        "RENAMENX c e",
        "RENAMENX e e",
        "SET t v EX 100",
        "RENAME t t2",
        "TTL t2",
        "RPUSH l a",
        "RENAME e l",
        "TYPE l",
    ],
    "copy-move": [
        "SET a 1",
        "COPY a b",
        "COPY a b",
        "COPY a b REPLACE",
        "COPY a a",
        "COPY nokey x",
        "COPY a a DB 1",
        "COPY a b DB 1",
        "RPUSH l 1 2",
        "COPY l l2",
        "MOVE a 1",
        "MOVE a 1",
        "MOVE b 1",
        "SET c 3",
        "MOVE c 0",
        "SELECT 1",
        "MOVE a 0",
        "MOVE b 0",
        "SET x 1",
        "EXPIRE x 100",
        "MOVE x 0",
        "SELECT 0",
        "TTL x",
    ],
    "sort-store": [
        "RPUSH l 3 1 2",
        "SORT l STORE out",
        "SORT l DESC LIMIT 0 1 STORE out",
        "SORT nokey STORE out",
        "EXISTS out",
        "SORT nokey STORE out",
        "SADD s b a",
        "SORT s ALPHA STORE out2",
        "SET str v",
        "SORT l STORE str",
        "TYPE str",
        "SORT_RO l",
    ],
    "swapdb-flush": [
        "SET a 1",
        "SELECT 1",
        "SET b 2",
        "SELECT 0",
        "SWAPDB 0 1",
        "SWAPDB 0 0",
        "GET b",
        "DEL b",
        "FLUSHDB",
        "SELECT 1",
        "FLUSHDB",
        "SET c 3",
        "FLUSHALL",
        "FLUSHALL SYNC",
        "FLUSHDB ASYNC",
        "SELECT 0",
        "SET d 4",
        "FLUSHALL ASYNC",
    ],
    "other-db-channels": [
        "SELECT 3",
        "SET k v",
        "RPUSH l a",
        "LPOP l",
        "EXPIRE k 0",
        "SELECT 15",
        "SET k v",
        "MOVE k 0",
        "SELECT 0",
        "COPY k k DB 15",
    ],
    # ------------------------------------------------------------ expiry
    # Keys past their TTL met by reads and writes: `expired` comes first,
    # then the command's own events.
    "lazy-expiry": [
        "SET a v PX 1",
        "SLEEP 20",
        "GET a",
        "GET a",
        "SET b v PX 1",
        "SLEEP 20",
        "EXISTS b",
        "SET c v PX 1",
        "SLEEP 20",
        "TTL c",
        "SET d v PX 1",
        "SLEEP 20",
        "SET d v2",
        "RPUSH e x",
        "PEXPIRE e 1",
        "SLEEP 20",
        "LPUSH e y",
        "LRANGE e 0 -1",
        "SET f v PX 1",
        "SLEEP 20",
        "DEL f",
        "SET g v PX 1",
        "SLEEP 20",
        "EXPIRE g 100",
        "SET h v PX 1",
        "SLEEP 20",
        "RENAME h h2",
        "SET i v PX 1",
        "SLEEP 20",
        "APPEND i x",
        "SET j v PX 1",
        "SLEEP 20",
        "TYPE j",
        "SET k v PX 1",
        "SLEEP 20",
        "PERSIST k",
    ],
    # Keys past their TTL met by KEYS (which skips them without deleting
    # them), SCAN, RANDOMKEY, DBSIZE, MGET, COPY and MOVE.
    "lazy-expiry-scan": [
        "SET a v PX 1",
        "SLEEP 20",
        "KEYS *",
        "EXISTS a",
        "SET b v PX 1",
        "SLEEP 20",
        "SCAN 0",
        "SET c v PX 1",
        "SLEEP 20",
        "RANDOMKEY",
        "SET d v PX 1",
        "SLEEP 20",
        "DBSIZE",
        "EXISTS d",
        "SET e v PX 1",
        "SLEEP 20",
        "MGET e",
        "SET f v PX 1",
        "SLEEP 20",
        "COPY f g",
        "SET h v PX 1",
        "SLEEP 20",
        "MOVE h 1",
    ],
    # Keys removed by the active expiry (only the arrival of `expired` is
    # compared).
    "active-expiry": [
        "DEBUG SET-ACTIVE-EXPIRE 1",
        "SET a v PX 50",
        "WAITEXPIRED a",
        "EXISTS a",
    ],
    "active-expiry-list": [
        "DEBUG SET-ACTIVE-EXPIRE 1",
        "RPUSH l a b",
        "PEXPIRE l 50",
        "WAITEXPIRED l",
        "EXISTS l",
    ],
    # ------------------------------------------------------------ key creation and misses
    # Class `n`: `new` before the command's own event whenever a key is
    # created, including by RENAME, COPY (also with REPLACE), MOVE (in the
    # target database), a script and a transaction. With `A`, CONFIG GET
    # leaves `n` out of the string it answers.
    "new-events": [
        "CONFIG SET notify-keyspace-events AKEn",
        "CONFIG GET notify-keyspace-events",
        "SET a 1",
        "SET a 2",
        "INCR n",
        "APPEND s x",
        "SETRANGE r 2 x",
        "SETBIT b 1 1",
        "BITFIELD bf SET u8 0 1",
        "MSET m1 1 m2 2",
        "MSETNX m3 1",
        "GETSET gs 1",
        "RPUSH l a b",
        "LPUSH l c",
        "LMOVE l dst LEFT RIGHT",
        "SADD s1 x",
        "SMOVE s1 s2 x",
        "HSET h f v",
        "HINCRBY h2 f 1",
        "ZADD z 1 a",
        "ZINCRBY z2 1 a",
        "SINTERSTORE d1 s2 s2",
        "SINTERSTORE d1 s2 s2",
        "ZUNIONSTORE d2 1 z",
        "ZRANGESTORE d3 z 0 -1",
        "BITOP NOT d4 a",
        "SORT l STORE d5",
        "SORT l STORE d5",
        "RENAME a a2",
        "SET a3 1",
        "RENAME a2 a3",
        "COPY a3 a4",
        "COPY a3 a4 REPLACE",
        "MOVE a4 1",
        "SET ex v PX 1",
        "SLEEP 20",
        "SET ex v",
        "SET nx v NX",
        "EVAL \"redis.call('set', KEYS[1], 'v'); return redis.call('lpush', KEYS[2], 'x')\" 2 ev1 ev2",
        "MULTI",
        "SET t1 1",
        "RPUSH t2 a",
        "EXEC",
    ],
    # Class `m`: `keymiss` for each key a read command looks up and does not
    # find (after `expired` for a key past its TTL).
    "keymiss-events": [
        "CONFIG SET notify-keyspace-events KEm",
        "GET nokey",
        "MGET nokey1 nokey2",
        "EXISTS nokey",
        "TTL nokey",
        "TYPE nokey",
        "LRANGE nokey 0 -1",
        "HGET nokey f",
        "SMEMBERS nokey",
        "ZSCORE nokey m",
        "STRLEN nokey",
        "GETDEL nokey",
        "GETEX nokey",
        "DEL nokey",
        "SET k v",
        "GET k",
        "HGET h f",
        "SET ex v PX 1",
        "SLEEP 20",
        "GET ex",
        "SORT nokey",
        "SUNION nokey1 nokey2",
        "ZUNION 2 nokey1 nokey2",
        "LINDEX nokey 0",
        "DUMP nokey",
        "OBJECT ENCODING nokey",
        "OBJECT IDLETIME nokey",
        "OBJECT FREQ nokey",
        "MEMORY USAGE nokey",
        "EVAL \"return redis.call('get', KEYS[1])\" 1 nokey",
        "CONFIG SET notify-keyspace-events KEA",
        "GET nokey",
        "CONFIG SET notify-keyspace-events KEAm",
        "CONFIG GET notify-keyspace-events",
        "GET nokey",
        "SET ex v PX 1",
        "SLEEP 20",
        "GET ex",
    ],
    # More key creations with `n`, with the classes written out (CONFIG GET
    # puts `n` after the classes, before `K`).
    "new-events-more": [
        "CONFIG SET notify-keyspace-events KEA",
        "CONFIG SET notify-keyspace-events gn$lshzK",
        "CONFIG GET notify-keyspace-events",
        "SETNX a 1",
        "SETNX a 2",
        "SETEX b 100 v",
        "PSETEX c 100000 v",
        "INCRBYFLOAT f 1.5",
        "DECR d",
        "LPUSHX nol a",
        "RPUSH l1 a",
        "RPOPLPUSH l1 l2",
        "HSETNX h f v",
        "HINCRBYFLOAT hf f 1",
        "SADD s1 a b",
        "SUNIONSTORE s2 s1",
        "SDIFFSTORE s3 s1 nos",
        "SUNIONSTORE s2 s1",
        "ZADD z INCR 1 a",
        "ZINTERSTORE z2 1 z",
        "ZDIFFSTORE z3 1 z",
        "ZRANGESTORE z3 z 0 -1",
        "BITOP OR bo a",
        "BITOP OR bo a",
        "GETSET a 5",
        "SET a 6 GET",
        "SET q 1 KEEPTTL",
        "COPY a a5 DB 2",
        "SELECT 2",
        "COPY a5 a6",
        "SELECT 0",
        "RENAMENX a a7",
        "RENAMENX a7 b",
        "MSETNX n1 1 n2 2",
        "SWAPDB 0 1",
        "SWAPDB 0 1",
        "DEL a7",
    ],
    # `new` for the destination a served BLMOVE / BRPOPLPUSH creates, and for
    # keys a script or a transaction creates.
    "new-events-blocked": [
        "CONFIG SET notify-keyspace-events AKEn",
        "&BLMOVE src dst LEFT RIGHT 0",
        "WAITBLOCKED 1",
        "RPUSH src a",
        "&READ",
        "&BRPOPLPUSH src2 dst2 0",
        "WAITBLOCKED 1",
        "EVAL \"return redis.call('rpush', KEYS[1], 'x')\" 1 src2",
        "&READ",
        "&BLPOP src3 0",
        "WAITBLOCKED 1",
        "MULTI",
        "RPUSH src3 a",
        "RPUSH other b",
        "EXEC",
        "&READ",
    ],
    # More blocked clients: sorted sets, LMPOP, a BLPOP on two keys served
    # after a transaction that fills the second key first (the key that
    # became ready first serves it), a list that is filled and emptied
    # again inside a transaction, and a key brought in by SWAPDB.
    "blocked-served-more": [
        "&BZPOPMIN z 0",
        "WAITBLOCKED 1",
        "ZADD z 1 a 2 b",
        "&READ",
        "&BZMPOP 0 1 z2 MAX COUNT 5",
        "WAITBLOCKED 1",
        "ZADD z2 3 c 4 d",
        "&READ",
        "&BLMPOP 0 2 la lb LEFT COUNT 2",
        "WAITBLOCKED 1",
        "RPUSH lb 1 2 3",
        "&READ",
        "&BLPOP k1 k2 0",
        "WAITBLOCKED 1",
        "MULTI",
        "RPUSH k2 x",
        "RPUSH k1 y",
        "EXEC",
        "&READ",
        "&BLMOVE ring ring LEFT RIGHT 0",
        "WAITBLOCKED 1",
        "RPUSH ring r",
        "&READ",
        "&BLPOP gone 0",
        "WAITBLOCKED 1",
        "MULTI",
        "RPUSH gone a",
        "DEL gone",
        "SET gone v",
        "EXEC",
        "DEL gone",
        "RPUSH gone b",
        "&READ",
        "&BLPOP sw 0",
        "WAITBLOCKED 1",
        "SELECT 1",
        "RPUSH sw a",
        "SWAPDB 0 1",
        "SELECT 0",
        "&READ",
    ],
    # Destinations past their TTL: overwritten by RENAME, COPY, stores and
    # SMOVE, or deleted by a store with an empty result (a `del` of the
    # stale key, with no `expired` first).
    "lazy-expiry-dest": [
        "SET s1 a",
        "SADD set1 a",
        "SET d1 v PX 1",
        "SET d2 v PX 1",
        "SET d3 v PX 1",
        "SET d4 v PX 1",
        "SET d5 v PX 1",
        "SET d6 v PX 1",
        "SET d7 v PX 1",
        "SET d8 v PX 1",
        "SET d9 v PX 1",
        "SET d10 v PX 1",
        "SLEEP 20",
        "RENAME s1 d1",
        "COPY d1 d2",
        "SINTERSTORE d3 set1 nokey",
        "SUNIONSTORE d4 set1",
        "ZUNIONSTORE d5 1 nokey",
        "SORT nokey STORE d6",
        "BITOP AND d7 nokey",
        "SMOVE set1 d8 a",
        "RENAMENX d2 d9",
        "MOVE d1 0",
        "SET x v",
        "SELECT 1",
        "SET x v PX 1",
        "SLEEP 20",
        "SELECT 0",
        "MOVE x 1",
        "GETSET d10 w",
        "EXISTS d3 d5 d6 d7",
    ],
    # Keys of every type past their TTL, met by writes of their type and in
    # a transaction.
    "lazy-expiry-types": [
        "RPUSH l a",
        "PEXPIRE l 1",
        "HSET h f v",
        "PEXPIRE h 1",
        "SADD s m",
        "PEXPIRE s 1",
        "ZADD z 1 m",
        "PEXPIRE z 1",
        "SET n 5",
        "PEXPIRE n 1",
        "SET g v PX 1",
        "SET t v PX 1",
        "SET u v PX 1",
        "SLEEP 20",
        "LPOP l",
        "HSET h f v",
        "SREM s m",
        "ZINCRBY z 1 m",
        "INCR n",
        "GETEX g PERSIST",
        "GETDEL t",
        "MULTI",
        "GET u",
        "SET u v",
        "EXEC",
    ],
    # Writes of a function called with FCALL.
    "functions": [
        "FUNCTION FLUSH",
        "FUNCTION LOAD \"#!lua name=nlib\nredis.register_function('w', "
        "function(keys, args) redis.call('set', keys[1], args[1]); "
        "redis.call('hset', keys[2], 'f', 'v'); return redis.call('del', keys[1]) end)\"",
        "FCALL w 2 a h 1",
        "FCALL w 2 a h 1",
        "FUNCTION FLUSH",
    ],
    # CONFIG SET with several options, repeated options, an invalid value
    # next to a valid one, a missing value, and the option name in capitals.
    "config-set-forms": [
        "CONFIG SET notify-keyspace-events Kg hz 10",
        "CONFIG GET notify-keyspace-events",
        "CONFIG SET notify-keyspace-events Kg notify-keyspace-events E$",
        "CONFIG GET notify-keyspace-events",
        "CONFIG SET notify-keyspace-events KEA hz 0",
        "CONFIG GET notify-keyspace-events",
        "CONFIG SET notify-keyspace-events KEQ hz 10",
        "CONFIG GET notify-keyspace-events",
        "CONFIG SET notify-keyspace-events",
        "CONFIG SET NOTIFY-KEYSPACE-EVENTS Kg",
        "CONFIG GET NOTIFY-KEYSPACE-EVENTS",
        "CONFIG GET notify-keyspace-*",
        "SET k v",
        "DEL k",
        "CONFIG SET notify-keyspace-events KEA",
    ],
    # ------------------------------------------------------------ transactions and scripts
    "multi-exec": [
        "MULTI",
        "SET a 1",
        "INCR a",
        "RPUSH l x y",
        "LPOP l 2",
        "SADD s m",
        "EXPIRE a 100",
        "DEL s",
        "EXEC",
        "MULTI",
        "SET b 1",
        "LPUSH b x",
        "SET c 1",
        "EXEC",
        "MULTI",
        "SET d 1",
        "NOSUCHCOMMAND",
        "EXEC",
        "EXISTS d",
        "MULTI",
        "SET e 1",
        "DISCARD",
        "EXISTS e",
    ],
    "eval-writes": [
        "EVAL \"redis.call('set', KEYS[1], ARGV[1]); redis.call('incr', KEYS[2]); "
        "redis.call('rpush', KEYS[3], 'a', 'b'); redis.call('lpop', KEYS[3], 2); "
        "return redis.call('expire', KEYS[1], 100)\" 3 s n l v",
        "EVAL \"redis.call('del', KEYS[1]); return redis.call('hset', KEYS[2], 'f', 'v')\" 2 s h",
        "EVAL \"redis.call('set', KEYS[1], 'x'); return redis.call('lpush', KEYS[1], 'y')\" 1 bad",
        "EVAL \"redis.call('set', KEYS[1], 'x'); return redis.pcall('lpush', KEYS[1], 'y')\" 1 bad2",
        "EVAL \"redis.call('select', 2); return redis.call('set', KEYS[1], 'x')\" 1 other",
        "SET ex v PX 1",
        "SLEEP 20",
        "EVAL \"return redis.call('get', KEYS[1])\" 1 ex",
        "EVAL \"redis.call('set', KEYS[1], 'v', 'PX', 1); return redis.call('exists', KEYS[1])\" 1 ex2",
        f"SCRIPT LOAD \"{INCR_SCRIPT}\"",
        f"EVALSHA {sha(INCR_SCRIPT)} 1 n",
        "MULTI",
        "EVAL \"return redis.call('sadd', KEYS[1], 'a')\" 1 st",
        "SREM st a",
        "EXEC",
    ],
}

# Sequences run under each flag set of FLAG_SETS.
for _flags in FLAG_SETS:
    SEQUENCES[f"flags-{_flags or 'none'}"] = [
        f"CONFIG SET notify-keyspace-events '{_flags}'",
        "CONFIG GET notify-keyspace-events",
        *MIXED,
    ]


class Conn(Raw):
    """A Raw connection that gives up after a few seconds instead of
    waiting for a reply that never comes."""

    def __init__(self, port, resp3=False):
        super().__init__(port, timeout=3)
        if resp3:
            assert self.cmd("HELLO", "3").startswith(b"%")


def parse_resp(data):
    """The value of one RESP2 reply or RESP3 push given as bytes (arrays
    as lists)."""
    def go(i):
        t = data[i:i + 1]
        j = data.index(b"\r\n", i)
        head = data[i + 1:j]
        if t == b"$":
            n = int(head)
            if n < 0:
                return None, j + 2
            return data[j + 2:j + 2 + n], j + 4 + n
        if t in (b"*", b">"):
            n = int(head)
            out, k = [], j + 2
            for _ in range(max(n, 0)):
                v, k = go(k)
                out.append(v)
            return out, k
        if t == b":":
            return int(head), j + 2
        return head, j + 2
    return go(0)[0]


TIMEOUT = ("<no marker: timed out>",)


class Side:
    """One server's three connections: commands, subscriber, blocked
    client."""

    def __init__(self, port, resp3=False):
        self.port = port
        self.cmd = Conn(port)
        self.sub = Conn(port, resp3=resp3)
        self.blk = Conn(port)
        self.marks = 0
        self.in_multi = False
        self.sub.cmd("PSUBSCRIBE", PATTERN)
        # Channels subscribed to by name too: a notification then reaches
        # the subscriber twice, as a `message` and as a `pmessage`.
        self.sub.send("SUBSCRIBE", MARK, *EXACT)
        for _ in range(1 + len(EXACT)):
            self.sub.read()

    def close(self):
        for c in (self.cmd, self.sub, self.blk):
            c.close()

    def drain(self):
        """The notifications received before the next marker."""
        self.marks += 1
        mark = str(self.marks).encode()
        self.cmd.cmd("PUBLISH", MARK, mark)
        got = []
        while True:
            try:
                raw = self.sub.read()
            except socket.timeout:
                got.append(TIMEOUT)
                return got
            msg = parse_resp(raw)
            if msg[0] == b"message" and msg[1] == MARK.encode():
                if msg[2] == mark:
                    return got
                continue
            # The reply type (`*` array in RESP2, `>` push in RESP3) with
            # kind, [pattern,] channel and payload.
            got.append((raw[:1], *msg))

    def wait_expired(self, key, timeout=2.0):
        """Whether an `expired` event for `key` arrives within `timeout`
        seconds (polled with markers; other messages are dropped)."""
        key = key.encode()
        end = time.time() + timeout
        while True:
            for msg in self.drain():
                if msg[1] == b"pmessage" and (
                        (msg[3].endswith(b"__:expired") and msg[4] == key)
                        or (msg[3].endswith(b"__:" + key) and msg[4] == b"expired")):
                    return True
            if time.time() > end:
                return False
            time.sleep(0.02)

    def blocked(self):
        info = self.cmd.cmd("INFO", "clients").decode()
        for line in info.split("\r\n"):
            if line.startswith("blocked_clients:"):
                return int(line.split(":")[1])
        return -1

    def run(self, line):
        """Runs one line; returns what is compared for it."""
        if line.startswith("SLEEP "):
            time.sleep(int(line.split()[1]) / 1000)
            return None
        if line.startswith("WAITBLOCKED "):
            want = int(line.split()[1])
            end = time.time() + 3
            while self.blocked() != want and time.time() < end:
                time.sleep(0.005)
            return ("blocked", self.blocked())
        if line.startswith("WAITEXPIRED "):
            return ("expired event", self.wait_expired(line.split()[1]))
        if line == "&READ":
            try:
                reply = self.blk.read()
            except socket.timeout:
                reply = b"<no reply>"
            return reply, self.drain()
        if line.startswith("&"):
            self.blk.send(*shlex.split(line[1:]))
            return None
        # `~`: the reply is not compared (a random pick), only the events.
        unchecked = line.startswith("~")
        args = shlex.split(line.lstrip("~"))
        try:
            reply = self.cmd.cmd(*args)
        except socket.timeout:
            reply = b"<no reply>"
        name = args[0].upper()
        if name == "MULTI" and reply == b"+OK\r\n":
            self.in_multi = True
        elif name in ("EXEC", "DISCARD"):
            self.in_multi = False
        if unchecked:
            reply = b"<not compared>"
        if self.in_multi:
            return reply, []
        return reply, self.drain()


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    if shutil.which("redis-server") is None:
        pytest.skip("needs redis-server")
    d = tmp_path_factory.mktemp("notif")
    ebb = EbbServer("--dir", str(d), "--save", "", "--appendonly", "no", cwd=str(d))
    red = RedisServer(cwd=str(d))
    yield ebb.port, red.port
    ebb.stop()
    red.stop()


def replay(ports, lines, resp3=False):
    """Runs `lines` on both servers after FLUSHALL with notifications KEA;
    returns the mismatches as (line, ebb's, redis-server's)."""
    sides = []
    try:
        for p in ports:
            s = Side(p, resp3=resp3)
            sides.append(s)
            s.cmd.cmd("CONFIG", "SET", "notify-keyspace-events", "")
            s.cmd.cmd("SELECT", "0")
            s.cmd.cmd("FLUSHALL")
            s.cmd.cmd("SCRIPT", "FLUSH")
            # Keys past their TTL stay until a command touches them, so
            # lazy expiry is what the sequences see; the active-expiry
            # sequences turn the sweeper back on.
            assert s.cmd.cmd("DEBUG", "SET-ACTIVE-EXPIRE", "0") == b"+OK\r\n"
            assert s.cmd.cmd("CONFIG", "SET", "notify-keyspace-events", "KEA") == b"+OK\r\n"
            assert s.drain() == []
        bad = []
        for line in lines:
            e, r = (s.run(line) for s in sides)
            if e != r:
                bad.append((line, e, r))
        return bad
    finally:
        for s in sides:
            s.close()


def show(x, n=1500):
    text = repr(x)
    return text if len(text) <= n else text[:n] + "..."


# Sequences also run with a RESP3 subscriber (notifications as pushes).
RESP3_SEQUENCES = ["set-variants", "list-move", "copy-move", "new-events",
                   "keymiss-events", "multi-exec", "lazy-expiry"]

CASES = [(n, False) for n in SEQUENCES] + [(n, True) for n in RESP3_SEQUENCES]


@pytest.mark.parametrize("name,resp3", CASES,
                         ids=[n + ("-resp3" if r else "") for n, r in CASES])
def test_notifications_match_redis(servers, name, resp3):
    bad = replay(servers, SEQUENCES[name], resp3)
    assert not bad, "\n".join(
        f"{line}:\n  ebb:   {show(e)}\n  redis: {show(r)}" for line, e, r in bad)


def test_config_flag_strings_match_redis(servers):
    # The reply of CONFIG SET notify-keyspace-events and the normalised
    # string CONFIG GET answers afterwards.
    results = []
    for port in servers:
        c = Conn(port)
        try:
            c.cmd("CONFIG", "SET", "notify-keyspace-events", "")
            out = []
            for value in CONFIG_VALUES:
                out.append((value,
                            c.cmd("CONFIG", "SET", "notify-keyspace-events", value),
                            c.cmd("CONFIG", "GET", "notify-keyspace-events")))
            c.cmd("CONFIG", "SET", "notify-keyspace-events", "")
            results.append(out)
        finally:
            c.close()
    bad = [(e, r) for e, r in zip(*results) if e != r]
    assert not bad, "\n".join(f"ebb:   {e!r}\nredis: {r!r}" for e, r in bad)


# Commands a RESP3 connection runs while it is itself subscribed to the
# notifications: its pushes and replies interleave on one connection.
# ebb writes a command's own events ahead of its reply for every command.
# Redis does so for most (SET, INCR, DEL, SADD, scripts) but writes the
# reply first for some (list pushes and pops, EXPIRE): those are left out
# (docs/compat.md, "Still different").
SELF_LINES = [
    "SET a 1",
    "INCR a",
    "DEL a nokey",
    ("MULTI", "SET b 1", "PERSIST b", "INCR n", "EXEC"),
    "EVAL \"return redis.call('set', KEYS[1], 'v')\" 1 c",
    "GET c",
    "SADD s m",
    "SET d v PX 1",
]


def test_resp3_self_notifications_match_redis(servers):
    # After each command (a tuple: a transaction's commands), a PING with
    # an argument: everything the connection is sent up to PING's reply is
    # compared byte for byte.
    results = []
    for port in servers:
        c = Conn(port, resp3=True)
        try:
            c.cmd("CONFIG", "SET", "notify-keyspace-events", "")
            c.cmd("FLUSHALL")
            c.cmd("CONFIG", "SET", "notify-keyspace-events", "KEA")
            c.cmd("PSUBSCRIBE", PATTERN)
            out = []
            for n, line in enumerate(SELF_LINES):
                for one in (line if isinstance(line, tuple) else (line,)):
                    c.send(*shlex.split(one))
                c.send("PING", f"end{n}")
                want = b"$%d\r\nend%d\r\n" % (len(f"end{n}"), n)
                got = []
                while True:
                    try:
                        frame = c.read()
                    except socket.timeout:
                        got.append(b"<timed out>")
                        break
                    if frame == want:
                        break
                    got.append(frame)
                # Compared as one byte string: Redis 7.0 writes the pushes
                # of a transaction's commands between the elements of
                # EXEC's array, which no frame-by-frame reading follows.
                out.append((line, b"".join(got)))
            results.append(out)
        finally:
            c.close()
        Conn(port).cmd("CONFIG", "SET", "notify-keyspace-events", "")
    bad = [(e, r) for e, r in zip(*results) if e != r]
    assert not bad, "\n".join(f"{e[0]}:\n  ebb:   {e[1]!r}\n  redis: {r[1]!r}"
                              for e, r in bad)
