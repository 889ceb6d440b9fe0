//! A whole RDB file: `REDIS` and a 4-digit version, then opcodes (aux
//! fields, database selection, key TTLs, access hints, function
//! libraries) around the keys, an end byte and (from version 5) the file's
//! CRC-64.

use bytes::Bytes;

use super::{Reader, Unreadable, FILE_VERSION};

/// Whether `data` starts as a Redis RDB file does.
pub fn is_file(data: &[u8]) -> bool {
    data.starts_with(b"REDIS")
}

/// What a file held.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Loaded {
    /// The file's format version.
    pub version: u32,
    /// Keys read (those whose TTL had passed included).
    pub keys: u64,
    /// Empty collections skipped, as Redis skips them.
    pub empty: u64,
    /// The names of the first ten of them.
    pub empty_names: Vec<Bytes>,
    /// Function libraries read.
    pub libraries: u64,
    /// Bytes read, the end byte and checksum included: an AOF that starts
    /// with an RDB preamble goes on with commands from there.
    pub len: usize,
}

const OP_SLOT_INFO: u8 = 244;
pub(super) const OP_FUNCTION2: u8 = 245;
const OP_FUNCTION_PRE_GA: u8 = 246;
const OP_MODULE_AUX: u8 = 247;
const OP_IDLE: u8 = 248;
const OP_FREQ: u8 = 249;
pub(super) const OP_AUX: u8 = 250;
pub(super) const OP_RESIZEDB: u8 = 251;
pub(super) const OP_EXPIRETIME_MS: u8 = 252;
const OP_EXPIRETIME: u8 = 253;
pub(super) const OP_SELECTDB: u8 = 254;
pub(super) const OP_EOF: u8 = 255;

/// File bytes per key a RESIZEDB hint may reserve room for (a string key
/// of a few bytes takes about that much in a file).
const HINT_BYTES_PER_KEY: u64 = 16;

/// Where the data of a file goes as it is decoded.
pub trait Target {
    /// A command that rebuilds part of the data: FUNCTION LOAD for each
    /// library, SELECT before each database's keys, each key's value
    /// commands and then its PEXPIREAT.
    fn command(&mut self, argv: &[&[u8]]);
    /// Whether `key` of database `db` was read before (asked before the
    /// first command of its value, or after a value that made none): a
    /// key met twice stops the load, as in Redis.
    fn holds(&mut self, db: u64, key: &[u8]) -> bool;
    /// `key` of database `db` was just named; its value is read next, then
    /// [`Self::holds`] looks it up: a chance to start loading what that
    /// lookup reads.
    fn prefetch(&mut self, _db: u64, _key: &[u8]) {}
    /// `key` of database `db` was read (it was not empty).
    fn read(&mut self, _db: u64, _key: &[u8]) {}
    /// The bytes read so far, after each key (INFO's loading figures).
    fn progress(&mut self, _at: usize) {}
    /// The file's hint of how many keys the database being read holds
    /// (all the hints of a file together at most one key per 16 bytes of
    /// it, whatever they claim).
    fn expect_keys(&mut self, _keys: u64) {}
}

/// A [`Target`] of commands alone, telling keys apart by two independent
/// hashes of (database, key) (the names are not kept).
struct Commands<'e> {
    emit: &'e mut dyn FnMut(&[&[u8]]),
    seen: super::value::Seen,
}

impl Target for Commands<'_> {
    fn command(&mut self, argv: &[&[u8]]) {
        (self.emit)(argv)
    }
    fn holds(&mut self, db: u64, key: &[u8]) -> bool {
        self.seen.contains(&key_hash(db, key))
    }
    fn read(&mut self, db: u64, key: &[u8]) {
        self.seen.insert(key_hash(db, key));
    }
}

/// Calls `emit` with the commands that rebuild the file's data (see
/// [`Target::command`]). `databases` is how many the server has. Err is
/// the reason to log, with the byte offset it was found at.
pub fn file_commands(
    data: &[u8],
    databases: usize,
    emit: &mut dyn FnMut(&[&[u8]]),
) -> Result<Loaded, String> {
    let mut target = Commands {
        emit,
        seen: Default::default(),
    };
    load_file(data, databases, &mut target)
}

/// Decodes a file into `target`. `databases` is how many the server has.
/// Err is the reason to log, with the byte offset it was found at.
pub fn load_file(data: &[u8], databases: usize, target: &mut dyn Target) -> Result<Loaded, String> {
    let magic = data
        .get(..9)
        .ok_or("the file is too short to be an RDB file")?;
    let version: u32 = std::str::from_utf8(&magic[5..])
        .ok()
        .filter(|v| v.bytes().all(|c| c.is_ascii_digit()))
        .and_then(|v| v.parse().ok())
        .ok_or("not an RDB file (bad magic)")?;
    if version == 0 || version > FILE_VERSION {
        return Err(format!("Can't handle RDB format version {version}"));
    }
    let mut r = Reader { data, at: 9 };
    let mut loaded = Loaded {
        version,
        ..Loaded::default()
    };
    let damaged = |r: &Reader<'_>, why: &str| {
        format!(
            "Internal error in RDB reading offset {}: {why} (damaged or truncated file)",
            r.at
        )
    };
    let mut expire_at: Option<i64> = None;
    let mut db = 0u64;
    // Keys the RESIZEDB hints may reserve room for, over all databases:
    // one per 16 bytes of the file, whatever the hints claim.
    let mut hint_budget = data.len() as u64 / HINT_BYTES_PER_KEY;
    loop {
        let at = r.at;
        let op = r
            .byte()
            .map_err(|_| damaged(&r, "Unexpected EOF reading RDB file"))?;
        let step: Result<(), Unreadable> = (|| {
            match op {
                OP_EOF => return Ok(()),
                OP_SELECTDB => {
                    db = r.len()?;
                    if db >= databases as u64 {
                        return Err(Unreadable::Unsupported(
                            "a database number past `databases`",
                        ));
                    }
                    target.command(&[b"SELECT", itoa::Buffer::new().format(db).as_bytes()]);
                }
                OP_RESIZEDB => {
                    let keys = r.len()?;
                    r.len()?;
                    let grant = keys.min(hint_budget);
                    hint_budget -= grant;
                    target.expect_keys(grant);
                }
                OP_SLOT_INFO => {
                    r.len()?;
                    r.len()?;
                    r.len()?;
                }
                OP_AUX => {
                    let name = r.string()?;
                    let value = r.string()?;
                    if name == super::write::DEADLINES_AUX {
                        member_deadlines(&value, &mut |a| target.command(a))?;
                    }
                }
                // Both signed, as Redis reads them.
                OP_EXPIRETIME_MS => expire_at = Some(r.u64_le()? as i64),
                OP_EXPIRETIME => {
                    let s = r.take(4)?;
                    let secs = i32::from_le_bytes([s[0], s[1], s[2], s[3]]);
                    expire_at = Some(secs as i64 * 1000);
                }
                OP_IDLE => {
                    r.len()?;
                }
                OP_FREQ => {
                    r.byte()?;
                }
                OP_FUNCTION2 => {
                    let code = r.string()?;
                    loaded.libraries += 1;
                    target.command(&[b"FUNCTION", b"LOAD", &code]);
                }
                OP_FUNCTION_PRE_GA => {
                    return Err(Unreadable::Unsupported(
                        "a function of a Redis 7.0 release candidate",
                    ))
                }
                OP_MODULE_AUX => return Err(Unreadable::Unsupported("module data")),
                t => {
                    let key = r.bytes()?;
                    // Redis refuses a key met twice in a database (an
                    // empty one aside, skipped before it looks). The look
                    // comes just before the value's first command, so
                    // the lookup's memory loads while the value is read.
                    target.prefetch(db, &key);
                    let mut twice = None;
                    let emit = &mut |a: &[&[u8]]| {
                        if twice.is_none() {
                            twice = Some(target.holds(db, &key));
                        }
                        target.command(a)
                    };
                    match super::value::value_commands(&mut r, t, &key, emit) {
                        Err(Unreadable::Empty) => {
                            expire_at = None;
                            loaded.empty += 1;
                            if loaded.empty_names.len() < 10 {
                                loaded.empty_names.push(Bytes::from(key.into_owned()));
                            }
                            return Ok(());
                        }
                        other => other?,
                    };
                    let twice = match twice {
                        Some(t) => t,
                        None => target.holds(db, &key),
                    };
                    if twice {
                        return Err(Unreadable::Damaged("duplicated key in the RDB file"));
                    }
                    target.read(db, &key);
                    loaded.keys += 1;
                    target.progress(r.at);
                    if let Some(ms) = expire_at.take() {
                        // A time at or before the epoch is long past.
                        let mut at = itoa::Buffer::new();
                        target.command(&[b"PEXPIREAT", &key, at.format(ms.max(1)).as_bytes()]);
                    }
                }
            }
            Ok(())
        })();
        match step {
            Ok(()) if op == OP_EOF => break,
            Ok(()) => {}
            Err(Unreadable::Damaged(why)) => return Err(damaged(&r, why)),
            Err(Unreadable::Empty) => return Err(damaged(&r, "empty key")),
            Err(Unreadable::Unsupported(what)) => {
                return Err(format!(
                    "the RDB file holds {what} (offset {at}), which ebb cannot load"
                ))
            }
        }
    }
    // Version 5 on: the CRC-64 of everything before it (0: not computed).
    if version >= 5 {
        let end = r.at;
        let sum = r
            .u64_le()
            .map_err(|_| "the RDB file ends before its checksum".to_string())?;
        let expected = super::crc64(&data[..end]);
        if sum != 0 && super::checksums_checked() && sum != expected {
            // Redis's words for it.
            return Err(format!(
                "Wrong RDB checksum expected: ({expected:x}) got ({sum:x}): RDB CRC error"
            ));
        }
    }
    loaded.len = r.at;
    Ok(loaded)
}

/// The commands that set the member deadlines an ebb snapshot keeps in
/// an AUX field after their key (see [`super::write::snapshot`]).
fn member_deadlines(aux: &[u8], emit: &mut dyn FnMut(&[&[u8]])) -> Result<(), Unreadable> {
    let bad = |_| Unreadable::Damaged("damaged member deadlines");
    let mut r = Reader { data: aux, at: 0 };
    let (cmd, word) = match r.byte().map_err(bad)? {
        b's' => ("SPEXPIREAT", "MEMBERS"),
        b'z' => ("ZPEXPIREAT", "MEMBERS"),
        b'h' => ("HPEXPIREAT", "FIELDS"),
        _ => return Err(bad(super::Bad)),
    };
    let key = Bytes::from(r.string().map_err(bad)?);
    let mut pairs = Vec::new();
    while r.left() > 0 {
        let m = Bytes::from(r.string().map_err(bad)?);
        pairs.push((m, r.u64_le().map_err(bad)?));
    }
    crate::dump::deadline_runs(cmd, word, &key, pairs, &mut |c| {
        emit(&crate::args::views(&c))
    });
    Ok(())
}

fn key_hash(db: u64, key: &[u8]) -> u128 {
    super::value::hash128(&[&db.to_le_bytes(), key])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(version: &str, body: &[u8], with_crc: bool) -> Vec<u8> {
        let mut d = format!("REDIS{version}").into_bytes();
        d.extend_from_slice(body);
        d.push(OP_EOF);
        if with_crc {
            let c = super::super::crc64(&d);
            d.extend_from_slice(&c.to_le_bytes());
        }
        d
    }

    fn commands(d: &[u8]) -> Result<Vec<Vec<String>>, String> {
        let mut out = Vec::new();
        file_commands(d, 16, &mut |c| out.push(super::super::as_text(c)))?;
        Ok(out)
    }

    #[test]
    fn keys_ttls_databases_and_checksum() {
        let mut body = vec![OP_AUX, 3, b'v', b'e', b'r', 1, b'7'];
        body.extend_from_slice(&[OP_SELECTDB, 2, OP_RESIZEDB, 1, 1]);
        body.extend_from_slice(&[OP_EXPIRETIME_MS]);
        body.extend_from_slice(&5000u64.to_le_bytes());
        // A string key "k" holding the 8-bit integer -3.
        body.extend_from_slice(&[0, 1, b'k', 0xc0, 0xfd]);
        // A set of two strings.
        body.extend_from_slice(&[2, 1, b's', 2, 1, b'a', 1, b'b']);
        let d = file("0010", &body, true);
        let got = commands(&d).unwrap();
        assert_eq!(
            got,
            vec![
                vec!["SELECT", "2"],
                vec!["SET", "k", "-3"],
                vec!["PEXPIREAT", "k", "5000"],
                vec!["SADD", "s", "a", "b"],
            ]
        );
        let mut bad = d.clone();
        let n = bad.len();
        bad[n - 3] ^= 1;
        assert!(commands(&bad)
            .unwrap_err()
            .starts_with("Wrong RDB checksum expected: ("));
        // A zero checksum is "not computed".
        let mut zero = d[..n - 8].to_vec();
        zero.extend_from_slice(&[0; 8]);
        assert!(commands(&zero).is_ok());
        for cut in 9..n - 8 {
            assert!(commands(&d[..cut]).is_err(), "cut at {cut}");
        }
    }

    #[test]
    fn empty_collections_are_skipped_with_their_ttl() {
        let mut body = vec![OP_EXPIRETIME_MS];
        body.extend_from_slice(&5000u64.to_le_bytes());
        body.extend_from_slice(&[2, 1, b'e', 0]); // an empty set
        body.extend_from_slice(&[0, 1, b'k', 1, b'v']);
        let mut n = Loaded::default();
        let mut got = Vec::new();
        let d = file("0010", &body, true);
        file_commands(&d, 16, &mut |c| got.push(c.len()))
            .map(|l| n = l)
            .unwrap();
        assert_eq!((n.keys, n.empty, got), (1, 1, vec![3]));
    }

    #[test]
    fn hash_field_deadlines_of_redis_7_4() {
        // Type 24: the earliest deadline (1000), then (ttl, field, value)
        // with ttl 0 for none and 1 + the distance otherwise.
        let mut body = vec![24, 1, b'h'];
        body.extend_from_slice(&1000u64.to_le_bytes());
        body.extend_from_slice(&[
            3, 0, 1, b'a', 1, b'x', 1, 1, b'b', 1, b'y', 6, 1, b'c', 1, b'z',
        ]);
        // Type 25: the earliest deadline, then a listpack of (field,
        // value, deadline) triplets: ("f", "v", 0) and ("g", "w", 5000).
        let lp: Vec<u8> = {
            let entries: [&[u8]; 6] = [
                &[0x81, b'f'],
                &[0x81, b'v'],
                &[0x00],
                &[0x81, b'g'],
                &[0x81, b'w'],
                &[0xf1, 0x88, 0x13], // 16-bit integer 5000
            ];
            let mut body = Vec::new();
            for e in entries {
                body.extend_from_slice(e);
                body.push(e.len() as u8);
            }
            let mut out = ((6 + body.len() + 1) as u32).to_le_bytes().to_vec();
            out.extend_from_slice(&6u16.to_le_bytes());
            out.extend_from_slice(&body);
            out.push(0xff);
            out
        };
        body.extend_from_slice(&[25, 1, b'k']);
        body.extend_from_slice(&5000u64.to_le_bytes());
        body.push(lp.len() as u8);
        body.extend_from_slice(&lp);
        let got = commands(&file("0012", &body, true)).unwrap();
        assert_eq!(
            got,
            vec![
                vec!["HSET", "h", "a", "x", "b", "y", "c", "z"],
                vec!["HPEXPIREAT", "h", "1000", "FIELDS", "1", "b"],
                vec!["HPEXPIREAT", "h", "1005", "FIELDS", "1", "c"],
                vec!["HSET", "k", "f", "v", "g", "w"],
                vec!["HPEXPIREAT", "k", "5000", "FIELDS", "1", "g"],
            ]
        );
    }

    #[test]
    fn a_key_twice_in_a_database_is_refused() {
        let twice = [0, 1, b'k', 1, b'v', 0, 1, b'k', 1, b'w'];
        let e = commands(&file("0010", &twice, true)).unwrap_err();
        assert!(e.contains("duplicated key"), "{e}");
        let mut two_dbs = twice[..5].to_vec();
        two_dbs.extend_from_slice(&[OP_SELECTDB, 1]);
        two_dbs.extend_from_slice(&twice[5..]);
        assert!(commands(&file("0010", &two_dbs, true)).is_ok());
    }

    #[test]
    fn refusals_name_what_they_refuse() {
        assert!(commands(&file("0013", &[], true))
            .unwrap_err()
            .contains("version 13"));
        let e = commands(&file("0010", &[15, 1, b'x'], true)).unwrap_err();
        assert!(e.contains("a stream"), "{e}");
        let e = commands(&file("0010", &[OP_SELECTDB, 16], true)).unwrap_err();
        assert!(e.contains("database"), "{e}");
        assert!(commands(b"REDIX0010").is_err());
        // Before version 5 there is no checksum.
        assert!(commands(&file("0004", &[0, 1, b'k', 1, b'v'], false)).is_ok());
    }
}
