//! `--proxy` and `--proxy-from-env`: a forward HTTP proxy between pelt
//! and the targets, for plain HTTP (requests in absolute form) and for
//! https (a `CONNECT` tunnel, TLS end to end with the origin).

use crate::url::{Scheme, Url};
use serde::{Deserialize, Serialize};

/// One forward proxy: where it listens, and the credentials it wants.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Proxy {
    /// The proxy's host name or address (IPv6 without brackets).
    pub host: String,
    /// The proxy's port.
    pub port: u16,
    /// The `Proxy-Authorization` value (`Basic ...`) from `user:pass@`:
    /// never written to a file (a results file says only that there was
    /// one).
    #[serde(skip)]
    pub authorization: Option<String>,
    /// Whether the proxy was given credentials.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub authenticated: bool,
}

/// Which proxy each target goes through.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProxyOptions {
    /// For `http://` targets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http: Option<Proxy>,
    /// For `https://` targets (through `CONNECT`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub https: Option<Proxy>,
    /// `NO_PROXY`: hosts (and their subdomains) reached directly; `*` for
    /// every host.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub no_proxy: Vec<String>,
}

/// Why a proxy URL cannot be used (what is wrong with it; a command line
/// adds which flag or variable gave it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ProxyUrlError(pub String);

impl Proxy {
    /// `http://[user:pass@]host[:port]` (a trailing `/` allowed): the
    /// user and password become the `Proxy-Authorization` value.
    pub fn parse(text: &str) -> Result<Proxy, ProxyUrlError> {
        let text = text.trim();
        let scheme = text.split_once("://").map(|(s, _)| s.to_ascii_lowercase());
        match scheme.as_deref() {
            Some("http") => {}
            Some(s) => {
                return Err(ProxyUrlError(format!(
                    "unsupported proxy scheme '{s}://' (pelt speaks to HTTP proxies only)"
                )))
            }
            None => return Err(ProxyUrlError("expected a URL starting with http://".into())),
        }
        let (plain, authorization) = match crate::secrets::split_userinfo(text) {
            Some((plain, basic)) => (plain, Some(basic)),
            None => (text.to_string(), None),
        };
        let url = Url::parse(&plain).map_err(|e| ProxyUrlError(e.reason.to_string()))?;
        if url.path_and_query != "/" {
            return Err(ProxyUrlError(format!(
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
}

impl ProxyOptions {
    /// `proxy` for every target.
    pub fn all_through(proxy: Proxy) -> ProxyOptions {
        ProxyOptions {
            http: Some(proxy.clone()),
            https: Some(proxy),
            no_proxy: Vec::new(),
        }
    }

    /// The proxies `HTTP_PROXY`, `HTTPS_PROXY` and `NO_PROXY` name (in
    /// upper or lower case, as curl reads them; empty ones unset), read
    /// through `var`. A bad URL is refused with the variable's name.
    pub fn from_env(
        var: impl Fn(&str) -> Option<String>,
    ) -> Result<ProxyOptions, (&'static str, ProxyUrlError)> {
        let var = |name: &str| {
            [name.to_string(), name.to_ascii_lowercase()]
                .iter()
                .find_map(|n| var(n).filter(|v| !v.trim().is_empty()))
        };
        let from = |name: &'static str| {
            var(name)
                .map(|url| Proxy::parse(&url).map_err(|e| (name, e)))
                .transpose()
        };
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

    /// No proxy at all.
    pub fn is_off(&self) -> bool {
        self.http.is_none() && self.https.is_none()
    }

    /// The proxy `url` goes through, if any.
    pub fn for_url(&self, url: &Url) -> Option<&Proxy> {
        let proxy = match url.scheme {
            Scheme::Http | Scheme::Ws => self.http.as_ref(),
            Scheme::Https | Scheme::Wss => self.https.as_ref(),
        }?;
        let host = url.host.to_ascii_lowercase();
        let bypass = self.no_proxy.iter().any(|n| {
            let n = n.trim().trim_start_matches('.').to_ascii_lowercase();
            n == "*" || host == n || host.ends_with(&format!(".{n}"))
        });
        (!bypass).then_some(proxy)
    }
}

impl Proxy {
    /// `http://HOST:PORT`, with `(with credentials)` but never them.
    pub fn describe(&self) -> String {
        let host = match self.host.contains(':') {
            true => format!("[{}]", self.host),
            false => self.host.clone(),
        };
        let creds = match self.authenticated || self.authorization.is_some() {
            true => " (with credentials)",
            false => "",
        };
        format!("http://{host}:{}{creds}", self.port)
    }
}

impl ProxyOptions {
    /// One line for a report: which proxy the requests went through, or
    /// `None` without one. A run through a proxy measures the proxy too,
    /// so every report says so.
    pub fn describe(&self) -> Option<String> {
        let mut text = match (&self.http, &self.https) {
            (None, None) => return None,
            (Some(a), Some(b)) if a == b => a.describe(),
            (Some(a), None) => format!("{} (http:// targets only)", a.describe()),
            (None, Some(b)) => format!("{} (https:// targets only, by CONNECT)", b.describe()),
            (Some(a), Some(b)) => format!(
                "{} for http://, {} for https://",
                a.describe(),
                b.describe()
            ),
        };
        if !self.no_proxy.is_empty() {
            text.push_str(&format!("; not for {}", self.no_proxy.join(", ")));
        }
        Some(text)
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn proxy_urls_are_http_with_optional_credentials() {
        let p = Proxy::parse("http://u:p%40ss@127.0.0.1:3128").unwrap();
        assert_eq!((p.host.as_str(), p.port), ("127.0.0.1", 3128));
        assert_eq!(p.authorization.as_deref(), Some("Basic dTpwQHNz"));
        let p = Proxy::parse("http://proxy/").unwrap();
        assert_eq!((p.port, p.authorization), (80, None));
        for bad in [
            "socks5://127.0.0.1:1080",
            "https://p:3128",
            "127.0.0.1:3128",
            "http://p:3128/x",
        ] {
            assert!(Proxy::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_environment_names_proxies_as_curl_reads_it() {
        let env = |n: &str| match n {
            "http_proxy" => Some("http://127.0.0.1:3128".to_string()),
            "HTTPS_PROXY" => Some(" ".to_string()),
            "NO_PROXY" => Some("localhost, .internal,".to_string()),
            _ => None,
        };
        let o = ProxyOptions::from_env(env).unwrap();
        assert_eq!(o.http.map(|p| p.port), Some(3128));
        assert!(o.https.is_none(), "an empty variable is unset");
        assert_eq!(o.no_proxy, ["localhost", ".internal"]);
        let bad = |n: &str| (n == "HTTPS_PROXY").then(|| "socks5://p:1".to_string());
        assert_eq!(ProxyOptions::from_env(bad).unwrap_err().0, "HTTPS_PROXY");
    }

    use super::*;

    #[test]
    fn describes_the_proxy_without_its_secret() {
        let p = Proxy {
            host: "127.0.0.1".into(),
            port: 8888,
            authorization: Some("Basic c2VjcmV0".into()),
            authenticated: true,
        };
        let both = ProxyOptions {
            http: Some(p.clone()),
            https: Some(p),
            no_proxy: vec![],
        };
        let d = both.describe().unwrap();
        assert_eq!(d, "http://127.0.0.1:8888 (with credentials)");
        assert_eq!(ProxyOptions::default().describe(), None);
    }

    #[test]
    fn no_proxy_matches_hosts_and_their_subdomains() {
        let p = Proxy {
            host: "127.0.0.1".into(),
            port: 3128,
            authorization: None,
            authenticated: false,
        };
        let opts = ProxyOptions {
            http: Some(p.clone()),
            https: None,
            no_proxy: vec!["example.com".into(), ".internal".into()],
        };
        let url = |s: &str| Url::parse(s).unwrap();
        assert_eq!(opts.for_url(&url("http://127.0.0.1/")), Some(&p));
        assert_eq!(opts.for_url(&url("http://example.com/")), None);
        assert_eq!(opts.for_url(&url("http://a.example.com/")), None);
        assert_eq!(opts.for_url(&url("http://notexample.com/")), Some(&p));
        assert_eq!(opts.for_url(&url("http://x.internal/")), None);
        assert_eq!(
            opts.for_url(&url("https://127.0.0.1/")),
            None,
            "no https proxy"
        );
    }
}
