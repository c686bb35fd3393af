"""``triton._utils``: Triton's helpers for walking nested (tuple) kernel arguments by path, which code written
for Triton imports (torch inductor builds a kernel's specialization attributes with them). A path is a tuple of
indices into nested lists and tuples."""
from __future__ import annotations

from functools import reduce
from typing import Any, Callable


def is_iterable(x: Any) -> bool:
    return isinstance(x, (list, tuple))


def find_paths_if(iterable: Any, pred: Callable[[tuple, Any], bool]) -> list[tuple]:
    """Paths of the leaves of ``iterable`` (nested lists/tuples) for which ``pred(path, leaf)`` holds, in
    order; a leaf that is not inside a list or tuple has the path ``()``."""
    found: list[tuple] = []

    def visit(path: tuple, x: Any) -> None:
        if is_iterable(x):
            for i, item in enumerate(x):
                visit(path + (i, ), item)
        elif pred(path, x):
            found.append(path)

    visit((), iterable)
    return found


def get_iterable_path(iterable: Any, path: tuple) -> Any:
    return reduce(lambda x, i: x[i], path, iterable)


def set_iterable_path(iterable: Any, path: tuple, value: Any) -> None:
    assert len(path) > 0, "a path into a list or tuple is needed"
    get_iterable_path(iterable, path[:-1])[path[-1]] = value
