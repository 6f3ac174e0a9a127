"""Small helpers for the tests of kubelab's HTTP transport (test_serve_transport*.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from kubelab.api.errors import ApiError

WAIT = 15.0  # real seconds any one wait may take before the test fails (it takes far less)


def configmap(name: str, data: dict[str, str] | None = None, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "labels": labels}, "data": data or {}}


def error(call: Callable[[], Any]) -> ApiError:
    with pytest.raises(ApiError) as info:
        call()
    return info.value


async def until(predicate: Callable[[], bool]) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT
    while not predicate():
        assert loop.time() < deadline, "timed out waiting"
        await asyncio.sleep(0.02)


def run(main: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(main(), 4 * WAIT))
