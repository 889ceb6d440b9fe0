//! Selectors: a set of commands, key patterns and channel patterns that
//! permit a command together. Every user has a root selector (the rules
//! written outside parentheses) and any number of further ones (each
//! `(...)` of ACL SETUSER); a command runs when one selector permits its
//! command, every key it names and every channel it names.

use bytes::Bytes;
use ebb_core::table::flag;
use ebb_core::CommandSpec;
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;

use super::{categories, slot_total, Denied, PUBSUB_DEFAULT_ALL};

pub(super) const SYNTAX: &str = "Syntax error";
const UNKNOWN: &str = "Unknown command or category name in ACL";
const AFTER_ALL_KEYS: &str = "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns";
const AFTER_ALL_CHANNELS: &str = "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels";

/// A key pattern and the access it grants (`~p` both, `%R~p` reading,
/// `%W~p` writing).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct KeyPattern {
    pub(super) pattern: Bytes,
    pub(super) read: bool,
    pub(super) write: bool,
}

/// The keys a command names, with what it does to each (`read`, `write`;
/// neither for a command that only checks the key, such as EXISTS),
/// worked out once for all of a user's selectors.
pub(super) type KeyUses = Vec<(usize, bool, bool)>;

/// One selector.
#[derive(Debug, Clone)]
pub(crate) struct Selector {
    /// A bit per command and subcommand slot.
    pub(super) commands: Vec<u64>,
    /// First arguments that open a command whose bit is off (`+select|0`,
    /// `+debug|object`: Redis's deprecated first-arg rules), by slot.
    pub(super) first_args: BTreeMap<usize, Vec<Bytes>>,
    /// Commands that do not exist yet are allowed (+@all was the last word).
    pub(super) future: bool,
    pub(super) all_keys: bool,
    pub(super) keys: Vec<KeyPattern>,
    pub(super) all_channels: bool,
    pub(super) channels: Vec<Bytes>,
}

impl Selector {
    /// A selector that permits nothing (but every channel when
    /// `acl-pubsub-default` is `allchannels`).
    pub(super) fn new() -> Selector {
        Selector {
            commands: vec![0; slot_total().div_ceil(64)],
            first_args: BTreeMap::new(),
            future: false,
            all_keys: false,
            keys: Vec::new(),
            all_channels: PUBSUB_DEFAULT_ALL.load(Ordering::Relaxed),
            channels: Vec::new(),
        }
    }

    /// A selector written `(rule rule ...)` (the parentheses removed):
    /// its rules are split as a command line is, quotes and all (none at
    /// all when the quotes do not balance, as Redis does).
    pub(super) fn parse(inner: &[u8]) -> Result<Selector, &'static str> {
        // Redis splits them as a C string: a NUL ends them.
        let inner = inner.split(|&c| c == 0).next().unwrap_or_default();
        let mut s = Selector::new();
        for rule in crate::resp::split_args(inner).unwrap_or_default() {
            s.apply(&rule)?;
        }
        Ok(s)
    }

    /// Applies one rule about commands, keys or channels; Err names what
    /// is wrong, as Redis says it.
    pub(super) fn apply(&mut self, op: &[u8]) -> Result<(), &'static str> {
        let lower = String::from_utf8_lossy(op).to_ascii_lowercase();
        match lower.as_str() {
            "allkeys" | "~*" => {
                self.all_keys = true;
                self.keys.clear();
            }
            "resetkeys" => {
                self.all_keys = false;
                self.keys.clear();
            }
            "allchannels" | "&*" => {
                self.all_channels = true;
                self.channels.clear();
            }
            "resetchannels" => {
                self.all_channels = false;
                self.channels.clear();
            }
            "allcommands" | "+@all" => self.all_commands(true),
            "nocommands" | "-@all" => self.all_commands(false),
            _ => match op.first() {
                Some(b'~') | Some(b'%') => self.add_key_pattern(op)?,
                Some(b'&') => self.add_channel(&op[1..])?,
                Some(b'+') | Some(b'-') => {
                    let on = op[0] == b'+';
                    let name = &lower[1..];
                    if let Some(cat) = name.strip_prefix('@') {
                        for &s in categories::slots_of(cat).ok_or(UNKNOWN)? {
                            self.set_slot(s, on);
                        }
                    } else if let Some((cmd, _)) = name.rsplit_once('|') {
                        let at = op.iter().rposition(|&c| c == b'|').unwrap_or(0);
                        self.command_part(on, name, cmd, &op[at + 1..])?;
                    } else {
                        let spec = ebb_core::lookup(name.as_bytes()).ok_or(UNKNOWN)?;
                        self.set_command(spec, on);
                    }
                }
                _ => return Err(SYNTAX),
            },
        }
        Ok(())
    }

    pub(super) fn allowed(&self, slot: usize) -> bool {
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

    /// `+cmd|part` or `-cmd|part` (`name` lower-case, split at its last
    /// `|`; `part` as written): a subcommand of a container, or, for `+`
    /// on a command without subcommands, a first argument that opens it
    /// (Redis's deprecated `+select|0`).
    fn command_part(
        &mut self,
        on: bool,
        name: &str,
        cmd: &str,
        part: &[u8],
    ) -> Result<(), &'static str> {
        if let Some((container, _)) = cmd.split_once('|') {
            // `+config|get|x`: a first argument of a subcommand.
            let known = crate::cmdstats::sub_slot(cmd).is_some()
                && ebb_core::lookup(container.as_bytes()).is_some();
            return Err(if known && on {
                "Allowing first-arg of a subcommand is not supported"
            } else {
                UNKNOWN
            });
        }
        let spec = ebb_core::lookup(cmd.as_bytes()).ok_or(UNKNOWN)?;
        if let Some(slot) = crate::cmdstats::sub_slot(name) {
            self.set_slot(slot, on);
            return Ok(());
        }
        if !on {
            return Err(UNKNOWN);
        }
        if part.is_empty() {
            return Err(SYNTAX);
        }
        if !crate::cmdstats::sub_slots_of(spec).is_empty() {
            return Err(UNKNOWN);
        }
        let slot = ebb_core::table::index_of(spec);
        let args = self.first_args.entry(slot).or_default();
        if !args.iter().any(|a| a.eq_ignore_ascii_case(part)) {
            args.push(Bytes::copy_from_slice(part));
        }
        tracing::warn!(
            "Deprecation warning: Allowing a first arg of an otherwise blocked command is a \
             misuse of ACL and may get disabled in the future (offender: +{}|{})",
            cmd,
            String::from_utf8_lossy(part)
        );
        Ok(())
    }

    fn all_commands(&mut self, on: bool) {
        for w in self.commands.iter_mut() {
            *w = if on { u64::MAX } else { 0 };
        }
        self.first_args.clear();
        self.future = on;
    }

    /// `~pattern`, or `%` then R and W (at most once each) then `~` and
    /// the pattern; the pattern may be empty, as may the `~` (Redis reads
    /// `%RW` as `%RW~`). A pattern named again gains the new access.
    fn add_key_pattern(&mut self, op: &[u8]) -> Result<(), &'static str> {
        if self.all_keys {
            return Err(AFTER_ALL_KEYS);
        }
        let (read, write, pattern) = if op[0] == b'~' {
            (true, true, &op[1..])
        } else {
            let (mut r, mut w) = (false, false);
            let mut at = 1;
            while at < op.len() {
                match op[at].to_ascii_uppercase() {
                    b'R' if !r => r = true,
                    b'W' if !w => w = true,
                    b'~' => break,
                    _ => return Err(SYNTAX),
                }
                at += 1;
            }
            if !r && !w {
                return Err(SYNTAX);
            }
            (r, w, op.get(at + 1..).unwrap_or(&[]))
        };
        if has_space(pattern) {
            return Err(SYNTAX);
        }
        match self.keys.iter_mut().find(|k| k.pattern == pattern) {
            Some(k) => {
                k.read |= read;
                k.write |= write;
            }
            None => self.keys.push(KeyPattern {
                pattern: Bytes::copy_from_slice(pattern),
                read,
                write,
            }),
        }
        Ok(())
    }

    fn add_channel(&mut self, pattern: &[u8]) -> Result<(), &'static str> {
        if self.all_channels {
            return Err(AFTER_ALL_CHANNELS);
        }
        if has_space(pattern) {
            return Err(SYNTAX);
        }
        if !self.channels.iter().any(|c| c == pattern) {
            self.channels.push(Bytes::copy_from_slice(pattern));
        }
        Ok(())
    }

    /// Whether `read` and `write` access (as asked) reaches every key: all
    /// keys, or a `*` pattern granting that access (`%R~*` for reading).
    pub(super) fn every_key(&self, read: bool, write: bool) -> bool {
        self.all_keys
            || self
                .keys
                .iter()
                .any(|k| (!read || k.read) && (!write || k.write) && &k.pattern[..] == b"*")
    }

    /// Every command, key and channel: nothing to check.
    pub(super) fn unrestricted(&self) -> bool {
        self.all_channels
            && self.every_key(true, true)
            && (0..slot_total()).all(|s| self.allowed(s))
    }

    /// Whether the selector may touch `key` as asked.
    pub(super) fn key_ok(&self, key: &[u8], read: bool, write: bool) -> bool {
        self.all_keys
            || self.keys.iter().any(|k| {
                (!read || k.read)
                    && (!write || k.write)
                    && ebb_core::glob::glob_match(&k.pattern, key, false)
            })
    }

    /// Whether the selector may publish or subscribe to `channel`, or (a
    /// pattern subscription, `literal`) use exactly the pattern `channel`.
    pub(super) fn channel_ok(&self, channel: &[u8], literal: bool) -> bool {
        self.all_channels
            || self.channels.iter().any(|p| {
                if literal {
                    p == channel
                } else {
                    ebb_core::glob::glob_match(p, channel, false)
                }
            })
    }

    /// Whether a first-arg rule opens the command at `slot` for `argv`.
    fn first_arg_ok(&self, slot: usize, argv: &[&[u8]]) -> bool {
        match (self.first_args.get(&slot), argv.get(1)) {
            (Some(args), Some(first)) => args.iter().any(|a| a.eq_ignore_ascii_case(first)),
            _ => false,
        }
    }

    /// Checks a command (at `slot`) against this selector: its command,
    /// then each key (found once into `keys` for all selectors), then each
    /// channel; Err is the first thing refused.
    pub(super) fn check(
        &self,
        spec: &'static CommandSpec,
        slot: usize,
        argv: &[&[u8]],
        keys: &mut Option<KeyUses>,
    ) -> Result<(), Denied> {
        if !spec.has(flag::NO_AUTH) && !self.allowed(slot) && !self.first_arg_ok(slot, argv) {
            return Err(Denied::Command);
        }
        if !self.all_keys {
            for &(i, read, write) in keys.get_or_insert_with(|| key_uses(spec, argv)).iter() {
                if argv.get(i).is_some_and(|k| !self.key_ok(k, read, write)) {
                    return Err(Denied::Key(i));
                }
            }
        }
        if !self.all_channels {
            let channels: &[&[u8]] = match spec.name {
                "publish" | "spublish" => argv.get(1..2).unwrap_or(&[]),
                "subscribe" | "psubscribe" | "ssubscribe" => argv.get(1..).unwrap_or(&[]),
                _ => &[],
            };
            let literal = spec.name == "psubscribe";
            for (i, c) in channels.iter().enumerate() {
                if !self.channel_ok(c, literal) {
                    return Err(Denied::Channel(i + 1));
                }
            }
        }
        Ok(())
    }
}

/// What the command does to each of its keys, from its key
/// specifications as in Redis: `access` needs read permission, `insert`,
/// `update` and `delete` write permission.
fn key_uses(spec: &'static CommandSpec, argv: &[&[u8]]) -> KeyUses {
    spec.key_positions(argv)
        .into_iter()
        .map(|i| {
            let flags = ebb_core::keyspecs::flags_at(spec.name, argv, i);
            let read = flags.contains(&"access");
            let write = flags
                .iter()
                .any(|f| matches!(*f, "insert" | "update" | "delete"));
            (i, read, write)
        })
        .collect()
}

/// Patterns may not hold a space or a NUL (they could not be written back
/// in an ACL file).
fn has_space(p: &[u8]) -> bool {
    p.iter().any(|&c| c == b' ' || c == 0)
}
