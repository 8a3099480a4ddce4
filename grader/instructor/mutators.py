"""The slips a student makes, as edits of a reference solution's syntax tree.

``dev mutants`` grades each edited copy of a graded function (and of the helpers of
its module that it calls) in place of the reference.  No mutation library exposes
its operators as an API we could call (mutmut's live in an internal module over
libcst and know nothing of numpy's ``axis=`` or ``.T``), so they are ours, over
the standard ``ast``: each operator looks at one node and proposes replacements.
"""

import ast
import copy
import dataclasses
from collections.abc import Iterator, Sequence

LINE_WIDTH = 110
INTERMEDIATES = 3   # the variables bound last, that a slip may return instead


@dataclasses.dataclass(frozen=True)
class Mutant:
    """One edited copy of a solution module: which function, which slip, where."""

    function: str      # the function whose source changed (graded, or a helper it calls)
    operator: str      # the kind of slip (OPERATORS' names)
    line: int          # its line in the solution file
    before: str        # the changed statement (or expression), on one line
    after: str
    source: str        # the whole module with the change

    @property
    def diff(self) -> str:
        return f"{self.line}: {self.before}  →  {self.after}"


def mutants(source: str, graded: Sequence[str]) -> list[Mutant]:
    """Every distinct mutant of the graded functions of ``source`` and of the module's
    functions they call (a module's wrong versions are left alone)."""
    tree = ast.parse(source)
    functions = {n.name: i for i, n in enumerate(tree.body) if isinstance(n, ast.FunctionDef)}
    defs: list = tree.body
    plain = ast.unparse(tree)
    seen = {plain}
    out = []
    for name in reached(tree, graded):
        index = functions[name]
        for path, stmt_path, operator, new in _edits(defs[index]):
            changed = copy.deepcopy(tree)
            _replace(changed.body[index], path, new)
            text = ast.unparse(changed)
            if text in seen:
                continue
            seen.add(text)
            old_stmt = _at(tree.body[index], stmt_path)
            new_stmt = _at(changed.body[index], stmt_path)
            out.append(Mutant(name, operator, getattr(old_stmt, "lineno", 0),
                              one_line(old_stmt), one_line(new_stmt), text))
    return out


def reached(tree: ast.Module, graded: Sequence[str]) -> list[str]:
    """The graded functions and the module's functions they call, transitively."""
    defs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    out: list[str] = []
    todo = [g for g in graded if g in defs]
    while todo:
        name = todo.pop(0)
        if name in out:
            continue
        out.append(name)
        todo += [n.id for n in ast.walk(defs[name]) if isinstance(n, ast.Name)
                 and n.id in defs and n.id not in out]
    return out


def one_line(node: ast.AST) -> str:
    """A statement as one line: a compound one by its first line."""
    lines = ast.unparse(node).splitlines() or [""]
    text = lines[0] + (" …" if len(lines) > 1 else "")
    return text if len(text) <= LINE_WIDTH else text[:LINE_WIDTH - 1] + "…"


Path = tuple   # of (field, index or None) from a function's node down to a node


@dataclasses.dataclass
class Scope:
    """The names a function has bound so far: its parameters, its own variables."""

    params: set
    local: dict   # name -> None, in the order first bound

    @property
    def bound(self) -> set:
        return self.params | set(self.local)


def _edits(function: ast.FunctionDef) -> Iterator[tuple[Path, Path, str, ast.AST]]:
    """(path of the node, path of its statement, operator, replacement) for each edit."""
    scope = Scope({a.arg for a in function.args.args + function.args.kwonlyargs}, {})
    for node, path, stmt_path in _walk(function, (), ()):
        for operator, new in _proposals(node, scope):
            yield path, stmt_path, operator, new
        if isinstance(node, ast.Assign | ast.AugAssign | ast.For):
            target = node.target if not isinstance(node, ast.Assign) else node.targets[0]
            for name in (n.id for n in ast.walk(target) if isinstance(n, ast.Name)):
                scope.local.pop(name, None)
                scope.local[name] = None   # the latest bound last


def _walk(node, path, stmt_path):
    """Every node under a function with its path (the docstring left out)."""
    for field, value in ast.iter_fields(node):
        items = value if isinstance(value, list) else [value]
        for i, child in enumerate(items):
            if not isinstance(child, ast.AST) or _is_docstring(node, field, i):
                continue
            where = (*path, (field, i if isinstance(value, list) else None))
            inner = where if isinstance(child, ast.stmt) else stmt_path
            yield child, where, inner
            yield from _walk(child, where, inner)


def _is_docstring(parent, field, index):
    body = getattr(parent, "body", None)
    return (field == "body" and index == 0 and isinstance(body, list) and body
            and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str))


def _at(node, path):
    for field, index in path:
        node = getattr(node, field) if index is None else getattr(node, field)[index]
    return node


def _replace(function, path, new):
    *above, (field, index) = path
    parent = _at(function, above)
    if index is None:
        setattr(parent, field, new)
    else:
        getattr(parent, field)[index] = new


def _proposals(node, scope):
    for operator in OPERATORS.get(type(node), ()):
        for name, new in operator(node, scope):
            yield name, ast.fix_missing_locations(new)


def _with(node, **fields):
    new = copy.deepcopy(node)
    for key, value in fields.items():
        setattr(new, key, value)
    return new


_ARITH = {ast.Add: (ast.Sub, ast.Mult), ast.Sub: (ast.Add,), ast.Mult: (ast.Div, ast.Add),
          ast.Div: (ast.Mult, ast.FloorDiv), ast.FloorDiv: (ast.Div, ast.Mult),
          ast.Pow: (ast.Mult,), ast.MatMult: (ast.Mult,), ast.Mod: (ast.FloorDiv,)}


def arithmetic(node, scope):
    """An operator swapped, an operand dropped (``/ T`` forgotten, ``2 *`` forgotten),
    a ``.T`` added to an operand of ``@``."""
    for op in _ARITH.get(type(node.op), ()):
        yield "arithmetic", _with(node, op=op())
    yield "dropped operand", copy.deepcopy(node.left)
    if isinstance(node.op, ast.Mult | ast.Add):
        yield "dropped operand", copy.deepcopy(node.right)
    if isinstance(node.op, ast.MatMult):
        for side in ("left", "right"):
            operand = getattr(node, side)
            if not (isinstance(operand, ast.Attribute) and operand.attr == "T"):
                yield "added .T", _with(node, **{side: ast.Attribute(
                    copy.deepcopy(operand), "T", ast.Load())})


_COMPARE = {ast.Lt: (ast.LtE, ast.Gt), ast.LtE: (ast.Lt,), ast.Gt: (ast.GtE, ast.Lt),
            ast.GtE: (ast.Gt,), ast.Eq: (ast.NotEq,), ast.NotEq: (ast.Eq,),
            ast.Is: (ast.IsNot,), ast.IsNot: (ast.Is,), ast.In: (ast.NotIn,),
            ast.NotIn: (ast.In,)}


def comparison(node, scope):
    for i, op in enumerate(node.ops):
        for other in _COMPARE.get(type(op), ()):
            ops = list(node.ops)
            ops[i] = other()
            yield "comparison", _with(node, ops=ops)


def constant(node, scope):
    """0↔1, n→n±1, 2→1; True↔False; a float x→x±1 (0.0↔1.0)."""
    value = node.value
    if isinstance(value, bool):
        yield "constant", ast.Constant(not value)
    elif isinstance(value, int):
        for other in {0: (1,), 1: (0, 2), 2: (1, 3)}.get(value, (value - 1, value + 1)):
            yield "constant", ast.Constant(other)
    elif isinstance(value, float):
        for other in {0.0: (1.0,), 1.0: (0.0, 2.0)}.get(value, (value - 1, value + 1)):
            yield "constant", ast.Constant(other)


def unary(node, scope):
    if isinstance(node.op, ast.USub | ast.Not | ast.Invert):
        yield "dropped sign", copy.deepcopy(node.operand)


def boolean(node, scope):
    yield "boolean", _with(node, op=ast.Or() if isinstance(node.op, ast.And) else ast.And())


MODULES = {"np", "numpy", "math", "torch", "sympy", "sp", "json"}


def call(node, scope):
    """A call dropped (``np.sqrt(x)``→``x``, ``x.sum()``→``x``), its arguments swapped,
    its ``k=`` moved by one, its ``axis=``/``dim=``/``keepdims=`` changed or dropped."""
    method = isinstance(node.func, ast.Attribute) and not (
        isinstance(node.func.value, ast.Name) and node.func.value.id in MODULES)
    if method:
        yield "dropped call", copy.deepcopy(node.func.value)
    elif node.args and not isinstance(node.args[0], ast.Starred):
        yield "dropped call", copy.deepcopy(node.args[0])
    for i in range(len(node.args) - 1):
        if not any(isinstance(a, ast.Starred) for a in node.args[i:i + 2]):
            args = copy.deepcopy(node.args)
            args[i], args[i + 1] = args[i + 1], args[i]
            yield "swapped arguments", _with(node, args=args)
    for i, kw in enumerate(node.keywords):
        for operator, value in _keyword_values(kw):
            keywords = copy.deepcopy(node.keywords)
            if value is None:
                del keywords[i]
            else:
                keywords[i] = ast.keyword(kw.arg, value)
            yield operator, _with(node, keywords=keywords)


_AXES = {-1: (0, -2), 0: (1, -1), 1: (0, -1), 2: (1, -1), -2: (-1,)}


def _keyword_values(kw):
    """(operator, new value, or None to drop the keyword) of one keyword argument."""
    value = kw.value
    try:   # -1 is a minus sign before a constant
        const = ast.literal_eval(value)
    except (ValueError, TypeError, SyntaxError):
        const = None
    if kw.arg in ("k", "offset", "diagonal"):
        for step in (ast.Add, ast.Sub):
            yield "k ±1", ast.BinOp(copy.deepcopy(value), step(), ast.Constant(1))
    elif kw.arg in ("axis", "dim", "axes"):
        if isinstance(const, int) and not isinstance(const, bool):
            for other in _AXES.get(const, (const - 1,)):
                yield "axis", ast.Constant(other)
        yield "axis", None
    elif kw.arg == "keepdims" and const is not True:   # True→False is a constant's slip
        yield "keepdims", ast.Constant(True)


def transpose(node, scope):
    if node.attr == "T":
        yield "dropped .T", copy.deepcopy(node.value)


def subscript_slice(node, scope):
    """A slice's bounds moved by one."""
    for field in ("lower", "upper"):
        bound_node = getattr(node, field)
        if bound_node is not None and not isinstance(bound_node, ast.Constant):
            for step in (ast.Add, ast.Sub):
                yield "slice ±1", _with(node, **{field: ast.BinOp(
                    copy.deepcopy(bound_node), step(), ast.Constant(1))})


def removed_statement(node, scope):
    """A statement that changes something already there (``scores = scores - max``, a
    mask, a scaling, an ``if`` block, a call for its effect) left out."""
    if isinstance(node, ast.Assign):
        names = [t.id for t in node.targets if isinstance(t, ast.Name)]
        if not names or len(names) != len(node.targets) or not set(names) <= scope.bound:
            return
    yield "removed statement", ast.Pass()


def returned_intermediate(node, scope):
    """``return x`` of a value computed on the way instead of the result (the three
    bound last that it does not use already)."""
    if node.value is None:
        return
    elements = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
    for i, element in enumerate(elements):
        used = {n.id for n in ast.walk(element) if isinstance(n, ast.Name)}
        for name in [n for n in scope.local if n not in used][-INTERMEDIATES:]:
            new = ast.Name(name, ast.Load())
            if isinstance(node.value, ast.Tuple):
                elts = copy.deepcopy(node.value.elts)
                elts[i] = new
                new = ast.Tuple(elts, ast.Load())
            yield "returned intermediate", ast.Return(new)


OPERATORS = {
    ast.BinOp: (arithmetic,), ast.Compare: (comparison,), ast.Constant: (constant,),
    ast.UnaryOp: (unary,), ast.BoolOp: (boolean,), ast.Call: (call,),
    ast.Attribute: (transpose,), ast.Slice: (subscript_slice,),
    ast.Assign: (removed_statement,), ast.AugAssign: (removed_statement,),
    ast.Expr: (removed_statement,), ast.If: (removed_statement,),
    ast.Return: (returned_intermediate,),
}
