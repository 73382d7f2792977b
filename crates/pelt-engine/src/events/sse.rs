//! Server-sent events, parsed incrementally as the body arrives (WHATWG
//! HTML, "Server-sent events", §9.2.5–9.2.6): lines end at CRLF, LF or
//! CR; a leading BOM is skipped; a line starting with `:` is a comment;
//! `field: value` loses one space after the colon; `data` appends its
//! value and a LF to the data buffer, `event` sets the type, `id` and
//! `retry` are read and not kept (pelt does not reconnect), other fields
//! are ignored; a blank line dispatches the event if the data buffer is
//! not empty (its last LF removed), and an event cut off by the end of the
//! stream is discarded.
//!
//! Input may be split anywhere (a CRLF, a field name, the BOM); no
//! allocation per event: the data is kept only when asked (LLM mode reads
//! it), in a buffer reused from event to event, up to [`MAX_DATA`] bytes.

/// The most of an event's data kept (a longer one is dispatched with its
/// first `MAX_DATA` bytes and `truncated` set).
pub(crate) const MAX_DATA: usize = 1 << 16;
/// The most of an event's type kept.
const MAX_TYPE: usize = 32;
/// The most of an event's `id:` kept (`--event-time id` reads a time
/// from it; a longer one reads as none).
const MAX_ID: usize = 40;

const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];

/// A dispatched event, borrowed from the parser.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Event<'a> {
    /// Its type (`event:`), empty for the default, "message".
    pub kind: &'a [u8],
    /// Its data, when the parser keeps it (else empty).
    pub data: &'a [u8],
    /// Whether the data was longer than [`MAX_DATA`].
    pub truncated: bool,
    /// The `id:` this event set itself (not one a previous event left in
    /// the spec's last-event-ID buffer), if it fit in [`MAX_ID`].
    pub id: Option<&'a [u8]>,
}

/// What the current line's field is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Data,
    Event,
    Id,
    Retry,
    /// An unknown field, or a comment: its value is skipped.
    Ignored,
}

/// Where in a line the parser is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Reading the field name (`len` bytes so far, in `name`).
    Name,
    /// Just after the colon: one space is dropped.
    ValueStart(Field),
    /// In the value.
    Value(Field),
}

/// The incremental parser: its state between two pieces of input.
#[derive(Debug)]
pub(crate) struct SseParser {
    state: State,
    /// The field name so far (only its first bytes: the names that matter
    /// are at most five long).
    name: [u8; 6],
    name_len: usize,
    /// The last byte was a CR: a LF now is the same line end.
    after_cr: bool,
    /// BOM bytes matched at the stream's start; 3 once past it.
    bom: usize,
    /// The data buffer is not empty (a `data` field was seen).
    has_data: bool,
    /// Whether to keep the data, and the data kept.
    keep: bool,
    data: Vec<u8>,
    truncated: bool,
    kind: [u8; MAX_TYPE],
    kind_len: usize,
    /// This event's `id:` so far, whether it has one, whether it was too
    /// long.
    id: [u8; MAX_ID],
    id_len: usize,
    id_set: bool,
    id_over: bool,
    /// `retry`'s value so far is all digits (per spec, else ignored).
    /// Read for the spec's sake only: pelt does not reconnect.
    retry_digits: bool,
}

impl SseParser {
    /// A parser at a stream's start, keeping each event's data if `keep`.
    pub fn new(keep: bool) -> SseParser {
        SseParser {
            state: State::Name,
            name: [0; 6],
            name_len: 0,
            after_cr: false,
            bom: 0,
            has_data: false,
            keep,
            data: Vec::new(),
            truncated: false,
            kind: [0; MAX_TYPE],
            kind_len: 0,
            id: [0; MAX_ID],
            id_len: 0,
            id_set: false,
            id_over: false,
            retry_digits: true,
        }
    }

    /// Back to a stream's start (the data buffer keeps its memory).
    pub fn restart(&mut self, keep: bool) {
        let data = std::mem::take(&mut self.data);
        *self = SseParser::new(keep);
        self.data = data;
        self.data.clear();
    }

    /// Consumes `bytes`, calling `on_event` for each event they complete.
    pub fn feed(&mut self, mut bytes: &[u8], on_event: &mut impl FnMut(Event<'_>)) {
        while self.bom < BOM.len() {
            match bytes.first() {
                None => return,
                Some(&b) if b == BOM[self.bom] => {
                    self.bom += 1;
                    bytes = &bytes[1..];
                }
                Some(_) => {
                    // Not a BOM after all: the bytes matched were a field
                    // name's, which no known field starts with.
                    if self.bom > 0 {
                        self.name_len = self.name.len();
                    }
                    self.bom = BOM.len();
                }
            }
        }
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            if self.after_cr {
                self.after_cr = false;
                if b == b'\n' {
                    i += 1;
                    continue;
                }
            }
            match self.state {
                State::Value(field) => {
                    // The value runs to the line's end: take it in one go.
                    let rest = &bytes[i..];
                    let end = rest
                        .iter()
                        .position(|&c| c == b'\n' || c == b'\r')
                        .unwrap_or(rest.len());
                    self.value(field, &rest[..end]);
                    i += end;
                    if end < rest.len() {
                        self.line_end(rest[end], on_event);
                        i += 1;
                    }
                }
                State::ValueStart(field) => {
                    match b {
                        b'\n' | b'\r' => self.line_end(b, on_event),
                        b' ' => self.state = State::Value(field),
                        _ => {
                            self.state = State::Value(field);
                            continue;
                        }
                    }
                    i += 1;
                }
                State::Name => {
                    match b {
                        b'\n' | b'\r' => self.line_end(b, on_event),
                        b':' => {
                            let field = self.field();
                            self.begin(field);
                            self.state = State::ValueStart(field);
                        }
                        _ => {
                            if self.name_len < self.name.len() {
                                self.name[self.name_len] = b;
                            }
                            // Counted past the array too: "datas" is not "data".
                            self.name_len = (self.name_len + 1).min(self.name.len());
                        }
                    }
                    i += 1;
                }
            }
        }
    }

    /// The field the name read so far names (a line starting with `:` is
    /// a comment, name empty).
    fn field(&self) -> Field {
        match &self.name[..self.name_len] {
            b"data" => Field::Data,
            b"event" => Field::Event,
            b"id" => Field::Id,
            b"retry" => Field::Retry,
            _ => Field::Ignored,
        }
    }

    /// A field's value begins.
    fn begin(&mut self, field: Field) {
        match field {
            Field::Data => {
                if self.has_data && self.keep {
                    // The LF the previous data line appended.
                    self.push(b"\n");
                }
                self.has_data = true;
            }
            Field::Event => self.kind_len = 0,
            Field::Retry => self.retry_digits = true,
            Field::Id => {
                self.id_len = 0;
                self.id_set = true;
                self.id_over = false;
            }
            Field::Ignored => {}
        }
    }

    /// Part of a field's value.
    fn value(&mut self, field: Field, part: &[u8]) {
        match field {
            Field::Data if self.keep => self.push(part),
            Field::Event => {
                let n = part.len().min(MAX_TYPE - self.kind_len);
                self.kind[self.kind_len..self.kind_len + n].copy_from_slice(&part[..n]);
                self.kind_len += n;
            }
            Field::Retry => self.retry_digits &= part.iter().all(u8::is_ascii_digit),
            Field::Id => {
                let n = part.len().min(MAX_ID - self.id_len);
                self.id[self.id_len..self.id_len + n].copy_from_slice(&part[..n]);
                self.id_len += n;
                self.id_over |= n < part.len();
            }
            _ => {}
        }
    }

    fn push(&mut self, part: &[u8]) {
        let room = MAX_DATA.saturating_sub(self.data.len());
        self.truncated |= part.len() > room;
        self.data.extend_from_slice(&part[..part.len().min(room)]);
    }

    /// A line ended with `b` (CR or LF).
    fn line_end(&mut self, b: u8, on_event: &mut impl FnMut(Event<'_>)) {
        self.after_cr = b == b'\r';
        match self.state {
            State::Name if self.name_len == 0 => self.dispatch(on_event),
            State::Name => {
                // A field with no colon: its whole line is its name, and
                // its value is empty.
                let field = self.field();
                self.begin(field);
            }
            State::ValueStart(_) | State::Value(_) => {}
        }
        self.state = State::Name;
        self.name_len = 0;
    }

    /// A blank line: the event, if it has data.
    fn dispatch(&mut self, on_event: &mut impl FnMut(Event<'_>)) {
        if self.has_data {
            on_event(Event {
                kind: &self.kind[..self.kind_len],
                data: &self.data,
                truncated: self.truncated,
                id: (self.id_set && !self.id_over).then_some(&self.id[..self.id_len]),
            });
        }
        self.id_set = false;
        self.has_data = false;
        self.data.clear();
        self.truncated = false;
        self.kind_len = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every event of `input` fed whole, as `(type, data)`.
    fn events(input: &[u8], splits: &[usize]) -> Vec<(String, String)> {
        let mut p = SseParser::new(true);
        let mut out = Vec::new();
        let mut on = |e: Event<'_>| {
            out.push((
                String::from_utf8_lossy(e.kind).into_owned(),
                String::from_utf8_lossy(e.data).into_owned(),
            ))
        };
        let mut at = 0;
        for &s in splits {
            p.feed(&input[at..s], &mut on);
            at = s;
        }
        p.feed(&input[at..], &mut on);
        out
    }

    fn ev(kind: &str, data: &str) -> (String, String) {
        (kind.into(), data.into())
    }

    const SPEC: &[u8] = b"\xEF\xBB\xBF: a comment\r\ndata: first\r\ndata:second\r\n\r\nevent: add\rid: 7\rretry: 10\rdata\r\r:no event here\n\ndata:  two spaces\nfield: x\nid\n\ndata: cut off at the end";

    fn spec_events() -> Vec<(String, String)> {
        vec![
            ev("", "first\nsecond"),
            ev("add", ""),
            ev("", " two spaces"),
        ]
    }

    #[test]
    fn parses_the_specs_fields_and_line_ends() {
        assert_eq!(events(SPEC, &[]), spec_events());
    }

    /// Split anywhere: every cut of the input, and every pair of cuts,
    /// gives the same events.
    #[test]
    fn split_anywhere_gives_the_same_events() {
        let want = spec_events();
        for a in 0..=SPEC.len() {
            assert_eq!(events(SPEC, &[a]), want, "split at {a}");
            for b in a..=SPEC.len() {
                assert_eq!(events(SPEC, &[a, b]), want, "splits at {a}, {b}");
            }
        }
    }

    /// Each event's own `id:`, split anywhere; an id left by an earlier
    /// event is not this one's, and one too long is none.
    #[test]
    fn each_event_has_its_own_id() {
        let ids = |input: &[u8], cut: usize| {
            let mut p = SseParser::new(false);
            let mut out = Vec::new();
            let mut on =
                |e: Event<'_>| out.push(e.id.map(|i| String::from_utf8_lossy(i).into_owned()));
            p.feed(&input[..cut], &mut on);
            p.feed(&input[cut..], &mut on);
            out
        };
        let some = |s: &str| Some(s.to_string());
        for cut in 0..=SPEC.len() {
            assert_eq!(
                ids(SPEC, cut),
                vec![None, some("7"), some("")],
                "cut at {cut}"
            );
        }
        let long = format!("id: {}\ndata: x\n\ndata: y\n\n", "9".repeat(MAX_ID + 1));
        assert_eq!(ids(long.as_bytes(), 3), vec![None, None]);
    }

    #[test]
    fn byte_by_byte_crlf_and_lone_cr() {
        let input = b"data: a\r\n\r\ndata: b\r\rdata: c\n\n";
        let cuts: Vec<usize> = (1..input.len()).collect();
        assert_eq!(
            events(input, &cuts),
            vec![ev("", "a"), ev("", "b"), ev("", "c")]
        );
    }

    #[test]
    fn oddities_of_names_bom_and_sizes() {
        // A BOM only at the start; a second one is part of a field name.
        assert_eq!(
            events(b"\xEF\xBB\xBF\xEF\xBB\xBFdata: x\n\ndata: y\n\n", &[]),
            vec![ev("", "y")]
        );
        // A half BOM is a field name: ignored.
        assert_eq!(events(b"\xEFdata: x\n\n", &[]), vec![]);
        // Names longer than known fields, or prefixes, are ignored.
        assert_eq!(
            events(b"datas: x\ndat: y\ndata:z\n\n", &[]),
            vec![ev("", "z")]
        );
        // Data longer than kept is dispatched, cut and marked.
        let big = format!("data: {}\n\n", "x".repeat(MAX_DATA + 10));
        let mut p = SseParser::new(true);
        let mut seen = None;
        p.feed(big.as_bytes(), &mut |e| {
            seen = Some((e.data.len(), e.truncated))
        });
        assert_eq!(seen, Some((MAX_DATA, true)));
        // Not kept: events are still dispatched, with no data.
        let mut p = SseParser::new(false);
        let mut n = 0;
        p.feed(b"data: a\n\ndata: b\n\n", &mut |e| {
            assert!(e.data.is_empty());
            n += 1;
        });
        assert_eq!(n, 2);
        p.restart(false);
        p.feed(b"\xEF\xBB\xBFdata: c\n\n", &mut |_| n += 1);
        assert_eq!(n, 3);
    }
}
