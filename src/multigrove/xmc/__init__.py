"""Extreme multi-label tooling: data formats (io).  Never imports multigrove.boosting."""
