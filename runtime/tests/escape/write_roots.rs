//! An `allowWrite` root missing at launch, or a directory on the way to one, may only be
//! made as a new directory. Round 8 (issue 36's review): a landlock-mode run made a missing
//! root (`~/.npm`) a symlink to `~/Documents`, and the next run, resolving its roots through
//! it, could read (write implies read) and write there. The first run's link is refused;
//! the second run reads nothing.

use serde_json::json;

use super::harness::Scenario;
use crate::escapes;

fn denied_home(root: &'static str, plant: &str) -> Scenario {
    let then = format!(
        r#"cat "$O/{root}/secret.txt"; echo x > "$O/{root}/written"; mkdir "$O/{root}/pip"; echo x > "$O/{root}/pip/planted"; exit 1"#
    );
    Scenario::new(plant)
        .with("filesystem.denyRead", json!(["{O}"]))
        .with("filesystem.allowWrite", json!([".", "{O}/cache", "{O}/deep/pip"]))
        .setup(|e| e.file(&e.o("private/secret.txt"), "TOPSECRET\n"))
        .then(&then)
        .lacks("TOPSECRET")
        .absent("o/private/written")
        .absent("o/private/pip")
        .absent("o/private/planted")
}

escapes! {
    symlink_at_a_missing_allowwrite_root => denied_home("cache", r#"ln -s "$O/private" "$O/cache""#);
    symlink_on_the_way_to_a_missing_root => denied_home("deep", r#"ln -s "$O/private" "$O/deep""#);
    directory_moved_onto_a_missing_root => denied_home(
        "cache", r#"mkdir x && ln -s "$O/private" x/pip; mv x "$O/cache"; mkdir y && ln -s "$O/private" y/pip && mv y "$O/deep""#);
    file_at_a_missing_root => denied_home("cache", r#"echo PLANTED > "$O/cache""#).absent("o/cache");
}
