//! Glob matching for ZSCAN MATCH with the exact rules of Redis's
//! `stringmatchlen` (case-sensitive): `*`, `?`, `[...]` classes with `^`,
//! ranges and `\` escapes, and its edge cases (an unterminated class, a
//! range whose end is `]`, an empty string matching only an empty pattern).
//!
//! Redis backtracks recursively and stops trying longer matches for earlier
//! stars once a later star failed everywhere; remembering only the last star
//! is the iterative form of that rule, so stack depth does not grow with
//! the number of stars in a client's pattern.

/// Whether `s` matches the glob pattern `p`.
pub(super) fn glob_match(p: &[u8], s: &[u8]) -> bool {
    if s.is_empty() {
        return p.is_empty();
    }
    // Bytes past the end read as C's terminating NUL.
    let at = |i: usize| p.get(i).copied().unwrap_or(0);
    let (mut pi, mut si) = (0usize, 0usize);
    // Pattern position after the last star, and where in `s` its match starts.
    let mut star: Option<(usize, usize)> = None;
    loop {
        let matched = if pi >= p.len() {
            false
        } else {
            match p[pi] {
                b'*' => {
                    while pi + 1 < p.len() && p[pi + 1] == b'*' {
                        pi += 1;
                    }
                    if pi + 1 == p.len() {
                        return true;
                    }
                    pi += 1;
                    star = Some((pi, si));
                    continue;
                }
                b'?' => {
                    pi += 1;
                    true
                }
                b'[' => {
                    let (ok, end) = match_class(p, pi + 1, s[si], at);
                    pi = end + 1;
                    ok
                }
                b'\\' => {
                    if p.len() - pi >= 2 {
                        pi += 1;
                    }
                    let ok = p[pi] == s[si];
                    pi += 1;
                    ok
                }
                c => {
                    pi += 1;
                    c == s[si]
                }
            }
        };
        if matched {
            si += 1;
            if si < s.len() {
                continue;
            }
            while pi < p.len() && p[pi] == b'*' {
                pi += 1;
            }
            if pi == p.len() {
                return true;
            }
        }
        // Let the last star swallow one more byte, if any is left.
        match star {
            Some((sp, ss)) if ss + 1 < s.len() => {
                star = Some((sp, ss + 1));
                pi = sp;
                si = ss + 1;
            }
            _ => return false,
        }
    }
}

/// Matches byte `c` against the class starting at `i` (just after `[`).
/// Returns whether it matched and the index of the class's last byte (its
/// `]`, or the pattern's last byte when the class is unterminated).
fn match_class(p: &[u8], mut i: usize, c: u8, at: impl Fn(usize) -> u8) -> (bool, usize) {
    let negate = at(i) == b'^';
    if negate {
        i += 1;
    }
    let mut hit = false;
    loop {
        let left = p.len().saturating_sub(i);
        if at(i) == b'\\' && left >= 2 {
            i += 1;
            if p[i] == c {
                hit = true;
            }
        } else if at(i) == b']' {
            break;
        } else if left == 0 {
            i -= 1;
            break;
        } else if left >= 3 && p[i + 1] == b'-' {
            // C compares these as (signed) chars.
            let (mut lo, mut hi) = (p[i] as i8, p[i + 2] as i8);
            if lo > hi {
                std::mem::swap(&mut lo, &mut hi);
            }
            let x = c as i8;
            if x >= lo && x <= hi {
                hit = true;
            }
            i += 2;
        } else if p[i] == c {
            hit = true;
        }
        i += 1;
    }
    (hit != negate, i)
}

#[cfg(test)]
mod tests {
    use super::glob_match as m;

    #[test]
    fn stars_and_question_marks() {
        assert!(m(b"*", b"abc"));
        assert!(!m(b"*", b""));
        assert!(!m(b"**", b""));
        assert!(m(b"", b""));
        assert!(!m(b"", b"a"));
        assert!(m(b"a*", b"a"));
        assert!(m(b"a*b*", b"ab"));
        assert!(!m(b"a*?", b"a"));
        assert!(m(b"*a", b"a"));
        assert!(m(b"h?llo", b"hello"));
        assert!(!m(b"h?llo", b"hllo"));
        assert!(m(b"*b*d*", b"abcde"));
        assert!(!m(b"*b*d*x", b"abcde"));
        assert!(m(b"a*a*a*b", b"aaaaaaaaab"));
        assert!(!m(b"a*a*a*b", b"aaaaaaaaaa"));
        assert!(m(b"*.txt", b"a.b.txt"));
    }

    #[test]
    fn classes_and_escapes() {
        assert!(m(b"h[ae]llo", b"hello"));
        assert!(!m(b"h[ae]llo", b"hillo"));
        assert!(m(b"h[^e]llo", b"hallo"));
        assert!(!m(b"h[^e]llo", b"hello"));
        assert!(m(b"h[a-b]llo", b"hbllo"));
        assert!(m(b"h[b-a]llo", b"hallo"));
        assert!(m(b"[\\]]", b"]"));
        assert!(m(b"\\*", b"*"));
        assert!(!m(b"\\*", b"a"));
        assert!(m(b"a\\", b"a\\"));
        // Unterminated classes end the pattern.
        assert!(!m(b"[", b"a"));
        assert!(m(b"[^", b"a"));
        assert!(m(b"[ab", b"a"));
        assert!(!m(b"[ab", b"ab"));
        // "[a-]" is the range a..']', unterminated.
        assert!(m(b"[a-]", b"^"));
        assert!(m(b"[a-]", b"]"));
        assert!(!m(b"[a-]", b"b"));
        // Bytes above 0x7f compare as negative chars in ranges.
        assert!(m(b"[\x80-a]", b"\x00"));
        assert!(!m(b"[a-\x80]", b"b"));
    }

    #[test]
    fn many_stars_do_not_recurse() {
        let mut p = Vec::new();
        for _ in 0..100_000 {
            p.extend_from_slice(b"a*");
        }
        p.push(b'b');
        let s = vec![b'a'; 200_000];
        assert!(!m(&p, &s));
    }
}
