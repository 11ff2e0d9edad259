"""A differential fuzzer: random NumPy programs with control flow, written to
a real file (the source engine reads source), differentiated by every engine
and mode and checked against finite differences and against each other.

A program is a module: a global array ``G``, a global float ``C``, a random
generator ``RS``, an instance ``M`` of a small class whose method ``M.scale``
``f`` calls, a helper ``h`` that reads them (called by position and by
keyword), sometimes a helper ``g(x, v)`` returning a tuple ``(s, v)`` (early,
inside a traced ``if``), ``f(x, v)`` (``x`` a float, ``v`` an array of ``N``
floats) and ``fvec(x, v)``, a vector-valued function of ``f``. ``f`` is made of
assignments, ``if``/``elif``/``else`` on traced and Python conditions, nested
``for`` and ``while`` loops with ``break``, ``continue`` and early ``return``,
``v[i] = e`` and ``v[i] += e``, helper calls, random draws, broadcasting, and
what users write around them: loops over a dict of arrays, fixed-point
iterations whose test starts on Python numbers (``diff = 1.0; while diff >
tol``), while loops counted by a Python int and left by a traced ``break``,
while loops inside a traced ``if``, ``np.where`` with a Python-float branch,
and strings, lists and numbers first assigned in a loop with a traced exit
(or on one path of a branch in it) and not used after it. Its output is a float.

Checks (``check``), for the source and the trace engine:

* the derivative's value equals the plain call's, with the same random draws,
  and a derivative call leaves the generator where one plain call leaves it;
* the gradient against central differences of the plain function (at points
  where two step sizes agree: not next to a branch's switch);
* jvp against vjp (its pullback called with a Python float) by the
  dot-product test, and the two engines against each other;
* nested gradients in x, to order 4 (source engine), against central
  differences of the order below;
* on two programs in three, ``v`` float32: values and derivatives against
  the float64 ones;
* on every third program, ``jacfwd`` and ``jacrev`` of ``fvec`` in v against
  each other and central differences; on every third other program the
  Hessian of f in v against differences of the gradient (both engines;
  ``--hessians``: both on every program);
* dtypes: a float32 ``v`` gets a float32 gradient and cotangent, a float64 one
  float64; a jvp tangent has its primal output's dtype; the derivative in the
  Python float ``x`` is a Python float or a NumPy float64 scalar, the same
  type in both engines;
* the same derivative objects again after the inputs, ``G`` (in place), ``C``
  (rebound), ``M.k`` and the random state changed.

Outcomes: a wrong value, a raw crash (an exception that is not a typed
``wengert`` error; grouped by its type and the innermost wengert frame), a
dtype mismatch, and typed refusals (``UnsupportedSyntax``...: every program is
ordinary code; grouped by their message with names and line numbers
stripped). The exit status is 1 on any wrong value, crash or dtype mismatch.
Run many: ``python tests/fuzz_programs.py --programs 10000 --jobs 2`` (``make
fuzz``); one program, its source and its full traceback: ``--seed S``.
"""
from __future__ import annotations

import argparse
import functools
import importlib.util
import itertools
import os
import re
import sys
import tempfile
import time
import traceback
import warnings

import numpy as np

if __name__ == "__main__":      # a script: the wengert of this checkout, not the installed one
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import wengert as wg                            # noqa: E402
from wengert.core.errors import WengertError  # noqa: E402

N = 4                   # length of v and G
_COUNTER = itertools.count()
_DIR = None


# --- the generator ------------------------------------------------------------------
class Gen:
    """Writes one program, drawing every choice from ``pick(n) -> 0..n-1``
    (a seeded generator, or hypothesis's ``data.draw``): the same draws give
    the same program."""

    UNARY = ("np.sin({})", "np.cos({})", "np.tanh({})", "np.exp(np.tanh({}))",
             "np.sqrt(1.0 + {0} * {0})", "np.log(1.0 + {0} * {0})", "abs({})", "({}) ** 2",
             "np.arctan({})", "-({})")
    BINARY = ("{} + {}", "{} - {}", "{} * {}", "{0} / (1.0 + {1} * {1})",
              "np.maximum({}, {})", "np.minimum({}, {})", "np.where({0} > {1}, {0}, 0.5 * {1})",
              "np.where({0} > {1}, {0}, 0.5)")        # a Python-float branch
    # the method of the global ``M`` (an instance of a small class)
    METHODS = ("        return a * self.k + self.w\n",
               "        if np.sum(a) > self.k:\n"
               "            return a * self.k\n"
               "        return a + self.w\n")

    def __init__(self, pick):
        self.pick = pick
        self.lines = []
        self.loop_vars = []         # Python ints in scope (loop counters)
        self.depth = 0
        self.in_loop = 0
        self.uses_random = False
        self.scalars = ["x", "s", "t", "u"]      # float names in scope
        self.arrays = []            # names of shape-(N,) arrays in scope besides v and G
        self.fresh = itertools.count()
        self.helper = False         # writing the tuple helper ``g`` (which must not call g)
        self.has_g = False

    def choice(self, items):
        return items[self.pick(len(items))]

    def chance(self, p_in_8):
        return self.pick(8) < p_in_8

    def name(self, prefix):
        return f"{prefix}{next(self.fresh)}"

    def const(self):
        return self.choice(("0.5", "1.5", "0.25", "2.0", "0.7", "C", "1.0"))

    def scalar(self, depth=0):
        """A float expression."""
        k = self.pick(10 if depth < 2 else 4)
        if k < 2:
            return self.choice(self.scalars)
        if k == 2:
            return self.const()
        if k == 3:
            if self.loop_vars and self.chance(5):
                return f"v[{self.choice(self.loop_vars)}]"
            return f"v[{self.pick(N)}]"
        if k == 4:
            return self.choice(self.UNARY).format(_par(self.scalar(depth + 1)))
        if k in (5, 6):
            return self.choice(self.BINARY).format(_par(self.scalar(depth + 1)),
                                                   _par(self.scalar(depth + 1)))
        if k == 7:
            return self.choice(("np.sum({})", "np.mean({})", "np.max({})", "G @ ({})")).format(
                self.array(depth + 1))
        if k == 8:          # the helper, by position or keyword
            a, b = self.scalar(depth + 1), self.scalar(depth + 1)
            return self.choice((f"h({a}, {b})", f"h({a}, b={b})", f"h(b={b}, a={a})"))
        self.uses_random = True
        return self.choice(("RS.randn()", "RS.rand()", "float(np.sum(RS.randn(2)))"))

    def array(self, depth=0):
        """An expression of shape (N,)."""
        k = self.pick(9 if depth < 2 else 3)
        if k == 0:
            return self.choice(["v"] + self.arrays)
        if k == 1:
            return "G"
        if k == 2:
            return f"v * ({self.scalar(depth + 1)})"
        if k == 3:
            return self.choice(("np.sin({})", "np.tanh({})", "({}) ** 2")).format(
                self.array(depth + 1))
        if k == 4:
            return self.choice(("{} + {}", "{} * {}", "{} - {}")).format(
                _par(self.array(depth + 1)), _par(self.array(depth + 1)))
        if k == 5:
            self.uses_random = True
            return f"(v + 0.1 * RS.randn({N}))"
        if k == 6:
            return f"np.where(v > {self.scalar(depth + 1)}, v, G)"
        if k == 7:          # a Python-float branch
            return self.choice(("np.where(v > {}, v, 0.0)", "np.where(v < {}, 1.5, v)")).format(
                self.scalar(depth + 1))
        return f"M.scale({self.array(depth + 1)})"

    def condition(self):
        k = self.pick(6)
        if k < 3:
            return f"{self.scalar(1)} > {self.scalar(1)}"
        if k == 3 and self.loop_vars:
            return f"{self.choice(self.loop_vars)} {self.choice(('==', '>', '<'))} {self.pick(3)}"
        if k == 4:
            return f"{self.scalar(1)} > {self.const()} and {self.scalar(2)} < 3.0"
        return f"C > {self.choice(('0.5', '1.0'))}"          # a Python float

    def traced_condition(self):
        """A test on a value that (almost always) depends on x or v."""
        return f"{self.choice(('x', 's', 't', 'v[0]', 'np.sum(v)'))} > {self.scalar(1)}"

    def emit(self, line):
        self.lines.append("    " * self.depth + line)

    def indented(self, *lines):
        self.depth += 1
        for line in lines:
            self.emit(line)
        self.depth -= 1

    def block(self, n, assign=None):
        """``n`` statements; a name first assigned in them is not seen after
        the block. ``assign``: a new name the block assigns last."""
        start, scope, arrays = len(self.lines), len(self.scalars), len(self.arrays)
        for _ in range(n):
            self.statement()
        if assign is not None:
            self.emit(f"{assign} = {self.scalar(1)}")
        if len(self.lines) == start:
            self.emit("pass")
        del self.scalars[scope:]
        del self.arrays[arrays:]

    def loop_body(self, n):
        self.depth += 1
        self.in_loop += 1
        self.block(n)
        self.in_loop -= 1
        self.depth -= 1

    def statement(self):
        k = self.pick(31 if self.depth < 3 else 9)
        if k < 4:
            self.emit(f"{self.choice(self.scalars[1:])} = {self.scalar()}")
        elif k == 4:
            self.emit(f"{self.choice(self.scalars[1:])} {self.choice(('+=', '*=', '-='))} "
                      f"{self.scalar(1)}")
        elif k == 5:
            idx = self.choice(self.loop_vars) if self.loop_vars and self.chance(5) else self.pick(N)
            self.emit(f"v[{idx}] {self.choice(('=', '+=', '*='))} {self.scalar(1)}")
        elif k == 6:
            self.emit(f"v = {self.array()} * 1.0")      # never an alias of G
        elif k == 7 and self.in_loop:
            self.emit(f"if {self.condition()}:")
            self.indented(self.choice(("break", "continue")))
        elif k == 8 and self.in_loop:
            self.loop_local()
        elif k in (8, 9, 10):
            self.if_statement()
        elif k in (11, 12):
            self.for_loop()
        elif k == 13:
            self.while_loop()
        elif k == 14:
            self.emit(f"if {self.condition()}:")
            self.indented(self.returned(self.scalar()))
        elif k == 17:
            self.call_g()
        elif k == 18:
            self.converging_while()
        elif k == 19:
            self.counted_while()
        elif k == 20:
            self.dict_loop()
        elif k == 21:
            self.emit(f"if {self.traced_condition()}:")   # a while loop inside a traced if
            self.depth += 1
            self.choice((self.while_loop, self.counted_while, self.converging_while))()
            self.depth -= 1
        elif k == 22:
            self.for_loop(traced_exit=True)
        elif k >= 23:
            self.python_in_functions(k - 23)
        else:
            self.emit(f"s = s + {self.scalar(1)}")

    def returned(self, value):
        """A return statement: in the helper ``g``, a tuple ``(s, v)``."""
        return f"return ({value}, v)" if self.helper else f"return {value}"

    def loop_local(self):
        """A name first assigned in a loop and not used after it: a string
        label, a list, or a number; sometimes on one path of a branch."""
        name = self.name(self.choice(("lbl", "lst", "w")))
        if name.startswith("lbl"):
            value = repr(self.choice(("up", "down", "mid")))
        elif name.startswith("lst"):
            value = f"[{self.scalar(1)}, {self.scalar(1)}]"
        else:
            value = self.scalar(1)
        if self.chance(3):
            self.emit(f"if {self.condition()}:")
            self.indented(f"{name} = {value}")
            return
        self.emit(f"{name} = {value}")
        if name.startswith("lst") and self.chance(5):
            target = self.choice(self.scalars[1:])
            self.emit(f"{target} = {target} + " +
                      self.choice((f"{name}[{self.pick(2)}]", f"0.5 * sum({name})")))
        elif name.startswith("w"):
            self.scalars.append(name)       # read in the rest of the loop's block

    def if_statement(self):
        # sometimes a name first assigned in every branch, read after the if
        # (on every path that gets there it is assigned)
        fresh = self.name("w") if self.chance(3) else None
        self.emit(f"if {self.condition()}:")
        self.depth += 1
        self.block(1 + self.pick(2), fresh)
        self.depth -= 1
        if self.chance(3):
            self.emit(f"elif {self.condition()}:")
            self.depth += 1
            self.block(1, fresh)
            self.depth -= 1
        if fresh or self.chance(4):
            self.emit("else:")
            self.depth += 1
            self.block(1 + self.pick(2), fresh)
            self.depth -= 1
        if fresh:
            self.scalars.append(fresh)

    def for_loop(self, traced_exit=False):
        """``for`` over a range; ``traced_exit``: its last statement breaks on
        a traced test (sometimes after assigning a new name on that path)."""
        var = "ijk"[len(self.loop_vars)] if len(self.loop_vars) < 3 else None
        if var is None:
            return
        self.emit(f"for {var} in range({1 + self.pick(N)}):")
        self.loop_vars.append(var)
        self.loop_body(1 + self.pick(3))
        if traced_exit:
            self.depth += 1
            self.emit(f"if {self.traced_condition()}:")
            self.in_loop += 1
            self.depth += 1
            scope = len(self.scalars)
            if self.chance(5):
                self.loop_local()
            del self.scalars[scope:]
            self.emit("break")
            self.depth -= 2
            self.in_loop -= 1
        self.loop_vars.pop()

    def while_loop(self):
        counter = f"n{self.depth}"
        self.emit(f"{counter} = 0")
        self.emit(f"while {self.scalar(1)} < {self.choice(('2.0', '5.0', '1.0'))} and "
                  f"{counter} < {1 + self.pick(4)}:")
        self.indented(f"{counter} = {counter} + 1")
        self.loop_body(1 + self.pick(2))

    def counted_while(self):
        """A while loop counted by a Python int, left early by a break on a
        traced test."""
        counter = self.name("c")
        self.emit(f"{counter} = 0")
        self.emit(f"while {counter} < {2 + self.pick(4)}:")
        self.indented(f"{counter} = {counter} + 1")
        self.loop_body(1 + self.pick(2))
        self.depth += 1
        self.emit(f"if {self.traced_condition()}:")
        self.indented("break")
        self.depth -= 1
        if self.chance(3):
            self.loop_body(1)

    def converging_while(self):
        """A fixed-point iteration whose test starts on Python numbers
        (``diff = 1.0``) and becomes traced inside the loop."""
        n = next(self.fresh)
        diff, count, old, new = f"diff{n}", f"m{n}", f"old{n}", f"new{n}"
        target = self.choice(self.scalars[1:])
        vector = self.chance(3)
        self.emit(f"{diff} = 1.0")
        self.emit(f"{count} = 0")
        self.emit(f"{old} = " + ("v * 0.5" if vector else self.scalar(1)))
        self.emit(f"while {diff} > {self.choice(('1e-3', '1e-4', '0.01'))} and "
                  f"{count} < {self.choice(('8', '20', '30'))}:")
        self.depth += 1
        self.emit(f"{count} = {count} + 1")
        self.emit(f"{new} = 0.5 * np.{self.choice(('cos', 'sin', 'tanh'))}({old}) + "
                  f"0.3 * {_par(self.scalar(2))}")
        self.emit(f"{diff} = " + (f"np.max(np.abs({new} - {old}))" if vector
                                   else f"abs({new} - {old})"))
        if self.chance(3):
            scope = len(self.scalars)
            self.loop_local()
            del self.scalars[scope:]
        self.emit(f"{old} = {new}")
        self.depth -= 1
        if vector:
            self.emit(self.choice((f"v = {old} * 1.0", f"{target} = {target} + np.sum({old})")))
        else:
            self.emit(self.choice((f"{target} = {old}", f"{target} = {target} + {old}")))

    def dict_loop(self):
        """A loop over a dict of arrays that f builds from v."""
        n = next(self.fresh)
        d, a = f"d{n}", f"a{n}"
        keys = ("a", "b", "c")[:2 + self.pick(2)]
        self.emit(f"{d} = {{" + ", ".join(f"{k!r}: {_par(self.array(1))} * 1.0" for k in keys)
                  + "}")
        style = self.pick(3)
        if style == 0:
            self.emit(f"for {a} in {d}.values():")
        elif style == 1:
            self.emit(f"for key{n}, {a} in {d}.items():")
        else:
            self.emit(f"for key{n} in {d}:")
            self.indented(f"{a} = {d}[key{n}]")
        target = self.choice(self.scalars[1:])
        self.indented(self.choice((
            f"{target} = {target} + {self.choice(('np.sum', 'np.mean', 'np.max'))}({a})",
            f"v = v + 0.25 * {a}")))
        self.arrays.append(a)
        self.loop_body(self.pick(3))
        self.arrays.pop()

    # --- issue 25: dicts built in f, counters and values written on an object,
    # try/except, masked singular functions -------------------------------------
    SINGULAR = ("np.sqrt(np.maximum({}, 0.0))", "np.maximum({}, 0.0) ** 0.5",
                "np.arcsin(np.minimum(2.0 * ({}), 1.0))",
                "np.where({0} > 0.0, np.sqrt(np.maximum({0}, 0.0)), 0.0)",
                "np.cbrt(np.maximum({}, 0.0))")

    def python_in_functions(self, k):
        """One of: a dict built item by item and read back; the global
        object ``K``'s counter incremented and a value stored on it; a
        ``try`` whose handler runs when the global dict ``OPTS`` lacks a key;
        a predicate of traced values (a count, ``isnan``, ``all``); a
        boolean mask of the data; a list as an operand; a function singular
        at 0 of a value masked to exactly 0 somewhere (its derivative there
        must be 0, not nan)."""
        target = self.choice(self.scalars[1:])
        if k == 0:
            d = self.name("dd")
            self.emit(f"{d} = {{}}")
            self.emit(f"{d}['a'] = {self.scalar(1)}")
            if self.chance(4):
                self.emit(f"{d}['b'] = {d}['a'] * {self.scalar(2)}")
                self.emit(f"{target} = {target} + {d}['b']")
            else:
                self.emit(f"{d}['a'] += {self.scalar(2)}")
                self.emit(f"{target} = {target} + {d}['a']")
        elif k == 1:
            self.emit("K.calls += 1")
            if self.chance(4):
                self.emit(f"K.last = {target}")
        elif k == 2:
            self.emit("try:")
            self.indented(f"{target} = {target} + OPTS[{self.choice(('a', 'b'))!r}] * "
                          f"{_par(self.scalar(1))}")
            self.emit("except KeyError:")
            self.indented(f"{target} = {target} + {self.scalar(1)}")
            if self.chance(3):
                self.emit("finally:")
                self.indented(f"u = u + {self.const()}")
        elif k == 4:
            # a predicate of traced values: a count, a test, a constant of the derivative
            pred = self.choice(("np.count_nonzero(v > {c})", "float(np.any(np.isnan(v)))",
                                "float(np.all(v > {c}))", "np.sum(np.isclose(v, {c}))"))
            self.emit(f"{target} = {target} + {self.scalar(1)} * "
                      f"{pred.format(c=self.const())}")
        elif k == 5:
            # a mask computed from the data, read (its length known when the code runs)
            self.emit(f"{target} = {target} + np.sum(v[v > {self.const()}] ** 2)")
        elif k == 6:
            # a list as the other operand
            items = (self.choice(("0.1", "0.5", "-0.3", "1.2")) for _ in range(4))
            lst = "[" + ", ".join(items) + "]"
            self.emit(f"{target} = {target} + np.sum((v - {lst}) ** 2) * {self.scalar(1)}")
        else:
            a = self.choice(("v", f"v - {self.const()}", f"v * ({self.scalar(2)})"))
            expr = self.choice(self.SINGULAR).format(a)
            if self.chance(3):
                expr = f"np.tril(np.sqrt((({a})[:, None] - ({a})[None, :]) ** 2), -1)"
            self.emit(f"{target} = {target} + np.sum({expr})")

    def call_g(self):
        """The tuple helper ``g``: unpacked, or one element taken."""
        if not self.has_g or self.helper:
            self.emit(f"u = u + {self.scalar(1)}")
            return
        target = self.choice(self.scalars[1:])
        if self.chance(5):
            self.emit(f"{target}, v = g({self.scalar(1)}, v)")
        else:
            self.emit(f"{target} = {target} + g({self.scalar(1)}, v * 1.0)[0]")

    def function(self, name, statements):
        """``def name(x, v)`` with a body of ``statements`` random statements."""
        self.lines, self.depth = [], 1
        self.emit("s = x * 0.5")
        self.emit("t = np.sum(v) * 0.25")
        self.emit("u = 1.0")
        if self.has_g:
            self.call_g()
        self.block(statements)
        if self.helper:     # an early tuple return inside a traced if, then the last one
            self.emit(f"if {self.traced_condition()}:")
            self.indented(self.returned(self.scalar()))
            self.emit(self.choice(("return (s, v)", f"return ({self.scalar()}, v * u)")))
        else:
            self.emit(f"return {self.scalar()}")
        return f"def {name}(x, v):\n" + "\n".join(self.lines) + "\n"

    def program(self):
        g = ", ".join(repr(round(0.3 + 0.4 * k, 2)) for k in range(N))
        helper = ""
        if self.chance(3):
            self.helper = True
            helper = self.function("g", 1 + self.pick(2)) + "\n\n"
            self.helper, self.has_g = False, True
        body = self.function("f", 2 + self.pick(5))
        return (f"import numpy as np\n\n"
                f"G = np.array([{g}])\n"
                f"C = {self.choice(('0.7', '1.3'))}\n"
                f"RS = np.random.RandomState(0)\n\n\n"
                f"class Scaler:\n"
                f"    def __init__(self, k):\n"
                f"        self.k = k\n"
                f"        self.w = G * 0.5\n\n"
                f"    def scale(self, a):\n"
                f"{self.choice(self.METHODS)}\n\n"
                f"M = Scaler({self.choice(('0.9', '1.2'))})\n\n\n"
                f"class Counter:\n"
                f"    def __init__(self):\n"
                f"        self.calls = 0\n"
                f"        self.last = None\n\n\n"
                f"K = Counter()\n"
                f"OPTS = {self.choice(OPTIONS)}\n\n\n"
                f"def h(a, b):\n"
                f"    if a > b:\n"
                f"        return np.sin(a) * C + b\n"
                f"    return a * b * 0.5 + G[0]\n\n\n"
                f"{helper}"
                f"{body}\n\n"
                f"def fvec(x, v):\n"
                f"    r = f(x, v * 1.0)\n"
                f"    return v * r + np.sin(v)\n")


# the global dict a ``try`` reads: without a key, the handler runs
OPTIONS = ("{}", "{'a': 0.5}", "{'a': 1.5, 'b': 0.25}")


def _par(e):
    """``e`` in parentheses unless it is one name or number."""
    return e if re.fullmatch(r"[\w.]+", e) else f"({e})"


# --- loading a program from a file -----------------------------------------------
def load(source):
    """Write ``source`` to a file and import it as a fresh module."""
    global _DIR
    if _DIR is None:
        _DIR = tempfile.mkdtemp(prefix="wengert-fuzz-")
    name = f"fuzzprog_{os.getpid()}_{next(_COUNTER)}"
    path = os.path.join(_DIR, name + ".py")
    with open(path, "w") as fh:
        fh.write(source)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# --- outcomes ---------------------------------------------------------------------
class WrongValue(AssertionError):
    """A derivative (or value) that disagrees with its reference. ``what``
    names the check."""

    def __init__(self, what, detail, source):
        super().__init__(f"{what}: {detail}\n{source}")
        self.what = what


class AliasedOutput(AssertionError):
    """An output of a transform that shares memory with an argument, a
    tangent or cotangent passed in, a global of the program, or another
    output. ``what`` names the check."""

    def __init__(self, what, source):
        super().__init__(f"{what}\n{source}")
        self.what = what


def _check_fresh(what, outs, visible, source):
    """No array among ``outs`` shares memory with one of ``visible`` or with
    another of ``outs``."""
    arrays = [o for o in _leaves(outs) if isinstance(o, np.ndarray)]
    for k, o in enumerate(arrays):
        for w in list(visible) + arrays[:k]:
            if isinstance(w, np.ndarray) and np.shares_memory(o, w):
                raise AliasedOutput(f"{what}: an output shares memory with an input, a "
                                    "global or another output", source)


def _leaves(tree):
    if isinstance(tree, (tuple, list)):
        return [x for t in tree for x in _leaves(t)]
    return [tree]


def _globals_of(mod):
    """The program's arrays a caller can reach: G, M's (those it has)."""
    return [a for a in (getattr(mod, "G", None), getattr(getattr(mod, "M", None), "w", None))
            if a is not None]


def _effects(mod, fn):
    """(how many times ``fn()`` counted on ``K``, what it left in ``K.last``)."""
    counter = getattr(mod, "K", None)
    if counter is None:             # a program written by hand, without the counter
        fn()
        return 0, None
    before = counter.calls
    fn()
    return counter.calls - before, counter.last


def _reset_last(mod):
    if hasattr(mod, "K"):
        mod.K.last = None


def _check_effects(engine, mod, plain_effects, got_effects, source):
    """A derivative call counts on ``K`` as often as one plain call, and
    leaves the plain value in ``K.last`` (not a traced one)."""
    (n_plain, last_plain), (n_got, last_got) = plain_effects, got_effects
    if n_got != n_plain:
        raise WrongValue(f"{engine}: K.calls += 1 made {n_got} times, the plain call "
                         f"{n_plain}", "", source)
    if (last_plain is None) != (last_got is None) or last_plain is not None and (
            not isinstance(last_got, (float, int, np.ndarray, np.generic))
            or not np.array_equal(np.asarray(last_got), np.asarray(last_plain))):
        raise WrongValue(f"{engine}: K.last is {last_got!r}, the plain call left "
                         f"{last_plain!r}", "", source)


class DtypeMismatch(AssertionError):
    """A derivative whose dtype (or scalar type) breaks NumPy's promotion
    rules; raised by ``check`` once the values were all checked."""


class Report:
    def __init__(self):
        self.checks = 0
        self.refused = {}           # refusal group -> (engine, the first full message)
        self.dtypes = {}            # dtype-mismatch group -> its first detail
        self.skipped_fd = 0         # points where finite differences were not reliable
        self.stage = "loading"      # the check under way (a crash's message says which)

    def refuse(self, engine, err):
        self.refused.setdefault(refusal_group(err), (engine, str(err)))

    def dtype(self, group, detail):
        self.dtypes.setdefault(group, detail)


def refusal_group(err):
    """A typed error's class and message, with file names, line numbers and
    the program's names stripped: refusals of one construct share a group."""
    msg = str(err).split("\n")[0]
    msg = re.sub(r"([^\s:'\"(]+\.py|<[\w -]+>)(:\d+)+", "<file>", msg)
    msg = re.sub(r"\b(line|column|col) \d+", r"\1 #", msg)
    msg = re.sub(r"(?<!=)'[A-Za-z_]\w*'", "'<name>'", msg)     # not engine='trace'
    msg = re.sub(r"<unassigned [\w]*>", "<unassigned>", msg)
    msg = re.sub(r"<[\w.]+ object at 0x[0-9a-f]+>", "<object>", msg)
    for _ in range(3):      # innermost containers first
        msg = re.sub(r"\{[^{}]*\}", "{...}", msg)
        msg = re.sub(r"\[[^\[\]]*\]", "[...]", msg)
    # the program's numbered names (w3, lst12), not dtypes (float32, f64)
    msg = re.sub(r"\b(?!(?:float|u?int|complex|f|i|c)\d+\b)([A-Za-z_]+)\d+\b", r"\1#", msg)
    return f"{type(err).__name__}: {msg}"


def crash_group(err):
    """An untyped exception's class and the innermost frame of wengert's own
    code in its traceback (the generated code's, if that is where it is)."""
    root = os.path.dirname(os.path.abspath(wg.__file__))
    site, last = "no wengert frame", "wengert"
    for fr in traceback.extract_tb(err.__traceback__):
        last = "the program" if "fuzzprog_" in fr.filename else "NumPy" \
            if f"{os.sep}numpy{os.sep}" in fr.filename else "wengert"
        if os.path.abspath(fr.filename).startswith(root + os.sep):
            site = f"wengert/{os.path.relpath(fr.filename, root)}:{fr.lineno} in {fr.name}"
        elif fr.filename.startswith("<wengert-generated"):
            site = f"<wengert-generated> in {fr.name}"
    raised = "" if last == "wengert" else f", raised in {last}"
    return f"{type(err).__name__} at {site}{raised}"


def _close(got, want, rtol, atol, what, source):
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    if got.shape != want.shape:
        raise WrongValue(what, f"shape {got.shape} against {want.shape}", source)
    finite = np.isfinite(want) & np.isfinite(got)
    if not np.array_equal(np.isfinite(want), np.isfinite(got)):
        raise WrongValue(what, f"non-finite mismatch {got} against {want}", source)
    err = np.max(np.abs(got - want)[finite], initial=0.0)
    scale = np.max(np.abs(want)[finite], initial=0.0)
    if err > atol + rtol * scale:
        raise WrongValue(what, f"{got} against {want} (error {err:.3g})", source)


def _kind(d):
    """How a derivative in a Python float is typed, for the dtype checks."""
    if type(d) in (float, np.float64):
        return type(d).__name__
    if isinstance(d, np.ndarray):
        return f"{d.ndim}-d ndarray of {d.dtype}"
    return f"{type(d).__name__} ({np.asarray(d).dtype})"


def _check_x_type(report, where, kinds):
    """The derivatives in the Python float ``x`` (``kinds``: engine ->
    ``_kind``) are Python floats or float64 scalars, one type in both engines."""
    for engine, k in kinds.items():
        if k not in ("float", "float64"):
            report.dtype(f"{engine}: {where} is a {k}, not a float or float64 scalar", k)
    if len(set(kinds.values())) > 1 and set(kinds.values()) <= {"float", "float64"}:
        report.dtype(f"{where}: a {kinds['source']} from source, a {kinds['trace']} from trace",
                     kinds)


def _check_dtype(report, where, got, want):
    got = np.asarray(got).dtype
    if got != want:
        report.dtype(f"{where} is {got}, not {want}", f"{got} against {want}")


def _run(fn, seed, mod):
    mod.RS.seed(seed)
    return fn()


def _fd(fun, u, seed, mod, eps):
    """Central differences of ``fun`` along each axis of the array ``u``
    (columns), every evaluation with the same draws."""
    cols = [(_run(lambda: fun(u + eps * e), seed, mod) - _run(lambda: fun(u - eps * e), seed, mod))
            / (2 * eps) for e in np.eye(u.size)]
    return np.stack([np.asarray(c, dtype=np.float64) for c in cols], axis=-1)


def _reliable(fun, u, seed, mod, report, steps=(1e-5, 1e-6)):
    """``_fd`` (the first step) where two step sizes agree, else None."""
    a, b = (_fd(fun, u, seed, mod, eps) for eps in steps)
    if np.max(np.abs(a - b)) > 1e-4 * max(1.0, float(np.max(np.abs(a)))):
        report.skipped_fd += 1
        return None
    return a


def _reliable_fd(f, x, v, seed, mod, report):
    """Finite differences of f in (x, v) where two step sizes agree, else
    None: (d/dx, d/dv, their own error), the error bounded by the steps'
    disagreement (a central difference's truncation error is quadratic in the
    step, so the larger step's is about its distance to the smaller's; at a
    large curvature it exceeds the 1e-5 relative tolerance by itself)."""
    u = np.concatenate([[x], v])

    def fun(xv):
        return float(f(float(xv[0]), xv[1:].copy()))
    d = _reliable(fun, u, seed, mod, report)
    if d is None:
        return None
    err = float(np.max(np.abs(d - _fd(fun, u, seed, mod, 1e-6))))
    return d[0], d[1:], err


def _typed(fn, engine, report, stage):
    """``fn()``, or None when wengert refuses with a typed error (noted).
    Every other exception is a crash and propagates. ``stage``: what ``fn``
    does, for a crash's message."""
    report.stage = f"{engine}: {stage}"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn()
    except WengertError as err:
        report.refuse(engine, err)
        return None


def _state(rs):
    st = rs.get_state()
    return st[1].copy(), st[2], st[3], st[4]


def _same_state(a, b):
    return np.array_equal(a[0], b[0]) and a[1:] == b[1:]


def _point(f, mod, rng):
    """(x, v, the random state's seed, the plain value there), the value None
    where the program is not finite there, even in values it does not return
    (an overflow, a log of a negative: reverse mode multiplies such a value's
    zero cotangent, and 0 * inf is nan, as in every AD tool)."""
    x = float(rng.uniform(-1.5, 1.5))
    v = rng.uniform(-1.0, 1.0, N)
    draw_seed = int(rng.integers(0, 2 ** 31))
    try:
        with np.errstate(over="raise", invalid="raise", divide="raise"):
            plain = _run(lambda: f(x, v.copy()), draw_seed, mod)
    except (ZeroDivisionError, FloatingPointError, OverflowError):
        return x, v, draw_seed, None
    if not np.isfinite(plain) or abs(plain) > 1e6:
        return x, v, draw_seed, None
    return x, v, draw_seed, plain


ENGINES = ("source", "trace")


def check(source, seed=0, orders=4, hessians=None, report=None):
    """Run every check on the program ``source``; raise ``WrongValue`` at the
    first wrong value, and ``DtypeMismatch`` at the end if a dtype was wrong
    (any non-wengert exception propagates: a crash). Returns the Report
    (``report``, filled in, if given). ``hessians``: Jacobians and Hessians on
    every program (True), none (False), or on a third of the seeds each (None)."""
    mod = load(source)
    f = mod.f
    report = Report() if report is None else report
    rng = np.random.default_rng(seed)
    x, v, draw_seed, plain = _point(f, mod, rng)
    if plain is None:
        return report
    after_plain = _state(mod.RS)
    _reset_last(mod)
    plain_effects = _effects(mod, lambda: _run(lambda: f(x, v.copy()), draw_seed, mod))
    grads = {}
    for engine in ENGINES:
        vg = wg.value_and_grad(f, argnums=(0, 1), engine=engine)
        v_in = v.copy()
        _reset_last(mod)
        got = [None]
        effects = _effects(mod, lambda: got.__setitem__(0, _typed(
            lambda: _run(lambda: vg(x, v_in), draw_seed, mod), engine, report,
            "value_and_grad")))
        res = got[0]
        if res is None:
            continue
        _check_effects(engine, mod, plain_effects, effects, source)
        _check_fresh(f"{engine}: value_and_grad", res, [v_in] + _globals_of(mod), source)
        if not np.array_equal(v_in, v):
            raise WrongValue(f"{engine}: the caller's array was written", "", source)
        if not _same_state(_state(mod.RS), after_plain):
            raise WrongValue(f"{engine}: a derivative call drew other random numbers than a "
                             f"plain call", "", source)
        value, (gx, gv) = res
        report.checks += 1
        _close(value, plain, 1e-12, 1e-12, f"{engine}: value_and_grad's value", source)
        _check_dtype(report, f"{engine}: d/dv of a float64 v", gv, np.float64)
        grads[engine] = (gx, gv, vg)
    if not grads:
        return report
    _check_x_type(report, "d/dx (value_and_grad, v float64)",
                  {e: _kind(g[0]) for e, g in grads.items()})
    fd = _reliable_fd(f, x, v, draw_seed, mod, report)
    for engine, (gx, gv, _) in grads.items():
        if fd is not None:
            report.checks += 1
            atol = 1e-6 + 1.5 * fd[2]
            _close(gx, fd[0], 1e-5, atol, f"{engine}: d/dx against finite differences", source)
            _close(gv, fd[1], 1e-5, atol, f"{engine}: d/dv against finite differences", source)
    if len(grads) == 2:
        report.checks += 1
        (ax, av, _), (bx, bv, _) = grads["source"], grads["trace"]
        _close(ax, bx, 1e-9, 1e-12, "source against trace: d/dx", source)
        _close(av, bv, 1e-9, 1e-12, "source against trace: d/dv", source)
    _check_jvp_vjp(f, x, v, draw_seed, mod, report, source)
    if fd is not None and seed % 3 != 2:
        _check_float32(f, x, v, draw_seed, mod, grads, report, source)
    if "source" in grads and orders > 1:
        _check_nested(f, x, v, draw_seed, mod, report, source, orders)
    if hasattr(mod, "fvec") and (hessians or (hessians is None and seed % 3 == 1)):
        _check_jacobians(mod, x, v, draw_seed, report, source)
    if hessians or (hessians is None and seed % 3 == 2):
        _check_hessians(f, x, v, draw_seed, mod, grads, report, source)
    _check_again(f, mod, grads, rng, report, source)
    if report.dtypes:
        raise DtypeMismatch("; ".join(report.dtypes) + "\n" + source)
    return report


def _check_jacobians(mod, x, v, draw_seed, report, source):
    """``jacfwd`` and ``jacrev`` of ``fvec`` in v, both engines, against each
    other and central differences."""
    jacs = {}
    for engine in ENGINES:
        for jac in (wg.jacfwd, wg.jacrev):
            what = f"{engine}: {jac.__name__} of fvec in v"
            j = _typed(lambda: _run(lambda: jac(mod.fvec, argnums=1, engine=engine)(x, v.copy()),
                                    draw_seed, mod), engine, report, f"{jac.__name__} of fvec")
            if j is not None:
                _check_dtype(report, what, j, np.float64)
                _check_fresh(what, j, [v] + _globals_of(mod), source)
                jacs[what] = j
    if not jacs:
        return
    fd = _reliable(lambda u: mod.fvec(x, u), v, draw_seed, mod, report)
    first = next(iter(jacs.values()))
    for what, j in jacs.items():
        report.checks += 1
        if fd is not None:
            _close(j, fd, 1e-5, 1e-6, f"{what} against finite differences", source)
        _close(j, first, 1e-9, 1e-12, f"{what} against {next(iter(jacs))}", source)


def _check_hessians(f, x, v, draw_seed, mod, grads, report, source):
    """The Hessian of f in v, both engines, against each other and against
    central differences of the same engine's gradient."""
    hs = {}
    for engine in ENGINES:
        h = _typed(lambda: _run(lambda: wg.hessian(f, argnums=1, engine=engine)(x, v.copy()),
                                draw_seed, mod), engine, report, "hessian in v")
        if h is None:
            continue
        what = f"{engine}: Hessian in v"
        _check_dtype(report, what, h, np.float64)
        report.checks += 1
        if len(hs):
            _close(h, next(iter(hs.values())), 1e-9, 1e-10, f"{what} against the other "
                   "engine's", source)
        hs[engine] = h
        if engine in grads:
            vg = grads[engine][2]
            fd = _reliable(lambda u: vg(x, u)[1][1], v, draw_seed, mod, report)
            if fd is not None:
                _close(h, fd, 1e-4, 1e-5, f"{what} against differences of the gradient",
                       source)


def _check_float32(f, x, v, draw_seed, mod, grads, report, source):
    """With ``v`` float32: the gradient, the vjp cotangent and the jvp tangent
    keep their dtypes, the value is the plain call's, and the derivatives are
    the float64 ones to float32 accuracy. (The value's dtype may differ: where
    branches return float32 on one path and float64 on another, a traced if
    returns their join, float64.)

    The plain float32 call is itself known only to its distance from the
    float64 one (its rounding, amplified by the program): an engine whose
    join computes a stretch in float64 may land anywhere within that distance
    of it (seed 1810: 4e-6 from the float32 call, 1.2e-5 from the float64 one),
    and where the two plain calls differ by more than float32's accuracy the
    float32 program took another branch: its derivatives are another
    function's, not comparable with the float64 ones (seed 9294: 6.34 against
    1.44), and are not compared."""
    v32 = v.astype(np.float32)
    try:
        with np.errstate(over="raise", invalid="raise", divide="raise"):
            plain = _run(lambda: f(x, v32.copy()), draw_seed, mod)
            plain64 = _run(lambda: f(x, v.copy()), draw_seed, mod)
    except (ZeroDivisionError, FloatingPointError, OverflowError):
        return
    gap = abs(float(plain) - float(plain64))
    same_path = gap <= 1e-3 * max(1.0, abs(float(plain64)))
    kinds = {}
    for engine, (gx64, gv64, _) in grads.items():
        vg = wg.value_and_grad(f, argnums=(0, 1), engine=engine)
        res = _typed(lambda: _run(lambda: vg(x, v32), draw_seed, mod), engine, report,
                     "value_and_grad, v float32")
        if res is None:
            continue
        value, (gx, gv) = res
        report.checks += 1
        _check_dtype(report, f"{engine}: d/dv of a float32 v", gv, np.float32)
        kinds[engine] = _kind(gx)
        _close(value, plain, 1e-6, 1e-6 + (2 * gap if same_path else 0.0),
               f"{engine}, float32: value", source)
        if not same_path:
            report.skipped_fd += 1
            continue
        scale = max(1.0, abs(gx64), float(np.max(np.abs(gv64))))
        _close(gx, gx64, 0.0, 2e-3 * scale, f"{engine}, float32: d/dx against float64", source)
        _close(gv, gv64, 0.0, 2e-3 * scale, f"{engine}, float32: d/dv against float64", source)
    _check_x_type(report, "d/dx (value_and_grad, v float32)", kinds)
    _check_jvp_vjp(f, x, v32, draw_seed, mod, report, source)


def _check_jvp_vjp(f, x, v, draw_seed, mod, report, source):
    """<ct, J t> == <J^T ct, t>, each side with the program's draws; the
    pullback takes a Python float. Tangents and cotangents keep their dtypes."""
    rng = np.random.default_rng(draw_seed)
    tx, tv = float(rng.normal()), rng.normal(size=N).astype(v.dtype)
    ct = float(rng.normal())
    kinds = {}
    for engine in ENGINES:
        fwd = _typed(lambda: _run(lambda: wg.jvp(f, (x, v), (tx, tv), engine=engine),
                                  draw_seed, mod), engine, report, f"jvp, v {v.dtype}")
        rev = _typed(lambda: _run(lambda: wg.vjp(f, x, v, engine=engine), draw_seed, mod),
                     engine, report, f"vjp, v {v.dtype}")
        if fwd is not None:
            _check_dtype(report, f"{engine}: jvp tangent (v {v.dtype}) of a "
                         f"{np.asarray(fwd[0]).dtype} output", fwd[1], np.asarray(fwd[0]).dtype)
            _check_fresh(f"{engine}: jvp", fwd, [v, tv] + _globals_of(mod), source)
        if rev is None:
            continue
        cx, cv = _typed(lambda: rev[1](ct), engine, report, f"vjp's pullback, v {v.dtype}") \
            or (None, None)
        if cv is None:
            continue
        _check_fresh(f"{engine}: vjp's pullback", (rev[0], cx, cv), [v] + _globals_of(mod),
                     source)
        kinds[engine] = _kind(cx)
        _check_dtype(report, f"{engine}: vjp cotangent of a {v.dtype} v", cv, v.dtype)
        if fwd is None:
            continue
        report.checks += 1
        lhs = ct * float(fwd[1])
        terms = float(cx) * tx, *(np.asarray(cv, np.float64) * tv)
        # float32: rounding relative to the terms of the sum, not to the sum;
        # and a float64 tangent below float32's range (1e-63) is a float32 0
        atol = 1e-10 if v.dtype == np.float64 else max(
            1e-4 * float(np.sum(np.abs(terms))), 1e-30)
        _close(lhs, sum(terms), 1e-9 if v.dtype == np.float64 else 1e-4, atol,
               f"{engine}: dot-product test (jvp against vjp, v {v.dtype})", source)
    _check_x_type(report, f"d/dx (vjp's pullback of a Python float, v {v.dtype})", kinds)


def _check_nested(f, x, v, draw_seed, mod, report, source, orders):
    """Order k in x against central differences of order k - 1 (source engine)."""
    def fx(t):
        return f(t, v.copy())
    derivs = [fx]
    for _ in range(orders):
        derivs.append(wg.grad(derivs[-1], engine="source"))
    for k in range(2, orders + 1):
        lower, higher = derivs[k - 1], derivs[k]
        got = _typed(lambda: _run(lambda: higher(x), draw_seed, mod), "source", report,
                     f"grad of order {k} in x")
        if got is None:
            return
        fd = []
        for eps in (1e-4, 1e-5):
            a, b = (_typed(lambda: _run(lambda: lower(x + d), draw_seed, mod), "source",
                           report, f"grad of order {k - 1} in x") for d in (eps, -eps))
            if a is None or b is None:
                return
            fd.append((a - b) / (2 * eps))
        scale = max(1.0, abs(fd[0]))
        if abs(fd[0] - fd[1]) > 1e-3 * scale:
            report.skipped_fd += 1
            return
        report.checks += 1
        _close(got, fd[1], 1e-4, 1e-5, f"order {k} in x against differences of order {k - 1}",
               source)


def _check_again(f, mod, grads, rng, report, source):
    """The same derivative objects after G changed in place, C and M.k were
    rebound, and at new inputs with another random state."""
    mod.G[0] += 0.5
    mod.C = mod.C * 1.5 + 0.125
    if hasattr(mod, "M"):
        mod.M.k = mod.M.k * 0.5 + 0.25
    x, v, draw_seed, plain = _point(f, mod, rng)
    if plain is None:
        return
    fd = _reliable_fd(f, x, v, draw_seed, mod, report)
    for engine, (_, _, vg) in grads.items():
        res = _typed(lambda: _run(lambda: vg(x, v), draw_seed, mod), engine, report,
                     "value_and_grad, second call")
        if res is None:
            continue
        value, (gx, gv) = res
        report.checks += 1
        _close(value, plain, 1e-12, 1e-12, f"{engine}, second call: value", source)
        if fd is not None:
            atol = 1e-6 + 1.5 * fd[2]
            _close(gx, fd[0], 1e-5, atol, f"{engine}, second call: d/dx", source)
            _close(gv, fd[1], 1e-5, atol, f"{engine}, second call: d/dv", source)


def generate(seed):
    rng = np.random.default_rng(seed)
    return Gen(lambda n: int(rng.integers(0, n))).program()


# --- many programs ------------------------------------------------------------------
def outcome(source, seed, hessians=None):
    """Check one program and classify what happened: a dict with ``wrong``
    (the failed check's name, or None), ``crash`` (``crash_group``, or None),
    ``dtypes`` and ``refused`` (their groups), ``checks``, ``skipped`` and
    ``detail`` (the message and program of a failure)."""
    report = Report()
    res = {"wrong": None, "crash": None, "aliased": None, "detail": ""}
    try:
        check(source, seed, hessians=hessians, report=report)
    except WrongValue as err:
        res["wrong"], res["detail"] = err.what, str(err)
    except AliasedOutput as err:
        res["aliased"], res["detail"] = err.what, str(err)
    except DtypeMismatch as err:
        res["detail"] = str(err)
    except Exception as err:   # noqa: BLE001 -- a crash, reported with the program
        res["crash"] = crash_group(err)
        res["detail"] = (f"{type(err).__name__}: {err}\nduring {report.stage}\n"
                         f"{''.join(traceback.format_exception(err)[-4:])}\n{source}")
    res.update(checks=report.checks, skipped=report.skipped_fd, dtypes=dict(report.dtypes),
               refused=dict(report.refused))
    return res


def _one(seed, hessians=None):
    return seed, outcome(generate(seed), seed, hessians)


def _groups(title, groups, top=None):
    """Print ``groups`` (name -> seeds), largest first."""
    if not groups:
        return
    print(f"--- {title}: {sum(len(s) for s in groups.values())} in {len(groups)} groups")
    ranked = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    for name, seeds in ranked[:top]:
        shown = ", ".join(map(str, seeds[:6])) + (", ..." if len(seeds) > 6 else "")
        print(f"{len(seeds):6d}  {name}\n        seeds {shown}")
    if top is not None and len(ranked) > top:
        print(f"        ... and {len(ranked) - top} smaller groups")


def _single(seed, hessians):
    """``--seed``: one program, its source and everything that went wrong."""
    source = generate(seed)
    print(source)
    report = Report()
    try:
        check(source, seed, hessians=hessians, report=report)
    finally:
        for group, (engine, msg) in report.refused.items():
            print(f"refused by {engine}: {msg}\n    group: {group}")
        print(f"{report.checks} value checks, dtype mismatches: {report.dtypes or 'none'}")
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--programs", type=int, default=2000)
    ap.add_argument("--start", type=int, default=0, help="first seed")
    ap.add_argument("--seed", type=int, default=None,
                    help="check the program of this one seed, print it and raise what fails")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--hessians", action="store_true",
                    help="Jacobians and Hessians on every program (default: a third each)")
    ap.add_argument("--groups", type=int, default=12, help="refusal groups printed")
    ap.add_argument("--details", type=int, default=3,
                    help="print the message and program of this many failures of each group")
    args = ap.parse_args(argv)
    hessians = True if args.hessians else None
    if args.seed is not None:
        return _single(args.seed, hessians)
    one = functools.partial(_one, hessians=hessians)
    seeds = range(args.start, args.start + args.programs)
    t0 = time.time()
    if args.jobs > 1:
        import multiprocessing
        pool = multiprocessing.get_context("fork").Pool(args.jobs)
        results = pool.imap_unordered(one, seeds, chunksize=4)
    else:
        results = map(one, seeds)
    wrong, crash, dtype, refused, details, aliased = {}, {}, {}, {}, {}, {}
    checks = skipped = unchecked = ok = 0
    for seed, res in sorted(results):
        checks += res["checks"]
        skipped += res["skipped"]
        unchecked += res["checks"] == 0 and not res["crash"]
        ok += not (res["wrong"] or res["crash"] or res["dtypes"] or res["aliased"])
        for table, groups in ((wrong, [res["wrong"]]), (crash, [res["crash"]]),
                              (aliased, [res["aliased"]]),
                              (dtype, res["dtypes"]), (refused, res["refused"])):
            for group in groups:
                if group is not None:
                    table.setdefault(group, []).append(seed)
        failed = res["wrong"] or res["crash"] or res["aliased"] or next(iter(res["dtypes"]),
                                                                         None)
        if failed and len(details.setdefault(failed, [])) < args.details:
            details[failed].append((seed, res["detail"]))
    for failed, examples in details.items():
        for seed, text in examples:
            print(f"=== seed {seed}: {failed}\n{text}\n")
    _groups("wrong values, by check", wrong)
    _groups("raw crashes, by exception and innermost wengert frame", crash)
    _groups("aliased outputs, by check", aliased)
    _groups("dtype mismatches", dtype)
    _groups(f"typed refusals, by message (top {args.groups})", refused, top=args.groups)
    n = args.programs
    print(f"{n} programs in {time.time() - t0:.0f} s: {ok} ok, "
          f"{sum(map(len, wrong.values()))} wrong values, {sum(map(len, crash.values()))} "
          f"crashes, {sum(map(len, aliased.values()))} aliased outputs, {len({s for seeds in dtype.values() for s in seeds})} with dtype "
          f"mismatches, {len({s for seeds in refused.values() for s in seeds})} with typed "
          f"refusals ({len(refused)} groups); {checks} value checks ({unchecked} programs "
          f"checked nothing: not finite at their point, or refused by both engines), "
          f"{skipped} points where finite differences were unreliable (skipped)")
    return 1 if wrong or crash or dtype or aliased else 0


if __name__ == "__main__":
    sys.exit(main())
