"""DNS-1123 names and object metadata, with the messages of apimachinery's validation.go."""

from __future__ import annotations

from kubelab.api.validation import is_dns1123_label, is_dns1123_subdomain, validate_object_meta

SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    r"for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)


def test_valid_names() -> None:
    for name in ("web", "web-1", "a", "1abc", "web.example.com", "a" * 253):
        assert is_dns1123_subdomain(name) == [], name
    for name in ("web", "kube-system", "a" * 63):
        assert is_dns1123_label(name) == [], name


def test_invalid_subdomains_use_upstream_messages() -> None:
    assert is_dns1123_subdomain("Web") == [SUBDOMAIN_MSG]
    assert is_dns1123_subdomain("-web") == [SUBDOMAIN_MSG]
    assert is_dns1123_subdomain("web_1") == [SUBDOMAIN_MSG]
    assert is_dns1123_subdomain("") == [SUBDOMAIN_MSG]
    assert is_dns1123_subdomain("a" * 254) == ["must be no more than 253 characters"]


def test_invalid_labels_use_upstream_messages() -> None:
    assert is_dns1123_label("My-ns") == [LABEL_MSG]
    assert is_dns1123_label("a.b") == ["must not contain dots"]
    assert is_dns1123_label("a" * 64) == ["must be no more than 63 characters"]


def test_object_meta() -> None:
    assert validate_object_meta({"name": "web", "namespace": "default"}, namespaced=True) == []
    errs = [str(x) for x in validate_object_meta({}, namespaced=True)]
    assert errs == ["metadata.name: Required value: name or generateName is required",
                    "metadata.namespace: Required value"]
    errs = [str(x) for x in validate_object_meta({"name": "Web", "namespace": "x"},
                                                 namespaced=True)]
    assert errs == [f'metadata.name: Invalid value: "Web": {SUBDOMAIN_MSG}']
    assert validate_object_meta({"generateName": "web-"}, namespaced=False) == []
    errs = [str(x) for x in validate_object_meta({"name": "n1", "namespace": "x"}, namespaced=False)]
    assert errs == ['metadata.namespace: Invalid value: "x": not allowed on this type']
    errs = [str(x) for x in validate_object_meta({"name": "n", "labels": {"a": 1}},
                                                 namespaced=False)]
    assert errs == ['metadata.labels: Invalid value: {"a":1}: must be a map of string to string']
    assert [str(x) for x in validate_object_meta("web", namespaced=False)] == [
        'metadata: Invalid value: "web": must be an object']
