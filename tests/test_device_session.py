"""The device session's script (benchmarks/device_session.sh) runs its benchmarks on a lent machine whose
minutes are few: a command whose arguments its script no longer takes would cost that session a step.  Every
``python3 benchmarks/<script>.py ARGS`` of it is parsed here by the script's own parser, which stops the
script before any work."""
import argparse
import re
import runpy
import shlex
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SESSION = ROOT / "benchmarks" / "device_session.sh"


def session_commands() -> list[tuple[str, list[str]]]:
    """(script, arguments) of each benchmark the session runs, $OUT as a folder name."""
    text = SESSION.read_text().replace("\\\n", " ")
    found = re.findall(r"python3 (benchmarks/\w+\.py)([^;&]*)", text)
    return [(script, shlex.split(args.replace('"', "").replace("$OUT", "out")))
            for script, args in found]


class _Parsed(Exception):
    """Raised by the patched parser once it has parsed: the script goes no further."""


def test_the_session_runs_its_benchmarks():
    scripts = {script for script, _ in session_commands()}
    assert {"benchmarks/scaling.py", "benchmarks/gpu.py", "benchmarks/round_profile.py"} <= scripts
    assert all((ROOT / script).is_file() for script in scripts)


@pytest.mark.parametrize("script, args", session_commands(), ids=lambda value: value if isinstance(value, str) else "")
def test_a_session_command_parses(script, args, monkeypatch):
    parse = argparse.ArgumentParser.parse_args

    def parse_then_stop(self, argv=None, namespace=None):
        raise _Parsed(parse(self, argv, namespace))

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", parse_then_stop)
    monkeypatch.setattr(sys, "argv", [script, *args])
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    with pytest.raises(_Parsed):  # SystemExit(2), argparse's error, fails the test with its message
        runpy.run_path(str(ROOT / script), run_name="__main__")
