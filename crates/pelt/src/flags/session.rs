//! `pelt run`'s session flags (issue 16): `--cookies`, `--login`,
//! `-A/--basic-auth`, `--proxy`: their flags and their lowering into
//! `SessionOptions` and `ProxyOptions`.

use super::UserError;
use clap::Args;
use pelt_core::config::add_authorization;
use pelt_core::{Proxy, ProxyOptions, ProxyUrlError, SessionOptions, Target};

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
        // The library's builder: a program's login is the CLI's.
        let mut session = match self.login.as_deref() {
            Some(line) => login_session(line)?,
            None => SessionOptions::default(),
        };
        session.cookies |= self.cookies;
        if let (Some(l), Some(header)) = (&mut session.login, self.basic_auth_header()?) {
            add_authorization(l, &header);
        }
        Ok(session)
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
        Ok(Some(pelt_core::secrets::basic_authorization(creds)))
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

/// `--login 'METHOD URL [BODY|<FILE]'`: the session pelt-core's
/// [`SessionOptions::login`] makes of it, its error worded for the flag.
pub fn login_session(text: &str) -> Result<SessionOptions, UserError> {
    SessionOptions::login(text).map_err(|e| {
        UserError(format!(
            "--login: {e}; write it as 'METHOD URL [BODY|<FILE]', like 'POST http://127.0.0.1:8080/login user=a&pass=b'"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_login_names_the_flag_once() {
        // Issue 22 §8: "--login: --login:1: ..." named it twice.
        let e = login_session("POST notaurl").unwrap_err().0;
        assert!(e.starts_with("--login: "), "{e}");
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
            return Ok(ProxyOptions::all_through(parse_proxy(url, "--proxy")?));
        }
        if !self.proxy_from_env {
            return Ok(ProxyOptions::default());
        }
        ProxyOptions::from_env(|name| std::env::var(name).ok())
            .map_err(|(name, e)| proxy_error(name, &e))
    }
}

/// A proxy URL, by pelt-core's rule; `from` names the flag or variable
/// in errors.
fn parse_proxy(text: &str, from: &str) -> Result<Proxy, UserError> {
    Proxy::parse(text).map_err(|e| proxy_error(from, &e))
}

fn proxy_error(from: &str, e: &ProxyUrlError) -> UserError {
    UserError(format!(
        "{from}: {e}; give an HTTP proxy like http://127.0.0.1:3128 or http://user:pass@proxy:3128"
    ))
}

#[cfg(test)]
mod proxy_tests {
    use super::*;

    #[test]
    fn a_bad_proxy_names_its_flag() {
        let e = parse_proxy("socks5://127.0.0.1:1080", "--proxy")
            .unwrap_err()
            .0;
        assert!(e.starts_with("--proxy: unsupported proxy scheme"), "{e}");
    }
}
