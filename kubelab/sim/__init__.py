"""Simulated time, seeded randomness and the trace: the ground every component stands on.

Imports nothing from kubelab but api (docs/ARCHITECTURE.md section 1).
"""

from kubelab.sim.clock import Clock, LivelockError, RealTimeClock, Timer
from kubelab.sim.rand import Rand, new_rand
from kubelab.sim.trace import Record, Trace

__all__ = ["Clock", "LivelockError", "Rand", "RealTimeClock", "Record", "Timer", "Trace", "new_rand"]
