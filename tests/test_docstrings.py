"""Every public function and class has a numpydoc docstring."""
import inspect

import pytest

import multigrove as mg
from multigrove import datasets, plotting
from multigrove.xmc import LabelTreeClassifier, io, metrics


def _public_members(cls):
    for name, member in vars(cls).items():
        if name.startswith("_") or not callable(member) or isinstance(member, type):
            continue
        yield f"{cls.__name__}.{name}", member


def _objects():
    out = []
    top_level = [n for n in mg.__all__ if not n.startswith("__")] + ["GroveRegressor", "GroveClassifier"]
    for module, names in ((mg, top_level),
                          (plotting, [n for n in dir(plotting) if n.startswith("plot_")]),
                          (io, [n for n in dir(io) if n[0] != "_" and inspect.isfunction(getattr(io, n))
                                and getattr(io, n).__module__ == io.__name__]),
                          (metrics, metrics.__all__),
                          (datasets, [n for n in dir(datasets) if n.startswith(("load_", "make_"))])):
        for name in names:
            obj = getattr(module, name)
            out.append((f"{module.__name__}.{name}", obj))
            if isinstance(obj, type) and obj.__module__.startswith("multigrove"):
                out += [(f"{module.__name__}.{n}", m) for n, m in _public_members(obj)]
    out.append(("multigrove.xmc.LabelTreeClassifier", LabelTreeClassifier))
    from multigrove.xmc.embedding import LEMLProjection
    out.append(("multigrove.xmc.embedding.LEMLProjection", LEMLProjection))
    out += [(f"multigrove.xmc.embedding.{n}", m) for n, m in _public_members(LEMLProjection)]
    try:
        import multigrove.dask as mgd
    except ImportError:  # the dask extra is not installed
        mgd = None
    if mgd is not None:
        out.append(("multigrove.dask.train", mgd.train))
        for cls in (mgd.DaskGroveRegressor, mgd.DaskGroveClassifier):
            out.append((f"multigrove.dask.{cls.__name__}", cls))
            out += [(f"multigrove.dask.{n}", m) for n, m in _public_members(cls)]
    out += [(f"multigrove.xmc.{n}", m) for n, m in _public_members(LabelTreeClassifier)]
    return out


def _takes_parameters(obj) -> bool:
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return False
    return any(p.name not in ("self", "cls") and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
               for p in sig.parameters.values())


OBJECTS = _objects()


@pytest.mark.parametrize("name,obj", OBJECTS, ids=[n for n, _ in OBJECTS])
def test_numpydoc_docstring(name, obj):
    doc = inspect.getdoc(obj)
    assert doc and len(doc.strip()) > 20, f"{name} has no docstring"
    if isinstance(obj, type):
        if name.endswith(("GroveRegressor", "GroveClassifier", "LabelTreeClassifier", "Dataset", "LEMLProjection")):
            assert "Parameters\n----------" in doc, f"{name}: its docstring lists no Parameters section"
            assert "Attributes\n----------" in doc, f"{name}: its docstring lists no Attributes section"
    elif _takes_parameters(obj) and not name.endswith(("__init__",)):
        assert "Parameters\n----------" in doc, f"{name}: its docstring has no numpydoc Parameters section"


def test_the_walk_found_the_api():
    assert len(OBJECTS) > 60
