//! What one source file says about modules: the modules it declares, the items it defines,
//! the paths it names (in `use` trees and in code) and what it re-exports. Paths are kept
//! as written, with the inline module they sit in; `graph` resolves them.

use super::lex::{lex, Tok, Token};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModDecl {
    /// The inline modules (`mod a { ... }`) around the declaration, outermost first.
    pub scope: Vec<String>,
    pub name: String,
    pub path_attr: Option<String>,
    /// `#[cfg(test)]`: its code is not followed.
    pub test: bool,
    /// `mod x { ... }` rather than `mod x;`.
    pub inline: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathRef {
    pub scope: Vec<String>,
    pub segs: Vec<String>,
    pub line: usize,
    /// A leaf of a `pub use` tree: the name it binds, `*` for a glob.
    pub reexport: Option<String>,
}

#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Parsed {
    pub mods: Vec<ModDecl>,
    pub refs: Vec<PathRef>,
    /// Items defined at a module's top level: (inline scope, name).
    pub items: Vec<(Vec<String>, String)>,
}

const ITEM_KEYWORDS: &[&str] = &["fn", "struct", "enum", "const", "static", "trait", "type", "union"];

struct Walker {
    toks: Vec<Token>,
    i: usize,
    out: Parsed,
    /// (brace depth inside the module, module name)
    scopes: Vec<(usize, String)>,
    depth: usize,
}

pub fn parse(src: &str) -> Parsed {
    let mut w = Walker { toks: lex(src), i: 0, out: Parsed::default(), scopes: Vec::new(), depth: 0 };
    w.run();
    w.out
}

impl Walker {
    fn tok(&self, k: usize) -> Option<&Tok> {
        self.toks.get(k).map(|t| &t.tok)
    }
    fn ident(&self, k: usize) -> Option<&str> {
        match self.tok(k) {
            Some(Tok::Ident(s)) => Some(s),
            _ => None,
        }
    }
    fn punct(&self, k: usize, c: char) -> bool {
        self.tok(k) == Some(&Tok::Punct(c))
    }
    fn line(&self, k: usize) -> usize {
        self.toks.get(k).map_or(0, |t| t.line)
    }
    fn scope(&self) -> Vec<String> {
        self.scopes.iter().map(|(_, n)| n.clone()).collect()
    }
    /// Index after the group opened at `k` (`(`, `[` or `{`).
    fn skip_group(&self, k: usize) -> usize {
        let mut d = 0usize;
        let mut j = k;
        while j < self.toks.len() {
            match self.tok(j) {
                Some(Tok::Punct('(' | '[' | '{')) => d += 1,
                Some(Tok::Punct(')' | ']' | '}')) => {
                    d = d.saturating_sub(1);
                    if d == 0 {
                        return j + 1;
                    }
                }
                _ => {}
            }
            j += 1;
        }
        j
    }

    fn run(&mut self) {
        let mut test = false;
        let mut path_attr = None;
        let mut public = false;
        while self.i < self.toks.len() {
            let i = self.i;
            match self.tok(i).cloned() {
                Some(Tok::Punct('#')) => {
                    let open = if self.punct(i + 1, '!') { i + 2 } else { i + 1 };
                    if !self.punct(open, '[') {
                        self.i += 1;
                        continue;
                    }
                    let end = self.skip_group(open);
                    let body: Vec<Tok> =
                        self.toks[open + 1..end.saturating_sub(1)].iter().map(|t| t.tok.clone()).collect();
                    let is = |k: usize, s: &str| body.get(k) == Some(&Tok::Ident(s.to_string()));
                    if is(0, "cfg") {
                        let names_test = body.iter().any(|t| *t == Tok::Ident("test".into()));
                        let negated = body.iter().any(|t| *t == Tok::Ident("not".into()));
                        test |= names_test && !negated;
                    }
                    if is(0, "path") {
                        if let Some(Tok::Str(p)) = body.get(2) {
                            path_attr = Some(p.clone());
                        }
                    }
                    self.i = end;
                    continue;
                }
                Some(Tok::Ident(w)) if w == "pub" => {
                    public = true;
                    self.i = if self.punct(i + 1, '(') { self.skip_group(i + 1) } else { i + 1 };
                    continue;
                }
                Some(Tok::Ident(w)) if w == "mod" => {
                    if let Some(name) = self.ident(i + 1).map(str::to_string) {
                        let inline = self.punct(i + 2, '{');
                        let scope = self.scope();
                        self.out.mods.push(ModDecl {
                            scope,
                            name: name.clone(),
                            path_attr: path_attr.take(),
                            test,
                            inline,
                        });
                        if inline && test {
                            self.i = self.skip_group(i + 2);
                        } else if inline {
                            self.depth += 1;
                            self.scopes.push((self.depth, name));
                            self.i = i + 3;
                        } else {
                            self.i = i + 2;
                        }
                        test = false;
                        public = false;
                        continue;
                    }
                }
                Some(Tok::Ident(w)) if w == "use" => {
                    let scope = self.scope();
                    let line = self.line(i);
                    let mut leaves = Vec::new();
                    self.i = i + 1;
                    if self.tok(self.i) == Some(&Tok::Sep) {
                        // `use ::name`: always another crate.
                        self.i += 1;
                        self.use_tree(Vec::new(), &mut Vec::new());
                    } else {
                        self.use_tree(Vec::new(), &mut leaves);
                    }
                    for (segs, bound) in leaves {
                        let reexport = public.then_some(bound);
                        self.out.refs.push(PathRef { scope: scope.clone(), segs, line, reexport });
                    }
                    test = false;
                    public = false;
                    path_attr = None;
                    continue;
                }
                Some(Tok::Ident(w)) if ITEM_KEYWORDS.contains(&w.as_str()) || w == "macro_rules" => {
                    let at_top = self.depth == self.scopes.last().map_or(0, |s| s.0);
                    let name_at = if w == "macro_rules" { i + 2 } else { i + 1 };
                    if at_top {
                        if let Some(name) = self.ident(name_at) {
                            if name != "fn" {
                                self.out.items.push((self.scope(), name.to_string()));
                            }
                        }
                    }
                }
                Some(Tok::Ident(w)) if self.tok(i + 1) == Some(&Tok::Sep) => {
                    let after_sep = i > 0 && self.tok(i - 1) == Some(&Tok::Sep);
                    let after_dot = i > 0 && self.punct(i - 1, '.');
                    if !after_sep && !after_dot && w != "Self" {
                        let mut segs = vec![w];
                        let mut j = i + 1;
                        while self.tok(j) == Some(&Tok::Sep) {
                            match self.ident(j + 1) {
                                Some(s) => segs.push(s.to_string()),
                                None => break,
                            }
                            j += 2;
                        }
                        let line = self.line(i);
                        self.out.refs.push(PathRef { scope: self.scope(), segs, line, reexport: None });
                        self.i = j;
                        continue;
                    }
                }
                Some(Tok::Punct('{')) => self.depth += 1,
                Some(Tok::Punct('}')) => {
                    if self.scopes.last().is_some_and(|s| s.0 == self.depth) {
                        self.scopes.pop();
                    }
                    self.depth = self.depth.saturating_sub(1);
                }
                _ => {}
            }
            if matches!(self.tok(i), Some(Tok::Punct(';' | '{' | '}'))) {
                test = false;
                public = false;
                path_attr = None;
            }
            self.i = i + 1;
        }
    }

    /// Parses a use tree from `self.i`; pushes (full path, name bound) per leaf. Stops after
    /// the tree (at `,`, `}` or `;`, which it consumes only for `;`).
    fn use_tree(&mut self, prefix: Vec<String>, leaves: &mut Vec<(Vec<String>, String)>) {
        let mut path = prefix;
        loop {
            match self.tok(self.i).cloned() {
                Some(Tok::Punct('{')) => {
                    self.i += 1;
                    loop {
                        match self.tok(self.i) {
                            Some(Tok::Punct('}')) => {
                                self.i += 1;
                                break;
                            }
                            Some(Tok::Punct(',')) => self.i += 1,
                            None => return,
                            _ => {
                                let before = self.i;
                                self.use_tree(path.clone(), leaves);
                                if self.i == before {
                                    self.i += 1;
                                }
                            }
                        }
                    }
                    break;
                }
                Some(Tok::Punct('*')) => {
                    self.i += 1;
                    leaves.push((path.clone(), "*".into()));
                    break;
                }
                Some(Tok::Ident(s)) => {
                    self.i += 1;
                    let bound = if s == "self" { path.last().cloned().unwrap_or_default() } else { s.clone() };
                    if s != "self" {
                        path.push(s);
                    }
                    if self.tok(self.i) == Some(&Tok::Sep) {
                        self.i += 1;
                        continue;
                    }
                    let mut bound = bound;
                    if self.ident(self.i) == Some("as") {
                        bound = self.ident(self.i + 1).unwrap_or("_").to_string();
                        self.i += 2;
                    }
                    leaves.push((path.clone(), bound));
                    break;
                }
                _ => break,
            }
        }
        if self.punct(self.i, ';') {
            self.i += 1;
        }
    }
}
