"""The protobuf field tables of certificates/v1.

Its kinds: CertificateSigningRequest (`kubectl certificate approve|deny`).

Transcribed from k8s.io/api certificates/v1/generated.proto,
release v0.34.0, with each field's Go type from types.go beside it (by
scripts/transcribe_protobuf.py): message -> {field number: (JSON name, type, how)}.
Types and hows are explained in kubelab/apiserver/endpoints/protobuf/__init__.py.
"""

from __future__ import annotations

MESSAGES: dict[str, dict[int, tuple[str, str, str]]] = {
    "CertificateSigningRequest": {1: ("metadata", "ObjectMeta", ""),
                                  2: ("spec", "CertificateSigningRequestSpec", ""),
                                  3: ("status", "CertificateSigningRequestStatus", "")},
    "CertificateSigningRequestCondition": {1: ("type", "str", ""), 2: ("reason", "str", ""),
                                           3: ("message", "str", ""), 4: ("lastUpdateTime", "time", ""),
                                           5: ("lastTransitionTime", "time", ""), 6: ("status", "str", "")},
    "CertificateSigningRequestSpec": {1: ("request", "bytes", ""), 2: ("username", "str", ""),
                                      3: ("uid", "str", ""), 4: ("groups", "str", "rep"),
                                      5: ("usages", "str", "rep"), 6: ("extra", "str", "map"),
                                      7: ("signerName", "str", ""), 8: ("expirationSeconds", "int", "ptr")},
    "CertificateSigningRequestStatus": {1: ("conditions", "CertificateSigningRequestCondition", "rep"),
                                        2: ("certificate", "bytes", "")},
}
