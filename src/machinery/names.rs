//! Names as Kubernetes checks them (`k8s.io/apimachinery/pkg/util/validation`): DNS-1123
//! labels and subdomains, DNS-1035 labels, qualified names (label and annotation keys) and
//! label values, as predicates and as the apiserver's messages.

/// Whether `s` is an RFC 1123 label (`[a-z0-9]([-a-z0-9]*[a-z0-9])?`), ignoring length.
pub fn is_dns1123_label(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b[0].is_ascii_lowercase() | b[0].is_ascii_digit()
        && b[b.len() - 1].is_ascii_lowercase() | b[b.len() - 1].is_ascii_digit()
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
}

/// Whether `s` is an RFC 1123 subdomain (dot-joined labels), ignoring length.
pub fn is_dns1123_subdomain(s: &str) -> bool {
    !s.is_empty() && s.split('.').all(is_dns1123_label)
}

/// `RegexError`: a format's message with examples and the regex.
pub fn regex_error(msg: &str, re: &str, examples: &[&str]) -> String {
    if examples.is_empty() {
        return format!("{msg} (regex used for validation is '{re}')");
    }
    let listed: Vec<String> = examples.iter().map(|e| format!("'{e}', ")).collect();
    format!(
        "{msg} (e.g. {}regex used for validation is '{re}')",
        listed.join(" or ")
    )
}

const DNS1123_LABEL_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1123_SUBDOMAIN_FMT: &str =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const DNS1123_SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const LABEL_KEY_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const LABEL_KEY_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/// `IsDNS1123Label`.
pub fn dns1123_label_errors(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 63 {
        errs.push("must be no more than 63 characters".to_string());
    }
    if !is_dns1123_label(value) {
        if is_dns1123_subdomain(value) {
            errs.push("must not contain dots".to_string());
        } else {
            errs.push(regex_error(
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
                DNS1123_LABEL_FMT,
                &["my-name", "123-abc"],
            ));
        }
    }
    errs
}

/// `IsDNS1123Subdomain` (`max` words the length error: "characters" in `util/validation`,
/// "bytes" in `api/validate/content`).
fn subdomain_errors(value: &str, unit: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 253 {
        errs.push(format!("must be no more than 253 {unit}"));
    }
    if !is_dns1123_subdomain(value) {
        errs.push(regex_error(
            DNS1123_SUBDOMAIN_MSG,
            DNS1123_SUBDOMAIN_FMT,
            &["example.com"],
        ));
    }
    errs
}

/// `IsDNS1123Subdomain`.
pub fn dns1123_subdomain_errors(value: &str) -> Vec<String> {
    subdomain_errors(value, "characters")
}

/// `IsDNS1035Label`: a lower-case letter first.
pub fn dns1035_label_errors(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 63 {
        errs.push("must be no more than 63 characters".to_string());
    }
    if !value.starts_with(|c: char| c.is_ascii_lowercase()) || !is_dns1123_label(value) {
        errs.push(regex_error(
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
            "[a-z]([-a-z0-9]*[a-z0-9])?",
            &["my-name", "abc-123"],
        ));
    }
    errs
}

/// `IsWildcardDNS1123Subdomain`: `*.` and a subdomain.
pub fn wildcard_dns1123_subdomain_errors(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 253 {
        errs.push("must be no more than 253 characters".to_string());
    }
    if !value.strip_prefix("*.").is_some_and(is_dns1123_subdomain) {
        errs.push(regex_error(
            "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character",
            &format!("\\*\\.{DNS1123_SUBDOMAIN_FMT}"),
            &["*.example.com"],
        ));
    }
    errs
}

fn is_label_key_name(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

/// `IsQualifiedName` (a label key): `[prefix/]name`, the prefix a DNS subdomain.
pub fn qualified_name_messages(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else {
                let msgs = subdomain_errors(prefix, "bytes");
                errs.extend(msgs.into_iter().map(|m| format!("prefix part {m}")));
            }
            *name
        }
        _ => {
            return vec![format!(
                "a valid label key {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_error(LABEL_KEY_MSG, LABEL_KEY_FMT, &["MyName", "my.name", "123-abc"])
            )]
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else if name.len() > 63 {
        errs.push("name part must be no more than 63 bytes".to_string());
    }
    if !is_label_key_name(name) {
        errs.push(format!(
            "name part {}",
            regex_error(
                LABEL_KEY_MSG,
                LABEL_KEY_FMT,
                &["MyName", "my.name", "123-abc"]
            )
        ));
    }
    errs
}

/// `IsValidLabelValue`: empty, or a label key's name part.
pub fn label_value_errors(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 63 {
        errs.push("must be no more than 63 bytes".to_string());
    }
    if !value.is_empty() && !is_label_key_name(value) {
        errs.push(regex_error(
            "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
            &format!("({LABEL_KEY_FMT})?"),
            &["MyValue", "my_value", "12345"],
        ));
    }
    errs
}

/// `content.IsCIdentifier`: a letter or `_`, then letters, digits and `_` (attribute names).
pub fn c_identifier_messages(value: &str) -> Vec<String> {
    let b = value.as_bytes();
    let valid = b
        .first()
        .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
        && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_');
    if valid {
        return Vec::new();
    }
    vec![regex_error(
        "a valid C identifier must start with alphabetic character or '_', followed by a string of alphanumeric characters or '_'",
        "[A-Za-z_][A-Za-z0-9_]*",
        &["my_name", "MY_NAME", "MyName"],
    )]
}

/// A qualified name's name part: at most 63 bytes of alphanumerics, `-`, `_` and `.`, starting
/// and ending with an alphanumeric.
fn is_name_part(s: &str) -> bool {
    s.len() <= 63 && is_label_key_name(s)
}

/// A label or annotation key: `[prefix/]name`, prefix a DNS subdomain.
pub fn is_qualified_name(s: &str) -> bool {
    match s.split_once('/') {
        Some((prefix, name)) => {
            prefix.len() <= 253 && is_dns1123_subdomain(prefix) && is_name_part(name)
        }
        None => is_name_part(s),
    }
}

/// A label value: empty, or a name part.
pub fn is_label_value(s: &str) -> bool {
    s.is_empty() || is_name_part(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case("my-name", true, true)]
    #[case("a.b", false, true)]
    #[case("-a", false, false)]
    #[case("", false, false)]
    #[case("Upper", false, false)]
    fn dns1123(#[case] s: &str, #[case] label: bool, #[case] subdomain: bool) {
        assert_eq!(is_dns1123_label(s), label);
        assert_eq!(is_dns1123_subdomain(s), subdomain);
        assert_eq!(dns1123_label_errors(s).is_empty(), label);
        assert_eq!(dns1123_subdomain_errors(s).is_empty(), subdomain);
    }

    #[rstest]
    #[case("app", true)]
    #[case("example.com/App_1", true)]
    #[case("/app", false)]
    #[case("a/b/c", false)]
    #[case("example.com/", false)]
    fn qualified_names(#[case] s: &str, #[case] ok: bool) {
        assert_eq!(is_qualified_name(s), ok);
        assert_eq!(qualified_name_messages(s).is_empty(), ok);
    }

    #[test]
    fn messages_are_the_apiservers() {
        assert_eq!(dns1123_label_errors("a.b"), ["must not contain dots"]);
        assert_eq!(
            qualified_name_messages("/x"),
            ["prefix part must be non-empty"]
        );
        assert_eq!(
            label_value_errors(&"x".repeat(64)),
            ["must be no more than 63 bytes"]
        );
        assert!(is_label_value(""));
        assert!(c_identifier_messages("_a1").is_empty());
        assert_eq!(
            c_identifier_messages("1a"),
            ["a valid C identifier must start with alphabetic character or '_', followed by a string of alphanumeric characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex used for validation is '[A-Za-z_][A-Za-z0-9_]*')"]
        );
        assert_eq!(
            regex_error("m", "r", &["a", "b"]),
            "m (e.g. 'a',  or 'b', regex used for validation is 'r')"
        );
    }
}
