//! Unit tests of configuration loading.

use super::*;

#[test]
fn file_and_args() {
    let mut c = Config::default();
    c.load_text("port 7000\nsave 900 1\nsave 300 10\nzset-max-ziplist-entries 64\nmaxmemory 1gb\n")
        .unwrap_or_default();
    assert_eq!(c.get("port").as_deref(), Some("7000"));
    assert_eq!(c.get("save").as_deref(), Some("900 1 300 10"));
    assert_eq!(c.get("zset-max-listpack-entries").as_deref(), Some("64"));
    assert_eq!(c.get("maxmemory").as_deref(), Some("1073741824"));
    assert!(c.set("nosuch", "1").is_err());
    assert!(c.set("appendfsync", "sometimes").is_err());
    assert_eq!(c.matching(b"port").len(), 1);
    assert!(c.matching(b"*max-*-entries").len() >= 4);
}
