//! What srt knows about git: the files of a git directory that can make a later,
//! unsandboxed `git` run a program, and how to tell a git directory when it sees one.
//!
//! [`shape`] says what host git takes for a git directory; [`guard`] classifies each file
//! of one (used by the filesystem plan and by the supervisor); [`config`] decides which
//! `config` keys a command may write; [`audit`] checks the repositories the command made or
//! changed, for the check after the run ([`crate::check`]).

pub mod audit;
pub mod config;
mod config_keys;
pub mod dirfd;
pub mod guard;
pub mod report;
pub mod shape;
