#!/usr/bin/env python3
"""Real projects' test suites under srt, beside a bare run: the corpus of issue 36.

Each workload is a pinned release of a real third-party project, fetched from the package
registries (Debian's source archive, PyPI, the npm registry, crates.io) and installed bare;
its own test suite then runs bare, under srt in landlock mode and under srt in namespace
mode, as root and as uid 65534 (when run as root), each from a fresh copy, the way an agent
harness runs it: `srt --settings s.json bash -c CMD` with `allowWrite: ["."]` plus cache
directories. Nothing under srt talks to anything but loopback.

The table gives each run's passed/failed counts and time, and srt's time as a ratio of the
bare run's. The exit status is 1 when a run under srt passed fewer tests or failed more than
the bare run of the same uid, or did not finish; 2 when a workload could not be set up.

    bash scripts/workloads.sh                  # every workload, 1 round (the benchmark: --rounds 3)
    bash scripts/workloads.sh --ci             # the part CI runs
    bash scripts/workloads.sh --only express,werkzeug --uids root
"""

import argparse
import hashlib
import http.server
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "workloads"
NOBODY = 65534
REGISTRIES = ["registry.npmjs.org", "pypi.org", "files.pythonhosted.org", "index.crates.io", "static.crates.io"]


def log(msg):
    print(f"workloads: {msg}", file=sys.stderr, flush=True)


class SetupError(Exception):
    pass


def sh(cmd, cwd=None, env=None, quiet=True):
    """Runs a set-up step bare; its output goes to the log only when it fails."""
    r = subprocess.run(cmd, cwd=cwd, env=env, shell=isinstance(cmd, str), capture_output=True, text=True)
    if r.returncode != 0:
        raise SetupError(f"{cmd if isinstance(cmd, str) else ' '.join(map(str, cmd))} exited {r.returncode}:\n"
                         f"{r.stdout[-2000:]}{r.stderr[-2000:]}")
    if not quiet:
        sys.stderr.write(r.stdout)
    return r.stdout


def fetch(url, sha256, dest):
    """Downloads `url` to `dest` once, checked against its pinned SHA-256."""
    if dest.exists() and hashlib.sha256(dest.read_bytes()).hexdigest() == sha256:
        return dest
    log(f"fetching {url}")
    with urllib.request.urlopen(url, timeout=120) as r:
        data = r.read()
    got = hashlib.sha256(data).hexdigest()
    if got != sha256:
        raise SetupError(f"{url}: SHA-256 {got}, pinned {sha256}")
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(data)
    return dest


def unpack(archive, into):
    """Extracts a source tarball's single top directory into `into` (made anew)."""
    shutil.rmtree(into, ignore_errors=True)
    into.mkdir(parents=True)
    with tarfile.open(archive) as t:
        members = t.getmembers()
        top = os.path.commonpath([m.name for m in members])
        for m in members:
            rel = os.path.relpath(m.name, top)
            if rel == "." or rel.startswith(".."):
                continue
            m.name = rel
            t.extract(m, into, filter="data")


def sources():
    return json.loads((CORPUS / "sources.json").read_text())


# ---- the workloads ------------------------------------------------------------------------

class Workload:
    name = ""
    what = ""
    ci = True
    needs = ()
    # settings beyond the common ones (see `settings`)
    network = {}
    filesystem = {}
    timeout = 900

    def __init__(self, cache):
        self.cache = cache
        self.prepared = cache / "prepared" / self.name

    def stamp(self):
        return self.prepared / ".prepared"

    def ready(self):
        return self.stamp().exists()

    def prepare(self):
        raise NotImplementedError

    def command(self, ctx):
        raise NotImplementedError

    def parse(self, out):
        raise NotImplementedError

    def env(self, ctx):
        return {}

    def srt_args(self, ctx):
        return []

    def settings(self):
        s = {
            "network": {"allowedDomains": list(REGISTRIES), "deniedDomains": []},
            "filesystem": {"denyRead": [], "allowWrite": [".", "~/.npm", "~/.cache"], "denyWrite": []},
        }
        s["network"].update(self.network)
        s["filesystem"].update(self.filesystem)
        return s

    def start(self, ctx):
        """Anything the run needs beside it (a server on loopback); returns a stopper."""
        return lambda: None


def counts(out, passed_re, failed_re):
    p = sum(int(m) for m in re.findall(passed_re, out))
    f = sum(int(m) for m in re.findall(failed_re, out)) if failed_re else 0
    return p, f


class Express(Workload):
    name = "express"
    what = "express 4.18.2's mocha + supertest suite (Debian's orig tarball, lock in workloads/express)"
    needs = ("node", "npm")

    def prepare(self):
        src = sources()["express"]
        archive = fetch(src["url"], src["sha256"], self.cache / "downloads" / Path(src["url"]).name)
        unpack(archive, self.prepared)
        shutil.copy(CORPUS / "express" / "package-lock.json", self.prepared / "package-lock.json")
        sh(["npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error"], cwd=self.prepared,
           env={**os.environ, "npm_config_cache": str(self.cache / "npm-cache")})

    def command(self, ctx):
        return "node_modules/.bin/mocha --require test/support/env --reporter dot --check-leaks test/ test/acceptance/"

    def parse(self, out):
        return counts(out, r"(\d+) passing", r"(\d+) failing")


class Werkzeug(Workload):
    name = "werkzeug"
    what = "werkzeug 3.1.9's pytest suite on 2 xdist workers (PyPI sdist, pins in workloads/werkzeug)"
    needs = ("/usr/bin/python3",)
    # its suite serves on a Unix socket too (srt 0.0.83 also needs this for that test)
    network = {"allowAllUnixSockets": True}

    def prepare(self):
        src = sources()["werkzeug"]
        archive = fetch(src["url"], src["sha256"], self.cache / "downloads" / Path(src["url"]).name)
        unpack(archive, self.prepared)
        sh(["/usr/bin/python3", "-m", "venv", ".venv"], cwd=self.prepared)
        pip = [str(self.prepared / ".venv/bin/python"), "-m", "pip", "install", "-q", "--no-deps",
               "--disable-pip-version-check", "--cache-dir", str(self.cache / "pip-cache")]
        sh(pip + ["-r", str(CORPUS / "werkzeug" / "requirements.txt")], cwd=self.prepared)
        sh(pip + ["."], cwd=self.prepared)

    def command(self, ctx):
        return ".venv/bin/python -m pytest -q -n 2 tests"

    def parse(self, out):
        p, f = counts(out, r"(\d+) passed", r"(\d+) failed")
        return p, f + counts(out, r"(\d+) errors?\b", None)[0]


class Commander(Workload):
    name = "commander"
    what = "commander 9.4.1's jest suite (Debian's orig tarball, its own package-lock.json)"
    ci = False
    needs = ("node", "npm")

    def prepare(self):
        src = sources()["commander"]
        archive = fetch(src["url"], src["sha256"], self.cache / "downloads" / Path(src["url"]).name)
        unpack(archive, self.prepared)
        sh(["npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error"], cwd=self.prepared,
           env={**os.environ, "npm_config_cache": str(self.cache / "npm-cache")})

    def command(self, ctx):
        return "node_modules/.bin/jest --ci"

    def parse(self, out):
        m = re.search(r"^Tests:\s+(.*)$", out, re.M)
        if not m:
            return 0, 0
        return counts(m.group(1), r"(\d+) passed", r"(\d+) failed")


class Cargo(Workload):
    name = "cargo"
    what = "cargo test of workloads/cargo-app: crates.io crates with build scripts and proc macros, fresh CARGO_HOME"
    ci = False
    needs = ("cargo",)
    # CARGO_HOME is a directory the environment names, which srt protects unless allowWrite
    # names it: extracted crate sources are code a later host build runs
    filesystem = {"allowWrite": [".", "./cargo-home", "~/.npm", "~/.cache"]}

    def prepare(self):
        shutil.rmtree(self.prepared, ignore_errors=True)
        shutil.copytree(CORPUS / "cargo-app", self.prepared / "app")
        home = self.prepared / "cargo-home"
        sh(["cargo", "fetch", "--locked"], cwd=self.prepared / "app", env={**os.environ, "CARGO_HOME": str(home)})
        # a fresh CARGO_HOME for each run: the downloaded crates and the index, not their sources
        shutil.rmtree(home / "registry" / "src", ignore_errors=True)
        # uid 65534 cannot reach rustup's toolchain under /root: a hard-linked copy it can
        sysroot = Path(sh(["rustc", "--print", "sysroot"]).strip())
        tool = self.cache / "toolchain"
        if not (tool / "bin" / "cargo").exists():
            shutil.rmtree(tool, ignore_errors=True)
            r = subprocess.run(["cp", "-al", str(sysroot), str(tool)], capture_output=True)
            if r.returncode != 0:
                shutil.rmtree(tool, ignore_errors=True)
                sh(["cp", "-a", str(sysroot), str(tool)])
        for p in [self.cache, tool]:
            os.chmod(p, 0o755)

    def command(self, ctx):
        return "cd app && cargo test --offline --locked"

    def env(self, ctx):
        tool = self.cache / "toolchain" / "bin"
        return {"CARGO_HOME": str(ctx.work / "cargo-home"), "PATH": f"{tool}:{os.environ.get('PATH', '')}",
                "RUSTUP_TOOLCHAIN": "", "CARGO_TERM_COLOR": "never"}

    def parse(self, out):
        return counts(out, r"test result: \w+\. (\d+) passed", r"test result: \w+\. \d+ passed; (\d+) failed")


class Git(Workload):
    name = "git"
    what = "git init/add/commit/status/gc/fsck over express's node_modules (6,576 real files)"
    needs = ("git",)
    STEPS = ["init", "add", "commit", "status", "log", "gc", "fsck", "checkout"]

    def prepare(self):
        express = Express(self.cache)
        if not express.ready():
            express.prepare()
            express.stamp().touch()
        shutil.rmtree(self.prepared, ignore_errors=True)
        shutil.copytree(express.prepared / "node_modules", self.prepared / "tree", symlinks=True)

    def command(self, ctx):
        s = lambda name, cmd: f'{cmd} && echo "STEP-OK {name}"'  # noqa: E731
        return " ; ".join([
            "cd tree",
            s("init", "git init -q"),
            s("add", "git add -A"),
            s("commit", "git commit -qm import"),
            s("status", 'test -z "$(git status --porcelain)"'),
            s("log", "test $(git log --oneline | wc -l) = 1"),
            s("gc", "git gc -q"),
            s("fsck", "git fsck --no-progress"),
            s("checkout", "rm -rf mocha && git checkout -- . && test -f mocha/package.json"),
        ])

    def env(self, ctx):
        return {"GIT_AUTHOR_NAME": "w", "GIT_AUTHOR_EMAIL": "w@example.test", "GIT_COMMITTER_NAME": "w",
                "GIT_COMMITTER_EMAIL": "w@example.test", "GIT_CONFIG_NOSYSTEM": "1"}

    def parse(self, out):
        ok = len(re.findall(r"^STEP-OK ", out, re.M))
        return ok, len(self.STEPS) - ok


class Chromium(Workload):
    name = "chromium"
    what = "headless Debian Chromium driven by Playwright (npm), a loopback page, with /dev/shm in use"
    needs = ("/usr/bin/chromium", "node", "npm")
    # Chromium's process singleton and its IPC are Unix sockets (srt 0.0.83 needs this too)
    network = {"allowAllUnixSockets": True}

    def prepare(self):
        shutil.rmtree(self.prepared, ignore_errors=True)
        shutil.copytree(CORPUS / "chromium", self.prepared)
        sh(["npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error"], cwd=self.prepared,
           env={**os.environ, "npm_config_cache": str(self.cache / "npm-cache")})

    def command(self, ctx):
        return "node page.mjs"

    def parse(self, out):
        return (1, 0) if "CHROMIUM-OK" in out else (0, 1)


class NpmInstall(Workload):
    name = "npm-install"
    what = ("npm ci of express's 417 packages from a registry mirror on loopback, then again from the "
            'cache it wrote, with denyRead ["~"] and allowWrite [".", "~/.npm"]')
    needs = ("node", "npm")
    network = {"allowedDomains": ["registry.test"]}
    filesystem = {"denyRead": ["~"], "allowWrite": [".", "~/.npm"]}

    def prepare(self):
        shutil.rmtree(self.prepared, ignore_errors=True)
        (self.prepared / "project").mkdir(parents=True)
        src = sources()["express"]
        archive = fetch(src["url"], src["sha256"], self.cache / "downloads" / Path(src["url"]).name)
        express = self.cache / "prepared" / "npm-install-src"
        unpack(archive, express)
        shutil.copy(express / "package.json", self.prepared / "project" / "package.json")
        shutil.copy(CORPUS / "express" / "package-lock.json", self.prepared / "project" / "package-lock.json")
        shutil.rmtree(express, ignore_errors=True)
        # the mirror: every tarball the lock names, at its registry path
        lock = json.loads((CORPUS / "express" / "package-lock.json").read_text())
        urls = sorted({p["resolved"] for p in lock["packages"].values() if p.get("resolved")})
        mirror = self.cache / "npm-mirror"

        def get(url):
            path = mirror / url.split("://", 1)[1].split("/", 1)[1]
            if path.exists():
                return
            path.parent.mkdir(parents=True, exist_ok=True)
            with urllib.request.urlopen(url, timeout=120) as r:
                data = r.read()
            tmp = path.with_suffix(".part")
            tmp.write_bytes(data)
            tmp.rename(path)

        log(f"mirroring {len(urls)} tarballs from the npm registry")
        with ThreadPoolExecutor(8) as ex:
            list(ex.map(get, urls))

    def start(self, ctx):
        mirror = self.cache / "npm-mirror"

        class Quiet(http.server.SimpleHTTPRequestHandler):
            def __init__(self, *a, **k):
                super().__init__(*a, directory=str(mirror), **k)

            def log_message(self, *a):
                pass

        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
        ctx.port = server.server_address[1]
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return server.shutdown

    def command(self, ctx):
        host = "127.0.0.1" if ctx.mode == "bare" else "registry.test"
        # twice: the second install takes every tarball from the cache the first one wrote
        npm = (f"npm ci --no-audit --no-fund --ignore-scripts --loglevel=error --prefer-offline "
               f"--registry http://{host}:{ctx.port}/")
        return (f"cd project && {npm} && rm -rf node_modules && {npm} && "
                'echo "installed $(ls node_modules | wc -l) top-level packages"')

    def srt_args(self, ctx):
        return ["--resolve", f"registry.test:{ctx.port}:127.0.0.1"]

    def parse(self, out):
        m = re.search(r"installed (\d+) top-level packages", out)
        return (int(m.group(1)), 0) if m else (0, 1)


WORKLOADS = [Express, Werkzeug, Commander, Cargo, Git, Chromium, NpmInstall]


# ---- running ------------------------------------------------------------------------------

class Ctx:
    def __init__(self, mode, uid, run):
        self.mode, self.uid, self.run = mode, uid, run
        self.work = run / "work"
        self.home = run / "home"
        self.port = 0


def chown_tree(path, uid):
    subprocess.run(["chown", "-R", f"{uid}:{uid}", str(path)], check=True)


def run_one(w, mode, uid, srt, base, timeout):
    run = base / "runs" / f"{w.name}-{uid}-{mode}"
    shutil.rmtree(run, ignore_errors=True)
    ctx = Ctx(mode, uid, run)
    run.mkdir(parents=True)
    subprocess.run(["cp", "-a", "--reflink=auto", str(w.prepared), str(ctx.work)], check=True)
    # the home of a user who has run npm and pip before (namespace mode can make writable
    # only allowWrite paths that exist)
    for d in [".npm", ".cache"]:
        (ctx.home / d).mkdir(parents=True)
    (run / "srt-settings.json").write_text(json.dumps(w.settings(), indent=2))
    if uid != 0:
        chown_tree(run, uid)
    stop = w.start(ctx)
    cmd = w.command(ctx)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(ctx.home), "LANG": "C.UTF-8",
           "TERM": "dumb", "CI": "1", "NO_COLOR": "1"}
    env.update(w.env(ctx))
    argv = ["bash", "-c", cmd]
    if mode != "bare":
        argv = [str(srt), "--network-mode", mode, "--no-network-hints", "-s", str(run / "srt-settings.json")] \
            + w.srt_args(ctx) + argv
    if uid != 0:
        argv = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--"] + argv
    tops = {"work": ctx.work, "~/.npm": ctx.home / ".npm", "~/.cache": ctx.home / ".cache"}
    before = {k: dot_entries(d) for k, d in tops.items()}
    t0 = time.monotonic()
    p = subprocess.Popen(argv, cwd=ctx.work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        timed_out = True
    elapsed = time.monotonic() - t0
    stop()
    text = out.decode(errors="replace")
    (base / "logs").mkdir(exist_ok=True)
    (base / "logs" / f"{w.name}-{uid}-{mode}.log").write_text(text)
    passed, failed = w.parse(text)
    # what srt's rule for new dot-entries at the top of a writable tree would meet: measured
    # bare, it is the list of false refusals a default must not have
    made = {k: sorted(dot_entries(d) - before[k]) for k, d in tops.items()}
    return {"workload": w.name, "mode": mode, "uid": uid, "passed": passed, "failed": failed,
            "seconds": round(elapsed, 2), "exit": p.returncode, "timed_out": timed_out,
            "dot_entries_made": {k: v for k, v in made.items() if v}}


def dot_entries(d):
    """The names starting with a dot at the top of the directory `d` (none if it is missing)."""
    try:
        return {n for n in os.listdir(d) if n.startswith(".")}
    except OSError:
        return set()


def missing(w):
    out = []
    for n in w.needs:
        if not (Path(n).exists() if n.startswith("/") else shutil.which(n)):
            out.append(n)
    return out


def cell(r, bare):
    if r is None:
        return "-"
    if r["timed_out"]:
        return f"TIMED OUT {r['seconds']:.0f}s"
    s = f"{r['passed']} ok"
    if r["failed"]:
        s += f" {r['failed']} fail"
    s += f" {r['seconds']:.1f}s"
    if bare and bare["seconds"] > 0 and r is not bare:
        s += f" {r['seconds'] / bare['seconds']:.2f}x"
    return s


def verdict(r, bare):
    """Whether an srt run did what the bare run of the same uid did."""
    if r["timed_out"]:
        return "did not finish"
    if bare is None or bare["timed_out"]:
        return None
    if r["passed"] < bare["passed"]:
        return f"passed {r['passed']}, bare {bare['passed']}"
    if r["failed"] > bare["failed"]:
        return f"failed {r['failed']}, bare {bare['failed']}"
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ci", action="store_true", help="only the workloads CI runs (marked ci)")
    ap.add_argument("--only", help="comma-separated workload names: " + ", ".join(w.name for w in WORKLOADS))
    ap.add_argument("--uids", default=None, help="root,nobody (default: both when run as root)")
    ap.add_argument("--modes", default="bare,landlock,namespace")
    ap.add_argument("--rounds", type=int, default=1, help="runs per cell; the median time is shown")
    ap.add_argument("--srt", help="the srt binary (default: target/dist/srt, else target/release/srt, else target/debug/srt)")
    ap.add_argument("--dir", default=os.environ.get("SRT_WORKLOADS_DIR", "/var/tmp/srt-workloads"),
                    help="downloads, prepared trees and runs (default /var/tmp/srt-workloads; kept for the next run)")
    ap.add_argument("--json", help="also write the results to this file")
    ap.add_argument("--list", action="store_true", help="list the workloads and exit")
    a = ap.parse_args()

    if a.list:
        for w in WORKLOADS:
            print(f"{w.name:<12} {'ci ' if w.ci else '   '} {w.what}")
        return 0
    chosen = [w for w in WORKLOADS if (not a.ci or w.ci) and (not a.only or w.name in a.only.split(","))]
    if a.only:
        unknown = set(a.only.split(",")) - {w.name for w in WORKLOADS}
        if unknown:
            ap.error(f"unknown workload(s): {', '.join(sorted(unknown))}")
    root = os.geteuid() == 0
    uids = [0, NOBODY] if root else [os.geteuid()]
    if a.uids:
        uids = [0 if u == "root" else NOBODY if u == "nobody" else int(u) for u in a.uids.split(",")]
    modes = a.modes.split(",")
    base = Path(a.dir)
    base.mkdir(parents=True, exist_ok=True)
    os.chmod(base, 0o755)
    srt_src = Path(a.srt) if a.srt else next(
        (p for p in [REPO / "target/dist/srt", REPO / "target/release/srt", REPO / "target/debug/srt"] if p.exists()),
        None)
    if srt_src is None or not srt_src.exists():
        log("no srt binary: build one (bash scripts/build.sh) or pass --srt")
        return 2
    # a copy any uid can run (the build tree may be under /root)
    (base / "bin").mkdir(exist_ok=True)
    srt = base / "bin" / "srt"
    shutil.copy(srt_src, srt)
    os.chmod(srt, 0o755)
    version = subprocess.run([str(srt), "-V"], capture_output=True, text=True).stdout.strip()
    log(f"{len(chosen)} workloads, uids {uids}, modes {modes}, {a.rounds} round(s); srt: {srt_src} ({version})")

    workloads = []
    setup_failed = []
    for cls in chosen:
        w = cls(base)
        lack = missing(w)
        if lack:
            setup_failed.append(f"{w.name}: missing {', '.join(lack)} (scripts/workloads.sh installs them as root)")
            continue
        if not w.ready():
            log(f"preparing {w.name}: {w.what}")
            t = time.monotonic()
            try:
                w.prepare()
            except (SetupError, OSError, subprocess.CalledProcessError) as e:
                setup_failed.append(f"{w.name}: {e}")
                continue
            w.stamp().touch()
            log(f"prepared {w.name} in {time.monotonic() - t:.0f}s")
        os.chmod(w.prepared, 0o755)
        workloads.append(w)

    results = []
    for w in workloads:
        for uid in uids:
            for mode in modes:
                rounds = [run_one(w, mode, uid, srt, base, w.timeout) for _ in range(a.rounds)]
                rounds.sort(key=lambda r: r["seconds"])
                r = rounds[len(rounds) // 2]
                results.append(r)
                who = "root" if uid == 0 else f"uid {uid}"
                log(f"{w.name} {who} {mode}: {cell(r, None)}")
    shutil.rmtree(base / "runs", ignore_errors=True)

    # the table
    print(f"\nsrt workloads: {version} ({srt_src}), {os.cpu_count()} cores, Linux {platform.release()}, "
          f"{time.strftime('%Y-%m-%d')}, {a.rounds} round(s), median time")
    head = f"{'workload':<12} {'uid':<6} " + "  ".join(f"{m:<26}" for m in modes)
    print(head)
    problems = []
    for w in workloads:
        for uid in uids:
            row = {r["mode"]: r for r in results if r["workload"] == w.name and r["uid"] == uid}
            bare = row.get("bare")
            who = "root" if uid == 0 else str(uid)
            print(f"{w.name:<12} {who:<6} " + "  ".join(f"{cell(row.get(m), bare):<26}" for m in modes))
            if bare and not bare["timed_out"] and bare["passed"] == 0:
                problems.append(f"{w.name} as {who}: the bare run passed nothing, so nothing was compared "
                                f"(log: {base}/logs/{w.name}-{uid}-bare.log)")
            for m in modes:
                if m == "bare" or m not in row:
                    continue
                v = verdict(row[m], bare)
                if v:
                    problems.append(f"{w.name} as {who} in {m} mode: {v} (log: {base}/logs/{w.name}-{uid}-{m}.log)")
    checks = sum(1 for r in results if r["mode"] != "bare")
    print(f"workloads: {checks - len(problems)} passed, {len(problems) + len(setup_failed)} failed")
    for p in problems + setup_failed:
        print(f"  FAILED: {p}")
    if a.json:
        Path(a.json).write_text(json.dumps({"srt": version, "results": results, "problems": problems,
                                            "setup_failed": setup_failed}, indent=2))
    if setup_failed:
        return 2
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
