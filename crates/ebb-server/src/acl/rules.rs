//! ACL rules: what each of ACL SETUSER's rules does to a user (the
//! grammar of `user` lines and ACL files too), how a selector written
//! across several arguments is put back together, and the password
//! digests the rules name.

use sha2::{Digest, Sha256};
use std::sync::atomic::Ordering;

use super::selector::Selector;
use super::{User, PUBSUB_DEFAULT_ALL};

impl User {
    /// Applies one ACL rule (ACL SETUSER's grammar); Err names what is
    /// wrong, as Redis says it. Rules about commands, keys and channels go
    /// to the root selector; `(...)` adds a selector.
    pub(super) fn apply(&mut self, op: &[u8]) -> Result<(), &'static str> {
        if op.is_empty() {
            // An empty rule changes nothing, as in Redis.
            return Ok(());
        }
        let lower = String::from_utf8_lossy(op).to_ascii_lowercase();
        match lower.as_str() {
            "on" => self.enabled = true,
            "off" => self.enabled = false,
            "skip-sanitize-payload" => self.sanitize = Some(false),
            "sanitize-payload" => self.sanitize = Some(true),
            "nopass" => {
                self.nopass = true;
                self.passwords.clear();
            }
            "resetpass" => {
                self.nopass = false;
                self.passwords.clear();
            }
            _ => match op[0] {
                b'>' | b'#' => {
                    let h = if op[0] == b'>' {
                        sha256_hex(&op[1..])
                    } else {
                        hash_arg(&op[1..])?
                    };
                    if !self.passwords.contains(&h) {
                        self.passwords.push(h);
                    }
                    self.nopass = false;
                }
                b'<' | b'!' => {
                    let h = if op[0] == b'<' {
                        sha256_hex(&op[1..])
                    } else {
                        hash_arg(&op[1..])?
                    };
                    let before = self.passwords.len();
                    self.passwords.retain(|p| *p != h);
                    if self.passwords.len() == before {
                        return Err(
                            "The password you are trying to remove from the user does not exist",
                        );
                    }
                }
                b'(' if op.ends_with(b")") => {
                    let inner = op.get(1..op.len() - 1).unwrap_or_default();
                    self.selectors.push(Selector::parse(inner)?);
                }
                _ if lower == "clearselectors" => self.selectors.clear(),
                _ if lower == "reset" => {
                    for r in ["resetpass", "resetkeys", "resetchannels"] {
                        self.apply(r.as_bytes())?;
                    }
                    if PUBSUB_DEFAULT_ALL.load(Ordering::Relaxed) {
                        self.apply(b"allchannels")?;
                    }
                    for r in ["off", "sanitize-payload", "clearselectors", "-@all"] {
                        self.apply(r.as_bytes())?;
                    }
                }
                _ => self.root.apply(op)?,
            },
        }
        Ok(())
    }
}

/// ACL rules with each selector in one piece: a selector may be written
/// across several arguments (`(+get` `~k*)`), which are joined with
/// spaces from the one opening with `(` to the one closing with `)`. Err
/// is the index of an opening argument never closed.
pub(super) fn merge_selectors<'a>(
    rules: &[&'a [u8]],
) -> Result<Vec<std::borrow::Cow<'a, [u8]>>, usize> {
    use std::borrow::Cow;
    let mut out = Vec::with_capacity(rules.len());
    let mut open: Option<(usize, Vec<u8>)> = None;
    for (i, &r) in rules.iter().enumerate() {
        if let Some((_, sel)) = open.as_mut() {
            sel.push(b' ');
            sel.extend_from_slice(r);
            if r.ends_with(b")") {
                if let Some((_, sel)) = open.take() {
                    out.push(Cow::Owned(sel));
                }
            }
        } else if r.starts_with(b"(") && !r.ends_with(b")") {
            open = Some((i, r.to_vec()));
        } else {
            out.push(Cow::Borrowed(r));
        }
    }
    match open {
        Some((i, _)) => Err(i),
        None => Ok(out),
    }
}

/// The error for a selector left open at `rule`, as ACL SETUSER gives it.
pub(super) fn unmatched(rule: &[u8]) -> String {
    format!(
        "Unmatched parenthesis in acl selector starting at '{}'.",
        String::from_utf8_lossy(rule)
    )
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

#[cfg(test)]
mod tests {
    use super::merge_selectors;

    fn merged(rules: &[&str]) -> Result<Vec<String>, usize> {
        let rules: Vec<&[u8]> = rules.iter().map(|r| r.as_bytes()).collect();
        merge_selectors(&rules).map(|v| {
            v.iter()
                .map(|r| String::from_utf8_lossy(r).into_owned())
                .collect()
        })
    }

    #[test]
    fn selectors_spread_over_arguments_are_joined() {
        assert_eq!(
            merged(&["on", "(+get", "~a", "~b)", "(+set)", "~c"]),
            Ok(vec![
                "on".into(),
                "(+get ~a ~b)".into(),
                "(+set)".into(),
                "~c".into()
            ])
        );
        assert_eq!(merged(&["( ~k +get )"]), Ok(vec!["( ~k +get )".into()]));
        assert_eq!(merged(&[")", "x)"]), Ok(vec![")".into(), "x)".into()]));
        assert_eq!(merged(&[""]), Ok(vec!["".into()]));
    }

    #[test]
    fn an_unclosed_selector_names_where_it_opens() {
        assert_eq!(merged(&["on", "(+get", "~a"]), Err(1));
        assert_eq!(merged(&["(+get)", "("]), Err(1));
    }
}
