"""Copies out of generated code: one variable where a value passes on.

    coalesce : source -> source          (the same function, fewer names and statements)

The code writer inlines sub-Programs: a branch's outputs are assigned to the ``if``'s
results, a loop body's to its carries, a loop's carries to its results. Written as they
come, the code copies: ``s_2 = s + v4; s_3 = s_2`` in a branch, ``s = s_3`` at the end of
a step, ``s_4 = s`` after the loop. A person writes ``s = s + v4``. This pass gives two
variables one name where the code never needs both at once -- register coalescing over
the function's own text:

1. liveness of every name at every statement (``if``, ``for``, ``while``, ``break``,
   ``continue`` as Python runs them; a comprehension's own names are its own);
2. two names *interfere* where one is assigned while the other is live afterwards,
   except that a copy ``a = b`` does not make ``a`` interfere with ``b``; the targets of
   one tuple assignment always interfere with each other (``a, b = b, a`` is a swap);
3. the names of a copy ``a = b`` are merged where they do not interfere, then the
   versions of one variable (``ct_x`` and ``ct_x_1``, the loop index ``i`` and ``i_1``)
   where they do not interfere and hold one type and one role; a merged name never joins two of the
   user's variables (``y = y0`` stays: ``y`` takes other values), and a parameter
   takes in only versions of itself or a temporary assigned once (``h_1 = h``);
4. the merged names take the best name among them: a parameter's, else the user's name
   with the smallest suffix (``s`` over ``s_3``), else the first temporary;
5. the copies left as ``a = a``, and copies into names nothing reads, are deleted;
   an ``else`` left empty goes, an ``if`` whose body is left empty tests ``not``;
6. ``t = -a`` read once, as ``x + t``, is ``x - a`` (IEEE's ``x - a`` is ``x + (-a)``).

Renaming cannot change what the code computes: at every point, the one name holds the
value that whichever of the merged names was live there held. Names the code writer did
not take from the Program (lengths, buffers of a schedule, loop machinery) are left
alone. ``names`` gives each Program name its user's label (``ir.label``; "" for a
nameless temporary), its aval and its role: names of two roles never merge (a residual
the reverse sweep overwrites with a cotangent is named anew there).

Layer: backends.
"""
from __future__ import annotations

import ast
import re

from ...core.where import parse
from .liveness import Liveness, copies, defs_uses, names_in, simple, stores, suites

__all__ = ["coalesce"]

_SUFFIX = re.compile(r"^(.*)_([0-9]+)$")
_ROUNDS = 4


def coalesce(source, fname, names):
    """``source`` (a module holding ``def fname``) with the copies merged away."""
    for _ in range(_ROUNDS):
        new = _Round(source, fname, names).run()
        if new == source:
            break
        source = new
    return source


# --- one round ---------------------------------------------------------------------------
class _Round:
    def __init__(self, source, fname, names):
        self.source, self.names = source, names
        self.tree = parse(source)   # (CPython's AST conversion is not thread-safe: ``core.where``)
        self.fn = next(n for n in self.tree.body
                       if isinstance(n, ast.FunctionDef) and n.name == fname)
        self.lines = source.splitlines()
        self.params = [a.arg for a in self.fn.args.args]

    # the analysis
    def run(self):
        live = Liveness()
        entry = live.block(self.fn.body, set(), None)
        self.live = live
        stmts = list(simple(self.fn.body))
        self.defs_count, self.first = {}, {}
        for p in self.params:
            self.first[p] = 0
        edges = {}

        def edge(a, b):
            if a != b:
                edges.setdefault(a, set()).add(b)
                edges.setdefault(b, set()).add(a)

        for p in self.params:
            for y in entry:
                edge(p, y)
            for q in self.params:
                edge(p, q)
        for s in stmts:
            if isinstance(s, ast.For):
                defs, after, pairs = stores(s.target), live.after.get(s, set()), []
            elif s in live.after:
                defs, after, pairs = defs_uses(s)[0], live.after[s], copies(s)
            else:
                continue
            for d in defs:
                self.defs_count[d] = self.defs_count.get(d, 0) + 1
                self.first.setdefault(d, s.lineno)
                skip = {b for a, b in pairs if a == d}
                for y in after:
                    if y not in skip:
                        edge(d, y)
            if len(defs) > 1:
                for a in defs:
                    for b in defs:
                        edge(a, b)
        self.edges = edges
        rename = self.merge(stmts)
        return self.rewrite(stmts, rename)

    def known(self, name):
        return name in self.names and name in self.first

    def merge(self, stmts):
        """{name: its new name}: copies first, then versions of one variable."""
        parent = {}

        def find(a):
            while parent.get(a, a) != a:
                a = parent[a]
            return a

        members = {}

        def group(a):
            r = find(a)
            return members.setdefault(r, {r})

        def try_merge(a, b, check_type):
            ra, rb = find(a), find(b)
            if ra == rb:
                return
            ga, gb = group(ra), group(rb)
            if any(self.edges.get(m, set()) & gb for m in ga):
                return
            if not self.allowed(ga | gb, check_type):
                return
            parent[rb] = ra
            members[ra] = ga | gb
            members.pop(rb, None)

        for s in stmts:
            for a, b in copies(s):
                if self.known(a) and self.known(b):
                    try_merge(a, b, False)
        by_label = {}
        for name in sorted(self.first, key=lambda n: (self.first[n], n)):
            if self.known(name) and self.names[name][0]:
                by_label.setdefault(self.names[name][0], []).append(name)
        for versions in by_label.values():
            for k, a in enumerate(versions):
                for b in versions[k + 1:]:
                    try_merge(a, b, True)
        rename = {}
        for root, group_ in members.items():
            best = self.best(group_)
            for m in group_:
                if m != best:
                    rename[m] = best
        return rename

    def allowed(self, group, check_type):
        labels = {self.names[m][0] for m in group if self.names[m][0]}
        if len(labels) > 1 or len({self.names[m][2] for m in group}) > 1:
            return False
        params = [m for m in group if m in self.params]
        if len(params) > 1:
            return False
        if params:
            own = self.names[params[0]][0]
            for m in group:
                if m != params[0] and self.names[m][0] != own and (
                        self.names[m][0] or self.defs_count.get(m, 0) != 1):
                    return False
        if check_type:
            avals = {(tuple(a.shape), a.dtype, a.weak) for a in (self.names[m][1] for m in group)}
            if len(avals) > 1:
                return False
        return True

    def best(self, group):
        params = [m for m in group if m in self.params]
        if params:
            return params[0]

        def key(m):
            label = self.names[m][0]
            if not label:
                return (1, 0, self.first[m], m)
            if m == label:
                suffix = 0
            else:
                found = _SUFFIX.match(m)
                suffix = int(found.group(2)) if found and found.group(1) == label else 99
            return (0, suffix, self.first[m], m)
        return min(group, key=key)

    # the text
    def rewrite(self, stmts, rename):
        edits = {}          # line -> [(col, end, text)]
        for node, bound in names_in(self.fn.body):
            if node.id in rename and node.id not in bound:
                edits.setdefault(node.lineno, []).append(
                    (node.col_offset, node.end_col_offset, rename[node.id]))
        drop, replace = set(), {}
        after = self.live.after
        known = {rename.get(m, m) for m in self.first if self.known(m)}
        for s in stmts:
            pairs = copies(s)
            if not pairs or s.lineno != s.end_lineno:
                continue
            kept = [(rename.get(a, a), rename.get(b, b)) for a, b in pairs]
            kept = [(a, b) for a, b in kept if a != b]
            live = {rename.get(n, n) for n in after.get(s, ())}
            # a copy into a name nothing reads afterwards goes
            kept = [(a, b) for a, b in kept if a in live or a not in known]
            if len(kept) == len(pairs) and not any(a in rename or b in rename for a, b in pairs):
                continue
            indent = self.lines[s.lineno - 1][:s.col_offset]
            if not kept:
                drop.add(s.lineno)
            elif len(kept) == 1:
                replace[s.lineno] = f"{indent}{kept[0][0]} = {kept[0][1]}"
            else:
                replace[s.lineno] = (f"{indent}{', '.join(a for a, _ in kept)} = "
                                     f"{', '.join(b for _, b in kept)}")
        signs = self.signs(stmts, rename, drop)
        lines = list(self.lines)
        for k, spans in edits.items():
            text = lines[k - 1]
            for col, end, new in sorted(spans, reverse=True):
                text = text[:col] + new + text[end:]
            lines[k - 1] = text
        for k, text in signs.items():
            if text is None:
                drop.add(k)
            else:
                replace[k] = _renamed(text, rename)
        for k, text in replace.items():
            lines[k - 1] = text
        removed = self.empty_suites(drop, rename)
        out = [line for k, line in enumerate(lines, 1) if k not in drop and k not in removed[0]]
        return _tidy(_apply_heads(out, removed[1], lines, drop | removed[0]))

    def signs(self, stmts, rename, drop):
        """{line: new text, or None to delete}: ``t = -a`` read once, as ``x + t``."""
        out = {}
        uses = {}
        for node, bound in names_in(self.fn.body):
            if isinstance(node.ctx, ast.Load) and node.id not in bound:
                uses.setdefault(node.id, []).append(node)
        for body in suites(self.fn.body):
            for k, s in enumerate(body):
                if not (isinstance(s, ast.Assign) and len(s.targets) == 1
                        and isinstance(s.targets[0], ast.Name)
                        and isinstance(s.value, ast.UnaryOp) and isinstance(s.value.op, ast.USub)
                        and isinstance(s.value.operand, ast.Name)):
                    continue
                t, a = s.targets[0].id, s.value.operand.id
                if not self.known(t) or self.names[t][0] or self.defs_count.get(t) != 1 \
                        or len(uses.get(t, ())) != 1 or s.lineno in drop:
                    continue
                use = uses[t][0]
                later = next((j for j in range(k + 1, len(body))
                              if body[j].lineno <= use.lineno <= body[j].end_lineno), None)
                if later is None or any(
                        {a, t} & defs_uses(x)[0] for x in body[k + 1:later]
                        if not isinstance(x, (ast.If, ast.For, ast.While))) or any(
                        isinstance(x, (ast.If, ast.For, ast.While)) for x in body[k + 1:later]):
                    continue
                user = body[later]
                text = self.lines[user.lineno - 1]
                if user.lineno != user.end_lineno or user.lineno in out \
                        or not isinstance(user, (ast.Assign, ast.AugAssign)):
                    continue
                new = _negated_use(user, use, a, text)
                if new is not None:
                    out[s.lineno] = None
                    out[user.lineno] = new
        return out

    def empty_suites(self, drop, rename):
        """(lines removed with them, {if line: new header}) for the suites that
        ``drop`` empties: an ``else`` goes, an ``if`` with an empty body tests ``not``
        and takes its ``else``'s body, an ``if`` left with nothing goes; any other
        empty suite gets ``pass``."""
        removed, heads = set(), {}

        def empty(body):
            return all(s.lineno in drop or s.lineno in removed or isinstance(s, ast.Pass)
                       for s in simple(body) if not isinstance(s, (ast.If, ast.For,
                                                                    ast.While))) \
                and all(not isinstance(s, (ast.For, ast.While)) for s in simple(body)) \
                and all(not isinstance(s, ast.If) or _is_name(s.test) for s in simple(body))

        for s in reversed(list(simple(self.fn.body))):
            if not isinstance(s, ast.If) or not _is_name(s.test):
                continue
            body_empty, else_empty = empty(s.body), empty(s.orelse)
            is_elif = len(s.orelse) == 1 and isinstance(s.orelse[0], ast.If) and \
                self.lines[s.orelse[0].lineno - 1].lstrip().startswith("elif")
            if is_elif:
                continue
            else_line = self.else_line(s)
            last = s.end_lineno
            if body_empty and (else_empty or not s.orelse):
                removed |= set(range(s.lineno, last + 1))
            elif else_empty and s.orelse:
                removed |= set(range(else_line, last + 1))
            elif body_empty:
                removed |= set(range(s.lineno + 1, else_line + 1))
                indent = self.lines[s.lineno - 1][:s.col_offset]
                heads[s.lineno] = f"{indent}if not {rename.get(s.test.id, s.test.id)}:"
        return removed, heads

    def else_line(self, s):
        if not s.orelse:
            return None
        k = s.orelse[0].lineno - 1
        while k > s.body[-1].end_lineno and self.lines[k - 1].strip() != "else:":
            k -= 1
        return k


def _is_name(node):
    return isinstance(node, ast.Name)


def _negated_use(user, use, a, text):
    """``user``'s line with ``x + t`` (``use`` is ``t``) written ``x - a``, or None."""
    if isinstance(user, ast.AugAssign) and user.value is use and isinstance(user.op, ast.Add):
        head = text[:user.target.end_col_offset]
        return f"{head} -= {a}"
    for node in ast.walk(user):
        if isinstance(node, ast.BinOp) and node.right is use and \
                isinstance(node.op, (ast.Add, ast.Sub)) and node.lineno == node.end_lineno:
            left = text[node.left.col_offset:node.left.end_col_offset]
            op = "-" if isinstance(node.op, ast.Add) else "+"
            return text[:node.col_offset] + f"{left} {op} {a}" + text[node.end_col_offset:]
    return None


def _renamed(text, rename):
    """``text`` with whole-word names renamed (a line built from the original)."""
    return re.sub(r"\b[A-Za-z_]\w*\b", lambda m: rename.get(m.group(0), m.group(0)), text)


def _apply_heads(out, heads, lines, gone):
    """``out`` with the ``if`` headers of ``heads`` rewritten (by original line)."""
    if not heads:
        return out
    kept = [k for k in range(1, len(lines) + 1) if k not in gone]
    return [heads.get(k, line) for k, line in zip(kept, out)]


def _tidy(lines):
    """Comment lines with nothing under them go (a heading whose statements went);
    a suite left with comments only gets ``pass``."""
    out = []
    for k, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith("#") and not line.startswith("#"):
            indent = len(line) - len(line.lstrip())
            nxt = next((x for x in lines[k + 1:] if x.strip() and not x.strip().startswith("#")),
                       "")
            if len(nxt) - len(nxt.lstrip()) < indent or not nxt:
                continue
        out.append(line)
    final = []
    for k, line in enumerate(out):
        final.append(line)
        if line.split("#")[0].rstrip().endswith(":") and not line.lstrip().startswith("#"):
            indent = len(line) - len(line.lstrip())
            nxt = next((x for x in out[k + 1:] if x.strip() and not x.strip().startswith("#")),
                       "")
            if len(nxt) - len(nxt.lstrip()) <= indent:
                final.append(" " * (indent + 4) + "pass")
    return "\n".join(final) + "\n"
