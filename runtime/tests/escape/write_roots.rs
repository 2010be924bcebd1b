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

/// Round 8, second pass (F3): a run whose settings let it write `O/cache` plants
/// `O/cache/pip -> O/private`; a later run whose settings deny `O` and name `O/cache/pip` as
/// a root must not open `O/private` through it. srt refuses to start that run.
const OTHER_SETTINGS_THEN: &str = r#""$SRT" "$MODE" -s "$O/b.json" -c 'ln -sfn "$O/private" "$O/cache/pip"; echo planted'
"$SRT" "$MODE" -s "$SETTINGS" -c "$CMD"; echo "run A exited $?""#;

escapes! {
    symlink_at_a_missing_allowwrite_root => denied_home("cache", r#"ln -s "$O/private" "$O/cache""#);
    symlink_on_the_way_to_a_missing_root => denied_home("deep", r#"ln -s "$O/private" "$O/deep""#);
    directory_moved_onto_a_missing_root => denied_home(
        "cache", r#"mkdir x && ln -s "$O/private" x/pip; mv x "$O/cache"; mkdir y && ln -s "$O/private" y/pip && mv y "$O/deep""#);
    file_at_a_missing_root => denied_home("cache", r#"echo PLANTED > "$O/cache""#).absent("o/cache");
    link_planted_by_a_run_with_other_settings => Scenario::new(
        r#"cat "$O/cache/pip/secret.txt"; echo W > "$O/cache/pip/written""#)
        .with("filesystem.denyRead", json!(["{O}"]))
        .with("filesystem.allowWrite", json!([".", "{O}/cache/pip"]))
        .setup(|e| {
            e.file(&e.o("private/secret.txt"), "TOPSECRET\n");
            e.dir(&e.o("cache"));
            let b = json!({"network": {"allowedDomains": [], "deniedDomains": []},
                "filesystem": {"denyRead": [e.o("private")], "allowWrite": [".", e.o("cache")], "denyWrite": []}});
            e.file(&e.o("b.json"), &b.to_string());
        })
        .wrap(OTHER_SETTINGS_THEN)
        .prints("planted")
        .lacks("TOPSECRET")
        .absent("o/private/written");
}
