"""Training callbacks (the LightGBM protocol): called after every round with a CallbackEnv."""
from __future__ import annotations

import dataclasses
from typing import Any, Callable

from .._validation import check_int


@dataclasses.dataclass
class CallbackEnv:
    model: Any
    params: dict
    iteration: int                   # 0-based index of the round just finished
    begin_iteration: int
    end_iteration: int
    evaluation_result_list: list     # [(data_name, metric_name, value, is_higher_better), ...]


class EarlyStopException(Exception):
    """Raised by a callback to stop training; carries the best iteration (0-based) and its scores."""

    def __init__(self, best_iteration: int, best_score: list):
        super().__init__(best_iteration)
        self.best_iteration = best_iteration
        self.best_score = best_score


def log_evaluation(period: int = 1, show_stdv: bool = False) -> Callable:
    """Print the evaluation results every `period` rounds."""
    period = check_int(period, "period", 0)

    def _callback(env: CallbackEnv) -> None:
        if period > 0 and env.evaluation_result_list and (env.iteration + 1) % period == 0:
            res = "\t".join(f"{d}'s {m}: {v:g}" for d, m, v, _ in env.evaluation_result_list)
            print(f"[{env.iteration + 1}]\t{res}")
    _callback.order = 10
    return _callback


def record_evaluation(eval_result: dict) -> Callable:
    """Record every evaluation into eval_result[data_name][metric_name] (a list per metric)."""
    if not isinstance(eval_result, dict):
        raise TypeError(f"eval_result must be a dict, got {type(eval_result).__name__}")
    eval_result.clear()

    def _callback(env: CallbackEnv) -> None:
        for data, metric, value, _ in env.evaluation_result_list:
            eval_result.setdefault(data, {}).setdefault(metric, []).append(value)
    _callback.order = 20
    return _callback


def early_stopping(stopping_rounds: int, first_metric_only: bool = False, verbose: bool = True,
                   min_delta: float = 0.0) -> Callable:
    """Stop when a validation metric has not improved for `stopping_rounds` rounds.

    Every metric of every validation set is watched (only the first with first_metric_only);
    the training set, if passed in valid_sets, is ignored.  The booster keeps every tree and
    records best_iteration, which predict() then uses by default.
    """
    stopping_rounds = check_int(stopping_rounds, "stopping_rounds", 1)
    if min_delta < 0:
        raise ValueError(f"min_delta must be >= 0, got {min_delta}")
    state: dict = {}

    def _init(env: CallbackEnv) -> None:
        watched = [(i, r) for i, r in enumerate(env.evaluation_result_list) if r[0] != "training"]
        if not watched:
            raise ValueError("early_stopping needs at least one validation set in valid_sets "
                             "(other than the training data)")
        if first_metric_only:
            first = watched[0][1][1]
            watched = [(i, r) for i, r in watched if r[1] == first]
        state["watched"] = [i for i, _ in watched]
        state["best"] = {i: None for i in state["watched"]}
        state["best_iter"] = {i: 0 for i in state["watched"]}
        state["best_list"] = {i: None for i in state["watched"]}

    def _callback(env: CallbackEnv) -> None:
        if not state:
            _init(env)
        res = env.evaluation_result_list
        for i in state["watched"]:
            _, _, value, higher = res[i]
            best = state["best"][i]
            better = best is None or (value > best + min_delta if higher else value < best - min_delta)
            if better:
                state["best"][i] = value
                state["best_iter"][i] = env.iteration
                state["best_list"][i] = list(res)
            elif env.iteration - state["best_iter"][i] >= stopping_rounds:
                if verbose:
                    print(f"Early stopping, best iteration is: [{state['best_iter'][i] + 1}]")
                raise EarlyStopException(state["best_iter"][i], state["best_list"][i])
        if env.iteration == env.end_iteration - 1:
            i = state["watched"][0]
            raise EarlyStopException(state["best_iter"][i], state["best_list"][i])
    _callback.order = 30
    return _callback


def progress_bar(total: int | None = None, desc: str = "boosting") -> Callable:
    """A tqdm progress bar over boosting rounds, showing the last evaluation results."""
    from tqdm.auto import tqdm
    state: dict = {}

    def _callback(env: CallbackEnv) -> None:
        if "bar" not in state:
            state["bar"] = tqdm(total=total or env.end_iteration - env.begin_iteration, desc=desc)
        bar = state["bar"]
        bar.update(1)
        if env.evaluation_result_list:
            bar.set_postfix({f"{d}:{m}": f"{v:.4g}" for d, m, v, _ in env.evaluation_result_list[:3]})
        if env.iteration == env.end_iteration - 1:
            bar.close()
    _callback.order = 5
    return _callback
