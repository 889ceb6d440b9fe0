//! Tests for the KeyDB and Dragonfly forms and the key-level TTL/PTTL/PERSIST.

use super::*;
use crate::cmd::member_ttl::tests::{b, ints, make_hash, make_set, make_zset, run};
use crate::testing::{err, Harness};

const NOW: u64 = 1_000_000_000_000;

fn rewrite(h: &Harness) -> Option<Vec<String>> {
    h.fx.rewrite.as_ref().map(|cmds| {
        cmds.iter()
            .map(|c| {
                c.iter()
                    .map(|a| String::from_utf8_lossy(a).into_owned())
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect()
    })
}

fn event_names(h: &Harness) -> Vec<String> {
    h.fx.events
        .iter()
        .map(|e| format!("{}:{}", e.class as char, e.name))
        .collect()
}

#[test]
fn key_ttl_follows_redis_7() {
    let mut h = Harness::new();
    assert_eq!(run(&mut h, "TTL k"), Reply::Int(-2));
    assert_eq!(run(&mut h, "PTTL k"), Reply::Int(-2));
    h.run(&["SET", "k", "v"]);
    assert_eq!(run(&mut h, "TTL k"), Reply::Int(-1));
    assert_eq!(run(&mut h, "PTTL k"), Reply::Int(-1));
    h.store.dbs[0].set_expire(b"k", Some(NOW + 1499));
    assert_eq!(run(&mut h, "TTL k"), Reply::Int(1));
    assert_eq!(run(&mut h, "PTTL k"), Reply::Int(1499));
    h.store.dbs[0].set_expire(b"k", Some(NOW + 1500));
    assert_eq!(run(&mut h, "TTL k"), Reply::Int(2), "rounded to nearest");
    h.advance(1500);
    assert_eq!(run(&mut h, "TTL k"), Reply::Int(-2));
    assert_eq!(
        run(&mut h, "TTL a b c"),
        err("ERR wrong number of arguments for 'ttl' command")
    );
    assert_eq!(
        run(&mut h, "PTTL a b c"),
        err("ERR wrong number of arguments for 'pttl' command")
    );
    assert_eq!(
        run(&mut h, "TTL"),
        err("ERR wrong number of arguments for 'ttl' command")
    );
}

#[test]
fn key_persist_follows_redis_7() {
    let mut h = Harness::new();
    assert_eq!(run(&mut h, "PERSIST k"), Reply::Int(0));
    h.run(&["SET", "k", "v"]);
    assert_eq!(run(&mut h, "PERSIST k"), Reply::Int(0));
    assert!(h.fx.is_empty());
    h.store.dbs[0].set_expire(b"k", Some(NOW + 10));
    assert_eq!(run(&mut h, "PERSIST k"), Reply::Int(1));
    assert_eq!(event_names(&h), vec!["g:persist"]);
    assert_eq!(h.fx.dirty, 1);
    assert_eq!(h.store.dbs[0].stats().expires, 0);
    h.advance(100);
    assert_eq!(run(&mut h, "TTL k"), Reply::Int(-1));
    assert_eq!(
        run(&mut h, "PERSIST k m x"),
        err("ERR wrong number of arguments for 'persist' command")
    );
}

#[test]
fn member_ttl_and_persist_in_keydb_form() {
    let mut h = Harness::new();
    make_set(&mut h, "s", &["a", "b"]);
    assert_eq!(run(&mut h, "TTL s a"), Reply::Int(-1));
    assert_eq!(run(&mut h, "TTL s nope"), Reply::Int(-2));
    assert_eq!(run(&mut h, "TTL nokey a"), Reply::Int(-2));
    assert_eq!(run(&mut h, "EXPIREMEMBER s a 1500 ms"), Reply::Int(1));
    assert_eq!(run(&mut h, "PTTL s a"), Reply::Int(1500));
    assert_eq!(
        run(&mut h, "TTL s a"),
        Reply::Int(2),
        "rounded up, like HTTL"
    );
    assert_eq!(run(&mut h, "EXPIREMEMBER s a 400 ms"), Reply::Int(1));
    assert_eq!(
        run(&mut h, "TTL s a"),
        Reply::Int(1),
        "a live member never reads 0"
    );
    assert_eq!(
        run(&mut h, "TTL s"),
        Reply::Int(-1),
        "the key itself has no TTL"
    );
    assert_eq!(run(&mut h, "PERSIST s a"), Reply::Int(1));
    assert_eq!(event_names(&h), vec!["s:spersist"]);
    assert_eq!(h.fx.events[0].members, vec![b("a")]);
    assert_eq!(run(&mut h, "PERSIST s a"), Reply::Int(0));
    assert_eq!(run(&mut h, "PERSIST s nope"), Reply::Int(0));
    assert_eq!(run(&mut h, "PERSIST nokey a"), Reply::Int(0));
    assert_eq!(run(&mut h, "PTTL s a"), Reply::Int(-1));
    h.run(&["SET", "str", "v"]);
    let wt = err("WRONGTYPE Operation against a key holding the wrong kind of value");
    assert_eq!(run(&mut h, "TTL str a"), wt);
    assert_eq!(run(&mut h, "PERSIST str a"), wt);
    assert_eq!(run(&mut h, "TTL str"), Reply::Int(-1));
}

#[test]
fn expiremember_units_errors_and_log() {
    let mut h = Harness::new();
    make_hash(&mut h, "h", &["f", "g"]);
    assert_eq!(run(&mut h, "EXPIREMEMBER h f 10"), Reply::Int(1));
    assert_eq!(
        rewrite(&h),
        Some(vec![format!("HPEXPIREAT h {} FIELDS 1 f", NOW + 10_000)])
    );
    assert_eq!(event_names(&h), vec!["h:hexpire"]);
    assert_eq!(run(&mut h, "PTTL h f"), Reply::Int(10_000));
    assert_eq!(run(&mut h, "EXPIREMEMBER h f 20 S"), Reply::Int(1));
    assert_eq!(run(&mut h, "PTTL h f"), Reply::Int(20_000));
    assert_eq!(run(&mut h, "EXPIREMEMBER h f 250 ms"), Reply::Int(1));
    assert_eq!(run(&mut h, "PTTL h f"), Reply::Int(250));
    assert_eq!(run(&mut h, "EXPIREMEMBER h nope 10"), Reply::Int(0));
    assert_eq!(rewrite(&h), Some(vec![]));
    assert_eq!(run(&mut h, "EXPIREMEMBER nokey f 10"), Reply::Int(0));
    assert_eq!(
        run(&mut h, "EXPIREMEMBER h f x"),
        err("ERR value is not an integer or out of range")
    );
    assert_eq!(
        run(&mut h, "EXPIREMEMBER h f 10 m"),
        err("ERR Invalid unit arg")
    );
    assert_eq!(
        run(&mut h, "EXPIREMEMBER h f 10 s x"),
        err("ERR Invalid number of arguments")
    );
    assert_eq!(
        run(&mut h, "EXPIREMEMBER h f"),
        err("ERR wrong number of arguments for 'expiremember' command")
    );
    assert_eq!(
        run(&mut h, "EXPIREMEMBER h f 9223372036854775807"),
        err("ERR invalid expire time in 'expiremember' command")
    );
    // Zero or negative delay deletes the member, and the key with its last member.
    assert_eq!(run(&mut h, "EXPIREMEMBER h f -5"), Reply::Int(1));
    assert_eq!(rewrite(&h), Some(vec!["HDEL h f".to_string()]));
    assert_eq!(event_names(&h), vec!["h:hdel"]);
    assert_eq!(run(&mut h, "EXPIREMEMBER h g 0"), Reply::Int(1));
    assert_eq!(event_names(&h), vec!["h:hdel", "g:del"]);
    assert_eq!(run(&mut h, "TTL h g"), Reply::Int(-2));
    h.run(&["SET", "str", "v"]);
    assert_eq!(
        run(&mut h, "EXPIREMEMBER str f 10"),
        err("WRONGTYPE Operation against a key holding the wrong kind of value")
    );
}

#[test]
fn expirememberat_forms() {
    let mut h = Harness::new();
    make_zset(&mut h, "z", &["a", "b"]);
    let at = (NOW / 1000 + 30).to_string();
    assert_eq!(h.run(&["EXPIREMEMBERAT", "z", "a", &at]), Reply::Int(1));
    assert_eq!(
        rewrite(&h),
        Some(vec![format!("ZPEXPIREAT z {} MEMBERS 1 a", NOW + 30_000)])
    );
    assert_eq!(event_names(&h), vec!["z:zexpire"]);
    let at = (NOW + 700).to_string();
    assert_eq!(h.run(&["PEXPIREMEMBERAT", "z", "b", &at]), Reply::Int(1));
    assert_eq!(run(&mut h, "PTTL z b"), Reply::Int(700));
    assert_eq!(run(&mut h, "TTL z a"), Reply::Int(30));
    assert_eq!(run(&mut h, "PEXPIREMEMBERAT z a 5"), Reply::Int(1));
    assert_eq!(rewrite(&h), Some(vec!["ZREM z a".to_string()]));
    assert_eq!(run(&mut h, "EXPIREMEMBERAT z a 5"), Reply::Int(0));
    assert_eq!(
        run(&mut h, "PEXPIREMEMBERAT z b x"),
        err("ERR value is not an integer or out of range")
    );
    assert_eq!(
        run(&mut h, "EXPIREMEMBERAT z b 70368744178"),
        err("ERR invalid expire time in 'expirememberat' command")
    );
    assert_eq!(
        run(&mut h, "EXPIREMEMBERAT z b 1 2"),
        err("ERR wrong number of arguments for 'expirememberat' command")
    );
    h.advance(700);
    assert_eq!(run(&mut h, "TTL z b"), Reply::Int(-2));
    assert!(h.store.dbs[0].raw_get(b"z").is_none());
}

#[test]
fn fieldexpire_and_fieldttl_follow_dragonfly() {
    let mut h = Harness::new();
    make_set(&mut h, "s", &["a", "b"]);
    assert_eq!(run(&mut h, "FIELDEXPIRE s 10 a nope b"), ints(&[1, -2, 1]));
    assert_eq!(
        rewrite(&h),
        Some(vec![format!("SPEXPIREAT s {} MEMBERS 2 a b", NOW + 10_000)])
    );
    assert_eq!(event_names(&h), vec!["s:sexpire"]);
    assert_eq!(run(&mut h, "FIELDTTL s a"), Reply::Int(10));
    h.advance(500);
    assert_eq!(run(&mut h, "FIELDTTL s a"), Reply::Int(10), "rounded up");
    assert_eq!(run(&mut h, "FIELDTTL s nope"), Reply::Int(-3));
    assert_eq!(run(&mut h, "FIELDTTL nokey a"), Reply::Int(-2));
    assert_eq!(run(&mut h, "FIELDEXPIRE nokey 10 a b"), ints(&[-2, -2]));
    make_hash(&mut h, "h", &["f"]);
    assert_eq!(run(&mut h, "FIELDTTL h f"), Reply::Int(-1));
    assert_eq!(run(&mut h, "FIELDEXPIRE h 1 f"), ints(&[1]));
    assert_eq!(event_names(&h), vec!["h:hexpire"]);
    make_zset(&mut h, "z", &["m"]);
    assert_eq!(run(&mut h, "FIELDEXPIRE z 2 m"), ints(&[1]));
    assert_eq!(run(&mut h, "FIELDTTL z m"), Reply::Int(2));
    let nint = err("ERR value is not an integer or out of range");
    assert_eq!(run(&mut h, "FIELDEXPIRE s 0 a"), nint);
    assert_eq!(run(&mut h, "FIELDEXPIRE s -1 a"), nint);
    assert_eq!(run(&mut h, "FIELDEXPIRE s 67108865 a"), nint);
    assert_eq!(run(&mut h, "FIELDEXPIRE s x a"), nint);
    assert_eq!(run(&mut h, "FIELDEXPIRE s 67108864 a"), ints(&[1]));
    h.run(&["SET", "str", "v"]);
    let wt = err("WRONGTYPE Operation against a key holding the wrong kind of value");
    assert_eq!(run(&mut h, "FIELDEXPIRE str 10 a"), wt);
    assert_eq!(run(&mut h, "FIELDTTL str a"), wt);
    h.advance(1000);
    assert_eq!(
        run(&mut h, "FIELDTTL h f"),
        Reply::Int(-2),
        "the hash went with its last field"
    );
}
