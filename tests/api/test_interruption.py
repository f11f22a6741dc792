"""Ctrl-C during training or saving leaves no half-written model file and no leaked thread."""
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import multigrove as mg


def _data(n=3000):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 8))
    return X, np.column_stack([X[:, 0] + X[:, 1] ** 2, np.sin(X[:, 2])])


def test_keyboard_interrupt_in_training_propagates_and_closes_callbacks():
    X, Y = _data()
    before = {t.ident for t in threading.enumerate()}
    bar = mg.progress_bar(desc="interrupted")
    closed = []
    original_close = bar.close
    bar.close = lambda: (closed.append(True), original_close())[1]

    def interrupt(env):
        if env.iteration == 3:
            raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        mg.train({"num_leaves": 7}, mg.Dataset(X, Y), 50, callbacks=[bar, interrupt])
    assert closed == [True]
    deadline = time.time() + 5
    while time.time() < deadline:
        leaked = [t for t in threading.enumerate() if t.ident not in before and not t.daemon]
        if not leaked:
            break
        time.sleep(0.1)
    assert not leaked, leaked
    # the process trains again normally afterwards
    assert mg.train({"num_leaves": 7}, mg.Dataset(X, Y), 3).num_trees() == 3


def test_interrupted_save_keeps_the_previous_model(tmp_path, monkeypatch):
    X, Y = _data()
    path = tmp_path / "model.json"
    old = mg.train({"num_leaves": 7}, mg.Dataset(X, Y), 3).save_model(path)
    new = mg.train({"num_leaves": 7}, mg.Dataset(X, Y), 6)

    def interrupted_fsync(fd):
        raise KeyboardInterrupt
    monkeypatch.setattr(os, "fsync", interrupted_fsync)
    with pytest.raises(KeyboardInterrupt):
        new.save_model(path)
    monkeypatch.undo()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.json"]  # no temporary file left
    assert mg.Booster(model_file=path).model_to_string() == old.model_to_string()


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child process")
def test_sigint_during_training_in_a_real_process(tmp_path):
    path = tmp_path / "model.json"
    # the child takes SIGINT as Python's default does even when this suite runs with SIGINT ignored (a shell's
    # background job without job control ignores it, and children inherit that)
    script = textwrap.dedent(f"""
        import signal, sys, numpy as np, multigrove as mg
        signal.signal(signal.SIGINT, signal.default_int_handler)
        rng = np.random.default_rng(0)
        X = rng.normal(size=(20000, 20)); Y = X[:, :4] ** 2
        mg.train({{"num_leaves": 7}}, mg.Dataset(X, Y), 2).save_model({str(path)!r})
        print("saved", flush=True)
        def steady(env):  # the signal lands in steady rounds, after the first rounds' Numba compilation
            if env.iteration == 10:
                print("boosting", flush=True)
        model = mg.train({{"num_leaves": 63}}, mg.Dataset(X, Y), 100000, callbacks=[steady])
        model.save_model({str(path)!r})
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    assert proc.stdout.readline().strip() == "saved"
    assert proc.stdout.readline().strip() == "boosting"
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail("training did not stop within 60 s of SIGINT")
    assert proc.returncode != 0 and "KeyboardInterrupt" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.json"]
    assert mg.Booster(model_file=path).num_trees() == 2
