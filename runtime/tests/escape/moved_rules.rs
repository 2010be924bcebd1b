//! Landlock's rules are on inodes, and a directory carries its rule wherever it is moved.
//! Round 8 (issue 36's review) read a `denyRead` tree by moving a directory with a read
//! rule into it and then a denied file into that directory: a pool directory (which grants
//! reading since write roots read back), a directory planned at launch (`src/`), and the
//! run's TMPDIR. No directory may be moved into a read-denied tree.

use serde_json::json;

use super::harness::Scenario;
use crate::escapes;

fn secret() -> Scenario {
    Scenario::new("").with("filesystem.denyRead", json!(["{W}/secret"])).setup(|e| {
        e.file(&e.w("secret/key"), "TOPSECRET\n");
        e.file(&e.w("src/main.c"), "int main;\n");
    })
}

fn attempt(cmd: &str) -> Scenario {
    let mut s = secret();
    s.cmd = cmd.into();
    s.fails().lacks("TOPSECRET")
}

escapes! {
    // a pool directory (mkdir in `.`) moved in, the denied file moved below it
    pool_directory_moved_into_a_denied_tree => attempt(
        "cat secret/key; mkdir x && mv x secret/x && mkdir secret/d && mv secret/key secret/d/ && mv secret/d secret/x/ && cat secret/x/d/key");
    // a directory with a rule of its own since launch
    planned_directory_moved_into_a_denied_tree => attempt(
        "mv src secret/src && mv secret/key secret/src/key && cat secret/src/key");
    // the run's TMPDIR, whose rule lets the kernel make files
    tmpdir_moved_into_a_denied_tree => attempt(
        r#"mv "$TMPDIR" secret/t && mv secret/key secret/t/key && cat secret/t/key"#);
    // a directory moved in by its parent
    parent_of_a_pool_directory_moved_into_a_denied_tree => attempt(
        "mkdir -p a/b && mv a secret/a && mv secret/key secret/a/b/key && cat secret/a/b/key");
}
