//! The history in a PostgreSQL database: a team's runs in one place.
//!
//! The same tables as SQLite's (see `schema.rs`), through the sync
//! `postgres` client without TLS: give a server on a trusted network, or
//! a local socket or tunnel. Transactions are PostgreSQL's own, so a pelt
//! killed mid-record leaves nothing: the server rolls back when the
//! connection drops.

use crate::backend::{Backend, Dialect, Value};
use crate::StoreError;
use bytes::BytesMut;
use postgres::types::{IsNull, ToSql, Type};
use postgres::{Client, NoTls};
use std::io::{Read, Write};

/// Any number: the advisory lock that makes migrations and the one-off
/// import one at a time across every pelt sharing the database.
const MIGRATION_LOCK: i64 = 0x7065_6c74; // "pelt"

/// A history in a PostgreSQL database, shared by a team: one connection
/// (no TLS), with migrations serialised by an advisory lock.
pub struct Postgres {
    client: Client,
    /// The URL with any password replaced, for messages.
    place: String,
}

impl std::fmt::Debug for Postgres {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Postgres")
            .field("place", &self.place)
            .finish()
    }
}

impl Postgres {
    /// Connects to the database at `url` (`postgres://...`); messages name
    /// it with any password replaced.
    pub fn connect(url: &str) -> Result<Postgres, StoreError> {
        let place = crate::secrets::url_without_password(url);
        let client = Client::connect(url, NoTls).map_err(|e| StoreError::Open {
            place: place.clone(),
            detail: message(&e),
        })?;
        Ok(Postgres { client, place })
    }

    fn error(&self, e: postgres::Error) -> StoreError {
        error_at(&self.place, e)
    }
}

/// `e` as a store error, for the database at `place`.
fn error_at(place: &str, e: postgres::Error) -> StoreError {
    let busy = e.code().is_some_and(|c| {
        *c == postgres::error::SqlState::T_R_SERIALIZATION_FAILURE
            || *c == postgres::error::SqlState::T_R_DEADLOCK_DETECTED
            || *c == postgres::error::SqlState::LOCK_NOT_AVAILABLE
    });
    let (place, detail) = (place.to_string(), message(&e));
    if busy {
        StoreError::Busy { place, detail }
    } else {
        StoreError::Db { place, detail }
    }
}

/// The server's own words where there are some (the client's Display
/// says only "db error").
fn message(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => db.message().to_string(),
        None => e.to_string(),
    }
}

/// `?1` → `$1`: the statements are written once, in SQLite's spelling.
fn placeholders(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '?' && chars.peek().is_some_and(|n| n.is_ascii_digit()) {
            out.push('$');
        } else {
            out.push(c);
        }
    }
    out
}

impl ToSql for Value {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match self {
            Value::Null => Ok(IsNull::Yes),
            Value::Int(v) if *ty == Type::TEXT => v.to_string().to_sql(ty, out),
            Value::Real(v) if *ty == Type::TEXT => v.to_string().to_sql(ty, out),
            Value::Int(v) if *ty == Type::INT4 => i32::try_from(*v)?.to_sql(ty, out),
            Value::Int(v) if *ty == Type::FLOAT8 => (*v as f64).to_sql(ty, out),
            Value::Int(v) => v.to_sql(ty, out),
            Value::Real(v) => v.to_sql(ty, out),
            Value::Text(s) => s.as_str().to_sql(ty, out),
            Value::Blob(b) => b.as_slice().to_sql(ty, out),
        }
    }

    fn accepts(_: &Type) -> bool {
        // Checked per value in `to_sql`, which knows which variant it has.
        true
    }

    postgres::types::to_sql_checked!();
}

fn column(row: &postgres::Row, i: usize) -> Result<Value, postgres::Error> {
    let ty = row.columns()[i].type_().clone();
    Ok(if ty == Type::INT8 {
        row.try_get::<_, Option<i64>>(i)?
            .map_or(Value::Null, Value::Int)
    } else if ty == Type::INT4 {
        row.try_get::<_, Option<i32>>(i)?
            .map_or(Value::Null, |v| Value::Int(v.into()))
    } else if ty == Type::FLOAT8 {
        row.try_get::<_, Option<f64>>(i)?
            .map_or(Value::Null, Value::Real)
    } else if ty == Type::BYTEA {
        row.try_get::<_, Option<Vec<u8>>>(i)?
            .map_or(Value::Null, Value::Blob)
    } else if ty == Type::BOOL {
        row.try_get::<_, Option<bool>>(i)?
            .map_or(Value::Null, |b| Value::Int(b.into()))
    } else {
        row.try_get::<_, Option<String>>(i)?
            .map_or(Value::Null, Value::Text)
    })
}

fn refs(params: &[Value]) -> Vec<&(dyn ToSql + Sync)> {
    params.iter().map(|p| p as &(dyn ToSql + Sync)).collect()
}

impl Backend for Postgres {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Vec<Value>>, StoreError> {
        let rows = self
            .client
            .query(&placeholders(sql), &refs(params))
            .map_err(|e| self.error(e))?;
        rows.iter()
            .map(|r| (0..r.len()).map(|i| column(r, i)).collect())
            .collect::<Result<_, _>>()
            .map_err(|e| self.error(e))
    }

    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, StoreError> {
        self.client
            .execute(&placeholders(sql), &refs(params))
            .map_err(|e| self.error(e))
    }

    fn batch(&mut self, sql: &str) -> Result<(), StoreError> {
        self.client.batch_execute(sql).map_err(|e| self.error(e))
    }

    fn begin(&mut self, exclusive: bool) -> Result<(), StoreError> {
        self.batch("BEGIN")?;
        if exclusive {
            self.execute(
                "SELECT pg_advisory_xact_lock(?1)",
                &[Value::Int(MIGRATION_LOCK)],
            )
            .map(drop)
            .inspect_err(|_| self.rollback())?;
        }
        Ok(())
    }

    fn check(&mut self) -> Result<Vec<String>, StoreError> {
        // PostgreSQL checks its pages itself (and amcheck needs an
        // extension): the store's own cross-table checks do the rest.
        self.query("SELECT 1", &[])?;
        Ok(vec!["ok".into()])
    }

    fn insert_results(
        &mut self,
        run_id: i64,
        len: u64,
        bytes: &mut dyn std::io::Read,
    ) -> Result<(), StoreError> {
        // One row in COPY's binary format, the file streamed into it: the
        // client sends it in chunks of a few KB, so it is never in memory
        // whole (a parameter would be, and an `||` per chunk would make
        // the server rewrite the value each time).
        let field = i32::try_from(len).map_err(|_| StoreError::Db {
            place: self.place.clone(),
            detail: format!("a results file of {len} bytes is too big for a bytea"),
        })?;
        let place = self.place.clone();
        let mut writer = self
            .client
            .copy_in("COPY pelt_results (run_id, bytes) FROM STDIN (FORMAT binary)")
            .map_err(|e| error_at(&place, e))?;
        let mut head = Vec::with_capacity(40);
        head.extend_from_slice(b"PGCOPY\n\xff\r\n\0"); // signature
        head.extend_from_slice(&0i32.to_be_bytes()); // flags
        head.extend_from_slice(&0i32.to_be_bytes()); // header extension
        head.extend_from_slice(&2i16.to_be_bytes()); // fields in the row
        head.extend_from_slice(&8i32.to_be_bytes()); // run_id: a BIGINT
        head.extend_from_slice(&run_id.to_be_bytes());
        head.extend_from_slice(&field.to_be_bytes()); // bytes: the file
        let copied = writer
            .write_all(&head)
            .and_then(|()| std::io::copy(&mut bytes.take(len), &mut writer))
            .and_then(|n| {
                writer.write_all(&(-1i16).to_be_bytes())?; // the end
                Ok(n)
            });
        match copied {
            Ok(n) if n == len => writer.finish().map(drop).map_err(|e| error_at(&place, e)),
            // Dropped unfinished, the COPY is aborted.
            Ok(n) => Err(StoreError::Db {
                place,
                detail: format!("the results file ended after {n} of its {len} bytes"),
            }),
            Err(e) => Err(StoreError::Db {
                place,
                detail: format!("cannot copy the results file: {e}"),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn placeholders_become_dollars() {
        assert_eq!(
            super::placeholders("a = ?1 AND b IN (?2, ?10) AND c = '?'"),
            "a = $1 AND b IN ($2, $10) AND c = '?'"
        );
    }
}
