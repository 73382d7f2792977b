//! A sender's cookie jar. The RFC 6265 rules (domain and path matching,
//! `Expires`/`Max-Age`, `Secure`, replacement by name) are
//! `cookie_store`'s; this module only moves headers in and out of it, off
//! the hot path of runs without `--cookies`.

use cookie_store::CookieStore;

/// Cookies a sender has been given, by the origin and path that set them.
#[derive(Debug, Default)]
pub(crate) struct Jar {
    store: CookieStore,
    /// The last `Cookie` header line built (reused, so a request with
    /// cookies allocates nothing once it has grown).
    line: Vec<u8>,
}

/// The URL a jar matches cookies against: a target's, in the form
/// `cookie_store` reads.
pub(crate) fn cookie_url(url: &pelt_core::Url) -> url::Url {
    url::Url::parse(&url.to_string()).expect("a pelt URL is a valid URL")
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
                // A cookie the store refuses is simply not kept.
                let _ = self.store.parse(value, url);
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
        for (name, value) in self.store.get_request_values(url) {
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
}
