//! A deliberately small URL parser for load targets.
//!
//! pelt needs scheme, host, port and the request target, and must reject
//! anything else with a message that says how to fix it. A full WHATWG
//! parser (and its IDNA tables) would cost compile time and still accept
//! inputs that make no sense to benchmark (`ftp:`, `file:`, fragments).

use serde::{Deserialize, Serialize};
use std::fmt;

/// `http`, `https`, or WebSocket's `ws` and `wss` (RFC 6455 §3: an
/// HTTP/1.1 upgrade, plain or over TLS).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scheme {
    /// Plain HTTP.
    Http,
    /// HTTP over TLS.
    Https,
    /// WebSocket over plain TCP.
    Ws,
    /// WebSocket over TLS.
    Wss,
}

impl Scheme {
    /// The port used when the URL names none.
    pub fn default_port(self) -> u16 {
        match self {
            Scheme::Http | Scheme::Ws => 80,
            Scheme::Https | Scheme::Wss => 443,
        }
    }

    /// The scheme's name, as written in a URL.
    pub fn name(self) -> &'static str {
        match self {
            Scheme::Http => "http",
            Scheme::Https => "https",
            Scheme::Ws => "ws",
            Scheme::Wss => "wss",
        }
    }

    /// Whether connections of this scheme speak TLS.
    pub fn is_tls(self) -> bool {
        matches!(self, Scheme::Https | Scheme::Wss)
    }

    /// Whether this is a WebSocket scheme (`ws`, `wss`).
    pub fn is_ws(self) -> bool {
        matches!(self, Scheme::Ws | Scheme::Wss)
    }
}

/// A parsed `http(s)://host[:port][/path][?query]` URL.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Url {
    /// `http` or `https`.
    pub scheme: Scheme,
    /// Host name or address; IPv6 addresses without brackets.
    pub host: String,
    /// The port, the scheme's default when the URL names none.
    pub port: u16,
    /// Path and query, always starting with `/` (the HTTP request target).
    pub path_and_query: String,
}

/// What is wrong with a URL, phrased so the user can fix it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid URL '{input}': {reason}")]
pub struct UrlError {
    /// The URL as given, escaped to stay on one line.
    pub input: String,
    /// What is wrong with it.
    pub reason: String,
}

impl Url {
    /// Parses an absolute http, https, ws or wss URL.
    pub fn parse(input: &str) -> Result<Url, UrlError> {
        let err = |reason: &str| UrlError {
            // Escaped, so that an error about a pasted line break is still
            // one line.
            input: input.escape_debug().to_string(),
            reason: reason.to_string(),
        };
        let s = input.trim();
        let (scheme, rest) = if let Some(r) = strip_prefix_ci(s, "http://") {
            (Scheme::Http, r)
        } else if let Some(r) = strip_prefix_ci(s, "https://") {
            (Scheme::Https, r)
        } else if let Some(r) = strip_prefix_ci(s, "ws://") {
            (Scheme::Ws, r)
        } else if let Some(r) = strip_prefix_ci(s, "wss://") {
            (Scheme::Wss, r)
        } else if s.contains("://") {
            return Err(err(
                "only http://, https://, ws:// and wss:// are supported",
            ));
        } else {
            return Err(err(
                "it has no scheme; write it in full, like http://127.0.0.1:8080/",
            ));
        };
        let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let (authority, mut target) = rest.split_at(authority_end);
        if let Some(hash) = target.find('#') {
            // Fragments are never sent to a server; drop them like a browser.
            target = &target[..hash];
        }
        if authority.contains('@') {
            return Err(err(
                "user:password@ is not supported; send credentials with -H 'Authorization: ...'",
            ));
        }
        let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
            let close = v6
                .find(']')
                .ok_or_else(|| err("the IPv6 address has no closing ']'"))?;
            let host = &v6[..close];
            // Only an IPv6 address goes in brackets: `[[x]` read as host
            // `[x`, which no server resolves and which printed as a URL
            // that did not parse back.
            if host.parse::<std::net::Ipv6Addr>().is_err() {
                return Err(err(
                    "the text in brackets is not an IPv6 address; write one like http://[::1]:8080/, or a host name without brackets",
                ));
            }
            let after = &v6[close + 1..];
            let port = match after.strip_prefix(':') {
                Some(p) => Some(p),
                None if after.is_empty() => None,
                None => return Err(err("unexpected text after the IPv6 address")),
            };
            (host, port)
        } else {
            if authority.matches(':').count() > 1 {
                return Err(err(
                    "the host has more than one ':'; give one port, and put an IPv6 address in brackets, like http://[::1]:8080/",
                ));
            }
            match authority.rsplit_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (authority, None),
            }
        };
        if host.is_empty() {
            return Err(err("the host is missing, like http://127.0.0.1:8080/"));
        }
        if host
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || "/%[]".contains(c))
        {
            return Err(err("the host contains characters a host name cannot have"));
        }
        let port = match port {
            None => scheme.default_port(),
            Some(p) => p
                .parse::<u16>()
                .ok()
                .filter(|&p| p != 0)
                .ok_or_else(|| err("the port must be a number from 1 to 65535"))?,
        };
        if target.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(err(
                "the path contains spaces or control characters; percent-encode them (%20)",
            ));
        }
        let path_and_query = if target.is_empty() {
            "/".to_string()
        } else if target.starts_with('?') {
            format!("/{target}")
        } else {
            target.to_string()
        };
        Ok(Url {
            scheme,
            host: host.to_string(),
            port,
            path_and_query,
        })
    }

    /// Resolves a redirect's `Location` against this URL: absolute
    /// (`https://h/p`), scheme-relative (`//h/p`), absolute-path (`/p`),
    /// query-only (`?q`) or relative to this URL's directory (`p`, with
    /// `.` and `..` segments removed).
    pub fn join(&self, location: &str) -> Result<Url, UrlError> {
        let loc = location.trim();
        let scheme = self.scheme.name();
        // Absolute only when it starts with a scheme (RFC 3986: ALPHA
        // *(ALPHA / DIGIT / "+" / "-" / ".") ":"), not when `://` appears
        // later, as in `/login?next=http://example.test/`.
        let scheme_end = loc.find(':').filter(|&i| {
            let s = &loc[..i];
            s.starts_with(|c: char| c.is_ascii_alphabetic())
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        });
        if scheme_end.is_some() {
            // Url::parse refuses schemes other than http(s), with advice.
            return Url::parse(loc);
        }
        if let Some(rest) = loc.strip_prefix("//") {
            return Url::parse(&format!("{scheme}://{rest}"));
        }
        let origin = format!("{scheme}://{}", self.host_header());
        let path_only = self
            .path_and_query
            .split_once('?')
            .map_or(self.path_and_query.as_str(), |(p, _)| p);
        let target = if loc.is_empty() {
            self.path_and_query.clone()
        } else if loc.starts_with('/') {
            remove_dots(loc)
        } else if loc.starts_with('?') {
            format!("{path_only}{loc}")
        } else {
            let dir = &path_only[..path_only.rfind('/').map_or(0, |i| i + 1)];
            remove_dots(&format!("{dir}{loc}"))
        };
        Url::parse(&format!("{origin}{target}")).map_err(|mut e| {
            e.input = location.escape_debug().to_string();
            e
        })
    }

    /// Whether `other` has the same scheme, host and port.
    pub fn same_origin(&self, other: &Url) -> bool {
        self.scheme == other.scheme
            && self.port == other.port
            && self.host.eq_ignore_ascii_case(&other.host)
    }

    /// The `Host` header value: the port is omitted when it is the default.
    pub fn host_header(&self) -> String {
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        if self.port == self.scheme.default_port() {
            host
        } else {
            format!("{host}:{}", self.port)
        }
    }
}

impl fmt::Display for Url {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scheme = self.scheme.name();
        write!(
            f,
            "{scheme}://{}{}",
            self.host_header(),
            self.path_and_query
        )
    }
}

/// Removes `.` and `..` segments from an absolute path (RFC 3986 §5.2.4),
/// leaving any query as it is.
fn remove_dots(target: &str) -> String {
    let (path, query) = match target.find(['?', '#']) {
        Some(i) => target.split_at(i),
        None => (target, ""),
    };
    if !path.split('/').any(|s| s == "." || s == "..") {
        return target.to_string();
    }
    let mut out: Vec<&str> = Vec::new();
    let segments: Vec<&str> = path.split('/').skip(1).collect();
    let last = segments.len().saturating_sub(1);
    for (i, seg) in segments.iter().enumerate() {
        match *seg {
            "." => {}
            ".." => {
                out.pop();
            }
            s => out.push(s),
        }
        // A trailing `.` or `..` names a directory.
        if i == last && (*seg == "." || *seg == "..") {
            out.push("");
        }
    }
    format!("/{}{query}", out.join("/"))
}

fn strip_prefix_ci<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    let head = s.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &s[prefix.len()..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_common_forms() {
        let u = Url::parse("http://127.0.0.1:8080/a/b?x=1#frag").unwrap();
        assert_eq!(u.scheme, Scheme::Http);
        assert_eq!(u.host, "127.0.0.1");
        assert_eq!(u.port, 8080);
        assert_eq!(u.path_and_query, "/a/b?x=1");
        assert_eq!(u.host_header(), "127.0.0.1:8080");

        let u = Url::parse("https://localhost").unwrap();
        assert_eq!((u.port, u.path_and_query.as_str()), (443, "/"));
        assert_eq!(u.host_header(), "localhost");

        let u = Url::parse("http://[::1]:9000?q").unwrap();
        assert_eq!((u.host.as_str(), u.port), ("::1", 9000));
        assert_eq!(u.path_and_query, "/?q");
        assert_eq!(u.to_string(), "http://[::1]:9000/?q");
    }

    #[test]
    fn locations_resolve_against_the_current_url() {
        let base = Url::parse("http://h:8080/a/b/c?x=1").unwrap();
        for (loc, want) in [
            ("/ok", "http://h:8080/ok"),
            ("d", "http://h:8080/a/b/d"),
            ("../d?y=2", "http://h:8080/a/d?y=2"),
            ("./", "http://h:8080/a/b/"),
            ("?z", "http://h:8080/a/b/c?z"),
            ("//other:81/p", "http://other:81/p"),
            ("HTTPS://Other/q", "https://Other/q"),
            ("/a/./b/../c", "http://h:8080/a/c"),
            // `://` after the start is data, not a scheme.
            (
                "/login?next=http://example.test/",
                "http://h:8080/login?next=http://example.test/",
            ),
            ("e?u=https://x/", "http://h:8080/a/b/e?u=https://x/"),
        ] {
            assert_eq!(base.join(loc).unwrap().to_string(), want, "{loc}");
        }
        assert!(base.join("ftp://x/").is_err());
        assert!(base.join("mailto:a@b").is_err());
        assert!(base.join("/a b").is_err());
        let other = Url::parse("http://H:8080/zzz").unwrap();
        assert!(base.same_origin(&other));
        assert!(!base.same_origin(&Url::parse("https://h:8080/").unwrap()));
        assert!(!base.same_origin(&Url::parse("http://h:8081/").unwrap()));
    }

    #[test]
    fn rejects_with_advice() {
        for (bad, hint) in [
            ("127.0.0.1:8080", "no scheme"),
            ("ftp://x/", "only http"),
            ("http://:80/", "host is missing"),
            ("http://h:0/", "port"),
            ("http://h:99999/", "port"),
            ("http://h/a b", "percent-encode"),
            ("http://u:p@h/", "Authorization"),
            ("http://[::1/", "closing"),
        ] {
            let e = Url::parse(bad).unwrap_err().to_string();
            assert!(e.contains(hint), "{bad}: {e}");
        }
    }

    /// Found by the `url` fuzz target: `[[~~]` was taken as the host
    /// `[~~`, sent as `Host: [~~:801`, and printed as a URL that did not
    /// parse back.
    #[test]
    fn brackets_hold_only_an_ipv6_address() {
        for bad in [
            "http://[[~~]:801?",
            "http://[example.test]/",
            "http://[127.0.0.1]:80/",
            "http://[]/",
            "http://a]b/",
            "http://a[b:80/",
        ] {
            assert!(Url::parse(bad).is_err(), "{bad} was accepted");
        }
        let e = Url::parse("http://[[~~]:801?").unwrap_err().to_string();
        assert!(e.contains("not an IPv6 address"), "{e}");
        for good in [
            "http://[::1]:8080/",
            "http://[2001:db8::1]/",
            "http://[::ffff:127.0.0.1]/",
        ] {
            let u = Url::parse(good).unwrap();
            assert_eq!(Url::parse(&u.to_string()).unwrap(), u, "{good}");
        }
    }
}
