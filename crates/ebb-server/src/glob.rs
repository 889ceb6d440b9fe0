//! Redis-style glob matching (`*`, `?`, `[a-z]`, `[^x]`, `\` escapes).

/// Whether `s` matches `pattern`, optionally ignoring ASCII case.
pub fn glob_match(pattern: &[u8], s: &[u8], nocase: bool) -> bool {
    let eq = |a: u8, b: u8| {
        if nocase {
            a.eq_ignore_ascii_case(&b)
        } else {
            a == b
        }
    };
    let (mut p, mut i) = (0usize, 0usize);
    let (mut star_p, mut star_i) = (usize::MAX, 0usize);
    while i < s.len() {
        if p < pattern.len() {
            match pattern[p] {
                b'*' => {
                    while p < pattern.len() && pattern[p] == b'*' {
                        p += 1;
                    }
                    if p == pattern.len() {
                        return true;
                    }
                    star_p = p;
                    star_i = i;
                    continue;
                }
                b'?' => {
                    p += 1;
                    i += 1;
                    continue;
                }
                b'[' => {
                    if let Some((matched, next)) = class(pattern, p, s[i], nocase) {
                        if matched {
                            p = next;
                            i += 1;
                            continue;
                        }
                    }
                }
                b'\\' if p + 1 < pattern.len() => {
                    if eq(pattern[p + 1], s[i]) {
                        p += 2;
                        i += 1;
                        continue;
                    }
                }
                c => {
                    if eq(c, s[i]) {
                        p += 1;
                        i += 1;
                        continue;
                    }
                }
            }
        }
        if star_p == usize::MAX {
            return false;
        }
        star_i += 1;
        i = star_i;
        p = star_p;
    }
    while p < pattern.len() && pattern[p] == b'*' {
        p += 1;
    }
    p == pattern.len()
}

/// Matches a `[...]` class at `pattern[p]`; returns (matched, index after it).
fn class(pattern: &[u8], p: usize, c: u8, nocase: bool) -> Option<(bool, usize)> {
    let mut j = p + 1;
    let not = j < pattern.len() && pattern[j] == b'^';
    if not {
        j += 1;
    }
    let norm = |x: u8| if nocase { x.to_ascii_lowercase() } else { x };
    let c = norm(c);
    let mut matched = false;
    loop {
        if j >= pattern.len() {
            // Unterminated class: Redis treats the end as closing it.
            break;
        }
        if pattern[j] == b']' {
            j += 1;
            break;
        }
        if pattern[j] == b'\\' && j + 1 < pattern.len() {
            if norm(pattern[j + 1]) == c {
                matched = true;
            }
            j += 2;
        } else if j + 2 < pattern.len() && pattern[j + 1] == b'-' && pattern[j + 2] != b']' {
            let (mut a, mut b) = (norm(pattern[j]), norm(pattern[j + 2]));
            if a > b {
                std::mem::swap(&mut a, &mut b);
            }
            if c >= a && c <= b {
                matched = true;
            }
            j += 3;
        } else {
            if norm(pattern[j]) == c {
                matched = true;
            }
            j += 1;
        }
    }
    Some((matched != not, j))
}

#[cfg(test)]
mod tests {
    use super::glob_match;

    #[test]
    fn patterns() {
        assert!(glob_match(b"*", b"anything", false));
        assert!(glob_match(b"h?llo", b"hello", false));
        assert!(glob_match(b"h[ae]llo", b"hallo", false));
        assert!(!glob_match(b"h[^e]llo", b"hello", false));
        assert!(glob_match(b"h[a-b]llo", b"hbllo", false));
        assert!(glob_match(b"a\\*b", b"a*b", false));
        assert!(!glob_match(b"a\\*b", b"axb", false));
        assert!(glob_match(
            b"*max-*-entries",
            b"zset-max-listpack-entries",
            false
        ));
        assert!(glob_match(b"PORT", b"port", true));
        assert!(!glob_match(b"a*c", b"abd", false));
    }
}
