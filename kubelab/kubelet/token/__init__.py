"""The kubelet's service account token manager (kubernetes pkg/kubelet/token)."""

from kubelab.kubelet.token.token_manager import Manager, TokenError, key_func

__all__ = ["Manager", "TokenError", "key_func"]
