"""The library table (``wengert/numpy/library.py``): every NumPy and SciPy
callable wengert differentiates, and the wrapper it becomes.

* NumPy's keyword names: every function and call of the table (SciPy's
  families included where SciPy is installed) takes its library's parameters
  by their names; a keyword call gives the positional call's value and
  gradient, and a keyword wengert does not implement is refused, never
  dropped;
* a function without a rule is named as the user wrote it, with an example
  of the custom rule that would give it one;
* SciPy is optional: without it wengert imports and differentiates, and
  ``load_scipy`` says SciPy is absent.
"""
from __future__ import annotations

import inspect
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import scipy.integrate
from scipy import integrate

import wengert as wg
from wengert.core import errors
from wengert.numpy import functions as npf, library

import robust_prims_cases as rc
from checks import assert_close, fd_jvp, rtol


ENGINES = ("trace", "source")
CASES = os.path.basename(rc.__file__)       # where the cases' own lines are


# --- NumPy's own keyword names ---------------------------------------------------------
def _ids(funcs):
    # a callable object (SciPy's distributions, frozen by calling) has no __name__
    return [f"{getattr(f, '__module__', 'numpy').replace('numpy.', 'np.')}.{f.__name__}"
            if hasattr(f, "__name__") else library.display_name(f) for f in funcs]


def _numpy_signature(f):
    """NumPy's own signature (recorded where an older NumPy gives none);
    None for a callable object (calling a SciPy distribution freezes it: the
    wrapper keeps the arguments for the methods, whose signatures are
    checked as their own entries)."""
    if not hasattr(f, "__name__"):
        return None
    return rc.numpy_signature(f, _ids([f])[0])


# every function and call of the library table, SciPy's families included
# where SciPy is installed: each family a merge adds is held to the contract
library.load_scipy()
WRAPPED = {**library.FUNCTIONS, **library.CALLS}
SIGNED = sorted((f for f in WRAPPED if _numpy_signature(f) is not None),
                key=library.display_name)


def test_most_wrapped_functions_expose_a_signature():
    """The signature test below covers NumPy's part of the table entirely
    (SciPy's callables may hide theirs: a C function, an object's method)."""
    numpy_part = [f for f in WRAPPED if not library.display_name(f).startswith("scipy.")]
    assert numpy_part and set(numpy_part) <= set(SIGNED), sorted(
        library.display_name(f) for f in set(numpy_part) - set(SIGNED))
    assert set(npf.FUNCTIONS) <= set(WRAPPED)


@pytest.mark.parametrize("np_fn", SIGNED, ids=[library.display_name(f) for f in SIGNED])
def test_wrapper_takes_numpys_parameters(np_fn):
    rc.assert_takes_parameters(_numpy_signature(np_fn), inspect.signature(WRAPPED[np_fn]),
                            library.display_name(np_fn))


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name, kw, pos", rc.KEYWORD_CALLS, ids=[c[0] for c in rc.KEYWORD_CALLS])
def test_keyword_call(name, kw, pos, engine):
    """The keyword call's value is NumPy's (dtype included); its vjp matches
    the positional call's and, through the dot-product with a jvp, finite
    differences."""
    x = rc.RNG.standard_normal((3, 4, 2))
    want = kw(x)
    out, pullback = wg.vjp(kw, x, engine=engine)
    assert np.asarray(out).dtype == np.asarray(want).dtype, name
    assert_close(out, want, rtol("ref", want), what=f"{name} value")
    ct = np.random.default_rng(3).standard_normal(np.shape(want)).astype(np.asarray(want).dtype)
    g, = pullback(ct)
    if pos is not None:
        out_p, pullback_p = wg.vjp(pos, x, engine=engine)
        assert_close(out_p, out, rtol("exact", want), what=f"{name} positional value")
        assert_close(pullback_p(ct)[0], g, rtol("exact", want), what=f"{name} positional vjp")
    t = np.random.default_rng(4).standard_normal(x.shape)
    got = float(np.sum(np.asarray(g, np.float64) * t))
    fd = float(np.sum(np.asarray(fd_jvp(kw, (x,), (t,)), np.float64) * ct))
    assert_close(got, fd, rtol("program", want), what=f"{name} vjp against FD")


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name, f, err, msg", rc.REFUSED, ids=[c[0] for c in rc.REFUSED])
def test_unimplemented_keyword_is_refused(name, f, err, msg, engine):
    with pytest.raises(err, match=rf"{CASES}:\d+: {msg}"):
        wg.grad(lambda x: np.sum(f(x)), engine=engine)(np.ones((3, 2)))


# --- what the error of a call without a rule says -------------------------------
def _no_rule_quad(x):
    return integrate.quad(lambda t: t * x[0], 0.0, 1.0)[0]


def _no_rule_ivp(x):
    return scipy.integrate.solve_ivp(lambda t, y: -y, (0.0, 1.0), x).y[0, -1]


NO_RULE = [(_no_rule_quad, "scipy.integrate.quad"), (_no_rule_ivp, "scipy.integrate.solve_ivp")]


def _check_no_rule_message(msg, where, name):
    assert msg.startswith(f"{where}: {name} has no derivative rule in wengert"), msg
    example = msg.split("\n")[1:]
    assert len(example) == 3 and example[0].strip() == "@wg.custom_vjp", msg
    assert f"return {name}(x)" in example[1] and ".defvjp(" in example[2], msg


@pytest.mark.parametrize("engine", ["source", "trace"])
@pytest.mark.parametrize("fun, name", NO_RULE, ids=[n for _, n in NO_RULE])
def test_a_library_function_without_a_rule_is_named_as_written(fun, name, engine):
    with pytest.raises(errors.NoDerivativeRule) as err:
        wg.grad(fun, engine=engine)(np.array([0.5, 1.0]))
    _check_no_rule_message(str(err.value), f"{__file__}:{fun.__code__.co_firstlineno + 1}",
                           name)


def _without_rule(candidates):
    from wengert.numpy import library
    found = [f for f in candidates if library.function_rule(f) is None
             and library.ufunc_rule(f) is None]
    assert found, f"every candidate has a rule now: add one without: {candidates}"
    return found[0]


def _scipy_special_candidates():
    import scipy.special as sp
    return [sp.dawsn, sp.spence, sp.kolmogorov, sp.ndtri_exp, sp.ellipe, sp.erfcx]


UNRULED = {"numpy function": _without_rule([np.unwrap, np.sinc, np.i0, np.median, np.nanmean]),
           "numpy ufunc": _without_rule([np.spacing, np.cbrt, np.nextafter, np.ldexp]),
           "scipy.special ufunc": _without_rule(_scipy_special_candidates())}


def call_unruled_numpy_function(x):
    return UNRULED["numpy function"](x) * 2.0


def call_unruled_numpy_ufunc(x):
    return UNRULED["numpy ufunc"](x) * 2.0


def call_unruled_scipy_ufunc(x):
    return UNRULED["scipy.special ufunc"](x) * 2.0


@pytest.mark.parametrize("engine", ["source", "trace"])
@pytest.mark.parametrize("fun, kind", [(call_unruled_numpy_function, "numpy function"),
                                       (call_unruled_numpy_ufunc, "numpy ufunc"),
                                       (call_unruled_scipy_ufunc, "scipy.special ufunc")],
                         ids=["numpy-function", "numpy-ufunc", "scipy-ufunc"])
def test_a_function_without_a_rule_is_named_with_an_example(fun, kind, engine):
    from wengert.numpy import library
    f = UNRULED[kind]
    name = library.display_name(f)
    assert name.startswith("scipy.special." if kind.startswith("scipy") else "np.")
    with pytest.raises(errors.NoDerivativeRule) as err:
        wg.grad(lambda x: np.sum(fun(x)), engine=engine)(np.array([0.3, 0.6]))
    _check_no_rule_message(str(err.value), f"{__file__}:{fun.__code__.co_firstlineno + 1}", name)


# --- without SciPy ----------------------------------------------------------------
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_wengert_imports_and_differentiates_without_scipy(tmp_path):
    """A meta-path finder that refuses ``scipy``: wengert imports, a NumPy
    gradient works in both engines, and ``load_scipy`` says SciPy is absent."""
    (tmp_path / "sitecustomize.py").write_text(textwrap.dedent("""
        import sys

        class NoScipy:
            def find_spec(self, name, path=None, target=None):
                if name == "scipy" or name.startswith("scipy."):
                    raise ModuleNotFoundError(f"No module named {name!r} (blocked)")
                return None

        sys.meta_path.insert(0, NoScipy())
    """))
    (tmp_path / "prog.py").write_text(textwrap.dedent("""
        import sys
        import numpy as np
        import wengert as wg
        from wengert.numpy import library

        def f(x):
            return np.sum(np.sin(x) * x)

        x = np.array([0.5, 1.0, 2.0])
        want = np.sin(x) + x * np.cos(x)
        for engine in ("trace", "source"):
            g = wg.grad(f, engine=engine)(x)
            assert np.allclose(g, want, rtol=1e-12), (engine, g)
        try:
            import scipy
        except ImportError:
            pass
        else:
            raise SystemExit("the blocker did not block scipy")
        assert "scipy" not in sys.modules
        assert library.load_scipy() is False
        print("ok")
    """))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), ROOT]))
    out = subprocess.run([sys.executable, str(tmp_path / "prog.py")], env=env, cwd=str(tmp_path),
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_scipy_rules_load_per_scipy_module(tmp_path):
    """With SciPy imported, a NumPy ufunc the table has no ``CALLS`` entry for (``np.exp``,
    looked up among the source engine's calls) loads no SciPy family, and a
    ``scipy.special`` function loads that family alone, importing no other SciPy module
    (issue 25: every family, and ``scipy.stats`` and ``scipy.linalg`` with them, loaded at
    the first unknown ufunc: two to three seconds before the first gradient)."""
    (tmp_path / "prog.py").write_text(textwrap.dedent("""
        import sys
        import numpy as np
        import scipy.special
        import wengert as wg
        from wengert.numpy import library

        def plain(x):
            return np.sum(np.exp(x) * x)

        def special(x):
            return np.sum(scipy.special.gammaln(x * x + 1.0))

        x = np.array([0.5, 1.0, 2.0])
        scipy_before = {m for m in sys.modules if m.startswith("scipy.")}
        wg.grad(plain, engine="source")(x)
        assert library.call_rule(np.nextafter) is None
        assert not [m for m in sys.modules if m.startswith("wengert.scipy.")], sys.modules
        g = wg.grad(special, engine="source")(x)
        assert np.allclose(g, 2 * x * scipy.special.digamma(x * x + 1.0))
        loaded = sorted(m for m in sys.modules if m.startswith("wengert.scipy."))
        assert loaded == ["wengert.scipy.special"], loaded
        new = {m.split(".")[1] for m in sys.modules if m.startswith("scipy.")
               and m not in scipy_before and not m.split(".")[1].startswith("_")}
        assert not new, new
        print("ok")
    """))
    env = dict(os.environ, PYTHONPATH=ROOT)
    out = subprocess.run([sys.executable, str(tmp_path / "prog.py")], env=env, cwd=str(tmp_path),
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
