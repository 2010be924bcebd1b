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

// The rooms (README "Layout"): each imports only rooms below it in this list: cli, launch,
// process, supervisor, check, net, fs, seccomp, git, and the shared modules after them.
pub mod check;
pub mod cli;
pub mod fs;
pub mod git;
pub mod launch;
pub mod net;
pub mod process;
pub mod seccomp;
pub mod supervisor;

// The unit tests run on srt's own allocator, as `srt` does (`main.rs`): what it checks
// (no allocation in the vfork child) is checked there too.
#[cfg(test)]
#[global_allocator]
static ALLOCATOR: arena::Arena = arena::Arena::new();

// Shared by every room.
pub mod arena;
pub mod error;
pub mod limits;
pub mod paths;
pub mod say;
pub mod stdio;
pub mod sys;
