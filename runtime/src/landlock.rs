//! Builds the Landlock ruleset (in the parent: it opens O_PATH fds and allocates) that the
//! child then enforces with `restrict_self` between fork and exec.

use landlock::{
    Access, AccessFs, AccessNet, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset, RulesetAttr, RulesetCreated,
    RulesetCreatedAttr, Scope, ABI,
};

use crate::error::LaunchError;
use crate::landlock_plan::Plan;
use crate::policy::Rights;

/// The ABI we ask for; older kernels are caught by [`kernel_abi`] checks before this.
const TARGET: ABI = ABI::V6;

/// The kernel's Landlock ABI version, 0 when Landlock is missing or disabled.
pub fn kernel_abi() -> i32 {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: with a NULL attr and size 0 this flag only queries the ABI version.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    if v < 0 {
        0
    } else {
        v as i32
    }
}

fn access_for(r: Rights, is_dir: bool) -> landlock::BitFlags<AccessFs> {
    let mut a = landlock::BitFlags::<AccessFs>::empty();
    if r.read {
        a |= AccessFs::ReadFile | AccessFs::Execute | AccessFs::IoctlDev;
    }
    if r.list {
        a |= AccessFs::ReadDir;
    }
    if r.write {
        a |= AccessFs::from_write(TARGET) & !(AccessFs::MakeChar | AccessFs::MakeBlock | AccessFs::IoctlDev);
    }
    if !is_dir {
        a &= AccessFs::from_file(TARGET);
    }
    a
}

/// `fs`: whether filesystem rules are wanted at all (`filesystem.disabled` turns them off).
/// `tcp`: handle TCP connect/bind with no port allowed (landlock mode; in namespace mode
/// the network namespace is the boundary and sandbox-local servers may listen).
pub fn build(plan: &Plan, fs: bool, tcp: bool) -> Result<RulesetCreated, LaunchError> {
    let err = |e: landlock::RulesetError| LaunchError::Landlock(e.to_string());
    let mut ruleset = Ruleset::default().set_compatibility(CompatLevel::BestEffort);
    if fs {
        ruleset = ruleset.handle_access(AccessFs::from_all(TARGET)).map_err(err)?;
    }
    // TCP connect and bind handled with no rule granting any port: the command's own
    // connects never succeed; the supervisor makes the proxy connection for it.
    if tcp {
        ruleset = ruleset.handle_access(AccessNet::from_all(TARGET)).map_err(err)?;
    }
    let ruleset = ruleset.scope(Scope::from_all(TARGET)).map_err(err)?;
    let mut created = ruleset.create().map_err(err)?;
    if fs {
        for rule in &plan.rules {
            let fd = match PathFd::new(&rule.path) {
                Ok(fd) => fd,
                Err(e) => {
                    tracing::debug!("skipping vanished path {}: {e}", rule.path.display());
                    continue;
                }
            };
            let access = access_for(rule.rights, rule.is_dir);
            if access.is_empty() {
                continue;
            }
            created = created.add_rule(PathBeneath::new(fd, access)).map_err(err)?;
        }
    }
    Ok(created)
}
