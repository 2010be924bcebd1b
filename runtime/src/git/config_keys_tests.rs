//! The allow-list's own checks (URL and worktree shapes, the table's form) and random
//! configs against an oracle built from the table.

use super::*;
use crate::git::config::*;
use proptest::prelude::*;

#[test]
fn url_shapes() {
    for ok in [
        "https://github.com/o/r.git",
        "http://h:8080/r",
        "ssh://git@h:22/r",
        "git://h/r",
        "file:///tmp/r",
        "git@github.com:o/r.git",
        "h:r",
        "/abs/path",
        "./rel",
        "../rel",
        "rel/path with space",
        ".",
        "origin",
    ] {
        assert_eq!(check_url(ok), Ok(()), "{ok}");
    }
}

#[test]
fn worktree_stays_in_the_repository_tree() {
    for (ok, ups) in [("../../../sub", 3), ("../../../../a/b", 4), ("../x", 1), ("../x", 3)] {
        assert_eq!(check_worktree(ok, ups), Ok(()), "{ok} with {ups} steps to the top");
    }
    for (bad, ups) in [("../../home", 1), ("../../../../x", 3), ("../x", 0)] {
        assert!(check_worktree(bad, ups).is_err(), "{bad} leaves a tree {ups} steps up");
    }
    assert!(check(b"[core]\n\tworktree = ../../../home\n").is_err(), "a top-level .git config");
}

#[test]
fn allow_list_is_lowercase_and_unique() {
    for (i, (s, sub, k, _)) in ALLOWED.iter().enumerate() {
        assert_eq!(s.to_ascii_lowercase(), *s);
        assert_eq!(k.to_ascii_lowercase(), *k);
        let dup = ALLOWED[..i].iter().any(|(s2, sub2, k2, _)| (s2, sub2, k2) == (s, sub, k));
        assert!(!dup, "{s}.{k} listed twice");
    }
}

/// The allow-list written out again, independently of `ALLOWED`, as section-qualified
/// lowercase keys (`*` = any subsection).
const ORACLE: &str = "core.repositoryformatversion core.filemode core.bare core.logallrefupdates \
    core.ignorecase core.precomposeunicode core.symlinks core.worktree core.sharedrepository \
    core.checkstat core.trustctime core.autocrlf core.eol core.safecrlf core.quotepath \
    core.compression core.loosecompression core.bigfilethreshold core.abbrev core.untrackedcache \
    core.splitindex core.commitgraph core.multipackindex core.sparsecheckout core.sparsecheckoutcone \
    extensions.objectformat extensions.refstorage extensions.worktreeconfig extensions.preciousobjects \
    extensions.partialclone extensions.noop remote.*.url remote.*.pushurl remote.*.fetch remote.*.push \
    remote.*.tagopt remote.*.prune remote.*.prunetags remote.*.mirror remote.*.promisor \
    remote.*.partialclonefilter remote.*.skipdefaultupdate remote.*.skipfetchall \
    remote.*.followremotehead branch.*.remote branch.*.pushremote branch.*.merge branch.*.rebase \
    branch.*.description user.name user.email init.defaultbranch pull.rebase pull.ff fetch.prune \
    fetch.prunetags fetch.recursesubmodules gc.auto gc.autodetach index.version feature.manyfiles \
    receive.denynonfastforwards submodule.active submodule.*.url submodule.*.path submodule.*.branch \
    submodule.*.active submodule.*.shallow submodule.*.fetchrecursesubmodules submodule.*.ignore \
    submodule.*.update";

/// A deliberately naive reading of each line: `[section ...]` headers (any number, then
/// maybe an entry on the same line) and `key` at the start of what is left.
fn oracle_keys(text: &str) -> Vec<String> {
    let mut keys = Vec::new();
    let mut section = String::new();
    for line in text.split('\n') {
        let mut rest = line.trim_matches(|c: char| c.is_ascii_whitespace());
        while let Some(h) = rest.strip_prefix('[') {
            let Some(end) = h.find(']') else { break };
            let inside = &h[..end];
            let name = inside.split(|c: char| c.is_ascii_whitespace()).next().unwrap_or("");
            section = name.to_ascii_lowercase() + if inside.contains('"') { ".*" } else { "" };
            rest = h[end + 1..].trim_start_matches(|c: char| c.is_ascii_whitespace());
        }
        let key: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '-').collect();
        if rest.starts_with(|c: char| c.is_ascii_alphabetic()) {
            keys.push(format!("{section}.{}", key.to_ascii_lowercase()));
        }
    }
    keys
}

fn oracle_allows(key: &str) -> bool {
    key.starts_with("advice.") && key.matches('.').count() == 1 || ORACLE.split_whitespace().any(|k| k == key)
}

fn config_text() -> impl Strategy<Value = String> {
    let header = prop::sample::select(vec![
        "[core]",
        "[CORE]",
        "[core \"x\"]",
        "[remote \"o\"]",
        "[Remote \"O\"]",
        "[remote]",
        "[alias]",
        "[include]",
        "[includeIf \"gitdir:/\"]",
        "[branch \"m\"]",
        "[submodule \"s\"]",
        "[submodule]",
        "[advice]",
        "[url \"x\"]",
        "[user]",
        "[core.x]",
        "[ core]",
        "[filter \"a\"]",
        "[remote \"a\\\"b\"]",
        "[remote \"a\\q\"]",
    ]);
    let key = prop::sample::select(vec![
        "bare",
        "fsmonitor",
        "FsMonitor",
        "url",
        "uploadpack",
        "path",
        "update",
        "x",
        "FileMode",
        "hooksPath",
        "name",
        "detachedHead",
        "worktree",
        "pager",
        "active",
        "rebase",
        "fs-monitor",
        "helper",
        "sshCommand",
    ]);
    let sep = prop::sample::select(vec![" = ", "=", "\t=\t", " ", "", " =", "\\\n= "]);
    let value = prop::sample::select(vec![
        "true",
        "!evil",
        "\"a;b\"",
        "a ; c",
        "x\\",
        "/tmp/x",
        "ext::sh",
        "0640",
        "",
        "\"",
        "../../s",
        "origin",
        "https://h/r",
        "rebase",
        "a\\nb",
        "\\\"",
        "# c",
    ]);
    let pre = prop::sample::select(vec!["", "\t", "  ", "[core] ", "[alias] ", "[remote \"o\"]", "# "]);
    let entry = (pre, key, sep, value).prop_map(|(p, k, s, v)| format!("{p}{k}{s}{v}"));
    let line = prop_oneof![header.prop_map(String::from), entry, Just(String::new()), Just("; comment".to_string())];
    (prop::collection::vec(line, 0..12), any::<bool>())
        .prop_map(|(lines, crlf)| lines.join(if crlf { "\r\n" } else { "\n" }))
}

proptest! {
    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        let _ = check(&bytes);
    }

    #[test]
    fn random_ascii_never_panics_and_accepts_only_listed_keys(text in "[\\t\\n\\r -~]{0,400}") {
        if check(text.as_bytes()).is_ok() {
            for key in oracle_keys(&text) {
                prop_assert!(oracle_allows(&key), "accepted {key} in {text:?}");
            }
        }
    }

    #[test]
    fn accepted_configs_hold_only_listed_keys(text in config_text()) {
        if check(text.as_bytes()).is_ok() {
            for key in oracle_keys(&text) {
                prop_assert!(oracle_allows(&key), "accepted {key} in {text:?}");
            }
        }
    }
}
