//! Metadata (mode, owner, timestamps, xattrs) outside allowWrite or on protected files:
//! Landlock does not cover it, the supervisor does.

use std::os::unix::fs::PermissionsExt;

use super::harness::{py, Scenario};
use crate::escapes;

escapes! {
    chmod_outside_file => Scenario::new(r#"chmod 666 "$O/mode.txt""#)
        .setup(|e| { e.file(&e.o("mode.txt"), "x"); std::fs::set_permissions(e.o("mode.txt"), std::fs::Permissions::from_mode(0o600)).unwrap() })
        .fails()
        .check(|e, _| {
            let mode = std::fs::metadata(e.o("mode.txt")).unwrap().permissions().mode() & 0o777;
            if mode == 0o600 { Ok(()) } else { Err(format!("mode changed to {mode:o}")) }
        });
    chmod_protected_file_via_fd => Scenario::new(&py("import os; fd=os.open(\".bashrc\", os.O_RDONLY); os.fchmod(fd, 0o777)"))
        .setup(|e| { e.file(&e.w(".bashrc"), "orig\n"); std::fs::set_permissions(e.w(".bashrc"), std::fs::Permissions::from_mode(0o644)).unwrap() })
        .fails()
        .check(|e, _| {
            let mode = std::fs::metadata(e.w(".bashrc")).unwrap().permissions().mode() & 0o777;
            if mode == 0o644 { Ok(()) } else { Err(format!("mode changed to {mode:o}")) }
        });
    touch_outside_file_times => Scenario::new(r#"touch -d 2001-01-01 "$O/old.txt""#)
        .setup(|e| e.file(&e.o("old.txt"), "x"))
        .fails()
        .check(|e, _| {
            let m = std::fs::metadata(e.o("old.txt")).unwrap().modified().unwrap();
            if m.elapsed().unwrap().as_secs() < 3600 { Ok(()) } else { Err("timestamp changed".into()) }
        });
    set_xattr_outside_file => Scenario::new(r#"/usr/bin/python3 -c 'import os,sys; os.setxattr(sys.argv[1], "user.evil", b"1")' "$O/x.txt""#)
        .setup(|e| e.file(&e.o("x.txt"), "x"))
        .fails()
        .check(|e, _| match xattr_present(&e.o("x.txt")) { true => Err("xattr set".into()), false => Ok(()) });
}

fn xattr_present(p: &std::path::Path) -> bool {
    let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
    let mut buf = [0u8; 16];
    // SAFETY: getxattr into a local buffer.
    unsafe { libc::getxattr(c.as_ptr(), c"user.evil".as_ptr(), buf.as_mut_ptr().cast(), buf.len()) >= 0 }
}
