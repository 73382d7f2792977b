//! `pelt run`'s WebSocket flags (issue 40): `--ws-protocol`,
//! `--ws-binary`, `--max-message`, lowered into `WsOptions`.

use crate::UserError;
use clap::Args;
use pelt_core::ws::WsOptions;

/// How a ws:// or wss:// run talks.
#[derive(Debug, Clone, Args)]
pub struct WsArgs {
    /// ws:// and wss:// runs: a subprotocol to offer in the upgrade
    /// (Sec-WebSocket-Protocol), in order of preference; repeat it for
    /// several. The server may choose one of them or none; one it was not
    /// offered fails the upgrade (ws_upgrade).
    #[arg(long = "ws-protocol", value_name = "NAME")]
    pub protocols: Vec<String>,

    /// ws:// and wss:// runs: send each message as a binary frame (else a
    /// text frame, whose --body must be UTF-8).
    #[arg(long = "ws-binary")]
    pub binary: bool,

    /// ws:// and wss:// runs: the longest message read, all its fragments
    /// together (B, KiB, MiB; a plain number is bytes) [default: 16MiB]. A
    /// longer one fails as ws_too_big and closes its connection with 1009.
    #[arg(long = "max-message", value_name = "SIZE")]
    pub max_message: Option<String>,
}

impl WsArgs {
    /// The WebSocket options these flags ask for.
    pub fn options(&self) -> Result<WsOptions, UserError> {
        let mut opts = WsOptions {
            protocols: self.protocols.clone(),
            binary: self.binary,
            ..WsOptions::default()
        };
        if let Some(size) = &self.max_message {
            opts.max_message = parse_size(size).ok_or_else(|| {
                UserError(format!(
                    "--max-message: '{size}' is not a size; write bytes or a unit, like --max-message 64KiB or 1MiB"
                ))
            })?;
        }
        Ok(opts)
    }
}

/// `N`, `NB`, `NKiB`, `NMiB`, `NGiB` (also `KB`/`MB`/`GB`, read as
/// powers of 1,024 too, as message limits are usually meant).
fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let n: u64 = num.parse().ok()?;
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        _ => return None,
    };
    n.checked_mul(1 << shift)
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes_take_units() {
        assert_eq!(parse_size("100"), Some(100));
        assert_eq!(parse_size("64KiB"), Some(65_536));
        assert_eq!(parse_size("1 MiB"), Some(1 << 20));
        assert_eq!(parse_size("1mb"), Some(1 << 20));
        assert_eq!(parse_size("lots"), None);
        assert_eq!(parse_size("1TiB"), None);
    }
}
