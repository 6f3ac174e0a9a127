"""kubectl over the client: the verbs the course uses, printing what kubectl prints.

One module per command family, as kubectl keeps pkg/cmd/<verb>/: cmd.py (the root command and
its parser), get.py, create.py, rollout.py, taint.py, explain.py, verbs.py (the rest), describe/
(pkg/describe), common.py (pkg/cmd/util), tableprinter.py (pkg/printers: the Tables the API
server sends, printed), tabwriter.py (Go's text/tabwriter).
"""

from kubelab.kubectl.cmd import KubectlError, Output, UsageError, kubectl, split_command

__all__ = ["KubectlError", "Output", "UsageError", "kubectl", "split_command"]
