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
