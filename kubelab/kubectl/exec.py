"""kubectl exec and attach, in the simulation: k8s.io/kubectl pkg/cmd/exec/exec.go and
pkg/cmd/attach/attach.go.

`exec POD [-c CONTAINER] [-i] [-t] -- COMMAND [ARGS...]` reads the pod, refuses a completed
one (`cannot exec into a container in a completed pod; current phase is Succeeded`), picks the
container (the kubectl.kubernetes.io/default-container annotation, else the first, saying so on
stderr when there was a choice: `Defaulted container "a" out of: a, b`), opens pods/exec and
drives the session: what `-i` reads is the stdin given (then end of input), and virtual time
passes until the command ends. A command that fails ends kubectl with its exit code, after
`command terminated with exit code N`, as the real kubectl does.

Where kubelab departs: there is no terminal, so the output is printed once the command ended
(stdout, then stderr); a command still running after WAIT_LIMIT virtual seconds is left running
and kubectl returns what it printed so far. `attach` shows what the main process prints in the
next virtual second (after the stdin given, with -i) and detaches, leaving it running.
"""

from __future__ import annotations

import argparse
from typing import Any

from kubelab.api import Object
from kubelab.client.client import Client
from kubelab.kubectl.common import KubectlError, Output, Verb, get_object
from kubelab.kubectl.verbs import pod_for

__all__ = ["ATTACH_WAIT", "VERBS", "WAIT_LIMIT"]

WAIT_LIMIT = 3600.0
ATTACH_WAIT = 1.0   # attach shows what the main process prints in the next virtual second
DEFAULT_CONTAINER = "kubectl.kubernetes.io/default-container"


def _usage(verb: str) -> str:
    if verb == "exec":
        return ("expected 'exec (POD | TYPE/NAME) [-c CONTAINER] [flags] -- COMMAND [args...]'.\n"
                "POD or TYPE/NAME is a required argument for the exec command\nSee 'kubectl exec "
                "-h' for help and examples")
    return ("expected POD, TYPE/NAME, or TYPE NAME, (at most 2 arguments) saw 0: []\nSee 'kubectl "
            "attach -h' for help and examples")


def _pod(client: Client, target: str, namespace: str) -> Object:
    kind, _, name = target.partition("/")
    if name and client.resource(kind).resource != "pods":  # the object's most active pod
        name, _note = pod_for(client, client.resource(kind).resource, name, namespace)
    pod = get_object(client, client.resource("pods"), name or target, namespace)
    phase = (pod.get("status") or {}).get("phase")
    if phase in ("Succeeded", "Failed"):
        raise KubectlError(f"cannot exec into a container in a completed pod; current phase is {phase}")
    return pod


def _container(pod: Object, given: str) -> tuple[str, str]:
    """(container, stderr note): podcmd.FindOrDefaultContainerByName."""
    if given:
        return given, ""
    spec = pod.get("spec") or {}
    names = [str(c.get("name")) for c in spec.get("containers") or ()]
    default = ((pod.get("metadata") or {}).get("annotations") or {}).get(DEFAULT_CONTAINER)
    if default in names:
        return str(default), ""
    if not names:
        return "", ""
    inits = [f"{c.get('name')} (init)" for c in spec.get("initContainers") or ()]
    note = ""
    if len(names) + len(inits) > 1:
        note = f'Defaulted container "{names[0]}" out of: {", ".join(names + inits)}\n'
    return names[0], note


def _drive(s: Any, args: argparse.Namespace, stdin: str, limit: float = WAIT_LIMIT
           ) -> tuple[str, str, int | None]:
    """Pump the session (an ExecSession) until its command ends, letting virtual time pass."""
    if args.stdin:
        if stdin:
            s.write(stdin.encode())
        s.close_stdin()
    out, err = bytearray(), bytearray()
    waited = 0.0
    while True:
        o, e = s.read()
        out += o
        err += e
        code = s.exit_code
        if code is not None or args.wait is None or waited >= limit:
            break
        step = min(1.0 if waited < 60 else 10.0, limit)
        args.wait(step)
        waited += step
    return out.decode(errors="replace"), err.decode(errors="replace"), code


def _exec(client: Client, args: argparse.Namespace, now: float, stdin: str) -> str:
    dash = args.args_at_dash
    if not args.args or dash == 0:
        raise KubectlError(_usage("exec"))
    if dash < 0 and len(args.args) > 1:
        raise KubectlError("exec [POD] [COMMAND] is not supported anymore. Use exec [POD] -- "
                           "[COMMAND] instead\nSee 'kubectl exec -h' for help and examples")
    target, command = args.args[0], args.args[max(dash, 1):]
    if not command:
        raise KubectlError("you must specify at least one command for the container")
    pod = _pod(client, target, args.namespace)
    container, note = _container(pod, args.container)
    session = client.exec(pod["metadata"]["name"], command, args.namespace, container=container,
                          stdin=args.stdin, tty=args.tty)
    out, err, code = _drive(session, args, stdin)
    text = note + out + err
    if code:
        return Output(f"{text}command terminated with exit code {code}", code)
    return text


def _attach(client: Client, args: argparse.Namespace, now: float, stdin: str) -> str:
    if not args.args:
        raise KubectlError(_usage("attach"))
    pod = _pod(client, args.args[0], args.namespace)
    container, note = _container(pod, args.container)
    session = client.attach(pod["metadata"]["name"], args.namespace, container=container,
                            stdin=args.stdin, tty=args.tty)
    out, err, _code = _drive(session, args, stdin, limit=ATTACH_WAIT)
    return note + "If you don't see a command prompt, try pressing enter.\n" * bool(args.tty) + out + err


VERBS: dict[str, Verb] = {"exec": _exec, "attach": _attach}
