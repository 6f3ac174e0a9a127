"""JupyterHub's configuration for `kubelab workshop start` (jupyterhub -f this file).

Everything it needs is in the workshop.json that $KUBELAB_WORKSHOP names (hub.py writes it):
the learners and the instructor, the passwords, where to listen, the interpreter and
environment of the learners' servers. Each setting is one of JupyterHub's own.
"""

import json
import os
import pwd
from pathlib import Path

c = get_config()  # type: ignore[name-defined]  # noqa: F821 (JupyterHub defines it in config files)

workshop = json.loads(Path(os.environ["KUBELAB_WORKSHOP"]).read_text(encoding="utf-8"))
state = Path(workshop["state"])
env = workshop["environment"]

c.JupyterHub.bind_url = f"http://{workshop['ip']}:{workshop['port']}"
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = int(env["HUB_PORT"])
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{env['PROXY_API_PORT']}"
# PyPI's configurable-http-proxy (the Python implementation), from the course's venv. It
# forwards a response once it is whole (no streaming), so the hub's spawn-progress events reach
# the "Your server is starting up" page all at once when the Lab is ready: the proxy must wait
# that long (its default, tornado's 20 s, is less than three Labs starting at once on two cores).
# It forwards with tornado's AsyncHTTPClient, whose default lets 10 requests run at once for
# the whole room and fails any that waits 20 s for a turn: "503 ... Timeout in request queue",
# which each Lab shows as "Server unavailable or unreachable" (seen in the browser test while a
# save took 30 s on a loaded machine). Twenty requests at a time per person in the room.
MAX_CLIENTS = 20 * (len(workshop["learners"]) + 1)
PROXY_MAIN = ("import sys; from tornado.httpclient import AsyncHTTPClient; "
              "AsyncHTTPClient.configure(None, max_clients=int(sys.argv.pop(1))); "
              "from configurable_http_proxy.cli import main; sys.argv[0] = 'configurable-http-proxy'; "
              "sys.exit(main())")
c.ConfigurableHTTPProxy.command = [str(Path(env["PROXY"]).parent / "python"), "-c", PROXY_MAIN,
                                   str(MAX_CLIENTS), "--proxy-timeout", str(300_000)]
c.ConfigurableHTTPProxy.pid_file = str(state / "proxy.pid")
c.JupyterHub.db_url = f"sqlite:///{state / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(state / "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = str(state / "jupyterhub.pid")

# A room: per-learner names, one shared workshop password; the instructor logs in as admin
# with a password of their own. Only the workshop's names may log in.
c.JupyterHub.authenticator_class = "shared-password"
c.SharedPasswordAuthenticator.user_password = workshop["password"]
c.SharedPasswordAuthenticator.admin_password = workshop["admin_password"]
c.Authenticator.allowed_users = set(workshop["learners"])
c.Authenticator.admin_users = {workshop["instructor"]}

# Each learner's JupyterLab as their own system user, on their own clone of the course,
# opening the tour, with the course's Jupyter configuration (the venv first on PATH, git kept
# clean after a save: scripts/jupyter/jupyter_server_config.py in their clone).
c.JupyterHub.spawner_class = "localprocess"
c.Spawner.cmd = [workshop["python"], "-m", "jupyterhub.singleuser"]
c.Spawner.default_url = "/lab/tree/notebooks/00_tour.ipynb"
c.Spawner.notebook_dir = "~/kubelab"
c.Spawner.mem_limit = workshop["mem_limit"]
c.Spawner.cpu_limit = float(workshop["cpu_limit"])
c.Spawner.http_timeout = 120
c.Spawner.start_timeout = 120


def _course_config(spawner):  # type: ignore[no-untyped-def]
    course = Path(pwd.getpwnam(spawner.user.name).pw_dir) / "kubelab" / "scripts" / "jupyter"
    return os.pathsep.join(filter(None, [str(course), env.get("JUPYTER_CONFIG_PATH")]))


c.Spawner.environment = {**{k: v for k, v in env.items() if k not in ("PROXY", "HUB_PORT", "PROXY_API_PORT")},
                         "JUPYTER_CONFIG_PATH": _course_config}
