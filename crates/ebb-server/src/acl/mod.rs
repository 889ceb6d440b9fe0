//! ACL users as Redis 7.0 has them: named users with passwords, the
//! commands (by name, subcommand or category), keys and Pub/Sub channels
//! each may use; ACL SETUSER / GETUSER / DELUSER / LIST / USERS / WHOAMI /
//! CAT / GENPASS / DRYRUN / LOG; AUTH and HELLO with a user name; and the
//! checks every command passes (NOPERM) with their ACL LOG entries.
//!
//! A user's permissions are selectors (see [`selector`]): the root one and
//! any written in parentheses; a command runs when one selector permits
//! all of it. Commands are a bit per command and per subcommand (the
//! statistics slots of `cmdstats`); each key needs the access its key
//! specification says the command makes of it (`%R~`, `%W~` or `~`
//! patterns).

use bytes::Bytes;
use ebb_core::{CommandSpec, Reply};
use parking_lot::{Mutex, RwLock};
use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// `acl-pubsub-default allchannels`: new users (and `reset`) get every
/// channel, as in Redis; the default, `resetchannels`, gives none.
static PUBSUB_DEFAULT_ALL: AtomicBool = AtomicBool::new(false);

/// Applies the ACL options of the configuration.
pub fn configure(cfg: &crate::config::Config) {
    let all = cfg.get("acl-pubsub-default").as_deref() == Some("allchannels");
    PUBSUB_DEFAULT_ALL.store(all, Ordering::Relaxed);
}

mod categories;
mod describe;
mod files;
mod log;
mod rules;
mod selector;
pub(crate) use categories::sub_categories;
pub use categories::CATEGORIES;
pub use describe::SelectorParts;
pub use log::{log_reason, LogEntry};
use rules::sha256_hex;
use selector::{KeyUses, Selector};

/// One user.
#[derive(Debug, Clone)]
pub struct User {
    pub name: Bytes,
    pub enabled: bool,
    pub nopass: bool,
    /// SHA-256 digests (lower-case hex), in the order they were added.
    passwords: Vec<String>,
    /// `sanitize-payload` (Some(true)) or `skip-sanitize-payload`.
    sanitize: Option<bool>,
    /// The permissions written outside parentheses.
    root: Selector,
    /// The selectors written in parentheses, in the order they were added.
    selectors: Vec<Selector>,
    /// Some selector permits every command, key and channel: nothing to
    /// check.
    pub unrestricted: bool,
}

fn slot_total() -> usize {
    crate::cmdstats::slot_count()
}

impl User {
    /// A new user: off, no password, no key, no command, and no channel
    /// unless `acl-pubsub-default` is `allchannels`.
    fn new(name: &[u8]) -> User {
        let mut u = User {
            name: Bytes::copy_from_slice(name),
            enabled: false,
            nopass: false,
            passwords: Vec::new(),
            sanitize: None,
            root: Selector::new(),
            selectors: Vec::new(),
            unrestricted: false,
        };
        u.refresh();
        u
    }

    /// The default user of a fresh server: on, no password, everything.
    fn default_user() -> User {
        let mut u = User::new(b"default");
        for op in ["on", "nopass", "~*", "&*", "+@all"] {
            let _ = u.apply(op.as_bytes());
        }
        u.refresh();
        u
    }

    fn refresh(&mut self) {
        let unrestricted = self.all_selectors().any(Selector::unrestricted);
        self.unrestricted = unrestricted;
    }

    /// The root selector, then the others.
    fn all_selectors(&self) -> impl Iterator<Item = &Selector> {
        std::iter::once(&self.root).chain(self.selectors.iter())
    }

    /// Whether `password` opens this user.
    pub fn password_ok(&self, password: &[u8]) -> bool {
        self.nopass || self.passwords.contains(&sha256_hex(password))
    }

    /// Whether some selector lets the user publish or subscribe to
    /// `channel`, or (a pattern subscription) use exactly the pattern
    /// `channel`.
    pub fn channel_ok(&self, channel: &[u8], literal: bool) -> bool {
        self.all_selectors().any(|s| s.channel_ok(channel, literal))
    }

    /// Whether some selector that permits the command also reads every
    /// key (`~*`, `allkeys` or `%R~*`): what SORT's BY and GET patterns,
    /// which name keys of their own, need.
    pub fn reads_every_key(&self, spec: &'static CommandSpec, argv: &[&[u8]]) -> bool {
        if self.unrestricted {
            return true;
        }
        let slot =
            crate::cmdstats::slot_of(spec, argv).unwrap_or_else(|| ebb_core::table::index_of(spec));
        let mut keys = None;
        self.all_selectors()
            .any(|s| s.every_key(true, false) && s.check(spec, slot, argv, &mut keys).is_ok())
    }
}

/// What [`ebb_core::Ctx::reads_every_key`] is for `user` running a
/// command (only SORT and SORT_RO ask).
pub fn reads_every_key(user: &User, spec: &'static CommandSpec, argv: &[&[u8]]) -> bool {
    !matches!(spec.name, "sort" | "sort_ro") || user.reads_every_key(spec, argv)
}

/// The commands and subcommands in a category (ACL CAT <category>).
pub fn commands_in(category: &str) -> Vec<&'static str> {
    categories::slots_of(category)
        .unwrap_or_default()
        .iter()
        .map(|&s| crate::cmdstats::slot_name(s))
        .collect()
}

/// Why a command was refused.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Denied {
    Command,
    Key(usize),
    Channel(usize),
}

impl Denied {
    /// Which of two refusals Redis reports: a channel over a key over the
    /// command, then the later argument.
    fn rank(self) -> (u8, usize) {
        match self {
            Denied::Command => (0, 0),
            Denied::Key(i) => (1, i),
            Denied::Channel(i) => (2, i),
        }
    }
}

/// Why a list of rules was refused.
enum RuleError {
    /// A selector opened by this rule is never closed.
    Unmatched(Vec<u8>),
    /// This rule (a whole selector for one) is wrong, for this reason.
    Bad(Vec<u8>, &'static str),
}

impl User {
    /// Applies rules in order, a selector spread over several arguments
    /// taken as one.
    fn apply_all(&mut self, rules: &[&[u8]]) -> Result<(), RuleError> {
        let merged =
            rules::merge_selectors(rules).map_err(|i| RuleError::Unmatched(rules[i].to_vec()))?;
        for r in &merged {
            self.apply(r)
                .map_err(|why| RuleError::Bad(r.to_vec(), why))?;
        }
        self.refresh();
        Ok(())
    }
}

/// The users and the ACL log.
pub struct Acl {
    users: RwLock<BTreeMap<Bytes, Arc<User>>>,
    generation: AtomicU64,
    log: Mutex<VecDeque<LogEntry>>,
}

impl Default for Acl {
    fn default() -> Self {
        let mut users = BTreeMap::new();
        users.insert(
            Bytes::from_static(b"default"),
            Arc::new(User::default_user()),
        );
        Acl {
            users: RwLock::new(users),
            generation: AtomicU64::new(1),
            log: Mutex::new(VecDeque::new()),
        }
    }
}

impl Acl {
    /// Changes whenever a user changes.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// The user called `name`.
    pub fn user(&self, name: &[u8]) -> Option<Arc<User>> {
        self.users.read().get(name).cloned()
    }

    /// The default user.
    pub fn default_user(&self) -> Arc<User> {
        self.user(b"default")
            .unwrap_or_else(|| Arc::new(User::default_user()))
    }

    /// Applies rules to `name` (created if new) all or nothing; Err is
    /// ACL SETUSER's error text (without `ERR`).
    pub fn set_user(&self, name: &[u8], rules: &[&[u8]]) -> Result<(), String> {
        let mut users = self.users.write();
        let mut u = match users.get(name) {
            Some(u) => (**u).clone(),
            None => User::new(name),
        };
        u.apply_all(rules).map_err(|e| match e {
            RuleError::Unmatched(rule) => rules::unmatched(&rule),
            RuleError::Bad(rule, why) => format!(
                "Error in ACL SETUSER modifier '{}': {why}",
                String::from_utf8_lossy(&rule)
            ),
        })?;
        users.insert(Bytes::copy_from_slice(name), Arc::new(u));
        self.generation.fetch_add(1, Ordering::AcqRel);
        Ok(())
    }

    /// `requirepass`: the default user's only password (none: nopass).
    pub fn set_requirepass(&self, pass: &str) {
        let rule = format!(">{pass}");
        let rules: Vec<&[u8]> = if pass.is_empty() {
            vec![b"nopass"]
        } else {
            vec![b"resetpass", rule.as_bytes()]
        };
        let _ = self.set_user(b"default", &rules);
    }

    /// Checks a command against `user`: Ok when one of its selectors
    /// permits the command, its keys and its channels together; else what
    /// Redis reports: the command when no selector runs it, otherwise the
    /// last-placed key or channel a selector refused (channels before keys).
    pub fn check(
        user: &User,
        spec: &'static CommandSpec,
        slot: Option<usize>,
        argv: &[&[u8]],
    ) -> Result<(), Denied> {
        if user.unrestricted {
            return Ok(());
        }
        let slot = slot.unwrap_or_else(|| ebb_core::table::index_of(spec));
        let mut keys: Option<KeyUses> = None;
        let mut worst = Denied::Command;
        for s in user.all_selectors() {
            match s.check(spec, slot, argv, &mut keys) {
                Ok(()) => return Ok(()),
                Err(d) if d.rank() > worst.rank() => worst = d,
                _ => {}
            }
        }
        Err(worst)
    }

    /// Deletes users; returns the names of those that existed.
    pub fn delete_users(&self, names: &[&[u8]]) -> Vec<Bytes> {
        let mut users = self.users.write();
        let gone: Vec<Bytes> = names
            .iter()
            .filter(|n| users.remove(&n[..]).is_some())
            .map(|n| Bytes::copy_from_slice(n))
            .collect();
        if !gone.is_empty() {
            self.generation.fetch_add(1, Ordering::AcqRel);
        }
        gone
    }

    /// User names, sorted.
    pub fn names(&self) -> Vec<Bytes> {
        self.users.read().keys().cloned().collect()
    }

    /// ACL LIST: each user as a line.
    pub fn describe_all(&self) -> Vec<String> {
        self.users.read().values().map(|u| u.describe()).collect()
    }
}

/// The NOPERM error a client gets.
pub fn noperm(d: Denied, slot_name: &str) -> Reply {
    Reply::Error(
        match d {
            Denied::Command => {
                format!("NOPERM this user has no permissions to run the '{slot_name}' command")
            }
            Denied::Key(_) => {
                "NOPERM this user has no permissions to access one of the keys used as arguments"
                    .into()
            }
            Denied::Channel(_) => "NOPERM this user has no permissions to access one of the channels used as arguments".into(),
        }
        .into(),
    )
}

/// The error a script's `redis.call` gets.
pub fn script_denied(d: Denied) -> &'static str {
    match d {
        Denied::Command => "ERR The user executing the script can't run this command or subcommand",
        Denied::Key(_) => "ERR The user executing the script can't access at least one of the keys mentioned in the command arguments",
        Denied::Channel(_) => "ERR The user executing the script can't publish to the channel mentioned in the command",
    }
}

#[cfg(test)]
mod tests {
    use super::{Acl, Denied, User};

    fn user(rules: &[&str]) -> User {
        let mut u = User::new(b"u");
        let rules: Vec<&[u8]> = rules.iter().map(|r| r.as_bytes()).collect();
        assert!(u.apply_all(&rules).is_ok());
        u
    }

    fn check(u: &User, argv: &[&str]) -> Result<(), Denied> {
        let argv: Vec<&[u8]> = argv.iter().map(|a| a.as_bytes()).collect();
        let spec = ebb_core::lookup(argv[0]).expect("known command");
        Acl::check(u, spec, crate::cmdstats::slot_of(spec, &argv), &argv)
    }

    #[test]
    fn one_selector_must_permit_the_whole_command() {
        let u = user(&["(+@write", "~w*)", "(+@read", "~r*)"]);
        assert_eq!(check(&u, &["set", "w1", "v"]), Ok(()));
        assert_eq!(check(&u, &["get", "r1"]), Ok(()));
        assert_eq!(check(&u, &["get", "w1"]), Err(Denied::Key(1)));
        assert_eq!(check(&u, &["ping"]), Err(Denied::Command));
        // AUTH needs no permission.
        assert_eq!(check(&u, &["auth", "a", "b"]), Ok(()));
    }

    #[test]
    fn the_refusal_names_the_last_key_refused() {
        let u = user(&["+mget", "~key", "(+mget ~key ~otherkey)"]);
        assert_eq!(check(&u, &["mget", "otherkey", "x"]), Err(Denied::Key(2)));
        assert_eq!(
            check(&u, &["mget", "key", "otherkey", "x"]),
            Err(Denied::Key(3))
        );
        assert_eq!(check(&u, &["get", "key"]), Err(Denied::Command));
    }

    #[test]
    fn read_and_write_patterns_follow_the_key_flags() {
        let u = user(&["+@all", "%R~r*", "%W~w*"]);
        assert_eq!(check(&u, &["copy", "r", "w"]), Ok(()));
        assert_eq!(check(&u, &["copy", "w", "r"]), Err(Denied::Key(1)));
        assert_eq!(check(&u, &["set", "w", "get"]), Ok(()));
        assert_eq!(check(&u, &["set", "w", "v", "get"]), Err(Denied::Key(1)));
        assert_eq!(check(&u, &["exists", "w"]), Ok(()));
        assert!(!u.unrestricted);
        assert!(user(&["+@all", "%RW~*", "&*"]).unrestricted);
        assert!(user(&["(+@all ~* &*)"]).unrestricted);
    }
}
