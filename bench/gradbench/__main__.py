"""``python -m bench.gradbench [--engine auto|source|trace] [--backend python|numba]
[--multithreaded]``: wengert's GradBench tool (see tool.py), on one core unless
--multithreaded; ``--backend numba`` compiles every eval's derivatives and objective
with numba where wengert can (see tool.py for what happens where it cannot)."""
import argparse
import ctypes
import os

parser = argparse.ArgumentParser(prog="python -m bench.gradbench", description=__doc__)
parser.add_argument("--engine", choices=("auto", "source", "trace"), default="auto")
parser.add_argument("--backend", choices=("python", "numba"), default="python",
                    help="wengert's code backend for every eval (default: python)")
parser.add_argument("--multithreaded", action="store_true",
                    help="let BLAS use every core (by default: one thread, pinned to one core)")
args = parser.parse_args()

if not args.multithreaded:
    # before NumPy is imported, so that its BLAS starts one thread
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                "NUMBA_NUM_THREADS"):
        os.environ[var] = "1"
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})

try:
    # glibc maps a large array (over 128 KiB to 32 MiB, adaptively) on its own and
    # unmaps it when freed, and trims the heap: the next array then pays a page
    # fault per 4 KiB page, in a VM often more than the arithmetic. Keep freed
    # memory for reuse instead (1.4x to 2.7x faster evals here).
    libc = ctypes.CDLL("libc.so.6")
    libc.mallopt(-3, 1 << 30)           # M_MMAP_THRESHOLD: heap, not mmap, below 1 GiB
    libc.mallopt(-1, 2 ** 31 - 1)       # M_TRIM_THRESHOLD: never trim the heap
except (OSError, AttributeError):
    pass                                # not glibc: its allocator's defaults

from .tool import serve  # noqa: E402  (after the settings above)

try:
    serve(args.engine, backend=args.backend)
except (BrokenPipeError, KeyboardInterrupt):
    pass
