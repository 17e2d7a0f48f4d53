//! A connection that wakes itself is polled again at once, instead of through the scheduler.
//!
//! hyper's request body channel wakes the connection's task whenever the handler takes a chunk
//! (so the dispatcher may send the next one), and the handler runs inside that same task: every
//! request with a body wakes its own task while it is being polled. Tokio's multi-threaded
//! runtime treats a task woken during its own poll as one that yields: it goes to the back of
//! the worker's queue and an idle worker is woken to steal it: a futex and an eventfd write per
//! request, and a worker thread that runs for nothing. With the client in the same process (a
//! `cargo test` on a multi-threaded runtime) that worker competed with the client and the
//! server for the CPUs: one client's creates were half as fast (CHANGELOG.md, "Self-wakes").
//!
//! [`Rewake`] polls the connection with a waker of its own. A wake that arrives while the
//! connection is being polled only marks it, and the connection is polled again before the
//! task's poll returns; a wake at any other time (the socket, a timer, another task) goes to
//! the task as usual. The extra polls are bounded ([`MAX_POLLS`]), so a connection that keeps
//! waking itself still yields to the others.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use futures_util::task::AtomicWaker;

/// How many times one poll of the task may poll the connection. hyper yields after 16 turns of
/// its loop by waking itself, which this absorbs like any other self-wake: one poll of the task
/// runs at most this many times 16 turns (and tokio's cooperative budget, whose exhaustion
/// defers the wake to the scheduler, ends it sooner), then yields for real.
const MAX_POLLS: usize = 4;

/// The waker a connection is polled with, and what its wakes found (see the module docs). One
/// `Rewake` serves one future: two would mix up their wakes.
pub struct Rewake {
    flag: Arc<Flag>,
    waker: Waker,
}

struct Flag {
    /// The connection is being polled: a wake now only sets `woken`.
    polling: AtomicBool,
    /// A wake arrived since the current poll started.
    woken: AtomicBool,
    /// The task, for wakes outside a poll.
    task: AtomicWaker,
}

impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        // `woken` first: a poll that ends after this store sees it; one that ended before the
        // load of `polling` below is woken through the task.
        self.woken.store(true, Ordering::SeqCst);
        if !self.polling.load(Ordering::SeqCst) {
            self.task.wake();
        }
    }
}

impl Rewake {
    /// A waker for one connection.
    pub fn new() -> Self {
        let flag = Arc::new(Flag {
            polling: AtomicBool::new(false),
            woken: AtomicBool::new(false),
            task: AtomicWaker::new(),
        });
        let waker = Waker::from(flag.clone());
        Rewake { flag, waker }
    }

    /// Polls `fut` for the task `cx` belongs to, again while it woke itself during its poll.
    pub fn poll<F: Future>(&self, mut fut: Pin<&mut F>, cx: &mut Context<'_>) -> Poll<F::Output> {
        self.flag.task.register(cx.waker());
        let mut inner = Context::from_waker(&self.waker);
        for _ in 0..MAX_POLLS {
            self.flag.woken.store(false, Ordering::SeqCst);
            self.flag.polling.store(true, Ordering::SeqCst);
            let polled = fut.as_mut().poll(&mut inner);
            self.flag.polling.store(false, Ordering::SeqCst);
            if polled.is_ready() {
                return polled;
            }
            if !self.flag.woken.swap(false, Ordering::SeqCst) {
                return Poll::Pending;
            }
        }
        // Still waking itself: yield to the other tasks, as the connection asked.
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    /// Counts the task's wakes.
    struct Count(AtomicUsize);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// A future that wakes itself `times` times while polled, then is ready; it counts its polls.
    struct SelfWaking {
        times: usize,
        polls: usize,
    }

    impl Future for SelfWaking {
        type Output = usize;
        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<usize> {
            self.polls += 1;
            if self.times == 0 {
                return Poll::Ready(self.polls);
            }
            self.times -= 1;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }

    fn task() -> (Arc<Count>, Waker) {
        let count = Arc::new(Count(AtomicUsize::new(0)));
        let waker = Waker::from(count.clone());
        (count, waker)
    }

    #[test]
    fn a_wake_during_the_poll_polls_again_without_waking_the_task() {
        let (count, waker) = task();
        let rewake = Rewake::new();
        let mut fut = std::pin::pin!(SelfWaking { times: 2, polls: 0 });
        let polled = rewake.poll(fut.as_mut(), &mut Context::from_waker(&waker));
        assert_eq!(polled, Poll::Ready(3));
        assert_eq!(count.0.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn a_future_that_keeps_waking_itself_yields_after_max_polls() {
        let (count, waker) = task();
        let rewake = Rewake::new();
        let mut fut = std::pin::pin!(SelfWaking {
            times: 100,
            polls: 0
        });
        let polled = rewake.poll(fut.as_mut(), &mut Context::from_waker(&waker));
        assert!(polled.is_pending());
        assert_eq!(fut.polls, MAX_POLLS);
        assert_eq!(
            count.0.load(Ordering::SeqCst),
            1,
            "the task is woken to yield"
        );
    }

    /// Pending on its first poll, after another thread woke it (and finished) during that
    /// poll; ready on the next.
    struct WokenFromAnotherThread {
        polls: usize,
    }

    impl Future for WokenFromAnotherThread {
        type Output = usize;
        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<usize> {
            self.polls += 1;
            if self.polls > 1 {
                return Poll::Ready(self.polls);
            }
            let waker = cx.waker().clone();
            std::thread::spawn(move || waker.wake())
                .join()
                .expect("waking thread");
            Poll::Pending
        }
    }

    #[test]
    fn a_wake_from_another_thread_during_the_poll_polls_again() {
        let (count, waker) = task();
        let rewake = Rewake::new();
        let mut fut = std::pin::pin!(WokenFromAnotherThread { polls: 0 });
        let polled = rewake.poll(fut.as_mut(), &mut Context::from_waker(&waker));
        assert_eq!(polled, Poll::Ready(2));
        assert_eq!(count.0.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn a_wake_after_the_poll_wakes_the_task() {
        let (count, waker) = task();
        let rewake = Rewake::new();
        let mut pending = std::pin::pin!(std::future::pending::<()>());
        let polled = rewake.poll(pending.as_mut(), &mut Context::from_waker(&waker));
        assert!(polled.is_pending());
        assert_eq!(count.0.load(Ordering::SeqCst), 0);
        // What the socket or a timer would do later, from any thread.
        let later = rewake.waker.clone();
        std::thread::spawn(move || later.wake())
            .join()
            .expect("waking thread");
        assert_eq!(count.0.load(Ordering::SeqCst), 1);
    }
}
