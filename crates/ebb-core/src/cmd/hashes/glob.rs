//! Glob matching for HSCAN MATCH, with Redis's `stringmatchlen` rules
//! (`*`, `?`, `[...]` with `^` and ranges, `\` escapes; bytes compared as
//! C's signed `char`). Kept private to the hash family until the shared
//! `crate::glob` module lands, which should then replace it.

/// Whether `s` matches `pattern`.
pub(super) fn matches(pattern: &[u8], s: &[u8]) -> bool {
    let mut skip_longer = false;
    match_from(pattern, s, &mut skip_longer)
}

fn match_from(mut p: &[u8], mut s: &[u8], skip_longer: &mut bool) -> bool {
    while !p.is_empty() && !s.is_empty() {
        match p[0] {
            b'*' => {
                while p.len() > 1 && p[1] == b'*' {
                    p = &p[1..];
                }
                if p.len() == 1 {
                    return true;
                }
                while !s.is_empty() {
                    if match_from(&p[1..], s, skip_longer) {
                        return true;
                    }
                    if *skip_longer {
                        return false;
                    }
                    s = &s[1..];
                }
                // Nothing after this star matches anywhere in the rest, so
                // no earlier star can do better by consuming more.
                *skip_longer = true;
                return false;
            }
            b'?' => {
                s = &s[1..];
            }
            b'[' => {
                p = &p[1..];
                let negate = p.first() == Some(&b'^');
                if negate {
                    p = &p[1..];
                }
                let c = s[0];
                let mut hit = false;
                loop {
                    if p.len() >= 2 && p[0] == b'\\' {
                        p = &p[1..];
                        if p[0] == c {
                            hit = true;
                        }
                    } else if p.first() == Some(&b']') {
                        break;
                    } else if p.is_empty() {
                        // Unterminated class: the pattern ends here.
                        break;
                    } else if p.len() >= 3 && p[1] == b'-' {
                        let (mut lo, mut hi) = (p[0] as i8, p[2] as i8);
                        if lo > hi {
                            std::mem::swap(&mut lo, &mut hi);
                        }
                        let ci = c as i8;
                        if ci >= lo && ci <= hi {
                            hit = true;
                        }
                        p = &p[2..];
                    } else if p[0] == c {
                        hit = true;
                    }
                    p = &p[1..];
                }
                if negate {
                    hit = !hit;
                }
                if !hit {
                    return false;
                }
                s = &s[1..];
                // `p` is at the closing bracket (or empty); step past it below.
                if p.is_empty() {
                    // Redis steps back onto the last byte and then past it.
                    if s.is_empty() {
                        return true;
                    }
                    return false;
                }
            }
            b'\\' if p.len() >= 2 => {
                p = &p[1..];
                if p[0] != s[0] {
                    return false;
                }
                s = &s[1..];
            }
            c => {
                if c != s[0] {
                    return false;
                }
                s = &s[1..];
            }
        }
        p = &p[1..];
        if s.is_empty() {
            while p.first() == Some(&b'*') {
                p = &p[1..];
            }
            break;
        }
    }
    p.is_empty() && s.is_empty()
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn globs() {
        let m = |p: &str, s: &str| matches(p.as_bytes(), s.as_bytes());
        assert!(m("*", "anything"));
        // Like Redis, a pattern never matches the empty string by a star alone.
        assert!(!m("*", ""));
        assert!(m("", ""));
        assert!(!m("", "a"));
        assert!(m("a*", "abc"));
        assert!(m("a*c", "abc"));
        assert!(!m("a*d", "abc"));
        assert!(m("a?c", "abc"));
        assert!(!m("a?c", "ac"));
        assert!(m("h[ae]llo", "hello"));
        assert!(!m("h[^e]llo", "hello"));
        assert!(m("h[a-f]llo", "hello"));
        assert!(m("h[f-a]llo", "hello"));
        assert!(m("a\\*b", "a*b"));
        assert!(!m("a\\*b", "axb"));
        assert!(m("f*", "f"));
        assert!(m("f**", "f"));
        assert!(m("*a*b*c*", "xxaxxbxxcxx"));
        assert!(m("[abc", "a"));
        assert!(!m("[abc", "ab"));
        assert!(m("[\\]]", "]"));
        assert!(m("a*", "a"));
    }
}
