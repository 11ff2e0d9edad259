"""What every GradBench eval module of wengert's tool provides.

An eval module (``bench/gradbench/evals/<eval>.py``) defines its objective once, as the
plain NumPy a user would write, and exposes::

    functions(engine="auto") -> dict[str, Function]   # keyed by GradBench function name
    make_input(**sizes) -> dict                        # a GradBench-format input (JSON-able)

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
