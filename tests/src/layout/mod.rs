//! The workspace's source layout, read from the files: each crate's import graph between
//! files (no circles; modules only import modules below them in the run's flow), and the
//! size of each source file. `tests/tests/layout.rs` holds the rules; this is the reading.
//!
//! What it reads as an import: `use` trees, and paths in code starting with `crate`,
//! `$crate`, `self`, `super` or a child module's name, resolved through `pub use`
//! re-exports (named and glob) to the file that defines the item. What it does not see:
//! method calls (they name no module), macros used by bare name, and paths inside string
//! attributes (`#[serde(with = "...")]`); `#[cfg(test)]` modules are not followed.

pub mod graph;
pub mod lex;
pub mod parse;

use std::path::{Path, PathBuf};

pub use graph::{build, Edge, Graph};

/// The files a crate is compiled from: `src/lib.rs`, `src/main.rs`, `src/bin/*.rs`, and
/// (unless `src_only`) `tests/*.rs` and `benches/*.rs`; each is its own crate.
pub fn roots(crate_dir: &Path, src_only: bool) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> =
        ["src/lib.rs", "src/main.rs"].iter().map(|p| crate_dir.join(p)).filter(|p| p.exists()).collect();
    let mut dirs = vec!["src/bin"];
    if !src_only {
        dirs.extend(["tests", "benches"]);
    }
    for d in dirs {
        let mut files: Vec<PathBuf> = std::fs::read_dir(crate_dir.join(d))
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "rs"))
            .collect();
        files.sort();
        out.extend(files);
    }
    out
}

/// The workspace members named in the root Cargo.toml's `members = [...]`.
pub fn members(workspace: &Path) -> Vec<String> {
    let toml = std::fs::read_to_string(workspace.join("Cargo.toml")).unwrap_or_default();
    let Some(start) = toml.find("members") else { return Vec::new() };
    let rest = &toml[start..];
    let (Some(open), Some(close)) = (rest.find('['), rest.find(']')) else { return Vec::new() };
    rest[open + 1..close].split(',').map(|s| s.trim().trim_matches('"').to_string()).filter(|s| !s.is_empty()).collect()
}

/// Every `.rs` file below `dir`, skipping `target/` and `fixtures/` (inputs, not code).
pub fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            let name = e.file_name();
            if p.is_dir() {
                if name != "target" && name != "fixtures" && !name.to_string_lossy().starts_with('.') {
                    todo.push(p);
                }
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The `// whole:` reason a file over the size limit gives in its first lines, if any.
pub fn whole_reason(src: &str) -> Option<&str> {
    src.lines().take(10).find_map(|l| l.trim().strip_prefix("// whole:")).map(str::trim).filter(|r| !r.is_empty())
}

/// The layer of a file's module: its top-level module's entry in `layers` (the crate root
/// and an unlisted module have none).
pub fn layer_of(g: &Graph, file: &Path, layers: &[(&str, u8)]) -> Option<(String, u8)> {
    let top = g.files.get(file)?.first()?;
    layers.iter().find(|(n, _)| n == top).map(|(n, l)| (n.to_string(), *l))
}

/// The top-level modules of the crate that a layer table must list.
pub fn top_modules(g: &Graph) -> Vec<String> {
    let mut tops: Vec<String> = g.files.values().filter_map(|m| m.first().cloned()).collect();
    tops.sort();
    tops.dedup();
    tops
}

/// Imports going up: an edge from a module to one in a higher layer of `layers`.
pub fn upward(g: &Graph, layers: &[(&str, u8)]) -> Vec<(Edge, u8, u8)> {
    g.edges
        .iter()
        .filter_map(|e| {
            let (_, from) = layer_of(g, &e.from, layers)?;
            let (_, to) = layer_of(g, &e.to, layers)?;
            (to > from).then(|| (e.clone(), from, to))
        })
        .collect()
}

#[cfg(test)]
mod tests;
