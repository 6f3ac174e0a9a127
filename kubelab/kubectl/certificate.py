"""`kubectl certificate approve|deny` (k8s.io/kubectl pkg/cmd/certificates/certificates.go).

For each request named, kubectl reads it and adds the condition (addConditionIfNeeded):
Approved, reason KubectlApprove, or Denied, reason KubectlDeny, with kubectl's message; a
request already so is printed unchanged (unless --force), and one with the opposite decision is
an error (`certificate signing request "x" is already Denied`). The update goes to the
/approval subresource (UpdateApproval), retried on a conflict after a fresh read, up to ten
times. Each request prints `certificatesigningrequest.certificates.k8s.io/<name> approved`.
`kubectl certificate` without approve or deny prints its help.
"""

from __future__ import annotations

import argparse

from kubelab.api.certificates import APPROVED, DENIED
from kubelab.api.errors import ApiError
from kubelab.api.meta import rfc3339
from kubelab.client.client import Client
from kubelab.kubectl.common import KubectlError

__all__ = ["certificate"]

_DECISIONS = {
    "approve": (DENIED, APPROVED, "KubectlApprove", "This CSR was approved by kubectl certificate approve.",
                "approved"),
    "deny": (APPROVED, DENIED, "KubectlDeny", "This CSR was denied by kubectl certificate deny.",
             "denied"),
}


HELP = """Modify certificate resources.

Available Commands:
  approve       Approve a certificate signing request
  deny          Deny a certificate signing request

Usage:
  kubectl certificate SUBCOMMAND [options]

Use "kubectl certificate <command> --help" for more information about a given command.
Use "kubectl options" for a list of global command-line options (applies to all commands).
"""


def certificate(client: Client, args: argparse.Namespace, now: float, stdin: str) -> str:
    sub, *names = args.args or [""]
    if sub not in _DECISIONS:
        return HELP  # cobra's help for a command without a Run, exit 0
    if not names:  # Validate: a plain error, not a usage error
        raise KubectlError("one or more CSRs must be specified as <name> or -f <filename>")
    must_not, condition, reason, message, done = _DECISIONS[sub]
    lines = []
    for name in names:
        for attempt in range(11):
            csr = client.get("certificatesigningrequests", name, "")
            status = csr.setdefault("status", {})
            conditions = list(status.get("conditions") or [])
            types = [c.get("type") for c in conditions]
            if must_not in types:
                raise KubectlError(f'certificate signing request "{name}" is already {must_not}')
            if condition in types and not args.force:
                break
            status["conditions"] = [*conditions, {"type": condition, "status": "True", "reason": reason,
                                                  "message": message, "lastUpdateTime": rfc3339(now)}]
            try:
                client.update(csr, subresource="approval")
            except ApiError as err:
                if err.code == 409 and attempt < 10:
                    continue
                raise
            break
        lines.append(f"certificatesigningrequest.certificates.k8s.io/{name} {done}\n")
    return "".join(lines)
