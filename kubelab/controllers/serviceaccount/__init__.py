"""The serviceaccount controller (kubernetes pkg/controller/serviceaccount)."""

from kubelab.controllers.serviceaccount.serviceaccounts_controller import ServiceAccountsController

__all__ = ["ServiceAccountsController"]
