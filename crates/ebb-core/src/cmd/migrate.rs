//! MIGRATE's keyspace side, and RESTORE-ASKING. MIGRATE needs the network,
//! so ebb-server runs it; what it does to the keyspace is here: its
//! arguments read in Redis's order, the keys it moves (each with its
//! payload and remaining TTL), the commands the target is sent, and the
//! deletion of the keys the target took. RESTORE-ASKING is RESTORE under
//! the name a cluster's MIGRATE sends; ebb has no cluster, so it is the
//! same command everywhere.

use bytes::Bytes;

use crate::args::parse_i64;
use crate::ctx::Ctx;
use crate::error::{CmdResult, Error};
use crate::table::CommandSpec;

#[rustfmt::skip]
pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec::server("migrate", -6, "write movablekeys", (3, 3, 1), "generic", "Atomically transfers a key from one Redis instance to another.").with_keys(migrate_keys),
    CommandSpec::core("restore-asking", -4, "write denyoom asking", (1, 1, 1), "server", "An internal command for migrating keys in a cluster.", crate::cmd::restore::restore),
];

/// The timeout MIGRATE uses when given 0 or less, in milliseconds.
const DEFAULT_TIMEOUT_MS: u64 = 1000;

/// How MIGRATE authenticates to the target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MigrateAuth<'a> {
    /// The user name (AUTH2), or none for the default user (AUTH).
    pub user: Option<&'a [u8]>,
    pub password: &'a [u8],
}

/// A MIGRATE request, read.
///
/// # Format
/// `MIGRATE host port key|"" destination-db timeout [COPY] [REPLACE]
/// [AUTH password | AUTH2 username password] [KEYS key [key ...]]`
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Migrate<'a> {
    pub host: &'a [u8],
    pub port: &'a [u8],
    /// The database selected on the target (not checked here: the
    /// target's SELECT answers for it, as with Redis).
    pub db: i64,
    /// Connect, write and read timeout, milliseconds (1000 when 0 or less
    /// was given).
    pub timeout_ms: u64,
    /// Keep the keys here.
    pub copy: bool,
    /// Overwrite the target's keys.
    pub replace: bool,
    pub auth: Option<MigrateAuth<'a>>,
    /// The keys to move, in order (duplicates kept, as Redis sends them).
    pub keys: Vec<&'a [u8]>,
}

/// Reads MIGRATE's arguments as Redis 7.0 does: the options first (the
/// first unknown one is a syntax error; KEYS needs an empty key argument
/// and takes every argument after it), then the timeout, then the
/// database.
pub fn parse<'a>(argv: &[&'a [u8]]) -> CmdResult<Migrate<'a>> {
    if argv.len() < 6 {
        return Err(Error::WrongArity("migrate".into()));
    }
    let (mut copy, mut replace) = (false, false);
    let mut auth = None;
    let mut keys = vec![argv[3]];
    let mut j = 6;
    while j < argv.len() {
        let a = argv[j];
        let more = argv.len() - 1 - j;
        if a.eq_ignore_ascii_case(b"copy") {
            copy = true;
        } else if a.eq_ignore_ascii_case(b"replace") {
            replace = true;
        } else if a.eq_ignore_ascii_case(b"auth") {
            if more < 1 {
                return Err(Error::Syntax);
            }
            auth = Some(MigrateAuth {
                user: None,
                password: argv[j + 1],
            });
            j += 1;
        } else if a.eq_ignore_ascii_case(b"auth2") {
            if more < 2 {
                return Err(Error::Syntax);
            }
            auth = Some(MigrateAuth {
                user: Some(argv[j + 1]),
                password: argv[j + 2],
            });
            j += 2;
        } else if a.eq_ignore_ascii_case(b"keys") {
            if !argv[3].is_empty() {
                return Err(Error::msg(
                    "ERR When using MIGRATE KEYS option, the key argument must be set to the empty string",
                ));
            }
            keys = argv[j + 1..].to_vec();
            break;
        } else {
            return Err(Error::Syntax);
        }
        j += 1;
    }
    let timeout = parse_i64(argv[5]).ok_or(Error::NotInteger)?;
    let db = parse_i64(argv[4]).ok_or(Error::NotInteger)?;
    let timeout_ms = if timeout <= 0 {
        DEFAULT_TIMEOUT_MS
    } else {
        timeout as u64
    };
    Ok(Migrate {
        host: argv[1],
        port: argv[2],
        db,
        timeout_ms,
        copy,
        replace,
        auth,
        keys,
    })
}

/// The arguments MIGRATE hides from MONITOR and the slow log (shown as
/// `(redacted)`): AUTH's password, AUTH2's user name and password, as far
/// as the options read before an error.
pub fn redacted_positions(argv: &[&[u8]]) -> Vec<usize> {
    let mut out = Vec::new();
    let mut j = 6;
    while j < argv.len() {
        let a = argv[j];
        let more = argv.len() - 1 - j;
        if a.eq_ignore_ascii_case(b"auth") && more >= 1 {
            out.push(j + 1);
            j += 1;
        } else if a.eq_ignore_ascii_case(b"auth2") && more >= 2 {
            out.extend([j + 1, j + 2]);
            j += 2;
        } else if !(a.eq_ignore_ascii_case(b"copy") || a.eq_ignore_ascii_case(b"replace")) {
            break;
        }
        j += 1;
    }
    out
}

/// MIGRATE's keys as Redis's `migrateGetKeys` finds them: the key
/// argument, or every argument after KEYS (none when the key argument is
/// not empty: MIGRATE then refuses the request). AUTH and AUTH2 skip their
/// values, so a password spelled `keys` is not taken for the option.
fn migrate_keys(argv: &[&[u8]]) -> Vec<usize> {
    let mut first = 3;
    let mut num = 1;
    if argv.len() > 6 {
        let mut i = 6;
        while i < argv.len() {
            let a = argv[i];
            if a.eq_ignore_ascii_case(b"keys") {
                if argv[3].is_empty() {
                    first = i + 1;
                    num = argv.len() - first;
                } else {
                    num = 0;
                }
                break;
            }
            if a.eq_ignore_ascii_case(b"auth") {
                i += 1;
            } else if a.eq_ignore_ascii_case(b"auth2") {
                i += 2;
            }
            i += 1;
        }
    }
    (first..first + num).filter(|&i| i < argv.len()).collect()
}

/// One key on its way to the target.
#[derive(Debug, Clone)]
pub struct Outgoing {
    pub key: Bytes,
    /// Milliseconds left of its TTL (0 for none), as RESTORE takes it.
    pub ttl_ms: u64,
    /// Its DUMP payload (member deadlines included).
    pub payload: Vec<u8>,
}

/// The keys of `m` that exist, each with its payload and remaining TTL,
/// looked up as reads (hits, misses, lazy expiry), in the order given.
/// Empty when none exists: MIGRATE answers NOKEY.
pub fn outgoing(ctx: &mut Ctx, m: &Migrate) -> Vec<Outgoing> {
    let now = ctx.now;
    let mut out = Vec::new();
    for key in &m.keys {
        if !ctx.read_hit(key) {
            continue;
        }
        let Some(e) = ctx.store.dbs[ctx.db].peek(key) else {
            continue;
        };
        // A live key's TTL is in the future; at least 1 ms, as Redis sends.
        let ttl_ms = e.expire_at().map_or(0, |t| t.saturating_sub(now).max(1));
        out.push(Outgoing {
            key: Bytes::copy_from_slice(key),
            ttl_ms,
            payload: crate::cmd::restore::dump_payload(&e.value, now),
        });
    }
    out
}

/// The commands the target is sent, in order: AUTH (or AUTH with a user
/// name) when asked for, SELECT when the connection is not known to have
/// `m.db` selected, then one RESTORE per key (with REPLACE when asked).
pub fn target_commands(m: &Migrate, select: bool, keys: &[Outgoing]) -> Vec<Vec<Bytes>> {
    let b = |s: &[u8]| Bytes::copy_from_slice(s);
    let mut cmds = Vec::with_capacity(keys.len() + 2);
    if let Some(a) = &m.auth {
        let mut cmd = vec![Bytes::from_static(b"AUTH")];
        cmd.extend(a.user.map(b));
        cmd.push(b(a.password));
        cmds.push(cmd);
    }
    if select {
        cmds.push(vec![
            Bytes::from_static(b"SELECT"),
            Bytes::from(m.db.to_string()),
        ]);
    }
    for k in keys {
        let mut cmd = vec![
            Bytes::from_static(b"RESTORE"),
            k.key.clone(),
            Bytes::from(k.ttl_ms.to_string()),
            Bytes::from(k.payload.clone()),
        ];
        if m.replace {
            cmd.push(Bytes::from_static(b"REPLACE"));
        }
        cmds.push(cmd);
    }
    cmds
}

/// Deletes the keys the target acknowledged, as Redis does after each
/// acknowledgement: the key goes, counts as modified (WATCH, client
/// caching) and gets a `del` event, and the command is logged as one DEL
/// of those keys.
pub fn remove_moved(ctx: &mut Ctx, keys: &[Bytes]) {
    if keys.is_empty() {
        return;
    }
    let mut logged = Vec::with_capacity(keys.len() + 1);
    logged.push(Bytes::from_static(b"DEL"));
    for key in keys {
        ctx.delete(key);
        ctx.modified(key);
        ctx.notify(b'g', "del", key);
        logged.push(key.clone());
    }
    ctx.rewrite_as(vec![logged]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::Store;
    use crate::effects::Effects;

    fn argv(words: &[&'static str]) -> Vec<&'static [u8]> {
        words.iter().map(|w| w.as_bytes()).collect()
    }

    fn err_text(r: CmdResult<Migrate>) -> String {
        match r {
            Err(e) => e.text().into_owned(),
            Ok(m) => panic!("parsed: {m:?}"),
        }
    }

    #[test]
    fn options_are_read_before_the_numbers() {
        let a = argv(&["migrate", "h", "1", "k", "x", "y", "bogus"]);
        assert_eq!(err_text(parse(&a)), "ERR syntax error");
        let a = argv(&["migrate", "h", "1", "k", "x", "y", "keys", "a"]);
        assert!(err_text(parse(&a)).contains("must be set to the empty string"));
        let a = argv(&["migrate", "h", "1", "k", "x", "y"]);
        assert_eq!(
            err_text(parse(&a)),
            "ERR value is not an integer or out of range"
        );
        let a = argv(&["migrate", "h", "1", "k", "0", "5", "auth"]);
        assert_eq!(err_text(parse(&a)), "ERR syntax error");
        let a = argv(&["migrate", "h", "1", "k", "0", "5", "auth2", "u"]);
        assert_eq!(err_text(parse(&a)), "ERR syntax error");
    }

    #[test]
    fn parses_every_option() {
        let a = argv(&[
            "migrate", "h", "7", "", "3", "-5", "COPY", "replace", "auth2", "u", "p", "KEYS", "a",
            "b",
        ]);
        let m = parse(&a).unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(m.db, 3);
        assert_eq!(m.timeout_ms, DEFAULT_TIMEOUT_MS);
        assert!(m.copy && m.replace);
        assert_eq!(m.auth.as_ref().and_then(|x| x.user), Some(&b"u"[..]));
        assert_eq!(m.keys, vec![&b"a"[..], &b"b"[..]]);
        // A password may be spelled like an option.
        let a = argv(&["migrate", "h", "7", "k", "0", "9", "auth", "keys"]);
        let m = parse(&a).unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(m.auth.map(|x| x.password), Some(&b"keys"[..]));
        assert_eq!(m.keys, vec![&b"k"[..]]);
        assert_eq!(m.timeout_ms, 9);
    }

    #[test]
    fn keys_found_as_redis_finds_them() {
        let k = |w: &[&'static str]| migrate_keys(&argv(w));
        assert_eq!(k(&["migrate", "h", "1", "k", "0", "5"]), vec![3]);
        assert_eq!(
            k(&["migrate", "h", "1", "", "0", "5", "keys", "a", "b"]),
            vec![7, 8]
        );
        assert_eq!(
            k(&["migrate", "h", "1", "", "0", "5", "auth", "keys", "keys", "a"]),
            vec![9]
        );
        assert_eq!(
            k(&["migrate", "h", "1", "x", "0", "5", "keys", "a"]),
            Vec::<usize>::new()
        );
        assert_eq!(
            k(&["migrate", "h", "1", "", "0", "5", "keys"]),
            Vec::<usize>::new()
        );
        let r = redacted_positions(&argv(&[
            "migrate", "h", "1", "k", "0", "5", "copy", "auth2", "u", "p", "auth", "q",
        ]));
        assert_eq!(r, vec![8, 9, 11]);
    }

    #[test]
    fn moves_live_keys_with_their_ttl() {
        let mut store = Store::new(1);
        let mut fx = Effects::default();
        let mut ctx = Ctx::new(&mut store, 0, 1000, &mut fx);
        let set = |ctx: &mut Ctx, w: &[&'static str]| {
            let a = argv(w);
            let spec = crate::table::lookup(a[0]).unwrap_or_else(|| panic!("{}", w[0]));
            crate::cmd::execute(ctx, spec, &a)
        };
        set(&mut ctx, &["set", "a", "1"]);
        set(&mut ctx, &["set", "b", "2", "px", "500"]);
        let a = argv(&[
            "migrate", "h", "1", "", "0", "5", "replace", "keys", "a", "nope", "b",
        ]);
        let m = parse(&a).unwrap_or_else(|e| panic!("{e:?}"));
        let out = outgoing(&mut ctx, &m);
        assert_eq!(out.len(), 2);
        assert_eq!((out[0].ttl_ms, out[1].ttl_ms), (0, 500));
        let cmds = target_commands(&m, true, &out);
        assert_eq!(cmds.len(), 3);
        assert_eq!(cmds[0], vec![Bytes::from("SELECT"), Bytes::from("0")]);
        assert_eq!(cmds[2][2], Bytes::from("500"));
        assert_eq!(cmds[2].last(), Some(&Bytes::from("REPLACE")));
        remove_moved(&mut ctx, &[out[0].key.clone()]);
        assert!(!ctx.exists(b"a") && ctx.exists(b"b"));
        assert_eq!(
            fx.rewrite,
            Some(vec![vec![Bytes::from("DEL"), Bytes::from("a")]])
        );
    }
}
