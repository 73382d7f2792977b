//! What a WebSocket run (ws://, wss://) may be asked for: checked by
//! [`RunConfig::validate`].

use super::{ConfigError, RunConfig};

impl RunConfig {
    /// What a WebSocket run cannot be asked for, and WebSocket options
    /// without one.
    pub(super) fn validate_ws(&self) -> Result<(), ConfigError> {
        let ws = self.targets.iter().filter(|t| t.url.scheme.is_ws()).count();
        if ws == 0 {
            if !self.http.ws.is_default() {
                return Err(ConfigError::WsOptionsWithoutWs);
            }
            return Ok(());
        }
        if ws != self.targets.len() {
            return Err(ConfigError::WsMixed);
        }
        if let Some(t) = self.targets.iter().find(|t| t.method != "GET") {
            return Err(ConfigError::WsMethod {
                url: t.url.to_string(),
                method: t.method.clone(),
            });
        }
        let with = if self.http.http2 {
            Some("HTTP/2 (RFC 8441 is not supported yet)")
        } else if self.http.http3 {
            Some("HTTP/3")
        } else if !self.http.proxy.is_off() {
            Some("a proxy")
        } else if self.http.follow > 0 {
            Some("following redirects")
        } else if self.scenario.is_some() {
            Some("a scenario")
        } else if !self.http.keepalive {
            Some("a connection per request (no keep-alive)")
        } else if !self.http.streamed.is_default() {
            Some("streamed responses")
        } else if self.http.session.login.is_some() {
            Some("a login")
        } else {
            None
        };
        if let Some(what) = with {
            return Err(ConfigError::WsWith(what));
        }
        if self.http.ws.max_message == 0 {
            return Err(ConfigError::WsMaxMessage);
        }
        let bad_protocol = |p: &String| {
            p.is_empty()
                || !p
                    .bytes()
                    .all(|b| b.is_ascii_graphic() && !b"()<>@,;:\\\"/[]?={}".contains(&b))
        };
        if let Some(p) = self.http.ws.protocols.iter().find(|p| bad_protocol(p)) {
            return Err(ConfigError::WsProtocolName(p.clone()));
        }
        if !self.http.ws.binary {
            if let Some(t) = self
                .targets
                .iter()
                .find(|t| std::str::from_utf8(&t.body).is_err())
            {
                return Err(ConfigError::WsTextNotUtf8(t.url.to_string()));
            }
        }
        Ok(())
    }
}
