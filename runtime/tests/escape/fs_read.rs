//! denyRead: files, directories, globs, and inherited descriptors.

use serde_json::json;

use super::harness::Scenario;
use crate::escapes;

fn secrets() -> Scenario {
    Scenario::new("").with("filesystem.denyRead", json!(["{O}/secret.txt", "{O}/secretdir"])).setup(|e| {
        e.file(&e.o("secret.txt"), "TOPSECRET\n");
        e.file(&e.o("secretdir/key"), "KEYMATERIAL\n");
    })
}

fn attempt(cmd: &str) -> Scenario {
    let mut s = secrets();
    s.cmd = cmd.into();
    s
}

escapes! {
    read_deny_read_file => attempt(r#"cat "$O/secret.txt""#).fails().lacks("TOPSECRET");
    list_deny_read_dir => attempt(r#"ls "$O/secretdir""#).fails().lacks("key");
    read_inside_deny_read_dir => attempt(r#"cat "$O/secretdir/key""#).fails().lacks("KEYMATERIAL");
    read_through_symlink => attempt(r#"ln -s "$O/secret.txt" s && cat s"#).fails().lacks("TOPSECRET");
    copy_deny_read_file => attempt(r#"cp "$O/secret.txt" copy.txt"#).fails().absent("w/copy.txt");
    read_deny_read_glob => Scenario::new(r#"cat .env sub/.env"#)
        .with("filesystem.denyRead", json!(["**/.env"]))
        .setup(|e| { e.file(&e.w(".env"), "ENVSECRET1\n"); e.file(&e.w("sub/.env"), "ENVSECRET2\n") })
        .fails().lacks("ENVSECRET1").lacks("ENVSECRET2");
    deeper_deny_inside_allow_read => Scenario::new(r#"cat "$O/secretdir/pub/p.txt" && cat "$O/secretdir/pub/inner/k""#)
        .with("filesystem.denyRead", json!(["{O}/secretdir", "{O}/secretdir/pub/inner"]))
        .with("filesystem.allowRead", json!(["{O}/secretdir/pub"]))
        .setup(|e| { e.file(&e.o("secretdir/pub/p.txt"), "PUBLIC\n"); e.file(&e.o("secretdir/pub/inner/k"), "INNERSECRET\n") })
        .fails().prints("PUBLIC").lacks("INNERSECRET");
    // filesystem.listable (srt-controller's credential directories): names visible, contents
    // not, and the directories above stay listable
    listable_denied_tree_shows_names_only => Scenario::new(concat!(
        r#"ls "$O" >/dev/null && echo parent-listed; ls "$O/secretdir/sub"; "#,
        r#"cat "$O/secretdir/sub/key"; head -c 99 "$O/secretdir/sub/key"; ln -s "$O/secretdir/sub/key" s; cat s; "#,
        r#"cp "$O/secretdir/sub/key" copy.txt; exit 1"#,
    ))
        .with("filesystem.denyRead", json!(["{O}/secretdir"]))
        .with("filesystem.listable", json!(["{O}/secretdir"]))
        .setup(|e| e.file(&e.o("secretdir/sub/key"), "KEYMATERIAL\n"))
        .fails().prints("parent-listed").lacks("KEYMATERIAL").absent("w/copy.txt")
        .check(|_, o| if o.text.lines().any(|l| l == "key") { Ok(()) } else { Err(format!("the name is not listed: {}", o.text)) });
    // a path the command may write it reads back, also below denyRead (npm's cache under
    // `denyRead: ["~"]`, issue 36); the rest of the denied tree stays unreadable
    written_below_deny_read_reads_back => Scenario::new(concat!(
        r#"echo CACHED > "$O/home/.npm/entry" && cat "$O/home/.npm/entry" && cat "$O/home/.npm/old" && echo READ-BACK; "#,
        r#"cat "$O/home/secret.txt"; exit 1"#,
    ))
        .with("filesystem.denyRead", json!(["{O}/home"]))
        .with("filesystem.allowWrite", json!([".", "{O}/home/.npm"]))
        .setup(|e| {
            e.file(&e.o("home/secret.txt"), "TOPSECRET\n");
            e.file(&e.o("home/.npm/old"), "OLDENTRY\n");
        })
        .fails().prints("CACHED").prints("OLDENTRY").prints("READ-BACK").lacks("TOPSECRET");
    // ...but a denyRead deeper inside the writable tree still wins
    deeper_deny_read_inside_a_write_root_wins => Scenario::new(r#"cat "$O/home/.npm/sub/keys/k""#)
        .with("filesystem.denyRead", json!(["{O}/home", "{O}/home/.npm/sub/keys"]))
        .with("filesystem.allowWrite", json!([".", "{O}/home/.npm"]))
        .setup(|e| e.file(&e.o("home/.npm/sub/keys/k"), "KEYMATERIAL\n"))
        .fails().lacks("KEYMATERIAL");
    inherited_read_fd => attempt("cat <&3").wrap(r#"exec 3<"$O/secret.txt"; "$SRT" "$MODE" -s "$SETTINGS" -c "$CMD""#)
        .fails().lacks("TOPSECRET");
    inherited_write_fd => Scenario::new("echo evil >&4")
        .setup(|e| e.file(&e.o("target.txt"), "orig\n"))
        .wrap(r#"exec 4>>"$O/target.txt"; "$SRT" "$MODE" -s "$SETTINGS" -c "$CMD""#)
        .fails().holds("o/target.txt", "orig\n");
}
