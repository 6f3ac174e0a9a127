"""JupyterLab as the course runs it (`make lab`, and scripts/lab_server.py for the browser test).

The Makefile puts this folder on JUPYTER_CONFIG_PATH, so Jupyter reads this file next to the
learner's own configuration. It serves the repository root (notebooks/, exercises/, README),
opens the tour, and puts the virtual environment first on PATH for everything the server
starts: kernels and the Lab's terminals find `kubelab` (`kubelab grade 1.1`). As root (a
workshop container) it allows root; with no display it opens no browser (the URL is printed).
After each save it keeps `git status` clean for a notebook that only gained outputs.
"""

import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

c = get_config()  # type: ignore[name-defined]  # noqa: F821 (Jupyter defines it in config files)

# The course folder: this repository, or (a Zero to JupyterHub image, docs/workshop/values.yaml)
# the learner's own copy of the course named by KUBELAB_COURSE.
REPO = Path(os.environ.get("KUBELAB_COURSE") or Path(__file__).resolve().parent.parent.parent)
VENV_BIN = str(Path(sys.executable).parent)  # the server runs on the venv's python

c.ServerApp.root_dir = str(REPO)
c.LabApp.default_url = "/lab/tree/notebooks/00_tour.ipynb"
# jupyter refuses root ("Running as root is not recommended. Use --allow-root") unless told.
c.ServerApp.allow_root = hasattr(os, "geteuid") and os.geteuid() == 0
# A desktop has a display (macOS and Windows always do); a container or an ssh session has none.
c.ServerApp.open_browser = sys.platform in ("darwin", "win32") or bool(
    os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))

# Kernels and terminals inherit the server's environment: the venv first on PATH.
if os.environ.get("PATH", "").split(os.pathsep)[0] != VENV_BIN:
    os.environ["PATH"] = os.pathsep.join([VENV_BIN, os.environ.get("PATH", "")])
os.environ["VIRTUAL_ENV"] = str(Path(VENV_BIN).parent)
# Jupyter starts a terminal as a login shell when it has no terminal of its own, and a login
# shell reads /etc/profile, which resets PATH. An interactive shell keeps the PATH above.
_shell = os.environ.get("SHELL") or shutil.which("bash") or shutil.which("sh") or "sh"
c.ServerApp.terminado_settings = {"shell_command": [_shell, "-i"]}


def refresh_git_index(os_path: str, **_: object) -> None:
    """After each save of a notebook, tell git that it still holds the committed notebook.

    git's clean filter (nbstripout, see .gitattributes) hands git the notebook without its
    outputs, but `git status` takes a file whose size changed for modified without running the
    filter, and `git pull` then refuses to update it. So when the filtered notebook is exactly
    what git's index holds, the index entry is refreshed (`git update-index`: the same blob,
    new file stats). A notebook the learner really edited stays modified, as it should.
    """
    if not os_path.endswith(".ipynb"):
        return
    folder, name = os.path.split(os_path)

    def git(*args: str) -> str:
        done = subprocess.run(["git", "-C", folder, *args], capture_output=True, text=True)
        return done.stdout.strip() if done.returncode == 0 else ""

    staged = git("ls-files", "--stage", "--", name).split()  # mode, blob, stage, path
    if len(staged) >= 2 and git("hash-object", "--path", name, "--", name) == staged[1]:
        git("update-index", "--", name)


c.ContentsManager.post_save_hook = refresh_git_index
# jupyter_server sets the hook twice while it builds its contents manager and warns that the
# second overrides the first: the same hook, nothing to tell a learner.
warnings.filterwarnings("ignore", message=r"Overriding existing post_save_hook \(refresh_git_index\)")
