//! The escape battery: each scenario tries to break one rule and asserts both that the
//! attempt failed and that the host is unchanged. Every scenario runs as root and as an
//! unprivileged uid (when the suite runs as root).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod escape {
    pub mod harness;
    pub mod probes;
    pub mod timed;

    mod closed_stdio_and_pool_modes;
    mod connect_reread;
    mod devices;
    mod environment;
    mod fast_path;
    mod fs_links;
    mod fs_metadata;
    mod fs_read;
    mod fs_write;
    mod home_allow_list;
    mod links_as_writes;
    mod local_net;
    mod mount_aliases;
    mod moved_rules;
    mod native_create;
    mod native_mkdir;
    mod net_proxy;
    mod network;
    pub mod pod;
    mod process;
    mod project_dot_entries;
    pub mod review_channels;
    mod review_delayed;
    mod review_fourth;
    mod review_git;
    mod review_git_files;
    mod review_home;
    mod review_journal;
    mod review_lifecycle;
    mod review_local;
    mod review_metadata;
    mod review_nss;
    mod review_pids;
    mod review_rules;
    mod review_second;
    mod review_shelf;
    mod review_srt_death;
    mod review_startup;
    mod review_third;
    mod server_addresses;
    mod shared_memory;
    mod syscalls;
    mod unix_sockets;
    mod write_roots;
}
