"""What every GradBench eval module of wengert's tool provides.

An eval module (``bench/gradbench/evals/<eval>.py``) defines its objective once, as the
plain NumPy a user would write, and exposes::

    functions(engine="auto", backend="python") -> dict[str, Function]   # by GradBench name
    make_input(**sizes) -> dict                 # a GradBench-format input (JSON-able)

``backend`` is wengert's code backend for the derivatives (``ad_options``) and for the
plain objective (``compiled``: ``wengert.jit`` under ``"numba"``).

A ``Function`` splits one GradBench ``evaluate`` into three steps, so that only the work
itself is timed: ``prepare`` turns the JSON input into NumPy values (untimed), ``run``
computes (timed, repeated), ``output`` turns the result into the JSON the eval expects
(untimed).
"""

from dataclasses import dataclass
from typing import Any, Callable


@dataclass(frozen=True)
class Function:
    prepare: Callable[[Any], tuple]
    run: Callable[..., Any]
    output: Callable[[Any], Any]

    def __call__(self, input):
        return self.output(self.run(*self.prepare(input)))


def data_folder(eval_name):
    """GradBench's data files of ``eval_name``: under ``$GRADBENCH_DATA`` when
    set, else in the ``shared/gradbench-data`` folder beside the repository."""
    import os
    from pathlib import Path
    root = os.environ.get("GRADBENCH_DATA") or (
        Path(__file__).resolve().parents[3] / "shared" / "gradbench-data")
    return Path(root) / eval_name / "data"


def ad_options(engine, backend="python"):
    """The keywords that pick wengert's engine and backend for an eval's transforms. The
    default Python backend adds no keyword, so the evals also run on a wengert whose
    transforms take none."""
    return {"engine": engine} if backend == "python" else {"engine": engine, "backend": backend}


def compiled(f, backend="python"):
    """An eval's plain objective as the backend runs it: ``wengert.jit(f)`` under numba
    (compiled at its first call; where numba cannot compile it, wengert warns and runs f),
    ``f`` itself under Python."""
    if backend == "python":
        return f
    import wengert
    jit = getattr(wengert, "jit", None)
    if jit is None:               # the derivatives still run; the objective says why not
        def no_jit(*args):
            raise AttributeError(f"wengert has no jit: {f.__name__} cannot run on the "
                                 f"{backend} backend")
        return no_jit
    return jit(f)
