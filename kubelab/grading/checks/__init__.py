"""kubelab's own checks, one module per notebook. Importing this package registers them all."""

from kubelab.grading.checks import (
    ex01_store,
    ex02_apiserver,
    ex03_watch,
    ex04_scheduler,
    ex05_controllers,
    ex06_kubelet,
    ex06b_troubleshooting,  # --- trouble --- (exercise 6.3)
    ex07_ha,
    ex08_operators,
    ex09_services,
    ex10_autoscaling,  # --- i31-hpa --- (exercise 10.2)
    ex10_scale,
)

__all__ = ["ex01_store", "ex02_apiserver", "ex03_watch", "ex04_scheduler", "ex05_controllers",
           "ex06_kubelet", "ex06b_troubleshooting", "ex07_ha", "ex08_operators", "ex09_services",
           "ex10_autoscaling", "ex10_scale"]
