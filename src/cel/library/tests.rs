//! Table tests of the registry: every signature parses to its function, and for a few calls of
//! every family the signature (the checked type), the implementation (the value) and the cost
//! (the run-time cost within the static estimate) agree.

use chrono::TimeDelta;

use super::signature::{named_ty, split_args};
use super::time::duration_string;
use super::*;
use crate::cel::eval::Evaluator;
use crate::cel::{compile_expr, PER_CALL_LIMIT};

/// Whether `s` is a well-formed type of the signature language.
fn valid_ty(s: &str) -> bool {
    let s = s.trim();
    for prefix in ["list<", "opt<", "type<"] {
        if let Some(inner) = s.strip_prefix(prefix).and_then(|x| x.strip_suffix('>')) {
            return valid_ty(inner);
        }
    }
    if let Some(kv) = s.strip_prefix("map<").and_then(|x| x.strip_suffix('>')) {
        let parts = split_args(kv);
        return parts.len() == 2 && parts.iter().all(|p| valid_ty(p));
    }
    named_ty(s).is_some()
}

#[test]
fn every_signature_belongs_to_its_function_and_parses() {
    let mut overloads = 0;
    for f in FAMILIES.iter().flat_map(|family| family.iter()) {
        for sig in f.signatures {
            let open = sig.find('(').expect("a parameter list");
            let close = sig.rfind(')').expect("a parameter list");
            let head = &sig[..open];
            let receiver = head.strip_suffix(f.name).filter(|_| head != f.name);
            assert!(
                head == f.name || receiver.is_some_and(|r| r.ends_with('.')),
                "{sig} is not a signature of {}",
                f.name
            );
            if let Some(r) = receiver {
                assert!(valid_ty(r.trim_end_matches('.')), "{sig}: receiver");
            }
            for p in split_args(&sig[open + 1..close]) {
                assert!(valid_ty(p), "{sig}: parameter {p}");
            }
            assert!(valid_ty(&sig[close + 1..]), "{sig}: result");
            overloads += 1;
        }
        let entry = lookup(f.name).expect("registered");
        assert!(
            entry.functions.iter().any(|(g, _)| std::ptr::eq(*g, f)) || {
                // Consts may be instantiated at more than one address: compare by name and table.
                entry
                    .functions
                    .iter()
                    .any(|(g, _)| g.name == f.name && g.signatures == f.signatures)
            }
        );
    }
    // 216 declared signatures and 4 x 14 orderings, as before the split into families, and
    // the authorizer library's 15.
    assert_eq!(overloads, 287);
}

#[test]
fn shared_names_dispatch_on_the_receiver() {
    let index_of = lookup("indexOf").expect("indexOf");
    assert_eq!(index_of.overloads.len(), 3);
    let s = index_of.dispatch(&[Val::str("abc"), Val::str("b")]);
    let l = index_of.dispatch(&[list(vec![Val::Int(1)]), Val::Int(1)]);
    let (s, l) = (s.expect("strings"), l.expect("lists"));
    assert_eq!(s.signatures[0], "string.indexOf(string) int");
    assert_eq!(l.signatures[0], "list<A>.indexOf(A) int");
    // Neither: the first family's, which reports no overload.
    let other = index_of.dispatch(&[Val::Int(1), Val::Int(1)]);
    assert_eq!(other.map(|f| f.signatures[0]), Some(s.signatures[0]));
    assert!(lookup("nope").is_none());
    assert_eq!(lookup("matches").and_then(Entry::regex_arg), Some(1));
}

/// The CEL type name of values of a static type (`None` for `dyn`, which checks nothing).
fn type_name(t: &Ty) -> Option<&'static str> {
    Some(match t.norm() {
        Ty::Bool => "bool",
        Ty::Int => "int",
        Ty::Uint => "uint",
        Ty::Double => "double",
        Ty::String => "string",
        Ty::Bytes => "bytes",
        Ty::Timestamp => "google.protobuf.Timestamp",
        Ty::Duration => "google.protobuf.Duration",
        Ty::List(_) => "list",
        Ty::Map(..) => "map",
        Ty::Opt(_) => "optional_type",
        Ty::Type(_) => "type",
        Ty::Null => "null_type",
        Ty::Opaque(n) => n,
        _ => return None,
    })
}

/// `(expression, its value as shown by the test, its estimated maximum cost, its run-time cost)`
/// for each family. The run-time cost exceeds the estimate where the apiserver's does too
/// (`format` charges for building its result, which the estimator does not).
const CASES: &[(&str, &str, u64, u64)] = &[
    // operators
    ("!false", "true", 1, 1),
    ("'ab' < 'b'", "true", 1, 1),
    ("[1, 2][1]", "2", 11, 11),
    ("{'a': 1}[?'b'].hasValue()", "false", 32, 32),
    ("2 in [1, 2]", "true", 12, 12),
    ("size('héllo')", "5", 1, 1),
    // math
    ("7 / 2 + 7 % 2", "4", 3, 3),
    ("'ab' + 'cd'", "\"abcd\"", 1, 1),
    ("-(1.5)", "-1.5", 1, 1),
    (
        "duration('1h') - duration('30m') == duration('30m')",
        "true",
        5,
        5,
    ),
    // conversions
    ("int('42')", "42", 1, 1),
    ("string(2.5)", "\"2.5\"", 1, 1),
    ("uint(3)", "3u", 1, 1),
    ("type(1) == int", "true", 3, 3),
    // time
    (
        "timestamp('2023-05-06T07:08:09Z').getDayOfWeek()",
        "6",
        2,
        2,
    ),
    ("duration('90m').getHours()", "1", 2, 2),
    // strings
    ("'Hello'.lowerAscii()", "\"hello\"", 1, 1),
    ("'a,b,c'.split(',')", "list", 1, 1),
    ("'abcabc'.lastIndexOf('b')", "4", 1, 1),
    ("['a', 'b'].join('-')", "\"a-b\"", 11, 11),
    ("'%d items'.format([3])", "\"3 items\"", 11, 12),
    ("strings.quote('a')", "\"\\\"a\\\"\"", 1, 1),
    // lists
    ("[3, 1, 2].max()", "3", 13, 13),
    ("[1, 2, 3].sum()", "6", 13, 13),
    ("[1, 2, 1].lastIndexOf(1)", "2", 13, 13),
    ("[1, 2].isSorted()", "true", 12, 12),
    // regex
    ("'abc123'.find('[0-9]+')", "\"123\"", 2, 2),
    ("'a1b2'.findAll('[0-9]')", "list", 2, 2),
    ("matches('abc', '^a')", "true", 1, 1),
    // urls
    ("url('https://example.com:80/x').getPort()", "\"80\"", 4, 4),
    ("isURL('not a url')", "false", 1, 1),
    // ip and cidr
    ("ip('::1').family()", "6", 2, 2),
    ("cidr('10.0.0.0/8').containsIP('10.1.2.3')", "true", 6, 2),
    (
        "string(cidr('10.1.0.0/16').masked())",
        "\"10.1.0.0/16\"",
        4,
        4,
    ),
    // quantity
    ("quantity('1Gi').compareTo(quantity('1024Mi'))", "0", 3, 3),
    ("quantity('1').add(2).asInteger()", "3", 3, 3),
    // semver
    ("semver('v1.2', true).minor()", "2", 2, 2),
    (
        "semver('1.2.3').isGreaterThan(semver('1.2.0'))",
        "true",
        3,
        3,
    ),
    // format
    ("format.named('uri').hasValue()", "true", 2, 2),
    (
        "format.dns1123Label().validate('ok').hasValue()",
        "false",
        34,
        3,
    ),
    // sets
    ("sets.intersects([1, 2], [2, 3])", "true", 21, 21),
    // optionals
    ("optional.ofNonZeroValue('').orValue('x')", "\"x\"", 2, 2),
    ("optional.none().or(optional.of(1)).value()", "1", 4, 4),
];

#[test]
fn signatures_costs_and_implementations_agree() {
    for (src, want, estimate, cost) in CASES {
        let compiled = match compile_expr(src, &Ty::Dyn, false) {
            Ok(c) => c,
            Err(e) => panic!("{src}: {e}"),
        };
        let vars = vec![("self", Val::Null), ("oldSelf", Val::Null)];
        let mut ev = Evaluator::new(vars, PER_CALL_LIMIT, &compiled.program.regexes);
        let v = match ev.eval(&compiled.program.expr) {
            Ok(v) => v,
            Err(e) => panic!("{src}: {e}"),
        };
        let shown = match &v {
            Val::List(_) | Val::JList(..) => "list".to_string(),
            v => v.display(),
        };
        assert_eq!(shown, *want, "{src}");
        if let Some(t) = type_name(&compiled.info.ty) {
            assert_eq!(v.type_name(), t, "{src}: checked as {}", compiled.info.ty);
        }
        assert_eq!(compiled.info.cost.max, *estimate, "{src}: estimate");
        assert_eq!(ev.cost, *cost, "{src}: run-time cost");
    }
}

#[test]
fn go_formats() {
    assert_eq!(go_float(1.5), "1.5");
    assert_eq!(go_float(1e21), "1e+21");
    assert_eq!(go_float(1234567.0), "1.234567e+06");
    assert_eq!(go_float(123456.0), "123456");
    assert_eq!(go_float(100.0), "100");
    assert_eq!(duration_string(TimeDelta::seconds(3600)), "3600s");
    assert_eq!(parse_go_duration("1h30m"), Some(TimeDelta::minutes(90)));
}
