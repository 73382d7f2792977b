//! TLS for every connection of a run: one rustls client configuration,
//! with ALPN offering the protocol the user asked for.

use rustls::pki_types::ServerName;
use std::io;
use std::sync::Arc;

/// Whether a handshake failed because the server supports none of the
/// protocols offered by ALPN (OpenSSL-based servers such as nginx say so
/// with an alert rather than ignoring ALPN).
pub(super) fn no_application_protocol(e: &io::Error) -> bool {
    e.get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
        .is_some_and(|r| {
            matches!(
                r,
                rustls::Error::AlertReceived(rustls::AlertDescription::NoApplicationProtocol)
            )
        })
}

/// Whether a handshake failed on an alert the server sent.
pub(super) fn alert_received(e: &io::Error) -> bool {
    e.get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
        .is_some_and(|r| matches!(r, rustls::Error::AlertReceived(_)))
}

/// What a handshake the server refused with an alert says when `name` is
/// an IP address: TLS sends no server name (SNI) for one (RFC 6066), and
/// a server that picks its certificate by name (Caddy's `tls internal`,
/// name-based virtual hosts) then has none to give and ends the
/// handshake: "error 80" alone says nothing of that (issue 35 §5).
/// Empty for a host name. `addr` is where the connection went.
pub(crate) fn without_sni(name: &ServerName<'_>, addr: &std::net::SocketAddr) -> String {
    let ServerName::IpAddress(_) = name else {
        return String::new();
    };
    let port = addr.port();
    let ip = match addr {
        std::net::SocketAddr::V6(a) => format!("[{}]", a.ip()),
        std::net::SocketAddr::V4(a) => a.ip().to_string(),
    };
    format!(
        "; no server name (SNI) goes to an IP address, and this server wants one to pick its \
         certificate: put its host name in the URL and keep the address with --connect-to, like \
         https://NAME:{port}/ --connect-to NAME:{port}:{ip}:{port} (--host changes only the Host \
         header)"
    )
}

/// A TLS alert's name, for the number QUIC's error code carries.
pub(crate) fn alert_name(alert: u8) -> Option<&'static str> {
    Some(match alert {
        10 => "unexpected_message",
        40 => "handshake_failure",
        42 => "bad_certificate",
        43 => "unsupported_certificate",
        46 => "certificate_unknown",
        47 => "illegal_parameter",
        48 => "unknown_ca",
        49 => "access_denied",
        50 => "decode_error",
        70 => "protocol_version",
        80 => "internal_error",
        109 => "missing_extension",
        112 => "unrecognized_name",
        116 => "certificate_required",
        120 => "no_application_protocol",
        _ => return None,
    })
}

/// Whether a handshake failed because the server's first bytes were no
/// TLS record at all: a plain-HTTP server answers a ClientHello with an
/// `HTTP/1.1 400` response, whose 'H' is no TLS content type.
pub(super) fn plain_text_reply(e: &io::Error) -> bool {
    e.get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
        .is_some_and(|r| {
            matches!(
                r,
                rustls::Error::InvalidMessage(rustls::InvalidMessage::InvalidContentType)
            )
        })
}

/// The TLS client configuration shared by every connection of a run.
/// With `http2`, ALPN offers only `h2`: the user asked for HTTP/2, so a
/// server that would pick HTTP/1.1 must fail visibly, not quietly change
/// what is measured. With `resume`, each connection offers a session an
/// earlier one got (rustls' in-memory store, shared by the run's
/// workers: TLS 1.3 tickets, TLS 1.2 tickets and session IDs), as
/// browsers do; without, every handshake is full, as ab's and siege's
/// are (`--no-tls-resume`).
pub fn tls_connector(insecure: bool, http2: bool, resume: bool) -> tokio_rustls::TlsConnector {
    let mut config = client_config(insecure, false);
    if !resume {
        config.resumption = rustls::client::Resumption::disabled();
    }
    config.alpn_protocols = if http2 {
        vec![b"h2".to_vec()]
    } else {
        vec![b"http/1.1".to_vec()]
    };
    tokio_rustls::TlsConnector::from(Arc::new(config))
}

/// rustls' client configuration on ring, verifying certificates against
/// the web's roots unless `insecure`; no ALPN yet (the caller's protocol
/// says which). `tls13_only` for QUIC, which carries TLS 1.3 and nothing
/// older.
///
/// AES-128-GCM is offered before AES-256-GCM (ring's order puts 256
/// first), as browsers and h2load offer them: a server that follows the
/// client's order (nginx's default) then does the work it does for
/// browsers, and pelt's load is comparable with h2load's (issue 44 §4).
pub(crate) fn client_config(insecure: bool, tls13_only: bool) -> rustls::ClientConfig {
    let mut provider = rustls::crypto::ring::default_provider();
    provider
        .cipher_suites
        .sort_by_key(|s| (!is_tls13(s), !is_aes_128_gcm(s.suite())));
    let provider = Arc::new(provider);
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone());
    let builder = match tls13_only {
        true => builder.with_protocol_versions(&[&rustls::version::TLS13]),
        false => builder.with_safe_default_protocol_versions(),
    }
    .expect("ring supports TLS 1.3 and 1.2");
    if insecure {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AcceptAnyCert(provider)))
            .with_no_client_auth()
    } else {
        let roots = rustls::RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        };
        builder.with_root_certificates(roots).with_no_client_auth()
    }
}

/// Whether `suite` is one of TLS 1.3's.
fn is_tls13(suite: &rustls::SupportedCipherSuite) -> bool {
    matches!(suite, rustls::SupportedCipherSuite::Tls13(_))
}

/// Whether `suite` is one of AES-128-GCM's.
fn is_aes_128_gcm(suite: rustls::CipherSuite) -> bool {
    use rustls::CipherSuite::*;
    matches!(
        suite,
        TLS13_AES_128_GCM_SHA256
            | TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256
            | TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256
    )
}

/// `--insecure`: accepts any certificate, still checks handshake signatures
/// so the connection is at least consistent.
#[derive(Debug)]
struct AcceptAnyCert(Arc<rustls::crypto::CryptoProvider>);

impl rustls::client::danger::ServerCertVerifier for AcceptAnyCert {
    fn verify_server_cert(
        &self,
        _end_entity: &rustls::pki_types::CertificateDer<'_>,
        _intermediates: &[rustls::pki_types::CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        Ok(rustls::client::danger::ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustls::CipherSuite::*;

    /// Browsers' and h2load's order: AES-128-GCM first in each version,
    /// TLS 1.3's suites before TLS 1.2's, none dropped.
    #[test]
    fn aes_128_gcm_is_offered_first_in_each_version() {
        let config = client_config(true, false);
        let suites: Vec<_> = config
            .crypto_provider()
            .cipher_suites
            .iter()
            .map(|s| (is_tls13(s), s.suite()))
            .collect();
        assert_eq!(
            suites.len(),
            rustls::crypto::ring::default_provider().cipher_suites.len()
        );
        assert_eq!(suites[0], (true, TLS13_AES_128_GCM_SHA256));
        let first12 = suites.iter().position(|s| !s.0).unwrap();
        assert!(suites[..first12].iter().all(|s| s.0), "{suites:?}");
        assert!(is_aes_128_gcm(suites[first12].1), "{suites:?}");
    }
}
