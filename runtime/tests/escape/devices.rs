//! /dev beyond the few devices a command needs: a raw block device holds every file's
//! blocks (denyRead ones included) and is readable by root; /dev/kmsg is the kernel log;
//! /dev/shm holds other processes' POSIX shared memory. srt 0.0.83 gives the command a
//! minimal /dev; so must srt.

use std::os::unix::fs::FileTypeExt;

use super::harness::{Env, Scenario};
use crate::escapes;

/// Setup: the first block device of this host, its path written to O/blockdev.
fn block_device(e: &Env) {
    let dev = std::fs::read_dir("/dev")
        .unwrap()
        .flatten()
        .find(|d| d.file_type().is_ok_and(|t| t.is_block_device()))
        .map(|d| d.path())
        .expect("this host has a block device under /dev");
    e.file(&e.o("blockdev"), dev.to_str().unwrap());
}

const SHM_SECRET: &str = "SHMSECRET";

/// Setup: a host process's shared memory segment (a file in /dev/shm) holding a secret.
fn host_shm(e: &Env) {
    let p = std::path::PathBuf::from(format!(
        "/dev/shm/srt-escape-{}",
        e.w.file_name().unwrap().len() + std::process::id() as usize
    ));
    std::fs::write(&p, SHM_SECRET).unwrap();
    e.own(&p);
    e.file(&e.o("shm"), p.to_str().unwrap());
}

escapes! {
    raw_block_device_read => Scenario::new(r#"head -c 4096 "$(cat "$O/blockdev")" > /dev/null && echo DEVREAD"#)
        .setup(block_device).fails().lacks("DEVREAD");
    kernel_log_read => Scenario::new("timeout 2 dd if=/dev/kmsg bs=8192 count=1 iflag=nonblock of=/dev/null 2>/dev/null && echo KMSGREAD")
        .fails().lacks("KMSGREAD");
    host_shared_memory_read => Scenario::new(r#"cat "$(cat "$O/shm")""#)
        .setup(host_shm)
        .fails()
        .lacks(SHM_SECRET)
        .check(|e, _| {
            let _ = std::fs::remove_file(std::fs::read_to_string(e.o("shm")).unwrap());
            Ok(())
        });
    the_devices_a_command_needs_still_work => Scenario::new(
        "ls / /dev > /dev/null && head -c 8 /dev/urandom > /dev/null && head -c 8 /dev/zero > /dev/null && echo x > /dev/null && \
         /usr/bin/python3 -c 'import os; os.urandom(8); m,s=os.openpty()' && echo DEVICES-OK")
        .prints("DEVICES-OK");
}
