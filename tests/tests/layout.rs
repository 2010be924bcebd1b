//! The source layout rules, checked on every crate of the workspace (members are read from
//! the root Cargo.toml, so a new crate is covered without listing it here):
//! - no import circle between files, in src/ and in each test and bench crate;
//! - no module imports one above it in the run's flow (a layer table per crate: a module
//!   may name modules of its own layer or lower ones; every top-level module must be listed);
//! - no source file over 500 lines unless its first lines say `// whole: <why>`.
//!
//! runtime/src is being regrouped (issue 23): until `RUNTIME_LAYERS` is filled in, its
//! circles are printed as a known list, not enforced, and its file sizes are not checked.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use srt_tests::layout::{self, Edge};

/// runtime's top-level modules, by layer: a module may import modules of its own layer or
/// lower. Empty until the regroup lands; once filled, runtime/src is held to every rule.
const RUNTIME_LAYERS: &[(&str, u8)] = &[];

/// The other crates' layer tables (crate directory, table).
const LAYERS: &[(&str, &[(&str, u8)])] = &[("runtime", RUNTIME_LAYERS)];

const MAX_LINES: usize = 500;

/// This workspace, or another checkout named by `SRT_LAYOUT_ROOT` (to show a rule failing
/// on an older tree with the same test binary).
fn workspace() -> PathBuf {
    match std::env::var_os("SRT_LAYOUT_ROOT") {
        Some(root) => PathBuf::from(root),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf(),
    }
}

fn runtime_src_enforced() -> bool {
    !RUNTIME_LAYERS.is_empty()
}

fn is_runtime_src(root: &Path, ws: &Path) -> bool {
    root.starts_with(ws.join("runtime/src"))
}

fn show(cycle: &[Edge]) -> String {
    let mut s = String::new();
    for e in cycle {
        let _ = writeln!(s, "    {}:{} -> {}", e.from.display(), e.line, e.to.display());
    }
    s
}

#[test]
fn no_import_circles() {
    let ws = workspace();
    let members = layout::members(&ws);
    assert!(members.len() >= 5, "the workspace members were not read from Cargo.toml: {members:?}");
    let mut failures = String::new();
    let mut known = String::new();
    let mut graphs = 0;
    for m in &members {
        let dir = ws.join(m);
        for root in layout::roots(&dir, false) {
            let g = layout::build(&root, &dir);
            graphs += 1;
            for cycle in g.cycles() {
                let text = format!("  {m} ({}):\n{}", root.strip_prefix(&ws).unwrap().display(), show(&cycle));
                if is_runtime_src(&root, &ws) && !runtime_src_enforced() {
                    known.push_str(&text);
                } else {
                    failures.push_str(&text);
                }
            }
        }
    }
    assert!(graphs > 20, "only {graphs} crate roots found");
    if !known.is_empty() {
        eprintln!("known import circles in runtime/src (enforced once RUNTIME_LAYERS is filled in):\n{known}");
    }
    assert!(failures.is_empty(), "import circles (file:line -> the file it names):\n{failures}");
}

#[test]
fn no_import_goes_up_the_run_flow() {
    let ws = workspace();
    let mut failures = String::new();
    for (krate, table) in LAYERS {
        if table.is_empty() {
            continue;
        }
        let dir = ws.join(krate);
        for root in layout::roots(&dir, true) {
            let g = layout::build(&root, &dir);
            for top in layout::top_modules(&g) {
                if !table.iter().any(|(n, _)| *n == top) {
                    let _ = writeln!(failures, "  {krate}: module `{top}` has no layer: add it to the table");
                }
            }
            for (e, from, to) in layout::upward(&g, table) {
                let _ =
                    writeln!(failures, "  {krate}: {}:{} (layer {from}) imports {} (layer {to})", e.from.display(), e.line, e.to.display(), );
            }
        }
    }
    assert!(failures.is_empty(), "imports against the layer order:\n{failures}");
}

#[test]
fn no_source_file_over_500_lines_without_a_reason() {
    let ws = workspace();
    let mut failures = String::new();
    let mut checked = 0;
    for m in layout::members(&ws) {
        for f in layout::rust_files(&ws.join(&m)) {
            if is_runtime_src(&f, &ws) && !runtime_src_enforced() {
                continue;
            }
            let src = std::fs::read_to_string(&f).unwrap();
            checked += 1;
            let lines = src.lines().count();
            if lines > MAX_LINES && layout::whole_reason(&src).is_none() {
                let _ = writeln!(failures, "  {} has {lines} lines", f.strip_prefix(&ws).unwrap().display());
            }
        }
    }
    assert!(checked > 100, "only {checked} files checked");
    assert!(
        failures.is_empty(),
        "files over {MAX_LINES} lines: split them along a real seam, or say why one must stay whole in a \
         `// whole: <reason>` line among its first ten:\n{failures}"
    );
}
