//! Keyspace notifications as data: the `notify-keyspace-events` flags
//! (Redis's, plus the subkey channels `S`, `T`, `I`, `V`) and the channel
//! and payload of every message an event gives. The hosts publish them.

use bytes::Bytes;

use crate::Event;

/// Parsed `notify-keyspace-events` flags.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Flags {
    classes: u32,
    /// `K`: `__keyspace@<db>__:<key>` channels.
    pub keyspace: bool,
    /// `E`: `__keyevent@<db>__:<event>` channels.
    pub keyevent: bool,
    /// `S`: `__subkeyspace@<db>__:<key>`.
    pub subkeyspace: bool,
    /// `T`: `__subkeyevent@<db>__:<event>`.
    pub subkeyevent: bool,
    /// `I`: `__subkeyspaceitem@<db>__:<key>\n<member>`.
    pub subkeyitem: bool,
    /// `V`: `__subkeyspaceevent@<db>__:<event>|<key>`.
    pub subkeyspaceevent: bool,
}

const CLASS_CHARS: &[u8] = b"g$lshzxetdmn";
const ALL: &[u8] = b"g$lshzxetd";

fn bit(c: u8) -> u32 {
    CLASS_CHARS
        .iter()
        .position(|&x| x == c)
        .map(|p| 1 << p)
        .unwrap_or(0)
}

/// Parses a flags string; None if it holds a character Redis rejects.
pub fn parse_flags(s: &str) -> Option<Flags> {
    let mut f = Flags::default();
    for c in s.bytes() {
        match c {
            b'A' => {
                for &a in ALL {
                    f.classes |= bit(a);
                }
            }
            b'K' => f.keyspace = true,
            b'E' => f.keyevent = true,
            b'S' => f.subkeyspace = true,
            b'T' => f.subkeyevent = true,
            b'I' => f.subkeyitem = true,
            b'V' => f.subkeyspaceevent = true,
            c if CLASS_CHARS.contains(&c) => f.classes |= bit(c),
            _ => return None,
        }
    }
    Some(f)
}

impl Flags {
    /// The canonical string CONFIG GET shows, in Redis's order: `A` for
    /// every class (`n` is then not shown, though it stays on) or the
    /// classes one by one with `n` last, then `K`, `E` and `m`; ebb's
    /// subkey channels follow.
    pub fn to_config_string(self) -> String {
        let mut s = String::new();
        let all: u32 = ALL.iter().map(|&c| bit(c)).sum();
        if self.classes & all == all {
            s.push('A');
        } else {
            for &c in ALL.iter().chain(b"n") {
                if self.classes & bit(c) != 0 {
                    s.push(c as char);
                }
            }
        }
        if self.keyspace {
            s.push('K');
        }
        if self.keyevent {
            s.push('E');
        }
        if self.classes & bit(b'm') != 0 {
            s.push('m');
        }
        for (on, c) in [
            (self.subkeyspace, 'S'),
            (self.subkeyevent, 'T'),
            (self.subkeyitem, 'I'),
            (self.subkeyspaceevent, 'V'),
        ] {
            if on {
                s.push(c);
            }
        }
        s
    }

    /// Whether member-expiry events must carry member names.
    pub fn wants_member_names(&self) -> bool {
        self.subkeyspace || self.subkeyevent || self.subkeyitem || self.subkeyspaceevent
    }

    /// Whether `new` events (class `n`) are published.
    pub fn wants_new_keys(&self) -> bool {
        self.any() && self.classes & bit(b'n') != 0
    }

    /// Whether `keymiss` events (class `m`) are published.
    pub fn wants_keymiss(&self) -> bool {
        self.any() && self.classes & bit(b'm') != 0
    }

    /// Whether anything at all is published.
    pub fn any(&self) -> bool {
        self.classes != 0
            && (self.keyspace
                || self.keyevent
                || self.subkeyspace
                || self.subkeyevent
                || self.subkeyitem
                || self.subkeyspaceevent)
    }

    /// The (channel, message) pairs to publish for one event.
    pub fn messages(&self, ev: &Event) -> Vec<(Bytes, Bytes)> {
        let mut out = Vec::new();
        if self.classes & bit(ev.class) == 0 {
            return out;
        }
        let db = ev.db;
        let name = ev.name.as_bytes();
        if self.keyspace {
            out.push((
                chan(format!("__keyspace@{db}__:").as_bytes(), &ev.key),
                Bytes::copy_from_slice(name),
            ));
        }
        if self.keyevent {
            out.push((
                chan(format!("__keyevent@{db}__:").as_bytes(), name),
                ev.key.clone(),
            ));
        }
        if ev.members.is_empty() {
            return out;
        }
        let list = member_list(&ev.members);
        if self.subkeyspace {
            let mut p = name.to_vec();
            p.push(b'|');
            p.extend_from_slice(&list);
            out.push((
                chan(format!("__subkeyspace@{db}__:").as_bytes(), &ev.key),
                p.into(),
            ));
        }
        if self.subkeyevent {
            let mut p = format!("{}:", ev.key.len()).into_bytes();
            p.extend_from_slice(&ev.key);
            p.push(b'|');
            p.extend_from_slice(&list);
            out.push((
                chan(format!("__subkeyevent@{db}__:").as_bytes(), name),
                p.into(),
            ));
        }
        if self.subkeyitem {
            for m in &ev.members {
                let mut c = format!("__subkeyspaceitem@{db}__:").into_bytes();
                c.extend_from_slice(&ev.key);
                c.push(b'\n');
                c.extend_from_slice(m);
                out.push((c.into(), Bytes::copy_from_slice(name)));
            }
        }
        if self.subkeyspaceevent {
            let mut c = format!("__subkeyspaceevent@{db}__:").into_bytes();
            c.extend_from_slice(name);
            c.push(b'|');
            c.extend_from_slice(&ev.key);
            out.push((c.into(), list.into()));
        }
        out
    }
}

fn chan(prefix: &[u8], tail: &[u8]) -> Bytes {
    let mut c = prefix.to_vec();
    c.extend_from_slice(tail);
    c.into()
}

fn member_list(members: &[Bytes]) -> Vec<u8> {
    let mut p = Vec::new();
    for (i, m) in members.iter().enumerate() {
        if i > 0 {
            p.push(b',');
        }
        p.extend_from_slice(format!("{}:", m.len()).as_bytes());
        p.extend_from_slice(m);
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    #[test]
    fn flags_round_trip() {
        assert_eq!(
            parse_flags("KEA").map(|f| f.to_config_string()).as_deref(),
            Some("AKE")
        );
        assert_eq!(
            parse_flags("Kgx").map(|f| f.to_config_string()).as_deref(),
            Some("gxK")
        );
        assert!(parse_flags("Q").is_none());
        assert_eq!(parse_flags("").map(|f| f.any()), Some(false));
    }

    #[test]
    fn member_event_payloads() {
        let f = parse_flags("sST").unwrap_or_default();
        let ev = Event {
            class: b's',
            name: "sexpired".into(),
            db: 0,
            key: Bytes::from_static(b"k"),
            members: vec![Bytes::from_static(b"ab"), Bytes::from_static(b"c")],
        };
        let m = f.messages(&ev);
        assert_eq!(
            m[0],
            (
                Bytes::from_static(b"__subkeyspace@0__:k"),
                Bytes::from_static(b"sexpired|2:ab,1:c")
            )
        );
        assert_eq!(
            m[1],
            (
                Bytes::from_static(b"__subkeyevent@0__:sexpired"),
                Bytes::from_static(b"1:k|2:ab,1:c")
            )
        );
    }
}
