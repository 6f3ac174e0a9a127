"""`kubelab workshop`: the course on JupyterHub for a room of learners, on the instructor's machine.

    kubelab workshop start --learners 30        JupyterHub, one system user per learner (as root)
    kubelab workshop collect --into class/      every learner's exercises/ into one folder each
    kubelab grade --class class/ --out grades.csv
    kubelab workshop feedback --grades grades.csv   each learner's report into their home

kubelab writes no multi-user server of its own: JupyterHub (PyPI's `jupyterhub`, with the
Python implementation of `configurable-http-proxy`) authenticates the room with one shared
workshop password and per-learner names (its SharedPasswordAuthenticator; the instructor is the
admin, with a password of their own) and starts each learner's JupyterLab as that learner's
system user (its LocalProcessSpawner), in a home of mode 0700 holding their own clone of the
course. Only root can start processes as other users, so `start` refuses to run as a normal user
and says so; `make lab` is the one-learner route.

learners.py creates the users and their homes and reads and writes files inside a home without
following a link the learner planted (collect and feedback run as root); hub.py writes the hub's
configuration (jupyterhub_config.py reads it) and runs the hub; command.py is the command line.
"""

from kubelab.workshop.hub import Workshop
from kubelab.workshop.learners import Learner, collect, feedback

__all__ = ["Learner", "Workshop", "collect", "feedback"]
