"""inmanta_plugins.mitogen as modules' handlers see it inside modelc's handler host: the same
names as the public mitogen module, with a `Proxy` that needs no mitogen: on another host its
operations are done by modelc's SSH helper (nothing but modelc itself runs there). Only deploys
load this; a compile uses the module's own package.

For a local context the proxy runs each function here, in-process (mitogen would run it in a
child of this machine): the module's own `inmanta_mitogen` functions, `os` and `shutil`, and any
function given to `remote_call`. On another host, modelc's helper does the operation of that
name; only those can run there (the functions of `inmanta_mitogen` and
`inmanta_files.symlink_stat`), as no Python is needed there.
"""
import errno
import json
import logging
import os
import shutil
import typing

import inmanta.agent.handler
from inmanta.agent import _host

LOGGER = logging.getLogger(__name__)
LOGGED_VALUE_MAX_LEN_ENV_VAR = "INMANTA_MITOGEN_LOGGED_VALUE_MAX_LEN"
LOGGED_TRUNCATED_VALUE_ENV_VAR = "INMANTA_MITOGEN_LOGGED_TRUNCATED_VALUE_SUFFIX"


class PythonNotFoundError(FileNotFoundError):
    """No Python on the host a context names (modelc needs none: kept for modules that catch it)."""

    def __init__(self, serialized_context):
        python_path = serialized_context.get("python_path") or ["python"]
        super().__init__(errno.ENOENT, "No such python interpreter on host %s" % serialized_context.get("method_name"), python_path[0])


class FileStat(typing.TypedDict):
    owner: str
    group: str
    permissions: int


class RemoteException(Exception):
    """An operation failed on the target; the error it raised is `remote_exception`."""

    def __init__(self, remote_exception, *args):
        super().__init__(*(args or [str(remote_exception)]))
        self.remote_exception = remote_exception


# Read once: a log line is written for every operation.
_MAX_LEN = int(os.getenv(LOGGED_VALUE_MAX_LEN_ENV_VAR, "50"))
_MARKER = os.getenv(LOGGED_TRUNCATED_VALUE_ENV_VAR, "<...>")
_ENCODER = json.JSONEncoder(default=repr)
_SCALARS = (str, int, float, bool, type(None))


def truncate_logged_value(raw_value):
    """A value as a log keeps it: JSON, cut to INMANTA_MITOGEN_LOGGED_VALUE_MAX_LEN characters."""
    text = _ENCODER.encode(raw_value)
    if len(text) > _MAX_LEN:
        return text[: _MAX_LEN - len(_MARKER)] + _MARKER
    # A scalar reads back as itself; a container as JSON has it (tuples become lists).
    return raw_value if type(raw_value) in _SCALARS else json.loads(text)


def context_hash(serialized_context):
    # Asked before every operation of a mitogen handler, nearly always for the context asked
    # last: its hash is kept, by its `repr` (which tells 1, 1.0 and True apart, as JSON does).
    key = repr(serialized_context)
    if _last_hash and _last_hash[0] == key:
        return _last_hash[1]
    import hashlib  # only here: most handlers never hash a context

    digest = hashlib.md5(json.dumps(serialized_context, sort_keys=True).encode("utf-8")).hexdigest()
    _last_hash[:] = [key, digest]
    return digest


# The `repr` of the context hashed last, and its hash.
_last_hash = []


def serialize_context(*args, **kwargs):
    raise inmanta.agent.handler.InvalidOperation("contexts are serialized at export, not in a handler")


def get_resource_context(*args, **kwargs):
    raise inmanta.agent.handler.InvalidOperation("contexts are read at export, not in a handler")


# The functions mitogen would ship to the target, by name, and the operation modelc does for
# each on another host (the names are what the module's own log lines call them).
_OPERATIONS = {
    "inmanta_mitogen.lexists": "lexists",
    "inmanta_mitogen.file_stat": "file_stat",
    "inmanta_mitogen.hash_file": "hash_file",
    "inmanta_mitogen.islink": "islink",
    "inmanta_mitogen.read_binary": "read_binary",
    "inmanta_mitogen.read": "read",
    "inmanta_mitogen.put": "put",
    "inmanta_mitogen.run": "run",
    "inmanta_files.symlink_stat": "symlink_stat",
    "posix.chmod": "chmod",
    "posix.mkdir": "mkdir",
    "posix.remove": "remove",
    "posix.readlink": "readlink",
    "posix.symlink": "symlink",
    "shutil.chown": "chown",
    "shutil.rmtree": "rmtree",
}

# The method of `_host.IO` that does each operation, where its name is not the operation's.
_IO_METHODS = {"lexists": "file_exists", "islink": "is_symlink", "rmtree": "rmdir"}


def _by_modelc(name):
    """A stand-in for a function of `inmanta_mitogen` when that package is not installed: named as
    the function, and always done by modelc."""

    def stand_in(*args, **kwargs):
        raise RuntimeError("%s is done by modelc, never called" % name)

    stand_in.__module__, stand_in.__qualname__ = name.rsplit(".", 1)
    stand_in._modelc_only = True
    return stand_in


try:
    import inmanta_mitogen as _functions
except ImportError:  # the module's package is not installed: modelc does every operation
    _functions = None


def _function(name):
    if _functions is not None:
        return getattr(_functions, name)
    return _by_modelc("inmanta_mitogen." + name)


class _Context:
    def __init__(self, serialized):
        self.serialized = serialized
        method = serialized.get("method_name", "local") if isinstance(serialized, dict) else "local"
        name = (serialized.get("hostname") or serialized.get("username") or "") if isinstance(serialized, dict) else ""
        self.name = "%s.%s" % (method, name) if name else method


def _is_local(serialized):
    return not isinstance(serialized, dict) or (serialized.get("method_name") == "local" and not serialized.get("via"))


class Proxy:
    """Operations on the host a serialized context names, each logged to the handler's context.

    As with mitogen, each operation is a function run where the context leads: for a local
    context, the function itself, here (the module's own `inmanta_mitogen` functions, `os`,
    `shutil`); for another host, the operation of modelc's SSH helper of that name."""

    def __init__(self, serialized_context, *, logger=None):
        self.serialized_context = serialized_context
        self.logger = logger or inmanta.agent.handler.PythonLogger(LOGGER)
        self._context = None
        self._local = _is_local(serialized_context)
        self._io = _host.IO(serialized_context)

    @property
    def context(self):
        if self._context is None:
            raise RuntimeError("Cannot access the context because it has not been created.  Did you call self.connect already?")
        return self._context

    def connect(self, *, exists_ok=False):
        if self._context is not None and not exists_ok:
            raise RuntimeError("The connection is already open")
        if self._context is None:
            # modelc opens the connection when the first operation needs it.
            self._context = _Context(self.serialized_context)
        return self._context

    def disconnect(self, *, timeout=10.0, best_effort=False):
        self._context = None

    def __enter__(self):
        self.connect(exists_ok=False)
        return self

    def __exit__(self, exc_type, exc_value, tb):
        self.disconnect()

    def remote_call(self, function, *args, **kwargs):
        name = function.__module__ + "." + function.__qualname__
        op = _OPERATIONS.get(name)
        try:
            if op is not None:
                _host.refuse_in_dry_run(op)
            if self._local and not getattr(function, "_modelc_only", False):
                result = function(*args, **kwargs)
            elif op is not None and not kwargs:
                result = self._remote(op, args)
            else:
                raise NotImplementedError(
                    "modelc cannot run %s on another host: its SSH helper runs only the operations of "
                    "inmanta_mitogen (and inmanta_files.symlink_stat), and no Python" % name
                )
        except Exception as error:
            self._log(name, args, kwargs, "exception", str(error))
            raise RemoteException(error)
        self._log(name, args, kwargs, "result", result if not isinstance(result, bytes) else repr(result))
        return result

    def _log(self, name, args, kwargs, outcome, value):
        """Each call, as a debug line of the handler's context (when its debug lines are kept:
        the values are not even made loggable otherwise)."""
        if getattr(self.logger, "level", logging.DEBUG) > logging.DEBUG:
            return
        logged = dict(
            function=name,
            context_name=self.context.name,
            args=[truncate_logged_value(a) for a in args],
            kwargs={k: truncate_logged_value(v) for k, v in kwargs.items()},
        )
        logged[outcome] = truncate_logged_value(value)
        self.logger.debug("Calling function %(function)s in context %(context_name)s: %(" + outcome + ")s", **logged)

    def _remote(self, op, args):
        """The operation done by modelc where the context leads: the same `IO` as `self._io`."""
        return getattr(self._io, _IO_METHODS.get(op, op))(*args)

    def chmod(self, path, permissions):
        self.remote_call(os.chmod, path, int(permissions, 8))

    def chown(self, path, user=None, group=None):
        self.remote_call(shutil.chown, path, user, group)

    def file_exists(self, path):
        return bool(self.remote_call(_function("lexists"), path))

    def file_stat(self, path):
        result = self.remote_call(_function("file_stat"), path)
        if not isinstance(result, dict) or set(result) != {"owner", "group", "permissions"}:
            raise RemoteException(ValueError("Unexpected file_stat result: %r" % (result,)))
        return result

    def hash_file(self, path):
        return str(self.remote_call(_function("hash_file"), path))

    def is_symlink(self, path):
        return bool(self.remote_call(_function("islink"), path))

    def mkdir(self, path):
        self.remote_call(os.mkdir, path)

    def put(self, path, content):
        self.remote_call(_function("put"), path, content)

    def read(self, path):
        return str(self.remote_call(_function("read"), path))

    def read_binary(self, path):
        return self.remote_call(_function("read_binary"), path)

    def readlink(self, path):
        return str(self.remote_call(os.readlink, path))

    def remove(self, path):
        self.remote_call(os.remove, path)

    def rmdir(self, path):
        self.remote_call(shutil.rmtree, path)

    def run(self, command, arguments=[], env=None, cwd=None, timeout=None):  # noqa: B006 (the module's signature)
        return self.remote_call(_function("run"), command, list(arguments), env, cwd, timeout)

    def symlink(self, source, target):
        self.remote_call(os.symlink, source, target)
