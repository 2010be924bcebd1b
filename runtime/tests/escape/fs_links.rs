//! Symlinks, hard links and /proc paths used to reach protected files.

use super::harness::Scenario;
use crate::escapes;

escapes! {
    symlink_out_of_allowed_dir => Scenario::new(r#"ln -s "$O" out && echo x > out/escaped.txt"#)
        .fails().absent("o/escaped.txt");
    symlink_to_protected_file => Scenario::new("ln -s .bashrc rc && echo evil > rc")
        .fails().absent("w/.bashrc");
    symlink_to_git_hooks => Scenario::new("ln -s .git/hooks h && echo evil > h/pre-commit")
        .setup(|e| e.dir(&e.w(".git/hooks"))).fails().absent("w/.git/hooks/pre-commit");
    hardlink_outside_file => Scenario::new(r#"ln "$O/outside.txt" hl && echo evil > hl"#)
        .setup(|e| e.file(&e.o("outside.txt"), "orig\n")).fails().holds("o/outside.txt", "orig\n");
    hardlink_protected_file => Scenario::new("ln .bashrc b2 && echo evil >> b2")
        .setup(|e| e.file(&e.w(".bashrc"), "orig\n")).fails().holds("w/.bashrc", "orig\n");
    hardlink_protected_file_into_subdir => Scenario::new("mkdir -p sub && ln .bashrc sub/b2 && echo evil >> sub/b2")
        .setup(|e| { e.file(&e.w(".bashrc"), "orig\n"); e.dir(&e.w("sub")) })
        .fails().holds("w/.bashrc", "orig\n");
    proc_self_root => Scenario::new(r#"echo x > "/proc/self/root$O/evil.txt""#).fails().absent("o/evil.txt");
    proc_self_cwd_protected => Scenario::new("echo evil > /proc/self/cwd/.bashrc").fails().absent("w/.bashrc");
    exchange_rename_protected => Scenario::new(
        "echo evil > x && /usr/bin/python3 -c 'import ctypes,sys; l=ctypes.CDLL(None,use_errno=True); \
         r=l.renameat2(-100,b\"x\",-100,b\".bashrc\",2); sys.exit(0 if r==0 else 1)'")
        .setup(|e| e.file(&e.w(".bashrc"), "orig\n")).fails().holds("w/.bashrc", "orig\n");
}
