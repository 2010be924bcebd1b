//! The README a newcomer reads and the docs behind it (issue 37): the README stays short
//! enough to read in ten minutes, and every link in it and in `docs/` leads somewhere:
//! a file of the repository, and, after a `#`, a heading of that file (GitHub's anchors).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const README_MAX_LINES: usize = 400;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// The markdown files users read: the README and everything in `docs/`.
fn documents() -> Vec<PathBuf> {
    let root = workspace();
    let mut out = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/ exists")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    out.extend(docs);
    out
}

/// GitHub's anchor for a heading: lowercase, punctuation other than `-` and `_` dropped,
/// spaces to `-`; repeats get `-1`, `-2`, ...
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut in_code = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code || !line.starts_with('#') {
            continue;
        }
        let title = line.trim_start_matches('#').trim();
        let mut slug = String::new();
        for c in title.chars().flat_map(char::to_lowercase) {
            if c.is_alphanumeric() || c == '-' || c == '_' {
                slug.push(c);
            } else if c == ' ' {
                slug.push('-');
            }
        }
        let mut candidate = slug.clone();
        let mut n = 0;
        while seen.contains(&candidate) {
            n += 1;
            candidate = format!("{slug}-{n}");
        }
        seen.insert(candidate);
    }
    seen
}

/// Every `[text](target)` outside code blocks and inline code, with its line number.
fn links(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut in_code = false;
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            continue;
        }
        // drop inline code spans
        let mut plain = String::new();
        let mut ticks = false;
        for c in line.chars() {
            if c == '`' {
                ticks = !ticks;
            } else if !ticks {
                plain.push(c);
            }
        }
        let mut rest = plain.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            out.push((i + 1, after[..end].to_string()));
            rest = &after[end..];
        }
    }
    out
}

#[test]
fn every_link_and_anchor_resolves() {
    let root = workspace();
    let mut broken = Vec::new();
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).unwrap();
        for (line, target) in links(&text) {
            if target.starts_with("http://") || target.starts_with("https://") || target.starts_with("mailto:") {
                continue;
            }
            let (file, anchor) = match target.split_once('#') {
                Some((f, a)) => (f, Some(a)),
                None => (target.as_str(), None),
            };
            let path = if file.is_empty() { doc.clone() } else { doc.parent().unwrap().join(file) };
            let shown = format!("{}:{line}: {target}", doc.strip_prefix(&root).unwrap().display());
            if !path.exists() {
                broken.push(format!("{shown}: no such file"));
                continue;
            }
            if let Some(a) = anchor {
                let Ok(target_text) = std::fs::read_to_string(&path) else {
                    broken.push(format!("{shown}: an anchor into something that is not a text file"));
                    continue;
                };
                if !anchors(&target_text).contains(a) {
                    broken.push(format!("{shown}: no heading with that anchor"));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n  {}", broken.join("\n  "));
}

#[test]
fn the_readme_is_short_and_every_doc_has_a_table_of_contents() {
    let root = workspace();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let n = readme.lines().count();
    assert!(n < README_MAX_LINES, "README.md has {n} lines; keep it under {README_MAX_LINES} (move detail to docs/)");
    for doc in documents().into_iter().skip(1) {
        let text = std::fs::read_to_string(&doc).unwrap();
        let sections = text.lines().filter(|l| l.starts_with("## ")).count();
        let listed = links(&text).iter().filter(|(_, t)| t.starts_with('#')).count();
        assert!(
            sections < 3 || listed >= sections,
            "{}: {sections} sections but a table of contents of {listed} links",
            doc.display()
        );
    }
}

#[test]
fn anchors_follow_githubs_rules() {
    let a = anchors("# The egress proxy: `srt-proxy`\n## Local servers: test suites\n## Notes\n## Notes\n```\n# not a heading\n```\n");
    assert!(a.contains("the-egress-proxy-srt-proxy"), "{a:?}");
    assert!(a.contains("local-servers-test-suites"), "{a:?}");
    assert!(a.contains("notes") && a.contains("notes-1"), "{a:?}");
    assert!(!a.contains("not-a-heading"));
    assert_eq!(links("see [a](b.md#c) and `[x](y)`\n```\n[z](w)\n```"), vec![(1, "b.md#c".to_string())]);
}

/// The measured figures a text states: a number with a unit of time or a ratio (`+3.1 ms`,
/// `100 s`, `25 min`, `1.05×`), outside code blocks and inline code.
fn figures(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut in_code = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            continue;
        }
        let plain: String = line.split('`').step_by(2).collect::<Vec<_>>().join(" ");
        let words: Vec<&str> = plain.split_whitespace().collect();
        for (i, w) in words.iter().enumerate() {
            let w = w.trim_start_matches(['(', '+', '~', '*']).trim_end_matches([',', ';', ')', '.', ':', '*']);
            let (num, unit) = match w.strip_suffix('×') {
                Some(n) => (n, "×"),
                None => match words.get(i + 1).map(|u| u.trim_end_matches([',', ';', ')', '.', ':', '*'])) {
                    Some(u @ ("ms" | "s" | "min")) => (w, u),
                    _ => continue,
                },
            };
            let numeric = !num.is_empty() && num.chars().all(|c| c.is_ascii_digit() || c == '.');
            if numeric && num.chars().next().is_some_and(|c| c.is_ascii_digit()) {
                out.insert(if unit == "×" { format!("{num}×") } else { format!("{num} {unit}") });
            }
        }
    }
    out
}

#[test]
fn every_figure_the_readme_states_is_in_a_performance_table() {
    let root = workspace();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let perf = std::fs::read_to_string(root.join("docs/performance.md")).unwrap();
    let tables: String = perf.lines().filter(|l| l.starts_with('|')).collect::<Vec<_>>().join("\n");
    let in_tables = figures(&tables.replace('|', " "));
    let stated = figures(&readme);
    assert!(!stated.is_empty(), "the README states no figure: is figures() broken?");
    let missing: Vec<&String> = stated.difference(&in_tables).collect();
    assert!(missing.is_empty(), "README figures missing from docs/performance.md's tables: {missing:?}");
}

#[test]
fn figures_are_numbers_with_units() {
    let f = figures("starts **+3.1 ms** later; (100 s), 25 min, 1.05× `9 ms`\n```\n7 ms\n```\nv0.0.83 x 3 files");
    let want: BTreeSet<String> = ["3.1 ms", "100 s", "25 min", "1.05×"].iter().map(|s| s.to_string()).collect();
    assert_eq!(f, want);
}
