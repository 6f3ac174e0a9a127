"""kubectl's mistakes exit 1 with the real kubectl's words (issue 28).

One table, run through `c.kubectl(...)`: a jsonpath template the parser refuses or that fails
while it runs (jsonpath_flags.go, printers/jsonpath.go, client-go util/jsonpath evalArray and
evalFilter: kubectl get allows missing keys, so a missing field prints nothing), an empty
`-o jsonpath=`, a --sort-by field that no object has or that does not parse (sorter.go; for a
Table, get.go drops the printer's error and says "No resources found", exit 0),
resource/name arguments cli-runtime's Builder refuses before sending anything (builder.go
splitResourceTypeName, hasCombinedTypeArgs), extra positional arguments for every verb (each
command's cobra Args, Complete or Validate), names that are not found (the Builder's
ContinueOnError: the others are handled first), a namespace that is not a DNS label, and
--as, --as-group and --as-uid (the Impersonate-* headers; clientcmd refuses groups or a uid
without a user before sending anything). The API server does not check the namespace in the
path: a list in `-n Bad_NS` is empty (exit 0), and a named object there is reported as the
namespace's NotFound, as cli-runtime's Info.Get does after its own NotFound.

Where the real kubectl is installed, the same command lines run against `kubelab serve` (with
the same two pods) and its exit code and printed text must be kubelab's (for a jsonpath
runtime error, the first line: the object dumped after it is the server's copy, which differs
in uid and timestamps). kubelab follows 1.34; the table was checked against the kubectl
installed where it was written, 1.32.4.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator

import pytest
from serve_helpers import KUBECTL, Served, serving

from kubelab import Cluster
from kubelab.kubectl import split_command
from kubelab.kubectl.jsonpathprinter import go_syntax

SLASH_FORM = "error: arguments in resource/name form must have a single resource and name"
NO_TEMPLATE = "error: template format specified but no template given"
SEPARATE = ("error: there is no need to specify a resource type as a separate argument when "
            "passing arguments in resource/name form (e.g. 'kubectl get resource/<resource_name>' "
            "instead of 'kubectl get resource resource/<resource_name>'")
HELP = "See 'kubectl {} -h' for help and examples"
IMPERSONATE_NO_USER = ("error: requesting uid, groups or user-extra for kubernetes-admin without "
                       "impersonating a user")
LOGS = ("error: expected 'logs [-f] [-p] (POD | TYPE/NAME) [-c CONTAINER]'.\n"
        "POD or TYPE/NAME is a required argument for the logs command\n" + HELP.format("logs"))


def executing(template: str, why: str) -> str:
    """The first line kubectl prints for a template that fails while it runs."""
    return (f'error: error executing jsonpath "{template}": Error executing template: {why}. '
            "Printing more information for debugging the template:")


# What both clusters hold: two pods in default, two to delete in the namespace other.
SETUP = ["run web --image nginx", "run db --image nginx", "create namespace other",
         "run gone --image nginx -n other", "run gone2 --image nginx -n other"]

# (command, exit code, what kubectl prints: stdout, then stderr). "..." ends a jsonpath runtime
# error's first line: the template and the object follow it.
CASES: list[tuple[str, int, str]] = [
    # -o jsonpath: parse errors, an empty template, run-time errors, missing keys.
    ("get pods -o jsonpath={.items", 1, "error: error parsing jsonpath {.items, unclosed action"),
    ("get pods -o 'jsonpath={.items[0].metadata.name'", 1,
     "error: error parsing jsonpath {.items[0].metadata.name, unclosed action"),
    ("get pods -o jsonpath=", 1, NO_TEMPLATE),
    ("get pods -o jsonpath", 1, NO_TEMPLATE),
    ("get pods web -o=jsonpath=", 1, NO_TEMPLATE),
    ("get pods -o jsonpath={.items[*].metadata.name}", 0, "db web"),
    ("get pods -o jsonpath={.bogus}", 0, ""),  # --allow-missing-template-keys defaults to true
    ("get pods -o jsonpath={.items[0].spec.nothing[0]}", 0, ""),  # nothing to index: nothing
    ("get pods -o jsonpath={.items[1:1]}", 0, ""),  # a slice of nothing is allowed
    ("get pods -o jsonpath={.items[5]}", 1,
     executing("{.items[5]}", "array index out of bounds: index 5, length 2") + "..."),
    ("get pods -o jsonpath={.items[-9]}", 1,
     executing("{.items[-9]}", "array index out of bounds: index -7, length 2") + "..."),
    ("get pods -o jsonpath={.items[0:5]}", 1,
     executing("{.items[0:5]}", "array index out of bounds: index 4, length 2") + "..."),
    ("get pods -o jsonpath={.items[2:1]}", 1,
     executing("{.items[2:1]}", "array index out of bounds: index 2, length 2") + "..."),
    ("get pods -o jsonpath={.items[1:0]}", 1,
     executing("{.items[1:0]}", "starting index 1 is greater than ending index 0") + "..."),
    ("get pods -o jsonpath={.items[::0]}", 1, executing("{.items[::0]}", "step must be > 0") + "..."),
    ("get pods -o jsonpath={.metadata[0]}", 1,
     executing("{.metadata[0]}", "map[string]interface {} is not array or slice") + "..."),
    ("get pods -o jsonpath={.kind[0]}", 1, executing("{.kind[0]}", "string is not array or slice") + "..."),
    ("get pods -o jsonpath={.items[*].metadata.name[0]}", 1,
     executing("{.items[*].metadata.name[0]}", "string is not array or slice") + "..."),
    ("get pods web -o jsonpath={.spec.containers[0].name[0]}", 1,
     executing("{.spec.containers[0].name[0]}", "string is not array or slice") + "..."),
    ("get pods -o jsonpath={.metadata[?(@.x)]}", 1,
     executing("{.metadata[?(@.x)]}", "map[resourceVersion:] is not array or slice and cannot be "
               "filtered") + "..."),
    # --sort-by. For a Table, get.go ignores the sorting printer's error: nothing is printed,
    # then "No resources found" (exit 0); for objects (-o name) the error is kubectl's.
    ("get pods --sort-by 5", 0, "No resources found in default namespace."),
    ("get pods -o name --sort-by 5", 1,
     'error: couldn\'t find any field with path "{.5}" in the list of objects'),
    ("get pods --sort-by {.metadata.name", 0, "No resources found in default namespace."),
    ("get pods -o name --sort-by {.metadata.name", 1,
     "error: unexpected path string, expected a 'name1.name2' or '.name1.name2' or '{name1.name2}' "
     "or '{.name1.name2}'"),
    ("get pods -o name --sort-by .metadata.name", 0, "pod/db\npod/web"),
    # resource/name arguments.
    ("get pods/", 1, SLASH_FORM),
    ("get /web", 1, SLASH_FORM),
    ("get pods,deployments/web", 1, SLASH_FORM),
    ("get pod/web/x", 1, "error: arguments in resource/name form may not have more than one slash"),
    ("get pods pod/web", 1, SEPARATE),
    ("delete pods/", 1, SLASH_FORM),
    ("rollout status deploy/web x", 1, SEPARATE),
    # -n with a namespace that is not a DNS label, and does not exist.
    ("get pods -n Bad_NS", 0, "No resources found in Bad_NS namespace."),
    ("get pods web -n Bad_NS", 1, 'Error from server (NotFound): namespaces "Bad_NS" not found'),
    ("get pods web -n Bad_NS -o name", 1, 'Error from server (NotFound): namespaces "Bad_NS" not found'),
    ("describe pods web -n Bad_NS", 1, 'Error from server (NotFound): namespaces "Bad_NS" not found'),
    ("label pods web a=b -n Bad_NS", 1, 'Error from server (NotFound): namespaces "Bad_NS" not found'),
    ("rollout status deploy web -n Bad_NS", 1,
     'Error from server (NotFound): namespaces "Bad_NS" not found'),
    ("delete pods zz -n Bad_NS", 1, 'Error from server (NotFound): pods "zz" not found'),  # no GET first
    # Extra positional arguments, verb by verb.
    ("get pods web extra -o name", 1, 'pod/web\nError from server (NotFound): pods "extra" not found'),
    ("version x", 1, "error: extra arguments: [x]"),
    ("api-resources x", 1, "error: unexpected arguments: [x]\n" + HELP.format("api-resources")),
    ("explain pods x", 1, "error: We accept only this format: explain RESOURCE"),
    ("logs web x y", 1, LOGS),
    ("create namespace a b", 1, "error: exactly one NAME is required, got 2\n"
     + HELP.format("create namespace")),
    ("create configmap a b", 1, "error: exactly one NAME is required, got 2\n"
     + HELP.format("create configmap")),
    ("create deployment a b --image=x", 1, "error: exactly one NAME is required, got 2\n"
     + HELP.format("create deployment")),
    ("apply -f missing.yaml y", 1, "error: Unexpected args: [y]\n" + HELP.format("apply")),
    ("create -f missing.yaml y", 1, "error: Unexpected args: [y]\n" + HELP.format("create")),
    ("label pods web a=b x", 1, "error: all resources must be specified before label changes: x"),
    ("annotate pods web a=b x", 1, "error: all resources must be specified before annotation changes: x"),
    ("taint nodes node-1 a=b:NoSchedule x", 1,
     "error: all resources must be specified before taint changes: x"),
    ("label pods web x a=b", 1, 'pod/web labeled\nError from server (NotFound): pods "x" not found'),
    ("annotate pods web x a=b", 1, 'pod/web annotated\nError from server (NotFound): pods "x" not found'),
    ("describe pods x y", 1, 'Error from server (NotFound): pods "x" not found\n'
     'Error from server (NotFound): pods "y" not found'),
    ("scale deploy x --replicas=1", 1, 'error: no objects passed to scale deployments.apps "x" not found'),
    ("scale deploy x y --replicas=1", 1, 'error: no objects passed to scale [deployments.apps "x" '
     'not found, deployments.apps "y" not found]'),
    ("rollout history deploy x", 1, 'Error from server (NotFound): deployments.apps "x" not found'),
    ("rollout pause deploy x y", 1, 'Error from server (NotFound): deployments.apps "x" not found\n'
     'Error from server (NotFound): deployments.apps "y" not found'),
    ("cordon a b", 1, 'Error from server (NotFound): nodes "a" not found'),  # stops at the first
    ("uncordon", 1, "error: USAGE: uncordon NODE [flags]\n" + HELP.format("uncordon")),
    ("scale deploy --replicas=1", 1, "error: resource(s) were provided, but no name was specified"),
    ("get pods x y -o name", 1, 'Error from server (NotFound): pods "x" not found\n'
     'Error from server (NotFound): pods "y" not found'),
    ("delete pods x y", 1, 'Error from server (NotFound): pods "x" not found\n'
     'Error from server (NotFound): pods "y" not found'),
    ("delete pods gone x -n other", 1, 'pod "gone" deleted from other namespace\n'
     'Error from server (NotFound): pods "x" not found'),
    ("delete pods x gone2 -n other", 1, 'pod "gone2" deleted from other namespace\n'
     'Error from server (NotFound): pods "x" not found'),
    ("label pods x y a=b", 1, 'Error from server (NotFound): pods "x" not found\n'
     'Error from server (NotFound): pods "y" not found'),
    ("taint nodes x y a=b:NoSchedule", 1, 'Error from server (NotFound): nodes "x" not found\n'
     'Error from server (NotFound): nodes "y" not found'),
    ("rollout restart deploy x y", 1, 'Error from server (NotFound): deployments.apps "x" not found\n'
     'Error from server (NotFound): deployments.apps "y" not found'),
    ("rollout status deploy x y", 1, 'Error from server (NotFound): deployments.apps "x" not found\n'
     'Error from server (NotFound): deployments.apps "y" not found'),
    ("describe pods zzz", 1, 'Error from server (NotFound): pods "zzz" not found'),
    ("describe pods we", 0, "Name:         web..."),  # one name not found: the names it begins
    ("logs zz", 1, 'error: error from server (NotFound): pods "zz" not found in namespace "default"'),
    ("logs web -n Bad_NS", 1, 'error: error from server (NotFound): namespaces "Bad_NS" not found in '
     'namespace "Bad_NS"'),
    ("explain", 1, 'error: You must specify the type of resource to explain. Use "kubectl api-resources" '
     "for a complete list of supported resources."),
    ("create foo", 1, "error: Unexpected args: [foo]\n" + HELP.format("create")),
    ("create foo bar", 1, "error: Unexpected args: [foo bar]\n" + HELP.format("create")),
    ("create", 1, "error: must specify one of -f and -k"),
    ("apply", 1, "error: must specify one of -f and -k"),
    ("rollout foo deploy/web", 1, 'error: unknown command "foo deploy/web"\n' + HELP.format("rollout")),
    ("rollout status", 1, "error: required resource not specified"),
    ("taint", 1, "error: one or more resources must be specified as <resource> <name>"),
    ("label pods web", 1, "error: at least one label update is required"),
    ("cordon", 1, "error: USAGE: cordon NODE [flags]\n" + HELP.format("cordon")),
    ("delete", 1, "error: You must provide one or more resources by argument or filename.\n"
     "Example resource specifications include:\n   '-f rsrc.yaml'\n   '--filename=rsrc.json'\n"
     "   '<resource> <name>'\n   '<resource>'"),
    # --as, --as-group, --as-uid: the Impersonate-* headers; the API server decides.
    ("get pods --as nobody", 1, 'Error from server (Forbidden): pods is forbidden: User "nobody" '
     'cannot list resource "pods" in API group "" in the namespace "default"'),
    ("get pods --as nobody --as-group system:masters -o name", 0, "pod/db\npod/web"),
    ("get pods --as system:serviceaccount:default:default -o name", 1, 'Error from server (Forbidden): '
     'pods is forbidden: User "system:serviceaccount:default:default" cannot list resource "pods" in '
     'API group "" in the namespace "default"'),
    ("create configmap x --as nobody", 1, 'error: failed to create configmap: configmaps is forbidden: '
     'User "nobody" cannot create resource "configmaps" in API group "" in the namespace "default"'),
    # --- csr --- kubectl certificate (certificates.go): Validate's plain error, the Builder's NotFound
    ("certificate approve", 1, "error: one or more CSRs must be specified as <name> or -f <filename>"),
    ("certificate deny zzz", 1, "Error from server (NotFound): "
     'certificatesigningrequests.certificates.k8s.io "zzz" not found'),
    ("certificate foo", 0, "Modify certificate resources...."),
    ("get pods --as-group devs", 1, IMPERSONATE_NO_USER),
    ("get pods --as-uid 12", 1, IMPERSONATE_NO_USER),
]


@pytest.fixture(scope="module")
def cluster() -> Cluster:
    c = Cluster(nodes=0, components=[], seed=1)
    for command in SETUP:
        assert c.kubectl(command).exit_code == 0, command
    return c


def _matches(printed: str, expected: str) -> bool:
    if expected.endswith("..."):
        return printed.split("\n", 1)[0] == expected.removesuffix("...")
    return printed == expected


@pytest.mark.parametrize(("command", "exit_code", "printed"), CASES)
def test_kubectl_says_what_kubectl_says(cluster: Cluster, command: str, exit_code: int,
                                        printed: str) -> None:
    out = cluster.kubectl(command)
    assert out.exit_code == exit_code and _matches(str(out), printed), str(out)


def test_a_jsonpath_runtime_error_shows_the_template_and_the_object_it_was_given(
        cluster: Cluster) -> None:
    out = cluster.kubectl("get pods -o jsonpath={.items[5]}")
    head, template, tail = str(out).split("\n", 2)
    assert (out.exit_code, head, template) == (
        1, executing("{.items[5]}", "array index out of bounds: index 5, length 2"), "\ttemplate was:")
    assert tail.split("\n")[0] == "\t\t{.items[5]}"
    # The object is the List kubectl builds (what -o json prints), in Go's %#v.
    listing = json.loads(cluster.kubectl("get pods -o json"))
    assert tail.split("\n")[1:] == ["\tobject given to jsonpath engine was:", "\t\t" + go_syntax(listing)]
    single = cluster.kubectl("get pod web -o jsonpath={.kind[0]}")
    assert str(single).endswith("\t\t" + go_syntax(json.loads(cluster.kubectl("get pod web -o json"))))


def test_kubectl_as_is_the_user_the_api_server_acts_as(cluster: Cluster) -> None:
    assert cluster.kubectl("get pods --as nobody --as-group system:masters -o name").exit_code == 0
    record = cluster.apiserver.audit[-1]
    assert (record.user, record.impersonated_user, record.impersonated_groups) == (
        "kubernetes-admin", "nobody", ("system:masters", "system:authenticated"))
    assert cluster.kubectl("get pods -o name").exit_code == 0  # the next command is itself again
    assert cluster.apiserver.audit[-1].impersonated_user == ""


def test_go_syntax_prints_decoded_json_as_fmt_does() -> None:
    value = {"b": [1, 2.5, 1e6, True, None, 'say "hi"\n'], "a": {}, "c": [], "d": "\x01é"}
    assert go_syntax(value) == (
        'map[string]interface {}{"a":map[string]interface {}{}, "b":[]interface {}{1, 2.5, '
        '1e+06, true, interface {}(nil), "say \\"hi\\"\\n"}, "c":[]interface {}{}, "d":"\\x01é"}')


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    if KUBECTL is None:
        pytest.skip("kubectl is not installed (make installs it)")
    server = serving(tmp_path_factory.mktemp("serve"), "--nodes", "1", "--speed", "4")
    s = next(server)
    for command in SETUP:
        s.kubectl(*split_command(command))
    yield s
    next(server, None)


# --- sa --- The served cluster has the anatomy: its pods run as the ServiceAccount `default`
# (the ServiceAccount admission plugin), so describe prints `Service Account:`, whose width
# moves every value of its first column, as on kind; the in-process cluster has no anatomy.
SERVED_CASES = {"describe pods we": "Name:             web..."}


@pytest.mark.parametrize(("command", "exit_code", "printed"), CASES)
def test_the_real_kubectl_says_the_same(served: Served, command: str, exit_code: int,
                                        printed: str) -> None:
    printed = SERVED_CASES.get(command, printed)
    done = subprocess.run([str(KUBECTL), *split_command(command)], env=served.env(),
                          capture_output=True, text=True, timeout=30)
    text = "\n".join(part for part in (done.stdout.rstrip("\n"), done.stderr.rstrip("\n")) if part)
    assert done.returncode == exit_code and _matches(text, printed), text
