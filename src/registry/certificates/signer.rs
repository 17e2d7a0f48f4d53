//! Signer names (`ValidateSignerName`): a fully qualified domain, a `/`, and a path of DNS
//! subdomain pieces (`example.com/my-signer`).

use serde_json::json;

use crate::error::{field, StatusCause};
use crate::registry::validation::{dns1123_label_errors, dns1123_subdomain_errors};

/// The most bytes of a signer name's domain.
const MAX_DOMAIN: usize = 253;
/// The most bytes of a whole signer name: a domain, a label and a subdomain, two separators.
const MAX_NAME: usize = 253 + 63 + 253 + 2;

/// The errors of a signer name at `path`, as the apiserver reports them: every check runs
/// (only the first bad label of each segment is reported).
pub fn signer_name_errors(path: &str, name: &str) -> Vec<StatusCause> {
    if name.is_empty() {
        return vec![field::required(path, "")];
    }
    let segments: Vec<&str> = name.split('/').collect();
    let [domain, signer_path] = segments.as_slice() else {
        return vec![field::invalid(
            path,
            &json!(name),
            "must be a fully qualified domain and path of the form 'example.com/signer-name'",
        )];
    };
    let mut errs = Vec::new();
    if domain.len() > MAX_DOMAIN {
        errs.push(field::too_long(path, MAX_DOMAIN));
    }
    let labels: Vec<&str> = domain.split('.').collect();
    errs.extend(first_bad_label(path, domain, &labels, dns1123_label_errors));
    if labels.len() < 2 {
        errs.push(field::invalid(
            path,
            &json!(domain),
            "should be a domain with at least two segments separated by dots",
        ));
    }
    let pieces: Vec<&str> = signer_path.split('.').collect();
    errs.extend(first_bad_label(
        path,
        signer_path,
        &pieces,
        dns1123_subdomain_errors,
    ));
    if name.len() > MAX_NAME {
        errs.push(field::too_long(path, MAX_NAME));
    }
    errs
}

/// The messages of the first of `labels` that `check` refuses, each quoting `segment`.
fn first_bad_label(
    path: &str,
    segment: &str,
    labels: &[&str],
    check: fn(&str) -> Vec<String>,
) -> Vec<StatusCause> {
    let Some((label, msgs)) = labels
        .iter()
        .map(|l| (l, check(l)))
        .find(|(_, msgs)| !msgs.is_empty())
    else {
        return Vec::new();
    };
    msgs.iter()
        .map(|m| {
            let detail = format!("validating label \"{label}\": {m}");
            field::invalid(path, &json!(segment), &detail)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::signer_name_errors;
    use rstest::rstest;

    fn messages(name: &str) -> Vec<String> {
        signer_name_errors("spec.signerName", name)
            .into_iter()
            .map(|c| format!("{}: {}", c.field, c.message))
            .collect()
    }

    #[rstest]
    #[case("org.io/my-signer")]
    #[case("kubernetes.io/kube-apiserver-client")]
    #[case("example.com/a.b.c")]
    fn valid(#[case] name: &str) {
        assert_eq!(messages(name), Vec::<String>::new());
    }

    #[rstest]
    #[case("", "spec.signerName: Required value")]
    #[case("foo", "spec.signerName: Invalid value: \"foo\": must be a fully qualified domain and path of the form 'example.com/signer-name'")]
    #[case("a/b/c", "spec.signerName: Invalid value: \"a/b/c\": must be a fully qualified domain and path of the form 'example.com/signer-name'")]
    #[case("foo/bar", "spec.signerName: Invalid value: \"foo\": should be a domain with at least two segments separated by dots")]
    #[case("Org.io/x", "spec.signerName: Invalid value: \"Org.io\": validating label \"Org\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")]
    #[case("org.io/", "spec.signerName: Invalid value: \"\": validating label \"\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")]
    fn invalid(#[case] name: &str, #[case] want: &str) {
        assert_eq!(messages(name), vec![want.to_string()]);
    }

    #[test]
    fn every_check_runs() {
        let errs = messages("Org/X");
        assert_eq!(errs.len(), 3, "{errs:?}");
        assert!(errs[0].contains("validating label \"Org\""), "{errs:?}");
        assert!(
            errs[1].ends_with("should be a domain with at least two segments separated by dots")
        );
        assert!(errs[2].contains("validating label \"X\""), "{errs:?}");
    }
}
