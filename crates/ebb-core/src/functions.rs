//! The function libraries loaded with FUNCTION LOAD: each library's name and
//! whole source code. They are kept with the keyspace so that snapshots,
//! AOF rewrites, DEBUG RELOAD and a fork's view of the data carry them.
//! Compiling and running them (Lua) is the server's business; the core
//! only keeps the code, and FUNCTION DUMP's payload format.

use bytes::Bytes;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

/// Source of generation stamps: unique across every set of libraries of
/// the process, so a reloaded set never passes for the one it replaced.
static STAMPS: AtomicU64 = AtomicU64::new(1);

fn stamp() -> u64 {
    STAMPS.fetch_add(1, Ordering::Relaxed)
}

/// Library name -> source code (the whole text, `#!lua name=…` line
/// included, as FUNCTION LIST WITHCODE shows it).
#[derive(Debug, Clone)]
pub struct Libraries {
    code: BTreeMap<Bytes, Bytes>,
    generation: u64,
}

impl Default for Libraries {
    fn default() -> Self {
        Libraries {
            code: BTreeMap::new(),
            generation: stamp(),
        }
    }
}

impl Libraries {
    /// Changes on every change of the set (and differs between sets), so
    /// whoever compiled the libraries can tell whether it is up to date.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The code of library `name`.
    pub fn get(&self, name: &[u8]) -> Option<&Bytes> {
        self.code.get(name)
    }

    /// Adds or replaces library `name`.
    pub fn insert(&mut self, name: Bytes, code: Bytes) {
        self.code.insert(name, code);
        self.generation = stamp();
    }

    /// Removes library `name`; whether it was there.
    pub fn remove(&mut self, name: &[u8]) -> bool {
        let found = self.code.remove(name).is_some();
        if found {
            self.generation = stamp();
        }
        found
    }

    /// Removes every library.
    pub fn clear(&mut self) {
        self.code.clear();
        self.generation = stamp();
    }

    /// Libraries by name.
    pub fn iter(&self) -> impl Iterator<Item = (&Bytes, &Bytes)> {
        self.code.iter()
    }

    /// Number of libraries.
    pub fn len(&self) -> usize {
        self.code.len()
    }

    /// Whether there is no library.
    pub fn is_empty(&self) -> bool {
        self.code.is_empty()
    }

    /// Bytes of source code held.
    pub fn code_bytes(&self) -> usize {
        self.code.iter().map(|(n, c)| n.len() + c.len()).sum()
    }
}

/// First bytes of the FUNCTION DUMP payloads ebb wrote before it wrote
/// Redis's form (the libraries' code, length-prefixed, then a checksum of
/// everything before it); still read, as an AOF may hold them.
const MAGIC: &[u8] = b"EBBFUNC1";

/// FUNCTION DUMP's payload for `libs`: Redis's own form, which Redis's
/// FUNCTION RESTORE takes too.
pub fn dump_payload(libs: &Libraries) -> Vec<u8> {
    crate::rdb::function_dump(libs.iter().map(|(_, code)| &code[..]))
}

/// The libraries' code in a FUNCTION DUMP payload (Redis's form, or ebb's
/// older one); Err is the error to reply, Redis's text.
pub fn parse_payload_checked(data: &[u8]) -> Result<Vec<Bytes>, &'static str> {
    if let Some(codes) = parse_own_payload(data) {
        return Ok(codes);
    }
    crate::rdb::function_payload(data).map(|v| v.into_iter().map(Bytes::from).collect())
}

/// [`parse_payload_checked`], None for any refusal.
pub fn parse_payload(data: &[u8]) -> Option<Vec<Bytes>> {
    parse_payload_checked(data).ok()
}

/// The code in a payload of ebb's older form, if its magic, framing and
/// checksum hold.
fn parse_own_payload(data: &[u8]) -> Option<Vec<Bytes>> {
    let split = data.len().checked_sub(8)?;
    let (body, sum) = data.split_at(split);
    if !body.starts_with(MAGIC)
        || (crate::rdb::checksums_checked() && crate::dump::checksum(body).to_le_bytes() != sum)
    {
        return None;
    }
    let mut rest = &body[MAGIC.len()..];
    let mut out = Vec::new();
    while !rest.is_empty() {
        let (len, tail) = rest.split_at_checked(8)?;
        let n = usize::try_from(u64::from_le_bytes(len.try_into().ok()?)).ok()?;
        let (code, tail) = tail.split_at_checked(n)?;
        out.push(Bytes::copy_from_slice(code));
        rest = tail;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generations_differ_between_sets_and_changes() {
        let mut a = Libraries::default();
        let b = Libraries::default();
        assert_ne!(a.generation(), b.generation());
        let g = a.generation();
        a.insert(Bytes::from_static(b"lib"), Bytes::from_static(b"code"));
        assert_ne!(a.generation(), g);
        let g = a.generation();
        assert!(!a.remove(b"nope"));
        assert_eq!(a.generation(), g);
        assert!(a.remove(b"lib"));
        assert_ne!(a.generation(), g);
    }

    #[test]
    fn payload_round_trip_and_damage() {
        let mut libs = Libraries::default();
        libs.insert(
            Bytes::from_static(b"a"),
            Bytes::from_static(b"#!lua name=a\nx"),
        );
        libs.insert(Bytes::from_static(b"b"), Bytes::from_static(b""));
        let p = dump_payload(&libs);
        let codes = parse_payload(&p).unwrap();
        assert_eq!(
            codes,
            vec![Bytes::from_static(b"#!lua name=a\nx"), Bytes::new()]
        );
        for i in 0..p.len() {
            let mut bad = p.clone();
            bad[i] ^= 1;
            assert!(parse_payload(&bad).is_none(), "flip at {i}");
        }
        assert!(parse_payload(&p[..p.len() - 1]).is_none());
        assert!(parse_payload(b"").is_none());
        assert_eq!(
            parse_payload(&dump_payload(&Libraries::default())),
            Some(vec![])
        );
    }
}
