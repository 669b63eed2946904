"""Reading a CrewAI ``crew.py`` from its syntax tree, never running it.

A CrewAI project wires its crew in a ``@CrewBase`` class: ``@agent`` and ``@task``
methods each return one ``Agent(...)`` / ``Task(...)`` call and a ``@crew`` method
returns ``Crew(...)``. Those calls are declarations in Python clothing, so their
keyword arguments are read as data: literals as values, ``self.x()`` as references,
names as objects to resolve later. Anything that only running the code could tell
(a loop building agents, ``task.execute()``) is refused with its line, because
guessing would run a different crew than the author's.
"""

from __future__ import annotations

import ast
from pathlib import Path

from crew.config.crewai.arguments import _arg, _tool_ref
from crew.config.crewai.plan import CrewPlan, Import, MemberPlan, ToolRef
from crew.config.crewai.syntax import (
    callee_name,
    code_text,
    config_key,
    decorator_names,
    head_text,
    is_self_attr,
    resolve_local,
    self_call,
    yaml_path,
)

# Calls that run work from Python instead of declaring it: a crew driven this way is not ours to guess.
DRIVING = frozenset({"execute", "execute_sync", "execute_async", "execute_task", "_execute_core"})
# Decorators of crewai.project whose methods crew does not use; each draws a warning naming it.
_IGNORED_DECORATORS = frozenset(
    {"before_kickoff", "after_kickoff", "callback", "cache_handler", "output_json", "output_pydantic", "llm"}
)
_MEMBER_CALLS = {"agent": "Agent", "task": "Task", "crew": "Crew"}


def defines_crewbase(path: Path) -> bool:
    """Whether a Python file declares a ``@CrewBase`` class (read, not imported)."""
    tree = _parse(path)
    return tree is not None and _crewbase_classes(tree) != []


def read_crew_file(path: Path, display: str) -> CrewPlan | None:
    """The plan of the file's ``@CrewBase`` class; None when it has none. Syntax errors are issues."""
    try:
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source, filename=str(path))
    except SyntaxError as exc:
        plan = CrewPlan(display, "", exc.lineno or 1)
        plan.error(exc.lineno or 1, "", f"invalid Python: {exc.msg}")
        return plan
    except (OSError, UnicodeDecodeError) as exc:
        plan = CrewPlan(display, "", 1)
        plan.error(1, "", f"cannot read the file: {exc}")
        return plan
    classes = _crewbase_classes(tree)
    if not classes:
        return None
    plan = CrewPlan(display, classes[0].name, classes[0].lineno)
    if len(classes) > 1:
        names = ", ".join(f"{c.name} (line {c.lineno})" for c in classes)
        plan.error(classes[1].lineno, "", f"more than one @CrewBase class ({names}): crew reads one crew per folder")
    _read_module(tree, source, plan)
    _refuse_driving(tree, source, plan)
    _read_class(classes[0], source, plan)
    return plan


def driving_calls(tree: ast.AST, source: str) -> list[tuple[int, str]]:
    """(line, code) of every call that runs a task from Python (``task.execute_sync()`` ...).

    ``execute_sync``/``execute_async``/``execute_task`` are CrewAI's own names; a plain
    ``.execute()`` counts only on a task (a name bound to ``Task(...)``, a ``@task`` method,
    a ``Task(...)`` call), so a tool's ``cursor.execute(sql)`` is not mistaken for one.
    """
    tasks, task_methods = _task_names(tree)
    out = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in DRIVING):
            continue
        if node.func.attr != "execute" or _is_task(node.func.value, tasks, task_methods):
            out.append((node.lineno, code_text(source, node)))
    return sorted(out)


def _task_names(tree: ast.AST) -> tuple[set[str], set[str]]:
    """The names bound to ``Task(...)``, and the ``@task`` methods."""
    tasks = {
        target.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and callee_name(node.value) == "Task"
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    task_methods = {
        node.name
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and "task" in decorator_names(node)
    }
    return tasks, task_methods


def _is_task(receiver: ast.expr, tasks: set[str], task_methods: set[str]) -> bool:
    return (
        (isinstance(receiver, ast.Name) and receiver.id in tasks)
        or self_call(receiver) in task_methods
        or (isinstance(receiver, ast.Call) and callee_name(receiver) == "Task")
    )


# -- the module ------------------------------------------------------------------------


def _parse(path: Path) -> ast.Module | None:
    try:
        return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (SyntaxError, OSError, UnicodeDecodeError, ValueError):
        return None


def _crewbase_classes(tree: ast.Module) -> list[ast.ClassDef]:
    return [n for n in tree.body if isinstance(n, ast.ClassDef) and "CrewBase" in decorator_names(n)]


def _read_module(tree: ast.Module, source: str, plan: CrewPlan) -> None:
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            plan.imports.update(_imports(node))
        elif isinstance(node, ast.ClassDef) and "CrewBase" not in decorator_names(node):
            plan.definitions[node.name] = node
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            plan.definitions[node.name] = node  # a guardrail, a callback, a @tool function
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name) and node.value is not None:
                    plan.assigns[target.id] = node.value


def _imports(node: ast.Import | ast.ImportFrom) -> dict[str, Import]:
    """The names an import statement binds, each with where it comes from."""
    if isinstance(node, ast.ImportFrom):
        return {a.asname or a.name: Import(node.module or "", a.name, node.level, node.lineno) for a in node.names}
    return {
        a.asname or a.name.split(".")[0]: Import(a.name if a.asname else a.name.split(".")[0], None, 0, node.lineno)
        for a in node.names
    }


def _refuse_driving(tree: ast.Module, source: str, plan: CrewPlan) -> None:
    for line, code in driving_calls(tree, source):
        plan.error(
            line, "", f"`{code}` runs a task from Python code; crew runs the declared crew itself and cannot honour it"
        )


# -- the class -------------------------------------------------------------------------


_Method = tuple[ast.FunctionDef | ast.AsyncFunctionDef, list[str]]


def _read_class(cls: ast.ClassDef, source: str, plan: CrewPlan) -> None:
    methods = _class_body(cls, source, plan)
    for node, decorators in methods:  # @tool methods first: agents may name them
        if "tool" in decorators:
            ref = _returned_tool(node, source, plan)
            if ref is not None:
                plan.tool_methods[node.name] = ref
    for node, decorators in methods:
        _read_method(cls, node, decorators, source, plan)
    for name, value in plan.class_attrs.items():
        if name not in plan.attrs_read:
            plan.warn(value.lineno, name, f"class attribute '{name}' is not read by crew and is ignored")


def _class_body(cls: ast.ClassDef, source: str, plan: CrewPlan) -> list[_Method]:
    """The class's methods with their decorators; its attributes are read, anything else refused."""
    methods: list[_Method] = []
    for node in cls.body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # the docstring
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            _class_attribute(node, source, plan)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            methods.append((node, decorator_names(node)))
        else:
            plan.error(
                node.lineno,
                cls.name,
                f"`{head_text(source, node)}` in the class body is composed at run time; crew cannot read it",
            )
    return methods


def _read_method(
    cls: ast.ClassDef, node: ast.FunctionDef | ast.AsyncFunctionDef, decorators: list[str], source: str, plan: CrewPlan
) -> None:
    """One method: an @agent, @task or @crew member, an undecorated agent helper, or one crew ignores (said)."""
    kind = next((d for d in decorators if d in _MEMBER_CALLS), None)
    if kind == "crew":
        _read_crew(node, source, plan)
    elif kind is not None:
        member = _read_member(node, kind, source, plan)
        if member is not None:
            (plan.agents if kind == "agent" else plan.tasks).append(member)
    elif "tool" in decorators:
        return
    elif ignored := [d for d in decorators if d in _IGNORED_DECORATORS]:
        plan.warn(node.lineno, node.name, f"@{ignored[0]} method '{node.name}' is not supported here and is ignored")
    elif node.name == "__init__":
        plan.warn(node.lineno, "__init__", f"{cls.name}.__init__ is not run by crew and is ignored")
    elif _returns_call(node, "Agent"):
        member = _read_member(node, "agent", source, plan, quiet=True)
        if member is not None:
            member.decorated = False
            plan.helpers[node.name] = member


def _class_attribute(node: ast.Assign | ast.AnnAssign, source: str, plan: CrewPlan) -> None:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    value = node.value
    for name in [t.id for t in targets if isinstance(t, ast.Name)]:
        if name in ("agents_config", "tasks_config"):
            _config_path(node, name, plan)
        elif name in ("agents", "tasks") and value is not None and isinstance(node, ast.AnnAssign):
            continue  # `agents: List[BaseAgent]`: CrewAI's own bookkeeping
        elif value is not None:
            plan.class_attrs[name] = value  # read where a keyword names it (llm=self.llm); else warned


def _config_path(node: ast.Assign | ast.AnnAssign, name: str, plan: CrewPlan) -> None:
    """``agents_config = 'config/agents.yaml'``, or the path a ``yaml.safe_load(...)`` of one reads."""
    value = node.value
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        setattr(plan, name, value.value)
    elif value is not None and yaml_path(value):
        setattr(plan, name, yaml_path(value))  # yaml.safe_load(Path('config/agents.yaml').read_text())
    else:
        plan.error(node.lineno, name, f"{name} must be a literal path such as 'config/{name[:-7]}s.yaml'")


def _body_call(
    fn: ast.FunctionDef | ast.AsyncFunctionDef,
) -> tuple[ast.expr | None, dict[str, ast.expr], ast.stmt | None]:
    """The returned expression and the simple local assignments before it; the first other statement."""
    local: dict[str, ast.expr] = {}
    for i, stmt in enumerate(fn.body):
        if i == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            local[stmt.targets[0].id] = stmt.value
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
            local[stmt.target.id] = stmt.value
        elif isinstance(stmt, ast.Return) and i == len(fn.body) - 1:
            return stmt.value, local, None
        else:
            return None, local, stmt
    return None, local, None


def _returns_call(fn: ast.FunctionDef | ast.AsyncFunctionDef, callee: str) -> bool:
    value, _, _ = _body_call(fn)
    return isinstance(value, ast.Call) and callee_name(value) == callee


def _read_member(
    fn: ast.FunctionDef | ast.AsyncFunctionDef, kind: str, source: str, plan: CrewPlan, *, quiet: bool = False
) -> MemberPlan | None:
    call = _expect_call(fn, _MEMBER_CALLS[kind], source, plan, quiet=quiet)
    if call is None:
        return None
    member = MemberPlan(fn.name, fn.lineno, None, fn.lineno)
    _, local, _ = _body_call(fn)
    for arg in call.args:
        plan.error(
            arg.lineno,
            fn.name,
            f"positional argument `{code_text(source, arg)}` to {_MEMBER_CALLS[kind]}(...): write it as a keyword",
        )
    for keyword in call.keywords:
        if keyword.arg is None or keyword.arg == "config":
            key = config_key(keyword.value, f"{kind}s_config", local)
            if key is None:
                plan.error(
                    keyword.value.lineno,
                    fn.name,
                    f"`{code_text(source, keyword)}`: expected self.{kind}s_config['<key>']",
                )
            else:
                member.config_key, member.config_line = key, keyword.value.lineno
            continue
        member.kwargs[keyword.arg] = _arg(keyword.arg, keyword.value, local, source, plan, f"{fn.name}.{keyword.arg}")
    if member.config_key is None and kind == "task" and "description" not in member.kwargs:
        member.config_key = fn.name  # CrewAI also maps tasks.yaml keys named like the method
    if member.config_key is None and kind == "agent" and "role" not in member.kwargs:
        member.config_key = fn.name
    return member


def _expect_call(
    fn: ast.FunctionDef | ast.AsyncFunctionDef, callee: str, source: str, plan: CrewPlan, *, quiet: bool = False
) -> ast.Call | None:
    value, _, other = _body_call(fn)
    if isinstance(value, ast.Call) and callee_name(value) == callee:
        return value
    if quiet:
        return None
    where = other if other is not None else fn
    what = f"`{head_text(source, other)}`" if other is not None else "its body"
    plan.error(
        where.lineno,
        fn.name,
        f"method '{fn.name}' builds its {callee} at run time ({what}); crew reads only `return {callee}(...)` "
        "with keyword arguments (local names may hold parts of it)",
    )
    return None


def _read_crew(fn: ast.FunctionDef | ast.AsyncFunctionDef, source: str, plan: CrewPlan) -> None:
    call = _expect_call(fn, "Crew", source, plan)
    plan.crew_line = fn.lineno
    if call is None:
        return
    _, local, _ = _body_call(fn)
    for keyword in call.keywords:
        key, value = keyword.arg, resolve_local(keyword.value, local)
        if key is None:
            plan.error(
                keyword.value.lineno,
                "crew",
                f"`{code_text(source, keyword)}` is composed at run time; crew cannot read it",
            )
        elif key in ("agents", "tasks"):
            names = _member_list(value, key, source, plan)
            if names is not None:
                setattr(plan, f"crew_{key}", names if names != "all" else None)
        else:
            plan.crew[key] = _arg(key, value, local, source, plan, f"crew.{key}")


def _member_list(node: ast.expr, what: str, source: str, plan: CrewPlan) -> list[str] | str | None:
    if is_self_attr(node, what):
        return "all"
    if isinstance(node, (ast.List, ast.Tuple)):
        names = [self_call(item) for item in node.elts]
        if all(names):
            return [n for n in names if n]
    plan.error(
        node.lineno,
        f"crew.{what}",
        f"`{code_text(source, node)}` is composed at run time; write self.{what} or [self.x(), ...]",
    )
    return None


def _returned_tool(fn: ast.FunctionDef | ast.AsyncFunctionDef, source: str, plan: CrewPlan) -> ToolRef | None:
    value, local, _ = _body_call(fn)
    if value is None:
        plan.error(fn.lineno, fn.name, f"@tool method '{fn.name}' must be `return <tool>`; crew cannot read it")
        return None
    return _tool_ref(resolve_local(value, local), source, plan)


# -- small readers ---------------------------------------------------------------------
