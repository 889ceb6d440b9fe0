//! The corpus of command lines: harvested from the unit tests' sources,
//! plus hand-written ones for the grammars they use least.

#[allow(unused_imports)]
use super::*;

/// Command lines added to the harvested ones, for the grammars the unit
/// tests use least (the harness clock starts at 10^12 ms).
pub(crate) const EXTRA: &[&str] = &[
    "PING",
    "PING hello",
    "ECHO hello",
    "SEXPIRE s 10 NX MEMBERS 2 m1 a",
    "SEXPIREAT s 1000000001 XX MEMBERS 1 m1",
    "SEXPIREAT s 999999999 MEMBERS 2 m1 x",
    "SPEXPIREAT s 1000000000050 GT MEMBERS 1 a",
    "SEXPIRETIME s MEMBERS 2 m1 a",
    "SPEXPIRETIME s MEMBERS 1 m1",
    "SPTTL s MEMBERS 3 m1 a x",
    "STTL s MEMBERS 1 1",
    "SPERSIST s MEMBERS 2 m1 a",
    "ZEXPIRE z 10 LT MEMBERS 2 m1 a",
    "ZEXPIREAT z 1000000001 MEMBERS 2 m1 a",
    "ZEXPIREAT z 0 MEMBERS 1 m1",
    "ZPEXPIREAT z 1000000000050 NX MEMBERS 1 a",
    "ZEXPIRETIME z MEMBERS 2 m1 a",
    "ZPEXPIRETIME z MEMBERS 1 m1",
    "ZPTTL z MEMBERS 2 m1 x",
    "ZTTL z MEMBERS 1 a",
    "ZPERSIST z MEMBERS 1 m1",
    "HEXPIREAT h 1000000001 FIELDS 2 f1 a",
    "HPEXPIREAT h 1000000000050 XX FIELDS 1 f1",
    "HEXPIRETIME h FIELDS 2 f1 a",
    "HPEXPIRETIME h FIELDS 1 f1",
    "HPTTL h FIELDS 2 f1 x",
    "EXPIREMEMBER s m1 10",
    "EXPIREMEMBER z a 1500 ms",
    "EXPIREMEMBER h f1 -1 s",
    "EXPIREMEMBERAT h f1 1000000001",
    "PEXPIREMEMBERAT z m1 1000000000050",
    "FIELDEXPIRE s 10 m1 a",
    "FIELDTTL h f1",
    "TTL z m1",
    "PTTL s a",
    "PERSIST h f1",
    "SUBSTR k 0 -1",
    "SUBSTR k -3 100",
    "DECR k",
    "TOUCH a b k",
    "UNLINK a b",
    "RANDOMKEY",
    "DBSIZE",
    "GETDEL k",
    "LPUSH l a b 1",
    "RPUSHX l x",
    "PEXPIRE k 100 GT",
    "SINTERSTORE a s set",
    "ZRANGESTORE a z 0 -1",
    "ZRANGESTORE a z (1 +inf BYSCORE REV LIMIT 0 2",
];

/// Command lines harvested from the crate's own unit tests: every
/// `&["CMD", "arg", …]` array of string literals and every string literal
/// `"CMD arg …"` whose first word names a core command. Mutating these
/// reaches the deep paths that purely random arguments never get past the
/// parser to.
pub(crate) fn corpus() -> &'static HashMap<String, Vec<Vec<Vec<u8>>>> {
    static CORPUS: OnceLock<HashMap<String, Vec<Vec<Vec<u8>>>>> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let names: HashSet<String> = core_specs()
            .iter()
            .map(|s| s.name.to_ascii_uppercase())
            .collect();
        let mut files = Vec::new();
        rust_files(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
            &mut files,
        );
        files.sort();
        let mut out: HashMap<String, Vec<Vec<Vec<u8>>>> = HashMap::new();
        let mut seen = HashSet::new();
        let mut lines: Vec<Vec<Vec<u8>>> = EXTRA
            .iter()
            .map(|l| l.split(' ').map(|w| w.as_bytes().to_vec()).collect())
            .collect();
        for f in files {
            if let Ok(text) = std::fs::read(&f) {
                lines.extend(command_lines(&text));
            }
        }
        for line in lines {
            let Some(first) = line.first() else {
                continue;
            };
            let name = String::from_utf8_lossy(first).to_ascii_uppercase();
            if names.contains(&name) && seen.insert(line.clone()) {
                out.entry(name).or_default().push(line[1..].to_vec());
            }
        }
        out
    })
}

pub(crate) fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Reads one string literal starting after its opening quote; returns
/// its bytes and the index after the closing quote.
pub(crate) fn literal(src: &[u8], mut i: usize) -> Option<(Vec<u8>, usize)> {
    let mut v = Vec::new();
    while i < src.len() {
        match src[i] {
            b'"' => return Some((v, i + 1)),
            b'\\' => {
                let c = *src.get(i + 1)?;
                i += 2;
                match c {
                    b'n' => v.push(b'\n'),
                    b'r' => v.push(b'\r'),
                    b't' => v.push(b'\t'),
                    b'0' => v.push(0),
                    b'x' => {
                        let hex = std::str::from_utf8(src.get(i..i + 2)?).ok()?;
                        v.push(u8::from_str_radix(hex, 16).ok()?);
                        i += 2;
                    }
                    b'u' => {
                        let end = i + src[i..].iter().position(|&b| b == b'}')?;
                        let hex = std::str::from_utf8(src.get(i + 1..end)?).ok()?;
                        let ch = char::from_u32(u32::from_str_radix(hex, 16).ok()?)?;
                        v.extend_from_slice(ch.to_string().as_bytes());
                        i = end + 1;
                    }
                    b'\n' => {
                        while src.get(i).is_some_and(|b| b.is_ascii_whitespace()) {
                            i += 1;
                        }
                    }
                    c => v.push(c),
                }
            }
            b => {
                v.push(b);
                i += 1;
            }
        }
    }
    None
}

/// The command lines found in one source file (see [`corpus`]).
pub(crate) fn command_lines(src: &[u8]) -> Vec<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < src.len() {
        if src[i..].starts_with(b"&[\"") {
            // An array of literals, up to its closing bracket.
            let mut j = i + 2;
            let mut items = Vec::new();
            let complete = loop {
                while src
                    .get(j)
                    .is_some_and(|b| b.is_ascii_whitespace() || *b == b',')
                {
                    j += 1;
                }
                match src.get(j) {
                    Some(b'"') => match literal(src, j + 1) {
                        Some((v, next)) => {
                            items.push(v);
                            j = next;
                        }
                        None => break false,
                    },
                    Some(b']') => break true,
                    _ => break false,
                }
            };
            if complete && !items.is_empty() {
                out.push(items);
            }
            i += 2;
        } else if src[i] == b'"' && (i == 0 || src[i - 1] != b'\'') {
            match literal(src, i + 1) {
                Some((v, next)) => {
                    if v.contains(&b' ') && !v.contains(&b'{') && !v.contains(&b'\n') {
                        out.push(
                            v.split(|&b| b == b' ')
                                .filter(|w| !w.is_empty())
                                .map(<[u8]>::to_vec)
                                .collect(),
                        );
                    }
                    i = next;
                }
                None => i += 1,
            }
        } else {
            i += 1;
        }
    }
    out
}
