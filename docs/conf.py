"""Sphinx configuration of multigrove's documentation (``make docs``; warnings are errors)."""
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
os.environ.setdefault("MPLBACKEND", "Agg")

import multigrove  # noqa: E402

project = "multigrove"
author = "the multigrove developers"
copyright = "2026, the multigrove developers"
release = version = multigrove.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinx_gallery.gen_gallery",
]

autosummary_generate = True
autodoc_default_options = {"members": True, "inherited-members": False, "show-inheritance": False}
autodoc_typehints = "none"
autodoc_member_order = "bysource"
napoleon_numpy_docstring = True
napoleon_google_docstring = False
napoleon_use_rtype = False
# the estimators' constructor parameters are documented in the class docstrings
autoclass_content = "class"

sphinx_gallery_conf = {
    "examples_dirs": "examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    "abort_on_example_error": True,
}

templates_path = ["_templates"]
exclude_patterns = ["_build", "examples/GALLERY_HEADER.rst"]
html_theme = "pydata_sphinx_theme"
html_title = "multigrove"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
}
html_static_path = []
suppress_warnings = ["config.cache"]


def _skip_scikit_learn_members(app, what, name, obj, skip, options):
    """The estimators' pages document their own methods, not scikit-learn's metadata-routing setters."""
    module = getattr(obj, "__module__", "") or ""
    if name.startswith(("set_", "get_metadata")) and (module.startswith("sklearn") or "RequestMethod" in repr(obj)):
        return True
    return skip


def setup(app):
    app.connect("autodoc-skip-member", _skip_scikit_learn_members)
