//! Every crate's modules form layers: no top-level module reaches,
//! through `crate::` paths, a module that reaches back to it. A circle
//! means two modules that can only be understood (and changed) together;
//! the binary once had eleven in one.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The top-level modules `text` names through `crate::` paths.
fn named(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let bytes = text.as_bytes();
    let mut at = 0;
    while let Some(i) = text[at..].find("crate::") {
        let start = at + i + "crate::".len();
        at = start;
        // `pelt_crate::x` or `my_crate::x` is another crate's path.
        if start > 7 {
            let before = bytes[start - 8];
            if before.is_ascii_alphanumeric() || before == b'_' {
                continue;
            }
        }
        if bytes.get(start) == Some(&b'{') {
            // `use crate::{a, b::{c, d}, e}`: the names at depth one.
            let mut depth = 0;
            let mut word = String::new();
            // Whether the next name at depth one starts a path.
            let mut fresh = true;
            for &b in &bytes[start..] {
                let name_char = b.is_ascii_alphanumeric() || b == b'_';
                if depth == 1 && !name_char && !word.is_empty() {
                    out.insert(std::mem::take(&mut word));
                    fresh = false;
                }
                match b {
                    b'{' => depth += 1,
                    b'}' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    b',' if depth == 1 => fresh = true,
                    _ if depth == 1 && fresh && name_char => word.push(b as char),
                    _ => {}
                }
            }
            if !word.is_empty() {
                out.insert(word);
            }
        } else {
            let name: String = text[start..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            out.insert(name);
        }
    }
    out
}

/// The code that builds the crate: test modules (at the end of a file,
/// as they are written here) and comments (doc links) left out.
fn code(text: &str) -> String {
    let text = text.split("#[cfg(test)]").next().unwrap_or_default();
    text.lines()
        .map(|line| line.split("//").next().unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a source folder") {
        let path = entry.expect("an entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The names the crate root re-exports (`pub use measure::{recorder,
/// stream}`, `pub use recorder::Recorder`), each with the top-level module
/// it comes from: `crate::recorder` and `crate::Recorder` are edges to
/// `measure` (pelt-core's rooms keep their old paths this way).
fn aliases(src: &Path) -> BTreeMap<String, String> {
    let root = ["lib.rs", "main.rs"]
        .iter()
        .find_map(|f| std::fs::read_to_string(src.join(f)).ok())
        .unwrap_or_default();
    let mut heads: BTreeMap<String, String> = BTreeMap::new();
    for statement in code(&root).split(';') {
        let Some(path) = statement.trim().strip_prefix("pub use ") else {
            continue;
        };
        let mut words = path
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty() && *w != "self" && *w != "crate");
        let Some(head) = words.next() else { continue };
        for word in words {
            heads
                .entry(word.to_string())
                .or_insert_with(|| head.to_string());
        }
    }
    // A head may itself be a re-export (`pub use recorder::Recorder`).
    let resolve = |name: &String| {
        let mut name = name.clone();
        for _ in 0..8 {
            match heads.get(&name) {
                Some(h) if *h != name => name = h.clone(),
                _ => break,
            }
        }
        name
    };
    heads.keys().map(|k| (k.clone(), resolve(k))).collect()
}

/// The crate's top-level modules and the ones each names.
fn graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut modules: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let relative = file.strip_prefix(src).expect("under src");
        let top = relative
            .components()
            .next()
            .and_then(|c| c.as_os_str().to_str())
            .expect("a name")
            .trim_end_matches(".rs")
            .to_string();
        if top == "lib" || top == "main" || relative.ends_with("tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(file).expect("readable source");
        modules.entry(top).or_default().extend(named(&code(&text)));
    }
    let aliases = aliases(src);
    for edges in modules.values_mut() {
        *edges = edges
            .iter()
            .map(|e| aliases.get(e).cloned().unwrap_or_else(|| e.clone()))
            .collect();
    }
    let known: BTreeSet<String> = modules.keys().cloned().collect();
    for (name, edges) in modules.iter_mut() {
        edges.retain(|e| e != name && known.contains(e));
    }
    modules
}

/// A circle through the graph, if there is one, as its modules in order.
fn circle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| p == node) {
            let mut c = path[i..].to_vec();
            c.push(node.to_string());
            return Some(c);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(c) = visit(next, graph, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|n| visit(n, graph, &mut Vec::new(), &mut done))
}

#[test]
fn no_crate_has_an_import_circle() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut circles = Vec::new();
    let mut read = 0;
    for entry in std::fs::read_dir(&crates).expect("the crates folder") {
        let src = entry.expect("an entry").path().join("src");
        if !src.is_dir() {
            continue;
        }
        read += 1;
        if let Some(c) = circle(&graph(&src)) {
            circles.push(format!("{}: {}", src.display(), c.join(" -> ")));
        }
    }
    assert!(read >= 9, "read {read} crates");
    assert!(
        circles.is_empty(),
        "import circles:\n{}",
        circles.join("\n")
    );
}

/// pelt-core's three rooms import one way, whatever path the code takes
/// (a room's own or the root's re-export): what to run (config) knows
/// nothing of measuring, and measuring nothing of a run's results.
#[test]
fn pelt_cores_rooms_import_one_way() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../pelt-core/src");
    let g = graph(&src);
    let edges = |room: &str| g.get(room).cloned().unwrap_or_default();
    assert!(
        g.contains_key("measure") && g.contains_key("results"),
        "{g:?}"
    );
    assert!(edges("results").contains("measure"), "{g:?}");
    for (room, below) in [
        ("config", ["measure", "results"]),
        ("measure", ["results", "results"]),
    ] {
        for other in below {
            assert!(
                !edges(room).contains(other),
                "{room} imports {other}: {g:?}"
            );
        }
    }
}

#[test]
fn the_reader_sees_every_kind_of_path() {
    let text = "use crate::{a, b::{c, d}, e as f};\nuse crate::g::h;\nlet x = crate::i::j();\nuse pelt_crate::k;";
    let got: Vec<String> = named(text).into_iter().collect();
    assert_eq!(got, ["a", "b", "e", "g", "i"]);
    let mut g = BTreeMap::new();
    g.insert("a".to_string(), BTreeSet::from(["b".to_string()]));
    g.insert("b".to_string(), BTreeSet::from(["a".to_string()]));
    assert_eq!(circle(&g), Some(vec!["a".into(), "b".into(), "a".into()]));
    g.insert("b".to_string(), BTreeSet::new());
    assert_eq!(circle(&g), None);
}
