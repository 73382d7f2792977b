//! The words people write for a request, lowered into a [`Target`] by one
//! set of rules: a `Name: value` header, a URL with `user:password@`, a
//! `Host` name, a method or none (GET, or POST with a body). The CLI's
//! `-H`, `--host`, `-m` and URL go through these functions, and so does a
//! program that builds a [`RequestWords`]: the two cannot drift apart.

use super::target::{check_header, check_method, Target};
use super::TargetError;
use crate::url::{Url, UrlError};

/// Why a request's words cannot be lowered. Each says what is wrong; a
/// command line adds which flag to fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WordError {
    /// A header is not `Name: value`, or its name or value cannot go on
    /// the wire as written.
    #[error("invalid header {text:?}: {why}")]
    Header {
        /// The header as given.
        text: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// A Host name is not a host name, IPv4 or `[IPv6]` address with an
    /// optional port.
    #[error("invalid host {text:?}: {why}")]
    Host {
        /// The host as given.
        text: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// The method is not a plain word like GET.
    #[error("invalid method {0:?}: use a plain word like GET, POST or PUT")]
    Method(String),
    /// The URL does not parse.
    #[error(transparent)]
    Url(#[from] UrlError),
    /// A request line (`METHOD URL [BODY|<FILE]`) is not one request.
    #[error("{0}")]
    Request(String),
}

/// `Name: value`, checked by the same rule as a targets file's headers
/// ([`check_header`]); the name and value trimmed.
pub fn parse_header(text: &str) -> Result<(String, String), WordError> {
    let bad = |why| WordError::Header {
        text: text.to_string(),
        why,
    };
    let (name, value) = text.split_once(':').ok_or_else(|| bad("there is no ':'"))?;
    let name = name.trim();
    // The untrimmed value: a trailing line break is still one.
    check_header(name, value).map_err(|e| match e {
        TargetError::HeaderValue(_) => bad("the value contains a line break or NUL"),
        TargetError::HeaderName(_) | TargetError::Method(_) => {
            bad("the name must be a single word such as X-Request-Id")
        }
    })?;
    Ok((name.to_string(), value.trim().to_string()))
}

/// Checks a Host header's value: a host name, IPv4 address or `[IPv6]`
/// address, optionally with `:PORT` (1 to 65535).
pub fn check_host(value: &str) -> Result<(), WordError> {
    let bad = |why| WordError::Host {
        text: value.to_string(),
        why,
    };
    let name_ok = |n: &str| {
        n.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.' || b == b'_')
    };
    let (name, port) = match value.strip_prefix('[') {
        Some(v6) => {
            let (addr, rest) = v6
                .split_once(']')
                .ok_or_else(|| bad("the IPv6 address has no closing ']'"))?;
            if addr.is_empty()
                || !addr
                    .bytes()
                    .all(|b| b.is_ascii_hexdigit() || b == b':' || b == b'.')
            {
                return Err(bad("not an IPv6 address"));
            }
            match rest {
                "" => (addr, None),
                _ => (
                    addr,
                    Some(
                        rest.strip_prefix(':')
                            .ok_or_else(|| bad("unexpected text after ']'"))?,
                    ),
                ),
            }
        }
        None => {
            let (n, p) = match value.rsplit_once(':') {
                Some((n, p)) => (n, Some(p)),
                None => (value, None),
            };
            if n.is_empty() {
                return Err(bad("it is empty"));
            }
            if !name_ok(n) {
                return Err(bad(
                    "a host name has letters, digits, '-', '.' and '_' only",
                ));
            }
            (n, p)
        }
    };
    if name.is_empty() {
        return Err(bad("it is empty"));
    }
    if let Some(p) = port {
        if p.parse::<u16>().ok().filter(|&p| p != 0).is_none() {
            return Err(bad("the port must be a number from 1 to 65535"));
        }
    }
    Ok(())
}

/// `url` without `user:password@`, and `headers` with the Basic
/// Authorization header that carries them instead (as curl sends it), so
/// the URL holds no secret; a header the user gave wins.
pub fn userinfo(url: &str, mut headers: Vec<(String, String)>) -> (String, Vec<(String, String)>) {
    match crate::secrets::split_userinfo(url) {
        Some((plain, basic)) => {
            if !headers
                .iter()
                .any(|(n, _)| n.eq_ignore_ascii_case("authorization"))
            {
                headers.push(("Authorization".into(), basic));
            }
            (plain, headers)
        }
        None => (url.to_string(), headers),
    }
}

/// The method when none is given: GET, or POST when there is a body.
pub fn default_method(body: &[u8]) -> &'static str {
    if body.is_empty() {
        "GET"
    } else {
        "POST"
    }
}

/// Adds an `Authorization` header with `value` to a target that has none.
pub fn add_authorization(t: &mut Target, value: &str) {
    if !t
        .headers
        .iter()
        .any(|(n, _)| n.eq_ignore_ascii_case("authorization"))
    {
        t.headers.push(("Authorization".into(), value.to_string()));
    }
}

/// `host` as every target's Host header, replacing any given.
pub fn apply_host(targets: &mut [Target], host: &str) {
    for t in targets {
        t.headers.retain(|(n, _)| !n.eq_ignore_ascii_case("host"));
        t.headers.push(("Host".into(), host.to_string()));
    }
}

/// One request as a person says it: `pelt run URL -m M -H H --body B
/// --host N` in a program's words.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestWords {
    /// The URL, `user:password@` allowed (it becomes Basic auth).
    pub url: String,
    /// The method [default: GET, or POST with a body].
    pub method: Option<String>,
    /// Headers, each `Name: value`.
    pub headers: Vec<String>,
    /// The body.
    pub body: Vec<u8>,
    /// The Host header of the request, replacing any in `headers`.
    pub host: Option<String>,
}

impl RequestWords {
    /// A GET of `url`.
    pub fn get(url: impl Into<String>) -> RequestWords {
        RequestWords {
            url: url.into(),
            ..RequestWords::default()
        }
    }

    /// The target these words describe, by the CLI's rules.
    pub fn target(&self) -> Result<Target, WordError> {
        if let Some(m) = &self.method {
            check_method(m).map_err(|_| WordError::Method(m.clone()))?;
        }
        let headers = self
            .headers
            .iter()
            .map(|h| parse_header(h))
            .collect::<Result<Vec<_>, _>>()?;
        let (url, headers) = userinfo(&self.url, headers);
        let url = Url::parse(&url)?;
        let method = match &self.method {
            Some(m) => m.to_ascii_uppercase(),
            // A WebSocket upgrade is a GET; its body is the message.
            None if url.scheme.is_ws() => "GET".to_string(),
            None => default_method(&self.body).to_string(),
        };
        let mut targets = [Target {
            method,
            url,
            headers,
            body: self.body.clone(),
            weight: 1,
        }];
        if let Some(host) = &self.host {
            check_host(host)?;
            apply_host(&mut targets, host);
        }
        let [target] = targets;
        Ok(target)
    }
}

#[cfg(test)]
mod tests {

    use super::*;

    #[test]
    fn words_become_the_request_people_mean() {
        let t = RequestWords {
            url: "http://alice:s3cret@127.0.0.1:8080/api?q=1".into(),
            headers: vec!["X-A: 1".into(), "Host: old".into()],
            body: b"{}".to_vec(),
            host: Some("api.example:8080".into()),
            ..RequestWords::default()
        }
        .target()
        .unwrap();
        assert_eq!(t.method, "POST");
        assert_eq!(t.url.to_string(), "http://127.0.0.1:8080/api?q=1");
        assert!(t.headers.contains(&("X-A".into(), "1".into())));
        assert!(t
            .headers
            .contains(&("Host".into(), "api.example:8080".into())));
        assert!(!t.headers.contains(&("Host".into(), "old".into())));
        let auth = t
            .headers
            .iter()
            .find(|(n, _)| n == "Authorization")
            .unwrap();
        assert!(auth.1.starts_with("Basic "), "{auth:?}");
        assert_eq!(
            RequestWords::get("http://h/").target().unwrap().method,
            "GET"
        );
    }

    #[test]
    fn bad_words_say_what_is_wrong() {
        for (words, what) in [
            (
                RequestWords {
                    headers: vec!["NoColon".into()],
                    ..RequestWords::get("http://h/")
                },
                "no ':'",
            ),
            (
                RequestWords {
                    headers: vec!["X: a\nb".into()],
                    ..RequestWords::get("http://h/")
                },
                "line break",
            ),
            (
                RequestWords {
                    method: Some("GE T".into()),
                    ..RequestWords::get("http://h/")
                },
                "plain word",
            ),
            (
                RequestWords {
                    host: Some("h:0".into()),
                    ..RequestWords::get("http://h/")
                },
                "port must be",
            ),
            (
                RequestWords {
                    host: Some("[::1".into()),
                    ..RequestWords::get("http://h/")
                },
                "closing",
            ),
            (RequestWords::get("localhost:80"), "scheme"),
        ] {
            let e = words.target().unwrap_err().to_string();
            assert!(e.contains(what), "{words:?}: {e}");
        }
    }
}
