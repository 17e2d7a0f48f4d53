use rstest::rstest;

use super::*;
use crate::filters::request_info::{self, RequestInfo};

fn info(method: &str, path: &str) -> RequestInfo {
    request_info::resolve(method, path, false)
}

fn probe<'a>(info: &'a RequestInfo, manager: &'a str, agent: &'a str) -> Probe<'a> {
    Probe {
        info,
        field_manager: manager,
        user_agent: agent,
        user: "system:admin",
    }
}

/// Which of ten matching requests a rule fires on.
fn firings(fault: Fault) -> Vec<usize> {
    let faults = Faults::default();
    let id = faults.add(fault).unwrap();
    let put = info(
        "PUT",
        "/apis/stable.example.com/v1/namespaces/default/crontabs/x/status",
    );
    let fired: Vec<usize> = (1..=10)
        .filter(|_| faults.check(&probe(&put, "", "")).is_some())
        .collect();
    let status = faults.get(&id).unwrap();
    assert_eq!((status.matched, status.fired), (10, fired.len() as u64));
    fired
}

#[rstest]
#[case(Fault::new().conflict(), vec![1, 2, 3, 4, 5, 6, 7, 8, 9, 10])]
#[case(Fault::new().conflict().times(3), vec![1, 2, 3])]
#[case(Fault::new().conflict().nth(4), vec![4])]
#[case(Fault::new().conflict().nth(4).times(2), vec![4, 5])]
#[case(Fault::new().conflict().probability(0.0, 7), vec![])]
#[case(Fault::new().conflict().probability(1.0, 7), vec![1, 2, 3, 4, 5, 6, 7, 8, 9, 10])]
fn limits(#[case] fault: Fault, #[case] expected: Vec<usize>) {
    assert_eq!(firings(fault), expected);
}

#[test]
fn a_seed_fires_on_the_same_requests() {
    let once = firings(Fault::new().conflict().probability(0.5, 42));
    assert_eq!(once, firings(Fault::new().conflict().probability(0.5, 42)));
    assert!(!once.is_empty() && once.len() < 10, "{once:?}");
}

#[rstest]
#[case(Fault::new().verb("update").subresource("status"), true)]
#[case(Fault::new().verb("update").subresource(""), false)]
#[case(Fault::new().verb("patch"), false)]
#[case(Fault::new().group("stable.example.com").resource("crontabs").namespace("default").name("x"), true)]
#[case(Fault::new().namespace("other"), false)]
#[case(Fault::new().field_manager("foo-controller"), true)]
#[case(Fault::new().field_manager("kubectl"), false)]
#[case(Fault::new().user_agent("foo/*"), true)]
#[case(Fault::new().user_agent("kubectl*"), false)]
#[case(Fault::new().user("system:admin"), true)]
#[case(Fault::new().user("jane"), false)]
fn matching(#[case] fault: Fault, #[case] expected: bool) {
    let faults = Faults::default();
    faults.add(fault.conflict()).unwrap();
    let put = info(
        "PUT",
        "/apis/stable.example.com/v1/namespaces/default/crontabs/x/status",
    );
    let fired = faults.check(&probe(&put, "foo-controller", "foo/v1.2"));
    assert_eq!(fired.is_some(), expected);
}

#[test]
fn watch_faults_match_watches_only_and_other_requests_pay_nothing() {
    let faults = Faults::default();
    let list = info("GET", "/api/v1/namespaces/default/configmaps");
    assert!(faults.check(&probe(&list, "", "")).is_none());
    faults.add(Fault::new().end_watch_after(2)).unwrap();
    assert!(faults.check(&probe(&list, "", "")).is_none());
    let watch = request_info::resolve("GET", "/api/v1/namespaces/default/configmaps", true);
    let fired = faults.check(&probe(&watch, "", "")).unwrap();
    assert_eq!(
        fired.watch(),
        Some(WatchFault {
            after_events: 2,
            end: WatchEnd::End
        })
    );
    let discovery = info("GET", "/api/v1");
    faults.add(Fault::new().drop_connection()).unwrap();
    assert!(faults.check(&probe(&discovery, "", "")).is_none());
}

#[test]
fn rules_are_tried_in_order_and_removed_by_id() {
    let faults = Faults::default();
    let first = faults.add(Fault::new().status(500).times(1)).unwrap();
    let second = faults.add(Fault::new().status(503)).unwrap();
    let get = info("GET", "/api/v1/namespaces/default/configmaps/a");
    let ids: Vec<String> = (0..3)
        .filter_map(|_| faults.check(&probe(&get, "", "")))
        .map(|f| f.id)
        .collect();
    assert_eq!(ids, [first.clone(), second.clone(), second.clone()]);
    assert_eq!(faults.remove(&second).map(|s| s.fired), Ok(2));
    assert_eq!(
        faults.remove(&second),
        Err(FaultError::NotFound(second.clone()))
    );
    assert_eq!(faults.list().len(), 1);
    faults.clear();
    assert!(faults.list().is_empty());
    assert!(faults.check(&probe(&get, "", "")).is_none());
}
