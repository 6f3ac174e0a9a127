"""Custom kinds and admission policies through the real kubectl over HTTPS: printer columns
from the server-side Table, kubectl scale, explain (compared with kubelab's own), schema
errors and a policy's denial as kubectl prints them."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from serve_helpers import Served, serving
from test_admission_policy import TEAM_LABEL
from test_crd_kubectl import CRD, SITE

from kubelab.api.yamlio import load_objects
from kubelab.kubectl.explain import explain_schema


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    yield from serving(tmp_path_factory.mktemp("crd-serve"), "--nodes", "1")


@pytest.fixture(scope="module")
def websites(served: Served) -> Served:
    served.kubectl("apply", "-f", "-", stdin=CRD)
    deadline = time.monotonic() + 20
    while served.kubectl("api-resources", "--api-group=kubelab.dev", "-o", "name").stdout.strip() \
            != "websites.kubelab.dev" and time.monotonic() < deadline:
        time.sleep(0.5)
    served.kubectl("apply", "-f", "-", stdin=SITE % "blog")
    return served


def test_real_kubectl_prints_the_printer_columns(websites: Served) -> None:
    lines = websites.kubectl("get", "websites").stdout.splitlines()
    assert lines[0].split() == ["NAME", "REPLICAS", "READY", "AGE"]
    assert lines[1].split()[:3] == ["blog", "1", "<none>"]
    wide = websites.kubectl("get", "websites", "-o", "wide").stdout.splitlines()
    assert wide[0].split() == ["NAME", "REPLICAS", "READY", "IMAGE", "AGE"]


def test_real_kubectl_scales_a_custom_kind(websites: Served) -> None:
    out = websites.kubectl("scale", "website/blog", "--replicas=4").stdout.strip()
    assert out == "website.kubelab.dev/blog scaled"
    assert websites.kubectl("get", "website", "blog", "-o", "jsonpath={.spec.replicas}").stdout == "4"


def test_real_kubectl_shows_schema_errors(websites: Served) -> None:
    bad = (SITE % "bad").replace("spec: {image: nginx:1.27}", "spec: {image: nginx, replicas: -1}")
    done = websites.kubectl("apply", "-f", "-", stdin=bad, check=False)
    assert done.returncode == 1
    assert 'The Website "bad" is invalid: spec.replicas: Invalid value: -1: spec.replicas in body ' \
        "should be greater than or equal to 0" in done.stderr


def test_explain_matches_real_kubectl(websites: Served) -> None:
    root = load_objects(CRD)[0]["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    for path in (["spec"], ["spec", "replicas"], ["status", "conditions"]):
        real = websites.kubectl("explain", ".".join(["website", *path])).stdout
        assert real == explain_schema("kubelab.dev", "Website", "v1", root, path) + "\n", path


def test_a_policy_denies_through_real_kubectl(served: Served) -> None:
    served.kubectl("create", "namespace", "payments")
    served.kubectl("label", "namespace", "payments", "team=payments")
    served.kubectl("apply", "-f", "-", stdin=TEAM_LABEL)
    done = served.kubectl("create", "deployment", "web", "--image=nginx", "-n", "payments",
                          check=False)
    assert done.returncode == 1
    assert done.stderr.strip() == (
        'error: failed to create deployment: deployments.apps "web" is forbidden: '
        "ValidatingAdmissionPolicy 'require-team-label' with binding 'require-team-label-binding' "
        "denied request: Deployment web needs a team label")
