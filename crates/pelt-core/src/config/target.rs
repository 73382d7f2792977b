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
