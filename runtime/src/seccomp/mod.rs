//! The seccomp program applied to the command, assembled by hand because it needs
//! `SECCOMP_RET_USER_NOTIF` (not in seccompiler 0.5) for the syscalls the supervisor
//! mediates. Layout: architecture check (foreign arch and x32 numbers kill the process),
//! then one block per listed syscall, then allow.

//!
//! [`rules`] decides, from the run's options, which syscalls are listed and what each gets;
//! [`bpf`] assembles that table into the program and installs it; [`sysno`] names the
//! syscall numbers per architecture; [`notify`] is the user-notification interface the
//! supervisor serves.

pub mod bpf;
pub mod notify;
pub mod rules;
pub mod sysno;

pub use bpf::{assemble, install, Action, Rule, SockFilter};
pub use rules::*;

#[cfg(test)]
mod tests;
