//! `--source-addresses`: the local addresses a run's TCP connections are
//! spread over (bound before connecting), so that more connections reach
//! one destination than one source address has ephemeral ports for
//! (~28,000 with Linux's default `ip_local_port_range`, at most ~64,000).

use std::collections::HashSet;
use std::net::IpAddr;

/// Most addresses a list may name (a /16 of IPv4): a bound on what a typo
/// like `/8` makes pelt hold, and more than any machine has ports to use.
pub const MAX_SOURCE_ADDRESSES: usize = 65_536;

/// Why a `--source-addresses` value did not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid --source-addresses '{text}': {problem}; give local addresses like 127.0.0.2-127.0.0.9, 127.0.0.0/29 or 10.0.0.1,10.0.0.2")]
pub struct SourceAddressError {
    /// The value as given, escaped to stay on one line.
    pub text: String,
    /// What is wrong with it.
    pub problem: String,
}

/// Parses a comma-separated list of addresses, ranges (`FIRST-LAST`, both
/// included) and CIDR blocks (`ADDRESS/BITS`, every address in the
/// block), IPv4 or IPv6, into the addresses in order, each once.
pub fn parse_source_addresses(text: &str) -> Result<Vec<IpAddr>, SourceAddressError> {
    let bad = |problem: String| SourceAddressError {
        text: text.escape_debug().to_string(),
        problem,
    };
    let ip = |s: &str| {
        s.trim().parse::<IpAddr>().map_err(|_| {
            bad(format!(
                "'{}' is not an IP address",
                s.trim().escape_debug()
            ))
        })
    };
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    for item in text.split(',').map(str::trim) {
        if item.is_empty() {
            return Err(bad("an entry is empty".into()));
        }
        let (first, count) = if let Some((a, b)) = item.split_once('-') {
            let (a, b) = (ip(a)?, ip(b)?);
            let (Some(lo), Some(hi)) = (same_family(a, a), same_family(a, b)) else {
                return Err(bad(format!("{a} and {b} are of different families")));
            };
            if hi < lo {
                return Err(bad(format!("the range {a}-{b} runs backwards")));
            }
            (a, hi - lo + 1)
        } else if let Some((a, bits)) = item.split_once('/') {
            let a = ip(a)?;
            let width = if a.is_ipv4() { 32 } else { 128 };
            let bits: u32 = bits
                .trim()
                .parse()
                .ok()
                .filter(|&b| b <= width)
                .ok_or_else(|| {
                    bad(format!(
                        "'/{}' is not a prefix length from 0 to {width}",
                        bits.trim().escape_debug()
                    ))
                })?;
            let size = 1u128.checked_shl(width - bits).unwrap_or(0);
            let base = to_u128(a) & !(size.wrapping_sub(1));
            (from_u128(a, base), if size == 0 { u128::MAX } else { size })
        } else {
            (ip(item)?, 1)
        };
        if count > (MAX_SOURCE_ADDRESSES - out.len()) as u128 {
            return Err(bad(format!(
                "more than {MAX_SOURCE_ADDRESSES} addresses in all"
            )));
        }
        for i in 0..count {
            let addr = from_u128(first, to_u128(first) + i);
            if addr.is_unspecified() || addr.is_multicast() {
                return Err(bad(format!("{addr} cannot be a connection's source")));
            }
            if seen.insert(addr) {
                out.push(addr);
            }
        }
    }
    Ok(out)
}

/// `b` as a number when it is of `a`'s family.
fn same_family(a: IpAddr, b: IpAddr) -> Option<u128> {
    (a.is_ipv4() == b.is_ipv4()).then(|| to_u128(b))
}

fn to_u128(a: IpAddr) -> u128 {
    match a {
        IpAddr::V4(v) => u128::from(u32::from(v)),
        IpAddr::V6(v) => u128::from(v),
    }
}

/// `n` as an address of `like`'s family (`n` fits: it came from one).
fn from_u128(like: IpAddr, n: u128) -> IpAddr {
    match like {
        IpAddr::V4(_) => IpAddr::V4((n as u32).into()),
        IpAddr::V6(_) => IpAddr::V6(n.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(text: &str) -> Vec<String> {
        parse_source_addresses(text)
            .unwrap()
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn ranges_blocks_and_lists() {
        assert_eq!(
            list("127.0.0.2-127.0.0.4"),
            ["127.0.0.2", "127.0.0.3", "127.0.0.4"]
        );
        assert_eq!(
            list("127.0.0.9/30"),
            ["127.0.0.8", "127.0.0.9", "127.0.0.10", "127.0.0.11"]
        );
        assert_eq!(list("10.0.0.1, 10.0.0.1,::1"), ["10.0.0.1", "::1"]);
        assert_eq!(list("fd00::1-fd00::2"), ["fd00::1", "fd00::2"]);
        assert_eq!(list("127.0.0.5/32"), ["127.0.0.5"]);
        assert_eq!(
            parse_source_addresses("127.0.0.0/16").unwrap().len(),
            65_536
        );
        assert_eq!(
            parse_source_addresses("127.0.255.255-127.1.0.0")
                .unwrap()
                .len(),
            2
        );
    }

    #[test]
    fn mistakes_are_named_with_an_example() {
        for (text, says) in [
            ("", "an entry is empty"),
            ("127.0.0.2,", "an entry is empty"),
            ("127.0.0.300", "'127.0.0.300' is not an IP address"),
            ("127.0.0.9-127.0.0.2", "runs backwards"),
            ("127.0.0.1-::1", "different families"),
            ("127.0.0.0/33", "not a prefix length from 0 to 32"),
            ("127.0.0.0/x", "not a prefix length"),
            ("127.0.0.0/8", "more than 65536 addresses"),
            ("::/0", "more than 65536 addresses"),
            ("0.0.0.0", "cannot be a connection's source"),
            ("host.example", "not an IP address"),
        ] {
            let e = parse_source_addresses(text).unwrap_err().to_string();
            assert!(e.contains(says), "{text}: {e}");
            assert!(e.starts_with("invalid --source-addresses '"), "{e}");
            assert!(e.ends_with("or 10.0.0.1,10.0.0.2"), "{e}");
            assert!(!e.contains('\n'));
        }
    }
}
