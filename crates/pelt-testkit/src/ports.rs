//! Ports for servers that must bind one by number (nginx, tinyproxy,
//! PostgreSQL, Prometheus, pelt's `--metrics` and `--dashboard`).
//!
//! A server of our own binds port 0 and keeps the listener, which needs
//! none of this. One that takes a number gets one below Linux's ephemeral
//! range (32768..60999): after a load test, TIME-WAIT sockets on loopback
//! make many ephemeral ports unusable for a listener, and the clients of
//! every other test take theirs from that range. A port can still be taken
//! between the pick and the bind: a server that says "address in use" is
//! started again on another ([`random_port`] takes the attempt's number).

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::net::{Ipv4Addr, TcpListener};
use std::ops::Range;

/// Ports below Linux's default ephemeral range (32768..60999).
pub const PORT_RANGE: Range<u16> = 20000..32000;

/// How many random ports [`free_port`] tries.
const ATTEMPTS: usize = 50;

/// A random port in [`PORT_RANGE`]. Each `RandomState` is freshly seeded,
/// so concurrent tests and test binaries pick different ports.
pub fn random_port(attempt: usize) -> u16 {
    let random = RandomState::new().hash_one((attempt, std::process::id()));
    let span = u64::from(PORT_RANGE.end - PORT_RANGE.start);
    PORT_RANGE.start + (random % span) as u16
}

/// A port in [`PORT_RANGE`] that nothing listened on a moment ago, for a
/// server that fails plainly when its port is taken.
pub fn free_port() -> u16 {
    (0..ATTEMPTS)
        .map(random_port)
        .find(|&port| TcpListener::bind((Ipv4Addr::LOCALHOST, port)).is_ok())
        .unwrap_or_else(|| panic!("no free port in {PORT_RANGE:?} after {ATTEMPTS} tries"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_are_below_the_ephemeral_range_and_vary() {
        let picked: Vec<u16> = (0..100).map(random_port).collect();
        assert!(picked.iter().all(|p| PORT_RANGE.contains(p)), "{picked:?}");
        // Fresh seeds: 100 picks from 12,000 ports are not all one.
        assert!(picked.iter().any(|&p| p != picked[0]), "{picked:?}");
    }

    #[test]
    fn a_free_port_can_be_bound() {
        let port = free_port();
        assert!(PORT_RANGE.contains(&port));
        TcpListener::bind((Ipv4Addr::LOCALHOST, port)).expect("free a moment ago");
    }
}
