//! Redis's glob-style pattern matching (`stringmatchlen`), used by KEYS,
//! SCAN MATCH, the *SCAN family, CONFIG GET and PSUBSCRIBE.
//!
//! Grammar, byte by byte:
//! - `*` matches any run of bytes (consecutive stars count as one);
//! - `?` matches exactly one byte;
//! - `[...]` matches one byte from a class: literal bytes, ranges `a-z`
//!   (the ends may be given in either order), `\x` for a literal `x`, and a
//!   leading `^` negates the class. An unterminated class ends with the
//!   pattern; `[]` matches nothing; the byte after `-` in a range is taken
//!   as the range end even when it is `]` (Redis reads `[a-]` as the range
//!   `a`..`]` and goes on looking for the closing bracket);
//! - `\x` matches `x` literally (a trailing lone `\` matches `\`);
//! - any other byte matches itself.
//!
//! Quirks kept from Redis 7.0 so replies are identical:
//! - the empty string matches only the empty pattern (so `**` does not
//!   match the key `""`; KEYS and SCAN treat the exact pattern `*` as
//!   "everything" before calling the matcher);
//! - range ends and the tested byte compare as C `char`s, which are signed
//!   on the platforms Redis ships for: bytes >= 0x80 sort below ASCII;
//! - with `nocase`, only ASCII letters fold, and an escaped byte inside a
//!   class still compares case-sensitively.
//!
//! The matcher is iterative (backtracking to the last `*`), so hostile
//! patterns cost O(pattern × string) time and no stack.

/// Whether `s` matches the glob `pattern` under Redis's rules (see the
/// module documentation). With `nocase`, ASCII letters match either case.
pub fn glob_match(pattern: &[u8], s: &[u8], nocase: bool) -> bool {
    if s.is_empty() {
        return pattern.is_empty();
    }
    // Each star Redis crosses with bytes left is a level of recursion, and
    // past 1000 levels it gives up: such patterns match nothing.
    if pattern.len() > 2 * MAX_STARS && star_groups(pattern) > MAX_STARS {
        return false;
    }
    let mut p = 0; // position in pattern
    let mut i = 0; // position in s
                   // Where to resume after the last `*`: (pattern after the star, s position).
    let mut star: Option<(usize, usize)> = None;
    while i < s.len() {
        if p < pattern.len() && pattern[p] == b'*' {
            while p < pattern.len() && pattern[p] == b'*' {
                p += 1;
            }
            if p == pattern.len() {
                return true;
            }
            star = Some((p, i));
            continue;
        }
        if p < pattern.len() {
            let (matched, next) = match_one(pattern, p, s[i], nocase);
            if matched {
                p = next;
                i += 1;
                continue;
            }
        }
        // Mismatch (or pattern exhausted): let the last star eat one more byte.
        match star {
            Some((sp, si)) => {
                star = Some((sp, si + 1));
                p = sp;
                i = si + 1;
            }
            None => return false,
        }
    }
    while p < pattern.len() && pattern[p] == b'*' {
        p += 1;
    }
    p == pattern.len()
}

/// How many stars a match may cross before Redis gives up.
const MAX_STARS: usize = 1000;

/// Runs of `*` in `pattern` that a match crosses with bytes of the string
/// left: every run but a trailing one (escaped stars and stars inside a
/// class do not count).
fn star_groups(pattern: &[u8]) -> usize {
    let (mut groups, mut i) = (0, 0);
    while i < pattern.len() {
        match pattern[i] {
            b'\\' => i += 2,
            b'[' => {
                let (_, next) = match_one(pattern, i, 0, false);
                i = next.max(i + 1);
            }
            b'*' => {
                while i < pattern.len() && pattern[i] == b'*' {
                    i += 1;
                }
                if i < pattern.len() {
                    groups += 1;
                }
            }
            _ => i += 1,
        }
    }
    groups
}

/// Matches the single-byte token at `pattern[p]` (not a `*`) against `c`;
/// returns whether it matched and where the next token starts.
fn match_one(pattern: &[u8], p: usize, c: u8, nocase: bool) -> (bool, usize) {
    let len = pattern.len();
    // Byte at `i`, or the C string terminator past the end.
    let at = |i: usize| -> u8 { pattern.get(i).copied().unwrap_or(0) };
    match pattern[p] {
        b'?' => (true, p + 1),
        b'[' => {
            let mut i = p + 1;
            let negate = at(i) == b'^';
            if negate {
                i += 1;
            }
            let mut matched = false;
            loop {
                if at(i) == b'\\' && len.saturating_sub(i) >= 2 {
                    i += 1;
                    if pattern[i] == c {
                        matched = true;
                    }
                } else if at(i) == b']' && i < len {
                    break;
                } else if i >= len {
                    // Unterminated class: it ends with the pattern.
                    i -= 1;
                    break;
                } else if len - i >= 3 && pattern[i + 1] == b'-' {
                    let (mut lo, mut hi) = (signed(pattern[i]), signed(pattern[i + 2]));
                    if lo > hi {
                        std::mem::swap(&mut lo, &mut hi);
                    }
                    let mut x = signed(c);
                    if nocase {
                        lo = fold(lo);
                        hi = fold(hi);
                        x = fold(x);
                    }
                    if x >= lo && x <= hi {
                        matched = true;
                    }
                    i += 2;
                } else if eq(pattern[i], c, nocase) {
                    matched = true;
                }
                i += 1;
            }
            (matched != negate, i + 1)
        }
        b'\\' if len - p >= 2 => (eq(pattern[p + 1], c, nocase), p + 2),
        b => (eq(b, c, nocase), p + 1),
    }
}

/// A byte as a (signed) C `char`.
fn signed(b: u8) -> i32 {
    b as i8 as i32
}

/// C `tolower` in the C locale, on a signed char value.
fn fold(c: i32) -> i32 {
    if (b'A' as i32..=b'Z' as i32).contains(&c) {
        c + 32
    } else {
        c
    }
}

fn eq(a: u8, b: u8, nocase: bool) -> bool {
    if nocase {
        a.eq_ignore_ascii_case(&b)
    } else {
        a == b
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn too_many_stars_match_nothing() {
        let key = vec![b'a'; 50_000];
        let pattern = b"*?".repeat(50_000);
        assert!(!super::glob_match(&pattern, &key, false));
        // 1000 stars are fine, and a trailing run does not count.
        let ok = b"*a".repeat(1000);
        assert!(super::glob_match(&ok, &vec![b'a'; 1000], false));
        let mut trailing = b"*a".repeat(1000);
        trailing.extend_from_slice(b"***");
        assert!(super::glob_match(&trailing, &vec![b'a'; 1001], false));
        assert!(!super::glob_match(
            &b"*a".repeat(1001),
            &vec![b'a'; 1001],
            false
        ));
        assert!(super::glob_match(
            &b"\\*a".repeat(1001),
            &b"*a".repeat(1001),
            false
        ));
    }

    use super::glob_match;

    fn m(p: &str, s: &str) -> bool {
        glob_match(p.as_bytes(), s.as_bytes(), false)
    }

    #[test]
    fn stars_and_question_marks() {
        assert!(m("*", "anything"));
        assert!(m("a*", "a"));
        assert!(m("a*", "abc"));
        assert!(m("*c", "abc"));
        assert!(m("a*b*c", "aXXbYYc"));
        assert!(!m("a*b*c", "aXXbYY"));
        assert!(m("h?llo", "hello"));
        assert!(!m("h?llo", "hllo"));
        assert!(m("***a***", "xxaxx"));
        assert!(m("", ""));
        assert!(!m("", "a"));
        assert!(!m("a", ""));
        // Redis: a non-empty pattern never matches the empty string.
        assert!(!m("*", ""));
        assert!(!m("**", ""));
        assert!(m("*?", "a"));
        assert!(!m("*?", ""));
    }

    #[test]
    fn classes() {
        assert!(m("h[ae]llo", "hello"));
        assert!(m("h[ae]llo", "hallo"));
        assert!(!m("h[ae]llo", "hillo"));
        assert!(m("h[^e]llo", "hallo"));
        assert!(!m("h[^e]llo", "hello"));
        assert!(m("h[a-b]llo", "hbllo"));
        assert!(m("h[b-a]llo", "hbllo"));
        assert!(!m("h[a-b]llo", "hcllo"));
        assert!(m("[^a-z]", "5"));
        assert!(!m("[^a-z]", "q"));
        assert!(m("[\\]]", "]"));
        assert!(m("[\\-]", "-"));
        // `[a-]` is the range a..] and the class runs to the end of the pattern.
        assert!(m("[a-]*", "_"));
        assert!(m("[a-]*", "*"));
        assert!(!m("[a-]*", "a1"));
        // Unterminated classes end with the pattern.
        assert!(m("[a", "a"));
        assert!(!m("[a", "b"));
        assert!(m("[^", "x"));
        assert!(!m("[", "x"));
        assert!(!m("[]", "]"));
        assert!(!m("[]", "x"));
    }

    #[test]
    fn escapes() {
        assert!(m("\\*", "*"));
        assert!(!m("\\*", "a"));
        assert!(m("a\\?", "a?"));
        assert!(!m("a\\?", "ab"));
        assert!(m("a\\", "a\\"));
        assert!(m("\\a1", "a1"));
        assert!(m("[\\a]1", "a1"));
    }

    #[test]
    fn nocase() {
        assert!(glob_match(b"HeLLo*", b"hello world", true));
        assert!(!glob_match(b"HeLLo*", b"hello world", false));
        assert!(glob_match(b"[A-C]x", b"bX", true));
        assert!(glob_match(b"[^A-C]x", b"dx", true));
        // An escaped byte inside a class compares exactly, as in Redis.
        assert!(!glob_match(b"[\\A]", b"a", true));
    }

    #[test]
    fn high_bytes_are_signed_chars() {
        // 0xC3 is negative as a C char, so it lies below 'a' in a range.
        assert!(!glob_match(b"[a-\xff]", b"\xc3", false));
        assert!(glob_match(b"[\x80-a]", b"\xc3", false));
        assert!(glob_match(b"\xc3*", b"\xc3\xa9", false));
    }

    #[test]
    fn hostile_patterns_are_fast() {
        let p = "a*".repeat(500) + "b";
        let s = "a".repeat(2000);
        assert!(!m(&p, &s));
        let p = "*".repeat(100_000) + "x";
        assert!(m(&p, "yyyx"));
    }
}
