"""modelc's handler host: deploys resources with the handlers modules register (`@provider`),
one at a time, for a deploy run of modelc (which started this interpreter, `host.py`, and sends
one JSON message per line).

modelc sends `load` (import modules' packages), `deploy` (one resource: its handler's `deploy`,
or `execute` in a dry run, then `do_reload` when a refresh is due), `end_run` (what `@cache`
kept for the run is dropped) and `fork` (another host, with the modules imported already: see
`_fork`). While a handler runs, the host asks modelc back: `io` for an
operation on the resource's target (modelc does it on this machine, or through the SSH helper on
another), `content` for a file's content by hash.
"""
import binascii
import importlib
import logging
import os
import sys
import traceback

from inmanta import const, resources
from inmanta.agent import handler


class ModelcError(Exception):
    """modelc could not answer a question."""


class Channel:
    def __init__(self, send, receive):
        self._send = send
        self._receive = receive

    def ask(self, question):
        self._send({"ask": question})
        answer = self._receive()
        if "error" in answer:
            errno = answer.get("errno")
            if errno is not None:
                raise OSError(errno, answer["error"])
            timed_out = answer.get("timed_out")
            if timed_out is not None:
                import subprocess  # only here: the host starts faster without it

                raise subprocess.TimeoutExpired(timed_out["command"], timed_out["seconds"])
            raise ModelcError(answer["error"])
        return answer


_channel = None
# Whether the resource being deployed is in a dry run: no operation that writes is done then.
_dry_run = False

# The operations that change the target: refused in a dry run.
WRITES = frozenset(["put", "chmod", "chown", "mkdir", "rmtree", "remove", "symlink"])


def refuse_in_dry_run(op):
    if _dry_run and op in WRITES:
        raise ModelcError("a dry run changes nothing: the handler asked to `%s`" % op)
_cache = handler.AgentCache()


def _data(answer):
    data = answer.get("data")
    return None if data is None else binascii.a2b_base64(data)


class IO:
    """Operations on the machine a context names (`None`: this one), done by modelc: the
    handler's `self._io`, and what the mitogen module's `Proxy` calls."""

    def __init__(self, context=None):
        self.context = context

    def _call(self, op, *args, data=None):
        refuse_in_dry_run(op)
        question = {"io": op, "context": self.context, "args": list(args)}
        if data is not None:
            question["data"] = binascii.b2a_base64(data, newline=False).decode("ascii")
        return _channel.ask(question)

    def _value(self, op, *args, data=None):
        return self._call(op, *args, data=data).get("value")

    def file_exists(self, path):
        return self._value("lexists", path)

    def file_stat(self, path):
        return self._value("file_stat", path)

    def symlink_stat(self, path):
        return self._value("symlink_stat", path)

    def hash_file(self, path):
        return self._value("hash_file", path)

    def is_symlink(self, path):
        return self._value("islink", path)

    def readlink(self, path):
        return self._value("readlink", path)

    def symlink(self, source, target):
        self._value("symlink", source, target)

    def read(self, path):
        return _data(self._call("read_binary", path)).decode("utf-8")

    def read_binary(self, path):
        return _data(self._call("read_binary", path))

    def put(self, path, content):
        if isinstance(content, str):
            content = content.encode("utf-8")
        self._value("put", path, data=bytes(content))

    def chmod(self, path, permissions):
        # A mode as text (`"750"`), or as `os.chmod` takes it (`0o750`).
        mode = permissions if isinstance(permissions, str) else format(permissions, "o")
        self._value("chmod", path, mode)

    def chown(self, path, user=None, group=None):
        self._value("chown", path, user, group)

    def mkdir(self, path):
        self._value("mkdir", path)

    def rmdir(self, path):
        self._value("rmtree", path)

    def remove(self, path):
        self._value("remove", path)

    def run(self, command, arguments=None, env=None, cwd=None, timeout=None):
        stdout, stderr, code = self._value("run", command, list(arguments or []), env, cwd, timeout)
        return stdout, stderr, code

    def close(self):
        pass


class _Agent:
    """The agent a handler is given: its name, the run's cache, its io, file contents."""

    def __init__(self, name):
        self.name = name
        self.environment = None
        self.cache = _cache
        self.io = IO()

    def get_file(self, hash_id):
        return _data(_channel.ask({"content": hash_id}))


def _load(modules):
    """Imports each module's package and every file of it, so that all its `@provider`s register;
    a module that fails is reported with its traceback."""
    failed = {}
    for module in modules:
        try:
            for name in ["inmanta_plugins." + module["module"]] + [
                "inmanta_plugins." + s for s in module["submodules"]
            ]:
                importlib.import_module(name)
        except BaseException:
            failed[module["module"]] = traceback.format_exc()
    return {"providers": handler.provider.types(), "failed": failed}


def _error_of(ctx):
    """What a failed handler said: its last error, with the traceback it logged."""
    for line in reversed(ctx.logs):
        if line["level"] in ("ERROR", "CRITICAL"):
            trace = line["kwargs"].get("traceback")
            return line["message"] + ("\n" + trace.rstrip() if trace else "")
    return "the handler reported the resource as failed"


def _deploy(message):
    global _dry_run
    _dry_run = message["dry_run"]
    handler.HandlerContext.level = logging.DEBUG if message.get("debug") else logging.INFO
    attributes = message["resource"]
    obj_map = dict(attributes["attributes"])
    obj_map["id"] = attributes["id"]
    obj_map["requires"] = attributes.get("requires", [])
    resource = resources.Resource.deserialize(obj_map)
    handler_class = handler.provider.get(resource.id.entity_type)
    if handler_class is None:
        raise handler.HandlerNotAvailableException(
            "no handler is registered for %s" % resource.id.entity_type
        )
    instance = handler_class(_Agent(resource.id.agent_name), None)
    instance.set_cache(_cache)
    ctx = handler.HandlerContext(resource, dry_run=message["dry_run"])
    reloaded = False
    try:
        if message["dry_run"]:
            instance.execute(ctx, resource, dry_run=True)
        else:
            instance.deploy(ctx, resource, {})
            if message.get("refresh") and ctx.status == const.ResourceState.deployed and instance.can_reload():
                try:
                    instance.do_reload(ctx, resource)
                    reloaded = True
                except Exception as error:
                    handler._failed(ctx, resource, error)
            if ctx.status == const.ResourceState.deployed and _tells_facts(instance):
                _learn_facts(instance, ctx, resource)
    finally:
        instance.close()
    status = ctx.status.value if ctx.status is not None else "failed"
    answer = {
        "status": status,
        "changes": _jsonable(ctx.changes),
        "change": ctx.change.value,
        # Their values were made JSON's as they were logged.
        "logs": ctx.logs,
        # The last value given for each name wins.
        "facts": {fact["name"]: fact["value"] for fact in ctx.facts},
        "reloaded": reloaded,
    }
    if status == "failed":
        answer["error"] = _error_of(ctx) if ctx.status is not None else "the handler set no status"
    elif status == "skipped":
        answer["error"] = _error_of_skip(ctx)
    return answer


def _tells_facts(instance):
    """The handler's class gives facts of its own (`facts`): the base class gives none."""
    return type(instance).facts is not handler.HandlerAPI.facts


def _learn_facts(instance, ctx, resource):
    """The facts the handler tells about a resource it just deployed, kept as if it had set
    them: a failure to tell them is logged and fails nothing (the deploy happened)."""
    try:
        facts = instance.check_facts(ctx, resource)
    except Exception:
        ctx.warning("could not get the facts of %(resource)s", resource=str(resource.id), traceback=traceback.format_exc())
        return
    for name, value in (facts or {}).items():
        ctx.set_fact(name, value)


def _error_of_skip(ctx):
    for line in reversed(ctx.logs):
        if line["level"] == "WARNING":
            return line["message"]
    return "the handler skipped the resource"


def _jsonable(value):
    """Values as modelc reads them: sets and tuples as lists, anything else JSON lacks as text."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


# Hosts forked from this one (pid → the directory their ending is written to), until reaped.
_forked = {}


def _fork(message, rebind):
    """Another host like this one, its modules imported already (starting one costs far more):
    a child in a process group of its own (stopping it stops only what it started) that talks to
    modelc through the Unix socket `message["socket"]`. Here, the child's pid; in the child, 0.
    When it ends, its wait status is written to `message["endings"]/<pid>` (see `_reap`)."""
    import signal
    import socket

    signal.signal(signal.SIGCHLD, _reap)
    pid = os.fork()
    if pid:
        _forked[pid] = message["endings"]
        _reap(None, None)  # it may have ended already
        return pid
    try:
        os.setpgid(0, 0)
        _forked.clear()
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        connection.connect(message["socket"])
        rebind(connection.detach())
    except BaseException:
        os._exit(70)
    return 0


def _reap(signum, frame):
    """Each forked host that ended: its wait status, written where modelc looks, which tells it
    as it tells a started host's (only those pids are waited for: what handlers run here is
    theirs to wait for)."""
    for pid, endings in list(_forked.items()):
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            del _forked[pid]
            continue
        if not done:
            continue
        del _forked[pid]
        path = os.path.join(endings, str(pid))
        try:
            with open(path + ".tmp", "w") as out:
                out.write(str(status))  # the wait status, as modelc's own wait gets it
            os.rename(path + ".tmp", path)
        except OSError:
            pass


def serve(send, receive, init, rebind=None, keep_code=None):
    """Answers modelc's messages until it closes the pipe. `keep_code` writes the compiled API
    where the next host reads it (after the modules are loaded: by then it is all compiled)."""
    global _channel
    _channel = Channel(send, receive)
    send({"ready": True, "version": sys.version.split()[0], "executable": sys.executable})
    while True:
        message = receive()
        op = message.get("op")
        try:
            if op == "load":
                send(_load(message["modules"]))
                if keep_code is not None:
                    keep_code()
            elif op == "deploy":
                try:
                    answer = _deploy(message)
                except BaseException:
                    answer = {"status": "failed", "error": traceback.format_exc().rstrip(), "changes": {}, "logs": []}
                send({"done": answer})
            elif op == "fork":
                pid = _fork(message, rebind)
                if pid:
                    send({"forked": pid})
                else:
                    send({"ready": True, "pid": os.getpid()})
            elif op == "end_run":
                _cache.close_run()
                send({"ended": True})
            else:
                send({"failed": "unknown message %s" % op})
        except Exception as error:
            send({"failed": "the handler host could not answer: %s: %s" % (type(error).__name__, error)})
