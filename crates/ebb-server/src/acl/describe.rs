//! Writing permissions back as rules: a selector's commands, keys and
//! channels as ACL GETUSER shows them, and whole users as ACL LIST, ACL
//! SAVE and CONFIG REWRITE write them (rules that rebuild the user).

use super::selector::Selector;
use super::{categories, slot_total, User, CATEGORIES};

impl Selector {
    /// The command rules that rebuild this selector's permissions, as
    /// Redis describes them: `+@all` or `-@all`, the categories that
    /// describe most with fewest exceptions, then single commands.
    pub(super) fn describe_commands(&self) -> String {
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

    /// The key patterns, space-separated (`~*` for every key).
    pub(super) fn describe_keys(&self) -> String {
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

    /// The channel patterns, space-separated (`&*` for every channel).
    pub(super) fn describe_channels(&self) -> String {
        if self.all_channels {
            return "&*".into();
        }
        self.channels
            .iter()
            .map(|c| format!("&{}", String::from_utf8_lossy(c)))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The rules that rebuild the selector: keys, channels (after
    /// `resetchannels` unless all), commands.
    fn describe(&self) -> String {
        let mut parts = Vec::new();
        let keys = self.describe_keys();
        if !keys.is_empty() {
            parts.push(keys);
        }
        if !self.all_channels {
            parts.push("resetchannels".into());
        }
        let channels = self.describe_channels();
        if !channels.is_empty() {
            parts.push(channels);
        }
        parts.push(self.describe_commands());
        parts.join(" ")
    }

    /// What ACL GETUSER shows of the selector.
    pub fn describe_parts(&self) -> SelectorParts {
        SelectorParts {
            commands: self.describe_commands(),
            keys: self.describe_keys(),
            channels: self.describe_channels(),
        }
    }
}

/// What ACL GETUSER shows of a selector.
pub struct SelectorParts {
    pub commands: String,
    pub keys: String,
    pub channels: String,
}

/// What ACL GETUSER shows of a user: its flags and passwords, its root
/// selector and its other selectors.
pub struct UserParts {
    pub flags: Vec<&'static str>,
    pub passwords: Vec<String>,
    pub root: SelectorParts,
    pub selectors: Vec<SelectorParts>,
}

impl User {
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
            root: self.root.describe_parts(),
            selectors: self.selectors.iter().map(|s| s.describe_parts()).collect(),
        }
    }

    /// The user as one ACL LIST line: flags, password digests, the root
    /// selector's rules, then each other selector in parentheses.
    pub(super) fn describe(&self) -> String {
        let mut parts = vec![format!("user {}", String::from_utf8_lossy(&self.name))];
        parts.extend(self.flags().iter().map(|f| f.to_string()));
        parts.extend(self.passwords.iter().map(|p| format!("#{p}")));
        parts.push(self.root.describe());
        parts.extend(self.selectors.iter().map(|s| format!("({})", s.describe())));
        parts.join(" ")
    }
}
