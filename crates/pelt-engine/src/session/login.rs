//! `--login`: each sender's login, made before the run's clock starts.
//!
//! Logins happen in [`Run::start`](crate::Run::start), all senders' at
//! once (each on a connection of its own, closed after), so no measured
//! request waits behind one and no figure includes one: the run's epoch is
//! set after the last login. A login that fails (no connection, a status
//! other than 2xx or 3xx) stops the run before any load is sent.

use super::jar::{cookie_url, Jar};
use crate::conn::{connect, for_origin, resolve_origin, tls_connector, Origin};
use crate::error::EngineError;
use crate::h1::{read_response_copies, Copies, NoEvents, PreparedRequest};
use pelt_core::{HttpOptions, Target};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::AsyncWriteExt;

/// Body bytes quoted when a login fails.
const QUOTED: usize = 120;

/// One login, ready to be made by every sender.
struct Login {
    origin: Origin,
    tls: Option<tokio_rustls::TlsConnector>,
    request: Vec<u8>,
    url: url::Url,
    /// What the failure message calls it: `POST http://host/login`.
    name: String,
    /// A HEAD login's answer has no body, whatever its head says.
    head: bool,
    timeout: Duration,
}

impl std::fmt::Debug for Login {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Not the request: it holds the credentials.
        f.debug_struct("Login")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// Logs `senders` senders in, each with a jar of its own; returns the
/// jars, in sender order.
pub(crate) fn login_all(
    login: &Target,
    http: &HttpOptions,
    senders: usize,
) -> Result<Vec<Jar>, EngineError> {
    let origin = resolve_origin(&login.url, http)?;
    // HTTP/1.1 always: the login is one exchange on its own connection.
    let tls = origin
        .tls
        .as_ref()
        .map(|_| tls_connector(http.insecure, false, !http.no_tls_resume));
    let login = Arc::new(Login {
        request: for_origin(
            PreparedRequest::new(login, false).bytes,
            &login.url,
            &origin,
        ),
        origin,
        tls,
        url: cookie_url(&login.url),
        name: format!("{} {}", login.method, login.url),
        head: login.method.eq_ignore_ascii_case("HEAD"),
        timeout: http.timeout,
    });
    // The logins run on a thread of their own, with a runtime of their
    // own: `Run::start` is called from plain threads and from inside a
    // library user's tokio runtime alike, where blocking on a second
    // runtime on the caller's thread would panic ("Cannot start a runtime
    // from within a runtime"). The caller's thread only waits.
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("pelt-login".into())
            .spawn_scoped(scope, || log_in_on_this_thread(&login, senders))
            .map_err(EngineError::Spawn)?
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

/// Every sender's login, on a runtime built for them on this thread.
fn log_in_on_this_thread(login: &Arc<Login>, senders: usize) -> Result<Vec<Jar>, EngineError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(EngineError::Runtime)?;
    rt.block_on(async {
        let mut tasks = tokio::task::JoinSet::new();
        for i in 0..senders {
            let login = login.clone();
            tasks.spawn(async move { (i, login_one(&login).await) });
        }
        let mut jars: Vec<Option<Jar>> = (0..senders).map(|_| None).collect();
        while let Some(done) = tasks.join_next().await {
            let (i, jar) = done.map_err(|e| EngineError::Login(e.to_string()))?;
            // The first failure stops the run; the rest are dropped with it.
            jars[i] = Some(jar.map_err(EngineError::Login)?);
        }
        Ok(jars.into_iter().map(|j| j.unwrap_or_default()).collect())
    })
}

/// One sender's login: its jar, or one line saying why it failed.
async fn login_one(login: &Login) -> Result<Jar, String> {
    let exchange = async {
        let (mut stream, _) = connect(
            &login.origin,
            login.tls.as_ref(),
            login.timeout,
            false,
            false,
        )
        .await
        .map_err(|f| format!("{}: {}", login.name, f.detail))?;
        stream
            .write_all(&login.request)
            .await
            .map_err(|e| format!("{}: {e}", login.name))?;
        stream
            .flush()
            .await
            .map_err(|e| format!("{}: {e}", login.name))?;
        // One response, read by its framing (Content-Length, chunked,
        // or to the close when it has neither), as every measured one
        // is: a server that ignores the request's `Connection: close`
        // and keeps the connection open has still answered in full.
        let mut buf = vec![0u8; crate::h1::FIRST_READ_BUF];
        let mut answer = Answer::default();
        let copies = Copies {
            head: Some(&mut answer.head),
            body: Some(&mut answer.body),
            ..Copies::default()
        };
        let response = read_response_copies(
            &mut stream,
            &mut buf,
            login.head,
            || {},
            copies,
            None::<NoEvents<'_, _>>,
        )
        .await
        .map_err(|f| format!("{}: {}", login.name, f.detail))?;
        answer.status = response.status;
        Ok::<_, String>(answer)
    };
    let response = tokio::time::timeout(login.timeout, exchange)
        .await
        .map_err(|_| {
            format!(
                "{}: no response within --timeout {:?}",
                login.name, login.timeout
            )
        })??;
    judge(login, &response)
}

/// A login's response: its status, head (for the cookies) and body as
/// received (the first bytes are quoted when it failed).
#[derive(Debug, Default)]
struct Answer {
    status: u16,
    head: Vec<u8>,
    body: Vec<u8>,
}

/// A login's response: its cookies in a new jar when its status is 2xx or
/// 3xx (a login often redirects), else the failure with the status and the
/// body's first bytes.
fn judge(login: &Login, answer: &Answer) -> Result<Jar, String> {
    let status = answer.status;
    if !(200..400).contains(&status) {
        let body = &answer.body[..answer.body.len().min(QUOTED)];
        let text: String = String::from_utf8_lossy(body)
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        return Err(format!(
            "{} answered {status} {}: '{}'; check the credentials in --login",
            login.name,
            reason(&answer.head),
            text.trim()
        ));
    }
    let mut jar = Jar::default();
    jar.absorb(&answer.head, &login.url);
    Ok(jar)
}

/// The reason phrase of a response head (`Unauthorized`).
fn reason(head: &[u8]) -> String {
    let mut headers = vec![httparse::EMPTY_HEADER; 256];
    let mut resp = httparse::Response::new(&mut headers);
    let _ = resp.parse(head);
    resp.reason.unwrap_or("").to_string()
}
