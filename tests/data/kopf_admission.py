"""kopf's own admission example (nolar/kopf examples/17-admission/example.py), for
tests/test_webhook_serve.py, with kopf managing its webhook configurations
(settings.admission.managed) on a plain WebhookServer.

One change: the server's certificate is given (KUBELAB_WEBHOOK_CERT/KEY, signed by
KUBELAB_WEBHOOK_CA, which becomes the configurations' caBundle) instead of generated, since
kopf generates one only with certbuilder installed.
"""

import os

import kopf


@kopf.on.startup()
def config(settings: kopf.OperatorSettings, **_):  # type: ignore[no-untyped-def]
    settings.admission.server = kopf.WebhookServer(
        addr="127.0.0.1", port=int(os.environ["KUBELAB_WEBHOOK_PORT"]),
        certfile=os.environ["KUBELAB_WEBHOOK_CERT"], pkeyfile=os.environ["KUBELAB_WEBHOOK_KEY"],
        cafile=os.environ["KUBELAB_WEBHOOK_CA"])
    settings.admission.managed = "auto.kopf.dev"


@kopf.on.validate("kex")
def authhook(headers: kopf.Headers, sslpeer: kopf.SSLPeer, warnings: list[str], **_):  # type: ignore[no-untyped-def]
    user_agent = headers.get("User-Agent", "(unidentified)")
    warnings.append(f"Accessing as user-agent: {user_agent}")


@kopf.on.validate("kex")
def validate1(spec, dryrun, **_):  # type: ignore[no-untyped-def]
    if not dryrun and spec.get("field") == "wrong":
        raise kopf.AdmissionError("Meh! I don't like it. Change the field.")


@kopf.on.validate("kex", field="spec.field", value="not-allowed")
def validate2(**_):  # type: ignore[no-untyped-def]
    raise kopf.AdmissionError("I'm too lazy anyway. Go away!", code=555)


@kopf.on.mutate("kex", labels={"somelabel": "somevalue"})
def mutate1(patch: kopf.Patch, **_):  # type: ignore[no-untyped-def]
    patch.spec["injected"] = 123
