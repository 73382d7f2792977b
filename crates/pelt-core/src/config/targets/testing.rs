//! Helpers shared by the targets tests.

use super::{parse, TargetsFormat};
use crate::config::Target;
pub(super) use crate::url::Url;
pub(super) use std::path::{Path, PathBuf};

/// A scratch directory removed on drop.
pub(super) struct TempDir(pub(super) PathBuf);

impl TempDir {
    pub(super) fn new(name: &str) -> TempDir {
        let path = std::env::temp_dir().join(format!(
            "pelt-targets-{name}-{}-{:?}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos()
        ));
        std::fs::create_dir_all(&path).unwrap();
        TempDir(path)
    }

    pub(super) fn write(&self, name: &str, content: &[u8]) {
        std::fs::write(self.0.join(name), content).unwrap();
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub(super) fn nowhere() -> &'static Path {
    Path::new("/nonexistent-pelt-targets-dir")
}

pub(super) fn url(s: &str) -> Url {
    Url::parse(s).unwrap()
}

pub(super) fn target(method: &str, u: &str, headers: &[(&str, &str)], body: &[u8]) -> Target {
    Target {
        method: method.into(),
        url: url(u),
        headers: headers
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect(),
        body: body.to_vec(),
        weight: 1,
    }
}

pub(super) fn err(text: &str, format: TargetsFormat) -> String {
    let e = parse(text, format, "targets.txt", nowhere()).unwrap_err();
    let s = e.to_string();
    assert!(!s.contains('\n'), "error is not one line: {s}");
    s
}
