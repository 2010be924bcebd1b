//! The `srt` launcher: runs a command under Landlock filesystem rules and a seccomp
//! filter, with a supervisor that performs permitted writes in directories where
//! Landlock alone cannot express the policy. One module per mechanism.

/// A warning the user should see whether or not logging is on (logging is set up only
/// for `-d`/`SRT_LOG`, which keeps start-up cheap). Written so that it cannot block srt
/// ([`say`]).
#[macro_export]
macro_rules! warn {
    ($($arg:tt)*) => { $crate::say::line(&format!("srt: warning: {}", format_args!($($arg)*))) };
}

pub mod after_run;
pub mod auditor;
pub mod child;
pub mod cli;
mod cli_args;
pub mod env_policy;
pub mod error;
pub mod explain;
mod explain_fs;
pub mod git_audit;
pub mod git_config;
pub mod git_guard;
pub mod git_shape;
pub mod journal;
pub mod landlock;
pub mod landlock_plan;
pub mod launch;
pub mod limits;
pub mod local_addr;
pub mod mandatory;
pub mod mounts;
pub mod name_rules;
pub mod namespace;
pub mod net;
pub mod notify;
mod parent;
pub mod policy;
pub mod pool;
pub mod prepare;
pub mod protected_names;
pub mod reaper;
pub mod say;
pub mod seccomp;
pub mod sock_diag;
pub mod supervisor;
pub mod sysno;
pub mod tmpdir;
