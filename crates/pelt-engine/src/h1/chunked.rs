//! `Transfer-Encoding: chunked`, decoded incrementally as the body's
//! bytes arrive: sizes and framing checked, data counted and discarded.

/// Incremental decoder for `Transfer-Encoding: chunked`, counting body
/// bytes and discarding them.
#[derive(Debug, Default)]
pub(super) struct ChunkedDecoder {
    state: ChunkState,
    size: u64,
    digits: u32,
    significant: u32,
    /// Body bytes so far, framing excluded.
    pub(super) body_bytes: u64,
    /// The next data bytes are a chunk's first.
    fresh: bool,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum ChunkState {
    #[default]
    Size,
    Extension,
    SizeLf,
    Data,
    DataCr,
    DataLf,
    TrailerStart,
    Trailer,
    TrailerLf,
    FinalLf,
}

impl ChunkedDecoder {
    /// Consumes `data`. Returns `Some(bytes used)` when the final chunk and
    /// trailers are complete, `None` when more is needed. Each piece of
    /// chunk data goes to `on_data` with whether it is a chunk's first (a
    /// streamed response's events; a no-op closure costs nothing).
    pub(super) fn feed(
        &mut self,
        data: &[u8],
        on_data: &mut impl FnMut(&[u8], bool),
    ) -> Result<Option<usize>, &'static str> {
        use ChunkState::*;
        let mut i = 0;
        while i < data.len() {
            if self.state == Data {
                let take = ((data.len() - i) as u64).min(self.size);
                on_data(&data[i..i + take as usize], self.fresh);
                self.fresh = false;
                self.size -= take;
                self.body_bytes += take;
                i += take as usize;
                if self.size == 0 {
                    self.state = DataCr;
                }
                continue;
            }
            let b = data[i];
            i += 1;
            self.state = match (self.state, b) {
                (Size, b';' | b' ' | b'\t') if self.digits > 0 => Extension,
                (Size, b'\r') if self.digits > 0 => SizeLf,
                (Size, _) => {
                    let d = (b as char).to_digit(16).ok_or("invalid chunk size")?;
                    // Leading zeros count as digits (a size was seen) but
                    // not against the limit.
                    if self.size > 0 || d > 0 {
                        self.significant += 1;
                    }
                    self.digits += 1;
                    if self.significant > 15 {
                        return Err("chunk size too large");
                    }
                    self.size = self.size * 16 + u64::from(d);
                    Size
                }
                (Extension, b'\r') => SizeLf,
                (Extension, _) => Extension,
                (SizeLf, b'\n') if self.size == 0 => TrailerStart,
                (SizeLf, b'\n') => {
                    self.fresh = true;
                    Data
                }
                (DataCr, b'\r') => DataLf,
                (DataLf, b'\n') => {
                    self.digits = 0;
                    self.significant = 0;
                    Size
                }
                (TrailerStart, b'\r') => FinalLf,
                (Trailer, b'\r') => TrailerLf,
                (TrailerStart | Trailer, _) => Trailer,
                (TrailerLf, b'\n') => TrailerStart,
                (FinalLf, b'\n') => return Ok(Some(i)),
                _ => return Err("malformed chunked encoding"),
            };
        }
        Ok(None)
    }
}
