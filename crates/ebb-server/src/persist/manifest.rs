//! The manifest of the AOF directory, in Redis 7.0's format: one line per
//! file, `file <name> seq <n> type <b|h|i>`, the base first, then history
//! files (left over from a rewrite, about to be deleted), then the
//! incremental files in the order they are replayed.
//!
//! Names follow Redis: with `appendfilename` `appendonly.aof`, the base
//! written by the n-th rewrite is `appendonly.aof.<n>.base.rdb` (an RDB
//! file, with `aof-use-rdb-preamble yes`) or `appendonly.aof.<n>.base.aof`
//! (RESP commands, with `aof-use-rdb-preamble no`), the incremental
//! files are `appendonly.aof.<m>.incr.aof`, and the manifest itself is
//! `appendonly.aof.manifest`. A file upgraded from the single-file layout
//! keeps its old name as the base.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::Path;

/// What a file listed in the manifest holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// The data as of the last rewrite (`b`).
    Base,
    /// A file a rewrite replaced, to be deleted (`h`).
    History,
    /// Commands logged after the base (`i`).
    Incr,
}

impl FileKind {
    fn letter(self) -> char {
        match self {
            FileKind::Base => 'b',
            FileKind::History => 'h',
            FileKind::Incr => 'i',
        }
    }
}

/// One line of the manifest.
#[derive(Debug, Clone, PartialEq)]
pub struct AofFile {
    /// File name inside the AOF directory.
    pub name: String,
    /// Sequence number (bases and incremental files count separately).
    pub seq: i64,
    /// Its role.
    pub kind: FileKind,
}

/// The files of the AOF directory.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Manifest {
    /// The base, replayed first.
    pub base: Option<AofFile>,
    /// Files a rewrite made obsolete.
    pub history: Vec<AofFile>,
    /// Incremental files, in replay order.
    pub incrs: Vec<AofFile>,
    /// Sequence number of the newest base.
    pub base_seq: i64,
    /// Sequence number of the newest incremental file.
    pub incr_seq: i64,
}

/// A manifest that cannot be used; the server must not start with it.
#[derive(Debug, PartialEq)]
pub struct ManifestError {
    /// The offending line (1-based) and its text, when there is one.
    pub line: Option<(usize, String)>,
    /// Redis's text for the problem.
    pub reason: &'static str,
}

/// Longest manifest line Redis reads (the newline excluded).
const MAX_LINE: usize = 1024;

impl Manifest {
    /// Parses a manifest, with Redis's checks and error texts.
    pub fn parse(data: &[u8]) -> Result<Manifest, ManifestError> {
        let mut m = Manifest::default();
        let err = |line: Option<(usize, &[u8])>, reason| ManifestError {
            line: line.map(|(n, l)| (n, String::from_utf8_lossy(l).into_owned())),
            reason,
        };
        if data.is_empty() {
            return Err(err(None, "Found an empty AOF manifest"));
        }
        let mut rest = data;
        let mut number = 0;
        while !rest.is_empty() {
            number += 1;
            let (raw, complete) = match rest.iter().position(|&b| b == b'\n') {
                Some(i) => (&rest[..i], true),
                None => (rest, false),
            };
            rest = &rest[(raw.len() + 1).min(rest.len())..];
            if raw.first() == Some(&b'#') {
                continue;
            }
            if !complete || raw.len() >= MAX_LINE {
                return Err(err(None, "The AOF manifest file contains too long line"));
            }
            let line = trim(raw);
            let at = Some((number, line));
            let invalid = "Invalid AOF manifest file format";
            if line.is_empty() {
                return Err(err(at, invalid));
            }
            let words = match crate::resp::split_args(line) {
                Some(w) if w.len() >= 6 && w.len() % 2 == 0 => w,
                _ => return Err(err(at, invalid)),
            };
            let (mut name, mut seq, mut kind) = (None, 0, 0u8);
            for pair in words.chunks(2) {
                let (key, value) = (&pair[0], &pair[1]);
                if key.eq_ignore_ascii_case(b"file") {
                    if value.iter().any(|&b| b == b'/' || b == b'\\') {
                        return Err(err(at, "File can't be a path, just a filename"));
                    }
                    name = Some(String::from_utf8_lossy(value).into_owned());
                } else if key.eq_ignore_ascii_case(b"seq") {
                    seq = leading_int(value);
                } else if key.eq_ignore_ascii_case(b"type") {
                    kind = value.first().copied().unwrap_or(0);
                }
                // Other keys are for later versions: ignored.
            }
            let name = match name {
                Some(n) if !n.is_empty() && seq != 0 && kind != 0 => n,
                _ => return Err(err(at, invalid)),
            };
            match kind {
                b'b' => {
                    if m.base.is_some() {
                        return Err(err(at, "Found duplicate base file information"));
                    }
                    m.base = Some(AofFile {
                        name,
                        seq,
                        kind: FileKind::Base,
                    });
                    m.base_seq = seq;
                }
                b'h' => m.history.push(AofFile {
                    name,
                    seq,
                    kind: FileKind::History,
                }),
                b'i' => {
                    if seq <= m.incr_seq {
                        return Err(err(at, "Found a non-monotonic sequence number"));
                    }
                    m.incrs.push(AofFile {
                        name,
                        seq,
                        kind: FileKind::Incr,
                    });
                    m.incr_seq = seq;
                }
                _ => return Err(err(at, "Unknown AOF file type")),
            }
        }
        Ok(m)
    }

    /// The manifest's text: base, history, then incremental files.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for f in self.base.iter().chain(&self.history).chain(&self.incrs) {
            let name = if needs_quotes(&f.name) {
                let mut q = String::new();
                crate::observe::repr(&mut q, f.name.as_bytes());
                q
            } else {
                f.name.clone()
            };
            out.push_str(&format!(
                "file {name} seq {} type {}\n",
                f.seq,
                f.kind.letter()
            ));
        }
        out
    }

    /// Whether it names no data at all (no base and no incremental file).
    pub fn is_empty(&self) -> bool {
        self.base.is_none() && self.incrs.is_empty()
    }

    /// The files to replay, in order.
    pub fn live(&self) -> impl Iterator<Item = &AofFile> {
        self.base.iter().chain(&self.incrs)
    }

    /// Names the next base (`.base.rdb` when `rdb`, else `.base.aof`) and
    /// records it as the base; the previous one becomes history.
    pub fn new_base(&mut self, prefix: &str, rdb: bool) -> String {
        if let Some(mut old) = self.base.take() {
            old.kind = FileKind::History;
            self.history.insert(0, old);
        }
        self.base_seq += 1;
        let ext = if rdb { "rdb" } else { "aof" };
        let name = format!("{prefix}.{}.base.{ext}", self.base_seq);
        self.base = Some(AofFile {
            name: name.clone(),
            seq: self.base_seq,
            kind: FileKind::Base,
        });
        name
    }

    /// Names the next incremental file and appends it to the list.
    pub fn new_incr(&mut self, prefix: &str) -> String {
        self.incr_seq += 1;
        let name = format!("{prefix}.{}.incr.aof", self.incr_seq);
        self.incrs.push(AofFile {
            name: name.clone(),
            seq: self.incr_seq,
            kind: FileKind::Incr,
        });
        name
    }

    /// The incremental file to append to: the last one, or a new one.
    pub fn last_incr_or_new(&mut self, prefix: &str) -> String {
        match self.incrs.last() {
            Some(f) => f.name.clone(),
            None => self.new_incr(prefix),
        }
    }

    /// After a rewrite: the incremental files its base covers become
    /// history, all of them or, when `keep_open` (the log is appending to
    /// the last one), all but the last.
    pub fn retire_incrs(&mut self, keep_open: bool) {
        let keep = usize::from(keep_open && !self.incrs.is_empty());
        let cut = self.incrs.len() - keep;
        for mut f in self.incrs.drain(..cut).rev() {
            f.kind = FileKind::History;
            self.history.insert(0, f);
        }
    }
}

/// The manifest's file name for `appendfilename`.
pub fn manifest_name(prefix: &str) -> String {
    format!("{prefix}.manifest")
}

/// Where the log goes while the AOF is turned on at run time and its first
/// rewrite has not finished (not listed in the manifest until then).
pub fn temp_incr_name(prefix: &str) -> String {
    format!("temp-{prefix}.incr")
}

/// Reads the manifest of `dir`, if there is one.
pub fn read(dir: &Path, prefix: &str) -> Result<Option<Manifest>, ManifestError> {
    if !dir.is_dir() {
        return Ok(None);
    }
    let path = dir.join(manifest_name(prefix));
    match fs::read(&path) {
        Ok(data) => Manifest::parse(&data).map(Some),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => {
            tracing::error!(
                "Fatal error: can't open the AOF manifest file {} for reading: {e}",
                path.display()
            );
            Err(ManifestError {
                line: None,
                reason: "Read AOF manifest failed",
            })
        }
    }
}

/// Replaces the manifest of `dir` atomically: a temporary file, fsynced,
/// renamed over it, then the directory fsynced (new files in it too).
pub fn persist(dir: &Path, prefix: &str, m: &Manifest) -> std::io::Result<()> {
    let tmp = dir.join(format!("temp-{}", manifest_name(prefix)));
    let mut f = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(&tmp)?;
    f.write_all(m.render().as_bytes())?;
    f.sync_all()?;
    drop(f);
    fs::rename(&tmp, dir.join(manifest_name(prefix)))?;
    File::open(dir)?.sync_all()
}

/// Deletes the history files and records that in the manifest.
pub fn delete_history(dir: &Path, prefix: &str, m: &mut Manifest) -> std::io::Result<()> {
    if m.history.is_empty() {
        return Ok(());
    }
    for f in m.history.drain(..) {
        tracing::info!("Removing the history file {} in the background", f.name);
        let _ = fs::remove_file(dir.join(&f.name));
    }
    persist(dir, prefix, m)
}

/// Whether a name must be written quoted (as Redis's `sdsneedsrepr`).
fn needs_quotes(name: &str) -> bool {
    name.bytes()
        .any(|b| matches!(b, b'\\' | b'"') || !(0x21..=0x7e).contains(&b))
}

fn trim(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t' | b'\r' | b'\n', rest @ ..] = s {
        s = rest;
    }
    while let [rest @ .., b' ' | b'\t' | b'\r' | b'\n'] = s {
        s = rest;
    }
    s
}

/// The integer a value starts with (0 when it starts with none), as C's
/// `atoll` reads it.
fn leading_int(v: &[u8]) -> i64 {
    let s = trim(v);
    let (neg, digits) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let mut n: i64 = 0;
    for &d in digits.iter().take_while(|d| d.is_ascii_digit()) {
        n = n.saturating_mul(10).saturating_add(i64::from(d - b'0'));
    }
    if neg {
        -n
    } else {
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_renders_redis_lines() {
        let text = "file appendonly.aof.2.base.aof seq 2 type b\n\
                    file appendonly.aof.1.incr.aof seq 1 type h\n\
                    file appendonly.aof.2.incr.aof seq 2 type i\n\
                    file appendonly.aof.3.incr.aof seq 3 type i\n";
        let m = Manifest::parse(text.as_bytes()).expect("valid");
        assert_eq!(m.base_seq, 2);
        assert_eq!(m.incr_seq, 3);
        assert_eq!(m.incrs.len(), 2);
        assert_eq!(m.render(), text);
    }

    #[test]
    fn rewrite_steps_name_files_as_redis() {
        let mut m = Manifest::default();
        assert_eq!(m.new_base("a.aof", false), "a.aof.1.base.aof");
        assert_eq!(m.last_incr_or_new("a.aof"), "a.aof.1.incr.aof");
        assert_eq!(m.new_incr("a.aof"), "a.aof.2.incr.aof");
        m.new_base("a.aof", true);
        m.retire_incrs(true);
        assert_eq!(
            m.render(),
            "file a.aof.2.base.rdb seq 2 type b\n\
             file a.aof.1.incr.aof seq 1 type h\n\
             file a.aof.1.base.aof seq 1 type h\n\
             file a.aof.2.incr.aof seq 2 type i\n"
        );
        m.retire_incrs(false);
        assert!(m.incrs.is_empty() && m.history.len() == 3);
    }

    #[test]
    fn odd_names_are_quoted_and_read_back() {
        let mut m = Manifest::default();
        m.new_base(" file seq \n\n.aof ", false);
        let text = m.render();
        assert_eq!(
            text,
            "file \" file seq \\n\\n.aof .1.base.aof\" seq 1 type b\n"
        );
        assert_eq!(Manifest::parse(text.as_bytes()).expect("valid"), m);
    }

    #[test]
    fn bad_manifests_are_refused_with_redis_texts() {
        let reason = |t: &str| {
            Manifest::parse(t.as_bytes())
                .map(|_| ())
                .unwrap_err()
                .reason
        };
        assert_eq!(reason(""), "Found an empty AOF manifest");
        assert_eq!(
            reason("file a seq 1 type i\n\nfile b seq 3 type i\n"),
            "Invalid AOF manifest file format"
        );
        assert_eq!(
            reason("file a seq 2 type i\nfile b seq 1 type i\n"),
            "Found a non-monotonic sequence number"
        );
        assert_eq!(
            reason("file a seq 1 type b\nfile b seq 2 type b\n"),
            "Found duplicate base file information"
        );
        assert_eq!(reason("file a seq 1 type x\n"), "Unknown AOF file type");
        assert_eq!(
            reason("filx a seq 1 type b\n"),
            "Invalid AOF manifest file format"
        );
        assert_eq!(
            reason("file a type i\n"),
            "Invalid AOF manifest file format"
        );
        assert_eq!(
            reason("file a seq 1 type i x\n"),
            "Invalid AOF manifest file format"
        );
        assert_eq!(
            reason("file d/a seq 1 type i\n"),
            "File can't be a path, just a filename"
        );
        let long = format!("file {} seq 1 type b\n", "x".repeat(1100));
        assert_eq!(
            reason(&long),
            "The AOF manifest file contains too long line"
        );
        let m = Manifest::parse(b"# note\nfile a seq 1 type b k v\n").expect("extra keys are fine");
        assert_eq!(m.base.map(|b| b.name), Some("a".to_string()));
    }
}
