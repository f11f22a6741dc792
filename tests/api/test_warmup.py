"""multigrove compile: the warm-up a user runs once (a Dockerfile, a CI step) so that first fits read the cache."""
import subprocess
import sys

import pytest

from multigrove import warmup


def test_the_workloads_cover_every_kind_of_fit_small_and_large():
    names = [name for name, _, _ in warmup.WORKLOADS]
    kinds = {name.split(" (")[0] for name in names}
    assert kinds == {"one_output", "many_outputs", "classification", "samples", "sparse_inputs", "sparse_outputs",
                     "label_trees", "batches"}
    for kind in kinds:  # small data runs the serial kernels, large data the parallel ones
        assert {rows for name, _, rows in warmup.WORKLOADS if name.startswith(kind + " ")} == {1_000,
                                                                                             warmup.LARGE_ROWS}


@pytest.mark.parametrize("threads, rows, fits", [(2, warmup.LARGE_ROWS, 0), (4, 1_000, 0), (4, warmup.LARGE_ROWS, 3)])
def test_the_batches_workload_trains_where_batches_run(monkeypatch, threads, rows, fits):
    """The batch kernels compile where a fit runs batches (builder.BATCH_MIN_THREADS threads or more), from trees of
    many small leaves on the large data; on fewer threads, or the small data, nothing is trained."""
    import numba

    from multigrove import params
    trained = []
    monkeypatch.setattr(params, "_default_threads", lambda: threads)  # num_threads=0: the cores the process may use
    monkeypatch.setattr(numba.config, "NUMBA_NUM_THREADS", max(threads, numba.config.NUMBA_NUM_THREADS))
    monkeypatch.setattr(warmup, "_train_and_predict", lambda params, X, y, **kw: trained.append((params, X.shape[0])))
    warmup._batches(rows)
    assert len(trained) == fits
    assert all(params["num_leaves"] >= 127 and n == rows for params, n in trained)


def test_compile_kernels_runs_each_workload_and_reports_it(monkeypatch, capsys):
    ran = []
    small = [(name, fn, rows) for name, fn, rows in warmup.WORKLOADS if rows == 1_000][:2]
    monkeypatch.setattr(warmup, "WORKLOADS", tuple((name, lambda rows, fn=fn: ran.append(rows) or fn(rows), rows)
                                                   for name, fn, rows in small))
    seconds = warmup.compile_kernels(processes=1)
    assert seconds > 0 and ran == [1_000, 1_000]
    out = capsys.readouterr().out
    for name, _, _ in small:
        assert name in out
    assert f"compiled into {warmup.cache_location()}" in out and "(1 process)" in out


def test_the_command_line_takes_compile():
    done = subprocess.run([sys.executable, "-m", "multigrove", "compile", "--help"], capture_output=True, text=True)
    assert done.returncode == 0 and "--processes" in done.stdout
    with pytest.raises(SystemExit):
        from multigrove.cli import main
        main(["compile", "--processes", "many"])
