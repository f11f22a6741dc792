"""The README's examples run as doctests."""
import doctest
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_examples_run():
    result = doctest.testfile(str(README), module_relative=False,
                              optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 20, f"only {result.attempted} README examples were found"
    assert result.failed == 0, f"{result.failed} of {result.attempted} README examples failed (see the output above)"
