"""``wengert.testing`` (``wengert/testing.py``): ``check_grads`` catches a
wrong rule, against finite differences.
"""
import numpy as np
import pytest

import wengert as wg
from wengert.testing import check_grads


def test_check_grads_catches_a_wrong_rule():
    @wg.custom_jvp
    def wrong_sin(x):
        return np.sin(x)

    @wrong_sin.defjvp
    def _(primals, tangents):
        return np.sin(primals[0]), tangents[0] * 1.1 * np.cos(primals[0])

    with pytest.raises(AssertionError, match="finite differences"):
        check_grads(wrong_sin, (np.array([0.3, 0.9]),), order=1)
