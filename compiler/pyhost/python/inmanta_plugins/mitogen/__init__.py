"""inmanta_plugins.mitogen as modules' handlers see it inside modelc's handler host: the same
names as the public mitogen module, with the `Proxy` doing its operations through modelc, on
this machine or on the host the context names (over modelc's SSH helper: nothing but modelc
itself runs there). Only deploys load this; a compile uses the module's own package.

`remote_call` runs a function of the module's own Python here for a local context (as mitogen
would, in a child of this machine); on another host only the operations the SSH helper serves
can run (the functions of `inmanta_mitogen` and `inmanta_files.symlink_stat`).
"""
import errno
import hashlib
import json
import logging
import os
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


def truncate_logged_value(raw_value):
    """A value as a log keeps it: JSON, cut to INMANTA_MITOGEN_LOGGED_VALUE_MAX_LEN characters."""
    text = json.dumps(raw_value, default=repr)
    value = json.loads(text)
    limit = int(os.getenv(LOGGED_VALUE_MAX_LEN_ENV_VAR, "50"))
    marker = os.getenv(LOGGED_TRUNCATED_VALUE_ENV_VAR, "<...>")
    if len(text) > limit:
        return text[: limit - len(marker)] + marker
    return value


def context_hash(serialized_context):
    return hashlib.md5(json.dumps(serialized_context, sort_keys=True).encode("utf-8")).hexdigest()


def serialize_context(*args, **kwargs):
    raise inmanta.agent.handler.InvalidOperation("contexts are serialized at export, not in a handler")


def get_resource_context(*args, **kwargs):
    raise inmanta.agent.handler.InvalidOperation("contexts are read at export, not in a handler")


# The functions mitogen would ship to the target, by name, and the operation modelc does for
# each (the names are what the module's own log lines call them).
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
_NAMES = {op: name for name, op in _OPERATIONS.items()}


class _Context:
    def __init__(self, serialized):
        self.serialized = serialized
        method = serialized.get("method_name", "local") if isinstance(serialized, dict) else "local"
        name = serialized.get("hostname") or serialized.get("username") or "" if isinstance(serialized, dict) else ""
        self.name = "%s.%s" % (method, name) if name else method


def _is_local(serialized):
    return not isinstance(serialized, dict) or (serialized.get("method_name") == "local" and not serialized.get("via"))


class Proxy:
    """Operations on the host a serialized context names, each logged to the handler's context."""

    def __init__(self, serialized_context, *, logger=None):
        self.serialized_context = serialized_context
        self.logger = logger or inmanta.agent.handler.PythonLogger(LOGGER)
        self._context = None
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

    def _logged(self, function_name, args, kwargs, call):
        logged = dict(
            function=function_name,
            context_name=self.context.name,
            args=[truncate_logged_value(a) for a in args],
            kwargs={k: truncate_logged_value(v) for k, v in kwargs.items()},
        )
        try:
            result = call()
        except Exception as error:
            logged["exception"] = truncate_logged_value(str(error))
            self.logger.debug("Calling function %(function)s in context %(context_name)s: %(exception)s", **logged)
            raise RemoteException(error)
        logged["result"] = truncate_logged_value(result if not isinstance(result, bytes) else repr(result))
        self.logger.debug("Calling function %(function)s in context %(context_name)s: %(result)s", **logged)
        return result

    def _op(self, op, *args):
        method = {
            "lexists": self._io.file_exists,
            "file_stat": self._io.file_stat,
            "hash_file": self._io.hash_file,
            "islink": self._io.is_symlink,
            "read_binary": self._io.read_binary,
            "read": self._io.read,
            "put": self._io.put,
            "run": self._io.run,
            "symlink_stat": self._io.symlink_stat,
            "chmod": self._io.chmod,
            "mkdir": self._io.mkdir,
            "remove": self._io.remove,
            "readlink": self._io.readlink,
            "symlink": self._io.symlink,
            "chown": self._io.chown,
            "rmtree": self._io.rmdir,
        }[op]
        return self._logged(_NAMES[op], args, {}, lambda: method(*args))

    def remote_call(self, function, *args, **kwargs):
        name = function.__module__ + "." + function.__qualname__
        op = _OPERATIONS.get(name)
        if op is not None and not kwargs:
            return self._op(op, *args)
        if _is_local(self.serialized_context):
            return self._logged(name, args, kwargs, lambda: function(*args, **kwargs))
        raise RemoteException(
            NotImplementedError(
                "modelc cannot run %s on another host: its SSH helper runs only the operations of "
                "inmanta_mitogen (and inmanta_files.symlink_stat), and no Python" % name
            )
        )

    def chmod(self, path, permissions):
        return self._op("chmod", path, permissions)

    def chown(self, path, user=None, group=None):
        return self._op("chown", path, user, group)

    def file_exists(self, path):
        return self._op("lexists", path)

    def file_stat(self, path):
        result = self._op("file_stat", path)
        if not isinstance(result, dict) or set(result) != {"owner", "group", "permissions"}:
            raise RemoteException(ValueError("Unexpected file_stat result: %r" % (result,)))
        return result

    def hash_file(self, path):
        return self._op("hash_file", path)

    def is_symlink(self, path):
        return self._op("islink", path)

    def mkdir(self, path):
        return self._op("mkdir", path)

    def put(self, path, content):
        return self._op("put", path, content)

    def read(self, path):
        return self._op("read", path)

    def read_binary(self, path):
        return self._op("read_binary", path)

    def readlink(self, path):
        return self._op("readlink", path)

    def remove(self, path):
        return self._op("remove", path)

    def rmdir(self, path):
        return self._op("rmtree", path)

    def run(self, command, arguments=[], env=None, cwd=None, timeout=None):  # noqa: B006 (the module's signature)
        return self._op("run", command, list(arguments), env, cwd, timeout)

    def symlink(self, source, target):
        return self._op("symlink", source, target)
