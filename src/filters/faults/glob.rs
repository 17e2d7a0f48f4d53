//! Shell-style globs (`*` any run of characters, `?` one character) for the user agents fault
//! rules and request-log filters match: `kubectl/*`, `*controller*`.

/// Whether `text` matches `pattern` as a whole. Greedy with one back-track point, so it takes
/// time proportional to `text.len() * pattern.len()` at worst, and the pattern is the test's,
/// not the client's: linear in what a request sends.
pub fn matches(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0, 0);
    // Where the last `*` was, and where in the text it started matching.
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some((pi, ti));
                pi += 1;
            }
            Some(&c) if c == '?' || c == t[ti] => {
                pi += 1;
                ti += 1;
            }
            _ => match star {
                // Let the last `*` swallow one more character and try again.
                Some((sp, st)) => {
                    pi = sp + 1;
                    ti = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    #[rstest]
    #[case("", "", true)]
    #[case("", "a", false)]
    #[case("*", "", true)]
    #[case("*", "kubectl/v1.36.0 (linux/amd64)", true)]
    #[case("kubectl/*", "kubectl/v1.36.0 (linux/amd64)", true)]
    #[case("kubectl/*", "kube-rs/1.0", false)]
    #[case("*controller*", "foo-controller/v1", true)]
    #[case("*controller", "foo-controller/v1", false)]
    #[case("a?c", "abc", true)]
    #[case("a?c", "ac", false)]
    #[case("a*b*c", "aXbYbZc", true)]
    #[case("a*b*c", "aXbYbZ", false)]
    #[case("**a", "bbba", true)]
    #[case("exact", "exact", true)]
    #[case("exact", "exactly", false)]
    #[case("é*", "één", true)]
    fn globs(#[case] pattern: &str, #[case] text: &str, #[case] expected: bool) {
        assert_eq!(
            super::matches(pattern, text),
            expected,
            "{pattern} ~ {text}"
        );
    }

    #[test]
    fn long_texts_take_no_exponential_time() {
        let text = "a".repeat(20_000);
        assert!(!super::matches("*a*a*a*a*a*b", &text));
    }
}
