//! ACL rules: what each of ACL SETUSER's rules does to a user (the
//! grammar of `user` lines and ACL files too), and the password digests
//! they name.

use bytes::Bytes;
use sha2::{Digest, Sha256};
use std::sync::atomic::Ordering;

use super::{categories, KeyPattern, User, PUBSUB_DEFAULT_ALL};

impl User {
    /// Applies one ACL rule (ACL SETUSER's grammar); Err names what is
    /// wrong, as Redis says it.
    pub(super) fn apply(&mut self, op: &[u8]) -> Result<(), &'static str> {
        const SYNTAX: &str = "Syntax error";
        const UNKNOWN: &str = "Unknown command or category name in ACL";
        if op.is_empty() {
            // An empty rule changes nothing, as in Redis.
            return Ok(());
        }
        let lower = String::from_utf8_lossy(op).to_ascii_lowercase();
        match lower.as_str() {
            "on" => self.enabled = true,
            "off" => self.enabled = false,
            "nopass" => {
                self.nopass = true;
                self.passwords.clear();
            }
            "resetpass" => {
                self.nopass = false;
                self.passwords.clear();
            }
            "allkeys" | "~*" => self.allow_all_keys(),
            "resetkeys" => {
                self.all_keys = false;
                self.keys.clear();
            }
            "allchannels" | "&*" => self.allow_all_channels(),
            "resetchannels" => {
                self.all_channels = false;
                self.channels.clear();
            }
            "allcommands" | "+@all" => self.all_commands(true),
            "nocommands" | "-@all" => self.all_commands(false),
            "sanitize-payload" => self.sanitize = Some(true),
            "skip-sanitize-payload" => self.sanitize = Some(false),
            "clearselectors" => {}
            "reset" => {
                for r in ["resetpass", "resetkeys", "resetchannels", "off", "-@all"] {
                    self.apply(r.as_bytes())?;
                }
                if PUBSUB_DEFAULT_ALL.load(Ordering::Relaxed) {
                    self.allow_all_channels();
                }
                self.sanitize = Some(true);
            }
            _ => {
                match op.first() {
                    Some(b'>') => {
                        let h = sha256_hex(&op[1..]);
                        if !self.passwords.contains(&h) {
                            self.passwords.push(h);
                        }
                        self.nopass = false;
                    }
                    Some(b'#') => {
                        let h = hash_arg(&op[1..])?;
                        if !self.passwords.contains(&h) {
                            self.passwords.push(h);
                        }
                        self.nopass = false;
                    }
                    Some(b'<') | Some(b'!') => {
                        let h = if op[0] == b'<' {
                            sha256_hex(&op[1..])
                        } else {
                            hash_arg(&op[1..])?
                        };
                        let before = self.passwords.len();
                        self.passwords.retain(|p| *p != h);
                        if self.passwords.len() == before {
                            return Err("The password you are trying to remove from the user does not exist");
                        }
                    }
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
                }
            }
        }
        Ok(())
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
        const UNKNOWN: &str = "Unknown command or category name in ACL";
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
        if !on || !crate::cmdstats::sub_slots_of(spec).is_empty() {
            return Err(UNKNOWN);
        }
        if part.is_empty() {
            return Err("Syntax error");
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

    fn allow_all_keys(&mut self) {
        self.all_keys = true;
        self.keys.clear();
    }

    fn allow_all_channels(&mut self) {
        self.all_channels = true;
        self.channels.clear();
    }

    fn add_key_pattern(&mut self, op: &[u8]) -> Result<(), &'static str> {
        let (read, write, pattern) = if op[0] == b'~' {
            (true, true, &op[1..])
        } else {
            // `%` then R and W at most once each, then `~` and the pattern
            // (which may be empty, as may the `~`: Redis reads `%R` as
            // `%R~`).
            let (mut r, mut w) = (false, false);
            let mut at = 1;
            while at < op.len() {
                match op[at].to_ascii_uppercase() {
                    b'R' if !r => r = true,
                    b'W' if !w => w = true,
                    b'~' => break,
                    _ => return Err("Syntax error"),
                }
                at += 1;
            }
            if !r && !w {
                return Err("Syntax error");
            }
            (r, w, op.get(at + 1..).unwrap_or(&[]))
        };
        if self.all_keys {
            return Err("Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns");
        }
        if read && write && pattern == b"*" {
            self.allow_all_keys();
            return Ok(());
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
            return Err("Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels");
        }
        if pattern == b"*" {
            self.allow_all_channels();
        } else if !self.channels.iter().any(|c| c == pattern) {
            self.channels.push(Bytes::copy_from_slice(pattern));
        }
        Ok(())
    }
}

pub(super) fn sha256_hex(b: &[u8]) -> String {
    Sha256::digest(b)
        .iter()
        .map(|x| format!("{x:02x}"))
        .collect()
}

fn hash_arg(h: &[u8]) -> Result<String, &'static str> {
    if h.len() != 64
        || !h
            .iter()
            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(c))
    {
        return Err("The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters");
    }
    Ok(String::from_utf8_lossy(h).into_owned())
}
