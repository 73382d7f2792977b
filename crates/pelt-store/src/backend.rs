//! The one seam between the history's commands and a database: a
//! [`Backend`] runs SQL with positional parameters and plain values.
//! SQLite and PostgreSQL each implement it; every command (record, list,
//! trend, remove, migrate) is written once, above it, in [`crate::Store`].

use crate::StoreError;

/// A parameter or a column's value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// SQL `NULL`.
    Null,
    /// An integer (`INTEGER`, `BIGINT`).
    Int(i64),
    /// A floating-point number (`REAL`, `DOUBLE PRECISION`).
    Real(f64),
    /// A string (`TEXT`).
    Text(String),
    /// Bytes (`BLOB`, `BYTEA`): a results file kept whole.
    Blob(Vec<u8>),
}

impl Value {
    /// The value as an integer (a real truncated); `None` for other kinds.
    pub fn int(&self) -> Option<i64> {
        match self {
            Value::Int(v) => Some(*v),
            Value::Real(v) => Some(*v as i64),
            _ => None,
        }
    }

    /// The value as a real (an integer converted); `None` for other kinds.
    pub fn real(&self) -> Option<f64> {
        match self {
            Value::Real(v) => Some(*v),
            Value::Int(v) => Some(*v as f64),
            _ => None,
        }
    }

    /// The value's string, when it is text.
    pub fn text(&self) -> Option<&str> {
        match self {
            Value::Text(s) => Some(s),
            _ => None,
        }
    }
}

impl From<i64> for Value {
    fn from(v: i64) -> Value {
        Value::Int(v)
    }
}

impl From<u64> for Value {
    fn from(v: u64) -> Value {
        Value::Int(i64::try_from(v).unwrap_or(i64::MAX))
    }
}

impl From<f64> for Value {
    fn from(v: f64) -> Value {
        // NaN would be NULL in SQLite and NaN in PostgreSQL: make it NULL
        // in both.
        if v.is_finite() {
            Value::Real(v)
        } else {
            Value::Null
        }
    }
}

impl From<bool> for Value {
    fn from(v: bool) -> Value {
        Value::Int(i64::from(v))
    }
}

impl From<&str> for Value {
    fn from(v: &str) -> Value {
        Value::Text(v.to_string())
    }
}

impl From<String> for Value {
    fn from(v: String) -> Value {
        Value::Text(v)
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Value {
        v.map_or(Value::Null, Into::into)
    }
}

/// The SQL spoken, where the two differ (column types, placeholders).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// SQLite (`sqlite::Sqlite`).
    Sqlite,
    /// PostgreSQL (`pg::Postgres`, the `postgres` feature).
    Postgres,
}

/// A database that runs the history's SQL.
///
/// Statements use `?1`, `?2`, ... for parameters (a backend rewrites them
/// if its database spells them otherwise). Transactions are explicit:
/// [`Backend::begin`], then [`Backend::commit`] or [`Backend::rollback`];
/// a process that dies in between leaves nothing of its transaction.
pub trait Backend: std::fmt::Debug {
    /// Which SQL this database speaks, where the two differ.
    fn dialect(&self) -> Dialect;
    /// Rows of a query, each as values in column order.
    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Vec<Value>>, StoreError>;
    /// Runs a statement; returns the rows it changed.
    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, StoreError>;
    /// Runs statements without parameters (DDL).
    fn batch(&mut self, sql: &str) -> Result<(), StoreError>;
    /// Starts a transaction that writes. `exclusive`: one at a time across
    /// every process (migrations, the one-off import).
    fn begin(&mut self, exclusive: bool) -> Result<(), StoreError>;
    /// Commits the transaction [`Backend::begin`] started.
    fn commit(&mut self) -> Result<(), StoreError> {
        self.batch("COMMIT")
    }
    /// Best effort: a failed rollback leaves the transaction to be undone
    /// when the connection closes.
    fn rollback(&mut self) {
        let _ = self.batch("ROLLBACK");
    }
    /// Whether the pelt tables exist (not yet on a new database).
    fn has_table(&mut self, name: &str) -> Result<bool, StoreError> {
        let sql = match self.dialect() {
            Dialect::Sqlite => "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1",
            Dialect::Postgres => {
                "SELECT 1 FROM information_schema.tables \
                 WHERE table_schema = current_schema() AND table_name = ?1"
            }
        };
        Ok(!self.query(sql, &[Value::from(name)])?.is_empty())
    }
    /// The database's own consistency check: `["ok"]` when sound.
    fn check(&mut self) -> Result<Vec<String>, StoreError>;
    /// Inserts run `run_id`'s results file into `pelt_results`: the `len`
    /// bytes `bytes` gives, copied in chunks (never held whole: a long
    /// run's file would make memory grow with its length).
    fn insert_results(
        &mut self,
        run_id: i64,
        len: u64,
        bytes: &mut dyn std::io::Read,
    ) -> Result<(), StoreError>;
}
