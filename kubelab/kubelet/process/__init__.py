"""The process model: what a simulated container runs, on the virtual clock.

    images.py    command/args over the image's ENTRYPOINT and CMD (the table of images)
    shell.py     the shell language of `sh -c` (a parser for a small, documented subset)
    programs.py  the programs (echo, sleep, cat, wget, nslookup, nginx, ...) and the shell
    filesystem.py  a container's files: its own, with the pod's volumes mounted over them
    process.py   the driver: a program's stdin, stdout, stderr and exit code; ExecSession

Read programs.py's docstring for the subset; anything else fails as a shell would (`sh: foo:
not found`, exit 127).
"""

from kubelab.kubelet.process.filesystem import FileSystem, Mount, ReadOnlyFileSystem
from kubelab.kubelet.process.images import (
    DEFAULT_APP,
    IMAGE_DEFAULTS,
    command_line,
    image_is_known,
    os_release,
)
from kubelab.kubelet.process.process import (
    IO,
    Attached,
    ContainerNetwork,
    HttpAnswer,
    Process,
    ProcessContext,
    ProcessSpec,
    Usage,
)
from kubelab.kubelet.process.programs import PROGRAMS, pid1, run_argv, serve_http, term_exit_code
from kubelab.kubelet.process.shell import ShellSyntaxError, parse

__all__ = ["DEFAULT_APP", "IMAGE_DEFAULTS", "IO", "PROGRAMS", "Attached", "ContainerNetwork",
           "FileSystem", "HttpAnswer", "Mount", "Process", "ProcessContext", "ProcessSpec",
           "ReadOnlyFileSystem", "ShellSyntaxError", "Usage", "command_line", "image_is_known",
           "os_release", "parse", "pid1", "run_argv", "serve_http", "term_exit_code"]
