"""Program -> readable Python source, exec'd into a function.

    codegen : Lowered -> GeneratedFunction      (called like ``interpret``)

It takes a Program lowered (``lower``: the api lowers, then writes): sums into accumulators move
into what computed the summand, and an update whose target nothing reads
afterwards is written in place (``ct_x[i] += v``), so a loop over array
elements and its reverse sweep cost O(1) per element, not O(n). The code
is written from the lowered Program and its decisions.

The source mirrors the printed program (STYLE.md section 3): the same
variable names as ``str(prog)`` (one ``Namer`` walk names both, see
``printing.walk``), one statement per equation (a few for an update:
``out = x.copy()``, ``out[i] += v``), in a vjp ``# forward sweep`` / ``#
reverse sweep`` where each begins (``printing.reverse_sweep_start``), and in
a reverse sweep or forward-mode code each block under the line of the user's
code it differentiates (``headings``: ``# grad of: s = s + x[i] ** 2
(model.py:12)``, from the equations' ``where``). A write in place names the
value it makes (``names.named_write``: ``h = np.tanh(v0, out=v0)``). The
copies that inlining sub-programs writes (a branch's outputs, a loop's
carries) are merged away afterwards (``coalesce``), and so are the names
they passed a value between. Printed and generated, the vjp of ``f(x, a) =
sum(sin(x) * a)`` reads::

    program f_vjp(x: f64[3], a: f64[3], ct0: f64[]):      def f_vjp(x, a, ct0):
                                                              # forward sweep
      v1 = sin (x)                                            v1 = np.sin(x)
      v2 = cos (x)                                            v2 = np.cos(x)
      v3 = mul (v1, a)                                        v3 = v1 * a
      v4 = reduce_sum[axes=(0,)] (v3)                         v4 = np.sum(v3, axis=(0,))
                                                              # reverse sweep
      ct5 = broadcast_to[shape=(3,)] (ct0)                    ct5 = np.full((3,), ct0)

Invariants of the generated code:

* plain Python and NumPy: the free names are ``np``, modules (SciPy's, a
  user module whose globals the code reads), named constants (arrays of
  more than one element) and, for the rare primitive whose row has no
  ``emit`` spelling, its impl, all listed in the header comment
  (``python.names``); the programs of the test corpus bind no impl
  (``tests/backends/python/test_source_text.py``);
* literals keep their type: a float32 literal is ``np.float32(2.0)``;
* control flow is real Python, written by each row's ``emit`` rule
  (``control/``, ``control/checkpoint_emit.py``; this module
  names no primitive) with the semantics of the impls: ``cond`` is ``if``/``elif``/``else`` on
  ``int(index)``; ``for_loop`` a ``for`` over ``range`` whose per-iteration
  ``ys`` (a loop's stored residuals) are written row by row into arrays
  allocated once before it, ``np.empty((n, *y))``; ``while_loop`` a ``while
  True`` that breaks on its condition and counts its iterations in an
  ``np.int64`` (a Python int when only loops read the count), its ``ys`` in
  arrays that double when full and are cut to the count after it, its body
  reading the values the condition computed rather than computing them
  again (``share_condition_values``). Scalars a later loop reads back one at
  a time, and values whose length varies, are Python lists instead
  (``CodeWriter.buffers``).
  Sub-programs are inlined: their inputs are assigned from the operands,
  their outputs to the equation's outputs, and a loop carry lives in the
  body's input variables;
* the source is registered in ``linecache`` under ``<wengert-generated-N>``
  (as Tangent does), so tracebacks, ``inspect.getsource`` and ``pdb`` show it.

Values, shapes and dtypes equal the interpreter's exactly, except that a
loop's cotangents may be added in another order (lowering): equal to
rounding. An operator is
written only for a row whose impl is that operator (its ``emit`` rule): the
ufunc on a NumPy operand, and on two Python scalars Python's own arithmetic,
as the interpreter does (``1.0 / 0.0`` raises in both; ``x * 2.0`` on a
Python float stays a Python float, which NumPy treats as weakly typed).
``python_scalars`` says where the code may hold Python scalars, for the
rows whose spelling depends on it (a Python scalar cannot be subscripted).

Float64 scalars are Python floats where that gives the same bits
(``CodeWriter.LOWERING``; ``lower.facts.python_floats`` says where):
NumPy's scalar maths costs several times Python's, ten times on subnormals.
Element reads are ``x.item(i)``, float64 literals ``1.0``, an element
accumulation ``ct_x[i] = ct_x.item(i) + v``; a row that takes no Python
float (``/`` by a value that may be 0.0, a call of an impl) gets a NumPy
scalar, and the function returns the interpreter's NumPy scalars. Only
NumPy's floating-point warnings differ: Python's ``*`` overflows to inf
silently, where NumPy warns (or raises under ``np.seterr``).

Layer: backends.
"""
from __future__ import annotations

import itertools
import linecache

from ...core.ir import Lit, Program
from ...core.printing import Namer, reverse_sweep_start, walk
from ...core.where import files_of, heading, line_map, statement
from .coalesce import coalesce
from .buffers import LoopBuffers
from .emit import PY_SCALARS, CodegenError, Emitter
from .headings import drop_empty_headings, heading_kinds, mark, unmark
from .names import named_write, names_of

__all__ = ["codegen", "generate_source", "GeneratedFunction", "CodegenError", "CodeWriter"]

_INDENT = "    "
_FILE_NUMBERS = itertools.count(1)


class GeneratedFunction:
    """A Program compiled to Python: call it like ``interpret(prog, *args)``.
    ``fn`` is the plain function; ``source`` its text; ``program`` the
    Program it came from; ``namespace`` the names the text reads;
    ``line_map`` which line of the user's code each line of the text computes or
    differentiates (``core.where.line_map``: a traceback's line in ``filename``
    names the user's line it came from)."""

    __slots__ = ("fn", "source", "program", "namespace", "filename", "located")

    def __init__(self, fn, source, program, namespace, filename, located=None):
        self.fn, self.source, self.program = fn, source, program
        self.namespace, self.filename, self.located = namespace, filename, located or {}

    def __call__(self, *args):
        return self.fn(*args)

    @property
    def line_map(self):
        """{line of ``source``: (file, line)} of the user's code (``core.where``)."""
        return {**self.located, **line_map(self.source, files_of(self.program))}

    def __repr__(self):
        return f"<GeneratedFunction {self.fn.__name__} from {self.filename}>"


def codegen(low, name=None, like=None, lazy=False):
    """Generate, compile and load the Python function of the lowered Program ``low``
    (``lower.lower(prog, **CodeWriter.LOWERING)``); ``like``: the position of an
    input of another array library (Dask, CuPy) whose type the arrays the code
    makes take (``Emitter.like``), or None for NumPy's; ``lazy``: that library
    computes only when asked (Dask)."""
    located = {}
    source, namespace, fname, _ = generate_source(low, name, located=located, like=like,
                                                  lazy=lazy)
    filename = f"<wengert-generated-{next(_FILE_NUMBERS)}>"
    # registered before exec, so even an error while loading shows its line;
    # mtime None: linecache.checkcache leaves the entry alone
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    code = compile(source, filename, "exec")
    exec(code, namespace)
    return GeneratedFunction(namespace[fname], source, low.source, namespace, filename, located)


class _Block:
    """A (sub-)program's code: input identifiers, statements (indented
    relative to the block), output expressions, and the blocks of the
    sub-programs named before the next equation (its params); ``done``: its
    equations written so far; ``kind``, ``heading``: the heading comments it
    writes (``core.where``: "grad" in a reverse sweep, "jvp" in forward-mode
    code, None) and the user's statement under whose heading it is now."""

    __slots__ = ("prog", "inputs", "lines", "outputs", "subs", "done", "kind", "heading",
                 "outer")

    def __init__(self, prog, inputs, kind=None, heading=None, outer=frozenset()):
        self.prog, self.inputs = prog, inputs
        self.lines, self.outputs, self.subs = [], [], []
        self.done, self.kind, self.heading = 0, kind, heading
        # the statements the enclosing blocks are under: an equation of one of
        # them inside this block (a sum a loop's transpose moved into a branch)
        # stays under the heading it is in
        self.outer = outer


def generate_source(low, name=None, writer=None, located=None, like=None, lazy=False):
    """(source, namespace, function name, passed) of the lowered ``low``: the text only
    (``located``, a dict: filled with {line: the user's (file, line)} of each statement
    no heading comment covers, ``headings.mark``); ``like``, ``lazy``: see ``codegen``;
    ``writer``: the ``CodeWriter`` class that spells it (a subclass writes
    the subset another compiler accepts: ``numba.codegen``); ``passed``: the
    writer's extra parameters, after the Program's inputs (name -> what
    gives the value at each call; none for Python's writer)."""
    writer = writer or CodeWriter
    prog = low.program                  # the imperative form (a Program verify accepts)
    names = Namer()
    for _ in walk(prog, names):         # every name first: helpers must avoid them all
        pass
    em = writer(names.used)
    em.loop_only, em.trip_only, em.read = low.loop_only, low.trip_only, low.read
    py = low.python_scalars
    fl = low.floats
    em.floats = fl.held
    start = reverse_sweep_start(prog)       # a vjp's sweeps are marked, as Tangent does
    reverse = None if start is None else prog.eqns[start]
    headings = heading_kinds(prog, start)
    stack, files = [], set()
    var_of = {}                         # identifier -> a Var it names (``coalesce``)
    wheres = []                         # the user lines the statements are marked with
    for kind, item, uses, defs in walk(prog, Namer()):
        if kind == "program":
            if stack:       # the code of the equation the parent writes next
                parent = stack[-1]
                owner = parent.prog.eqns[parent.done]
                sub_kind = headings(parent.done) if len(stack) == 1 else parent.kind
                at = statement(owner.where) if owner.where is not None else parent.heading
                stack.append(_Block(item, [em.ident(n) for n in defs], sub_kind, at,
                                    parent.outer | {parent.heading, at}))
            else:
                stack.append(_Block(item, [em.ident(n) for n in defs]))
            for n, v in zip(defs, item.inputs):
                var_of.setdefault(em.ident(n), v)
            if em.inputs is None:
                em.inputs = stack[0].inputs     # symbolic lengths read their shapes
                em.library(like, lazy)
        elif kind == "eqn":
            block = stack[-1]
            subs, block.subs = block.subs, []
            head_kind = headings(block.done) if len(stack) == 1 else block.kind
            block.done += 1
            ins = em.eqn_operands(item, _operands(em, item.inputs, uses))
            for p in low.copies.get(item, ()):
                ins[p] = f"{em.atom(ins[p])}.copy()"      # owned from here on (``lower``)
            flags = [type(x.val) in PY_SCALARS if isinstance(x, Lit) else x in py
                     for x in item.inputs]
            _stand_ins(em, fl, item, ins, flags)
            if item is reverse and len(stack) == 1:
                block.lines += ["# reverse sweep"]
            if head_kind is not None and item.where is not None:
                at = statement(item.where)
                if at is not None and at != block.heading and at not in block.outer:
                    block.lines.append(heading(item.where, head_kind))
                    files.add(item.where[0])
                    block.heading = at
            outs = [em.ident(n) for n in defs]
            for o, v in zip(outs, item.outputs):
                var_of.setdefault(o, v)
            lines = None
            if item in low.inplace:
                p = low.inplace[item]
                target = ins[p]
                lines = item.prim.lower.inplace(em, item, ins, flags, outs, p)
                if lines and lines[-1] == f"{outs[0]} = {target}" and target.isidentifier():
                    lines = named_write(em, item, p, ins, lines, defs, target)
            if lines is None:
                lines = _equation(em, item, ins, flags, outs, subs)
                if item.outputs and item.outputs[0] in fl.wrapped:
                    # Python's arithmetic, where a NumPy scalar is wanted
                    lhs, rhs = lines[-1].split(" = ", 1)
                    lines[-1] = f"{lhs} = {_numpy_scalar(em, item.outputs[0], rhs)}"
            if head_kind is None and item.where is not None:
                lines = mark(lines, item.where, wheres)
            block.lines += lines
        else:
            block = stack.pop()
            block.outputs = _operands(em, item.outputs, uses)
            block.outputs = [em.scalar(float(x.val)) if (item, k) in fl.literals else t
                             for k, (x, t) in enumerate(zip(item.outputs, block.outputs))]
            if not stack:       # the results keep the interpreter's NumPy types
                block.outputs = [_numpy_scalar(em, x, t) if x in fl.returned else t
                                 for x, t in zip(item.outputs, block.outputs)]
                # an array the caller could see (an argument, a constant): a copy (``lower``)
                block.outputs = [f"{em.atom(t)}.copy()" if k in low.out_copies else t
                                 for k, t in enumerate(block.outputs)]
            if stack:
                stack[-1].subs.append(block)
    if reverse is not None:
        block.lines[:0] = ["# forward sweep"]
    drop_empty_headings(block.lines)
    block.lines[:0] = em.prologue           # the symbolic lengths, named once
    fname = em.fresh(name or prog.name, f"{name or prog.name}_")
    outs = ", ".join(block.outputs) + ("," if len(block.outputs) == 1 else "")
    header = [f"# generated by wengert from program {' '.join(prog.name.split())}"
              + ("; names bound outside it:" if em.header else "")] + em.header
    defined = [line for text in em.defined.values()
               for line in text.rstrip("\n").splitlines() + ["", ""]]
    lines = header + defined + [f"def {fname}({', '.join(block.inputs + list(em.passed))}):"]
    lines += em.indent(block.lines + [f"return ({outs})"])
    source, found = unmark(coalesce("\n".join(lines) + "\n", fname, names_of(var_of)), wheres)
    if located is not None:
        located.update(found)
    return source, em.namespace, fname, em.passed


def _stand_ins(em, fl, eqn, ins, flags):
    """The operands of ``eqn`` as its row takes them (``python_floats``):
    float64 literals as Python floats, stand-ins it takes no Python float
    for as NumPy scalars; ``flags`` (may be a Python scalar) to match."""
    for k, x in enumerate(eqn.inputs):
        if (eqn, k) in fl.literals:
            ins[k], flags[k] = em.scalar(float(x.val)), True
        elif (eqn, k) in fl.convert:
            ins[k], flags[k] = _numpy_scalar(em, x, ins[k]), False
        elif x in fl.held:
            flags[k] = True


def _numpy_scalar(em, x, text):
    """``text``, a scalar of ``x``'s dtype, as a NumPy scalar (``np.float64(v)``)."""
    name = "bool_" if x.aval.dtype.kind == "b" else x.aval.dtype.name
    return f"{em.np}.{name}({text})"


def _operands(em, atoms, names):
    return [em.literal(x.val, x.aval) if n is None else em.ident(n) for x, n in zip(atoms, names)]


class CodeWriter(LoopBuffers, Emitter):
    """The Emitter (names, literals, params) with the statement helpers a
    row's ``emit`` rule writes its code with, and what the whole Program's
    analyses found (``read``, ``loop_only``, ``trip_only``)."""

    INDENT = _INDENT
    # how the Program is lowered for this writer (``lower.lower``'s options):
    # ``floats``, float64 scalars as Python floats where that gives the same
    # bits (``lower.facts.python_floats``; a writer for another compiler,
    # numba, turns this off); ``loops``, lowering's step 1b (``lower.carry``:
    # scalar carries in loops; a subclass turns it off to compare against)
    LOWERING = {"loops": True, "floats": True}

    def __init__(self, var_names):
        super().__init__(var_names)
        self.read = set()           # every Var something reads
        self.loop_only = set()      # read only as a loop's per-iteration values
        self.trip_only = set()      # read only as trip counts
        # extra parameters after the Program's inputs: name -> a function
        # giving its value at each call (``numba.codegen``: what numba must not freeze)
        self.passed = {}

    @staticmethod
    def indent(lines, depth=1):
        return [_INDENT * depth + line for line in lines]

    def suite(self, lines):
        """The indented body of an ``if``/``for``/``while`` (never comments alone)."""
        if all(line.lstrip().startswith("#") for line in lines):
            lines = lines + ["pass"]
        return self.indent(lines)

    @staticmethod
    def assign(targets, values):
        """``a = x`` statements; several at once as one tuple assignment, so a
        new carry may read the old one (``c0, c1 = c1, c0``)."""
        pairs = [(t, v) for t, v in zip(targets, values) if t != v]
        if len(pairs) == 1:
            return [f"{pairs[0][0]} = {pairs[0][1]}"]
        if pairs:
            return [", ".join(t for t, _ in pairs) + " = " + ", ".join(v for _, v in pairs)]
        return []

    def inline(self, block, operands, outs, read=None):
        """A sub-program in place: inputs from operands, outputs to ``outs``;
        ``read``: the Vars something reads (an input nothing reads is not set)."""
        return ([f"{i} = {o}" for i, o, v in zip(block.inputs, operands, block.prog.inputs)
                   if i != o and (read is None or v in read)]
                + block.lines + [f"{o} = {r}" for o, r in zip(outs, block.outputs)])

    @staticmethod
    def eqn_operands(eqn, ins):
        """The operands' text of ``eqn`` as this writer spells them: as
        given (a writer for another compiler may change some: ``numba.codegen``)."""
        return ins

    @staticmethod
    def last_axes_map(fn, x, ndim, axes, out):
        """The statements of ``out = fn(x)`` (a function of the entries along
        ``axes``, one value per entry: ``prod_others``) where this writer has
        its own spelling (``numba.codegen``'s helpers), else None: the rule's
        NumPy statements."""
        return None


def _equation(em, eqn, ins, py, outs, subs):
    """The statements of one equation (``py``: which operands may be Python
    scalars): the row's ``emit`` rule's, else ``outs = <expression>``."""
    rule = eqn.prim.emit
    if rule is not None and "statements" in rule.asks:
        lines = rule.statements(em, eqn, ins, py, outs, _by_param(eqn, subs) if subs else {})
        if lines is not None:
            return lines
    if subs:
        raise CodegenError(f"{eqn.prim.name}: a primitive holding sub-programs, with no "
                           "Python control-flow form")
    rhs = em.expression(eqn, ins, py)
    if eqn.prim.multiple_results:
        lhs = "(" + ", ".join(outs) + ("," if len(outs) == 1 else "") + ")"
    else:
        lhs = outs[0]
    return [f"{lhs} = {rhs}"]


def _by_param(eqn, subs):
    """Sub-program blocks by the param holding them (``ir.sub_programs`` order)."""
    it = iter(subs)
    found = {}
    for key, v in eqn.params.items():
        if isinstance(v, Program):
            found[key] = next(it)
        elif isinstance(v, (tuple, list)) and any(isinstance(p, Program) for p in v):
            found[key] = [next(it) for p in v if isinstance(p, Program)]
    return found
