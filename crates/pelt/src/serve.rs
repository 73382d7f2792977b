//! `pelt serve`: the built-in target server in the foreground.

use crate::flags::ServeArgs;
use crate::flags::UserError;
use pelt_core::parse_duration;
use pelt_target::{Pause, ServeConfig, Server};
use std::net::{IpAddr, SocketAddr};

pub fn command(args: ServeArgs) -> Result<std::process::ExitCode, UserError> {
    let ip: IpAddr = args.host.parse().map_err(|_| {
        UserError(format!(
            "invalid --host '{}': give an IP address such as 127.0.0.1 or ::1",
            args.host
        ))
    })?;
    let pause = match (&args.pause_after, &args.pause_for) {
        (Some(after), Some(length)) => Some(Pause {
            after: parse_duration(after).map_err(|e| UserError(format!("--pause-after: {e}")))?,
            length: parse_duration(length).map_err(|e| UserError(format!("--pause-for: {e}")))?,
        }),
        _ => None,
    };
    let delay = |flag: &str, v: &Option<String>| {
        v.as_deref()
            .map(parse_duration)
            .transpose()
            .map_err(|e| UserError(format!("{flag}: {e}")))
            .map(Option::unwrap_or_default)
    };
    let config = ServeConfig {
        threads: args.threads.unwrap_or(0),
        pause,
        delay: delay("--delay", &args.delay)?,
        delay_growth: delay("--delay-growth", &args.delay_growth)?,
        http3: args.http3,
        ..ServeConfig::default()
    };
    let server = Server::bind(SocketAddr::new(ip, args.port), config).map_err(|e| {
        UserError(format!(
            "cannot listen on {}:{}: {e}; pick another --port (0 chooses a free one)",
            args.host, args.port
        ))
    })?;
    let addr = server.local_addr();
    let shown = match addr.ip() {
        IpAddr::V6(v6) => format!("[{v6}]:{}", addr.port()),
        IpAddr::V4(v4) => format!("{v4}:{}", addr.port()),
    };
    // One line, HTTP/3 included: readers (tests, scripts) take the first
    // line and may close the pipe after it.
    let h3 = match args.http3 {
        true => format!(" and HTTP/3 on https://{shown}/ (UDP, self-signed: run with --insecure)"),
        false => String::new(),
    };
    eprintln!(
        "pelt serve: listening on http://{shown}/{h3} (try /?size=1k&delay=5ms; `pelt serve --help` lists the controls; Ctrl-C stops)"
    );
    server
        .run()
        .map_err(|e| UserError(format!("server failed: {e}")))?;
    Ok(std::process::ExitCode::SUCCESS)
}
