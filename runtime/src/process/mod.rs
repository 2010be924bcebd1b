//! The run's processes: srt → auditor → (namespace mode: the namespace's init →) command.
//!
//! The [`auditor`] is forked first and sits between srt and the command, so the run ends
//! the same way whatever happens to srt; in namespace mode it sets up the new namespaces
//! and their init ([`namespace`]); the [`child`] takes its last steps (session, limits,
//! capabilities, Landlock, seccomp) and becomes the command; the [`reaper`] makes sure
//! nothing the command started outlives the run.

pub mod auditor;
pub mod child;
pub mod namespace;
pub mod reaper;
