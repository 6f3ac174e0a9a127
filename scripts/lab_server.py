"""Start JupyterLab headless for a test or a demo, leaving nothing behind.

    python scripts/lab_server.py --root DIR [--port 0] [--token TOKEN]

The server runs with the course's own configuration, as `make lab` does
(scripts/jupyter/jupyter_server_config.py: the tour as the start page, the venv first on PATH in
kernels and terminals, a clean `git status` after a save), served from --root (a copy of the
repository in tests). It listens on 127.0.0.1 only, on a free port (or --port), asks for a
token, opens no browser, exposes the Lab's app to page scripts (`window.jupyterapp`, so a test
can run Lab commands), and keeps every piece of Jupyter state (config, runtime, data, lab settings and
workspaces, IPython's profile) in a temporary folder, so neither the repository nor the home
directory changes. JupyterLab's first-run questions are answered in those settings: no news
feed, no update check.

When the server answers, one JSON line goes to stdout: {"url", "token", "port", "root", "pid"}.
The script then waits for the server; SIGTERM or SIGINT stops the server and removes the
temporary folder. tests/test_browser.py starts it this way.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from types import FrameType

# JupyterLab 4's first-run questions, answered in its user settings: do not ask "Would you like
# to receive official Jupyter news?", do not look for updates (there is no network), and start
# the notebook's own kernel without the "Select Kernel" dialog. Cells are all kept in the page
# (no windowing), so a test can find an output however far down it is.
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings":
        {"fetchNews": "false", "checkForUpdates": False},
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings":
        {"autoStartDefaultKernel": True, "windowingMode": "none"},
}


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def isolated_env(state: Path) -> dict[str, str]:
    """Jupyter's environment variables pointing into `state`, with the lab settings written."""
    dirs = {name: state / name for name in ("config", "runtime", "data", "settings", "workspaces",
                                             "ipython")}
    for path in dirs.values():
        path.mkdir(parents=True, exist_ok=True)
    # The server side of the same: no news feed (None turns it off), never check for updates.
    (dirs["config"] / "jupyter_lab_config.json").write_text(json.dumps({"LabApp": {
        "news_url": None, "check_for_updates_class": "jupyterlab.NeverCheckForUpdate"}}),
        encoding="utf-8")
    for relative, values in LAB_SETTINGS.items():
        target = dirs["settings"] / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(values), encoding="utf-8")
    course_config = str(Path(__file__).resolve().parent / "jupyter")
    config_path = os.pathsep.join(filter(None, [course_config, os.environ.get("JUPYTER_CONFIG_PATH")]))
    return dict(os.environ, JUPYTER_CONFIG_DIR=str(dirs["config"]), JUPYTER_CONFIG_PATH=config_path,
                JUPYTER_RUNTIME_DIR=str(dirs["runtime"]), JUPYTER_DATA_DIR=str(dirs["data"]),
                JUPYTERLAB_SETTINGS_DIR=str(dirs["settings"]),
                JUPYTERLAB_WORKSPACES_DIR=str(dirs["workspaces"]), IPYTHONDIR=str(dirs["ipython"]),
                JUPYTER_PLATFORM_DIRS="1", PYDEVD_DISABLE_FILE_VALIDATION="1")


def command(root: Path, port: int, token: str) -> list[str]:
    return [sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
            "--LabApp.expose_app_in_browser=True"]


def wait_until_up(url: str, token: str, server: subprocess.Popen[bytes], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"jupyter lab exited with code {server.returncode} before answering")
        try:
            with urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2) as reply:
                if reply.status == 200:
                    return
        except OSError:
            time.sleep(0.25)
    raise TimeoutError(f"jupyter lab did not answer at {url} within {timeout:g} s")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, required=True, help="the folder the server serves")
    parser.add_argument("--port", type=int, default=0, help="0: a free port")
    parser.add_argument("--token", default="", help="default: a random one")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for start-up")
    args = parser.parse_args(argv)
    if not args.root.is_dir():
        parser.error(f"--root {args.root} is not a directory")
    token = args.token or secrets.token_hex(16)
    port = args.port or free_port()
    url = f"http://127.0.0.1:{port}"
    state = Path(tempfile.mkdtemp(prefix="kubelab-lab-"))
    log = (state / "server.log").open("wb")
    server = subprocess.Popen(command(args.root.resolve(), port, token), env=isolated_env(state),
                              stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    asked_to_stop: list[float] = []  # when SIGTERM was passed on to the server

    def stop_server() -> None:
        if server.returncode is None and not asked_to_stop:
            asked_to_stop.append(time.monotonic())
            os.kill(server.pid, signal.SIGTERM)  # JupyterLab shuts its kernels down on SIGTERM

    def on_signal(_signum: int, _frame: FrameType | None) -> None:
        stop_server()  # only pass it on: waiting here could deadlock with the loop below

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    code = 0
    try:
        wait_until_up(url, token, server, args.timeout)
        print(json.dumps({"url": url, "token": token, "port": port, "root": str(args.root.resolve()),
                          "pid": server.pid}), flush=True)
    except (RuntimeError, TimeoutError) as err:
        log.flush()
        print(f"lab_server: {err}\n{(state / 'server.log').read_text(errors='replace')[-3000:]}",
              file=sys.stderr)
        stop_server()
        code = 1
    while server.poll() is None:  # poll, not wait(): a signal may arrive at any moment
        if asked_to_stop and time.monotonic() > asked_to_stop[0] + 10:
            server.kill()  # it did not stop within 10 s
        time.sleep(0.2)
    log.close()
    shutil.rmtree(state, ignore_errors=True)
    return code

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
