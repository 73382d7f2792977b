//! `pelt run`'s session flags (issue 16): `--cookies`, `--login`,
//! `-A/--basic-auth`, `--proxy`: their flags and their lowering into
//! `SessionOptions` and `ProxyOptions`.

use crate::UserError;
use clap::Args;
use pelt_core::targets::TargetsFormat;
use pelt_core::{Proxy, ProxyOptions, SessionOptions, Target};
use std::path::Path;

/// Cookies, a login and credentials: what makes each sender a user.
#[derive(Debug, Clone, Args)]
pub struct SessionArgs {
    /// Give each sender (an HTTP/1.1 connection, or an HTTP/2 stream: a
    /// simulated user) a
    /// cookie jar: cookies the server sets go back on that sender's later
    /// requests, by RFC 6265's domain, path, expiry and Secure rules, and
    /// stay when the sender reconnects. In rate mode a request goes to
    /// whichever sender is free, so a jar is a connection's, not a
    /// sequence of requests'. The report counts requests with a cookie.
    #[arg(long = "cookies")]
    pub cookies: bool,

    /// Before its first measured request, each sender sends this request
    /// once, 'METHOD URL [BODY|<FILE]' (like 'POST
    /// http://127.0.0.1:8080/login user=a&pass=b'), and keeps its cookies
    /// (implies --cookies). Logins are made before the clock starts and
    /// are in no figure but their own count; a login answered with other
    /// than 2xx or 3xx stops the run before any load is sent.
    #[arg(long = "login", value_name = "'METHOD URL [BODY|<FILE]'")]
    pub login: Option<String>,

    /// Send 'Authorization: Basic' with these credentials on every
    /// request (and the login); kept out of every file pelt writes.
    #[arg(short = 'A', long = "basic-auth", value_name = "USER:PASS")]
    pub basic_auth: Option<String>,
}

impl SessionArgs {
    /// The session options these flags ask for.
    pub fn options(&self) -> Result<SessionOptions, UserError> {
        let mut login = self.login.as_deref().map(parse_login).transpose()?;
        if let (Some(l), Some(header)) = (&mut login, self.basic_auth_header()?) {
            add_authorization(l, &header);
        }
        Ok(SessionOptions {
            cookies: self.cookies || login.is_some(),
            login,
        })
    }

    /// `-A user:pass` as an `Authorization` header value.
    pub fn basic_auth_header(&self) -> Result<Option<String>, UserError> {
        let Some(creds) = &self.basic_auth else {
            return Ok(None);
        };
        if !creds.contains(':') {
            // The value is not quoted: it is a secret.
            return Err(UserError(
                "-A/--basic-auth: expected USER:PASS, found no ':'; write it like -A alice:secret"
                    .into(),
            ));
        }
        Ok(Some(pelt_store::secrets::basic_authorization(creds)))
    }

    /// Adds `-A`'s header to every target that has no Authorization.
    pub fn apply(&self, targets: &mut [Target]) -> Result<(), UserError> {
        if let Some(header) = self.basic_auth_header()? {
            for t in targets {
                add_authorization(t, &header);
            }
        }
        Ok(())
    }
}

fn add_authorization(t: &mut Target, value: &str) {
    if !t
        .headers
        .iter()
        .any(|(n, _)| n.eq_ignore_ascii_case("authorization"))
    {
        t.headers.push(("Authorization".into(), value.to_string()));
    }
}

/// `METHOD URL [BODY|<FILE]`: the targets file's siege line, method first
/// (as the request line reads). Relative `<FILE`s are from the current
/// directory.
pub fn parse_login(text: &str) -> Result<Target, UserError> {
    let bad = |why: &str| {
        UserError(format!(
            "--login: {why}; write it as 'METHOD URL [BODY|<FILE]', like 'POST http://127.0.0.1:8080/login user=a&pass=b'"
        ))
    };
    let text = text.trim();
    if text.contains('\n') {
        return Err(bad("expected one line"));
    }
    let mut words = text.splitn(3, char::is_whitespace);
    let (Some(method), Some(url)) = (words.next(), words.next()) else {
        return Err(bad("expected a method and a URL"));
    };
    if method.contains("://") || !method.chars().all(|c| c.is_ascii_alphabetic()) {
        return Err(bad(&format!(
            "expected a method like POST first, found {method:?}"
        )));
    }
    let rest = words.next().unwrap_or("").trim();
    let line = format!("{url} {} {rest}", method.to_ascii_uppercase());
    let mut targets =
        pelt_core::targets::parse(&line, TargetsFormat::Siege, "--login", Path::new("."))
            // Its message alone: the file name and line (`--login:1`)
            // would repeat the flag that bad() names.
            .map_err(|e| bad(&e.message))?;
    match targets.len() {
        1 => Ok(targets.remove(0)),
        _ => Err(bad("expected one request")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_login_line_is_method_url_body() {
        let t = parse_login("POST http://127.0.0.1:1/login user=a&pass=b").unwrap();
        assert_eq!(t.method, "POST");
        assert_eq!(t.url.path_and_query, "/login");
        assert_eq!(t.body, b"user=a&pass=b");
        let t = parse_login("get http://127.0.0.1:1/").unwrap();
        assert_eq!((t.method.as_str(), t.body.len()), ("GET", 0));
        for bad in [
            "",
            "POST",
            "http://h/ POST",
            "POST notaurl",
            "P0ST http://h/",
        ] {
            assert!(parse_login(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_bad_login_names_the_flag_once() {
        // Issue 22 §8: "--login: --login:1: ..." named it twice.
        let e = parse_login("POST notaurl").unwrap_err().0;
        assert!(e.starts_with("--login: "), "{e}");
        assert!(!e.contains("--login:1"), "{e}");
        assert_eq!(e.matches("--login").count(), 1, "{e}");
    }
}

/// A forward proxy between pelt and the targets.
#[derive(Debug, Clone, Args)]
pub struct ProxyArgs {
    /// Send requests through this forward proxy, http://[USER:PASS@]HOST:PORT:
    /// plain-HTTP targets in absolute form, https:// ones through a
    /// CONNECT tunnel (TLS end to end with the origin, its certificate
    /// checked against the origin's name). The connect time is then the
    /// TCP connect to the proxy; the tunnel's set-up is reported apart.
    /// HTTP/1.1 only. The credentials go in no file.
    #[arg(long = "proxy", value_name = "URL")]
    pub proxy: Option<String>,

    /// Take the proxy from HTTP_PROXY, HTTPS_PROXY and NO_PROXY (or their
    /// lower-case forms). Without it they are ignored, so a stray variable
    /// never changes what is measured.
    #[arg(long = "proxy-from-env", conflicts_with = "proxy")]
    pub proxy_from_env: bool,
}

impl ProxyArgs {
    /// The proxy options these flags ask for.
    pub fn options(&self) -> Result<ProxyOptions, UserError> {
        if let Some(url) = &self.proxy {
            let p = parse_proxy(url, "--proxy")?;
            return Ok(ProxyOptions {
                http: Some(p.clone()),
                https: Some(p),
                no_proxy: Vec::new(),
            });
        }
        if !self.proxy_from_env {
            return Ok(ProxyOptions::default());
        }
        let var = |name: &str| {
            [name.to_string(), name.to_ascii_lowercase()]
                .iter()
                .find_map(|n| std::env::var(n).ok().filter(|v| !v.trim().is_empty()))
        };
        let from = |name: &str| var(name).map(|url| parse_proxy(&url, name)).transpose();
        Ok(ProxyOptions {
            http: from("HTTP_PROXY")?,
            https: from("HTTPS_PROXY")?,
            no_proxy: var("NO_PROXY")
                .map(|v| {
                    v.split(',')
                        .map(|h| h.trim().to_string())
                        .filter(|h| !h.is_empty())
                        .collect()
                })
                .unwrap_or_default(),
        })
    }
}

/// `http://[user:pass@]host[:port]` (a trailing `/` allowed) as a proxy;
/// `from` names the flag or variable in errors.
pub fn parse_proxy(text: &str, from: &str) -> Result<Proxy, UserError> {
    let bad = |why: String| {
        UserError(format!(
            "{from}: {why}; give an HTTP proxy like http://127.0.0.1:3128 or http://user:pass@proxy:3128"
        ))
    };
    let text = text.trim();
    let scheme = text.split_once("://").map(|(s, _)| s.to_ascii_lowercase());
    match scheme.as_deref() {
        Some("http") => {}
        Some(s) => {
            return Err(bad(format!(
                "unsupported proxy scheme '{s}://' (pelt speaks to HTTP proxies only)"
            )))
        }
        None => return Err(bad("expected a URL starting with http://".into())),
    }
    let (plain, authorization) = match pelt_store::secrets::split_userinfo(text) {
        Some((plain, basic)) => (plain, Some(basic)),
        None => (text.to_string(), None),
    };
    let url = pelt_core::Url::parse(&plain).map_err(|e| bad(e.reason))?;
    if url.path_and_query != "/" {
        return Err(bad(format!(
            "a proxy URL has no path, found '{}'",
            url.path_and_query
        )));
    }
    Ok(Proxy {
        host: url.host,
        port: url.port,
        authenticated: authorization.is_some(),
        authorization,
    })
}

#[cfg(test)]
mod proxy_tests {
    use super::*;

    #[test]
    fn proxy_urls_are_http_with_optional_credentials() {
        let p = parse_proxy("http://u:p%40ss@127.0.0.1:3128", "--proxy").unwrap();
        assert_eq!((p.host.as_str(), p.port), ("127.0.0.1", 3128));
        assert_eq!(p.authorization.as_deref(), Some("Basic dTpwQHNz"));
        let p = parse_proxy("http://proxy/", "--proxy").unwrap();
        assert_eq!((p.port, p.authorization), (80, None));
        for bad in [
            "socks5://127.0.0.1:1080",
            "https://p:3128",
            "127.0.0.1:3128",
            "http://p:3128/x",
        ] {
            let e = parse_proxy(bad, "--proxy").unwrap_err().0;
            assert!(e.starts_with("--proxy: "), "{e}");
        }
    }
}
