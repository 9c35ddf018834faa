"""inmanta.util.dict_path, the part modules use at compile time: a dictionary key as a path
element (`InDict`, `WildInDict`), written with its special characters escaped, as inmanta-core
writes it (`str(InDict("example.com")) == "example\\.com"`). When an installed inmanta-core is
there, the host imports its complete module instead; other names are inert (see inmanta._inert)."""
import re

from inmanta._inert import inert_module

SPECIAL_CHARACTERS = ["\\", "[", "]", ".", "*", "="]
_SPECIAL = re.compile(r"([%s])" % re.escape("".join(SPECIAL_CHARACTERS)))
_ESCAPED = re.compile(r"\\([%s])" % re.escape("".join(SPECIAL_CHARACTERS)))
WILDCARD = "*"
NULL_VALUE = r"\0"


class InvalidPathException(Exception):
    pass


class WildInDict:
    """A key of a dictionary, or `*` for every key."""

    def __init__(self, key):
        if key == NULL_VALUE:
            raise InvalidPathException(f"Invalid dictionary key {key}")
        self.wildcard = key == WILDCARD
        # Written with its special characters escaped: the value is the key unescaped.
        self.value = None if self.wildcard else _ESCAPED.sub(r"\1", key)

    def to_str(self):
        return WILDCARD if self.wildcard else _SPECIAL.sub(r"\\\1", self.value)

    def __str__(self):
        return self.to_str()

    def __eq__(self, other):
        return type(self) is type(other) and str(self) == str(other)

    def __hash__(self):
        return hash(str(self))


class InDict(WildInDict):
    """A key of a dictionary (no wildcard)."""

    def __init__(self, key):
        super().__init__(key)
        if self.wildcard:
            raise ValueError("The Wildcard ('*') can not be used in DictPath's")


__getattr__ = inert_module(__name__)
