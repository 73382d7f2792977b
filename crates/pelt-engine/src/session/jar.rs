//! A sender's cookie jar, by RFC 6265's rules: domain and path matching,
//! `Expires`/`Max-Age` (an expired cookie removes the one it names),
//! `Secure`, replacement by name, domain and path. `Set-Cookie` values
//! are parsed by the `cookie` crate; this module keeps what they say.
//!
//! The jar is a short list, not a store of nested maps: a virtual user
//! holds one, with a cookie or two, and at 1,000 users the maps'
//! per-user cost (about 1.7 KB for one cookie) was a tenth of the run's
//! memory (issue 25's comparison with Locust). A list searched in full
//! is also the fastest for the few cookies a site sets.

/// Cookies a sender has been given, by the origin and path that set them.
#[derive(Debug, Default)]
pub(crate) struct Jar {
    cookies: Vec<Stored>,
    /// The last `Cookie` header line built (reused, so a request with
    /// cookies allocates nothing once it has grown).
    line: Vec<u8>,
}

/// One cookie as the jar keeps it.
#[derive(Debug)]
struct Stored {
    name: Box<str>,
    value: Box<str>,
    /// The host that set it (`host_only`), or the `Domain` it names,
    /// lower case, without a leading dot.
    domain: Box<str>,
    path: Box<str>,
    /// When it expires, in Unix seconds; `i64::MAX` for a session cookie.
    expires: i64,
    host_only: bool,
    secure: bool,
}

/// The URL a jar matches cookies against: a target's, as `url` parses
/// it (its host lower-cased, an IPv6 host in brackets).
pub(crate) fn cookie_url(url: &pelt_core::Url) -> url::Url {
    url::Url::parse(&url.to_string()).expect("a pelt URL is a valid URL")
}

fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// RFC 6265 5.1.3: `host` is `domain` or a name under it (never an IP
/// address under a suffix).
fn domain_matches(host: &str, domain: &str) -> bool {
    host == domain
        || (host.len() > domain.len()
            && host.ends_with(domain)
            && host.as_bytes()[host.len() - domain.len() - 1] == b'.'
            && host.parse::<std::net::Ipv4Addr>().is_err()
            && !host.starts_with('['))
}

/// RFC 6265 5.1.4: the request path is the cookie's, or below it.
fn path_matches(request: &str, cookie: &str) -> bool {
    request == cookie
        || (request.starts_with(cookie)
            && (cookie.ends_with('/') || request.as_bytes().get(cookie.len()) == Some(&b'/')))
}

/// RFC 6265 5.1.4: a cookie without a `Path` gets its URL's directory.
fn default_path(url: &url::Url) -> &str {
    let path = url.path();
    match path.rfind('/') {
        Some(i) if i > 0 => &path[..i],
        _ => "/",
    }
}

/// Whether `url` may carry `Secure` cookies: https, or a loopback name
/// (a secure context, as browsers treat it).
fn is_secure(url: &url::Url) -> bool {
    url.scheme() == "https"
        || match url.host() {
            Some(url::Host::Domain(d)) => d == "localhost",
            Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
            Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
            None => false,
        }
}

impl Jar {
    /// Keeps the cookies that the response head `head` (status line and
    /// headers, as received) sets for a request to `url`. Cookies that
    /// fail the RFC's checks (a `Domain` the URL's host is not in, a
    /// malformed one) are dropped, as a browser drops them; an expired one
    /// removes the cookie of that name. `Secure` cookies go back over
    /// https only (loopback names count as secure, as in browsers).
    pub fn absorb(&mut self, head: &[u8], url: &url::Url) {
        let mut headers = vec![httparse::EMPTY_HEADER; 256];
        let mut resp = httparse::Response::new(&mut headers);
        if resp.parse(head).is_err() {
            return;
        }
        self.absorb_values(
            resp.headers
                .iter()
                .filter(|h| h.name.eq_ignore_ascii_case("set-cookie"))
                .map(|h| h.value),
            url,
        );
    }

    /// Keeps the cookies of `Set-Cookie` header values (HTTP/2's, or a
    /// parsed head's) received for a request to `url`.
    pub fn absorb_values<'a>(&mut self, values: impl Iterator<Item = &'a [u8]>, url: &url::Url) {
        for value in values {
            if let Ok(value) = std::str::from_utf8(value) {
                // A cookie the rules refuse is simply not kept.
                self.keep(value, url);
            }
        }
    }

    /// Keeps one `Set-Cookie` value received for a request to `url`
    /// (RFC 6265 5.3), unless it is malformed or names a domain `url`'s
    /// host is not in.
    fn keep(&mut self, value: &str, url: &url::Url) {
        let Ok(raw) = cookie::Cookie::parse(value) else {
            return;
        };
        let Some(host) = url.host_str() else {
            return;
        };
        let (domain, host_only) = match raw.domain() {
            None => (host.to_owned(), true),
            Some(d) => {
                let d = d.trim().to_ascii_lowercase();
                if d.is_empty() || !d.is_ascii() || !domain_matches(host, &d) {
                    return;
                }
                (d, false)
            }
        };
        let path = match raw.path() {
            Some(p) if p.starts_with('/') => p,
            _ => default_path(url),
        };
        // Max-Age wins over Expires; neither makes a session cookie.
        let expires = match (raw.max_age(), raw.expires_datetime()) {
            (Some(age), _) => unix_now().saturating_add(age.whole_seconds()),
            (None, Some(at)) => at.unix_timestamp(),
            (None, None) => i64::MAX,
        };
        let same = self
            .cookies
            .iter()
            .position(|c| &*c.name == raw.name() && *c.domain == *domain && &*c.path == path);
        if expires <= unix_now() {
            // Already expired: it removes the cookie it names.
            if let Some(i) = same {
                self.cookies.remove(i);
            }
            return;
        }
        let stored = Stored {
            name: raw.name().into(),
            value: raw.value().into(),
            domain: domain.into(),
            path: path.into(),
            expires,
            host_only,
            secure: raw.secure().unwrap_or(false),
        };
        match same {
            Some(i) => self.cookies[i] = stored,
            None => {
                // One at a time: a user holds a cookie or two, and a
                // vector's first growth would make room for four.
                self.cookies.reserve_exact(1);
                self.cookies.push(stored)
            }
        }
    }

    /// HTTP/2: keeps the cookies a response's `headers` set for a request
    /// to `url`.
    pub fn absorb_headers(&mut self, headers: &http::HeaderMap, url: &url::Url) {
        let set = headers.get_all(http::header::SET_COOKIE);
        self.absorb_values(set.iter().map(|v| v.as_bytes()), url);
    }

    /// HTTP/2: adds a `cookie` header with the jar's cookies for `url` to
    /// `headers` (after any the user gave); whether any applied.
    pub fn add_to(&mut self, headers: &mut http::HeaderMap, url: &url::Url) -> bool {
        match self
            .value(url)
            .and_then(|v| http::HeaderValue::from_bytes(v).ok())
        {
            Some(v) => {
                headers.append(http::header::COOKIE, v);
                true
            }
            None => false,
        }
    }

    /// The `Cookie` header's value for a request to `url` (`a=1; b=2`),
    /// or `None` when no cookie in the jar applies.
    fn value(&mut self, url: &url::Url) -> Option<&[u8]> {
        let line = self.header_line(url)?;
        Some(&line[b"Cookie: ".len()..line.len() - 2])
    }

    /// The `Cookie: a=1; b=2\r\n` line for a request to `url`, or `None`
    /// when no cookie in the jar applies (none set, all expired, or for
    /// other paths or hosts).
    pub fn header_line(&mut self, url: &url::Url) -> Option<&[u8]> {
        self.line.clear();
        if self.cookies.is_empty() {
            return None;
        }
        let (host, path) = (url.host_str().unwrap_or_default(), url.path());
        let (secure, now) = (is_secure(url), unix_now());
        // Expired cookies go as they are met.
        self.cookies.retain(|c| c.expires > now);
        for c in &self.cookies {
            let host_ok = match c.host_only {
                true => *c.domain == *host,
                false => domain_matches(host, &c.domain),
            };
            if !host_ok || !path_matches(path, &c.path) || (c.secure && !secure) {
                continue;
            }
            let (name, value) = (&c.name, &c.value);
            self.line.extend_from_slice(if self.line.is_empty() {
                b"Cookie: "
            } else {
                b"; "
            });
            self.line.extend_from_slice(name.as_bytes());
            self.line.push(b'=');
            self.line.extend_from_slice(value.as_bytes());
        }
        if self.line.is_empty() {
            return None;
        }
        self.line.extend_from_slice(b"\r\n");
        Some(&self.line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> url::Url {
        url::Url::parse(s).unwrap()
    }

    fn head(set_cookies: &[&str]) -> Vec<u8> {
        let mut h = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n".to_vec();
        for c in set_cookies {
            h.extend_from_slice(format!("Set-Cookie: {c}\r\n").as_bytes());
        }
        h.extend_from_slice(b"\r\n");
        h
    }

    /// The cookies sent to `u`, sorted (the jar's order is its own).
    fn cookie(jar: &mut Jar, u: &str) -> Option<String> {
        jar.header_line(&url(u)).map(|l| {
            let l = std::str::from_utf8(l).unwrap();
            let l = l
                .strip_prefix("Cookie: ")
                .unwrap()
                .strip_suffix("\r\n")
                .unwrap();
            let mut parts: Vec<&str> = l.split("; ").collect();
            parts.sort();
            parts.join("; ")
        })
    }

    #[test]
    fn a_cookie_goes_back_only_under_its_path() {
        let mut jar = Jar::default();
        jar.absorb(
            &head(&["sid=abc; Path=/app", "theme=dark"]),
            &url("http://127.0.0.1:8080/app/login"),
        );
        // Both apply under /app (theme's default path is /app).
        assert_eq!(
            cookie(&mut jar, "http://127.0.0.1:8080/app/page").as_deref(),
            Some("sid=abc; theme=dark")
        );
        assert_eq!(cookie(&mut jar, "http://127.0.0.1:8080/other"), None);
        // Another host never sees them.
        assert_eq!(cookie(&mut jar, "http://127.0.0.2:8080/app/page"), None);
    }

    #[test]
    fn an_expired_cookie_is_not_sent_and_removes_the_one_it_replaces() {
        let mut jar = Jar::default();
        let u = url("http://127.0.0.1/");
        jar.absorb(&head(&["sid=abc", "old=x; Max-Age=0"]), &u);
        assert_eq!(
            cookie(&mut jar, "http://127.0.0.1/").as_deref(),
            Some("sid=abc")
        );
        jar.absorb(
            &head(&["sid=gone; Expires=Thu, 01 Jan 1970 00:00:00 GMT"]),
            &u,
        );
        assert_eq!(cookie(&mut jar, "http://127.0.0.1/"), None);
        // A later one in the future is kept.
        jar.absorb(&head(&["sid=new; Max-Age=3600"]), &u);
        assert_eq!(
            cookie(&mut jar, "http://127.0.0.1/").as_deref(),
            Some("sid=new")
        );
    }

    #[test]
    fn secure_cookies_go_over_https_only() {
        // (Loopback names count as secure contexts, as in browsers: the
        // rule shows on another name.)
        let mut jar = Jar::default();
        jar.absorb(
            &head(&["s=1; Secure", "p=2"]),
            &url("https://example.test/"),
        );
        assert_eq!(
            cookie(&mut jar, "https://example.test/").as_deref(),
            Some("p=2; s=1")
        );
        assert_eq!(
            cookie(&mut jar, "http://example.test/").as_deref(),
            Some("p=2")
        );
    }

    #[test]
    fn a_domain_the_host_is_not_in_is_refused() {
        let mut jar = Jar::default();
        jar.absorb(
            &head(&["a=1; Domain=example.com"]),
            &url("http://localhost/"),
        );
        assert_eq!(cookie(&mut jar, "http://localhost/"), None);
    }

    #[test]
    fn a_domain_cookie_reaches_names_under_it_and_a_host_cookie_does_not() {
        let mut jar = Jar::default();
        jar.absorb(
            &head(&["d=1; Domain=.Example.test", "h=2"]),
            &url("http://www.example.test/"),
        );
        assert_eq!(
            cookie(&mut jar, "http://www.example.test/").as_deref(),
            Some("d=1; h=2")
        );
        assert_eq!(
            cookie(&mut jar, "http://api.example.test/").as_deref(),
            Some("d=1")
        );
        assert_eq!(cookie(&mut jar, "http://notexample.test/"), None);
        // A cookie of the same name, domain and path replaces it; one of
        // another path sits beside it.
        jar.absorb(
            &head(&[
                "d=3; Domain=example.test",
                "d=4; Domain=example.test; Path=/x",
            ]),
            &url("http://www.example.test/"),
        );
        assert_eq!(
            cookie(&mut jar, "http://api.example.test/x/y").as_deref(),
            Some("d=3; d=4")
        );
        // An IP address is never under a domain, and malformed values
        // are dropped.
        jar.absorb(
            &head(&["ip=1; Domain=0.1", "=novalue", "junk"]),
            &url("http://127.0.0.1/"),
        );
        assert_eq!(cookie(&mut jar, "http://127.0.0.1/"), None);
        assert!(!path_matches("/xy", "/x") && path_matches("/x/y", "/x"));
    }
}
