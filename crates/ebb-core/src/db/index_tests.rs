//! The key-TTL and member-deadline indexes hold exactly one entry per
//! key with a TTL / member deadlines, under the stored deadline and the
//! key's own bytes.

use super::*;
use crate::testing::Harness;
use std::collections::BTreeSet;

/// An index's pairs as (deadline, key bytes).
fn named(db: &Db, index: &DueIndex) -> BTreeSet<(u64, Vec<u8>)> {
    index
        .iter()
        .map(|(t, i)| (t, db.map.get_index(i).expect("indexed position").0.to_vec()))
        .collect()
}

fn check_indexes(store: &Store) {
    for (i, db) in store.dbs.iter().enumerate() {
        let want_ttl: BTreeSet<(u64, Vec<u8>)> = db
            .map
            .iter()
            .filter_map(|(k, e)| e.expire_at().map(|t| (t, k.to_vec())))
            .collect();
        assert_eq!(named(db, &db.key_expiry), want_ttl, "db {i}: key-TTL index");
        assert_eq!(db.key_expiry.len(), want_ttl.len(), "db {i}");
        let sum: u128 = want_ttl.iter().map(|(t, _)| u128::from(*t)).sum();
        assert_eq!(db.key_expiry.sum, sum, "db {i}: deadline sum");
        let want_members: BTreeSet<(u64, Vec<u8>)> = db
            .map
            .iter()
            .filter_map(|(k, e)| due_opt(e.member_due()).map(|t| (t, k.to_vec())))
            .collect();
        assert_eq!(
            named(db, &db.member_expiry),
            want_members,
            "db {i}: member index"
        );
        for (k, e) in db.map.iter() {
            assert_eq!(
                due_opt(e.member_due()),
                e.value.earliest_deadline(),
                "db {i} key {:?}: recorded member deadline",
                k
            );
            assert!(db.map.get(&k[..]).is_some());
        }
    }
}

/// Random key-space commands over short, boundary-length, long,
/// binary and empty keys keep both indexes in line with the table.
#[test]
fn indexes_follow_the_table_for_keys_of_every_length() {
    let keys: Vec<Vec<u8>> = vec![
        b"".to_vec(),
        b"a".to_vec(),
        vec![b'k'; 21],
        vec![b'k'; 22],
        vec![b'k'; 23],
        [vec![b'k'; 22], b"x".to_vec()].concat(),
        vec![b'q'; 64],
        vec![0u8; 22],
        vec![0u8; 23],
        vec![0xff; 30],
    ];
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut rnd = move |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    };
    let mut h = Harness::new();
    for _ in 0..20_000 {
        let k = keys[rnd(keys.len())].clone();
        let k2 = keys[rnd(keys.len())].clone();
        let ms = (1 + rnd(50)).to_string();
        let db = rnd(3).to_string();
        let m = ["m1", "m2", "m3"][rnd(3)];
        let argv: Vec<&[u8]> = match rnd(26) {
            0 => vec![b"SET", &k, b"v"],
            1 => vec![b"SET", &k, b"v", b"PX", ms.as_bytes()],
            2 => vec![b"PEXPIRE", &k, ms.as_bytes()],
            3 => vec![b"PERSIST", &k],
            4 => vec![b"DEL", &k],
            5 => vec![b"RENAME", &k, &k2],
            6 => vec![b"RENAMENX", &k, &k2],
            7 => vec![b"MOVE", &k, db.as_bytes()],
            8 => vec![b"COPY", &k, &k2, b"DB", db.as_bytes(), b"REPLACE"],
            9 => vec![b"COPY", &k, &k2],
            10 => vec![b"SADD", &k, m.as_bytes()],
            11 => vec![
                b"SPEXPIRE",
                &k,
                ms.as_bytes(),
                b"MEMBERS",
                b"1",
                m.as_bytes(),
            ],
            12 => vec![b"HSET", &k, m.as_bytes(), b"v"],
            13 => vec![
                b"HPEXPIRE",
                &k,
                ms.as_bytes(),
                b"FIELDS",
                b"1",
                m.as_bytes(),
            ],
            14 => vec![b"ZADD", &k, b"1", m.as_bytes()],
            15 => vec![
                b"ZPEXPIRE",
                &k,
                ms.as_bytes(),
                b"MEMBERS",
                b"1",
                m.as_bytes(),
            ],
            16 => vec![b"GETEX", &k, b"PX", ms.as_bytes()],
            17 => vec![b"GETEX", &k, b"PERSIST"],
            18 => vec![b"SWAPDB", b"0", db.as_bytes()],
            19 => vec![b"SREM", &k, m.as_bytes()],
            20 => vec![b"HPERSIST", &k, b"FIELDS", b"1", m.as_bytes()],
            21 => vec![b"EXISTS", &k],
            22 => vec![b"SET", &k, b"v", b"KEEPTTL"],
            23 => vec![b"APPEND", &k, b"v"],
            24 => vec![b"RPUSH", &k, b"v"],
            _ => {
                if rnd(4) == 0 {
                    h.sweep();
                } else {
                    h.advance(rnd(30) as u64);
                }
                check_indexes(&h.store);
                continue;
            }
        };
        if rnd(200) == 0 {
            h.run(&["FLUSHDB"]);
        }
        h.db = rnd(2);
        let argv: Vec<Bytes> = argv.iter().map(|a| Bytes::copy_from_slice(a)).collect();
        h.run_bytes(&argv);
        check_indexes(&h.store);
    }
    h.advance(1_000);
    h.sweep();
    check_indexes(&h.store);
    for db in &h.store.dbs {
        assert!(db.key_expiry.len() == 0 && db.member_expiry.len() == 0);
    }
}
