"""kubectl's mistakes exit 1 with the real kubectl's words (issue 28): a jsonpath template the
parser refuses (jsonpath_flags.go), a --sort-by field that no object has or that does not parse
(sorter.go), and resource/name arguments cli-runtime's Builder refuses before sending anything
(builder.go splitResourceTypeName, hasCombinedTypeArgs). A namespace is sent as given: the
API server lists nothing in a namespace that does not exist, whatever its name."""

from __future__ import annotations

import pytest

from kubelab import Cluster

SLASH_FORM = "error: arguments in resource/name form must have a single resource and name"


@pytest.fixture(scope="module")
def cluster() -> Cluster:
    c = Cluster(nodes=0, components=[], seed=1)
    for name in ("web", "db"):
        assert c.kubectl(f"run {name} --image nginx").exit_code == 0
    return c


@pytest.mark.parametrize(("command", "exit_code", "printed"), [
    ("get pods -o jsonpath={.items", 1, "error: error parsing jsonpath {.items, unclosed action"),
    ("get pods -o 'jsonpath={.items[0].metadata.name'", 1,
     "error: error parsing jsonpath {.items[0].metadata.name, unclosed action"),
    ("get pods -o jsonpath={.items[*].metadata.name}", 0, "db web"),
    ("get pods -o jsonpath={.bogus}", 0, ""),  # --allow-missing-template-keys defaults to true
    ("get pods --sort-by 5", 1, 'error: couldn\'t find any field with path "{.5}" in the list of objects'),
    ("get pods -o name --sort-by 5", 1,
     'error: couldn\'t find any field with path "{.5}" in the list of objects'),
    ("get pods --sort-by {.metadata.name", 1, "error: sorting error: unclosed action"),
    ("get pods -o name --sort-by {.metadata.name", 1,
     "error: unexpected path string, expected a 'name1.name2' or '.name1.name2' or '{name1.name2}' "
     "or '{.name1.name2}'"),
    ("get pods -o name --sort-by .metadata.name", 0, "pod/db\npod/web"),
    ("get pods/", 1, SLASH_FORM),
    ("get /web", 1, SLASH_FORM),
    ("get pods,deployments/web", 1, SLASH_FORM),
    ("get pod/web/x", 1, "error: arguments in resource/name form may not have more than one slash"),
    ("get pods pod/web", 1, "error: there is no need to specify a resource type as a separate argument "
     "when passing arguments in resource/name form (e.g. 'kubectl get resource/<resource_name>' "
     "instead of 'kubectl get resource resource/<resource_name>'"),
    ("delete pods/", 1, SLASH_FORM),
    ("get pods -n Bad_NS", 0, "No resources found in Bad_NS namespace."),
    ("get pods web -n Bad_NS", 1, 'Error from server (NotFound): pods "web" not found'),
    ("get pods web extra -o name", 1, 'pod/web\nError from server (NotFound): pods "extra" not found'),
])
def test_kubectl_says_what_kubectl_says(cluster: Cluster, command: str, exit_code: int,
                                        printed: str) -> None:
    out = cluster.kubectl(command)
    assert (out.exit_code, str(out)) == (exit_code, printed)
