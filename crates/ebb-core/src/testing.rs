//! A fake-clock harness for core tests: runs commands against a store the
//! way the server does (arity check, execute, housekeeping), with time as
//! a plain number the test moves.

use bytes::Bytes;

use crate::ctx::Ctx;
use crate::db::Store;
use crate::effects::Effects;
use crate::error::{unknown_command, Error};
use crate::reply::Reply;

/// Keywords of the data commands (options, units, BITFIELD types), for
/// tests that build random requests.
pub const COMMAND_WORDS: &[&str] = &[
    "NX",
    "XX",
    "GT",
    "LT",
    "CH",
    "INCR",
    "KEEPTTL",
    "CAP",
    "LIMIT",
    "EX",
    "PX",
    "EXAT",
    "PXAT",
    "FIELDS",
    "MEMBERS",
    "WITHSCORES",
    "WITHVALUES",
    "BYSCORE",
    "BYLEX",
    "REV",
    "COUNT",
    "MATCH",
    "TYPE",
    "STORE",
    "BY",
    "GET",
    "ALPHA",
    "ASC",
    "DESC",
    "WEIGHTS",
    "AGGREGATE",
    "SUM",
    "MIN",
    "MAX",
    "LEFT",
    "RIGHT",
    "BEFORE",
    "AFTER",
    "RANK",
    "MAXLEN",
    "IDLETIME",
    "FREQ",
    "ENCODING",
    "REFCOUNT",
    "HELP",
    "USAGE",
    "SAMPLES",
    "PERSIST",
    "FNX",
    "FXX",
    "REPLACE",
    "DB",
    "ABSTTL",
    "IDX",
    "LEN",
    "MINMATCHLEN",
    "WITHMATCHLEN",
    "BYTE",
    "BIT",
    "OVERFLOW",
    "WRAP",
    "SAT",
    "FAIL",
    "SET",
    "INCRBY",
    "AND",
    "OR",
    "XOR",
    "NOT",
    "ASYNC",
    "SYNC",
    "NOVALUES",
    "S",
    "MS",
    "u8",
    "i64",
    "u63",
    "i1",
    "u0",
    "#0",
    "#1",
];

/// A store, a selected database and a clock.
pub struct Harness {
    /// The store.
    pub store: Store,
    /// Selected database.
    pub db: usize,
    /// Current time in Unix milliseconds.
    pub now: u64,
    /// Effects of the last command.
    pub fx: Effects,
    /// Whether commands run as for a RESP3 client.
    pub resp3: bool,
}

impl Default for Harness {
    fn default() -> Self {
        Harness::new()
    }
}

impl Harness {
    /// 16 empty databases at time 1,000,000,000,000 ms.
    pub fn new() -> Harness {
        Harness {
            store: Store::new(16),
            db: 0,
            now: 1_000_000_000_000,
            fx: Effects::default(),
            resp3: false,
        }
    }

    /// Runs one command given as strings.
    pub fn run(&mut self, args: &[&str]) -> Reply {
        let argv: Vec<Bytes> = args
            .iter()
            .map(|a| Bytes::copy_from_slice(a.as_bytes()))
            .collect();
        self.run_bytes(&argv)
    }

    /// Runs one command given as byte strings.
    pub fn run_bytes<A: AsRef<[u8]>>(&mut self, argv: &[A]) -> Reply {
        let argv: Vec<&[u8]> = argv.iter().map(|a| a.as_ref()).collect();
        let argv = &argv[..];
        self.fx.clear();
        let Some(spec) = argv.first().and_then(|n| crate::table::lookup(n)) else {
            return unknown_command(argv).into();
        };
        if !spec.arity_ok(argv.len()) {
            return Error::WrongArity(spec.name.to_string()).into();
        }
        let mut ctx = Ctx::new(&mut self.store, self.db, self.now, &mut self.fx);
        ctx.resp3 = self.resp3;
        crate::cmd::execute(&mut ctx, spec, argv)
    }

    /// Moves the clock forward.
    pub fn advance(&mut self, ms: u64) {
        self.now += ms;
    }

    /// Runs the active-expiry sweeper with an unbounded budget.
    pub fn sweep(&mut self) -> usize {
        self.fx.clear();
        self.store.sweep(self.now, usize::MAX, &mut self.fx)
    }
}

/// Shorthand for a bulk reply in assertions.
pub fn bulk(s: &str) -> Reply {
    Reply::Bulk(Bytes::copy_from_slice(s.as_bytes()))
}

/// Shorthand for an array of bulk replies in assertions.
pub fn bulks(items: &[&str]) -> Reply {
    Reply::Array(items.iter().map(|s| bulk(s)).collect())
}

/// Shorthand for an error reply with the given full text.
pub fn err(text: &str) -> Reply {
    Reply::Error(text.to_string().into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn harness_runs_commands() {
        let mut h = Harness::new();
        assert_eq!(h.run(&["SET", "a", "1"]), Reply::Ok);
        assert_eq!(h.run(&["get", "a"]), bulk("1"));
        assert_eq!(
            h.run(&["GET"]),
            err("ERR wrong number of arguments for 'get' command")
        );
        assert_eq!(
            h.run(&["NOPE", "x"]),
            err("ERR unknown command 'NOPE', with args beginning with: 'x' ")
        );
    }
}

#[cfg(test)]
mod get_or_create_tests {
    use crate::ctx::Ctx;
    use crate::effects::Effects;
    use crate::value::SetValue;
    use bytes::Bytes;

    #[test]
    fn get_or_create_keeps_new_collection_until_command_end() {
        let mut h = super::Harness::new();
        let mut fx = Effects::default();
        let mut ctx = Ctx::new(&mut h.store, 0, h.now, &mut fx);
        let ok = ctx
            .get_or_create::<SetValue>(b"s")
            .map(|s| s.insert(Bytes::from_static(b"m")));
        assert_eq!(ok, Ok(true));
        // An empty one created and left empty is gone after the command.
        assert!(ctx.get_or_create::<SetValue>(b"e").is_ok());
        ctx.finish();
        assert!(h.store.dbs[0].peek(b"s").is_some());
        assert!(h.store.dbs[0].peek(b"e").is_none());
    }
}
