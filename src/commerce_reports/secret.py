"""`Secret`: a key that never shows itself (repr, str, logs), registered for redaction on sight."""

from __future__ import annotations

from .errors import ConfigurationError
from .redaction import MASK, register_secret

__all__ = ["Secret"]


class Secret:
    """A secret value whose repr and str never show it; `.reveal()` is the only way out."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        if not isinstance(value, str) or not value.strip():
            raise ConfigurationError("a key must be a non-empty string (check the variable that holds it)")
        if any(ord(c) < 32 or ord(c) == 127 for c in value.strip()):  # no header could carry it
            raise ConfigurationError(
                "a key must be one line of printable characters: this one holds a line break or another "
                "control character (check the variable that holds it, or how it was pasted)"
            )
        self._value = value.strip()
        register_secret(self._value)

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return f"Secret('{MASK}')"

    __str__ = __repr__

    def __reduce__(self) -> tuple[type[Secret], tuple[str]]:
        """Pickled as the key it holds (a pickle is a channel its sender chose, as multiprocessing's),
        and made again through `__init__`, so the process that loads it masks it too."""
        return (Secret, (self._value,))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)
