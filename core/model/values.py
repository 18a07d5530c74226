"""Value classes written out: what `@dataclass` makes (equality by fields, a repr naming
them, `replace`), without its start-up cost. `import dataclasses` takes ~8 ms (it loads
`inspect`) and each class ~0.5 ms more (its methods are compiled at import): together
most of what an import of a few appended lines spent loading code (issue 11).

A subclass names its fields in order in `_fields` (usually also its `__slots__`) and writes
its own `__init__` taking them as keyword arguments, with the same defaults. `Record` is a
mutable value (unhashable, as a dataclass with `eq=True`); `Frozen` cannot be changed
after `__init__` (which sets fields with `object.__setattr__`) and is hashable.
"""

from __future__ import annotations

TYPE_CHECKING = False  # `typing` costs ~2.5 ms at start-up; only annotations use it
if TYPE_CHECKING:
    from typing import Any, TypeVar

    V = TypeVar("V", bound="Record")


class Record:
    """Fields `_fields`; equal to a value of the same class with equal fields."""

    __slots__ = ()
    _fields: tuple[str, ...] = ()

    def _values(self) -> tuple:
        return tuple([getattr(self, name) for name in self._fields])

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()   # type: ignore[attr-defined]

    __hash__ = None   # type: ignore[assignment]  (mutable: as a dataclass with eq=True)

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{self.__class__.__qualname__}({shown})"


class Frozen(Record):
    """A `Record` that cannot be changed (as `@dataclass(frozen=True)`), so hashable."""

    __slots__ = ()

    def __hash__(self) -> int:
        return hash(self._values())

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}")

    def __reduce__(self) -> tuple:
        # copy, deepcopy and pickle set the fields of the copy, which __setattr__ refuses
        # (a frozen dataclass defines __getstate__/__setstate__ for the same reason)
        return _remade, (self.__class__, self._values())


def _remade(cls: type, fields: tuple) -> Any:
    """A `Frozen` of class `cls` with these field values (what `Frozen.__reduce__` gives)."""
    value = cls.__new__(cls)
    for name, field in zip(cls._fields, fields):
        object.__setattr__(value, name, field)
    return value


def replace(value: V, /, **changes: Any) -> V:
    """A copy of `value` with some fields changed (`dataclasses.replace` for these classes)."""
    fields = value._fields
    unknown = [name for name in changes if name not in fields]
    if unknown:
        raise TypeError(f"{value.__class__.__qualname__} has no field {unknown[0]!r}")
    kwargs = {name: getattr(value, name) for name in fields}
    kwargs.update(changes)
    return value.__class__(**kwargs)
