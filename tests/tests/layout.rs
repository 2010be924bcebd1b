//! The source layout rules, checked on every crate of the workspace (members are read from
//! the root Cargo.toml, so a new crate is covered without listing it here):
//! - no import circle between files, in src/ and in each test and bench crate;
//! - no module imports one above it in the run's flow (a layer table per crate: a module
//!   may name modules of its own layer or lower ones; every top-level module must be listed);
//! - no source file over 500 lines unless its first lines say `// whole: <why>`.
//!
//! runtime/src, regrouped into rooms (issue 23), still has a few circles between a room's
//! mod.rs and its files, and a few long files: each is listed below, so none can be added
//! and a fixed one must leave the list.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use srt_tests::layout::{self, Edge};

/// runtime's rooms, from the command line (9) down to what every room shares (0): a room
/// imports only rooms below it (README, Layout).
const RUNTIME_LAYERS: &[(&str, u8)] = &[
    ("cli", 9),
    ("launch", 8),
    ("process", 7),
    ("supervisor", 6),
    ("check", 5),
    ("net", 4),
    ("fs", 3),
    ("seccomp", 2),
    ("git", 1),
    ("arena", 0),
    ("error", 0),
    ("limits", 0),
    ("paths", 0),
    ("say", 0),
    ("stdio", 0),
    ("sys", 0),
];

/// Circles left in runtime/src (the files of each, sorted), between a room's mod.rs and
/// the files it declares. A new circle, or one that grows, fails; a listed one that is gone
/// must be removed from here.
const RUNTIME_KNOWN_CIRCLES: &[&[&str]] = &[];

/// Files in runtime/src over the limit with no `// whole:` reason yet; the same ratchet.
const RUNTIME_KNOWN_LONG: &[&str] = &[];

/// srt-proxy, from what every connection needs (0) up to the accept loop (5).
const PROXY_LAYERS: &[(&str, u8)] = &[
    // parsing, addresses, names, counters: no proxy state
    ("addr", 0),
    ("client_hello", 0),
    ("clients", 0),
    ("dns", 0),
    ("log", 0),
    ("matcher", 0),
    ("metrics", 0),
    ("preamble", 0),
    ("resolve", 0),
    ("synthetic", 0),
    ("target", 0),
    // the decision, and moving bytes
    ("policy", 1),
    ("splice", 1),
    // the state every handler shares, and the relays
    ("shared", 2),
    ("tunnel", 2),
    ("first_flight", 2),
    // one step of a connection: dial, the checked relay; live reload of the shared policy
    ("dial", 3),
    ("checked", 3),
    ("reload", 3),
    // the protocol handlers
    ("http", 4),
    ("socks", 4),
    ("transparent", 4),
    // accept and dispatch
    ("server", 5),
];

/// srt-controller, from the types and facts (0) up to the process (6).
const CONTROLLER_LAYERS: &[(&str, u8)] = &[
    // the CRD types, references, options, the served API, the pod's names, why not
    ("crd", 0),
    ("refs", 0),
    ("options", 0),
    ("metrics", 0),
    ("discovery", 0),
    ("kagent_crd", 0),
    ("conflict", 0),
    ("rejection", 0),
    ("pod_layout", 0),
    // checks and the pieces of the desired objects
    ("floor", 1),
    ("accept", 1),
    ("mounts", 1),
    ("credentials", 1),
    ("settings", 1),
    ("skills", 1),
    ("stored", 1),
    ("carried", 1),
    ("injectors", 1),
    ("conditions", 1),
    ("agent_config", 1),
    ("pod", 2),
    ("objects", 3),
    // one reconcile against the API server, or rendered offline
    ("reconcile", 4),
    ("render", 4),
    ("http", 5),
    ("run", 6),
];

/// Each crate's layer table (crate directory, table); a crate with a table must list every
/// top-level module of its src/.
const LAYERS: &[(&str, &[(&str, u8)])] =
    &[("proxy", PROXY_LAYERS), ("controller", CONTROLLER_LAYERS), ("runtime", RUNTIME_LAYERS)];

const MAX_LINES: usize = 500;

/// This workspace, or another checkout named by `SRT_LAYOUT_ROOT` (to show a rule failing
/// on an older tree with the same test binary).
fn workspace() -> PathBuf {
    match std::env::var_os("SRT_LAYOUT_ROOT") {
        Some(root) => PathBuf::from(root),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf(),
    }
}

fn is_runtime_src(root: &Path, ws: &Path) -> bool {
    root.starts_with(ws.join("runtime/src"))
}

/// One line per pair of files: `from -> to (lines a, b)`, the lines where `from` names `to`.
fn show(cycle: &[Edge]) -> String {
    let mut pairs: std::collections::BTreeMap<(&Path, &Path), Vec<String>> = Default::default();
    for e in cycle {
        pairs.entry((&e.from, &e.to)).or_default().push(e.line.to_string());
    }
    let mut s = String::new();
    for ((from, to), lines) in pairs {
        let _ = writeln!(s, "    {} -> {} (line {})", from.display(), to.display(), lines.join(", "));
    }
    s
}

#[test]
fn no_import_circles() {
    let ws = workspace();
    let members = layout::members(&ws);
    assert!(members.len() >= 5, "the workspace members were not read from Cargo.toml: {members:?}");
    let mut failures = String::new();
    let mut known_seen: Vec<Vec<String>> = Vec::new();
    let mut graphs = 0;
    for m in &members {
        let dir = ws.join(m);
        for root in layout::roots(&dir, false) {
            let g = layout::build(&root, &dir);
            graphs += 1;
            for cycle in g.cycles() {
                let mut files: Vec<String> = cycle.iter().map(|e| e.from.display().to_string()).collect();
                files.sort();
                files.dedup();
                let known = RUNTIME_KNOWN_CIRCLES.iter().any(|k| k.iter().eq(files.iter()));
                if is_runtime_src(&root, &ws) && known {
                    eprintln!("known circle in runtime/src:\n{}", show(&cycle));
                    known_seen.push(files);
                    continue;
                }
                let _ = write!(failures, "  {m} ({}):\n{}", root.strip_prefix(&ws).unwrap().display(), show(&cycle));
            }
        }
    }
    assert!(graphs > 20, "only {graphs} crate roots found");
    for k in RUNTIME_KNOWN_CIRCLES {
        if !known_seen.iter().any(|f| k.iter().eq(f.iter())) {
            let _ = writeln!(failures, "  {k:?} is no longer a circle: remove it from RUNTIME_KNOWN_CIRCLES");
        }
    }
    assert!(failures.is_empty(), "import circles (each file -> the file it names, at those lines):\n{failures}");
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
            let tops = layout::top_modules(&g);
            for top in &tops {
                if !table.iter().any(|(n, _)| n == top) {
                    let _ = writeln!(failures, "  {krate}: module `{top}` has no layer: add it to the table");
                }
            }
            if root.ends_with("src/lib.rs") {
                for (name, _) in table.iter().filter(|(n, _)| !tops.iter().any(|t| t == n)) {
                    let _ =
                        writeln!(failures, "  {krate}: the table names `{name}`, which src/lib.rs does not declare");
                }
            }
            for (e, from, to) in layout::upward(&g, table) {
                let _ = writeln!(
                    failures,
                    "  {krate}: {}:{} (layer {from}) imports {} (layer {to})",
                    e.from.display(),
                    e.line,
                    e.to.display(),
                );
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
            let src = std::fs::read_to_string(&f).unwrap();
            checked += 1;
            let name = f.strip_prefix(&ws).unwrap().display().to_string();
            let long = src.lines().count() > MAX_LINES && layout::whole_reason(&src).is_none();
            match (long, RUNTIME_KNOWN_LONG.contains(&name.as_str())) {
                (true, false) => {
                    let _ = writeln!(failures, "  {name} has {} lines", src.lines().count());
                }
                (false, true) => {
                    let _ = writeln!(failures, "  {name} is no longer too long: remove it from RUNTIME_KNOWN_LONG");
                }
                (true, true) => eprintln!("known long file: {name}"),
                (false, false) => {}
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
