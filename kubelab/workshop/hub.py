"""JupyterHub for a workshop: its settings, the learners' runtime, and the hub's process.

The settings live in the state folder (default .workshop/ in the repository, mode 0700):
workshop.json (read by jupyterhub_config.py, next to this file), the hub's database and cookie
secret, hub.pid. JupyterHub's own pieces do the work: SharedPasswordAuthenticator (one
workshop password for the learners, the instructor's own admin password), LocalProcessSpawner
(each learner's `jupyterhub-singleuser` as their system user, in ~/kubelab, opening the tour),
and the Python implementation of configurable-http-proxy from the same virtual environment
(pip installs it with the rest; npm's would need Node.js on the instructor's machine).

The learners run the instructor's virtual environment. When its interpreter cannot be reached by
other users (a pyenv Python under a home of mode 0700, say), runtime() builds a small bridge in
the repository (.workshop-runtime/: the learners can reach it, they clone the repository): a
venv of a system Python of the same version whose site-packages load the instructor's (a .pth
file), with the course's kernel and commands. JupyterLab's extensions stay the instructor's
(JUPYTER_PATH, JUPYTER_CONFIG_PATH, JUPYTERLAB_DIR).

Resource limits per learner: mem_limit and cpu_limit are stated (printed at start, and passed
by LocalProcessSpawner to each Lab as MEM_LIMIT and CPU_LIMIT), not enforced: LocalProcessSpawner
enforces none. On Kubernetes (docs/workshop/values.yaml) the same numbers are the pods' limits.
"""

from __future__ import annotations

import compileall
import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import stat
import subprocess
import sys
import sysconfig
import time
import urllib.request
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import kubelab
from kubelab.workshop.learners import Learner, check_name, lookup, provision

__all__ = ["DEFAULT_STATE", "Workshop", "reachable_by_others", "remove", "runtime", "start", "stop"]

DEFAULT_STATE = ".workshop"
CONFIG = Path(__file__).resolve().parent / "jupyterhub_config.py"
START_PAGE = "/lab/tree/notebooks/00_tour.ipynb"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Workshop:
    """What the hub is started with; saved as workshop.json in the state folder."""

    repo: str
    state: str
    learners: list[str]
    instructor: str = "instructor"
    password: str = ""                # the learners' shared workshop password
    admin_password: str = ""          # the instructor's (JupyterHub wants 32 characters or more)
    ip: str = "0.0.0.0"
    port: int = 8000
    python: str = sys.executable      # the interpreter the learners' servers and kernels run
    environment: dict[str, str] = field(default_factory=dict)
    mem_limit: str = "1G"
    cpu_limit: float = 1.0
    created: list[str] = field(default_factory=list)  # users this workshop made

    @classmethod
    def new(cls, repo: Path, state: Path, learners: list[str], **options: object) -> Workshop:
        names = [check_name(n) for n in learners]
        if len(set(names)) != len(names):
            raise ValueError("learner names must differ")
        workshop = cls(repo=str(repo.resolve()), state=str(state.resolve()), learners=names,
                       **options)  # type: ignore[arg-type]
        check_name(workshop.instructor)
        if workshop.instructor in names:
            raise ValueError(f"the instructor {workshop.instructor!r} is not also a learner")
        workshop.password = workshop.password or "-".join(secrets.token_hex(2) for _ in range(3))
        if len(workshop.password) < 8:
            raise ValueError("the workshop password needs 8 characters or more (JupyterHub's rule)")
        workshop.admin_password = workshop.admin_password or secrets.token_urlsafe(24)
        return workshop

    @property
    def folder(self) -> Path:
        return Path(self.state)

    @property
    def settings_file(self) -> Path:
        return self.folder / "workshop.json"

    def save(self) -> Path:
        self.folder.mkdir(parents=True, exist_ok=True)
        os.chmod(self.folder, 0o700)  # the passwords, the hub's database and cookie secret
        fd = os.open(self.settings_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(asdict(self), out, indent=2, sort_keys=True)
        return self.settings_file

    @classmethod
    def load(cls, state: Path) -> Workshop:
        path = state / "workshop.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except OSError as err:
            raise ValueError(f"no workshop in {state} ({err.strerror}): run `kubelab workshop start` "
                             "first, or pass --state") from err
        return cls(**data)

    def learner_users(self) -> list[Learner]:
        found = [lookup(n) for n in self.learners]
        missing = [n for n, f in zip(self.learners, found, strict=True) if f is None]
        if missing:
            raise ValueError(f"no such user: {', '.join(missing)} (was the workshop started?)")
        return [f for f in found if f is not None]

    def url(self) -> str:
        host = "127.0.0.1" if self.ip in ("0.0.0.0", "", "127.0.0.1") else self.ip
        return f"http://{host}:{self.port}"


def reachable_by_others(path: Path) -> bool:
    """Whether a user with no special rights can run `path` (every folder above it searchable)."""
    real = path.resolve()
    for folder in real.parents:
        if not os.stat(folder).st_mode & stat.S_IXOTH:
            return False
    mode = os.stat(real).st_mode
    return bool(mode & stat.S_IXOTH and mode & stat.S_IROTH)


def runtime(repo: Path, say: Callable[[str], None]) -> tuple[str, dict[str, str]]:
    """The interpreter the learners run, and the environment their servers get. A bridge is
    built in the repository (.workshop-runtime/), which the learners can reach: they clone it."""
    venv_bin = Path(sys.executable).parent
    here = Path(kubelab.__file__).resolve().parent.parent  # the kubelab the hub itself runs
    env = {"PATH": os.pathsep.join([str(venv_bin), "/usr/local/bin", "/usr/bin", "/bin"]),
           "PYTHONPATH": str(here)}
    if reachable_by_others(Path(sys.executable)) and reachable_by_others(Path(sys.prefix) / "pyvenv.cfg"):
        return sys.executable, env
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    candidates = [Path(p) / f"python{version}" for p in ("/usr/bin", "/usr/local/bin")]
    system = next((c for c in candidates if c.exists() and reachable_by_others(c)), None)
    if system is None:
        raise ValueError(f"the learners cannot run this course's Python ({Path(sys.executable).resolve()}: "
                         f"a folder above it is private) and there is no system python{version} to "
                         "bridge to: build the venv from a Python every user can run "
                         f"(`make workshop PYTHON=/usr/bin/python{version}`)")
    bridge = repo / ".workshop-runtime"
    python = bridge / "bin" / "python"
    if not python.exists():
        subprocess.run([str(system), "-m", "venv", "--without-pip", str(bridge)], check=True)
        say(f"the learners cannot reach {Path(sys.executable).resolve()}: built {bridge} on {system}, "
            "loading this venv's packages")
    ask = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    site = Path(subprocess.run([str(python), "-c", ask], capture_output=True, text=True,
                               check=True).stdout.strip())
    (site / "kubelab-workshop.pth").write_text(
        f"import site; site.addsitedir({sysconfig.get_paths()['purelib']!r})\n", encoding="utf-8")
    for command, module in (("kubelab", "kubelab"), ("jupyterhub-singleuser", "jupyterhub.singleuser")):
        script = bridge / "bin" / command
        script.write_text(f"#!{python}\nimport runpy\nrunpy.run_module({module!r}, run_name='__main__')\n",
                          encoding="utf-8")
        script.chmod(0o755)
    kernel = bridge / "share" / "jupyter" / "kernels" / "python3"
    kernel.mkdir(parents=True, exist_ok=True)
    path = os.pathsep.join([str(bridge / "bin"), "/usr/local/bin", "/usr/bin", "/bin"])
    # The same name and display name as the venv's kernel (the committed notebooks name it).
    (kernel / "kernel.json").write_text(json.dumps({
        "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3", "language": "python",
        "env": {"PATH": path, "PYTHONPATH": str(here)}}, indent=1), encoding="utf-8")
    for folder in [*[p for p in bridge.rglob("*") if p.is_dir()], bridge]:
        folder.chmod(0o755)
    share = Path(sys.prefix) / "share" / "jupyter"
    # The venv's server extensions (JupyterLab itself, jupytext) are enabled in its etc/jupyter.
    env.update(JUPYTER_CONFIG_PATH=str(Path(sys.prefix) / "etc" / "jupyter"))
    env.update(PATH=path, JUPYTER_PATH=os.pathsep.join([str(bridge / "share" / "jupyter"), str(share)]),
               JUPYTERLAB_DIR=str(share / "lab"))
    return str(python), env


def start(workshop: Workshop, say: Callable[[str], None] = print,
          ready: Callable[[], None] | None = None) -> int:
    """Make the learners, start JupyterHub, say where it is, and wait until it stops."""
    if not (hasattr(os, "geteuid") and os.geteuid() == 0):
        raise ValueError("JupyterHub starts each learner's server as that learner's system user, "
                         "which only root can do: run `sudo make workshop` (or `sudo kubelab workshop "
                         "start`); for one learner on this machine, `make lab` needs no root")
    hub = shutil.which("jupyterhub", path=str(Path(sys.executable).parent))
    proxy = shutil.which("configurable-http-proxy", path=str(Path(sys.executable).parent))
    if hub is None or proxy is None:
        raise ValueError("JupyterHub is not installed in this venv: `make workshop` installs it "
                         "(pip install -e '.[workshop]')")
    workshop.save()
    # The learners cannot write __pycache__ in this tree: compiled once here, or every kernel
    # of every learner compiles all of kubelab before the tour's first cell answers.
    compileall.compile_dir(str(Path(kubelab.__file__).resolve().parent), quiet=1)
    workshop.python, workshop.environment = runtime(Path(workshop.repo), say)
    if not reachable_by_others(Path(workshop.python)):
        raise ValueError(f"the learners cannot run {workshop.python}: a folder above it is private")
    for name in [*workshop.learners, workshop.instructor]:
        if lookup(name) is None and name not in workshop.created:
            workshop.created.append(name)  # recorded first: `remove` finds it even if set-up fails
            workshop.save()
        _learner, said = provision(name, Path(workshop.repo), workshop.python)
        for line in said:
            say(line)
    workshop.environment["PROXY"] = proxy
    workshop.environment["HUB_PORT"] = str(free_port())
    workshop.environment["PROXY_API_PORT"] = str(free_port())
    settings = workshop.save()
    env = dict(os.environ, KUBELAB_WORKSHOP=str(settings))
    log = os.fdopen(os.open(workshop.folder / "jupyterhub.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND,
                            0o600), "ab")
    server = subprocess.Popen([sys.executable, "-m", "jupyterhub", "-f", str(CONFIG)], cwd=workshop.folder,
                              env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                              umask=0o077)
    (workshop.folder / "hub.pid").write_text(f"{os.getpid()}\n", encoding="utf-8")
    stopping: list[float] = []

    def on_signal(_signum: int, _frame: object) -> None:
        if server.poll() is None and not stopping:
            stopping.append(time.monotonic())
            os.kill(server.pid, signal.SIGTERM)  # the hub stops the learners' servers and the proxy

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        _wait_until_up(workshop.url(), server)
    except (RuntimeError, TimeoutError) as err:
        on_signal(0, None)
        server.wait(timeout=30)
        tail = (workshop.folder / "jupyterhub.log").read_text(errors="replace")[-3000:]
        raise ValueError(f"{err}\n{tail}") from err
    everywhere = workshop.ip == "0.0.0.0"
    where = f" (on {workshop.ip}:{workshop.port}: every address of this machine)" if everywhere else ""
    say(f"JupyterHub is up: {workshop.url()}/{where}")
    say(f"learners: {', '.join(workshop.learners)}; workshop password: {workshop.password}")
    say(f"instructor (admin): {workshop.instructor}; password: {workshop.admin_password}")
    say(f"each learner: a Lab on their own ~/{'kubelab'} opening the tour; mem_limit {workshop.mem_limit}, "
        f"cpu_limit {workshop.cpu_limit:g}")
    say(f"stop it with Ctrl-C, or `kubelab workshop stop --state {workshop.folder}` (pid {os.getpid()})")
    if ready is not None:
        ready()
    while server.poll() is None:
        # The hub stops each Lab (SIGINT, then SIGTERM, then SIGKILL: up to 20 s each, all at
        # once) and the proxy; it is killed only if that has not ended in 90 s.
        if stopping and time.monotonic() > stopping[0] + 90:
            server.kill()
        time.sleep(0.2)
    log.close()
    for line in end_learner_processes(workshop):
        say(line)
    (workshop.folder / "hub.pid").unlink(missing_ok=True)
    say("JupyterHub stopped")
    return 0


def end_learner_processes(workshop: Workshop) -> list[str]:
    """After the hub: end what is left of the Labs and kernels of the users this workshop made
    (a hub killed mid-shutdown leaves them), found by their owner in /proc."""
    uids = {u.uid for u in (lookup(n) for n in workshop.created) if u is not None}
    left = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid in uids:
                    left.append(int(entry.name))
            except OSError:
                continue
    for pid in left:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return [f"ended {len(left)} process(es) the hub left of the learners"] if left else []


def _wait_until_up(url: str, server: subprocess.Popen[bytes], timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"jupyterhub exited with code {server.returncode} before answering")
        try:
            with urllib.request.urlopen(f"{url}/hub/api/", timeout=2) as reply:
                if reply.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise TimeoutError(f"JupyterHub did not answer at {url} within {timeout:g} s")


def remove(workshop: Workshop) -> list[str]:
    """After the workshop: delete the users (and their homes) this workshop created, no other."""
    lines = []
    if (Path(workshop.state) / "hub.pid").exists():
        raise ValueError("the workshop is running: `kubelab workshop stop` first")
    for name in list(workshop.created):
        if lookup(name) is not None:
            done = subprocess.run(["userdel", "--remove", name], capture_output=True, text=True)
            if done.returncode not in (0, 12):  # 12: the home could not be removed (said below)
                lines.append(f"{name}: not removed: {done.stderr.strip()}")
                continue
        workshop.created.remove(name)
        lines.append(f"removed the user {name} and their home")
    workshop.save()
    return lines


def stop(state: Path) -> str:
    """Stop the hub `kubelab workshop start` runs in `state` (its pid file), as Ctrl-C would."""
    try:
        pid = int((state / "hub.pid").read_text().strip())
    except (OSError, ValueError) as err:
        raise ValueError(f"no running workshop in {state} (no hub.pid)") from err
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        (state / "hub.pid").unlink(missing_ok=True)
        return f"the workshop (pid {pid}) was not running"
    return f"asked the workshop (pid {pid}) to stop"
