//! `pelt run`'s session flags (issue 16): `--cookies`, `--login`,
//! `-A/--basic-auth`. Kept apart from cli.rs so other flags merge freely.

use crate::UserError;
use clap::Args;
use pelt_core::targets::TargetsFormat;
use pelt_core::{SessionOptions, Target};
use std::path::Path;

/// Cookies, a login and credentials: what makes each sender a user.
#[derive(Debug, Clone, Args)]
pub struct SessionArgs {
    /// Give each sender (an HTTP/1.1 connection: a simulated user) a
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
            .map_err(|e| bad(&e.to_string()))?;
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
}
