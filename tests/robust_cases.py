"""Functions for test_robust_api.py."""
import numpy as np


# --- deep structures ---------------------------------------------------------
def top_of_dict(t):
    """Reads the top two levels of ``{"a": {"a": ..., "b": v}, "b": v}``."""
    return t["b"] * t["a"]["b"] ** 2 + np.sin(t["b"])


def top_of_list(t):
    """Reads the top two levels of ``[[..., v], v]`` (lists or tuples)."""
    return t[1] ** 3 * t[0][1] + np.cos(t[0][1])
