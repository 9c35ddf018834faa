"""inmanta.util.dict_path: paths into nested dictionaries and lists, as modules write them
(`settings.users[name=bob].age`, `hosts[*]`), to read, set and remove what they point at.

A path is elements joined by `.`; an element is a dictionary key (`InDict`), or a key whose
value is a list and filters on its dictionaries (`KeyedList`, `users[name=bob][role=admin]`,
where `\\0` matches a missing or null value); `*` stands for any key or value in a wild path.
The characters `\\ [ ] . * =` are escaped with a backslash inside keys and values. `.` alone
is the whole container.
"""
import re

SPECIAL_CHARACTERS = ["\\", "[", "]", ".", "*", "="]
_SPECIAL = re.compile(r"([%s])" % re.escape("".join(SPECIAL_CHARACTERS)))
_ESCAPED = re.compile(r"\\([%s])" % re.escape("".join(SPECIAL_CHARACTERS)))
WILDCARD = "*"
NULL_VALUE = r"\0"


class InvalidPathException(Exception):
    pass


def _escape(text):
    return _SPECIAL.sub(r"\\\1", text)


def _unescape(text):
    return _ESCAPED.sub(r"\1", text)


def _split(text, separator):
    """`text` split on `separator` where it is not escaped (escapes kept)."""
    parts, current, i = [], [], 0
    while i < len(text):
        char = text[i]
        if char == "\\" and i + 1 < len(text):
            current.append(text[i : i + 2])
            i += 2
            continue
        if char == separator:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
        i += 1
    parts.append("".join(current))
    return parts


class DictPath:
    """A path: what it points at in a container can be read, set and removed."""

    def get_elements(self, container):
        raise NotImplementedError()

    def to_str(self):
        raise NotImplementedError()

    def __str__(self):
        return self.to_str()

    def __repr__(self):
        return "%s(%r)" % (type(self).__name__, self.to_str())

    def __eq__(self, other):
        return isinstance(other, DictPath) and type(self) is type(other) and str(self) == str(other)

    def __hash__(self):
        return hash((type(self).__name__, str(self)))


class WildDictPath(DictPath):
    """A path that may hold wildcards: it names any number of elements."""

    def resolve_wild_cards(self, container):
        raise NotImplementedError()


class WildInDict(WildDictPath):
    """A key of a dictionary, or `*` for every key."""

    def __init__(self, key):
        if key == NULL_VALUE:
            raise InvalidPathException("Invalid dictionary key %s" % key)
        self.wildcard = key == WILDCARD
        # Written with its special characters escaped: the value is the key unescaped.
        self.value = None if self.wildcard else _unescape(key)
        self.key = self.value

    def to_str(self):
        return WILDCARD if self.wildcard else _escape(self.value)

    def _keys(self, container):
        if not isinstance(container, dict):
            raise KeyError("%s is not a dictionary: cannot take key %s" % (type(container).__name__, self))
        if self.wildcard:
            return list(container)
        return [self.value] if self.value in container else []

    def get_elements(self, container):
        return [container[k] for k in self._keys(container)]

    def resolve_wild_cards(self, container):
        return [InDict(_escape(str(k))) for k in self._keys(container)]


class InDict(WildInDict, DictPath):
    """A key of a dictionary (no wildcard)."""

    def __init__(self, key):
        super().__init__(key)
        if self.wildcard:
            raise ValueError("The Wildcard ('*') can not be used in DictPath's")

    def get_element(self, container, construct=False):
        if not isinstance(container, dict):
            raise KeyError("%s is not a dictionary: cannot take key %s" % (type(container).__name__, self))
        if self.value not in container:
            if not construct:
                raise KeyError("Key %s not found in %s" % (self.value, container))
            container[self.value] = {}
        return container[self.value]

    def set_element(self, container, value, construct=True):
        if not isinstance(container, dict):
            raise KeyError("%s is not a dictionary: cannot set key %s" % (type(container).__name__, self))
        container[self.value] = value

    def remove(self, container):
        if isinstance(container, dict):
            container.pop(self.value, None)


def _matches(item, filters):
    if not isinstance(item, dict):
        return False
    for key, value in filters:
        if key == WILDCARD:
            if value is None or value == WILDCARD:
                continue
            if not any(str(v) == value for v in item.values()):
                return False
            continue
        if value is None:
            if item.get(key) is not None:
                return False
        elif value == WILDCARD:
            if key not in item:
                return False
        elif key not in item or str(item[key]) != value:
            return False
    return True


class WildKeyedList(WildDictPath):
    """A key whose value is a list, and filters that pick its dictionaries."""

    def __init__(self, key, filters):
        self.key_element = WildInDict(key)
        self.key = self.key_element.value
        if not filters:
            raise InvalidPathException("A keyed list needs at least one key-value pair: %s" % key)
        # Each filter as (key, value): unescaped; `None` for the null value.
        self.filters = [
            (_unescape(k) if k != WILDCARD else WILDCARD, None if v == NULL_VALUE else (WILDCARD if v == WILDCARD else _unescape(v)))
            for k, v in filters
        ]

    @property
    def key_value_pairs(self):
        return list(self.filters)

    def to_str(self):
        def part(text):
            if text is None:
                return NULL_VALUE
            return WILDCARD if text == WILDCARD else _escape(text)

        return self.key_element.to_str() + "".join("[%s=%s]" % (part(k), part(v)) for k, v in self.filters)

    def _lists(self, container):
        return [(k, container[k]) for k in self.key_element._keys(container)]

    def get_elements(self, container):
        return [item for _, items in self._lists(container) if isinstance(items, list) for item in items if _matches(item, self.filters)]

    def resolve_wild_cards(self, container):
        paths = []
        for key, items in self._lists(container):
            if not isinstance(items, list):
                continue
            for item in items:
                if not _matches(item, self.filters):
                    continue
                concrete = [(k, v) for k, v in self.filters if k != WILDCARD and v != WILDCARD]
                # A wildcard filter is made concrete by the keys the item holds.
                for k, v in self.filters:
                    if v == WILDCARD and k != WILDCARD:
                        concrete.append((k, str(item[k])))
                if not concrete:
                    concrete = [(k, str(v)) for k, v in item.items() if not isinstance(v, (dict, list))][:1]
                paths.append(
                    KeyedList(
                        _escape(str(key)),
                        [(_escape(k), NULL_VALUE if v is None else _escape(v)) for k, v in concrete],
                    )
                )
        return paths


class KeyedList(WildKeyedList, DictPath):
    """`key[name=value]...`: the one dictionary of list `key` that has those values."""

    def __init__(self, key, filters):
        super().__init__(key, filters)
        if self.key_element.wildcard or any(k == WILDCARD or v == WILDCARD for k, v in self.filters):
            raise ValueError("The Wildcard ('*') can not be used in DictPath's")

    def _list(self, container, construct):
        if not isinstance(container, dict):
            raise KeyError("%s is not a dictionary: cannot take key %s" % (type(container).__name__, self.key))
        if self.key not in container:
            if not construct:
                raise KeyError("Key %s not found in %s" % (self.key, container))
            container[self.key] = []
        items = container[self.key]
        if not isinstance(items, list):
            raise KeyError("%s is not a list (in %s)" % (self.key, self))
        return items

    def _matching(self, items):
        found = [i for i, item in enumerate(items) if _matches(item, self.filters)]
        if len(found) > 1:
            raise KeyError("Found multiple elements matching %s in %s" % (self, items))
        return found[0] if found else None

    def get_element(self, container, construct=False):
        items = self._list(container, construct)
        index = self._matching(items)
        if index is None:
            if not construct:
                raise KeyError("No element matching %s in %s" % (self, items))
            items.append({k: v for k, v in self.filters})
            index = len(items) - 1
        return items[index]

    def set_element(self, container, value, construct=True):
        items = self._list(container, construct)
        if not _matches(value, self.filters):
            raise ValueError("The value %s does not match the keys of %s" % (value, self))
        index = self._matching(items)
        if index is None:
            items.append(value)
        else:
            items[index] = value

    def remove(self, container):
        if not isinstance(container, dict) or not isinstance(container.get(self.key), list):
            return
        items = container[self.key]
        index = self._matching(items)
        if index is not None:
            del items[index]


class WildNullPath(WildDictPath):
    """`.`: the container itself."""

    def to_str(self):
        return "."

    def get_elements(self, container):
        return [container]

    def resolve_wild_cards(self, container):
        return [NullPath()]


class NullPath(WildNullPath, DictPath):
    def get_element(self, container, construct=False):
        return container

    def set_element(self, container, value, construct=True):
        raise InvalidPathException("The whole container cannot be replaced through a path")

    def remove(self, container):
        raise InvalidPathException("The whole container cannot be removed through a path")


class WildComposedPath(WildDictPath):
    """Elements one after the other."""

    def __init__(self, path_str=None, path=None):
        if path is not None:
            self.expanded_path = list(path)
        else:
            self.expanded_path = [_element(part, wild=True) for part in _split(path_str, ".")]

    def to_str(self):
        return ".".join(element.to_str() for element in self.expanded_path)

    def get_elements(self, container):
        current = [container]
        for element in self.expanded_path:
            current = [found for c in current for found in element.get_elements(c)]
        return current

    def resolve_wild_cards(self, container):
        resolved = [([], container)]
        for element in self.expanded_path:
            step = []
            for prefix, current in resolved:
                for concrete in element.resolve_wild_cards(current):
                    step.append((prefix + [concrete], concrete.get_element(current)))
            resolved = step
        return [ComposedPath(path=prefix) for prefix, _ in resolved]


class ComposedPath(WildComposedPath, DictPath):
    def __init__(self, path_str=None, path=None):
        if path is not None:
            self.expanded_path = list(path)
        else:
            self.expanded_path = [_element(part, wild=False) for part in _split(path_str, ".")]

    def get_element(self, container, construct=False):
        for element in self.expanded_path:
            container = element.get_element(container, construct)
        return container

    def set_element(self, container, value, construct=True):
        for element in self.expanded_path[:-1]:
            container = element.get_element(container, construct)
        self.expanded_path[-1].set_element(container, value, construct)

    def remove(self, container):
        try:
            for element in self.expanded_path[:-1]:
                container = element.get_element(container, False)
        except KeyError:
            return
        self.expanded_path[-1].remove(container)


_KEYED = re.compile(r"^((?:[^\[\]\\]|\\.)*)((?:\[(?:[^\[\]\\]|\\.)*\])+)$")
_FILTER = re.compile(r"\[((?:[^\[\]\\]|\\.)*)\]")


def _element(text, wild):
    if text == "":
        raise InvalidPathException("A path cannot have an empty element")
    keyed = _KEYED.match(text)
    if keyed:
        filters = []
        for written in _FILTER.findall(keyed.group(2)):
            pair = _split(written, "=")
            if len(pair) != 2:
                raise InvalidPathException("Invalid key-value pair %r in %s" % (written, text))
            filters.append((pair[0], pair[1]))
        return WildKeyedList(keyed.group(1), filters) if wild else KeyedList(keyed.group(1), filters)
    if ("[" in text or "]" in text) and not re.search(r"\\[\[\]]", text):
        raise InvalidPathException("Invalid path element %s" % text)
    return WildInDict(text) if wild else InDict(text)


def to_path(path):
    """The path written `path` (no wildcards)."""
    if path == ".":
        return NullPath()
    parts = _split(path, ".")
    if len(parts) == 1:
        return _element(parts[0], wild=False)
    return ComposedPath(path_str=path)


def to_wild_path(path):
    """The path written `path`, wildcards allowed."""
    if path == ".":
        return WildNullPath()
    parts = _split(path, ".")
    if len(parts) == 1:
        return _element(parts[0], wild=True)
    return WildComposedPath(path_str=path)
