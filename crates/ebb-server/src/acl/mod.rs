//! ACL users as Redis 7.0 has them: named users with passwords, the
//! commands (by name, subcommand or category), keys and Pub/Sub channels
//! each may use; ACL SETUSER / GETUSER / DELUSER / LIST / USERS / WHOAMI /
//! CAT / GENPASS / DRYRUN / LOG; AUTH and HELLO with a user name; and the
//! checks every command passes (NOPERM) with their ACL LOG entries.
//!
//! Permissions are a bit per command and per subcommand (the statistics
//! slots of `cmdstats`). Keys need read access for commands that read and
//! write access for commands that write (Redis 7 goes by each key's own
//! flags in its key specs; for a command that reads one key and writes
//! another, ebb asks for write access to both). Selectors and first-argument
//! rules (`+select|0`) are not supported.

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
mod log;
mod rules;
pub(crate) use categories::sub_categories;
pub use categories::CATEGORIES;
pub use log::{log_reason, LogEntry};
use rules::sha256_hex;

/// Access a key pattern grants.
#[derive(Debug, Clone, PartialEq)]
struct KeyPattern {
    pattern: Bytes,
    read: bool,
    write: bool,
}

/// One user.
#[derive(Debug, Clone)]
pub struct User {
    pub name: Bytes,
    pub enabled: bool,
    pub nopass: bool,
    /// SHA-256 digests (lower-case hex), in the order they were added.
    passwords: Vec<String>,
    /// A bit per command and subcommand slot.
    commands: Vec<u64>,
    /// First arguments that open a command whose bit is off (`+select|0`,
    /// `+debug|object`: Redis's deprecated first-arg rules), by slot.
    first_args: std::collections::BTreeMap<usize, Vec<Bytes>>,
    /// Commands that do not exist yet are allowed (+@all was the last word).
    future: bool,
    all_keys: bool,
    keys: Vec<KeyPattern>,
    all_channels: bool,
    channels: Vec<Bytes>,
    /// `sanitize-payload` (Some(true)) or `skip-sanitize-payload`.
    sanitize: Option<bool>,
    /// Every command, key and channel: nothing to check.
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
            commands: vec![0; slot_total().div_ceil(64)],
            first_args: Default::default(),
            future: false,
            all_keys: false,
            keys: Vec::new(),
            all_channels: PUBSUB_DEFAULT_ALL.load(Ordering::Relaxed),
            channels: Vec::new(),
            sanitize: None,
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
        self.unrestricted =
            self.all_keys && self.all_channels && (0..slot_total()).all(|s| self.allowed(s));
    }

    fn allowed(&self, slot: usize) -> bool {
        self.commands
            .get(slot / 64)
            .is_some_and(|w| w & (1 << (slot % 64)) != 0)
    }

    /// Sets a slot's bit; either way its first-arg rules go (as Redis
    /// resets them whenever a rule names the command).
    fn set_slot(&mut self, slot: usize, on: bool) {
        self.first_args.remove(&slot);
        if let Some(w) = self.commands.get_mut(slot / 64) {
            if on {
                *w |= 1 << (slot % 64);
            } else {
                *w &= !(1 << (slot % 64));
            }
        }
    }

    /// A command and, for a container, every subcommand.
    fn set_command(&mut self, spec: &'static CommandSpec, on: bool) {
        for s in crate::cmdstats::slots_of(spec) {
            self.set_slot(s, on);
        }
    }

    /// Whether a first-arg rule opens the command at `slot` for `argv`.
    fn first_arg_ok(&self, slot: usize, argv: &[&[u8]]) -> bool {
        match (self.first_args.get(&slot), argv.get(1)) {
            (Some(args), Some(first)) => args.iter().any(|a| a.eq_ignore_ascii_case(first)),
            _ => false,
        }
    }

    /// Whether `password` opens this user.
    pub fn password_ok(&self, password: &[u8]) -> bool {
        self.nopass || self.passwords.contains(&sha256_hex(password))
    }

    /// Whether the user may touch `key`: some pattern matches it and
    /// grants what the command does to it (`read`, `write`; neither for a
    /// command that only checks the key, such as EXISTS).
    fn key_ok(&self, key: &[u8], read: bool, write: bool) -> bool {
        self.all_keys
            || self.keys.iter().any(|k| {
                (!read || k.read)
                    && (!write || k.write)
                    && ebb_core::glob::glob_match(&k.pattern, key, false)
            })
    }

    /// Whether the user may publish to or subscribe to `channel`, or (a
    /// pattern subscription) use exactly the pattern `channel`.
    pub fn channel_ok(&self, channel: &[u8], literal: bool) -> bool {
        self.all_channels
            || self.channels.iter().any(|p| {
                if literal {
                    p == channel
                } else {
                    ebb_core::glob::glob_match(p, channel, false)
                }
            })
    }

    /// The command rules that rebuild this user's permissions, as Redis
    /// describes them: `+@all` or `-@all`, the categories that describe
    /// most with fewest exceptions, then single commands.
    fn describe_commands(&self) -> String {
        let n = slot_total();
        let additive = !self.future;
        let mut rules = String::from(if additive { "-@all" } else { "+@all" });
        // `fake` is what the rules emitted so far grant; `todo` the bits
        // still unexplained.
        let mut fake: Vec<bool> = vec![!additive; n];
        let mut todo: Vec<bool> = (0..n).map(|s| self.allowed(s)).collect();
        let members = categories::members();
        let mut applied = [false; CATEGORIES.len()];
        loop {
            let mut best: Option<usize> = None;
            let (mut mindiff, mut maxsame) = (usize::MAX, 0);
            for (j, slots) in members.iter().enumerate() {
                if applied[j] {
                    continue;
                }
                let on = slots.iter().filter(|&&s| todo[s]).count();
                let off = slots.len() - on;
                let (diff, same) = if additive { (off, on) } else { (on, off) };
                if same > diff && (diff < mindiff || (diff == mindiff && same > maxsame)) {
                    best = Some(j);
                    mindiff = diff;
                    maxsame = same;
                }
            }
            let Some(j) = best else { break };
            rules.push_str(if additive { " +@" } else { " -@" });
            rules.push_str(CATEGORIES[j]);
            for &s in &members[j] {
                fake[s] = additive;
                todo[s] = !additive;
            }
            applied[j] = true;
        }
        for (i, spec) in ebb_core::table::all().iter().enumerate() {
            for s in std::iter::once(i).chain(crate::cmdstats::sub_slots_of(spec)) {
                let want = self.allowed(s);
                if want != fake[s] {
                    rules.push_str(if want { " +" } else { " -" });
                    rules.push_str(crate::cmdstats::slot_name(s));
                    if s == i {
                        // A container's rule covers its subcommands.
                        for t in crate::cmdstats::sub_slots_of(spec) {
                            fake[t] = want;
                        }
                    }
                    fake[s] = want;
                }
                if !want {
                    for arg in self.first_args.get(&s).into_iter().flatten() {
                        rules.push_str(" +");
                        rules.push_str(crate::cmdstats::slot_name(s));
                        rules.push('|');
                        rules.push_str(&String::from_utf8_lossy(arg));
                    }
                }
            }
        }
        rules
    }

    fn describe_keys(&self) -> String {
        if self.all_keys {
            return "~*".into();
        }
        self.keys
            .iter()
            .map(|k| {
                let prefix = match (k.read, k.write) {
                    (true, true) => "~",
                    (true, false) => "%R~",
                    _ => "%W~",
                };
                format!("{prefix}{}", String::from_utf8_lossy(&k.pattern))
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn describe_channels(&self) -> String {
        if self.all_channels {
            return "&*".into();
        }
        self.channels
            .iter()
            .map(|c| format!("&{}", String::from_utf8_lossy(c)))
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn flags(&self) -> Vec<&'static str> {
        let mut f = vec![if self.enabled { "on" } else { "off" }];
        if self.nopass {
            f.push("nopass");
        }
        match self.sanitize {
            Some(true) => f.push("sanitize-payload"),
            Some(false) => f.push("skip-sanitize-payload"),
            None => {}
        }
        f
    }

    /// The parts ACL GETUSER shows.
    pub fn describe_parts(&self) -> UserParts {
        UserParts {
            flags: self.flags(),
            passwords: self.passwords.clone(),
            commands: self.describe_commands(),
            keys: self.describe_keys(),
            channels: self.describe_channels(),
        }
    }

    /// The user as one ACL LIST line.
    fn describe(&self) -> String {
        let mut parts = vec![format!("user {}", String::from_utf8_lossy(&self.name))];
        parts.extend(self.flags().iter().map(|f| f.to_string()));
        parts.extend(self.passwords.iter().map(|p| format!("#{p}")));
        let keys = self.describe_keys();
        if !keys.is_empty() {
            parts.push(keys);
        }
        if self.all_channels {
            parts.push("&*".into());
        } else {
            parts.push("resetchannels".into());
            let ch = self.describe_channels();
            if !ch.is_empty() {
                parts.push(ch);
            }
        }
        parts.push(self.describe_commands());
        parts.join(" ")
    }
}

/// What ACL GETUSER shows of a user.
pub struct UserParts {
    pub flags: Vec<&'static str>,
    pub passwords: Vec<String>,
    pub commands: String,
    pub keys: String,
    pub channels: String,
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

    /// Applies rules to `name` (created if new) all or nothing.
    pub fn set_user(&self, name: &[u8], rules: &[&[u8]]) -> Result<(), String> {
        let mut users = self.users.write();
        let mut u = match users.get(name) {
            Some(u) => (**u).clone(),
            None => User::new(name),
        };
        for r in rules {
            u.apply(r).map_err(|e| {
                format!(
                    "Error in ACL SETUSER modifier '{}': {e}",
                    String::from_utf8_lossy(r)
                )
            })?;
        }
        u.refresh();
        users.insert(Bytes::copy_from_slice(name), Arc::new(u));
        self.generation.fetch_add(1, Ordering::AcqRel);
        Ok(())
    }

    /// Sets up the users of the configuration: `requirepass`, `user`
    /// lines, then the `aclfile` (Redis refuses both kinds of user lists
    /// at once). Errors are fatal at start.
    pub fn configure(
        &self,
        requirepass: &str,
        lines: &[Vec<String>],
        aclfile: &str,
    ) -> Result<(), String> {
        if !lines.is_empty() && !aclfile.is_empty() {
            return Err(
                "Configuring Redis with users defined in redis.conf and at the same \
                        setting an ACL file path is invalid. This setup is very likely to lead \
                        to configuration errors and security holes, please define either an \
                        ACL file or declare users directly in your redis.conf, but not both."
                    .into(),
            );
        }
        if !requirepass.is_empty() {
            self.set_requirepass(requirepass);
        }
        for line in lines {
            // Each line describes the whole user: a new one, or the default
            // user reset first (Redis does not reset a new user, so it gets
            // no `sanitize-payload` flag).
            let reset = (line[0] == "default").then_some(&b"reset"[..]);
            let rules: Vec<&[u8]> = reset
                .into_iter()
                .chain(line[1..].iter().map(|r| r.as_bytes()))
                .collect();
            self.set_user(line[0].as_bytes(), &rules)
                .map_err(|e| format!("Error in user declaration '{}': {e}", line[0]))?;
        }
        if !aclfile.is_empty() {
            self.load_file(aclfile)?;
        }
        Ok(())
    }

    /// Replaces the users with those of an ACL file (all or nothing). A
    /// file that does not name the default user gives it the settings of
    /// a fresh server, as Redis does. Returns the names of the users
    /// replaced other than the default (their clients are disconnected).
    pub fn load_file(&self, path: &str) -> Result<Vec<Bytes>, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("Error loading ACLs, opening file '{path}': {e}"))?;
        let mut users: BTreeMap<Bytes, Arc<User>> = BTreeMap::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let words = crate::resp::split_args(line.as_bytes())
                .ok_or_else(|| format!("{path}:{}: unbalanced quotes in acl line", n + 1))?;
            if words.first().is_none_or(|w| &w[..] != b"user") || words.len() < 2 {
                return Err(format!(
                    "{path}:{}: line should start with user keyword",
                    n + 1
                ));
            }
            if users.contains_key(&words[1]) {
                return Err(format!(
                    "WARNING: Duplicate user '{}' found on line {}. ",
                    String::from_utf8_lossy(&words[1]),
                    n + 1
                ));
            }
            let mut u = User::new(&words[1]);
            for r in &words[2..] {
                u.apply(r).map_err(|e| format!("{path}:{}: {e}. ", n + 1))?;
            }
            u.refresh();
            users.insert(words[1].clone(), Arc::new(u));
        }
        let mut cur = self.users.write();
        users
            .entry(Bytes::from_static(b"default"))
            .or_insert_with(|| Arc::new(User::default_user()));
        let replaced = cur
            .keys()
            .filter(|n| &n[..] != b"default")
            .cloned()
            .collect();
        *cur = users;
        self.generation.fetch_add(1, Ordering::AcqRel);
        Ok(replaced)
    }

    /// Writes every user to an ACL file (ACL SAVE).
    pub fn save_file(&self, path: &str) -> std::io::Result<()> {
        let mut text = self.describe_all().join("\n");
        text.push('\n');
        let tmp = format!("{path}.tmp-{}", std::process::id());
        std::fs::write(&tmp, text)?;
        std::fs::rename(&tmp, path)
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

    /// Checks a command against `user`: which argument it is refused on.
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
        if !user.allowed(slot) && !user.first_arg_ok(slot, argv) {
            return Err(Denied::Command);
        }
        if !user.all_keys {
            // What the command does to each key comes from its key
            // specification, as in Redis: `access` needs read permission,
            // `insert`, `update` and `delete` write permission.
            for i in spec.key_positions(argv) {
                let flags = ebb_core::keyspecs::flags_at(spec.name, argv, i);
                let read = flags.contains(&"access");
                let write = flags
                    .iter()
                    .any(|f| matches!(*f, "insert" | "update" | "delete"));
                if argv.get(i).is_some_and(|k| !user.key_ok(k, read, write)) {
                    return Err(Denied::Key(i));
                }
            }
        }
        if !user.all_channels {
            let channels: &[&[u8]] = match spec.name {
                "publish" | "spublish" => argv.get(1..2).unwrap_or(&[]),
                "subscribe" | "psubscribe" | "ssubscribe" => argv.get(1..).unwrap_or(&[]),
                _ => &[],
            };
            let literal = spec.name == "psubscribe";
            for (i, c) in channels.iter().enumerate() {
                if !user.channel_ok(c, literal) {
                    return Err(Denied::Channel(i + 1));
                }
            }
        }
        Ok(())
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
