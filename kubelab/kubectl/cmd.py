"""kubectl over the client: the verbs the course uses, printing what kubectl prints.

`cluster.kubectl("get pods -o wide")` returns the text kubectl would show; errors come back the
way kubectl shows them (`Error from server (NotFound): pods "x" not found`) with exit_code 1,
which is what kubectl's cmdutil.CheckErr does (k8s.io/kubectl pkg/cmd/util/helpers.go): a
usage error adds `See 'kubectl <verb> -h' for help and examples`. The verbs live beside this
file, one module per command family as kubectl's pkg/cmd/: get.py (get, delete), create.py
(apply, create, run), set.py (set image|env|resources), patch.py (patch, replace), verbs.py
(scale, label, annotate, cordon, describe, logs, version, api-resources), rollout.py, taint.py,
explain.py, top.py, autoscale.py. `--as`, `--as-group`
and `--as-uid` make every request of the command ask to act as that user, as the real
kubectl's Impersonate-* headers do.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from typing import Any

from kubelab.api.errors import ApiError, ParseError
from kubelab.api.request import Impersonation
from kubelab.client.client import Client
from kubelab.kubectl.autoscale import autoscale
from kubelab.kubectl.certificate import certificate
from kubelab.kubectl.common import KubectlError, Output, Printed, UsageError, Verb
from kubelab.kubectl.cp import VERBS as CP_VERBS
from kubelab.kubectl.create import VERBS as CREATE_VERBS
from kubelab.kubectl.drain import drain
from kubelab.kubectl.exec import VERBS as EXEC_VERBS
from kubelab.kubectl.get import VERBS as GET_VERBS
from kubelab.kubectl.patch import VERBS as PATCH_VERBS
from kubelab.kubectl.set import VERBS as SET_VERBS
from kubelab.kubectl.top import top
from kubelab.kubectl.verbs import VERBS as OTHER_VERBS

__all__ = ["KubectlError", "Output", "UsageError", "kubectl", "split_command"]

VERBS: dict[str, Verb] = {**GET_VERBS, **CREATE_VERBS, **OTHER_VERBS, **EXEC_VERBS, "drain": drain,
                          "top": top, "autoscale": autoscale, **CP_VERBS, **SET_VERBS, **PATCH_VERBS,
                          "certificate": certificate}
# The kubeconfig user kubectl runs as, as kubelab serve's kubeconfig names it; clientcmd's
# errors about the user's settings name it.
AUTH_INFO = "kubernetes-admin"


# A shell word: unquoted runs, '...' (literal), "..." (backslash escapes \\ \" \$ \`) and \x,
# matched in one pass. shlex builds each token a character at a time (quadratic: a 1 MiB
# argument took 23 s); this reads any length in linear time.
_WORD = re.compile(r"""\s*((?:[^\s'"\\]+|'[^']*'|"(?:[^"\\]|\\.)*"|\\.)+|(['"]))""", re.S)
_PART = re.compile(r"""[^'"\\]+|'([^']*)'|"((?:[^"\\]|\\.)*)"|\\(.)""", re.S)
_DQ_ESCAPE = re.compile(r"""\\([\\"$`\n])""")


def split_command(command: str) -> list[str]:
    """The words a POSIX shell would pass to kubectl for `command` (shlex.split's result)."""
    words, pos, end = [], 0, len(command.rstrip())
    while pos < end:
        m = _WORD.match(command, pos)
        if m is None or m.group(2):
            raise KubectlError("No closing quotation")
        words.append("".join(_unquote(p) for p in _PART.finditer(m.group(1))))
        pos = m.end()
    return words


def _unquote(part: re.Match[str]) -> str:
    single, double, escaped = part.groups()
    if single is not None:
        return single
    if double is not None:
        return _DQ_ESCAPE.sub(r"\1", double)
    return escaped if escaped is not None else part.group(0)


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="kubectl", add_help=False, allow_abbrev=False)
    p.add_argument("verb")
    p.add_argument("args", nargs="*")
    p.add_argument("-n", "--namespace", default="default")
    p.add_argument("-A", "--all-namespaces", action="store_true")
    p.add_argument("-o", "--output", default="")
    p.add_argument("-l", "--selector", default="")
    p.add_argument("--field-selector", default="")
    p.add_argument("--sort-by", default="")
    p.add_argument("--no-headers", action="store_true")
    p.add_argument("-f", "--filename", default="")
    p.add_argument("--image", action="append", default=[])
    p.add_argument("--labels", default="")
    p.add_argument("--replicas", type=int)
    p.add_argument("--port", type=int)
    p.add_argument("--from-literal", action="append", default=[])
    p.add_argument("--cascade", default="background", choices=["background", "foreground", "orphan"])
    p.add_argument("--grace-period", type=int)
    p.add_argument("--now", action="store_true")
    # a bool flag (pflag): --overwrite, --overwrite=true|false; None when not given (set env's
    # default is true, label's, annotate's and taint's false)
    p.add_argument("--overwrite", "--overwrite=true", dest="overwrite", action="store_const", const=True)
    p.add_argument("--overwrite=false", dest="overwrite", action="store_const", const=False)
    p.add_argument("--to-revision", type=int, default=0)
    p.add_argument("--revision", type=int, default=0)
    p.add_argument("-c", "--container", default="")
    p.add_argument("-p", "--previous", action="store_true")
    p.add_argument("--tail", type=int, default=-1)
    p.add_argument("--list", action="store_true")             # auth can-i
    p.add_argument("--subresource", default="")               # auth can-i
    p.add_argument("--timestamps", action="store_true")
    p.add_argument("--follow", action="store_true")
    p.add_argument("--since", default="")
    p.add_argument("--restart", default="")  # run: Always; create job: Never; cronjob: OnFailure
    p.add_argument("--command", action="store_true")
    p.add_argument("-e", "--env", action="append", default=[])
    p.add_argument("-i", "--stdin", action="store_true")
    p.add_argument("-t", "--tty", action="store_true")
    p.add_argument("-q", "--quiet", action="store_true")
    p.add_argument("--containers", action="store_true")  # top pod
    # autoscale
    p.add_argument("--min", type=int)
    p.add_argument("--max", type=int)
    p.add_argument("--cpu", default="")
    p.add_argument("--memory", default="")
    p.add_argument("--cpu-percent", type=int)
    p.add_argument("--name", default="")
    # cli-runtime's ConfigFlags: who to act as (rest.Config.Impersonate, the Impersonate-* headers).
    p.add_argument("--as", dest="as_user", default="")
    p.add_argument("--as-group", dest="as_groups", action="append", default=[])
    p.add_argument("--as-uid", dest="as_uid", default="")
    # --- i31-cron-pdb --- create cronjob / create job --from
    p.add_argument("--schedule", default="")
    p.add_argument("--from", dest="from_", default="")
    p.add_argument("--ignore-daemonsets", action="store_true")
    p.add_argument("--force", action="store_true")
    p.add_argument("--delete-emptydir-data", action="store_true")
    p.add_argument("--timeout", default="0")
    # --- sa --- create token
    p.add_argument("--duration", default="")
    p.add_argument("--audience", action="append", default=[])
    p.add_argument("--bound-object-kind", default="")
    p.add_argument("--bound-object-name", default="")
    p.add_argument("--bound-object-uid", default="")
    # --- quota --- create quota
    p.add_argument("--hard", default="")
    p.add_argument("--scopes", default="")
    # --- streams --- cp
    p.add_argument("--no-preserve", action="store_true")
    # set resources, set env, patch
    p.add_argument("--limits", default="")
    p.add_argument("--requests", default="")
    p.add_argument("--prefix", default="")
    p.add_argument("--patch", default="")
    p.add_argument("--patch-file", default="")
    p.add_argument("--type", dest="patch_type", default="")
    # apply --server-side
    p.add_argument("--server-side", action="store_true")
    p.add_argument("--field-manager", default="kubectl")
    p.add_argument("--force-conflicts", action="store_true")
    return p


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise KubectlError(message)


def _warnings(client: Client) -> str:
    """What kubectl's warning writer prints (on stderr) before the answer: each server warning
    once, as `Warning: <text>`."""
    return "".join(f"Warning: {text}\n" for text in client.take_warnings())


def kubectl(client: Client, command: str, now: float = 0.0, stdin: str = "",
            wait: Callable[[float], Any] | None = None) -> Output:
    """Run one kubectl command line against `client`. wait(seconds) lets virtual time pass
    (the cluster's run): exec, logs -f and drain's retries need it.

    Each kubectl run is its own process upstream, printing the warnings of its own requests
    only: the warnings `client` holds from earlier calls (c.client's) are set aside while the
    command runs and handed back to it afterwards, unprinted."""
    earlier = client.take_warnings()
    try:
        return _run(client, command, now, stdin, wait)
    finally:
        client.warnings = earlier


def _run(client: Client, command: str, now: float, stdin: str,
         wait: Callable[[float], Any] | None) -> Output:
    try:
        words = split_command(command)
        if words and words[0] == "kubectl":
            words = words[1:]
        if not words:
            raise KubectlError("You must specify a command: kubectl <command> [flags]")
        after_dash: list[str] | None = None
        if "--" in words:  # cobra's ArgsLenAtDash: what follows `--` is the command, verbatim
            at = words.index("--")
            words, after_dash = words[:at], words[at + 1:]
        if words[:1] == ["logs"] or words[1:2] == ["logs"]:  # logs -f is --follow, not a file
            words = ["--follow" if w == "-f" else w for w in words]
        if words[:1] == ["patch"]:  # patch -p is --patch, not logs' --previous (-p=P, -pP too)
            words = ["--patch" if w == "-p" else f"--patch={w[2:].removeprefix('=')}"
                     if w.startswith("-p") else w for w in words]
        args, unknown = _parser().parse_known_intermixed_args(words)
        args.wait = wait
        handler = VERBS.get(args.verb)
        if handler is None:
            raise KubectlError(f'unknown command "{args.verb}" for "kubectl"')
        for word in unknown:
            if word.startswith("--"):  # pflag's words, and cobra's pointer to --help
                raise KubectlError(f"unknown flag: {word.split('=', 1)[0]}\n"
                                   f"See 'kubectl {args.verb} --help' for usage.")
            if word.startswith("-") and word != "-":
                raise KubectlError(f"unknown shorthand flag: {word[1]!r} in {word}\n"
                                   f"See 'kubectl {args.verb} --help' for usage.")
        args.args += [w for w in unknown if not w.startswith("-") or w == "-"]
        args.args_at_dash = len(args.args) if after_dash is not None else -1
        args.args += after_dash or []
        args.output = args.output.removeprefix("=")  # pflag reads -o=json as json
        wanted = Impersonation(args.as_user, tuple(args.as_groups), args.as_uid)
        if wanted and not wanted.user:  # clientcmd validation.go validateAuthInfo
            raise KubectlError(f"requesting uid, groups or user-extra for {AUTH_INFO} without "
                               "impersonating a user")
        if wanted:  # --as, --as-group, --as-uid: every request of this command acts as them
            client = client.impersonating(wanted)
        result = handler(client, args, now, stdin)
        if isinstance(result, Output):
            return Output(_warnings(client) + result.rstrip("\n"), result.exit_code)
        return Output(_warnings(client) + result.rstrip("\n"))
    except ApiError as err:
        if err.code == 404 and not err.details and err.message.startswith("the server doesn't have"):
            # Discovery found no such type: a NoResourceMatchError, which checkErr prints itself.
            return Output(f"error: {err.message}", 1)
        return Output(_warnings(client) + err.kubectl_message(), 1)
    except Printed as err:
        return Output(_warnings(client) + str(err), 1)
    except (KubectlError, ParseError, ValueError) as err:
        text = str(err)
        return Output(_warnings(client) + (text if text.startswith("error: ") else f"error: {text}"), 1)

