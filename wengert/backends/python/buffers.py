"""Where generated code keeps a loop's per-iteration values (``LoopBuffers``, mixed into
``codegen.CodeWriter``): an array of rows allocated once, or a list, as the impls'
``YsBuffer`` and ``RaggedStack`` do; and how a writer for another compiler (numba) spells
the list. Also the states a checkpointed loop's sweeps keep (``stacked_states``,
``unstacked_states``, ``release``: ``control/checkpoint_emit.py``), which numba spells
with loops over a typed dict.

Layer: backends.
"""
from __future__ import annotations


class LoopBuffers:
    """The statements that store a loop's per-iteration values, and a checkpointed
    loop's stored states, for a writer (an ``Emitter`` with ``loop_only``, ``np``,
    ``dim``, ``dtype_argument``, ``made``)."""

    def kept_as_list(self, aval, vid, grows=False, made=False):
        """Whether a loop's per-iteration values of ``aval`` (the loop's
        output ``vid``) are a Python list rather than an array (``buffers``):
        values whose length varies, scalars only a later loop reads one at a
        time, and a while loop's (``grows``) arrays that its body makes anew
        each step (``made``) and only a later loop reads: the list holds them
        as they are, where a buffer would copy each into a row and double
        (relax at n = 1e4: 3.2 -> 1.9 times the plain call, the buffer's
        fresh pages and copies gone)."""
        if any(d is None for d in aval.shape):
            return True
        return vid in self.loop_only and (aval.shape == () or grows and made)

    def new_list(self, aval, count):
        """A list of ``count`` places (None: an empty one, appended to) for a loop's
        values of ``aval`` (``kept_as_list``)."""
        return "[]" if count is None else f"[None] * {count}"

    def list_item(self, y):
        """The value ``y`` as a loop's list (``new_list``) holds it."""
        return y

    def buffers(self, accs, ys, avals, ids, index, rows, grows=False, made=()):
        """Where a loop stores its per-iteration values ``ys`` (its outputs
        ``accs``, Vars ``ids``), as the impls' ``YsBuffer`` does: the
        statements (before the loop, in each step, after it).

        An array of the aval's dtype allocated once, ``acc = np.empty((rows,
        *shape))``, its row ``index`` written in each step: a for loop's
        ``rows`` is its trip count (a reverse loop fills its rows backwards,
        so nothing is reversed after it); a while loop's (``grows``) is a
        first capacity, doubled when full, and the first ``index`` rows are
        kept after the loop. A list instead, indexed as the array would be,
        for values whose length varies (a None in the shape: the impls'
        ``RaggedStack``), for a while loop's arrays made anew each step
        (``made``: the loop's outputs) and for scalars, both read back one
        at a time by a later loop (``loop_only``): storing a Python float and reading it back
        costs about 36 ns an iteration in a list against 184 ns in an array
        (n = 1000; ``np.empty`` + ``acc[i] = y`` + ``acc[i]``, which also
        reads back a slower ``np.float64``)."""
        before, step, after, arrays = [], [], [], []
        for acc, y, aval, vid in zip(accs, ys, avals, ids):
            if self.kept_as_list(aval, vid, grows, vid in made):
                count = f"({rows})" if " " in rows else rows
                before.append(f"{acc} = {self.new_list(aval, None if grows else count)}")
                item = self.list_item(y)
                step.append(f"{acc}.append({item})" if grows else f"{acc}[{index}] = {item}")
                continue
            dtype = "" if aval.dtype == "float64" else f", {self.dtype_argument(aval.dtype)}"
            shape = "(" + ", ".join([rows] + [self.dim(d) for d in aval.shape]) + \
                ("," if aval.shape == () else "") + ")"
            before.append(f"{acc} = {self.np}.empty({shape}{dtype}{self.made()})")
            step.append(f"{acc}[{index}] = {y}")
            arrays.append(acc)
        if grows and arrays:
            # full: twice the rows (the copy is amortized O(1) a row)
            grow = [f"{a} = {self.np}.concatenate(({a}, {self.np}.empty_like({a})))"
                    for a in arrays]
            step = [f"if {index} == {arrays[0]}.shape[0]:"] + self.indent(grow) + step
            after = [f"{a} = {a}[:{index}]" for a in arrays]
        return before, step, after

    def stacked_states(self, store, outs, avals):
        """The states a checkpointed loop's forward sweep kept in the dict ``store``
        (position -> the tuple of the carry's values, ``control/checkpoint_emit.py``),
        stacked in the order of their positions: ``outs[j]`` of the ``j``-th carry (of
        ``avals[j]``), with no rows where none is kept."""
        pos, lines = self.fresh("p"), []
        for j, (out, aval) in enumerate(zip(outs, avals)):
            dtype = "" if aval.dtype == "float64" else f", {self.dtype(aval.dtype)}"
            rows = f"[{store}[{pos}][{j}] for {pos} in sorted({store})]"
            lines.append(f"{out} = {self.np}.stack({rows}) if {store} else "
                         f"{self.np}.zeros({self.shape((0,) + tuple(aval.shape))}{dtype})")
        return lines

    def unstacked_states(self, store, stacked, positions):
        """The dict ``store`` of the states a reverse sweep starts from: row ``j`` of the
        arrays ``stacked`` (``stacked_states``) at the ``j``-th of ``positions`` (the
        text of an iterable of ints)."""
        row, pos = self.fresh("j"), self.fresh("p")
        states = ", ".join(f"{s}[{row}]" for s in stacked) + ("," if len(stacked) == 1 else "")
        return [f"{store} = {{{pos}: ({states}) for {row}, {pos} in enumerate({positions})}}"]

    def release(self, names):
        """Statements dropping the variables ``names`` (a sweep's dict of states, once
        stacked): ``del``."""
        return [f"del {', '.join(names)}"]
