"""DESIGN.md's layering rules, checked by parsing every module's imports."""
import ast
import subprocess
import sys
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "src" / "multigrove"


def _imports(path: Path) -> set[str]:
    """Absolute dotted names of everything a module imports."""
    pkg = ".".join(path.parent.relative_to(PKG.parent).parts)  # what "from ." means in this file
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg.split(".")
                base = base[: len(base) - (node.level - 1)]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module
            out.add(name)
            out |= {f"{name}.{a.name}" for a in node.names}
    return out


def _modules(sub: str):
    return sorted((PKG / sub).rglob("*.py")) if (PKG / sub).is_dir() else [PKG / sub]


def test_kernels_import_only_numpy_numba_and_dtypes():
    # llvmlite is Numba's own code generator (kernels/_llvm.py emits an LLVM intrinsic with it); types is Python's
    # function type (kernels/_variants.py copies a kernel's function to compile it again); warnings: _variants.py
    # silences Numba's warning on the kernels compiled parallel=True to call a parallel kernel (PARALLEL_CALLER)
    for path in _modules("kernels"):
        for name in _imports(path):
            top = name.split(".")[0]
            assert top in ("numpy", "numba", "llvmlite", "math", "typing", "types", "warnings") or \
                name.startswith(("multigrove.kernels", "multigrove._dtypes")), f"{path.name} imports {name}"


def test_data_and_boosting_do_not_import_upper_layers():
    for sub in ("data", "boosting"):
        for path in _modules(sub):
            for name in _imports(path):
                assert not name.startswith(("multigrove.sklearn", "multigrove.cli")), f"{path} imports {name}"
                if name.startswith("multigrove.xmc"):
                    assert name.startswith("multigrove.xmc.metrics"), f"{path} imports {name}"


def test_only_the_estimator_modules_import_sklearn_base():
    allowed = {PKG / "sklearn.py", PKG / "xmc" / "model.py", PKG / "xmc" / "embedding.py"}
    for path in PKG.rglob("*.py"):
        if any(n.startswith("sklearn.base") for n in _imports(path)):
            assert path in allowed, f"{path} imports sklearn.base"


def test_xmc_never_imports_boosting():
    for path in _modules("xmc"):
        assert not any(n.startswith("multigrove.boosting") for n in _imports(path)), path


def test_import_has_no_side_effects():
    code = ("import numba, numpy as np; t = numba.get_num_threads(); s = np.random.get_state()[1][:4].tolist(); "
            "import multigrove, sys; assert numba.get_num_threads() == t; "
            "assert np.random.get_state()[1][:4].tolist() == s; "
            "assert 'multigrove.sklearn' not in sys.modules and 'sklearn' not in sys.modules; print('ok')")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert res.stdout.strip() == "ok", res.stderr


def test_one_link_function():
    """Sigmoid and softmax of raw scores live in boosting.losses.link only (the Booster and the losses
    share it)."""
    users = [path for path in PKG.rglob("*.py") if path.parent.name != "kernels"
             and any(n in ("scipy.special.expit", "scipy.special.softmax") for n in _imports(path))]
    assert users == [PKG / "boosting" / "losses.py"], users


def test_one_growth_code_path_for_local_and_distributed_training():
    """multigrove.dask runs engine.boost (and so the one TreeGrower) over its DistributedRows builder;
    it neither grows trees nor builds histograms itself."""
    names = _imports(PKG / "dask.py")
    assert "multigrove.boosting.engine.boost" in names
    assert not any(n.startswith(("multigrove.boosting.grower", "multigrove.kernels")) for n in names), names
    growers = [path for path in PKG.rglob("*.py") if "class TreeGrower" in path.read_text()]
    assert growers == [PKG / "boosting" / "grower.py"]
