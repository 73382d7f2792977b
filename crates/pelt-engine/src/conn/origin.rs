//! Where connections go: each distinct scheme, host and port of the
//! targets resolved once before the run (after `--connect-to` and
//! `--unix-socket`), and a redirect's new origin resolved when it is met.

use crate::error::EngineError;
use crate::outcome::Failure;
use pelt_core::{connect_address, ErrorKind, HttpOptions, RunConfig, Scheme, Url};
use rustls::pki_types::ServerName;
use std::fmt;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::time::Duration;

/// A socket address: TCP, or a Unix domain socket (`--unix-socket`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Addr {
    /// A TCP address.
    Tcp(SocketAddr),
    /// A Unix domain socket's path.
    Unix(PathBuf),
}

impl fmt::Display for Addr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Addr::Tcp(a) => a.fmt(f),
            Addr::Unix(p) => write!(f, "unix:{}", p.display()),
        }
    }
}

/// Where a connection goes: one per distinct scheme, host and port.
#[derive(Debug, Clone)]
pub struct Origin {
    /// Where to connect (the proxy's address with `--proxy`).
    pub addr: Addr,
    /// Present for https: the name to verify and send as SNI (the
    /// origin's, also through a proxy's tunnel).
    pub tls: Option<ServerName<'static>>,
    /// `--proxy`: how the proxy is used for this origin.
    pub proxy: Option<ProxyRoute>,
}

/// How an origin is reached through a forward proxy.
#[derive(Debug, Clone)]
pub struct ProxyRoute {
    /// https: `CONNECT` to this `host:port` first, then TLS inside the
    /// tunnel. `None` for plain HTTP, sent to the proxy in absolute form.
    pub tunnel: Option<String>,
    /// The `Proxy-Authorization` value, if the proxy was given credentials.
    pub authorization: Option<String>,
}

/// Resolves each distinct scheme/host/port once, before the run, after
/// `--connect-to` and `--unix-socket` have said where connections go.
/// Returns the origins and, for each target, the index of its origin.
pub(crate) fn resolve_origins(
    config: &RunConfig,
) -> Result<(Vec<Origin>, Vec<usize>), EngineError> {
    // A map, not a list searched per target: 100,000 targets on as many
    // hosts would make ten billion comparisons (issue 27).
    let mut keys: std::collections::HashMap<(Scheme, &str, u16), usize> = Default::default();
    let mut origins = Vec::new();
    let mut target_origin = Vec::with_capacity(config.targets.len());
    for t in &config.targets {
        let key = (t.url.scheme, t.url.host.as_str(), t.url.port);
        if let Some(&i) = keys.get(&key) {
            target_origin.push(i);
            continue;
        }
        let origin = resolve_origin(&t.url, &config.http)?;
        target_origin.push(origins.len());
        keys.insert(key, origins.len());
        origins.push(origin);
    }
    Ok((origins, target_origin))
}

/// Where connections for `url` go, resolved now (before the run).
pub(crate) fn resolve_origin(url: &Url, http: &HttpOptions) -> Result<Origin, EngineError> {
    origin_of(url, http, |host, port| {
        let addrs: Vec<SocketAddr> = (host, port)
            .to_socket_addrs()
            .map_err(|e| e.to_string())?
            .collect();
        pick_reachable(&addrs, http.connect_timeout).ok_or_else(|| "no addresses found".to_string())
    })
}

/// Where connections for `url` go: the Unix socket, or the address
/// `resolve` finds for the URL's host and port as `--connect-to` maps them.
/// The TLS name is always the URL's host.
pub(crate) fn origin_of(
    url: &Url,
    http: &HttpOptions,
    resolve: impl FnOnce(&str, u16) -> Result<SocketAddr, String>,
) -> Result<Origin, EngineError> {
    let proxy = http.proxy.for_url(url);
    let addr = match &http.unix_socket {
        Some(path) => Addr::Unix(path.into()),
        None if proxy.is_some() => {
            let p = proxy.expect("checked");
            Addr::Tcp(
                resolve(&p.host, p.port).map_err(|detail| EngineError::Resolve {
                    detail: format!("{detail} (the --proxy host)"),
                    host: p.host.clone(),
                })?,
            )
        }
        None => {
            let (host, port) = connect_address(&http.connect_to, &url.host, url.port);
            Addr::Tcp(resolve(&host, port).map_err(|detail| EngineError::Resolve {
                detail: match host == url.host {
                    true => detail,
                    false => format!("{detail} (--connect-to maps '{}' to it)", url.host),
                },
                host,
            })?)
        }
    };
    let tls = match url.scheme.is_tls() {
        false => None,
        true => Some(
            ServerName::try_from(url.host.clone()).map_err(|e| EngineError::Resolve {
                host: url.host.clone(),
                detail: format!("not a valid TLS server name: {e}"),
            })?,
        ),
    };
    let proxy = proxy.map(|p| ProxyRoute {
        tunnel: url.scheme.is_tls().then(|| {
            let host = match url.host.contains(':') {
                true => format!("[{}]", url.host),
                false => url.host.clone(),
            };
            format!("{host}:{}", url.port)
        }),
        authorization: p.authorization.clone(),
    });
    Ok(Origin { addr, tls, proxy })
}

/// The first address that accepts a connection, else the first address.
///
/// `localhost` often resolves to `::1` first while the server listens on
/// 127.0.0.1 only: browsers and curl fall back, and so must a load
/// generator, or every request of the run fails to connect. Only names
/// with several addresses are probed.
fn pick_reachable(addrs: &[SocketAddr], timeout: Duration) -> Option<SocketAddr> {
    if addrs.len() > 1 {
        let probe = timeout.min(Duration::from_secs(1));
        if let Some(a) = addrs
            .iter()
            .find(|a| std::net::TcpStream::connect_timeout(a, probe).is_ok())
        {
            return Some(*a);
        }
    }
    addrs.first().copied()
}

/// Where a redirect to another origin connects (`--follow-any-host`):
/// resolved when the redirect is met, with tokio's resolver, so a
/// worker's other connections carry on meanwhile.
pub(crate) async fn lookup_origin(url: &Url, http: &HttpOptions) -> Result<Origin, Failure> {
    let addr = match http.unix_socket {
        Some(_) => None,
        None => {
            let (host, port) = connect_address(&http.connect_to, &url.host, url.port);
            let found = tokio::net::lookup_host((host.as_str(), port))
                .await
                .map_err(|e| {
                    Failure::new(
                        ErrorKind::Connect,
                        format!("cannot resolve redirect host '{host}': {e}"),
                    )
                })?
                .next();
            Some(found.ok_or_else(|| {
                Failure::new(
                    ErrorKind::Connect,
                    format!("redirect host '{host}' has no addresses"),
                )
            })?)
        }
    };
    origin_of(url, http, |_, _| {
        addr.ok_or_else(|| "no addresses found".to_string())
    })
    .map_err(|e| Failure::new(ErrorKind::Connect, e.to_string()))
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_address_that_accepts_is_preferred() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let open = listener.local_addr().unwrap();
        // Port 1 on loopback refuses at once.
        let refused: std::net::SocketAddr = "127.0.0.1:1".parse().unwrap();
        let pick = super::pick_reachable(&[refused, open], std::time::Duration::from_secs(1));
        assert_eq!(pick, Some(open));
        assert_eq!(
            super::pick_reachable(&[refused], std::time::Duration::from_secs(1)),
            Some(refused)
        );
    }
}
