// whole: most of this file is verbatim git configs (as git and its users write them) that the
// parser must accept; the tests are short, the data is what makes it long.
use super::*;
use crate::git::config_keys::*;

fn refusal(text: &str) -> Refusal {
    match check(text.as_bytes()) {
        Ok(()) => panic!("accepted, but should be refused:\n{text}"),
        Err(r) => r,
    }
}

fn accepts(text: &str) {
    if let Err(r) = check(text.as_bytes()) {
        panic!("refused ({r}):\n{text}");
    }
}

/// Configs written by `/usr/local/bin/git` (2.47.3) and `/usr/bin/git` (2.39.5), copied verbatim.
const REAL: &[(&str, &str)] = &[
    (
        "2.47.3 init",
        r#"[core]
	repositoryformatversion = 0
	filemode = true
	bare = false
	logallrefupdates = true
"#,
    ),
    (
        "2.47.3 init --bare",
        r#"[core]
	repositoryformatversion = 0
	filemode = true
	bare = true
"#,
    ),
    (
        "2.47.3 clone + remote add + user + branch -u + submodule add + worktreeConfig",
        r#"[core]
	repositoryformatversion = 0
	filemode = true
	bare = false
	logallrefupdates = true
[remote "origin"]
	url = /tmp/gitcfg-gen/2.47.3/plain
	fetch = +refs/heads/*:refs/remotes/origin/*
[branch "master"]
	remote = origin
	merge = refs/heads/master
[remote "up"]
	url = https://example.com/x.git
	fetch = +refs/heads/*:refs/remotes/up/*
[user]
	email = me@example.com
	name = Me Too
[branch "feat"]
	remote = origin
	merge = refs/heads/master
[submodule "sub"]
	url = /tmp/gitcfg-gen/2.47.3/plain
	active = true
[extensions]
	worktreeConfig = true
"#,
    ),
    (
        "2.47.3 clone --bare",
        r#"[core]
	repositoryformatversion = 0
	filemode = true
	bare = true
[remote "origin"]
	url = /tmp/gitcfg-gen/2.47.3/plain
"#,
    ),
    (
        "2.47.3 clone --mirror",
        r#"[core]
	repositoryformatversion = 0
	filemode = true
	bare = true
[remote "origin"]
	url = /tmp/gitcfg-gen/2.47.3/plain
	fetch = +refs/*:refs/*
	mirror = true
"#,
    ),
    (
        "2.47.3 submodule git dir (.git/modules/sub/config)",
        r#"[core]
	repositoryformatversion = 0
	filemode = true
	bare = false
	logallrefupdates = true
	worktree = ../../../sub
[remote "origin"]
	url = /tmp/gitcfg-gen/2.47.3/plain
	fetch = +refs/heads/*:refs/remotes/origin/*
[branch "master"]
	remote = origin
	merge = refs/heads/master
"#,
    ),
    (
        "2.47.3 config --worktree core.sparseCheckout",
        r#"[core]
	sparseCheckout = true
"#,
    ),
    (
        "2.47.3 clone --recurse-submodules",
        r#"[core]
	repositoryformatversion = 0
	filemode = true
	bare = false
	logallrefupdates = true
[submodule]
	active = .
[remote "origin"]
	url = /tmp/gitcfg-gen/2.47.3/clone
	fetch = +refs/heads/*:refs/remotes/origin/*
[branch "feat"]
	remote = origin
	merge = refs/heads/feat
[submodule "sub"]
	url = /tmp/gitcfg-gen/2.47.3/plain
"#,
    ),
    (
        "2.47.3 init --object-format=sha256",
        r#"[core]
	repositoryformatversion = 1
	filemode = true
	bare = false
	logallrefupdates = true
[extensions]
	objectformat = sha256
"#,
    ),
    (
        "2.47.3 init --ref-format=reftable",
        r#"[core]
	repositoryformatversion = 1
	filemode = true
	bare = false
	logallrefupdates = true
[extensions]
	refstorage = reftable
"#,
    ),
    (
        "2.47.3 init --shared=all",
        r#"[core]
	repositoryformatversion = 0
	filemode = true
	bare = false
	logallrefupdates = true
	sharedrepository = 2
[receive]
	denyNonFastforwards = true
"#,
    ),
    (
        "2.47.3 clone --filter=blob:none",
        r#"[core]
	repositoryformatversion = 1
	filemode = true
	bare = false
	logallrefupdates = true
[remote "origin"]
	url = file:///tmp/gitcfg-gen/more-2.47.3/src
	fetch = +refs/heads/*:refs/remotes/origin/*
	promisor = true
	partialclonefilter = blob:none
[branch "master"]
	remote = origin
	merge = refs/heads/master
"#,
    ),
    (
        "2.47.3 sparse-checkout set --cone (config.worktree)",
        r#"[core]
	sparseCheckout = true
	sparseCheckoutCone = true
"#,
    ),
    (
        "2.47.3 remotes, mirrors, pushurl, description, pull, init",
        r#"[core]
	repositoryformatversion = 0
	filemode = true
	bare = false
	logallrefupdates = true
	autocrlf = input
[remote "origin"]
	url = /tmp/gitcfg-gen/more-2.47.3/src
	fetch = +refs/heads/*:refs/remotes/origin/*
	pushurl = ssh://git@example.com/x.git
[branch "master"]
	remote = origin
	merge = refs/heads/master
	rebase = true
[branch "t2"]
	remote = origin
	merge = refs/heads/other
	pushRemote = pm
	description = my desc\nline2 \"q\"\n
[remote "pm"]
	url = ../src
	mirror = true
[remote "fm"]
	url = ../src
	fetch = +refs/*:refs/*
[remote "tb"]
	url = git@github.com:o/r.git
	fetch = +refs/heads/other:refs/remotes/tb/other
	tagOpt = --no-tags
[pull]
	rebase = false
[init]
	defaultBranch = main
[branch "wt2"]
	remote = fm
	merge = refs/heads/t2
"#,
    ),
    (
        "2.39.5 init",
        r#"[core]
	repositoryformatversion = 0
	filemode = true
	bare = false
	logallrefupdates = true
"#,
    ),
    (
        "2.39.5 init --bare",
        r#"[core]
	repositoryformatversion = 0
	filemode = true
	bare = true
"#,
    ),
    (
        "2.39.5 clone + remote add + user + branch -u + submodule add + worktreeConfig",
        r#"[core]
	repositoryformatversion = 0
	filemode = true
	bare = false
	logallrefupdates = true
[remote "origin"]
	url = /tmp/gitcfg-gen/2.39.5/plain
	fetch = +refs/heads/*:refs/remotes/origin/*
[branch "master"]
	remote = origin
	merge = refs/heads/master
[remote "up"]
	url = https://example.com/x.git
	fetch = +refs/heads/*:refs/remotes/up/*
[user]
	email = me@example.com
	name = Me Too
[branch "feat"]
	remote = origin
	merge = refs/heads/master
[submodule "sub"]
	url = /tmp/gitcfg-gen/2.39.5/plain
	active = true
[extensions]
	worktreeConfig = true
"#,
    ),
    (
        "2.39.5 clone --bare",
        r#"[core]
	repositoryformatversion = 0
	filemode = true
	bare = true
[remote "origin"]
	url = /tmp/gitcfg-gen/2.39.5/plain
"#,
    ),
    (
        "2.39.5 clone --mirror",
        r#"[core]
	repositoryformatversion = 0
	filemode = true
	bare = true
[remote "origin"]
	url = /tmp/gitcfg-gen/2.39.5/plain
	fetch = +refs/*:refs/*
	mirror = true
"#,
    ),
    (
        "2.39.5 submodule git dir (.git/modules/sub/config)",
        r#"[core]
	repositoryformatversion = 0
	filemode = true
	bare = false
	logallrefupdates = true
	worktree = ../../../sub
[remote "origin"]
	url = /tmp/gitcfg-gen/2.39.5/plain
	fetch = +refs/heads/*:refs/remotes/origin/*
[branch "master"]
	remote = origin
	merge = refs/heads/master
"#,
    ),
    (
        "2.39.5 config --worktree core.sparseCheckout",
        r#"[core]
	sparseCheckout = true
"#,
    ),
    (
        "2.39.5 clone --recurse-submodules",
        r#"[core]
	repositoryformatversion = 0
	filemode = true
	bare = false
	logallrefupdates = true
[submodule]
	active = .
[remote "origin"]
	url = /tmp/gitcfg-gen/2.39.5/clone
	fetch = +refs/heads/*:refs/remotes/origin/*
[branch "feat"]
	remote = origin
	merge = refs/heads/feat
[submodule "sub"]
	url = /tmp/gitcfg-gen/2.39.5/plain
"#,
    ),
    (
        "2.39.5 init --object-format=sha256",
        r#"[core]
	repositoryformatversion = 1
	filemode = true
	bare = false
	logallrefupdates = true
[extensions]
	objectformat = sha256
"#,
    ),
    (
        "2.39.5 init --shared=all",
        r#"[core]
	repositoryformatversion = 0
	filemode = true
	bare = false
	logallrefupdates = true
	sharedrepository = 2
[receive]
	denyNonFastforwards = true
"#,
    ),
    (
        "2.39.5 clone --filter=blob:none",
        r#"[core]
	repositoryformatversion = 1
	filemode = true
	bare = false
	logallrefupdates = true
[remote "origin"]
	url = file:///tmp/gitcfg-gen/more-2.39.5/src
	fetch = +refs/heads/*:refs/remotes/origin/*
	promisor = true
	partialclonefilter = blob:none
[branch "master"]
	remote = origin
	merge = refs/heads/master
"#,
    ),
    (
        "2.39.5 sparse-checkout set --cone (config.worktree)",
        r#"[core]
	sparseCheckout = true
	sparseCheckoutCone = true
"#,
    ),
    (
        "2.39.5 remotes, mirrors, pushurl, description, pull, init",
        r#"[core]
	repositoryformatversion = 0
	filemode = true
	bare = false
	logallrefupdates = true
	autocrlf = input
[remote "origin"]
	url = /tmp/gitcfg-gen/more-2.39.5/src
	fetch = +refs/heads/*:refs/remotes/origin/*
	pushurl = ssh://git@example.com/x.git
[branch "master"]
	remote = origin
	merge = refs/heads/master
	rebase = true
[branch "t2"]
	remote = origin
	merge = refs/heads/other
	pushRemote = pm
	description = my desc\nline2 \"q\"\n
[remote "pm"]
	url = ../src
	mirror = true
[remote "fm"]
	url = ../src
	fetch = +refs/*:refs/*
[remote "tb"]
	url = git@github.com:o/r.git
	fetch = +refs/heads/other:refs/remotes/tb/other
	tagOpt = --no-tags
[pull]
	rebase = false
[init]
	defaultBranch = main
[branch "wt2"]
	remote = fm
	merge = refs/heads/t2
"#,
    ),
    (
        "2.47.3 init --shared=group",
        r#"[core]
	repositoryformatversion = 0
	filemode = true
	bare = false
	logallrefupdates = true
	sharedrepository = 1
[receive]
	denyNonFastforwards = true
"#,
    ),
    (
        "2.47.3 init --shared=0640",
        r#"[core]
	repositoryformatversion = 0
	filemode = true
	bare = false
	logallrefupdates = true
	sharedrepository = 0640
[receive]
	denyNonFastforwards = true
"#,
    ),
    (
        "2.47.3 clone --single-branch -b other",
        r#"[core]
	repositoryformatversion = 0
	filemode = true
	bare = false
	logallrefupdates = true
[remote "origin"]
	url = /tmp/gitcfg-gen/more-2.47.3/src
	fetch = +refs/heads/other:refs/remotes/origin/other
[branch "other"]
	remote = origin
	merge = refs/heads/other
"#,
    ),
    (
        "2.47.3 clone -o up --no-tags",
        r#"[core]
	repositoryformatversion = 0
	filemode = true
	bare = false
	logallrefupdates = true
[remote "up"]
	url = /tmp/gitcfg-gen/more-2.47.3/src
	tagOpt = --no-tags
	fetch = +refs/heads/*:refs/remotes/up/*
[branch "master"]
	remote = up
	merge = refs/heads/master
"#,
    ),
];

#[test]
fn real_configs_pass_also_with_crlf_and_bom() {
    for (name, text) in REAL {
        // the submodule git dirs among them live in .git/modules/sub: three steps up
        let ups = if name.contains(".git/modules/sub") { 3 } else { 1 };
        assert!(check_at(text.as_bytes(), ups).is_ok(), "{name}: {:?}", check_at(text.as_bytes(), ups));
        let crlf = text.replace('\n', "\r\n");
        assert!(check_at(crlf.as_bytes(), ups).is_ok(), "{name} with CRLF");
        let bom = format!("\u{feff}{text}");
        assert!(check_at(bom.as_bytes(), ups).is_ok(), "{name} with BOM");
    }
}

#[test]
fn hand_written_configs_pass() {
    // What `git init` writes on macOS (case-insensitive APFS), from git's own init code.
    accepts("[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n\tignorecase = true\n\tprecomposeunicode = true\n");
    // Comments, blank lines, a header sharing a line with an entry or a comment, no-value booleans.
    accepts("# top\n; also\n\n[core] bare = false\n[user] # who\n\tname = \"Ann  O'Nym\" ; trailing\n[core]\n\tbare\n");
    accepts("[Remote \"Origin\"]\n\tURL = git@github.com:o/r.git\n\tFetch = +refs/heads/*:refs/remotes/Origin/*\n");
    accepts("[remote \"a\\\"b\\\\c\"]\n\turl = https://example.com/x\n");
    // git reads this as user.name = "a [core] fsmonitor = x": a value runs to the end of its line.
    accepts("[user] name = a [core] fsmonitor = x");
    accepts("[advice]\n\tdetachedHead = false\n\tskippedCherryPicks = off\n");
    accepts("[submodule \"lib/x\"]\n\tpath = lib/x\n\turl = ../x.git\n\tupdate = rebase\n\tbranch = .\n");
    accepts("[core]\n\tsharedrepository = 0640\n\tcompression = -1\n\tbigFileThreshold = 512m\n\tabbrev = auto\n");
    accepts("[branch \"m\"]\n\tremote = .\n\tmerge = refs/heads/main\n\trebase = merges\n");
    accepts("");
    accepts("\n\n   \n\t\n");
}

#[test]
fn values_decode_as_git_decodes_them() {
    let cases = [
        (" a ", "a"),
        ("\"a;b\"", "a;b"),
        ("a ; comment", "a"),
        ("a # comment \"", "a"),
        ("  a  b  ", "a  b"),
        ("\" a \"  ", " a "),
        ("a\" \"", "a "),
        ("x\\\"y\\\\z", "x\"y\\z"),
        ("a\\tb\\nc", "a\tb\nc"),
        ("ext:\"\":sh", "ext::sh"),
        ("", ""),
        ("\"\"", ""),
    ];
    for (raw, want) in cases {
        assert_eq!(parse_value(raw).as_deref(), Ok(want), "{raw:?}");
    }
    for raw in ["a\\", "\"a", "a\\q", "\"a;b"] {
        assert!(parse_value(raw).is_err(), "{raw:?}");
    }
}

/// (config, line the refusal must name)
const REFUSED: &[(&str, usize)] = &[
    // Keys that run programs or read files, in every section the brief lists.
    ("[core]\n\tfsmonitor = /tmp/x", 2),
    ("[core]\n\tfsmonitor = true", 2),
    ("[CORE]\n\tFSMONITOR = x", 2),
    ("[Core]\n\tFsMonitor = x", 2),
    ("[core]\n\thooksPath = /tmp/h", 2),
    ("[core]\n\tpager = evil", 2),
    ("[core]\n\teditor = evil", 2),
    ("[core]\n\taskpass = evil", 2),
    ("[core]\n\tsshCommand = evil", 2),
    ("[core]\n\tgitProxy = evil", 2),
    ("[core]\n\talternateRefsCommand = evil", 2),
    ("[core]\n\texcludesFile = /tmp/x", 2),
    ("[core]\n\tattributesFile = /tmp/x", 2),
    ("[core]\n\tprotectNTFS = false", 2),
    ("[alias]\n\tx = !evil", 2),
    ("[alias]\n\tst = status", 2),
    ("[filter \"lfs\"]\n\tclean = evil", 2),
    ("[filter \"lfs\"]\n\tprocess = evil", 2),
    ("[diff \"x\"]\n\ttextconv = evil", 2),
    ("[diff \"x\"]\n\tcommand = evil", 2),
    ("[diff]\n\texternal = evil", 2),
    ("[merge \"x\"]\n\tdriver = evil", 2),
    ("[credential]\n\thelper = evil", 2),
    ("[credential \"https://x\"]\n\thelper = evil", 2),
    ("[gpg]\n\tprogram = evil", 2),
    ("[sequence]\n\teditor = evil", 2),
    ("[pager]\n\tlog = evil", 2),
    ("[remote \"origin\"]\n\tuploadpack = evil", 2),
    ("[remote \"origin\"]\n\treceivepack = evil", 2),
    ("[remote \"origin\"]\n\tvcs = evil", 2),
    ("[remote \"origin\"]\n\tproxy = http://evil", 2),
    ("[url \"ext::sh -c evil #\"]\n\tinsteadOf = https://", 2),
    ("[include]\n\tpath = /tmp/x", 2),
    ("[includeIf \"gitdir:/\"]\n\tpath = /tmp/x", 2),
    ("[protocol]\n\tallow = always", 2),
    ("[protocol \"ext\"]\n\tallow = always", 2),
    ("[safe]\n\tdirectory = *", 2),
    ("[uploadpack]\n\tpackObjectsHook = evil", 2),
    ("[receive]\n\tprocReceiveRefs = refs", 2),
    ("[transfer]\n\tfsckObjects = false", 2),
    ("[maintenance]\n\tauto = false", 2),
    ("[lfs]\n\turl = https://x", 2),
    ("[trace2]\n\teventTarget = /tmp/x", 2),
    ("[http]\n\tproxy = http://x", 2),
    ("[commit]\n\ttemplate = /tmp/x", 2),
    ("[submodule \"x\"]\n\tupdate = !evil", 2),
    ("[submodule \"x\"]\n\tupdate = \" !evil\"", 2),
    ("[submodule \"x\"]\n\tupdate = evil", 2),
    ("[user]\n\tname = !evil", 2),
    // Subsections where the section has none, and the reverse.
    ("[core \"x\"]\n\tbare = true", 2),
    ("[core \"\"]\n\tbare = true", 2),
    ("[remote]\n\turl = https://x", 2),
    ("[user \"x\"]\n\tname = y", 2),
    ("[branch \"\"]\n\tremote = origin", 2),
    ("[branch \"-x\"]\n\tremote = origin", 2),
    // Header syntax srt does not model, or git rejects.
    ("[core.x]\n\tbare = true", 1),
    ("[remote.origin]\n\turl = https://x", 1),
    ("[ core]", 1),
    ("[core ]", 1),
    ("[core", 1),
    ("[]", 1),
    ("[ \"x\"]\n\tbare = true", 1),
    ("[remote\"o\"]", 1),
    ("[remote \"o\" ]", 1),
    ("[remote \"o\"", 1),
    ("[remote \"o\\x\"]", 1),
    ("[remote \"o\\", 1),
    ("[core] junk", 1),
    ("[core] = x", 1),
    ("[core] fsmonitor = x", 1),
    ("[core]fsmonitor=x", 1),
    // Whitespace and line-ending tricks.
    ("[core]\n\tfsmonitor\t=\tx", 2),
    ("  [core]  \n  fsmonitor = x", 2),
    ("[core]\r\n\tfsmonitor = x\r\n", 2),
    ("[core]\n\tbare\r= true", 2),
    ("[core]\rfsmonitor = x", 1),
    ("[core]\n\tbare = false fsmonitor = x", 2),
    ("[core]\n\tbare # no equals sign", 2),
    ("[core]\n\t-bare = true", 2),
    ("[core]\n\tcore.fsmonitor = x", 2),
    ("[core]\n\tfs\u{feff}monitor = x", 2),
    ("[core]\n\u{feff}[user]", 2),
    // Continuations, including one splitting a key.
    ("[core]\n\tbare = true\\\n", 2),
    ("[core]\n\tbare = true \\", 2),
    ("[core]\n\tfsmon\\\nitor = x", 2),
    ("[user]\n\tname = a\\\n[core] fsmonitor = x", 2),
    // Escapes and quotes.
    ("[user]\n\tname = a\\q", 2),
    ("[user]\n\tname = \"a", 2),
    ("[user]\n\tname = a\"b", 2),
    ("[user]\n\tname = a\\bb", 2),
    ("[user]\n\tname = a\\nb", 2),
    // Comments do not hide anything: decoded values are what is checked.
    ("[remote \"o\"]\n\turl = \"ext::sh -c evil\" ; fine?", 2),
    ("[remote \"o\"]\n\turl = ext:\"\":sh -c evil", 2),
    ("[remote \"o\"]\n\turl = \" -oProxyCommand=evil\"", 2),
    // URLs.
    ("[remote \"o\"]\n\turl = ext::sh -c evil", 2),
    ("[remote \"o\"]\n\turl = -oProxyCommand=evil", 2),
    ("[remote \"o\"]\n\turl = ssh://-oProxyCommand=evil/x", 2),
    ("[remote \"o\"]\n\turl = ssh://user@-oProxyCommand=evil/x", 2),
    ("[remote \"o\"]\n\turl = ssh://host:-p/x", 2),
    ("[remote \"o\"]\n\turl = ssh://ho st/x", 2),
    ("[remote \"o\"]\n\turl = ssh://%2doProxyCommand=evil/x", 2),
    ("[remote \"o\"]\n\turl = -host:path", 2),
    ("[remote \"o\"]\n\turl = host:-path", 2),
    ("[remote \"o\"]\n\turl = user@-host:path", 2),
    ("[remote \"o\"]\n\turl = :path", 2),
    ("[remote \"o\"]\n\turl = fd::17", 2),
    ("[remote \"o\"]\n\turl = foo://x", 2),
    ("[remote \"o\"]\n\turl = HTTPS://x", 2),
    ("[remote \"o\"]\n\turl = ftp://x", 2),
    ("[remote \"o\"]\n\turl = [::1]:x", 2),
    ("[remote \"o\"]\n\turl =", 2),
    ("[remote \"o\"]\n\turl = \"\"", 2),
    ("[remote \"o\"]\n\turl", 2),
    ("[remote \"o\"]\n\tpushurl = ext::sh", 2),
    ("[submodule \"s\"]\n\turl = ext::sh", 2),
    ("[branch \"m\"]\n\tremote = ext::sh -c evil", 2),
    ("[branch \"m\"]\n\tpushRemote = -oProxyCommand=x", 2),
    ("[extensions]\n\tpartialClone = ext::sh", 2),
    // Paths.
    ("[core]\n\tworktree = /home/user", 2),
    ("[core]\n\tworktree = sub", 2),
    ("[core]\n\tworktree = ../..", 2),
    ("[core]\n\tworktree = ../a/../b", 2),
    ("[core]\n\tworktree = ../.git", 2),
    ("[submodule \"s\"]\n\tpath = ../outside", 2),
    ("[submodule \"s\"]\n\tpath = /abs", 2),
    ("[submodule \"s\"]\n\tpath = a/.GIT/hooks", 2),
    ("[core]\n\tsharedrepository = 0666", 2),
    ("[core]\n\tsharedrepository = 0777", 2),
    ("[core]\n\tsharedrepository = +642", 2),
    // Values outside the kind.
    ("[core]\n\tbare = maybe", 2),
    ("[core]\n\trepositoryformatversion = 2", 2),
    ("[core]\n\tcompression = 9x", 2),
    ("[remote \"o\"]\n\tfetch = +refs/heads/*:refs/remotes/o/* x", 2),
    ("[remote \"o\"]\n\ttagopt = --upload-pack=evil", 2),
    ("[remote \"o\"]\n\tpartialclonefilter = sparse:path=/etc/x y", 2),
    ("[init]\n\tdefaultBranch = -x", 2),
    // Keys outside any section.
    ("bare = true", 1),
    ("fsmonitor = x\n[core]", 1),
];

#[test]
fn adversarial_configs_are_refused_naming_the_line() {
    for (text, line) in REFUSED {
        let r = refusal(text);
        assert_eq!(r.line, *line, "{text:?}: {r}");
    }
}

#[test]
fn refusals_say_why() {
    let r = refusal("[CORE]\n\tFSMONITOR = x");
    assert_eq!(r, Refusal { line: 2, what: "CORE.FSMONITOR".into(), reason: RUNS_PROGRAM });
    assert_eq!(r.to_string(), format!("line 2: CORE.FSMONITOR: {RUNS_PROGRAM}"));
    let r = refusal("[remote \"Origin\"]\n\tUploadPack = x");
    assert_eq!((r.what.as_str(), r.reason), ("remote.Origin.UploadPack", RUNS_PROGRAM));
    assert_eq!(refusal("[includeIf \"gitdir:/\"]\n path = x").reason, INCLUDES);
    assert_eq!(refusal("[alias]\n x = !evil").reason, RUNS_PROGRAM);
    assert_eq!(refusal("[core]\n\texcludesFile = x").reason, NOT_LISTED);
    assert!(refusal("[remote \"o\"]\n\turl = ext::sh").reason.contains("::"));
    assert!(refusal("[submodule \"s\"]\n\tupdate = !evil").reason.contains('!'));
}

#[test]
fn one_bad_line_deep_inside_is_named() {
    let (_, good) = REAL.iter().find(|(n, _)| n.starts_with("2.47.3 remotes")).expect("misc config");
    let mut lines: Vec<&str> = good.lines().collect();
    lines.insert(20, "\tuploadpack = sh -c evil");
    let text = lines.join("\n");
    let r = refusal(&text);
    assert_eq!(r.line, 21);
    assert!(r.what.ends_with(".uploadpack"), "{r}");
}

#[test]
fn bytes_that_are_not_text_are_refused() {
    let r = check(b"[core]\n\tbare = true\0\n").expect_err("NUL");
    assert_eq!(r.line, 2);
    let r = check(b"[user]\n\tname = \xff\n").expect_err("not UTF-8");
    assert_eq!(r.line, 2);
    assert!(check(b"[user]\n\tname = \xe2\x82").is_err(), "truncated UTF-8");
    assert!(check("[user]\n\tname = Zo\u{eb} \u{1F600}\n".as_bytes()).is_ok(), "UTF-8 in values is fine");
    assert!(check(b"[core]\n\tbare = true\x1b[2J\n").is_err(), "escape sequence");
    assert!(check(b"[core]\n\tbare = true\x7f\n").is_err(), "DEL");
    assert!(check("\u{feff}\u{feff}[core]".as_bytes()).is_err(), "second BOM");
}

#[test]
fn size_is_capped_at_64_kib() {
    let line = "# padding padding padding padding padding padding padding pad\n";
    let mut text = String::new();
    while text.len() + line.len() <= MAX_LEN {
        text.push_str(line);
    }
    text.push_str(&"#".repeat(MAX_LEN - text.len()));
    assert_eq!(text.len(), MAX_LEN);
    accepts(&text);
    text.push('#');
    let r = refusal(&text);
    assert!(r.reason.contains("64 KiB"), "{r}");
    assert_eq!(r.line, text.lines().count());
    // One enormous line is bounded by the same cap.
    assert!(check(format!("[user]\n\tname = {}", "a".repeat(MAX_LEN)).as_bytes()).is_err());
}
