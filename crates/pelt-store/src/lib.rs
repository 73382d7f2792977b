//! pelt-store: every run remembered, in SQLite or PostgreSQL.
//!
//! A [`Store`] records a run (its configuration, environment, summary
//! figures as columns, tags, label, JSON report and results file) in one
//! transaction, and answers questions about the runs it holds: lists by
//! URL, tag, label and date, one run in full, a metric's trend. The SQL is
//! written once, over the small [`Backend`] trait that SQLite
//! ([`sqlite::Sqlite`], bundled: nothing to install) and PostgreSQL
//! (`pg::Postgres`, a team's shared history) implement.
//!
//! PostgreSQL is the optional `postgres` feature (off by default; the
//! pelt binary turns it on): without it, [`open`] refuses a
//! `postgres://` location with [`StoreError::Open`] saying so.
//!
//! The store keeps what it is given: callers pass runs through a
//! [`Redactor`] first, so that no secret reaches a database.

#![warn(missing_docs)]

pub mod backend;
mod model;
#[cfg(feature = "postgres")]
pub mod pg;
mod schema;
/// Moved to pelt-core (a library user redacts without a database);
/// kept here so that `pelt_store::secrets::...` still names it.
pub use pelt_core::secrets;
pub mod sqlite;

pub use backend::{Backend, Dialect, Value};
pub use model::{
    Figures, Filter, Kind, Metric, NewRun, Results, RunRow, Spool, StepFigures, StoredRun, Unit,
};
pub use schema::VERSION as SCHEMA_VERSION;
pub use secrets::{Redactor, MARKER};

use pelt_core::RunConfig;
use std::path::Path;

/// Set to a path in a test's environment, recording stops inside its
/// transaction, with every row written but not committed, creates that
/// file and waits to be killed: the crash tests kill pelt there, on the
/// real write path, not at a guess. Only with the `test-hold` feature,
/// which only the pelt binary's tests turn on (a dev-dependency feature):
/// no build made to ship has it. A file, not a line on stderr: a library
/// does not print.
#[cfg(feature = "test-hold")]
#[doc(hidden)]
pub const HOLD_ENV: &str = "PELT_TEST_HOLD_RECORD";

/// Why the history cannot be used, phrased for the user.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database could not be opened or created (a bad path, an
    /// unreachable server, refused credentials).
    #[error("cannot open the history database {place}: {detail}; check the path or URL, or give another with --history (or --no-history)")]
    Open {
        /// The database's path or URL (any password replaced).
        place: String,
        /// What the database said.
        detail: String,
    },
    /// The file is not a database, is damaged, or holds tables pelt did
    /// not write; pelt leaves it untouched.
    #[error("the history database {place} is damaged or not a pelt history ({detail}); pelt left it as it is: move it aside, or give another with --history (or --no-history)")]
    Corrupt {
        /// The database's path or URL (any password replaced).
        place: String,
        /// What was wrong with it.
        detail: String,
    },
    /// The history's schema is newer than this pelt knows: written by a
    /// later pelt, so this one neither reads nor migrates it.
    #[error("the history database {place} was written by a newer pelt (schema version {found}; this pelt knows up to {known}); pelt left it as it is: upgrade pelt, or give another database with --history (or --no-history)")]
    Newer {
        /// The database's path or URL (any password replaced).
        place: String,
        /// The schema version the database holds.
        found: i64,
        /// The newest schema version this pelt knows ([`SCHEMA_VERSION`]).
        known: i64,
    },
    /// Another process held the database locked for longer than pelt
    /// waits ([`sqlite::BUSY_TIMEOUT`]).
    #[error("the history database {place} stayed busy ({detail}); another pelt held it too long: try again")]
    Busy {
        /// The database's path or URL (any password replaced).
        place: String,
        /// What the database said.
        detail: String,
    },
    /// Any other failure of a query or statement.
    #[error("history database {place}: {detail}")]
    Db {
        /// The database's path or URL (any password replaced).
        place: String,
        /// What the database said.
        detail: String,
    },
}

/// A run history.
#[derive(Debug)]
pub struct Store {
    db: Box<dyn Backend>,
}

/// Opens the history at `location`: a `postgres://` (or `postgresql://`)
/// URL, else a SQLite file's path.
pub fn open(location: &str) -> Result<Store, StoreError> {
    if is_postgres(location) {
        Store::postgres(location)
    } else {
        Store::sqlite(Path::new(location))
    }
}

/// Whether `location` names a PostgreSQL database.
pub fn is_postgres(location: &str) -> bool {
    let l = location.trim_start().to_ascii_lowercase();
    l.starts_with("postgres://") || l.starts_with("postgresql://")
}

impl Store {
    /// Opens (creating if missing) a SQLite history.
    pub fn sqlite(path: &Path) -> Result<Store, StoreError> {
        // Two pelts creating the same new file at once: the switch to WAL
        // (which needs the file to itself) can find the other mid-way and
        // fail at once, whatever the busy timeout. Opening again finds the
        // file settled.
        let start = std::time::Instant::now();
        loop {
            match Store::sqlite_once(path) {
                Err(StoreError::Busy { .. }) if start.elapsed() < sqlite::BUSY_TIMEOUT => {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                done => return done,
            }
        }
    }

    fn sqlite_once(path: &Path) -> Result<Store, StoreError> {
        let mut db = sqlite::Sqlite::open(path)?;
        let place = path.display().to_string();
        let found = version(&mut db)?;
        refuse_newer(&place, found)?;
        if found == 0 && !db.has_table("pelt_meta")? {
            // Never add pelt's tables to somebody else's database.
            let foreign = db.foreign_tables()?;
            if !foreign.is_empty() {
                return Err(StoreError::Corrupt {
                    place,
                    detail: format!(
                        "it is a SQLite database of something else, with tables {}",
                        foreign.join(", ")
                    ),
                });
            }
        }
        db.use_wal()?;
        Store::ready(Box::new(db), place, found)
    }

    /// Connects to a PostgreSQL history, creating its tables if missing.
    /// Without the `postgres` feature, an [`StoreError::Open`] that says
    /// this pelt-store was built without PostgreSQL.
    #[cfg(feature = "postgres")]
    pub fn postgres(url: &str) -> Result<Store, StoreError> {
        let mut db = pg::Postgres::connect(url)?;
        let place = secrets::url_without_password(url);
        let found = version(&mut db)?;
        refuse_newer(&place, found)?;
        Store::ready(Box::new(db), place, found)
    }

    /// Connects to a PostgreSQL history, creating its tables if missing.
    /// Without the `postgres` feature, an [`StoreError::Open`] that says
    /// this pelt-store was built without PostgreSQL.
    #[cfg(not(feature = "postgres"))]
    pub fn postgres(url: &str) -> Result<Store, StoreError> {
        Err(StoreError::Open {
            place: secrets::url_without_password(url),
            detail: "this pelt was built without PostgreSQL support \
                     (pelt-store's `postgres` feature)"
                .into(),
        })
    }

    /// Migrates to [`SCHEMA_VERSION`] if needed: one process at a time,
    /// the version read again under the lock (another may have done it).
    fn ready(mut db: Box<dyn Backend>, place: String, found: i64) -> Result<Store, StoreError> {
        if found < schema::VERSION {
            db.begin(true)?;
            let migrated = (|| {
                db.batch(schema::META)?;
                let now = version(db.as_mut())?;
                refuse_newer(&place, now)?;
                for i in now..schema::VERSION {
                    db.batch(&schema::migration(i as usize, db.dialect()))?;
                }
                db.execute("DELETE FROM pelt_meta WHERE key = 'schema_version'", &[])?;
                db.execute(
                    "INSERT INTO pelt_meta (key, value) VALUES ('schema_version', ?1)",
                    &[Value::from(schema::VERSION.to_string())],
                )?;
                Ok(())
            })();
            match migrated {
                Ok(()) => db.commit()?,
                Err(e) => {
                    db.rollback();
                    return Err(e);
                }
            }
        }
        Ok(Store { db })
    }

    /// The schema version of the open database.
    pub fn schema_version(&mut self) -> Result<i64, StoreError> {
        version(self.db.as_mut())
    }

    /// Records a run, whole or not at all (one transaction); returns its id.
    ///
    /// The summary's configuration and error messages are redacted here
    /// by the default rules whoever calls, so that a library user's
    /// history keeps no secret either (a caller with more rules, like
    /// the CLI's `--secret-header`, redacts first: twice changes nothing).
    /// The report and results file are kept as given: pelt-report and
    /// `ResultsWriter::new` redact them by default.
    ///
    /// The run is taken whole so that its report and results file go to
    /// the database without a copy; only the configuration is redacted
    /// into a new value (the error messages the default rules would also
    /// scrub are not stored: the history keeps no part of the summary's
    /// recorder but its figures).
    pub fn record(&mut self, run: NewRun<'_>) -> Result<i64, StoreError> {
        let s = &run.summary;
        let config = Redactor::for_config(&s.config).config(&s.config);
        self.in_transaction(false, |db| insert(db, run, &config))
    }

    /// Runs `f` in a transaction: committed if it succeeds, rolled back
    /// if it fails.
    fn in_transaction<T>(
        &mut self,
        exclusive: bool,
        f: impl FnOnce(&mut dyn Backend) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.db.begin(exclusive)?;
        match f(self.db.as_mut()) {
            Ok(v) => {
                self.db.commit()?;
                Ok(v)
            }
            Err(e) => {
                self.db.rollback();
                Err(e)
            }
        }
    }

    /// Runs `import` once per `key` in this database: the runs it returns
    /// are recorded in one transaction with the key, so two pelts that
    /// start at once import once, and a killed import leaves nothing.
    /// Returns how many runs were imported (`None`: done before).
    pub fn import_once(
        &mut self,
        key: &str,
        import: impl FnOnce() -> Vec<NewRun<'static>>,
    ) -> Result<Option<usize>, StoreError> {
        let key = format!("imported:{key}");
        if self.meta(&key)?.is_some() {
            return Ok(None);
        }
        self.in_transaction(true, |db| {
            let done = db.query(
                "SELECT value FROM pelt_meta WHERE key = ?1",
                &[Value::from(key.as_str())],
            )?;
            if !done.is_empty() {
                return Ok(None);
            }
            let runs = import();
            let n = runs.len();
            for run in runs {
                let config = run.summary.config.clone();
                insert(db, run, &config)?;
            }
            db.execute(
                "INSERT INTO pelt_meta (key, value) VALUES (?1, ?2)",
                &[Value::from(key.as_str()), Value::from(n.to_string())],
            )?;
            Ok(Some(n))
        })
    }

    /// A value of `pelt_meta`.
    pub fn meta(&mut self, key: &str) -> Result<Option<String>, StoreError> {
        let rows = self.db.query(
            "SELECT value FROM pelt_meta WHERE key = ?1",
            &[Value::from(key)],
        )?;
        Ok(rows.first().and_then(|r| r[0].text().map(str::to_string)))
    }

    /// The runs `filter` selects, in the order they were recorded (by
    /// id). Not by start time: runs that overlap (CI jobs, shards) end and
    /// are recorded in another order than they started, and a table whose
    /// ids jump about reads as a lost or reordered history.
    pub fn list(&mut self, filter: &Filter) -> Result<Vec<RunRow>, StoreError> {
        let (cond, mut params) = where_clause(filter);
        let mut sql = format!(
            "SELECT {} FROM pelt_runs WHERE {cond} ORDER BY id DESC",
            schema::ROW_COLUMNS
        );
        if let Some(n) = filter.last {
            params.push(Value::from(n));
            sql.push_str(&format!(" LIMIT ?{}", params.len()));
        }
        let mut rows: Vec<RunRow> = self
            .db
            .query(&sql, &params)?
            .iter()
            .map(|r| row(r))
            .collect();
        rows.reverse();
        self.attach_tags(&mut rows)?;
        Ok(rows)
    }

    fn attach_tags(&mut self, rows: &mut [RunRow]) -> Result<(), StoreError> {
        let (Some(lo), Some(hi)) = (
            rows.iter().map(|r| r.id).min(),
            rows.iter().map(|r| r.id).max(),
        ) else {
            return Ok(());
        };
        let tags = self.db.query(
            "SELECT run_id, key, value FROM pelt_tags WHERE run_id BETWEEN ?1 AND ?2 ORDER BY run_id, key",
            &[Value::Int(lo), Value::Int(hi)],
        )?;
        let mut by_id: std::collections::HashMap<i64, Vec<(String, String)>> = Default::default();
        for t in tags {
            let text = |v: &Value| v.text().unwrap_or_default().to_string();
            by_id
                .entry(t[0].int().unwrap_or_default())
                .or_default()
                .push((text(&t[1]), text(&t[2])));
        }
        for r in rows {
            r.tags = by_id.remove(&r.id).unwrap_or_default();
        }
        Ok(())
    }

    /// One run's configuration as recorded (JSON, secrets replaced), without
    /// the rest of [`Store::get`] (its results file can be megabytes):
    /// what like-with-like checks read for each run they consider.
    pub fn config_json(&mut self, id: i64) -> Result<Option<String>, StoreError> {
        let rows = self.db.query(
            "SELECT config_json FROM pelt_runs WHERE id = ?1",
            &[Value::Int(id)],
        )?;
        Ok(rows
            .into_iter()
            .next()
            .and_then(|r| r.first().and_then(|v| v.text()).map(str::to_string)))
    }

    /// One run in full, with its results file when kept in the history.
    pub fn get(&mut self, id: i64) -> Result<Option<StoredRun>, StoreError> {
        let mut rows = self.list(&Filter {
            ids: vec![id],
            ..Filter::default()
        })?;
        let Some(row) = rows.pop() else {
            return Ok(None);
        };
        let parts = self.db.query(
            "SELECT config_json, env_json, report_json, steps_json FROM pelt_runs WHERE id = ?1",
            &[Value::Int(id)],
        )?;
        let text = |i: usize| {
            parts
                .first()
                .and_then(|p| p[i].text())
                .unwrap_or_default()
                .to_string()
        };
        let blob = self.db.query(
            "SELECT bytes FROM pelt_results WHERE run_id = ?1",
            &[Value::Int(id)],
        )?;
        let results = match (blob.into_iter().next(), &row.results_path) {
            (Some(mut b), _) => match b.swap_remove(0) {
                Value::Blob(bytes) => Results::Blob(bytes),
                _ => Results::None,
            },
            (None, Some(path)) => Results::File(path.clone()),
            (None, None) => Results::None,
        };
        Ok(Some(StoredRun {
            config_json: text(0),
            env_json: text(1),
            report_json: text(2),
            // Unreadable (a newer pelt's?) or absent: no steps to show.
            steps: serde_json::from_str(&text(3)).unwrap_or_default(),
            results,
            row,
        }))
    }

    /// Removes runs (with their tags and results); returns the ids that
    /// existed.
    pub fn remove(&mut self, ids: &[i64]) -> Result<Vec<i64>, StoreError> {
        self.in_transaction(false, |db| {
            let mut removed = Vec::new();
            for &id in ids {
                let id_v = [Value::Int(id)];
                db.execute("DELETE FROM pelt_tags WHERE run_id = ?1", &id_v)?;
                db.execute("DELETE FROM pelt_results WHERE run_id = ?1", &id_v)?;
                if db.execute("DELETE FROM pelt_runs WHERE id = ?1", &id_v)? > 0 {
                    removed.push(id);
                }
            }
            Ok(removed)
        })
    }

    /// The database's consistency check plus the history's own (no tags or
    /// results without their run, every run with its report): `["ok"]`
    /// when all is well, else what is wrong.
    pub fn check(&mut self) -> Result<Vec<String>, StoreError> {
        let mut problems: Vec<String> =
            self.db.check()?.into_iter().filter(|m| m != "ok").collect();
        for (what, sql) in [
            (
                "tags without their run",
                "SELECT count(*) FROM pelt_tags WHERE run_id NOT IN (SELECT id FROM pelt_runs)",
            ),
            (
                "results files without their run",
                "SELECT count(*) FROM pelt_results WHERE run_id NOT IN (SELECT id FROM pelt_runs)",
            ),
            (
                "runs without a report",
                "SELECT count(*) FROM pelt_runs WHERE report_json = '' OR config_json = ''",
            ),
        ] {
            let n = self.db.query(sql, &[])?[0][0].int().unwrap_or_default();
            if n > 0 {
                problems.push(format!("{n} {what}"));
            }
        }
        if problems.is_empty() {
            problems.push("ok".into());
        }
        Ok(problems)
    }
}

fn version(db: &mut dyn Backend) -> Result<i64, StoreError> {
    if !db.has_table("pelt_meta")? {
        return Ok(0);
    }
    let rows = db.query(
        "SELECT value FROM pelt_meta WHERE key = 'schema_version'",
        &[],
    )?;
    Ok(rows
        .first()
        .and_then(|r| r[0].text())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0))
}

fn refuse_newer(place: &str, found: i64) -> Result<(), StoreError> {
    if found > schema::VERSION {
        return Err(StoreError::Newer {
            place: place.to_string(),
            found,
            known: schema::VERSION,
        });
    }
    Ok(())
}

/// Inserts `run` with `config` (its configuration as stored: redacted)
/// in place of the summary's own.
fn insert(db: &mut dyn Backend, run: NewRun<'_>, config: &RunConfig) -> Result<i64, StoreError> {
    let NewRun {
        kind,
        label,
        tags,
        summary,
        report_json,
        results,
        capacity,
    } = run;
    let s = summary.as_ref();
    let f = Figures::of(s);
    let first = &config.targets[0];
    let json = |v: Result<String, serde_json::Error>| {
        v.map_err(|e| StoreError::Db {
            place: "(encoding)".into(),
            detail: e.to_string(),
        })
    };
    let recorded_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let (results_path, blob, spool) = match results {
        Results::File(p) => (Some(p), None, None),
        Results::Blob(bytes) => (None, Some(bytes), None),
        Results::Spool(spool) => (None, None, Some(spool)),
        Results::None => (None, None, None),
    };
    let steps = crate::model::StepFigures::of(s);
    let steps_json = match steps.is_empty() {
        true => None,
        false => Some(json(serde_json::to_string(&steps))?),
    };
    let params: Vec<Value> = vec![
        recorded_ms.into(),
        s.env.started_unix_ms.into(),
        kind.name().into(),
        label.into(),
        first.url.to_string().into(),
        first.method.clone().into(),
        (config.targets.len() as u64).into(),
        if s.is_rate_mode() { "rate" } else { "closed" }.into(),
        u64::from(config.load.connections()).into(),
        s.offered_rate().into(),
        s.duration.as_secs_f64().into(),
        f.requests.into(),
        f.sent.into(),
        f.successes.into(),
        f.failed.into(),
        f.failed_share.into(),
        f.rate.into(),
        f.throughput.into(),
        f.p50_ns.into(),
        f.p90_ns.into(),
        f.p99_ns.into(),
        f.p999_ns.into(),
        f.max_ns.into(),
        f.client_busy.into(),
        capacity.into(),
        s.complete.into(),
        s.interrupted.into(),
        s.env.pelt_version.clone().into(),
        json(serde_json::to_string(config))?.into(),
        json(serde_json::to_string(&s.env))?.into(),
        report_json.into(),
        results_path.into(),
        steps_json.into(),
    ];
    let names = "recorded_ms, started_ms, kind, label, url, method, targets, mode, connections, \
         offered_rate, duration_s, requests, sent, successes, failed, failed_share, rate, throughput, \
         p50_ns, p90_ns, p99_ns, p999_ns, max_ns, client_busy, capacity, complete, interrupted, \
         pelt_version, config_json, env_json, report_json, results_path, steps_json";
    let marks: Vec<String> = (1..=params.len()).map(|i| format!("?{i}")).collect();
    let sql = format!(
        "INSERT INTO pelt_runs ({names}) VALUES ({}) RETURNING id",
        marks.join(", ")
    );
    let id = db.query(&sql, &params)?[0][0]
        .int()
        .ok_or_else(|| StoreError::Db {
            place: "(insert)".into(),
            detail: "the database returned no id".into(),
        })?;
    for (k, v) in &tags {
        db.execute(
            "INSERT INTO pelt_tags (run_id, key, value) VALUES (?1, ?2, ?3)",
            &[Value::Int(id), k.as_str().into(), v.as_str().into()],
        )?;
    }
    if let Some(bytes) = blob {
        db.execute(
            "INSERT INTO pelt_results (run_id, bytes) VALUES (?1, ?2)",
            &[Value::Int(id), Value::Blob(bytes)],
        )?;
    }
    if let Some(spool) = spool {
        // Streamed in chunks: a long run's file is never in memory whole.
        let mut bytes = spool.reader().map_err(|e| StoreError::Db {
            place: "(results file)".into(),
            detail: e.to_string(),
        })?;
        db.insert_results(id, spool.len(), &mut bytes)?;
    }
    #[cfg(feature = "test-hold")]
    if let Some(signal) = std::env::var_os(HOLD_ENV) {
        if std::fs::File::create(signal).is_ok() {
            std::thread::sleep(std::time::Duration::from_secs(120));
        }
    }
    Ok(id)
}

/// The SQL condition for `f`, with its parameters.
fn where_clause(f: &Filter) -> (String, Vec<Value>) {
    let mut conds = vec!["1 = 1".to_string()];
    let mut params: Vec<Value> = Vec::new();
    let push = |params: &mut Vec<Value>, v: Value| {
        params.push(v);
        format!("?{}", params.len())
    };
    if !f.ids.is_empty() {
        let marks: Vec<String> = f
            .ids
            .iter()
            .map(|&id| push(&mut params, Value::Int(id)))
            .collect();
        conds.push(format!("id IN ({})", marks.join(", ")));
    }
    if let Some(url) = &f.url {
        conds.push(format!("url = {}", push(&mut params, url.as_str().into())));
    }
    if let Some(label) = &f.label {
        conds.push(format!(
            "label = {}",
            push(&mut params, label.as_str().into())
        ));
    }
    if let Some(t) = f.since_ms {
        conds.push(format!("started_ms >= {}", push(&mut params, t.into())));
    }
    if let Some(t) = f.until_ms {
        conds.push(format!("started_ms < {}", push(&mut params, t.into())));
    }
    if !f.kinds.is_empty() {
        let marks: Vec<String> = f
            .kinds
            .iter()
            .map(|k| push(&mut params, k.name().into()))
            .collect();
        conds.push(format!("kind IN ({})", marks.join(", ")));
    }
    for kind in &f.without {
        conds.push(format!("kind <> {}", push(&mut params, kind.name().into())));
    }
    for (k, v) in &f.tags {
        let key = push(&mut params, k.as_str().into());
        let value = match v {
            Some(v) => format!(" AND t.value = {}", push(&mut params, v.as_str().into())),
            None => String::new(),
        };
        conds.push(format!(
            "EXISTS (SELECT 1 FROM pelt_tags t WHERE t.run_id = pelt_runs.id AND t.key = {key}{value})"
        ));
    }
    (conds.join(" AND "), params)
}

/// A listing row from the columns of [`schema::ROW_COLUMNS`].
fn row(r: &[Value]) -> RunRow {
    let int = |i: usize| r[i].int();
    let real = |i: usize| r[i].real();
    let text = |i: usize| r[i].text().map(str::to_string);
    let count = |i: usize| int(i).map_or(0, |v| v.max(0) as u64);
    let ns = |i: usize| int(i).map(|v| v.max(0) as u64);
    RunRow {
        id: int(0).unwrap_or_default(),
        started_ms: int(1).unwrap_or_default(),
        recorded_ms: int(2).unwrap_or_default(),
        kind: RunRow::kind_of(&text(3).unwrap_or_default()),
        label: text(4),
        tags: Vec::new(),
        url: text(5).unwrap_or_default(),
        method: text(6).unwrap_or_default(),
        targets: count(7),
        mode: text(8).unwrap_or_default(),
        connections: count(9),
        offered_rate: real(10),
        duration_s: real(11).unwrap_or_default(),
        figures: Figures {
            requests: count(12),
            sent: count(28),
            sent_share: (text(8).as_deref() == Some("rate") && count(12) > 0)
                .then(|| count(28) as f64 / count(12) as f64),
            successes: count(13),
            failed: count(14),
            failed_share: real(15).unwrap_or_default(),
            rate: real(16).unwrap_or_default(),
            throughput: real(17).unwrap_or_default(),
            p50_ns: ns(18),
            p90_ns: ns(19),
            p99_ns: ns(20),
            p999_ns: ns(21),
            max_ns: ns(22),
            client_busy: real(23),
            capacity: real(29),
        },
        complete: int(24).unwrap_or_default() != 0,
        interrupted: int(25).unwrap_or_default() != 0,
        pelt_version: text(26).unwrap_or_default(),
        results_path: text(27),
    }
}
