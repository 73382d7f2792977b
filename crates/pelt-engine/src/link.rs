//! The network interface a target is reached through, and its speed, so
//! a run that fills the link is told so (seed 002's author saturated his
//! own line and both servers looked the same). Linux's routing table
//! (`/proc/net/route`) and `/sys/class/net/IFACE/speed`; anything else, or
//! a loopback address, or an interface that reports no speed (loopback,
//! most virtual ones), gives `None`.

use pelt_core::Link;
use std::net::{IpAddr, Ipv4Addr};

/// The link to `ip`, when the system names one with a speed.
pub fn link_to(ip: IpAddr) -> Option<Link> {
    let IpAddr::V4(v4) = ip else {
        // IPv6 routes are left out: loopback ([::1]) is what pelt loads
        // here, and a wrong guess would be worse than none.
        return None;
    };
    if v4.is_loopback() {
        return None;
    }
    let table = std::fs::read_to_string("/proc/net/route").ok()?;
    let interface = route(&table, v4)?;
    let speed = std::fs::read_to_string(format!("/sys/class/net/{interface}/speed")).ok()?;
    Some(Link {
        speed_mbps: parse_speed(&speed)?,
        interface,
    })
}

/// The interface of the most specific route to `ip` in a
/// `/proc/net/route` table (lowest metric among equals).
fn route(table: &str, ip: Ipv4Addr) -> Option<String> {
    // Addresses and masks are in the kernel's byte order, printed as hex:
    // on little-endian machines 127.0.0.1 reads 0100007F.
    let ip = u32::from_ne_bytes(ip.octets());
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            let hex = |i: usize| u32::from_str_radix(f.get(i)?, 16).ok();
            let (dest, metric, mask) = (hex(1)?, f.get(6)?.parse::<u32>().ok()?, hex(7)?);
            (ip & mask == dest).then(|| (mask.count_ones(), metric, f[0].to_string()))
        })
        .max_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)))
        .map(|(_, _, iface)| iface)
}

/// `/sys/class/net/IFACE/speed`: megabits per second, -1 when unknown.
fn parse_speed(text: &str) -> Option<u64> {
    text.trim()
        .parse::<i64>()
        .ok()
        .filter(|&s| s > 0)
        .map(|s| s as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_most_specific_route_wins() {
        // This machine's table: a default route and its /24, both eth0,
        // plus a /16 on another interface (little-endian byte order).
        let table =
            "Iface\tDestination\tGateway\tFlags\tRefCnt\tUse\tMetric\tMask\tMTU\tWindow\tIRTT\n\
                     eth0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\n\
                     eth0\t000200C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n\
                     wg0\t0000A8C0\t00000000\t0001\t0\t0\t0\t0000FFFF\t0\t0\t0\n";
        if cfg!(target_endian = "little") {
            assert_eq!(
                route(table, Ipv4Addr::new(192, 0, 2, 7)).as_deref(),
                Some("eth0")
            );
            assert_eq!(
                route(table, Ipv4Addr::new(192, 168, 4, 1)).as_deref(),
                Some("wg0")
            );
            assert_eq!(
                route(table, Ipv4Addr::new(8, 8, 8, 8)).as_deref(),
                Some("eth0")
            );
        }
        assert_eq!(
            route("Iface\tDestination\n", Ipv4Addr::new(8, 8, 8, 8)),
            None
        );
    }

    #[test]
    fn speeds_unknown_are_none() {
        assert_eq!(parse_speed("1000\n"), Some(1000));
        assert_eq!(parse_speed("-1\n"), None);
        assert_eq!(parse_speed(""), None);
        assert_eq!(link_to("127.0.0.1".parse().unwrap()), None);
        assert_eq!(link_to("::1".parse().unwrap()), None);
    }
}
