//! What to send: one request's method, URL, headers and body, and the
//! rules a request must keep to be written on the wire as given.

use super::error::{ConfigError, TargetError};
use crate::url::Url;
use serde::{Deserialize, Serialize};

/// Largest request body: bodies are held in memory and stored with the run.
pub const MAX_BODY: usize = 32 << 20;

/// One request to send: method, URL, headers and body, fixed for the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Target {
    /// The request method, an RFC 9110 token like `GET` (see [`check_method`]).
    pub method: String,
    /// Where the request goes.
    pub url: Url,
    /// Extra headers, in order. `Host` here overrides the URL's host.
    #[serde(default)]
    pub headers: Vec<(String, String)>,
    /// Request body (stored base64-encoded so binary bodies survive JSON).
    #[serde(default, with = "base64_bytes")]
    pub body: Vec<u8>,
    /// Share of requests relative to the other targets (1 unless a
    /// targets file says otherwise).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub weight: u32,
}

fn one() -> u32 {
    1
}

fn is_one(w: &u32) -> bool {
    *w == 1
}

impl Target {
    /// A `GET` of `url` with no extra headers.
    pub fn get(url: Url) -> Target {
        Target {
            method: "GET".into(),
            url,
            headers: Vec::new(),
            body: Vec::new(),
            weight: 1,
        }
    }
}

impl Target {
    /// Checks that the target can be written on the wire as given: its
    /// method and headers ([`check_method`], [`check_header`]), then its
    /// framing ([`ConfigError::DuplicateHost`],
    /// [`ConfigError::ContentLengthMismatch`]).
    pub(super) fn check(&self) -> Result<(), ConfigError> {
        let wire = || -> Result<(), TargetError> {
            check_method(&self.method)?;
            for (name, value) in &self.headers {
                check_header(name, value)?;
            }
            Ok(())
        };
        wire().map_err(|error| ConfigError::BadTarget {
            target: self.label(),
            error,
        })?;
        self.check_framing()
    }

    /// `METHOD URL`, on one line whatever the method holds.
    fn label(&self) -> String {
        format!("{} {}", self.method.escape_debug(), self.url)
    }

    /// Headers that would break the request: two Host headers (servers
    /// must answer 400), or a Content-Length that is not the body's length
    /// (the server waits for bytes never sent, or reads the rest as the
    /// next request). A Transfer-Encoding header means the body is framed
    /// by the user, so Content-Length is then theirs to get right.
    fn check_framing(&self) -> Result<(), ConfigError> {
        let named = |name: &'static str| {
            self.headers
                .iter()
                .filter(move |(n, _)| n.eq_ignore_ascii_case(name))
        };
        let hosts = named("host").count();
        if hosts > 1 {
            return Err(ConfigError::DuplicateHost {
                target: self.label(),
                count: hosts,
            });
        }
        if named("transfer-encoding").next().is_none() {
            for (_, value) in named("content-length") {
                // Digits only: `parse` would take "+3", which servers
                // refuse (RFC 9110 allows 1*DIGIT).
                let v = value.trim();
                let digits = !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit());
                if !digits || v.parse::<usize>().ok() != Some(self.body.len()) {
                    return Err(ConfigError::ContentLengthMismatch {
                        target: self.label(),
                        value: value.escape_debug().to_string(),
                        actual: self.body.len(),
                    });
                }
            }
        }
        Ok(())
    }
}

/// RFC 9110 token characters: what a method or header name may contain.
fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

fn is_token(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(is_token_byte)
}

/// A method must be an RFC 9110 token: `GET`, `POST`, `PURGE`, `get`.
pub fn check_method(method: &str) -> Result<(), TargetError> {
    if is_token(method) {
        Ok(())
    } else {
        Err(TargetError::Method(method.to_string()))
    }
}

/// The methods of IANA's HTTP Method Registry, and the cache-purging
/// ones proxies understand (`PURGE`, `BAN`). Methods are case-sensitive.
pub const REGISTERED_METHODS: [&str; 42] = [
    "GET",
    "HEAD",
    "POST",
    "PUT",
    "DELETE",
    "CONNECT",
    "OPTIONS",
    "TRACE",
    "PATCH",
    "QUERY",
    "ACL",
    "BASELINE-CONTROL",
    "BIND",
    "CHECKIN",
    "CHECKOUT",
    "COPY",
    "LABEL",
    "LINK",
    "LOCK",
    "MERGE",
    "MKACTIVITY",
    "MKCALENDAR",
    "MKCOL",
    "MKREDIRECTREF",
    "MKWORKSPACE",
    "MOVE",
    "ORDERPATCH",
    "PRI",
    "PROPFIND",
    "PROPPATCH",
    "REBIND",
    "REPORT",
    "SEARCH",
    "UNBIND",
    "UNCHECKOUT",
    "UNLINK",
    "UNLOCK",
    "UPDATE",
    "UPDATEREDIRECTREF",
    "VERSION-CONTROL",
    "PURGE",
    "BAN",
];

/// For a method outside [`REGISTERED_METHODS`] (a typo like `POTS` in a
/// siege file is sent as written, and a server answers 405 or 400):
/// `Some(the common method it most likely meant)`, `Some("")` when none
/// is close, `None` for a registered method.
pub fn unregistered_method(method: &str) -> Option<&'static str> {
    if REGISTERED_METHODS.contains(&method) {
        return None;
    }
    const COMMON: [&str; 7] = ["GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH"];
    let upper = method.to_ascii_uppercase();
    let mut sorted: Vec<u8> = upper.bytes().collect();
    sorted.sort_unstable();
    let near = COMMON.iter().copied().find(|c| {
        let mut theirs: Vec<u8> = c.bytes().collect();
        theirs.sort_unstable();
        // The same letters (POTS, post), or one letter off (GTE is caught
        // above; PUTT, GEt).
        theirs == sorted || edit_distance(c, &upper) <= 1
    });
    Some(near.unwrap_or(""))
}

/// Levenshtein distance, for a few short words.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut row = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            row.push((prev[j] + cost).min(prev[j + 1] + 1).min(row[j] + 1));
        }
        prev = row;
    }
    prev[b.len()]
}

/// A header's name must be an RFC 9110 token, and its value must not hold
/// CR, LF or NUL.
pub fn check_header(name: &str, value: &str) -> Result<(), TargetError> {
    if !is_token(name) {
        return Err(TargetError::HeaderName(name.to_string()));
    }
    if value.contains(['\r', '\n', '\0']) {
        return Err(TargetError::HeaderValue(name.to_string()));
    }
    Ok(())
}

mod base64_bytes {
    use base64::Engine;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(b: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&base64::engine::general_purpose::STANDARD.encode(b))
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let text = String::deserialize(d)?;
        base64::engine::general_purpose::STANDARD
            .decode(text)
            .map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod method_tests {
    use super::*;

    #[test]
    fn typos_of_methods_are_caught_with_a_guess() {
        // Issue 22 §7: `POTS` in a siege file was sent as written.
        assert_eq!(unregistered_method("POST"), None);
        assert_eq!(unregistered_method("PROPFIND"), None);
        assert_eq!(unregistered_method("POTS"), Some("POST"));
        assert_eq!(unregistered_method("post"), Some("POST"));
        assert_eq!(unregistered_method("GTE"), Some("GET"));
        assert_eq!(unregistered_method("PUTT"), Some("PUT"));
        assert_eq!(unregistered_method("FROBNICATE"), Some(""));
    }
}

/// A run's targets, shared: a results file's header, the engine's plan,
/// the redacted copy every file gets and the caller's configuration all
/// hold the same list, so cloning a [`RunConfig`](crate::RunConfig) never
/// copies 100,000 targets (each copy of such a list took 23 MB). Reads
/// like a `Vec<Target>`; a change through `&mut` copies the list first if
/// it is shared (`Arc::make_mut`). Serialised as the plain list.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Targets(std::sync::Arc<Vec<Target>>);

impl Targets {
    /// Whether `self` and `other` are the same list in memory (not only
    /// equal): no copy was made.
    pub fn shares(&self, other: &Targets) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}

impl std::ops::Deref for Targets {
    type Target = Vec<Target>;
    fn deref(&self) -> &Vec<Target> {
        &self.0
    }
}

impl std::ops::DerefMut for Targets {
    fn deref_mut(&mut self) -> &mut Vec<Target> {
        std::sync::Arc::make_mut(&mut self.0)
    }
}

impl From<Vec<Target>> for Targets {
    fn from(list: Vec<Target>) -> Targets {
        Targets(std::sync::Arc::new(list))
    }
}

impl FromIterator<Target> for Targets {
    fn from_iter<I: IntoIterator<Item = Target>>(iter: I) -> Targets {
        Targets::from(iter.into_iter().collect::<Vec<_>>())
    }
}

impl<'a> IntoIterator for &'a Targets {
    type Item = &'a Target;
    type IntoIter = std::slice::Iter<'a, Target>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl<'a> IntoIterator for &'a mut Targets {
    type Item = &'a mut Target;
    type IntoIter = std::slice::IterMut<'a, Target>;
    fn into_iter(self) -> Self::IntoIter {
        std::sync::Arc::make_mut(&mut self.0).iter_mut()
    }
}

impl Serialize for Targets {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl<'de> Deserialize<'de> for Targets {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Targets, D::Error> {
        Vec::<Target>::deserialize(d).map(Targets::from)
    }
}
