"""Training callbacks (the LightGBM protocol): called after every round with a CallbackEnv."""
from __future__ import annotations

import dataclasses
import warnings
from typing import Any, Callable

from .._validation import check_int, check_real
from ..params import MultigroveWarning


@dataclasses.dataclass
class CallbackEnv:
    """What a callback sees after every round."""
    model: Any
    params: dict
    iteration: int                   # 0-based index of the round just finished
    begin_iteration: int
    end_iteration: int
    evaluation_result_list: list     # [(data_name, metric_name, value, is_higher_better), ...]
    frozen_outputs: set = dataclasses.field(default_factory=set)  # outputs that stop learning (a callback adds)


class EarlyStopException(Exception):
    """Raised by a callback to stop training; carries the best iteration (0-based) and its scores, and,
    for per-output early stopping, each output's best iteration (0-based)."""

    def __init__(self, best_iteration: int, best_score: list, output_best_iterations=None):
        super().__init__(best_iteration)
        self.best_iteration = best_iteration
        self.best_score = best_score
        self.output_best_iterations = output_best_iterations


def log_evaluation(period: int = 1, show_stdv: bool = False) -> Callable:
    """Print the evaluation results every ``period`` rounds.

    Parameters
    ----------
    period : int, default 1
        0 prints nothing.
    show_stdv : bool, default False
        LightGBM's option for cross-validation results; the callbacks see the folds' means only (the
        standard deviations are in :func:`multigrove.cv`'s result), so True only warns.

    Returns
    -------
    callable
    """
    period = check_int(period, "period", 0)
    if show_stdv:
        warnings.warn("log_evaluation(show_stdv=True) has no effect: callbacks see the folds' means only "
                      "(multigrove.cv returns the standard deviations)", MultigroveWarning, stacklevel=2)

    def _callback(env: CallbackEnv) -> None:
        if period > 0 and env.evaluation_result_list and (env.iteration + 1) % period == 0:
            res = "\t".join(f"{data}'s {metric}: {value:g}" for data, metric, value, _ in env.evaluation_result_list)
            print(f"[{env.iteration + 1}]\t{res}")
    _callback.order = 10
    return _callback


def record_evaluation(eval_result: dict) -> Callable:
    """Record every evaluation into ``eval_result[data_name][metric_name]`` (a list per metric).

    Parameters
    ----------
    eval_result : dict
        Emptied, then filled during training.

    Returns
    -------
    callable
    """
    if not isinstance(eval_result, dict):
        raise TypeError(f"eval_result must be a dict, got {type(eval_result).__name__}")
    eval_result.clear()

    def _callback(env: CallbackEnv) -> None:
        for data, metric, value, _ in env.evaluation_result_list:
            eval_result.setdefault(data, {}).setdefault(metric, []).append(value)
    _callback.order = 20
    return _callback


def early_stopping(stopping_rounds: int, first_metric_only: bool = False, verbose: bool = True,
                   min_delta: float = 0.0, per_output: bool | str = "auto", metric_name: str | None = None,
                   patience_fraction: float = 0.0, max_stopping_rounds: int | None = None) -> Callable:
    """Stop when a validation metric has not improved for ``stopping_rounds`` rounds.

    With ``patience_fraction`` the patience grows with the best round so far: a curve still falling at
    round 300 is given more rounds to find a lower point than one whose best is round 10.

    The booster keeps every tree and records ``best_iteration``, which ``predict`` then uses by default.
    The callback object can be reused: its state restarts with every training run.

    Parameters
    ----------
    stopping_rounds : int
        Rounds without improvement before training stops.
    first_metric_only : bool, default False
        Watch only the first metric (of every validation set); by default every metric of every
        validation set is watched (the training set, if passed in valid_sets, is ignored) and the first
        that stops improving stops training.
    verbose : bool, default True
        Print the best iteration when stopping.
    min_delta : float, default 0.0
        The least change that counts as an improvement.
    per_output : {True, False, "auto"}, default "auto"
        True: each output is watched on its own (the first metric of the first validation set,
        evaluated per output): an output that has not improved for ``stopping_rounds`` rounds stops
        learning (its gradients are zeroed from then on), training stops when every output has, and each
        output's leaf values after its best round are set to 0, so that it predicts as it did at its
        best round.  That equals training each output alone when outputs are trained independently
        (regression, multilabel), the only objectives it takes.  "auto" does so for the targets of a
        regression with several targets, as one model per target would; every other training stops on
        the metrics as a whole.
    metric_name : str, optional
        Watch this metric only: a metric's mean over outputs (``"l2"``) or one output's value
        (``"l2[3]"``: output 3; such a name turns on the per-output evaluation it needs).  It replaces
        the per-output stopping that ``per_output="auto"`` would choose.
    patience_fraction : float, default 0.0
        The patience after a best round ``b`` (counted from 1) is
        ``max(stopping_rounds, floor(patience_fraction * b))``, at most ``max_stopping_rounds``.
    max_stopping_rounds : int, optional
        The most rounds of patience that ``patience_fraction`` may give (no limit by default).

    Returns
    -------
    callable
    """
    stopping_rounds = check_int(stopping_rounds, "stopping_rounds", 1)
    if per_output not in (True, False, "auto"):
        raise ValueError(f"per_output must be True, False or 'auto', got {per_output!r}")
    if min_delta < 0:
        raise ValueError(f"min_delta must be >= 0, got {min_delta}")
    if metric_name is not None and not isinstance(metric_name, str):
        raise TypeError(f"metric_name must be a metric's name (str), got {metric_name!r}")
    if metric_name is not None and per_output is True:
        raise ValueError("early_stopping: give metric_name or per_output=True, not both")
    patience_fraction = check_real(patience_fraction, "patience_fraction", 0.0)
    if max_stopping_rounds is not None:
        max_stopping_rounds = check_int(max_stopping_rounds, "max_stopping_rounds", stopping_rounds)
    state: dict = {}

    def _patience(best_iter: int) -> int:
        """Rounds without improvement allowed after the best round (0-based best_iter)."""
        grown = max(stopping_rounds, int(patience_fraction * (best_iter + 1)))
        return grown if max_stopping_rounds is None else min(grown, max_stopping_rounds)

    def _init(env: CallbackEnv) -> None:
        state.clear()
        watched = [(i, r) for i, r in enumerate(env.evaluation_result_list) if r[0] != "training"]
        if not watched:
            raise ValueError("early_stopping needs at least one validation set in valid_sets "
                             "(other than the training data)")
        if _callback.watch_per_output:
            data, metric = watched[0][1][0], watched[0][1][1]
            watched = [(i, r) for i, r in watched if r[0] == data and r[1].startswith(metric + "[")]
            if not watched:
                raise ValueError(f"early_stopping(per_output=True) found no per-output values of '{metric}' "
                                 "(it needs a metric evaluated per output, and more than one output)")
        elif metric_name is not None:
            names = sorted({r[1] for _, r in watched})
            watched = [(i, r) for i, r in watched if r[1] == metric_name]
            if not watched:
                raise ValueError(f"early_stopping(metric_name={metric_name!r}): no such metric was evaluated; "
                                 f"the validation sets report {names}")
        elif first_metric_only:
            first = watched[0][1][1]
            watched = [(i, r) for i, r in watched if r[1] == first]
        state["watched"] = [i for i, _ in watched]
        state["best"] = {i: None for i in state["watched"]}
        state["best_iter"] = {i: 0 for i in state["watched"]}
        state["best_list"] = {i: None for i in state["watched"]}
        state["run"] = env.model

    def _better(value, best, higher):
        return best is None or (value > best + min_delta if higher else value < best - min_delta)

    def _callback(env: CallbackEnv) -> None:
        if env.iteration == env.begin_iteration or state.get("run") is not env.model:
            _init(env)
        res = env.evaluation_result_list
        if _callback.watch_per_output:
            _per_output(env, res)
            return
        for i in state["watched"]:
            _, _, value, higher = res[i]
            if _better(value, state["best"][i], higher):
                state["best"][i] = value
                state["best_iter"][i] = env.iteration
                state["best_list"][i] = list(res)
            elif env.iteration - state["best_iter"][i] >= _patience(state["best_iter"][i]):
                if verbose:
                    print(f"Early stopping, best iteration is: [{state['best_iter'][i] + 1}]")
                raise EarlyStopException(state["best_iter"][i], state["best_list"][i])
        if env.iteration == env.end_iteration - 1:
            i = state["watched"][0]
            raise EarlyStopException(state["best_iter"][i], state["best_list"][i])

    def _per_output(env: CallbackEnv, res: list) -> None:
        for j, i in enumerate(state["watched"]):
            if j in env.frozen_outputs:
                continue
            _, _, value, higher = res[i]
            if _better(value, state["best"][i], higher):
                state["best"][i] = value
                state["best_iter"][i] = env.iteration
            elif env.iteration - state["best_iter"][i] >= _patience(state["best_iter"][i]):
                env.frozen_outputs.add(j)
        if len(env.frozen_outputs) == len(state["watched"]) or env.iteration == env.end_iteration - 1:
            bests = [state["best_iter"][i] for i in state["watched"]]
            if verbose:
                print(f"Early stopping per output, best iterations are: {[b + 1 for b in bests]}")
            raise EarlyStopException(max(bests), list(res), bests)
    _callback.order = 30
    _callback.stops_early = True  # the estimators add no early stopping of their own next to it
    _callback.per_output = per_output if metric_name is None else False  # the setting ...
    _callback.needs_per_output_metrics = metric_name is not None and "[" in metric_name
    _callback.watch_per_output = per_output is True  # ... as train() resolves it for each run
    return _callback


def progress_bar(total: int | None = None, desc: str = "boosting") -> Callable:
    """A tqdm progress bar over boosting rounds, showing the last evaluation results.

    The bar is closed when training ends, early stopping included.

    Parameters
    ----------
    total : int, optional
        The bar's length (default: the rounds of the training run).
    desc : str, default "boosting"

    Returns
    -------
    callable
    """
    from tqdm.auto import tqdm
    state: dict = {}

    def _callback(env: CallbackEnv) -> None:
        if env.iteration == env.begin_iteration:
            _close()
        if "bar" not in state:
            state["bar"] = tqdm(total=total or env.end_iteration - env.begin_iteration, desc=desc)
        bar = state["bar"]
        bar.update(1)
        if env.evaluation_result_list:
            shown = env.evaluation_result_list[:3]
            bar.set_postfix({f"{data}:{metric}": f"{value:.4g}" for data, metric, value, _ in shown})

    def _close() -> None:
        bar = state.pop("bar", None)
        if bar is not None:
            bar.close()
    _callback.order = 5
    _callback.close = _close
    return _callback
