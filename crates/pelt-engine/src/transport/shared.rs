//! The connections `--streams` senders share, for HTTP/2 and HTTP/3 alike:
//! at most one live connection per origin, opened by the first sender that
//! needs it while the others wait, and reopened by the next one after it
//! ends. The protocols differ only in their handle on a connection (`H`)
//! and in how they open one.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use tokio::sync::Notify;

/// The shared connections of a worker's senders, one slot per origin.
#[derive(Debug)]
pub(crate) struct SharedConns<H> {
    slots: RefCell<Vec<Slot<H>>>,
    /// Wakes senders waiting for a connection being opened.
    changed: Notify,
    generation: Cell<u64>,
}

#[derive(Debug)]
enum Slot<H> {
    Idle,
    Connecting,
    Ready { handle: H, generation: u64 },
}

/// What [`SharedConns::acquire`] found.
pub(crate) enum Acquired<'a, H> {
    /// A live connection, by generation ([`SharedConns::handle`] gives a
    /// copy of its handle: only when a sender's own copy is stale, as
    /// handles cost atomic counts to clone and drop).
    Ready(u64),
    /// None: the caller opens one, and hands it to [`Opening::ready`].
    Open(Opening<'a, H>),
}

impl<H: Clone> SharedConns<H> {
    pub fn new(origins: usize) -> Rc<SharedConns<H>> {
        Rc::new(SharedConns {
            slots: RefCell::new((0..origins).map(|_| Slot::Idle).collect()),
            changed: Notify::new(),
            generation: Cell::new(0),
        })
    }

    /// `origin`'s live connection, after waiting for one being opened; or
    /// the duty to open it, if there is none.
    pub async fn acquire(&self, origin: usize) -> Acquired<'_, H> {
        loop {
            // Registered before the slot is read, so a `ready` between the
            // read and the wait is not missed.
            let changed = self.changed.notified();
            {
                let mut slots = self.slots.borrow_mut();
                match &slots[origin] {
                    Slot::Ready { generation, .. } => return Acquired::Ready(*generation),
                    Slot::Connecting => {}
                    Slot::Idle => {
                        slots[origin] = Slot::Connecting;
                        return Acquired::Open(Opening {
                            shared: self,
                            origin,
                            armed: true,
                        });
                    }
                }
            }
            changed.await;
        }
    }

    /// [`acquire`](Self::acquire) for a sender that keeps its own copy of
    /// the handle, `own` (`(origin, generation, handle)`): `Ok` with a live
    /// connection's generation, `own` brought up to date if it was stale;
    /// `Err` with the duty to open one.
    pub async fn acquire_own(
        &self,
        origin: usize,
        own: &mut Option<(usize, u64, H)>,
    ) -> Result<u64, Opening<'_, H>> {
        match self.acquire(origin).await {
            Acquired::Ready(generation) => {
                if !matches!(own, Some((o, g, _)) if *o == origin && *g == generation) {
                    *own = Some((origin, generation, self.handle(origin).expect("ready")));
                }
                Ok(generation)
            }
            Acquired::Open(opening) => Err(opening),
        }
    }

    /// A copy of `origin`'s live connection's handle, if it has one.
    pub fn handle(&self, origin: usize) -> Option<H> {
        match &self.slots.borrow()[origin] {
            Slot::Ready { handle, .. } => Some(handle.clone()),
            _ => None,
        }
    }

    /// Forgets connection `generation` of `origin` (it ended, or refused
    /// new streams), so the next sender opens a new one.
    pub fn retire(&self, origin: usize, generation: u64) {
        let mut slots = self.slots.borrow_mut();
        if matches!(slots[origin], Slot::Ready { generation: g, .. } if g == generation) {
            slots[origin] = Slot::Idle;
        }
    }
}

/// A connection being opened: puts its origin back to idle if its opener
/// gives up (failure, timeout or the end of the run), so waiting senders
/// do not wait forever.
pub(crate) struct Opening<'a, H> {
    shared: &'a SharedConns<H>,
    origin: usize,
    armed: bool,
}

impl<H: Clone> Opening<'_, H> {
    /// The connection is open: shares `handle` with the waiting senders;
    /// returns the connection's generation.
    pub fn ready(mut self, handle: H) -> u64 {
        let generation = self.shared.generation.get() + 1;
        self.shared.generation.set(generation);
        self.shared.slots.borrow_mut()[self.origin] = Slot::Ready { handle, generation };
        self.armed = false;
        self.shared.changed.notify_waiters();
        generation
    }
}

impl<H> Drop for Opening<'_, H> {
    fn drop(&mut self) {
        if self.armed {
            self.shared.slots.borrow_mut()[self.origin] = Slot::Idle;
            self.shared.changed.notify_waiters();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "current_thread")]
    async fn one_opens_the_others_wait_and_a_retired_connection_is_reopened() {
        let shared = SharedConns::<&str>::new(1);
        let Acquired::Open(opening) = shared.acquire(0).await else {
            panic!("the first sender opens")
        };
        // A waiter is woken by `ready` and gets the handle.
        let waiter = async {
            match shared.acquire(0).await {
                Acquired::Ready(g) => (g, shared.handle(0).unwrap()),
                Acquired::Open(_) => panic!("opened twice"),
            }
        };
        let open = async {
            tokio::task::yield_now().await;
            opening.ready("conn-1")
        };
        let ((g, h), opened) = tokio::join!(waiter, open);
        assert_eq!((g, h, opened), (1, "conn-1", 1));
        shared.retire(0, 2);
        assert_eq!(shared.handle(0), Some("conn-1"), "only its own generation");
        shared.retire(0, 1);
        assert_eq!(shared.handle(0), None);
        // An opener that gives up leaves the slot idle for the next.
        match shared.acquire(0).await {
            Acquired::Open(opening) => drop(opening),
            Acquired::Ready(_) => panic!("retired"),
        }
        assert!(matches!(shared.acquire(0).await, Acquired::Open(_)));
    }
}
