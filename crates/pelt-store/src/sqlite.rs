//! The history in a SQLite file (the bundled SQLite: nothing to install).
//!
//! WAL mode, so that readers never wait and two pelt processes can record
//! at once (one writer at a time, the other waits up to
//! [`BUSY_TIMEOUT`]); a process killed mid-transaction leaves frames
//! the next open ignores, so a run is recorded whole or not at all.

use crate::backend::{Backend, Dialect, Value};
use crate::StoreError;
use rusqlite::types::ValueRef;
use rusqlite::{Connection, ErrorCode, OpenFlags};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long a writer waits for another process's transaction. Recording
/// takes milliseconds; the one-off import of saved runs can take seconds.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(60);

/// SQLite's page cache, in pages, while a spooled results file is
/// written into the history (its default is 2 MB).
const RESULTS_CACHE_PAGES: i64 = 32;

/// A history in one SQLite file (bundled: nothing to install), the
/// default: one connection that waits up to [`BUSY_TIMEOUT`] for another
/// pelt's write.
#[derive(Debug)]
pub struct Sqlite {
    conn: Connection,
    path: PathBuf,
}

impl Sqlite {
    /// Opens (creating if missing) the database at `path`. A file that is
    /// not a SQLite database, or is damaged, is refused as it is: nothing
    /// is written to it.
    pub fn open(path: &Path) -> Result<Sqlite, StoreError> {
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags).map_err(|e| StoreError::Open {
            place: path.display().to_string(),
            detail: e.to_string(),
        })?;
        let mut db = Sqlite {
            conn,
            path: path.to_path_buf(),
        };
        db.conn
            .busy_timeout(BUSY_TIMEOUT)
            .map_err(|e| db.error(e))?;
        // Reads the header: a file that is not a database fails here,
        // before anything could be written to it.
        db.query("SELECT count(*) FROM sqlite_master", &[])?;
        Ok(db)
    }

    /// Switches to WAL (kept in the file, so once is enough; a no-op
    /// after). Only after the version check: a newer pelt's database is
    /// left exactly as it was.
    pub fn use_wal(&mut self) -> Result<(), StoreError> {
        let mode: String = self
            .conn
            .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
            .map_err(|e| self.error(e))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(StoreError::Open {
                place: self.place(),
                detail: format!("SQLite would not use WAL mode (it kept '{mode}')"),
            });
        }
        Ok(())
    }

    fn place(&self) -> String {
        self.path.display().to_string()
    }

    fn error(&self, e: rusqlite::Error) -> StoreError {
        match e.sqlite_error_code() {
            Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => StoreError::Corrupt {
                place: self.place(),
                detail: e.to_string(),
            },
            Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => StoreError::Busy {
                place: self.place(),
                detail: e.to_string(),
            },
            _ => StoreError::Db {
                place: self.place(),
                detail: e.to_string(),
            },
        }
    }
}

/// A parameter bound as a borrowed value: a run's JSON report and results
/// file are megabytes with many targets, and SQLite copies what it is
/// given anyway, so a copy here would only raise the peak.
fn to_sql(v: &Value) -> rusqlite::types::ToSqlOutput<'_> {
    use rusqlite::types::ToSqlOutput::Borrowed;
    Borrowed(match v {
        Value::Null => ValueRef::Null,
        Value::Int(i) => ValueRef::Integer(*i),
        Value::Real(r) => ValueRef::Real(*r),
        Value::Text(s) => ValueRef::Text(s.as_bytes()),
        Value::Blob(b) => ValueRef::Blob(b),
    })
}

fn from_sql(v: ValueRef<'_>) -> Value {
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::Int(i),
        ValueRef::Real(r) => Value::Real(r),
        ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => Value::Blob(b.to_vec()),
    }
}

impl Backend for Sqlite {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Vec<Value>>, StoreError> {
        let run = || -> rusqlite::Result<Vec<Vec<Value>>> {
            let mut stmt = self.conn.prepare(sql)?;
            let columns = stmt.column_count();
            let mut rows = stmt.query(rusqlite::params_from_iter(params.iter().map(to_sql)))?;
            let mut out = Vec::new();
            while let Some(row) = rows.next()? {
                let mut values = Vec::with_capacity(columns);
                for i in 0..columns {
                    values.push(from_sql(row.get_ref(i)?));
                }
                out.push(values);
            }
            Ok(out)
        };
        run().map_err(|e| self.error(e))
    }

    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, StoreError> {
        self.conn
            .execute(sql, rusqlite::params_from_iter(params.iter().map(to_sql)))
            .map(|n| n as u64)
            .map_err(|e| self.error(e))
    }

    fn batch(&mut self, sql: &str) -> Result<(), StoreError> {
        self.conn.execute_batch(sql).map_err(|e| self.error(e))
    }

    fn begin(&mut self, _exclusive: bool) -> Result<(), StoreError> {
        // IMMEDIATE: take the write lock now (waiting out another writer),
        // not at the first write, where a reader upgrading would fail with
        // SQLITE_BUSY at once instead of waiting. SQLite has one writer at
        // a time, so every write transaction is exclusive.
        self.batch("BEGIN IMMEDIATE")
    }

    fn check(&mut self) -> Result<Vec<String>, StoreError> {
        let rows = self.query("PRAGMA integrity_check", &[])?;
        Ok(rows
            .iter()
            .filter_map(|r| r.first().and_then(Value::text).map(str::to_string))
            .collect())
    }

    fn insert_results(
        &mut self,
        run_id: i64,
        len: u64,
        bytes: &mut dyn std::io::Read,
    ) -> Result<(), StoreError> {
        // A blob of `len` zeros, then filled through SQLite's incremental
        // blob I/O: only a chunk of the file is in memory at a time.
        let size = i64::try_from(len).map_err(|_| StoreError::Db {
            place: self.place(),
            detail: format!("a results file of {len} bytes is too big to keep"),
        })?;
        // SQLite caches up to 2 MB of the pages it writes: a long run's
        // file would raise the peak by that much for pages never read
        // again. A small cache while the blob is written spills them to
        // the WAL instead; the history's own size is restored after.
        let cache: Option<i64> = self
            .conn
            .pragma_query_value(None, "cache_size", |r| r.get(0))
            .ok();
        let _ = self
            .conn
            .pragma_update(None, "cache_size", RESULTS_CACHE_PAGES);
        self.execute(
            "INSERT INTO pelt_results (run_id, bytes) VALUES (?1, zeroblob(?2))",
            &[Value::Int(run_id), Value::Int(size)],
        )?;
        // The table's INTEGER PRIMARY KEY is its rowid.
        let mut blob = self
            .conn
            .blob_open(rusqlite::MAIN_DB, c"pelt_results", c"bytes", run_id, false)
            .map_err(|e| self.error(e))?;
        let copied = std::io::copy(&mut bytes.take(len), &mut blob);
        drop(blob);
        if let Some(pages) = cache {
            let _ = self.conn.pragma_update(None, "cache_size", pages);
        }
        match copied {
            Ok(n) if n == len => Ok(()),
            Ok(n) => Err(StoreError::Db {
                place: self.place(),
                detail: format!("the results file ended after {n} of its {len} bytes"),
            }),
            Err(e) => Err(StoreError::Db {
                place: self.place(),
                detail: format!("cannot copy the results file: {e}"),
            }),
        }
    }
}

impl Sqlite {
    /// Tables in the file other than pelt's: a database of something
    /// else, which pelt will not add its tables to.
    pub fn foreign_tables(&mut self) -> Result<Vec<String>, StoreError> {
        let rows = self.query(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'pelt\\_%' ESCAPE '\\' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'",
            &[],
        )?;
        Ok(rows
            .iter()
            .filter_map(|r| r.first().and_then(Value::text).map(str::to_string))
            .collect())
    }
}
