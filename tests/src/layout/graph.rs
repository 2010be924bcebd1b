//! A crate's module tree (followed from a root file through its `mod` declarations) and the
//! file-to-file import graph its paths make. Declaring a module is not an edge; naming
//! something in it (`use`, `crate::a::f()`, `super::X`, `child::f()`) is.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::parse::{parse, Parsed};

/// A module path from the crate root: `[]` is the root, `["net", "dns"]` is `crate::net::dns`.
pub type ModPath = Vec<String>;

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Edge {
    pub from: PathBuf,
    pub to: PathBuf,
    pub line: usize,
}

#[derive(Debug, Default)]
pub struct Graph {
    /// Every module (file or inline) and the file holding it.
    pub modules: BTreeMap<ModPath, PathBuf>,
    /// The module path of each file's own module.
    pub files: BTreeMap<PathBuf, ModPath>,
    pub edges: Vec<Edge>,
    items: BTreeSet<(ModPath, String)>,
    reexports: BTreeMap<(ModPath, String), ModPath>,
    globs: BTreeMap<ModPath, Vec<ModPath>>,
}

/// The file holding each non-test module declared by `decl_file`, following `#[path]`.
fn child_file(decl_file: &Path, name: &str, path_attr: Option<&str>) -> Option<PathBuf> {
    let dir = decl_file.parent()?;
    if let Some(p) = path_attr {
        return Some(dir.join(p));
    }
    let stem = decl_file.file_stem()?.to_str()?;
    let base = if matches!(stem, "mod" | "lib" | "main") || is_root_dir(decl_file) {
        dir.to_path_buf()
    } else {
        dir.join(stem)
    };
    let flat = base.join(format!("{name}.rs"));
    if flat.exists() {
        return Some(flat);
    }
    let nested = base.join(name).join("mod.rs");
    nested.exists().then_some(nested)
}

/// Roots outside src/ (tests/x.rs, benches/x.rs) declare their modules next to themselves.
fn is_root_dir(file: &Path) -> bool {
    let parent = file.parent().and_then(|p| p.file_name()).and_then(|n| n.to_str());
    matches!(parent, Some("tests" | "benches" | "bin" | "examples"))
}

/// Builds the graph of the crate whose root file is `root`; files are named relative to
/// `base` in the edges.
pub fn build(root: &Path, base: &Path) -> Graph {
    let mut g = Graph::default();
    let mut parsed: Vec<(PathBuf, ModPath, Parsed)> = Vec::new();
    let mut todo = vec![(root.to_path_buf(), ModPath::new())];
    while let Some((file, mp)) = todo.pop() {
        let rel = file.strip_prefix(base).unwrap_or(&file).to_path_buf();
        if g.files.contains_key(&rel) {
            continue;
        }
        let Ok(src) = std::fs::read_to_string(&file) else { continue };
        let p = parse(&src);
        g.files.insert(rel.clone(), mp.clone());
        g.modules.insert(mp.clone(), rel.clone());
        for m in &p.mods {
            let mut child = mp.clone();
            child.extend(m.scope.iter().cloned());
            child.push(m.name.clone());
            if m.test {
                continue;
            }
            if m.inline {
                g.modules.insert(child, rel.clone());
            } else if let Some(f) = child_file(&file, &m.name, m.path_attr.as_deref()) {
                todo.push((f, child));
            }
        }
        parsed.push((rel, mp, p));
    }
    for (_, mp, p) in &parsed {
        for (scope, name) in &p.items {
            g.items.insert((join(mp, scope), name.clone()));
        }
    }
    for (_, mp, p) in &parsed {
        for r in &p.refs {
            let scope = join(mp, &r.scope);
            let (Some(bound), Some(abs)) = (&r.reexport, g.absolute(&scope, &r.segs)) else { continue };
            if bound == "*" {
                g.globs.entry(scope).or_default().push(abs);
            } else {
                g.reexports.insert((scope, bound.clone()), abs);
            }
        }
    }
    let mut edges = BTreeSet::new();
    for (file, mp, p) in &parsed {
        for r in &p.refs {
            let scope = join(mp, &r.scope);
            let Some(abs) = g.absolute(&scope, &r.segs) else { continue };
            let Some(to) = g.target(&abs, 0) else { continue };
            let to = g.modules[&to].clone();
            if &to != file {
                edges.insert(Edge { from: file.clone(), to, line: r.line });
            }
        }
    }
    g.edges = edges.into_iter().collect();
    g
}

fn join(a: &[String], b: &[String]) -> ModPath {
    a.iter().chain(b).cloned().collect()
}

impl Graph {
    /// The absolute path `segs` names from `scope`, or None for another crate's path or a
    /// local name.
    fn absolute(&self, scope: &[String], segs: &[String]) -> Option<ModPath> {
        let first = segs.first()?;
        let (mut base, rest): (ModPath, &[String]) = match first.as_str() {
            "crate" | "$crate" => (Vec::new(), &segs[1..]),
            "self" => (scope.to_vec(), &segs[1..]),
            "super" => {
                let mut b = scope.to_vec();
                let mut k = 0;
                while segs.get(k).map(String::as_str) == Some("super") {
                    b.pop()?;
                    k += 1;
                }
                (b, &segs[k..])
            }
            _ => {
                let mut child = scope.to_vec();
                child.push(first.clone());
                if !self.modules.contains_key(&child) {
                    return None;
                }
                (scope.to_vec(), segs)
            }
        };
        base.extend(rest.iter().cloned());
        Some(base)
    }

    /// The module that defines what `abs` names, following named and glob re-exports.
    fn target(&self, abs: &[String], hops: usize) -> Option<ModPath> {
        let m = (0..=abs.len()).rev().map(|k| abs[..k].to_vec()).find(|p| self.modules.contains_key(p))?;
        let Some(name) = abs.get(m.len()) else { return Some(m) };
        if hops > 8 || self.items.contains(&(m.clone(), name.clone())) {
            return Some(m);
        }
        if let Some(to) = self.reexports.get(&(m.clone(), name.clone())) {
            let mut next = to.clone();
            next.extend(abs[m.len() + 1..].iter().cloned());
            return self.target(&next, hops + 1).or(Some(m));
        }
        for g in self.globs.get(&m).into_iter().flatten() {
            let mut next = g.clone();
            next.extend(abs[m.len()..].iter().cloned());
            if let Some(t) = self.target(&next, hops + 1) {
                if t != *g {
                    return Some(t);
                }
                if self.items.contains(&(t.clone(), name.clone())) {
                    return Some(t);
                }
            }
        }
        Some(m)
    }

    /// The import circles: strongly connected sets of more than one file, each with the
    /// edges inside it.
    pub fn cycles(&self) -> Vec<Vec<Edge>> {
        let nodes: Vec<&PathBuf> = self.files.keys().collect();
        let index: BTreeMap<&PathBuf, usize> = nodes.iter().enumerate().map(|(i, n)| (*n, i)).collect();
        let mut adj = vec![Vec::new(); nodes.len()];
        for e in &self.edges {
            if let (Some(&a), Some(&b)) = (index.get(&e.from), index.get(&e.to)) {
                adj[a].push(b);
            }
        }
        let comp = scc(&adj);
        let mut groups: BTreeMap<usize, Vec<Edge>> = BTreeMap::new();
        for e in &self.edges {
            if let (Some(&a), Some(&b)) = (index.get(&e.from), index.get(&e.to)) {
                if comp[a] == comp[b] {
                    groups.entry(comp[a]).or_default().push(e.clone());
                }
            }
        }
        groups.into_values().collect()
    }
}

/// Tarjan's strongly connected components: the component number of each node.
fn scc(adj: &[Vec<usize>]) -> Vec<usize> {
    struct S<'a> {
        adj: &'a [Vec<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on: Vec<bool>,
        stack: Vec<usize>,
        comp: Vec<usize>,
        next: usize,
        ncomp: usize,
    }
    fn visit(s: &mut S, v: usize) {
        s.index[v] = Some(s.next);
        s.low[v] = s.next;
        s.next += 1;
        s.stack.push(v);
        s.on[v] = true;
        for k in 0..s.adj[v].len() {
            let w = s.adj[v][k];
            match s.index[w] {
                None => {
                    visit(s, w);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(iw) if s.on[w] => s.low[v] = s.low[v].min(iw),
                _ => {}
            }
        }
        if Some(s.low[v]) == s.index[v] {
            while let Some(w) = s.stack.pop() {
                s.on[w] = false;
                s.comp[w] = s.ncomp;
                if w == v {
                    break;
                }
            }
            s.ncomp += 1;
        }
    }
    let n = adj.len();
    let mut s = S {
        adj,
        index: vec![None; n],
        low: vec![0; n],
        on: vec![false; n],
        stack: Vec::new(),
        comp: vec![0; n],
        next: 0,
        ncomp: 0,
    };
    for v in 0..n {
        if s.index[v].is_none() {
            visit(&mut s, v);
        }
    }
    s.comp
}
