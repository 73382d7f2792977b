//! One request's exchange, bounded by `--timeout`, turned into its
//! sample: the attempt's milestones, failures classified, and ab's length
//! check.

use super::Worker;
use crate::plan::LENGTH_UNSET;
use crate::transport::{Attempt, Outgoing, Runner, Transport};
use pelt_core::{ErrorKind, Nanos, Sample};
use std::sync::atomic::Ordering;

impl Worker {
    /// Sends one request and reads its response, never longer than
    /// `--timeout`. Always returns a sample: failures are data.
    pub(crate) async fn exchange(
        &self,
        transport: &mut impl Transport,
        target: u32,
        intended: Nanos,
        sender: usize,
    ) -> Sample {
        let plan = &*self.plan;
        // In a closed loop the request starts when it was decided on, an
        // instant ago; in rate mode it may start long after its slot.
        let started = if plan.pacer.is_none() {
            intended
        } else {
            self.now()
        };
        // `--hold`: a subscription runs to the run's end, not --timeout.
        let hold = plan.http.streamed.hold;
        let deadline = match (hold, plan.deadline) {
            (true, Some(end)) => plan.instant(end),
            _ => plan.instant(started) + plan.timeout,
        };
        let mut attempt = Attempt::default();
        let result = tokio::time::timeout_at(
            deadline,
            transport.send(self, &mut Outgoing::Target(target), sender, &mut attempt),
        )
        .await;
        // A streamed response's events so far, however the send ended.
        let mut stream = transport.streamed();
        let now = self.now();
        let mut sample = Sample {
            target,
            intended,
            sent: attempt.sent,
            first_byte: attempt.first_byte,
            done: now,
            status: 0,
            bytes_in: 0,
            body_bytes: 0,
            bytes_out: attempt.bytes_out,
            reused: attempt.reused,
            error: None,
        };
        if attempt.cookie {
            self.intervals
                .borrow_mut()
                .count_cookie(intended, sample.done);
        }
        self.count_race(&attempt, intended, sample.done);
        match result {
            Ok(Ok(resp)) => {
                if let Some(done) = attempt.done {
                    sample.done = done;
                    self.intervals.borrow_mut().record_read_lag(
                        intended,
                        done,
                        now - done,
                        attempt.tx_stamped,
                    );
                }
                sample.status = resp.status;
                sample.bytes_in = resp.bytes_in;
                sample.body_bytes = resp.body_bytes;
                // A stream's length is its events': ab's check is not for it.
                if (200..300).contains(&resp.status)
                    && !self.plan.http.accept_variable_length
                    && stream.is_none()
                    && plan.protocol != crate::plan::Protocol::Ws
                {
                    self.check_length(&mut sample);
                }
            }
            Ok(Err(failure)) if failure.kind == ErrorKind::Unfinished => {
                // Never sent; the sender drops it (see `ConnectGate::permit`).
                sample.error = Some(ErrorKind::Unfinished);
            }
            Ok(Err(failure)) => {
                transport.reset();
                sample.status = failure.status;
                sample.bytes_in = failure.bytes_in;
                // A stream that had begun and then lost its connection or
                // its framing was cut short: a failure of its own kind.
                let kind = match (stream, failure.kind) {
                    (
                        Some(_),
                        ErrorKind::Closed
                        | ErrorKind::Reset
                        | ErrorKind::Read
                        | ErrorKind::InvalidResponse,
                    ) => ErrorKind::StreamCut,
                    (_, kind) => kind,
                };
                self.fail(&mut sample, kind, || failure.detail);
            }
            Err(_elapsed) if hold && stream.is_some() => {
                // A held stream the run's end closes: a complete stream,
                // its response whole as far as it went, no failure.
                transport.reset();
                let tally = stream.as_mut().expect("a stream");
                tally.held = true;
                sample.status = tally.status;
                sample.bytes_in = tally.body_bytes;
                sample.body_bytes = tally.body_bytes;
            }
            Err(_elapsed) => {
                transport.reset();
                let sent = sample.sent.is_some();
                self.fail(&mut sample, ErrorKind::Timeout, || match sent {
                    true if hold => "no response before the run's end (--hold)".to_string(),
                    true => format!("no complete response within --timeout {:?}", plan.timeout),
                    // Else the wait looks like a slow server.
                    false => format!(
                        "no complete response within --timeout {:?}: the request was never \
                         sent (no connection was ready, or with --http2/--http3 the server's limit \
                         on concurrent streams allowed no new one)",
                        plan.timeout
                    ),
                });
            }
        }
        if let Some(tally) = stream {
            self.end_stream(&mut sample, &tally);
        }
        sample
    }

    /// A streamed response ended (whole, or failed after its head): it
    /// is recorded as a stream, and one whose end marker never came
    /// (`--llm`'s `[DONE]`) was cut short.
    fn end_stream(&self, sample: &mut Sample, tally: &pelt_core::stream::Tally) {
        let needs_end = self.plan.http.streamed.llm.is_some();
        if sample.error.is_none() && needs_end && !tally.ended && !tally.held {
            let events = tally.events;
            self.fail(sample, ErrorKind::StreamCut, || {
                format!(
                    "the stream ended after {events} token events without its [DONE]: \
                     the server closed it early, or it is not an OpenAI-style stream"
                )
            });
        }
        // Its clock starts where its response time's does.
        let start = sample
            .sent
            .map_or(sample.intended, |sent| sent.min(sample.intended));
        let complete = sample.error.is_none();
        self.intervals.borrow_mut().record_stream(
            sample.intended,
            start,
            sample.done,
            tally,
            complete,
        );
    }

    /// Counts a request that met a keep-alive race (HTTP/1.1: the server
    /// closed its reused connection as it went out): sent again, or lost.
    pub(super) fn count_race(&self, attempt: &Attempt, intended: Nanos, done: Nanos) {
        if attempt.retried || attempt.lost_on_reuse {
            self.intervals
                .borrow_mut()
                .count_keepalive_race(intended, done, attempt.retried);
        }
    }

    /// Requests counted as retried, and as lost on a reused connection,
    /// in the current second (tests).
    #[cfg(test)]
    pub(crate) fn races_so_far(&self) -> [u64; 2] {
        let i = self.intervals.borrow();
        [i.current().retried, i.current().lost_on_reuse]
    }

    /// ab's Length check: a 2xx body whose length differs from the first
    /// 2xx body of the same target is a failure.
    fn check_length(&self, sample: &mut Sample) {
        let expected = &self.plan.expected_len[sample.target as usize];
        // Load first: a shared read is cheap, a compare-exchange takes the
        // cache line away from the other workers on every request.
        let mut first = expected.load(Ordering::Relaxed);
        if first == LENGTH_UNSET {
            first = match expected.compare_exchange(
                LENGTH_UNSET,
                sample.body_bytes,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => sample.body_bytes,
                Err(existing) => existing,
            };
        }
        if first != sample.body_bytes {
            let got = sample.body_bytes;
            self.fail(sample, ErrorKind::Length, || {
                format!("body was {got} bytes; the first response for this target had {first}")
            });
        }
    }

    /// Marks `sample` failed with `kind`, keeping the message as an example
    /// only if the recorder wants one (so the message is rarely built).
    pub(super) fn fail(
        &self,
        sample: &mut Sample,
        kind: ErrorKind,
        detail: impl FnOnce() -> String,
    ) {
        sample.error = Some(kind);
        self.intervals
            .borrow_mut()
            .add_example(sample.intended, kind, detail);
    }
}
