//! What every format's parser shares: the file's name and folder, the
//! body files read so far, and the limits on bodies and weights.

use super::{TargetsError, MAX_TOTAL_BODY};
use crate::config::quote::quote;
use crate::config::MAX_BODY;
use crate::url::Url;
use std::collections::HashMap;
use std::fmt;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

pub(super) struct Parser<'a> {
    file: &'a str,
    base_dir: &'a Path,
    /// Body files already read, by resolved path.
    bodies: HashMap<PathBuf, Vec<u8>>,
    total_body: usize,
}

impl<'a> Parser<'a> {
    /// A parser for the file named `file` (in messages), whose relative
    /// body paths start at `base_dir`.
    pub(super) fn new(file: &'a str, base_dir: &'a Path) -> Parser<'a> {
        Parser {
            file,
            base_dir,
            bodies: HashMap::new(),
            total_body: 0,
        }
    }

    /// What is wrong on line `line`.
    pub(super) fn error(&self, line: usize, message: impl fmt::Display) -> TargetsError {
        TargetsError {
            file: self.file.to_string(),
            line: Some(line),
            message: message.to_string(),
        }
    }

    /// What is wrong with the file as a whole.
    pub(super) fn file_error(&self, message: &str) -> TargetsError {
        TargetsError {
            file: self.file.to_string(),
            line: None,
            message: message.to_string(),
        }
    }

    /// An absolute URL on line `n`.
    pub(super) fn url(&self, n: usize, s: &str) -> Result<Url, TargetsError> {
        Url::parse(s).map_err(|e| {
            self.error(
                n,
                format!(
                    "expected a URL like http://host/path, found {} ({})",
                    quote(s),
                    e.reason
                ),
            )
        })
    }

    /// Counts a body against [`MAX_BODY`] and [`MAX_TOTAL_BODY`].
    pub(super) fn account(&mut self, n: usize, len: usize) -> Result<(), TargetsError> {
        if len > MAX_BODY {
            return Err(self.error(
                n,
                "the body is larger than 32 MiB; pelt holds bodies in memory, so use a smaller one",
            ));
        }
        self.total_body = self.total_body.saturating_add(len);
        if self.total_body > MAX_TOTAL_BODY {
            return Err(self.error(
                n,
                "the bodies of all targets add up to more than 256 MiB; pelt holds them in memory, so use fewer or smaller ones",
            ));
        }
        Ok(())
    }

    /// Reads a body file named on line `n`, relative to `base_dir`.
    pub(super) fn body_file(
        &mut self,
        n: usize,
        name: &str,
        marker: char,
    ) -> Result<Vec<u8>, TargetsError> {
        let name = name.trim();
        if name.is_empty() {
            return Err(self.error(
                n,
                format!("expected a file name after '{marker}', like {marker}body.json"),
            ));
        }
        let path = self.base_dir.join(name);
        let body = match self.bodies.get(&path) {
            Some(body) => body.clone(),
            None => {
                let body = read_limited(&path, MAX_BODY).map_err(|e| {
                    let fix = match e {
                        // It says what to do already.
                        ReadError::TooLarge { .. } => "",
                        ReadError::Io(_) | ReadError::Directory => {
                            "; check the path (a relative one starts at the targets file's folder)"
                        }
                    };
                    self.error(
                        n,
                        format!(
                            "cannot read the body file {}: {e}{fix}",
                            quote(&path.display().to_string())
                        ),
                    )
                })?;
                self.bodies.insert(path, body.clone());
                body
            }
        };
        self.account(n, body.len())?;
        Ok(body)
    }
}

/// Why [`read_limited`] could not read a file. The text says what went
/// wrong; where it helps, the caller adds what to check (the path, and
/// from where a relative one starts).
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The operating system's error (no such file, no permission, ...).
    #[error("{0}")]
    Io(#[from] io::Error),
    /// The path names a directory.
    #[error("it is a directory")]
    Directory,
    /// The file holds more than `limit` bytes.
    #[error("it is larger than {} MiB; pelt holds bodies in memory", .limit >> 20)]
    TooLarge {
        /// The limit, in bytes.
        limit: usize,
    },
}

/// Reads at most `limit` bytes of `path`, failing beyond it. Reading with a
/// cap (not trusting the file's size) keeps `/dev/zero` and growing files
/// harmless.
pub fn read_limited(path: &Path, limit: usize) -> Result<Vec<u8>, ReadError> {
    let file = std::fs::File::open(path)?;
    if let Ok(meta) = file.metadata() {
        if meta.is_dir() {
            return Err(ReadError::Directory);
        }
        if meta.len() > limit as u64 {
            return Err(ReadError::TooLarge { limit });
        }
    }
    let mut body = Vec::new();
    file.take(limit as u64 + 1).read_to_end(&mut body)?;
    if body.len() > limit {
        return Err(ReadError::TooLarge { limit });
    }
    Ok(body)
}

/// Largest weight of one target.
pub const MAX_WEIGHT: u32 = 1_000_000;

/// A weight that is not a whole number from 1 to [`MAX_WEIGHT`], as
/// written.
#[derive(Debug, thiserror::Error)]
#[error(
    "expected a weight from 1 to {MAX_WEIGHT}, found {}; a weight is a whole number, \
     relative to the other targets' (remove a target to send it nothing)",
    quote(.0)
)]
pub(super) struct BadWeight(String);

/// A target's weight: a whole number from 1 to [`MAX_WEIGHT`].
pub(super) fn check_weight(text: &str) -> Result<u32, BadWeight> {
    match text.parse::<u32>() {
        Ok(w @ 1..=MAX_WEIGHT) => Ok(w),
        _ => Err(BadWeight(text.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::super::*;
    use crate::config::MAX_BODY;
    use crate::targets::testing::*;

    #[test]
    fn body_size_is_limited() {
        let dir = TempDir::new("big");
        let big = std::fs::File::create(dir.0.join("big.bin")).unwrap();
        big.set_len(MAX_BODY as u64 + 1).unwrap();
        drop(big);
        let e = parse(
            "http://a/ POST <big.bin\n",
            TargetsFormat::Siege,
            "t",
            &dir.0,
        )
        .unwrap_err();
        assert_eq!(e.line, Some(1));
        assert!(e.message.contains("larger than 32 MiB"), "{e}");
        let e = parse(
            "POST http://a/\n@big.bin\n",
            TargetsFormat::VegetaHttp,
            "t",
            &dir.0,
        )
        .unwrap_err();
        assert_eq!(e.line, Some(2));
        let e = parse(
            "POST http://a/\n@.\n",
            TargetsFormat::VegetaHttp,
            "t",
            &dir.0,
        )
        .unwrap_err();
        assert!(e.message.contains("directory"), "{e}");
    }

    #[test]
    fn total_body_size_is_limited() {
        let dir = TempDir::new("total");
        dir.write("b.bin", &vec![7u8; 16 << 20]);
        let one = "POST http://a/\n@b.bin\n\n";
        let ok = one.repeat(MAX_TOTAL_BODY / (16 << 20));
        let got = parse(&ok, TargetsFormat::VegetaHttp, "t", &dir.0).unwrap();
        assert_eq!(got.len(), 16);
        let e = parse(&(ok + one), TargetsFormat::VegetaHttp, "t", &dir.0).unwrap_err();
        assert_eq!(e.line, Some(50));
        assert!(e.message.contains("add up to more than 256 MiB"), "{e}");
    }
}
