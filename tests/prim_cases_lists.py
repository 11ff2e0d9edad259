"""Primitive specs of the lists-and-escape family (gathered by cases.py)."""
from __future__ import annotations

from cases import API, PrimSpec

SPECS = {
    "custom_body": PrimSpec(
        API, reason="the body of a custom-rule function that wengert cannot trace, run on "
                    "plain values: its impl is the user's function and its derivative the "
                    "user's rule, so there is nothing fixed to check here; tested through "
                    "wg.custom_jvp/wg.custom_vjp around scipy.integrate.quad, solve_ivp and "
                    "float() in control/test_custom.py, both engines, to second order"),
}
