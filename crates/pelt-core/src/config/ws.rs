//! How a WebSocket run (`ws://`, `wss://`) talks: subprotocols, the
//! message type and the largest message (`--ws-protocol`, `--ws-binary`,
//! `--max-message`). What such a run measures is [`crate::measure::ws`].

use serde::{Deserialize, Serialize};

/// The largest message accepted by default: 16 MiB (tungstenite's and
/// the `websockets` library's limits are 64 MiB and 1 MiB).
pub const DEFAULT_MAX_MESSAGE: u64 = 16 << 20;

/// How a WebSocket run talks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WsOptions {
    /// `--ws-protocol`: subprotocols offered in `Sec-WebSocket-Protocol`,
    /// in order of preference. The server may pick one or none; one it
    /// was not offered fails the upgrade.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub protocols: Vec<String>,
    /// `--ws-binary`: messages go as binary frames (else text frames,
    /// whose body must be UTF-8).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub binary: bool,
    /// `--max-message`: the longest message (all its fragments) read;
    /// a longer one, or a frame that announces more, fails as
    /// `ws_too_big` and closes the connection with 1009.
    pub max_message: u64,
}

impl Default for WsOptions {
    fn default() -> Self {
        WsOptions {
            protocols: Vec::new(),
            binary: false,
            max_message: DEFAULT_MAX_MESSAGE,
        }
    }
}

impl WsOptions {
    /// Whether these are the defaults (left out of a saved run).
    pub fn is_default(&self) -> bool {
        *self == WsOptions::default()
    }
}
