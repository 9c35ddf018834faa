"""inmanta_plugins.std as modules' Python sees it inside modelc: std's plugins, run by modelc's
own std (it always wins over an installed inmanta-module-std). Other names of the reference's
std package are not provided."""

from inmanta.plugins import _runtime
from inmanta.execute.util import Unknown

_PLUGINS = frozenset(__PLUGIN_NAMES__)


def is_unknown(value):
    return isinstance(value, Unknown)


def __getattr__(name):
    if name in _PLUGINS:
        return lambda *args, **kwargs: _runtime.std(name, args, kwargs)
    raise AttributeError(
        "modelc's inmanta_plugins.std provides std's plugins only; it has no %r" % name
    )
