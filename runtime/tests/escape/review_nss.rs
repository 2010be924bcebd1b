//! srt's own process resolves the names the proxy connects to with glibc's `getaddrinfo`
//! (statically linked or not): every `hosts:` service of `/etc/nsswitch.conf` but glibc's
//! built-in `files` and `dns` is a `dlopen("libnss_<service>.so.2")` made lazily, at the
//! proxy's first lookup, while the command runs, and that `dlopen` searches
//! `LD_LIBRARY_PATH` as srt found it at start-up first. Fedora (`myhostname`, `resolve`),
//! Ubuntu (`mdns4_minimal`) and Arch (`mymachines`) ship such a `hosts:` line; an empty
//! `LD_LIBRARY_PATH` entry (`export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:/opt/x` with none set
//! before) names srt's working directory, which the command may write.

use super::harness::Scenario;
use crate::escapes;

/// As root only (a private mount namespace gives this run its own `nsswitch.conf`, `hosts:
/// files myhostname`, and a `/etc/hosts` without the name: no lookup leaves the machine):
/// the command copies a `libnss_myhostname.so.2` whose constructor writes `$O/escaped`
/// into `.` and asks the proxy for `nss.test`.
const NSS_MODULE_FROM_CWD: &str = r#"if [ "$(id -u)" != 0 ]; then echo "skipped: a private nsswitch.conf needs root"; exit 0; fi
printf '#include <stdio.h>\n__attribute__((constructor)) static void f(void) { FILE *o = fopen(MARK, "w"); if (o) { fputs("loaded outside the sandbox\\n", o); fclose(o); } }\n' > "$O/m.c"
gcc -shared -fPIC -DMARK="\"$O/escaped\"" -o "$O/libnss_myhostname.so.2" "$O/m.c" || { echo "skipped: no gcc"; exit 0; }
printf 'hosts: files myhostname\n' > "$O/nsswitch.conf"
printf '127.0.0.1 localhost\n::1 localhost\n' > "$O/hosts"
cd "$W"
unshare -m --propagation private sh -c 'mount --bind "$O/nsswitch.conf" /etc/nsswitch.conf && mount --bind "$O/hosts" /etc/hosts && LD_LIBRARY_PATH=":/nonexistent" "$SRT" "$MODE" -s "$SETTINGS" -c "$CMD"' 2>&1
exit 0"#;

escapes! {
    // srt starts itself again without LD_LIBRARY_PATH (glibc fixes its dlopen search path at
    // start-up), so its resolver never looks in a directory the command may write
    nss_module_planted_in_ld_library_path_is_not_loaded_by_srt => Scenario::new(
        "cp \"$O/libnss_myhostname.so.2\" . && curl -s -m 5 -o /dev/null http://nss.test:9/; true",
    )
    .with("network.allowedDomains", serde_json::json!(["nss.test"]))
    .wrap(NSS_MODULE_FROM_CWD)
    .check(|e, o| match std::fs::read_to_string(e.o("escaped")) {
        Ok(s) => Err(format!("srt loaded the command's libnss_myhostname.so.2: {s} {}", o.text)),
        Err(_) => Ok(()),
    });

    // ... and the command still gets it exactly as srt was given it, and nothing of srt's own
    ld_library_path_reaches_the_command_as_given => Scenario::new(
        r#"printf 'LLP=[%s]\n' "$LD_LIBRARY_PATH"; env | grep -c '^SRT_COMMAND_' || true"#,
    )
    .env("LD_LIBRARY_PATH", ":/nonexistent/lib")
    .prints("LLP=[:/nonexistent/lib]")
    .lacks("SRT_COMMAND_LD_LIBRARY_PATH");
}
