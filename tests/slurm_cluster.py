"""A private single-node SLURM cluster for the ``cluster`` tests (make test-cluster).

``slurm_cluster()`` installs Debian's ``slurm-wlm`` and ``munge`` if their daemons are missing,
starts its own ``munged``, ``slurmctld`` and ``slurmd`` from a temporary directory (its own munge
key and socket, ports no other cluster on the machine uses, this host's real CPUs and memory),
waits until the node is idle and yields the environment that reaches it (``SLURM_CONF``, also set
in ``os.environ`` while the cluster is up, so that submitit's ``sbatch`` finds it). The daemons
run in the foreground as its children; on exit it cancels the jobs left, stops the daemons by
their PIDs and waits for them, removes the directory and purges exactly the packages it installed
(with the .deb files apt-get downloaded): the machine is left as it was found.

Job states: there is no accounting (no slurmdbd), so ``sacct`` fails and submitit, which reads
states only through ``sacct``, logs a warning and sees every job as UNKNOWN; it still ends each job
when the job's result pickle appears, which submitit writes for a completed and for a failed job.
A job killed by SLURM without a result (scancel, a time limit without requeue) would be waited
for forever, so the tests run every submitting command under a timeout. ``scontrol show job``
reads a job's state (and its restart count) for MinJobAge seconds after it ends.
"""

from __future__ import annotations

import grp
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

PACKAGES = ("slurm-wlm", "munge")
PROGRAMS = ("munged", "slurmctld", "slurmd", "sbatch", "scontrol", "sinfo", "srun")
ACCOUNTS = ("slurm", "munge")  # the system users and groups the packages create
ARCHIVES = Path("/var/cache/apt/archives")
SEARCH_PATH = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"])
PARTITION = "debug"


class ClusterUnavailable(RuntimeError):
    """SLURM is missing and cannot be installed here: the tests skip with this message."""

    def __init__(self, reason: str):
        super().__init__(f"cannot bring up SLURM: {reason}")


class ClusterFailed(RuntimeError):
    """SLURM is installed but its daemons did not come up: a test error, with their logs."""


def _installed_packages() -> set[str]:
    out = subprocess.run(
        ["dpkg-query", "-W", "-f", "${Package}\t${db:Status-Abbrev}\n"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return {
        name for name, _, status in (ln.partition("\t") for ln in out.splitlines()) if status.startswith("ii")
    }


def _accounts() -> tuple[set[str], set[str]]:
    return {p.pw_name for p in pwd.getpwall()}, {g.gr_name for g in grp.getgrall()}


def _apt(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    return subprocess.run(
        ["apt-get", "-y", "-q", "-o", "DPkg::Lock::Timeout=300", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


@contextmanager
def _packages() -> Iterator[None]:
    """SLURM's programs on PATH; the packages (and users) installed for them purged at the end."""
    if all(shutil.which(p, path=SEARCH_PATH) for p in PROGRAMS):
        yield
        return
    if os.geteuid() != 0:
        raise ClusterUnavailable(f"{' and '.join(PACKAGES)} are not installed and this is not root")
    if not shutil.which("apt-get") or not shutil.which("dpkg-query"):
        raise ClusterUnavailable(f"{' and '.join(PACKAGES)} are not installed and there is no apt-get")
    before, (users, groups), debs = _installed_packages(), _accounts(), set(ARCHIVES.glob("*.deb"))
    new: list[str] = []
    try:
        done = _apt("install", "--no-install-recommends", *PACKAGES)
        if done.returncode != 0:  # a fresh machine: no package lists yet
            _apt("update")
            done = _apt("install", "--no-install-recommends", *PACKAGES)
        new = sorted(_installed_packages() - before)
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["no message"])[-1]
            raise ClusterUnavailable(f"apt-get install {' '.join(PACKAGES)} failed: {last}")
        missing = [p for p in PROGRAMS if not shutil.which(p, path=SEARCH_PATH)]
        if missing:
            raise ClusterUnavailable(f"installed {' '.join(PACKAGES)} but {', '.join(missing)} missing")
        yield
    finally:
        if new:
            _apt("purge", *new)
        for deb in set(ARCHIVES.glob("*.deb")) - debs:  # the downloads apt-get keeps
            deb.unlink(missing_ok=True)
        now_users, now_groups = _accounts()  # where the packages' purge leaves them behind
        for user in sorted((now_users - users) & set(ACCOUNTS)):
            subprocess.run(["userdel", user], capture_output=True)
        for group in sorted((now_groups - groups) & set(ACCOUNTS)):
            subprocess.run(["groupdel", group], capture_output=True)


def _free_ports(n: int) -> list[int]:
    sockets = [socket.socket() for _ in range(n)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def _node_line(host: str) -> str:
    """This host's CPUs, layout and memory as slurmd itself reads them (``slurmd -C``)."""
    out = subprocess.run(
        [shutil.which("slurmd", path=SEARCH_PATH), "-C"], capture_output=True, text=True, timeout=60
    ).stdout
    fields = [f for f in out.splitlines()[0].split() if not f.startswith("NodeName=")]
    return f"NodeName={host} NodeAddr=127.0.0.1 {' '.join(fields)} State=UNKNOWN"


def slurm_conf(root: Path, host: str, node: str, ports: list[int]) -> str:
    return "\n".join(
        [
            "ClusterName=rbmlabtest",
            f"SlurmctldHost={host}(127.0.0.1)",
            f"SlurmctldPort={ports[0]}",
            f"SlurmdPort={ports[1]}",
            "SlurmUser=root",
            "SlurmdUser=root",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            # a requeued job waits cred_expire seconds before it may start again (default 120)
            f"AuthInfo=socket={root / 'munge.socket'},cred_expire=10",
            f"StateSaveLocation={root / 'state'}",
            f"SlurmdSpoolDir={root / 'spool'}",
            f"SlurmctldPidFile={root / 'slurmctld.pid'}",
            f"SlurmdPidFile={root / 'slurmd.pid'}",
            f"SlurmctldLogFile={root / 'slurmctld.log'}",
            f"SlurmdLogFile={root / 'slurmd.log'}",
            f"PlugStackConfig={root / 'plugstack.conf'}",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "SwitchType=switch/none",
            "MpiDefault=none",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core",  # one job a core, so an array's jobs run together
            "AccountingStorageType=accounting_storage/none",
            "JobAcctGatherType=jobacct_gather/none",
            "JobCompType=jobcomp/none",
            "JobRequeue=1",  # batch jobs requeueable (scontrol requeue)
            "MinJobAge=300",  # scontrol show job reads an ended job for 5 min
            "SchedulerParameters=sched_interval=2,bf_interval=2",  # a requeued job restarts soon
            "KillWait=5",
            "ReturnToService=2",
            "SlurmctldTimeout=30",
            "SlurmdTimeout=30",
            node,
            f"PartitionName={PARTITION} Nodes={host} Default=YES MaxTime=INFINITE State=UP",
            "",
        ]
    )


def _tail(path: Path, lines: int = 15) -> str:
    if not path.exists():
        return f"--- {path.name}: absent"
    return f"--- {path.name}:\n" + "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


@contextmanager
def _daemon(argv: list[str], root: Path, name: str, env: dict[str, str]) -> Iterator[subprocess.Popen]:
    """One daemon in the foreground, our child: stopped by its PID (SIGTERM, then SIGKILL)."""
    with open(root / f"{name}.out", "w") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=30)


def _wait(what: str, ready, procs: list[subprocess.Popen], root: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        dead = [p.args[0] for p in procs if p.poll() is not None]
        if dead or time.monotonic() > deadline:
            logs = "\n".join(
                _tail(root / f)
                for f in ("munged.out", "slurmctld.log", "slurmctld.out", "slurmd.log", "slurmd.out")
            )
            why = f"{', '.join(dead)} exited" if dead else f"not within {timeout:.0f} s"
            raise ClusterFailed(f"SLURM did not come up: {what}: {why}\n{logs}")
        time.sleep(0.2)


def _queue(env: dict[str, str]) -> list[str]:
    done = subprocess.run(["squeue", "-h", "-o", "%i"], env=env, capture_output=True, text=True, timeout=30)
    return done.stdout.split()


def _drain(env: dict[str, str], timeout: float = 60) -> None:
    """Cancel the jobs a test left and wait until they have ended (their processes gone)."""
    jobs = _queue(env)
    if jobs:
        subprocess.run(["scancel", *jobs], env=env, capture_output=True, timeout=30)
    deadline = time.monotonic() + timeout
    while _queue(env) and time.monotonic() < deadline:
        time.sleep(0.5)


def node_state(env: dict[str, str]) -> str:
    done = subprocess.run(
        ["sinfo", "-h", "-p", PARTITION, "-o", "%T"], env=env, capture_output=True, text=True, timeout=30
    )
    return done.stdout.strip() if done.returncode == 0 else ""


@contextmanager
def slurm_cluster(timeout: float = 120) -> Iterator[dict[str, str]]:
    """A private single-node SLURM cluster, up and idle: yields the environment that reaches it."""
    with ExitStack() as stack:
        stack.enter_context(_packages())
        root = Path(tempfile.mkdtemp(prefix="rbmlab-slurm-"))
        stack.callback(shutil.rmtree, root, True)
        for sub in ("state", "spool"):
            (root / sub).mkdir()
        (root / "plugstack.conf").write_text("")
        key = root / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o600)
        env = {**os.environ, "SLURM_CONF": str(root / "slurm.conf"), "PATH": SEARCH_PATH}
        host = socket.gethostname().split(".")[0]
        (root / "slurm.conf").write_text(slurm_conf(root, host, _node_line(host), _free_ports(2)))
        procs: list[subprocess.Popen] = []
        munged = shutil.which("munged", path=SEARCH_PATH)
        procs.append(
            stack.enter_context(
                _daemon(
                    [
                        munged,
                        "--foreground",
                        "--force",
                        f"--socket={root / 'munge.socket'}",
                        f"--key-file={key}",
                        f"--pid-file={root / 'munged.pid'}",
                        f"--log-file={root / 'munged.log'}",
                        f"--seed-file={root / 'munged.seed'}",
                    ],
                    root,
                    "munged",
                    env,
                )
            )
        )
        _wait("munged", (root / "munge.socket").exists, procs, root, timeout)
        for daemon in ("slurmctld", "slurmd"):
            procs.append(
                stack.enter_context(
                    _daemon(
                        [shutil.which(daemon, path=SEARCH_PATH), "-D", "-f", str(root / "slurm.conf")],
                        root,
                        daemon,
                        env,
                    )
                )
            )
        _wait(
            f"node {host} idle in partition {PARTITION}",
            lambda: node_state(env) == "idle",
            procs,
            root,
            timeout,
        )
        stack.callback(_drain, env)
        previous = os.environ.get("SLURM_CONF")
        os.environ["SLURM_CONF"] = env["SLURM_CONF"]
        stack.callback(
            lambda: (
                os.environ.pop("SLURM_CONF")
                if previous is None
                else os.environ.__setitem__("SLURM_CONF", previous)
            )
        )
        yield env
