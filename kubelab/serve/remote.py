"""Run kubelab.client's machinery against a real API server: `kubelab.serve.connect`.

    remote = kubelab.serve.connect("~/.kube/kubelab.yaml")    # or a real cluster's kubeconfig
    pods = remote.informers.informer_for("pods")
    remote.start()                                            # informers, and the clock's pacer
    ...
    copier = ConfigMapCopier(remote.context("copier")); copier.start()

The informers, reflectors, workqueues and controllers of the notebooks are the same objects;
only two things change. Their Client speaks HTTP (transport.py) instead of calling the API
server in the process, and their Clock, a plain simulated Clock, is advanced by a pacer task
with the wall clock (pacer.py), so a workqueue's backoff and a resync period last real
seconds. Everything runs on the asyncio loop's one thread (a Jupyter kernel's loop, or
asyncio.run in a script): watch events, the pacer and your handlers never run at once.
A request waits for its answer on that thread, so the server must live elsewhere (another
process, a real cluster): a `c.serve()` on the same loop could never answer it.
"""

from __future__ import annotations

import asyncio
import os
import random
from collections.abc import Callable
from pathlib import Path

from kubelab.api.request import Impersonation

# kubelab.serve only translates and never reaches kubelab.client, except here: this module is
# the client side of the edge (pyproject.toml lists it in the contract's ignore_imports).
from kubelab.client import Client, ComponentContext, SharedInformerFactory
from kubelab.serve.pacer import pace
from kubelab.serve.transport.restconfig import RestConfig, load_rest_config
from kubelab.serve.transport.transport import HTTPTransport
from kubelab.sim.clock import Clock
from kubelab.sim.trace import Trace

__all__ = ["Remote", "connect", "default_kubeconfig"]


def default_kubeconfig() -> Path:
    """kubectl's choice: the first file in $KUBECONFIG, else ~/.kube/config."""
    paths = [p for p in os.environ.get("KUBECONFIG", "").split(os.pathsep) if p]
    return Path(paths[0] if paths else "~/.kube/config").expanduser()


class Remote:
    """A Client over HTTP, a Clock that follows the wall clock, and informers on both."""

    def __init__(self, config: RestConfig, *, speed: float = 1.0, seed: int = 0,
                 user_agent: str = "kubelab-remote") -> None:
        self.config = config
        self.transport = HTTPTransport(config, user_agent=user_agent)
        self.client = Client(self.transport, token=config.token, user_agent=user_agent,
                             server=config.server)
        self.clock = Clock()
        self.trace = Trace(lambda: self.clock.now)
        self.rand = random.Random(seed)
        self.speed = speed
        self.informers = SharedInformerFactory(self.client, self.clock, rand=self.rand,
                                               trace=self.trace, name=user_agent)
        self._pacer: asyncio.Task[None] | None = None

    def context(self, name: str) -> ComponentContext:
        """What a component is handed (a controller of the notebooks takes one): this
        Remote's client, clock, random generator and trace, under the component's name."""
        return ComponentContext(name, self.client, self.clock, self.rand, self.trace)

    def start(self) -> None:
        """Start the informers asked for so far and pace the clock (on the running loop)."""
        if self._pacer is None:
            self._pacer = asyncio.get_running_loop().create_task(
                pace(lambda seconds: self.clock.run(until=self.clock.now + seconds), self.speed))
            self._pacer.add_done_callback(_report_crash)
        self.informers.start()

    def stop(self) -> None:
        """Stop the informers and the pacer, close every watch and the connection."""
        self.informers.stop()
        if self._pacer is not None:
            self._pacer.cancel()
            self._pacer = None
        self.transport.close()

    async def wait_for(self, predicate: Callable[[], bool], timeout: float = 10.0) -> bool:
        """Yield to the loop until predicate() holds or `timeout` real seconds pass."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not predicate():
            if loop.time() > deadline:
                return False
            await asyncio.sleep(0.02)
        return True


def _report_crash(task: asyncio.Task[None]) -> None:
    """A callback on the clock raised (an event handler, say): time has stopped. Say so now,
    as a goroutine's panic would, rather than when the task is garbage collected."""
    if not task.cancelled() and task.exception() is not None:
        asyncio.get_running_loop().call_exception_handler({
            "message": "kubelab.serve.connect: a callback on the clock raised; the clock stopped",
            "exception": task.exception(), "task": task})


def connect(kubeconfig: str | Path | None = None, *, context: str = "", speed: float = 1.0,
            seed: int = 0, impersonate: Impersonation | None = None) -> Remote:
    """A Remote for the kubeconfig's context (default: kubectl's kubeconfig, its
    current-context); impersonate: every request acts as that user (kubectl --as). Nothing is
    sent until you use the client or start()."""
    path = Path(kubeconfig).expanduser() if kubeconfig is not None else default_kubeconfig()
    return Remote(load_rest_config(path, context, impersonate), speed=speed, seed=seed)
