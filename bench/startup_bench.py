"""Start-up: what a user waits for before the first derivative (issue 25).

Three measurements, each in a fresh Python process (so nothing is cached in memory), each
repeated and reported as the median:

1. ``import wengert`` against ``import numpy`` in the same kind of process: the ratio of
   their wall times (target: at most 2). Bytecode caching is on, as for an installed package
   (a private ``PYTHONPYCACHEPREFIX``, warmed by one run first).
2. The first ``grad`` call of a ten-line function against its later calls, per engine,
   without SciPy, with SciPy imported before wengert, after it (before the first call), and
   by the loss's own module: the difference in milliseconds (target: at most 50). The last
   case pays CPython's first full garbage collection after SciPy's import (about 25 ms over
   SciPy's objects) inside the first call; the row after it collects first, to show it.
   The first call reads the function's source, stages it and writes its code; the later
   ones run the code.
3. The first derivative through one ``scipy.special`` function, after ``import
   scipy.special``: which SciPy modules wengert imported on top of the user's (target:
   none: a family's rules load when one of its functions is first used, and only it).

Run from the repository root:  ``python -m bench.startup_bench``  (``--repeats N``).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap

IMPORT_RATIO_TARGET = 2.0
FIRST_CALL_TARGET_MS = 50.0

_LOSS = '''
import numpy as np

def loss(w, x, y):
    z = x @ w
    p = 1.0 / (1.0 + np.exp(-z))
    eps = 1e-9
    ll = y * np.log(p + eps) + (1.0 - y) * np.log(1.0 - p + eps)
    reg = 0.01 * np.sum(w ** 2)
    out = -np.mean(ll) + reg
    if out > 100.0:
        out = out * 0.5
    return out

'''

_SPECIAL_LOSS = '''
import numpy as np
import scipy.special


def special_loss(w):
    return np.sum(scipy.special.gammaln(w * w + 1.0))
'''

_IMPORT = '''
import time
t0 = time.perf_counter()
import {module}
print(time.perf_counter() - t0)
'''

_FIRST_CALL = '''
import sys, time, json
{scipy}
import numpy as np
import wengert as wg
sys.path.insert(0, {folder!r})
from {module} import loss
{scipy_after}
{collect}
rng = np.random.default_rng(0)
x = rng.standard_normal((20, 5)); y = (rng.random(20) > 0.5) * 1.0; w = rng.standard_normal(5)
g = wg.grad(loss, engine={engine!r})
t0 = time.perf_counter(); g(w, x, y); first = time.perf_counter() - t0
later = []
for _ in range(30):
    t0 = time.perf_counter(); g(w, x, y); later.append(time.perf_counter() - t0)
later.sort()
print(json.dumps([first, later[len(later) // 2]]))
'''

_SCIPY_FAMILY = '''
import sys, json, importlib
import scipy.special
import numpy as np
import wengert as wg
sys.path.insert(0, {folder!r})
before = {{m for m in sys.modules if m.startswith("scipy.")}}
from special_loss import special_loss
g = wg.grad(special_loss)(np.array([0.5, 1.5, 2.5]))
after = {{m.split(".")[1] for m in sys.modules if m.startswith("scipy.") and m not in before
          and not m.split(".")[1].startswith("_")}}
families = sorted(m for m in sys.modules if m.startswith("wengert.scipy."))
print(json.dumps([sorted(after), families]))
'''


def _env(prefix):
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)        # cached bytecode, as installed code has
    env["PYTHONPYCACHEPREFIX"] = prefix
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _run(code, env):
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                         capture_output=True, text=True, check=True)
    return out.stdout.strip().splitlines()[-1]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="wengert-startup-") as folder:
        for name, text in (("startup_loss", _LOSS), ("special_loss", _SPECIAL_LOSS),
                           ("scipy_loss", _LOSS + "\n\nimport scipy.special\n")):
            with open(os.path.join(folder, name + ".py"), "w") as f:
                f.write(text)
        env = _env(os.path.join(folder, "pycache"))
        for module in ("numpy", "wengert", "scipy.special"):      # warm the bytecode cache
            _run(_IMPORT.format(module=module), env)
        for engine in ("source", "trace"):
            _run(_FIRST_CALL.format(scipy="", scipy_after="", folder=folder, engine=engine,
                                    module="startup_loss", collect=""), env)

        print(f"start-up, medians of {args.repeats} fresh processes "
              f"(Python {sys.version.split()[0]})\n")
        # the two imports alternate, so a change in the machine's load meets both alike
        samples = {"numpy": [], "wengert": []}
        for _ in range(args.repeats):
            for m in samples:
                samples[m].append(float(_run(_IMPORT.format(module=m), env)))
        times = {m: statistics.median(s) for m, s in samples.items()}
        ratio = times["wengert"] / times["numpy"]
        print(f"{'import':<34}{'seconds':>10}{'ratio':>10}{'target':>10}")
        print(f"{'import numpy':<34}{times['numpy']:>10.3f}{1.0:>10.2f}")
        print(f"{'import wengert':<34}{times['wengert']:>10.3f}{ratio:>10.2f}"
              f"{'<= ' + str(IMPORT_RATIO_TARGET):>10}  {'ok' if ratio <= IMPORT_RATIO_TARGET else 'OVER'}")

        print(f"\n{'first grad call (ten-line loss)':<58}{'first ms':>10}{'later ms':>10}"
              f"{'over ms':>10}{'target':>10}")
        scipy = "import scipy.special, scipy.stats"
        for when in ("", "before", "after", "by the loss's module", "by it, then gc.collect()"):
            for engine in ("auto", "source", "trace"):
                code = _FIRST_CALL.format(scipy=scipy if when == "before" else "",
                                          scipy_after=scipy if when == "after" else "",
                                          module="scipy_loss" if "by" in when else "startup_loss",
                                          collect="import gc; gc.collect()" if "gc" in when else "",
                                          folder=folder, engine=engine)
                runs = [json.loads(_run(code, env)) for _ in range(args.repeats)]
                first = statistics.median(r[0] for r in runs) * 1e3
                later = statistics.median(r[1] for r in runs) * 1e3
                over = first - later
                label = f"engine={engine}" + (f", SciPy imported {when}" if when else "")
                print(f"{label:<58}{first:>10.1f}{later:>10.3f}{over:>10.1f}"
                      f"{'<= ' + str(int(FIRST_CALL_TARGET_MS)):>10}  "
                      f"{'ok' if over <= FIRST_CALL_TARGET_MS else 'OVER'}")

        extra, families = json.loads(_run(_SCIPY_FAMILY.format(folder=folder), env))
        print("\nfirst derivative through scipy.special.gammaln, after import scipy.special:")
        print(f"  SciPy modules wengert imported besides the user's: {extra or 'none'}"
              f"  {'ok' if not extra else 'OVER'}")
        print(f"  wengert's SciPy families loaded: {', '.join(families)}")


if __name__ == "__main__":
    main()
