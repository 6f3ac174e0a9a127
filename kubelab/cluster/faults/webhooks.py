"""Faults of admission webhooks served by pods (kubelab/cluster/webhooks.py).

slow_webhook makes every call to an image's webhook take that long (past the webhook's
timeoutSeconds it fails with `context deadline exceeded`, and its failurePolicy decides);
break_webhook makes its pods refuse connections although they look Ready; heal_webhook undoes
both. The other outage, the classic one, needs no fault: delete the webhook's Deployment (or
scale it to 0) and the Service has no endpoints.
"""

from __future__ import annotations

from typing import Any

__all__ = ["WebhookFaults"]


class WebhookFaults:
    _cluster: Any

    def _record(self, name: str, obj: str = "", **detail: Any) -> None: ...  # Faults records

    def slow_webhook(self, image: str, seconds: float) -> None:
        """Every call to the webhook that image serves takes `seconds` virtual seconds."""
        if seconds < 0:
            raise ValueError(f"webhook latency must be >= 0 seconds, got {seconds}")
        self._cluster.webhook_servers[image].latency = float(seconds)
        self._record("slow_webhook", image, seconds=seconds)

    def break_webhook(self, image: str) -> None:
        """The webhook's process dies inside its pods: connections are refused."""
        self._cluster.webhook_servers[image].broken = True
        self._record("break_webhook", image)

    def heal_webhook(self, image: str) -> None:
        server = self._cluster.webhook_servers[image]
        server.latency, server.broken = 0.0, False
        self._record("heal_webhook", image)
