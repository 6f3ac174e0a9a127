"""A tiny kopf operator for tests/test_serve_clients.py: it answers each Greeting in its status."""

import kopf


@kopf.on.create("kubelab.dev", "v1", "greetings")
def greet(spec, name, logger, **_):  # type: ignore[no-untyped-def]
    logger.info(f"greeting {name}")
    return {"message": f"hello, {spec.get('who', 'world')}"}
