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

// The rooms, in the order a run goes through them: the command line, then the launch, which
// prepares the filesystem policy, the network and the seccomp filter, starts the command
// with the supervisor beside it, and ends with the check against delayed host execution.
pub mod check;
pub mod cli;
pub mod fs;
pub mod git;
pub mod launch;
pub mod net;
pub mod seccomp;
pub mod supervisor;

// Shared by every room.
pub mod error;
pub mod limits;
pub mod paths;
pub mod say;
