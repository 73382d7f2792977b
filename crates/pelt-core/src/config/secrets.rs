//! Secrets kept out of everything pelt writes.
//!
//! A run's configuration goes into its results file, its reports and the
//! history. Before it does, a [`Redactor`] replaces with [`MARKER`]:
//! - the values of `Authorization`, `Cookie`, `Proxy-Authorization` and
//!   any header named in [`Redactor::new`] (the CLI's `--secret-header`);
//! - the values of query parameters whose name contains `token`, `key`,
//!   `sig`, `password` or `secret` (or a word added with
//!   `--secret-param`), case-insensitively: `access_token`, `apiKey` and
//!   `X-Amz-Signature` are caught; so is `monkey`, a price worth paying;
//!   more words are given to [`Redactor::new`] (the CLI's `--secret-param`);
//! - and, in free text (error messages), any of those values the run
//!   used, so a server echoing a token back cannot carry it into a file.
//!
//! URL userinfo (`https://user:pass@host/`) never reaches a configuration:
//! [`split_userinfo`] turns it into an `Authorization: Basic` header,
//! which is then redacted like any other.
//!
//! The run itself still sends the real values: only copies are redacted.
//!
//! Library users get this by default: [`crate::ResultsWriter::new`]
//! redacts the header it writes and scrubs every second's error messages,
//! and pelt-report's renderers redact the summary they are given. Opting
//! out is explicit ([`crate::ResultsWriter::unredacted`]).

use crate::{RunConfig, Target, Url};
use base64::Engine;

/// What a secret is replaced with, everywhere.
pub const MARKER: &str = "REDACTED";

/// Headers whose values are always secret.
pub const SECRET_HEADERS: [&str; 3] = ["authorization", "cookie", "proxy-authorization"];

/// Query parameters named with one of these (anywhere in the name) are
/// secret.
pub const SECRET_PARAMS: [&str; 5] = ["token", "key", "sig", "password", "secret"];

/// Values shorter than this are not searched for in free text: "1" or
/// "on" would replace innocent characters everywhere.
const MIN_SCRUBBED: usize = 4;

/// Which headers and parameters are secret, and the secret values a run
/// used (to scrub them from free text).
#[derive(Debug, Clone)]
pub struct Redactor {
    headers: Vec<String>,
    params: Vec<String>,
    values: Vec<String>,
}

impl Default for Redactor {
    fn default() -> Redactor {
        Redactor::new(&[], &[])
    }
}

impl Redactor {
    /// The default rules plus `headers` (names) and `params` (words).
    pub fn new(headers: &[String], params: &[String]) -> Redactor {
        let lower = |v: &[&str], extra: &[String]| {
            let mut all: Vec<String> = v.iter().map(|s| s.to_string()).collect();
            all.extend(extra.iter().map(|s| s.trim().to_ascii_lowercase()));
            all.retain(|s| !s.is_empty());
            all
        };
        Redactor {
            headers: lower(&SECRET_HEADERS, headers),
            params: lower(&SECRET_PARAMS, params),
            values: Vec::new(),
        }
    }

    /// Whether the header `name` (any case) carries a secret.
    pub fn is_secret_header(&self, name: &str) -> bool {
        let name = name.trim().to_ascii_lowercase();
        self.headers.contains(&name)
    }

    /// Whether the query parameter `name` (percent-decoded, any case)
    /// carries a secret.
    pub fn is_secret_param(&self, name: &str) -> bool {
        let name = percent_decode(name).to_ascii_lowercase();
        self.params.iter().any(|p| name.contains(p.as_str()))
    }

    /// Remembers a secret value, to scrub it from free text.
    pub fn add_value(&mut self, value: &str) {
        let value = value.trim();
        if value.len() >= MIN_SCRUBBED && value != MARKER && !self.values.iter().any(|v| v == value)
        {
            self.values.push(value.to_string());
            // Longest first, so a value containing another goes whole.
            self.values.sort_by_key(|v| std::cmp::Reverse(v.len()));
        }
    }

    /// Learns the secret values `config` uses: whole header values and
    /// their parts (the token after `Bearer`, each cookie's value), and
    /// secret query values, raw and decoded.
    pub fn learn(&mut self, config: &RunConfig) {
        // --proxy credentials are never serialised; the run's own copy is
        // learnt so that no message can carry them either.
        let proxy = &config.http.proxy;
        for p in proxy.http.iter().chain(&proxy.https) {
            if let Some(auth) = &p.authorization {
                self.add_value(auth);
                for part in auth.split(' ') {
                    self.add_value(part);
                }
            }
        }
        if let Some(login) = &config.http.session.login {
            // A login's body is all credentials (user=a&pass=b).
            let body = String::from_utf8_lossy(&login.body).into_owned();
            self.add_value(&body);
            for pair in body.split('&') {
                if let Some((_, value)) = pair.split_once('=') {
                    self.add_value(value);
                    self.add_value(&percent_decode(value));
                }
            }
        }
        for t in config.targets.iter().chain(&config.http.session.login) {
            for (name, value) in &t.headers {
                if self.is_secret_header(name) {
                    self.add_value(value);
                    for part in value.split([' ', ';', ',', '=']) {
                        self.add_value(part);
                    }
                    // Basic credentials as people write them (`-A
                    // user:pass`, a URL's `user:pass@`): a plan or a
                    // server's echo holds them decoded.
                    if let Some(decoded) = basic_credentials(value) {
                        self.add_value(&decoded);
                        if let Some((_, password)) = decoded.split_once(':') {
                            self.add_value(password);
                        }
                    }
                }
            }
            if let Some((_, query)) = t.url.path_and_query.split_once('?') {
                for pair in query.split('&') {
                    if let Some((name, value)) = pair.split_once('=') {
                        if self.is_secret_param(name) {
                            self.add_value(value);
                            self.add_value(&percent_decode(value));
                        }
                    }
                }
            }
        }
    }

    /// `config` with its secrets replaced.
    pub fn config(&self, config: &RunConfig) -> RunConfig {
        let mut c = config.clone();
        if let Some(login) = &mut c.http.session.login {
            if !login.body.is_empty() {
                login.body = MARKER.as_bytes().to_vec();
            }
        }
        // The target list stays shared with `config` unless a target
        // holds a secret (a copy of 100,000 targets is 23 MB).
        let scrub = |t: &mut Target| {
            for (name, value) in &mut t.headers {
                if self.is_secret_header(name) {
                    *value = MARKER.to_string();
                }
            }
            self.url(&mut t.url);
        };
        if c.targets.iter().any(|t| self.holds_secret(t)) {
            c.targets.iter_mut().for_each(scrub);
        }
        c.http.session.login.iter_mut().for_each(scrub);
        c
    }

    /// Whether [`Redactor::config`] would change anything in `t`.
    fn holds_secret(&self, t: &Target) -> bool {
        let secret_param = |pair: &str| {
            pair.split_once('=')
                .is_some_and(|(name, _)| self.is_secret_param(name))
        };
        t.headers
            .iter()
            .any(|(name, _)| self.is_secret_header(name))
            || t.url
                .path_and_query
                .split_once('?')
                .is_some_and(|(_, query)| query.split('&').any(secret_param))
    }

    /// Replaces the values of secret query parameters in `url`.
    pub fn url(&self, url: &mut Url) {
        if let Some((path, query)) = url.path_and_query.split_once('?') {
            url.path_and_query = format!("{path}?{}", self.query(query));
        }
    }

    /// A query string (without `?`) with secret parameters' values
    /// replaced.
    pub fn query(&self, query: &str) -> String {
        let pairs: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((name, _)) if self.is_secret_param(name) => format!("{name}={MARKER}"),
                _ => pair.to_string(),
            })
            .collect();
        pairs.join("&")
    }

    /// Whether `text` holds a known secret value.
    pub fn holds_value(&self, text: &str) -> bool {
        self.values.iter().any(|v| text.contains(v.as_str()))
    }

    /// `text` with every known secret value replaced.
    pub fn text(&self, text: &str) -> String {
        let mut out = text.to_string();
        for v in &self.values {
            if out.contains(v.as_str()) {
                out = out.replace(v.as_str(), MARKER);
            }
        }
        out
    }

    /// The default rules, taught the secret values `config` uses: what
    /// a results file or report written from `config` is passed through
    /// unless its writer is told otherwise.
    pub fn for_config(config: &RunConfig) -> Redactor {
        let mut r = Redactor::default();
        r.learn(config);
        r
    }
}

/// `http://user:pass@host/p` → `http://host/p` and the `Authorization`
/// value that carries the credentials (`Basic base64(user:pass)`, as curl
/// sends them). `None` when the URL has no userinfo.
pub fn split_userinfo(url: &str) -> Option<(String, String)> {
    let (scheme, rest) = url.split_once("://")?;
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let (userinfo, host) = authority.rsplit_once('@')?;
    let (user, pass) = userinfo.split_once(':').unwrap_or((userinfo, ""));
    let credentials = format!("{}:{}", percent_decode(user), percent_decode(pass));
    Some((
        format!("{scheme}://{host}{tail}"),
        basic_authorization(&credentials),
    ))
}

/// The `Authorization` value for `user:pass` (`-A`, URL userinfo).
pub fn basic_authorization(credentials: &str) -> String {
    let basic = base64::engine::general_purpose::STANDARD.encode(credentials);
    format!("Basic {basic}")
}

/// `user:pass` from an `Authorization: Basic ...` value; `None` for any
/// other scheme, or base64 that does not decode to text.
fn basic_credentials(value: &str) -> Option<String> {
    let (scheme, encoded) = value.trim().split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .ok()?;
    String::from_utf8(bytes).ok()
}

/// A database URL fit for messages: its password replaced.
pub fn url_without_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let authority = match authority.rsplit_once('@') {
        Some((userinfo, host)) => match userinfo.split_once(':') {
            Some((user, _)) => format!("{user}:{MARKER}@{host}"),
            None => authority.to_string(),
        },
        None => authority.to_string(),
    };
    // A password in the query (`?password=...`) goes too.
    let tail = match tail.split_once('?') {
        Some((path, query)) => format!("{path}?{}", Redactor::default().query(query)),
        None => tail.to_string(),
    };
    format!("{scheme}://{authority}{tail}")
}

/// `%41` → `A`, `+` kept; invalid escapes kept as they are.
fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            let hex = std::str::from_utf8(&b[i + 1..i + 3])
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok());
            if let Some(v) = hex {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn secret_parameters_are_replaced_and_others_kept() {
        let r = Redactor::new(&[], &["sess".into()]);
        let mut u = url("http://h/p?a=1&token=S3CRET&apiKey=k2&X-Amz-Signature=zz&sessid=9&b");
        r.url(&mut u);
        assert_eq!(
            u.path_and_query,
            "/p?a=1&token=REDACTED&apiKey=REDACTED&X-Amz-Signature=REDACTED&sessid=REDACTED&b"
        );
        let mut plain = url("http://h/p");
        r.url(&mut plain);
        assert_eq!(plain.path_and_query, "/p");
    }

    /// Issue 27: a redacted configuration shares its target list with
    /// the run's unless a target holds a secret (each copy of 100,000
    /// targets cost 23 MB), and a redacted copy never changes the run's.
    #[test]
    fn redacted_configs_share_targets_without_secrets() {
        use crate::{Load, Stop, Target};
        let r = Redactor::new(&[], &[]);
        let targets = (0..3)
            .map(|i| Target::get(url(&format!("http://h/p{i}?page={i}"))))
            .collect();
        let config = RunConfig::new(targets, Load::closed(2), Stop::default());
        assert!(r.config(&config).targets.shares(&config.targets));
        let mut secret = config.clone();
        secret.targets[1].url = url("http://h/p?token=S3CRET");
        assert!(!secret.targets.shares(&config.targets), "copied on write");
        let redacted = r.config(&secret);
        assert!(!redacted.targets.shares(&secret.targets));
        assert_eq!(redacted.targets[1].url.path_and_query, "/p?token=REDACTED");
        assert_eq!(redacted.targets[0], config.targets[0]);
        assert_eq!(secret.targets[1].url.path_and_query, "/p?token=S3CRET");
        let mut header = config.clone();
        header.targets[2]
            .headers
            .push(("Authorization".into(), "Bearer x".into()));
        assert_eq!(r.config(&header).targets[2].headers[0].1, MARKER);
    }

    #[test]
    fn headers_by_name_case_insensitively() {
        let r = Redactor::new(&["X-Api-Auth".into()], &[]);
        assert!(r.is_secret_header("AUTHORIZATION"));
        assert!(r.is_secret_header("cookie"));
        assert!(r.is_secret_header("x-api-auth"));
        assert!(!r.is_secret_header("Accept"));
    }

    #[test]
    fn userinfo_becomes_basic_auth() {
        let (u, auth) = split_userinfo("https://u:S3CRET@127.0.0.1:8443/x?y").unwrap();
        assert_eq!(u, "https://127.0.0.1:8443/x?y");
        // base64("u:S3CRET")
        assert_eq!(auth, "Basic dTpTM0NSRVQ=");
        assert!(split_userinfo("http://h/p@q").is_none());
        let (_, auth) = split_userinfo("http://a%40b:p%3Aw@h/").unwrap();
        assert_eq!(
            auth,
            format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode("a@b:p:w")
            )
        );
    }

    #[test]
    fn database_urls_lose_their_password() {
        assert_eq!(
            url_without_password("postgres://pelt:S3CRET@127.0.0.1:5432/db"),
            "postgres://pelt:REDACTED@127.0.0.1:5432/db"
        );
        assert_eq!(
            url_without_password("postgres://h/db?user=u&password=S3CRET"),
            "postgres://h/db?user=u&password=REDACTED"
        );
        assert_eq!(
            url_without_password("postgres://u@h/db"),
            "postgres://u@h/db"
        );
    }

    #[test]
    fn free_text_loses_known_values() {
        let mut r = Redactor::default();
        r.add_value("Bearer S3CRET");
        r.add_value("S3CRET");
        r.add_value("ab");
        assert_eq!(
            r.text("got Bearer S3CRET and S3CRET and ab"),
            "got REDACTED and REDACTED and ab"
        );
    }

    #[test]
    fn percent_escapes_decode() {
        assert_eq!(percent_decode("a%20b%zz%4"), "a b%zz%4");
        assert_eq!(percent_decode("%41"), "A");
    }
}
