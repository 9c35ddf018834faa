"""inmanta_plugins.std as modules' Python sees it inside modelc: std's plugins, run by modelc's
own std (it always wins over an installed inmanta-module-std), and the helper modules import
from it (`get_file_content`). Other names of the reference's std package are not provided."""

from inmanta.plugins import _runtime
from inmanta.execute.util import Unknown

_PLUGINS = frozenset(__PLUGIN_NAMES__)


def is_unknown(value):
    return isinstance(value, Unknown)


def get_file_content(ctx, module_dir, path):
    """The text of file `path` ("module/rel/path") of a module's `module_dir`, as std's helper
    reads it (the yaml module loads its files so). modelc reads a module's `files/` through
    std::source, with its confinement; other directories are not read this way."""
    if module_dir != "files":
        raise Exception(
            "modelc's get_file_content reads a module's files/ directory only, not %r" % module_dir
        )
    return _runtime.std("source", [path], {})


def __getattr__(name):
    if name in _PLUGINS:
        return lambda *args, **kwargs: _runtime.std(name, args, kwargs)
    raise AttributeError(
        "modelc's inmanta_plugins.std provides std's plugins only; it has no %r" % name
    )
