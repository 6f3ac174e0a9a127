"""kubelab workshop's pieces that need no hub: collecting a learner's exercises and returning
their report without following what a learner planted in their home, the grade cell's note, and
the refusals (names, passwords, a normal user starting a hub)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from kubelab.cli import main
from kubelab.grading.report import feedback_note
from kubelab.workshop import hub
from kubelab.workshop.command import learner_names
from kubelab.workshop.learners import Learner, collect, feedback, feedback_text, read_exercises

ROOT = Path(__file__).resolve().parent.parent
AS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def a_learner(tmp_path: Path, name: str = "ada") -> Learner:
    home = tmp_path / "home" / name
    (home / "kubelab" / "exercises").mkdir(parents=True)
    return Learner(name, os.getuid(), os.getgid(), home)


def test_collect_copies_each_learners_exercises_into_a_folder_of_their_own(tmp_path: Path) -> None:
    ada, bob = a_learner(tmp_path, "ada"), a_learner(tmp_path, "bob")
    (ada.course / "exercises" / "ex01_store.py").write_text("A = 1\n")
    (bob.course / "exercises" / "ex01_store.py").write_text("B = 2\n")
    (bob.course / "exercises" / "notes.txt").write_text("not an exercise\n")
    into = tmp_path / "class"
    lines = collect([ada, bob], into)
    assert (into / "ada" / "ex01_store.py").read_text() == "A = 1\n"
    assert (into / "bob" / "ex01_store.py").read_text() == "B = 2\n"
    assert sorted(p.name for p in (into / "bob").iterdir()) == ["ex01_store.py"]
    assert oct(into.stat().st_mode & 0o777) == "0o700"
    assert lines[0].startswith("ada: 1 file(s)")
    # a second collection is a fresh copy: a file the learner deleted is gone from the class too
    (ada.course / "exercises" / "ex01_store.py").unlink()
    collect([ada], into)
    assert list((into / "ada").iterdir()) == []


def test_collect_follows_no_link_a_learner_planted(tmp_path: Path) -> None:
    secret = tmp_path / "secret.py"
    secret.write_text("PASSWORD = 'root only'\n")
    ada = a_learner(tmp_path)
    (ada.course / "exercises" / "ex01_store.py").symlink_to(secret)
    os.link(secret, ada.course / "exercises" / "ex02_apiserver.py")  # a hard link to it, too
    files, refused = read_exercises(ada)
    assert files == {}
    assert [r.split(":")[0] for r in refused] == ["ex01_store.py", "ex02_apiserver.py"]
    # the exercises folder itself a link elsewhere: nothing is collected, and it says why
    bob = a_learner(tmp_path, "bob")
    (bob.course / "exercises").rmdir()
    (bob.course / "exercises").symlink_to(ada.course / "exercises")
    (line,) = collect([bob], tmp_path / "class")
    assert line.startswith("bob: nothing collected") and "link" in line
    assert not (tmp_path / "class" / "bob").exists()


@pytest.mark.skipif(not AS_ROOT, reason="giving a file to another user needs root")
def test_collect_refuses_a_file_that_is_not_the_learners_own(tmp_path: Path) -> None:
    ada = a_learner(tmp_path)
    planted = ada.course / "exercises" / "ex01_store.py"
    planted.write_text("X = 1\n")
    os.chown(planted, 65534, 65534)
    files, refused = read_exercises(ada)
    assert files == {} and "not a regular file of ada's own" in refused[0]


def a_report(name: str) -> dict[str, object]:
    return {"name": name, "submission": name, "total": 10, "max_total": 20, "notes": [],
            "exercises": [{"id": "1.1", "title": "compare-and-swap", "points": 10, "max_points": 20,
                           "checks": [{"check": "one writer", "status": "pass", "points": 10,
                                       "max_points": 10, "message": ""},
                                      {"check": "two writers", "status": "fail", "points": 0,
                                       "max_points": 10, "message": "lost an update", "hint": "retry"}]}]}


def test_feedback_puts_the_report_where_the_grade_cell_shows_it(tmp_path: Path) -> None:
    ada = a_learner(tmp_path)
    grades = tmp_path / "grades"
    grades.mkdir()
    (grades / "ada.json").write_text(json.dumps(a_report("ada")))
    (line,) = feedback([ada], grades)
    assert line.startswith("ada: 10/20 points")
    folder = ada.course / "feedback"
    assert json.loads((folder / "report.json").read_text())["total"] == 10
    text = (folder / "report.txt").read_text()
    assert "FAIL  two writers" in text and "lost an update" in text and "hint: retry" in text
    assert oct((folder / "report.json").stat().st_mode & 0o777) == "0o600"
    note = feedback_note(ada.course / "exercises")
    assert note is not None and "10/20 points" in note and str(folder / "report.txt") in note
    # a learner with no report gets none, and says so
    bob = a_learner(tmp_path, "bob")
    (line,) = feedback([bob], grades)
    assert line.startswith("bob: no report") and not (bob.course / "feedback").exists()
    assert feedback_note(bob.course / "exercises") is None


def test_feedback_writes_through_no_link_a_learner_planted(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    ada = a_learner(tmp_path)
    (ada.course / "feedback").symlink_to(elsewhere)
    grades = tmp_path / "grades"
    grades.mkdir()
    (grades / "ada.json").write_text(json.dumps(a_report("ada")))
    (line,) = feedback([ada], grades)
    assert "feedback not written" in line
    assert list(elsewhere.iterdir()) == []


def test_feedback_text_is_the_whole_report() -> None:
    text = feedback_text(a_report("ada"))
    assert text.startswith("kubelab workshop feedback · ada · 10/20 points")
    assert "1.1  compare-and-swap  10/20" in text and "PASS  one writer" in text


def test_the_grade_cell_shows_the_instructors_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kubelab.grading import grade

    course = tmp_path / "kubelab"
    (course / "exercises").mkdir(parents=True)
    (course / "exercises" / "ex01_store.py").write_text((ROOT / "exercises" / "ex01_store.py").read_text())
    (course / "notebooks").mkdir()
    monkeypatch.chdir(course / "notebooks")
    assert not any("instructor" in n for n in grade("1.1").notes)
    (course / "feedback").mkdir()
    (course / "feedback" / "report.json").write_text(json.dumps(a_report("ada")))
    report = grade("1.1")
    assert "note: your instructor graded this course: 10/20 points" in report.text()


def test_names_and_passwords_are_refused_in_jupyterhubs_words(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="lowercase letters"):
        hub.Workshop.new(ROOT, tmp_path, ["Ada Lovelace"])
    with pytest.raises(ValueError, match="must differ"):
        hub.Workshop.new(ROOT, tmp_path, ["ada", "ada"])
    with pytest.raises(ValueError, match="not also a learner"):
        hub.Workshop.new(ROOT, tmp_path, ["ada"], instructor="ada")
    with pytest.raises(ValueError, match="8 characters"):
        hub.Workshop.new(ROOT, tmp_path, ["ada"], password="short")
    workshop = hub.Workshop.new(ROOT, tmp_path, ["ada", "bob"])
    assert len(workshop.password) >= 8 and len(workshop.admin_password) >= 32
    workshop.save()
    assert oct((tmp_path / "workshop.json").stat().st_mode & 0o777) == "0o600"
    assert hub.Workshop.load(tmp_path) == workshop


def test_learner_names() -> None:
    class Args:
        names = ""
        learners = 12
    assert learner_names(Args())[:2] == ["learner01", "learner02"] and len(learner_names(Args())) == 12
    Args.names = "ada, bob"
    assert learner_names(Args()) == ["ada", "bob"]


def test_a_normal_user_cannot_start_a_hub_and_is_told_why(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(ValueError, match="only root can do") as err:
        hub.start(hub.Workshop.new(ROOT, tmp_path, ["ada"]))
    assert "make lab" in str(err.value)
    assert not (tmp_path / "workshop.json").exists()  # nothing made, nothing started


def test_collect_without_a_workshop_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["workshop", "collect", "--state", str(tmp_path / "none")]) == 2
    assert "no workshop in" in capsys.readouterr().err


def test_reachable_by_others(tmp_path: Path) -> None:
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    (private / "python").write_text("")
    (private / "python").chmod(0o755)
    assert not hub.reachable_by_others(private / "python")
    private.chmod(0o711)
    assert hub.reachable_by_others(private / "python") == all(
        os.stat(p).st_mode & 0o001 for p in private.parents)


def test_the_proxy_lets_the_room_make_requests_at_once(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """JupyterHub's configuration (kubelab/workshop/jupyterhub_config.py, read as JupyterHub
    reads it) starts the Python configurable-http-proxy with tornado's client allowed 20
    requests at once per person, not 10 for the whole room; the command runs the real proxy
    (its --help), the count taken off its arguments."""
    import shutil
    import subprocess
    import sys

    from traitlets.config import Config

    proxy = shutil.which("configurable-http-proxy", path=str(Path(sys.executable).parent))
    if proxy is None:
        pytest.skip("the workshop extra is not installed")
    settings = tmp_path / "workshop.json"
    settings.write_text(json.dumps({
        "state": str(tmp_path), "ip": "127.0.0.1", "port": 8000, "password": "p" * 8,
        "admin_password": "a" * 8, "learners": ["ada", "bob", "eve"], "instructor": "inst",
        "python": sys.executable, "mem_limit": "1G", "cpu_limit": 1,
        "environment": {"PROXY": proxy, "HUB_PORT": "8081", "PROXY_API_PORT": "8001"}}))
    monkeypatch.setenv("KUBELAB_WORKSHOP", str(settings))
    config = Config()
    source = (ROOT / "kubelab" / "workshop" / "jupyterhub_config.py").read_text()
    exec(compile(source, "jupyterhub_config.py", "exec"), {"get_config": lambda: config})
    command = config.ConfigurableHTTPProxy.command
    assert command[command.index("-c") + 2] == str(20 * 4)
    done = subprocess.run([*command, "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "--proxy-timeout" in done.stdout, done.stderr
