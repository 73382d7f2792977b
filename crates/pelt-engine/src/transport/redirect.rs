//! `--follow`: a request's redirect chain, the same for every protocol
//! (each differs only in how it sends a hop). The whole chain is one
//! request: its time, the bytes of every hop, the final status.

use crate::outcome::Failure;
use crate::parts::PreparedParts;
use pelt_core::{ErrorKind, HttpOptions, Target, Url};

/// A request's redirect chain under `--follow`: where it has got to, how
/// it is sent now, and how many hops it has taken. Shared by every
/// protocol, which differ only in how they send each hop.
pub(crate) struct Redirects<'a> {
    /// The target's URL: "same origin" is judged against it.
    origin: &'a Url,
    /// The URL of the latest hop.
    pub url: Url,
    pub method: &'a str,
    /// Whether the request still carries its body.
    pub body: bool,
    hops: u32,
}

impl<'a> Redirects<'a> {
    pub fn new(target: &'a Target) -> Redirects<'a> {
        Redirects {
            origin: &target.url,
            url: target.url.clone(),
            method: &target.method,
            body: true,
            hops: 0,
        }
    }

    /// Steps to `location`, from a `status` redirect: `self.url` becomes
    /// the next hop; returns whether it is the target's origin. As browsers
    /// do, 303, and 301/302 after a POST, continue as a GET without body.
    /// A redirect beyond `--follow`, without a usable Location, or to
    /// another origin without `--follow-any-host` is an `invalid_response`
    /// failure carrying the `bytes_in` of the chain so far.
    pub fn step(
        &mut self,
        http: &HttpOptions,
        location: &str,
        status: u16,
        bytes_in: u64,
    ) -> Result<bool, Failure> {
        let url = &self.url;
        let fail = |detail: String| Failure {
            kind: ErrorKind::InvalidResponse,
            detail,
            bytes_in,
            status,
        };
        if self.hops == http.follow {
            return Err(fail(format!(
                "more than --follow {} redirects (the last, {status}, to '{}'); raise --follow, or load the final URL directly",
                http.follow,
                location.escape_debug()
            )));
        }
        self.hops += 1;
        if location.is_empty() {
            return Err(fail(format!(
                "a {status} redirect from {url} without a Location header"
            )));
        }
        let next = url.join(location).map_err(|e| {
            fail(format!(
                "cannot follow the {status} redirect from {url}: {e}"
            ))
        })?;
        let same = next.same_origin(self.origin);
        if !same && !http.follow_any_host {
            return Err(fail(format!(
                "{status} redirect to another origin, {next}; add --follow-any-host to follow it, or load that URL directly"
            )));
        }
        if (status == 303 && self.method != "HEAD")
            || (matches!(status, 301 | 302) && self.method == "POST")
        {
            self.method = "GET";
            self.body = false;
        }
        self.url = next;
        Ok(same)
    }
}

impl Redirects<'_> {
    /// HTTP/2 and HTTP/3: the next hop's request head, from the target's
    /// prepared request (`protocol` names the protocol in errors, `version`
    /// is its), and whether the hop carries the body. The caller adds
    /// cookies.
    pub fn hop_request(
        &self,
        prepared: &PreparedParts,
        protocol: &str,
        version: http::Version,
    ) -> Result<(http::Request<()>, bool), Failure> {
        let mut req = prepared.request(version);
        let method = self.method;
        *req.method_mut() = http::Method::from_bytes(method.as_bytes()).map_err(|_| {
            Failure::new(
                ErrorKind::InvalidResponse,
                format!("invalid method {method}"),
            )
        })?;
        let uri = format!(
            "{}://{}{}",
            prepared.uri.scheme_str().unwrap_or("http"),
            prepared.uri.authority().map_or("", |a| a.as_str()),
            self.url.path_and_query
        );
        *req.uri_mut() = uri.parse().map_err(|e| {
            Failure::new(
                ErrorKind::InvalidResponse,
                format!(
                    "cannot follow the redirect to {} over {protocol}: {e}",
                    self.url
                ),
            )
        })?;
        if !self.body {
            req.headers_mut().remove(http::header::CONTENT_LENGTH);
            req.headers_mut().remove(http::header::CONTENT_TYPE);
        }
        Ok((req, self.body && !prepared.body.is_empty()))
    }
}

/// A response's Location header (empty if it has none).
pub(crate) fn location_of<T>(response: &http::Response<T>) -> String {
    response
        .headers()
        .get(http::header::LOCATION)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).trim().to_string())
        .unwrap_or_default()
}
