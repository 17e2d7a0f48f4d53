//! `Warning` response headers (`299 - "unknown field \"spec.x\""`), collected while a request is
//! handled.
//!
//! Warnings arise deep in the write path (pruning in a strategy) while the response is built in
//! the handler. Handling a write is synchronous from decode to commit, so a per-thread collector
//! around that synchronous section carries them without threading a parameter through every
//! layer.

use std::cell::RefCell;

thread_local! {
    static COLLECTOR: RefCell<Option<Vec<String>>> = const { RefCell::new(None) };
}

/// Runs `f`, returning its result and the warnings it raised.
pub fn collect<T>(f: impl FnOnce() -> T) -> (T, Vec<String>) {
    let outer = COLLECTOR.with(|c| c.borrow_mut().replace(Vec::new()));
    let out = f();
    let warnings = COLLECTOR.with(|c| {
        let mut c = c.borrow_mut();
        let mine = c.take().unwrap_or_default();
        *c = outer;
        mine
    });
    (out, warnings)
}

/// Raises a warning for the request being handled (dropped when nothing collects).
pub fn warn(message: impl Into<String>) {
    COLLECTOR.with(|c| {
        if let Some(list) = c.borrow_mut().as_mut() {
            let message = message.into();
            if !list.contains(&message) {
                list.push(message);
            }
        }
    });
}

/// The `Warning` header value for a message: code 299, agent "-", the text quoted.
pub fn header_value(message: &str) -> String {
    let escaped = message.replace('\\', "\\\\").replace('"', "\\\"");
    format!("299 - \"{escaped}\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collects_per_scope() {
        warn("dropped: nobody collects");
        let ((), outer) = collect(|| {
            warn("a");
            let ((), inner) = collect(|| warn("b"));
            assert_eq!(inner, ["b"]);
            warn("a");
        });
        assert_eq!(outer, ["a"]);
        assert_eq!(
            header_value("unknown field \"spec.x\""),
            "299 - \"unknown field \\\"spec.x\\\"\""
        );
    }
}
