//! Fourth outside review: a denyRead directory inside allowWrite renamed within its
//! parent (the kernel allowed it: the parent had a write rule of its own), after which the
//! supervisor judged the moved files readable by their new path and linked one into a
//! directory it writes for the command; or renamed only, so that the next run, planned
//! from the old path, reads it.

use super::harness::Scenario;
use crate::escapes;

escapes! {
    denied_directory_renamed_then_linked => Scenario::new(
        "cat config/secrets/key; mv config/secrets config/moved; mkdir -p .git; ln config/moved/key .git/leak; cat .git/leak config/moved/key")
        .with("filesystem.denyRead", serde_json::json!(["{W}/config/secrets"]))
        .setup(|e| {
            e.dir(&e.w("config/secrets"));
            e.file(&e.w("config/secrets/key"), "TOPSECRET-r4\n");
        })
        .lacks("TOPSECRET-r4")
        .check(|e, _| {
            if e.w("config/secrets/key").exists() { Ok(()) } else { Err("the denied directory was moved away".into()) }
        });
    denied_directory_moved_for_the_next_run => Scenario::new("mv config/secrets config/moved")
        .then("cat config/moved/key")
        .with("filesystem.denyRead", serde_json::json!(["{W}/config/secrets"]))
        .setup(|e| {
            e.dir(&e.w("config/secrets"));
            e.file(&e.w("config/secrets/key"), "TOPSECRET-r4\n");
        })
        .lacks("TOPSECRET-r4");
}
