//! Data feeds: CSV files (a header row) and JSON-lines files, read a row
//! at a time as flows need them, so a feed of millions of rows costs a
//! line buffer, not the file (`random` keeps one offset per row: 8 bytes).
//!
//! Picks: `in turn` (rows in file order, shared by every virtual user,
//! starting again at the top after the last), `random` (any row, each
//! time), `unique` (each row once in the whole run; when none is left,
//! no virtual user starts another flow and the run ends, said in the
//! report's warnings as the feed running out).

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// How rows are picked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pick {
    /// In file order, from the top again after the last row.
    InTurn,
    /// Any row, uniformly, each time.
    Random,
    /// Each row once in the whole run.
    Unique,
}

/// When a virtual user takes a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Per {
    /// Once, at its first flow (its `once` steps see it).
    User,
    /// At the start of every flow.
    Iteration,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Csv,
    JsonLines,
}

/// A feed, open for the run.
#[derive(Debug)]
pub struct Feed {
    /// Its name: templates use `{{name.column}}`.
    pub name: String,
    /// Its columns, in order (CSV: the header; JSON lines: the first
    /// row's keys).
    pub columns: Vec<String>,
    /// How rows are picked.
    pub pick: Pick,
    /// When a virtual user takes one.
    pub per: Per,
    /// The first variable slot: column `i` goes to slot `first_slot + i`.
    pub first_slot: usize,
    path: PathBuf,
    format: Format,
    source: Mutex<Source>,
    /// `--shard I/N`: this process takes rows `k` with `k mod N == I`
    /// (`in turn` and `unique`), so shards share a feed out, each row to
    /// one of them.
    shard: (u64, u64),
}

#[derive(Debug)]
struct Source {
    reader: BufReader<File>,
    /// Where the first row starts.
    data_start: u64,
    line: String,
    /// `random` only: where each row starts.
    offsets: Vec<u64>,
    /// `unique`: whether the last row has been handed out.
    exhausted: bool,
    /// The number of the next row read (from 0, again after a rewind).
    row: u64,
    /// Rows this process handed out.
    used: u64,
}

impl Feed {
    /// Opens `path` (relative paths from the scenario's folder) and reads
    /// its columns; an empty feed is an error.
    pub(crate) fn open(
        name: &str,
        path: &Path,
        format: Option<&str>,
        pick: Pick,
        per: Per,
        first_slot: usize,
    ) -> Result<Feed, String> {
        let format = match format {
            Some("csv") => Format::Csv,
            Some("jsonl" | "json-lines" | "ndjson") => Format::JsonLines,
            Some(other) => {
                return Err(format!(
                    "unknown feed format '{other}'; use \"csv\" or \"jsonl\""
                ))
            }
            None => match path.extension().and_then(|e| e.to_str()) {
                Some("jsonl" | "ndjson") => Format::JsonLines,
                _ => Format::Csv,
            },
        };
        let file = File::open(path).map_err(|e| {
            format!("cannot open feed '{name}' file {}: {e}; check the path (relative to the scenario file)", path.display())
        })?;
        let mut reader = BufReader::new(file);
        let mut line = String::new();
        let columns;
        let data_start;
        match format {
            Format::Csv => {
                let n = reader
                    .read_line(&mut line)
                    .map_err(|e| format!("cannot read feed '{name}' ({}): {e}", path.display()))?;
                columns = csv_fields(line.trim_end_matches(['\r', '\n']))
                    .into_iter()
                    .map(|c| String::from_utf8_lossy(&c).trim().to_string())
                    .collect::<Vec<_>>();
                data_start = n as u64;
                if columns.iter().any(String::is_empty) || n == 0 {
                    return Err(format!(
                        "feed '{name}' ({}) needs a header row naming every column",
                        path.display()
                    ));
                }
            }
            Format::JsonLines => {
                data_start = 0;
                reader
                    .read_line(&mut line)
                    .map_err(|e| format!("cannot read feed '{name}' ({}): {e}", path.display()))?;
                let v: serde_json::Map<String, serde_json::Value> =
                    serde_json::from_str(line.trim()).map_err(|e| {
                        format!(
                            "feed '{name}' ({}) line 1 is not a JSON object: {e}",
                            path.display()
                        )
                    })?;
                columns = v.keys().cloned().collect();
            }
        }
        let mut source = Source {
            reader,
            data_start,
            line,
            offsets: Vec::new(),
            exhausted: false,
            row: 0,
            used: 0,
        };
        source
            .reader
            .seek(SeekFrom::Start(data_start))
            .map_err(|e| e.to_string())?;
        // A row to read at all: an empty feed feeds nothing. A CSV feed
        // is read through once, so that a row short of a column is
        // refused now with its line, not sent as an empty value all run.
        let has_row = match format {
            Format::Csv => check_csv_rows(&mut source.reader, name, path, &columns)?,
            Format::JsonLines => has_a_row(&mut source.reader)
                .map_err(|e| format!("cannot read feed '{name}' ({}): {e}", path.display()))?,
        };
        if !has_row {
            return Err(format!(
                "feed '{name}' ({}) has no rows{}; add rows or remove the feed",
                path.display(),
                if pick == Pick::Unique {
                    " to hand out once each (pick = \"unique\")"
                } else {
                    ""
                }
            ));
        }
        if pick == Pick::Random {
            source.offsets = row_offsets(path, data_start)
                .map_err(|e| format!("cannot read feed '{name}' ({}): {e}", path.display()))?;
        }
        source
            .reader
            .seek(SeekFrom::Start(data_start))
            .map_err(|e| e.to_string())?;
        Ok(Feed {
            name: name.to_string(),
            columns,
            pick,
            per,
            first_slot,
            path: path.to_path_buf(),
            format,
            source: Mutex::new(source),
            shard: (0, 1),
        })
    }

    /// Makes this process shard `index` of `count` (`--shard`): it takes
    /// every `count`-th row from the `index`-th (`in turn`, `unique`).
    pub fn set_shard(&mut self, index: u32, count: u32) {
        self.shard = (u64::from(index), u64::from(count.max(1)));
    }

    /// The file it reads.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A `unique` feed with no row left: the rows this process handed
    /// out (all of them, or with `--shard` its share); `None` while rows
    /// remain, and for other picks.
    pub fn ran_out(&self) -> Option<u64> {
        let s = self.source.lock().unwrap_or_else(|p| p.into_inner());
        s.exhausted.then_some(s.used)
    }

    /// Writes the next row's values into `slots` (columns from
    /// `first_slot`). Returns `false` when a `unique` feed has no row
    /// left. A row with fewer fields than columns leaves the rest empty.
    pub fn next_row(
        &self,
        rng: &mut fastrand::Rng,
        slots: &mut [Vec<u8>],
        set: &mut [bool],
    ) -> bool {
        let mut s = self.source.lock().unwrap_or_else(|p| p.into_inner());
        let s = &mut *s;
        if s.exhausted {
            return false;
        }
        loop {
            if self.pick == Pick::Random {
                let at = s.offsets[rng.usize(..s.offsets.len())];
                if s.reader.seek(SeekFrom::Start(at)).is_err() {
                    return false;
                }
            }
            s.line.clear();
            match s.reader.read_line(&mut s.line) {
                Ok(0) | Err(_) => {
                    if self.pick == Pick::Unique {
                        s.exhausted = true;
                        return false;
                    }
                    // In turn: from the top again.
                    // A pass with no row for this shard would loop for ever.
                    if s.row <= self.shard.0
                        || s.reader.seek(SeekFrom::Start(s.data_start)).is_err()
                    {
                        return false;
                    }
                    s.row = 0;
                    continue;
                }
                Ok(_) if s.line.trim().is_empty() => continue,
                Ok(_) if self.pick == Pick::Random => break,
                Ok(_) => {
                    let k = s.row;
                    s.row += 1;
                    if k % self.shard.1 == self.shard.0 {
                        break;
                    }
                }
            }
        }
        s.used += 1;
        let line = s.line.trim_end_matches(['\r', '\n']);
        let n = self.columns.len();
        let out = &mut slots[self.first_slot..self.first_slot + n];
        let set = &mut set[self.first_slot..self.first_slot + n];
        set.fill(true);
        for v in out.iter_mut() {
            v.clear();
        }
        match self.format {
            Format::Csv => {
                for (v, field) in out.iter_mut().zip(csv_fields(line)) {
                    *v = field;
                }
            }
            Format::JsonLines => {
                if let Ok(obj) =
                    serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(line)
                {
                    for (v, col) in out.iter_mut().zip(&self.columns) {
                        match obj.get(col) {
                            Some(serde_json::Value::String(s)) => v.extend_from_slice(s.as_bytes()),
                            Some(other) => v.extend_from_slice(other.to_string().as_bytes()),
                            None => {}
                        }
                    }
                }
            }
        }
        true
    }
}

/// Where each non-blank row after `data_start` begins.
fn row_offsets(path: &Path, data_start: u64) -> std::io::Result<Vec<u64>> {
    let mut r = BufReader::new(File::open(path)?);
    r.seek(SeekFrom::Start(data_start))?;
    let mut offsets = Vec::new();
    let mut at = data_start;
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let n = r.by_ref().read_until(b'\n', &mut buf)?;
        if n == 0 {
            return Ok(offsets);
        }
        if !buf.iter().all(u8::is_ascii_whitespace) {
            offsets.push(at);
        }
        at += n as u64;
    }
}

/// One CSV line's fields (RFC 4180 quoting: `"a,b"`, `""` for a quote;
/// a row is one line).
/// Whether a line that is not blank follows.
fn has_a_row(reader: &mut BufReader<File>) -> std::io::Result<bool> {
    let mut probe = String::new();
    loop {
        probe.clear();
        match reader.read_line(&mut probe)? {
            0 => return Ok(false),
            _ if probe.trim().is_empty() => continue,
            _ => return Ok(true),
        }
    }
}

/// Reads a CSV feed's rows (after its header) once: each must have a
/// field for every column, else the error names the feed's file and the
/// row's line. Whether it has any row. A line buffer's memory, whatever
/// the file's length.
fn check_csv_rows(
    reader: &mut BufReader<File>,
    name: &str,
    path: &Path,
    columns: &[String],
) -> Result<bool, String> {
    let mut line = String::new();
    let mut rows = 0u64;
    // The header is line 1.
    for number in 2u64.. {
        line.clear();
        let n = reader
            .read_line(&mut line)
            .map_err(|e| format!("cannot read feed '{name}' ({}): {e}", path.display()))?;
        if n == 0 {
            break;
        }
        let row = line.trim_end_matches(['\r', '\n']);
        if row.trim().is_empty() {
            continue;
        }
        rows += 1;
        let fields = csv_fields(row).len();
        if fields != columns.len() {
            return Err(format!(
                "feed '{name}': {}:{number} has {fields} field{} where the header names {} ({}); \
                 give every row a value for every column (an empty one as ,,)",
                path.display(),
                if fields == 1 { "" } else { "s" },
                columns.len(),
                columns.join(", ")
            ));
        }
    }
    Ok(rows > 0)
}

pub(crate) fn csv_fields(line: &str) -> Vec<Vec<u8>> {
    let mut fields = Vec::new();
    let mut field = Vec::new();
    let mut quoted = false;
    let mut bytes = line.bytes().peekable();
    while let Some(b) = bytes.next() {
        match (quoted, b) {
            (true, b'"') if bytes.peek() == Some(&b'"') => {
                field.push(b'"');
                bytes.next();
            }
            (true, b'"') => quoted = false,
            (false, b'"') if field.is_empty() => quoted = true,
            (false, b',') => fields.push(std::mem::take(&mut field)),
            (_, b) => field.push(b),
        }
    }
    fields.push(field);
    fields
}

/// Parses a feed's `pick`.
pub(crate) fn parse_pick(s: &str) -> Result<Pick, String> {
    match s {
        "in turn" | "in_turn" | "sequential" => Ok(Pick::InTurn),
        "random" => Ok(Pick::Random),
        "unique" => Ok(Pick::Unique),
        other => Err(format!(
            "unknown pick '{other}'; use \"in turn\", \"random\" or \"unique\""
        )),
    }
}

/// Parses a feed's `per`.
pub(crate) fn parse_per(s: &str) -> Result<Per, String> {
    match s {
        "user" | "vu" => Ok(Per::User),
        "iteration" | "flow" => Ok(Per::Iteration),
        other => Err(format!(
            "unknown per '{other}'; use \"user\" or \"iteration\""
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn file(text: &str, ext: &str) -> tempfile::NamedTempFile {
        let mut f = tempfile::Builder::new().suffix(ext).tempfile().unwrap();
        f.write_all(text.as_bytes()).unwrap();
        f
    }

    fn rows(feed: &Feed, n: usize) -> Vec<Option<Vec<String>>> {
        let mut rng = fastrand::Rng::with_seed(3);
        let cols = feed.columns.len();
        (0..n)
            .map(|_| {
                let mut slots = vec![Vec::new(); cols];
                let mut set = vec![false; cols];
                feed.next_row(&mut rng, &mut slots, &mut set).then(|| {
                    slots
                        .into_iter()
                        .map(|v| String::from_utf8(v).unwrap())
                        .collect()
                })
            })
            .collect()
    }

    #[test]
    fn csv_in_turn_wraps_and_unique_runs_out() {
        let f = file("name,pw\nann,\"a,1\"\nbob,\"b\"\"2\"\n", ".csv");
        let feed = Feed::open("u", f.path(), None, Pick::InTurn, Per::User, 0).unwrap();
        assert_eq!(feed.columns, ["name", "pw"]);
        let r = rows(&feed, 3);
        assert_eq!(r[0], Some(vec!["ann".into(), "a,1".into()]));
        assert_eq!(r[1], Some(vec!["bob".into(), "b\"2".into()]));
        assert_eq!(r[2], r[0]);
        let feed = Feed::open("u", f.path(), None, Pick::Unique, Per::User, 0).unwrap();
        let r = rows(&feed, 3);
        assert!(r[0].is_some() && r[1].is_some());
        assert_eq!(r[2], None);
    }

    #[test]
    fn jsonl_columns_come_from_the_first_row_and_random_stays_in_the_file() {
        let f = file("{\"id\":1,\"n\":\"x\"}\n{\"id\":2,\"n\":\"y\"}\n", ".jsonl");
        let feed = Feed::open("j", f.path(), None, Pick::Random, Per::Iteration, 0).unwrap();
        assert_eq!(feed.columns, ["id", "n"]);
        for r in rows(&feed, 20) {
            let r = r.unwrap();
            assert!(r == ["1", "x"] || r == ["2", "y"], "{r:?}");
        }
    }

    #[test]
    fn shards_share_a_unique_feed_out() {
        let f = file("n\na\nb\nc\nd\ne\n", ".csv");
        let mut all = Vec::new();
        for shard in 0..2 {
            let mut feed = Feed::open("u", f.path(), None, Pick::Unique, Per::User, 0).unwrap();
            feed.set_shard(shard, 2);
            all.extend(rows(&feed, 4).into_iter().flatten().map(|r| r[0].clone()));
        }
        all.sort();
        assert_eq!(all, ["a", "b", "c", "d", "e"]);
        // In turn, a shard the file has no row for gets none (and does
        // not read the file round for ever).
        let f = file("n\na\n", ".csv");
        let mut feed = Feed::open("u", f.path(), None, Pick::InTurn, Per::User, 0).unwrap();
        feed.set_shard(1, 2);
        assert_eq!(rows(&feed, 1), [None]);
    }

    #[test]
    fn empty_and_missing_feeds_are_refused() {
        let f = file("name\n", ".csv");
        let e = Feed::open("u", f.path(), None, Pick::Unique, Per::User, 0).unwrap_err();
        assert!(e.contains("has no rows"), "{e}");
        let e = Feed::open(
            "u",
            Path::new("/nonexistent/x.csv"),
            None,
            Pick::InTurn,
            Per::User,
            0,
        )
        .unwrap_err();
        assert!(e.contains("cannot open feed"), "{e}");
    }
}
