"""`kubelab workshop start|stop|collect|feedback|remove`: the command line of kubelab/workshop/."""

from __future__ import annotations

import argparse
from pathlib import Path

from kubelab.workshop import hub
from kubelab.workshop.learners import collect, feedback

__all__ = ["add_parser", "workshop_command"]


def learner_names(args: argparse.Namespace) -> list[str]:
    if args.names:
        return [n.strip() for n in args.names.split(",") if n.strip()]
    return [f"learner{i:0{len(str(args.learners))}d}" for i in range(1, args.learners + 1)]


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    w = sub.add_parser("workshop", help="the course on JupyterHub for a room of learners (as root)")
    actions = w.add_subparsers(dest="action", required=True)
    start = actions.add_parser("start", help="create the learners and run JupyterHub until Ctrl-C")
    start.add_argument("--learners", type=int, default=3, help="how many (learner1, learner2, ...)")
    start.add_argument("--names", help="the learners' names instead, comma-separated")
    start.add_argument("--instructor", default="instructor", help="the admin's name (default instructor)")
    start.add_argument("--password", default="", help="the shared workshop password (default: made up)")
    start.add_argument("--admin-password", default="", help="the instructor's (default: made up)")
    start.add_argument("--ip", default="0.0.0.0", help="where to listen (default: every address)")
    start.add_argument("--port", type=int, default=8000, help="default 8000")
    start.add_argument("--mem-limit", default="1G", help="per learner (default 1G)")
    start.add_argument("--cpu-limit", type=float, default=1.0, help="per learner (default 1)")
    for name, text in (("stop", "stop the running hub"),
                       ("collect", "copy every learner's exercises/ into a class folder"),
                       ("feedback", "put each learner's graded report into their home"),
                       ("remove", "after the workshop: delete the users it created, with their homes")):
        action = actions.add_parser(name, help=text)
        action.add_argument("--state", default=hub.DEFAULT_STATE, help="the workshop's folder (.workshop)")
        if name == "collect":
            action.add_argument("--into", default="class", help="the class folder (default class/)")
        if name == "feedback":
            action.add_argument("--grades", default="grades.csv",
                                help="the CSV `kubelab grade --class` wrote (its grades/ folder is read)")
    start.add_argument("--state", default=hub.DEFAULT_STATE, help="the workshop's folder (.workshop)")


def workshop_command(args: argparse.Namespace, repo: Path) -> int:
    state = Path(args.state) if Path(args.state).is_absolute() else repo / args.state
    if args.action == "start":
        workshop = hub.Workshop.new(repo, state, learner_names(args), instructor=args.instructor,
                                    password=args.password, admin_password=args.admin_password,
                                    ip=args.ip, port=args.port, mem_limit=args.mem_limit,
                                    cpu_limit=args.cpu_limit)
        if (state / "workshop.json").exists():  # a restart keeps the passwords the room has
            old = hub.Workshop.load(state)
            workshop.created = old.created
            if old.learners == workshop.learners and not args.password:
                workshop.password = old.password
            if not args.admin_password:
                workshop.admin_password = old.admin_password
        return hub.start(workshop, say=lambda line: print(f"kubelab workshop: {line}", flush=True))
    if args.action == "stop":
        print(f"kubelab workshop: {hub.stop(state)}")
        return 0
    workshop = hub.Workshop.load(state)
    if args.action == "remove":
        for line in hub.remove(workshop):
            print(f"kubelab workshop: {line}")
        return 0
    learners = workshop.learner_users()
    if args.action == "collect":
        lines = collect(learners, Path(args.into))
        lines.append(f"grade them with: kubelab grade --class {args.into} --out grades.csv")
    else:
        lines = feedback(learners, Path(args.grades).with_suffix(""))
    for line in lines:
        print(f"kubelab workshop: {line}")
    return 0
