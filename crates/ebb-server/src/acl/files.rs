//! Users from the configuration (`requirepass`, `user` lines) and from
//! the ACL file (`aclfile`: ACL LOAD and ACL SAVE).

use bytes::Bytes;
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::{rules, Acl, RuleError, User};

const UNKNOWN: &str = "Unknown command or category name in ACL";

impl Acl {
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
            let mut users = self.users.write();
            let mut u = match users.get(line[0].as_bytes()) {
                Some(u) => (**u).clone(),
                None => User::new(line[0].as_bytes()),
            };
            u.apply_all(&rules).map_err(|e| {
                let why = match e {
                    RuleError::Unmatched(rule) => rules::unmatched(&rule),
                    RuleError::Bad(_, why) => why.to_string(),
                };
                format!("Error in user declaration '{}': {why}", line[0])
            })?;
            users.insert(Bytes::copy_from_slice(line[0].as_bytes()), Arc::new(u));
            self.generation.fetch_add(1, Ordering::AcqRel);
        }
        if !aclfile.is_empty() {
            self.load_file(aclfile)?;
        }
        Ok(())
    }

    /// Replaces the users with those of an ACL file (all or nothing: Err
    /// lists every problem found, as Redis does). A file that does not
    /// name the default user gives it the settings of a fresh server.
    /// Returns the names of the users replaced other than the default
    /// (their clients are disconnected).
    pub fn load_file(&self, path: &str) -> Result<Vec<Bytes>, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("Error loading ACLs, opening file '{path}': {e}"))?;
        let mut users: BTreeMap<Bytes, Arc<User>> = BTreeMap::new();
        let mut errors = String::new();
        for (n, line) in text.lines().enumerate() {
            let n = n + 1;
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let Some(words) = crate::resp::split_args(line.as_bytes()) else {
                errors.push_str(&format!("{path}:{n}: unbalanced quotes in acl line. "));
                continue;
            };
            if words.first().is_none_or(|w| &w[..] != b"user") || words.len() < 2 {
                errors.push_str(&format!(
                    "{path}:{n} should start with user keyword followed by the username. "
                ));
                continue;
            }
            let name = &words[1];
            if name.iter().any(|&c| c == b' ' || c == 0) {
                errors.push_str(&format!(
                    "'{path}:{n}: username '{}' contains invalid characters. ",
                    String::from_utf8_lossy(name)
                ));
                continue;
            }
            if users.contains_key(name) {
                errors.push_str(&format!(
                    "WARNING: Duplicate user '{}' found on line {n}. ",
                    String::from_utf8_lossy(name)
                ));
                continue;
            }
            let mut u = User::new(name);
            let rules: Vec<&[u8]> = words[2..].iter().map(|w| &w[..]).collect();
            match rules::merge_selectors(&rules) {
                Err(_) => errors.push_str(&format!(
                    "{path}:{n}: Unmatched parenthesis in selector definition."
                )),
                Ok(merged) => {
                    // Every unknown command is reported; of the other
                    // errors only the first, which may explain the rest.
                    let mut reported = false;
                    for r in &merged {
                        match u.apply(r) {
                            Ok(()) => {}
                            Err(why) if why == UNKNOWN => errors.push_str(&format!(
                                "{path}:{n}: Error in applying operation '{}': {why}. ",
                                String::from_utf8_lossy(r)
                            )),
                            Err(why) if !reported => {
                                errors.push_str(&format!("{path}:{n}: {why}. "));
                                reported = true;
                            }
                            Err(_) => {}
                        }
                    }
                }
            }
            u.refresh();
            users.insert(name.clone(), Arc::new(u));
        }
        if !errors.is_empty() {
            errors.push_str(
                "WARNING: ACL errors detected, no change to the previously active ACL rules \
                 was performed",
            );
            return Err(errors);
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
}
