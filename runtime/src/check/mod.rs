//! The check against delayed host execution: the command must not leave behind what a
//! later, unsandboxed host program runs.
//!
//! Before the command starts, the run's [`journal`] is on disk; the supervisor appends
//! to it every directory, git name and link the command makes. When every process of the
//! command is gone ([`crate::process`]), [`after_run`] checks only what the journal names
//! (it costs what the command changed, not the size of the trees) and quarantines what
//! would run on the host. A journal left by a run whose srt died is finished by the next run.

pub mod after_run;
pub mod journal;
