"""kubelab's own checks, one module per notebook. Importing this package registers them all."""

from kubelab.grading.checks import (
    ex01_store,
    ex02_apiserver,
    ex03_watch,
    ex04_scheduler,
    ex05_controllers,
    ex06_kubelet,
    ex09_services,
)

__all__ = ["ex01_store", "ex02_apiserver", "ex03_watch", "ex04_scheduler", "ex05_controllers",
           "ex06_kubelet", "ex09_services"]
