# modelc's Python host: runs the plugins modules write in Python for one compile, or (with the
# role "handlers") their handlers for one deploy run. modelc starts
# it with the Python environment the user chose and talks to it over stdin/stdout, one JSON
# message per line. modelc's own `inmanta` API (sent in the first message) is installed ahead of
# anything the environment has, so an installed inmanta-core is never imported.
# Only what starting needs is imported here: `importlib.abc` alone would import
# `importlib.resources` and `pathlib`, and double the interpreter's start; specs are made with
# `importlib.machinery` alone (`importlib.util` costs a few milliseconds more).
import importlib.machinery
import json
import marshal
import os
import re
import select
import sys
import time

# The protocol has the pipes to itself, on private descriptors: what plugins print goes to
# stderr, and what they start reads /dev/null.
_out = os.dup(1)
_in = os.dup(0)
os.dup2(2, 1)
_null = os.open(os.devnull, os.O_RDONLY)
os.dup2(_null, 0)
sys.stdout = sys.stderr
sys.stdin = open(os.devnull)
# Spun on briefly before sleeping in select: a call's round trip takes microseconds, being
# woken from sleep far longer.
os.set_blocking(_in, False)
_buffer = bytearray()
_SPIN = 0.0002


# A surrogate's escape (`\ud800` to `\udfff`) in an ASCII message: maybe a lone surrogate,
# which is not text, and which modelc would not read.
_SURROGATE = re.compile(r"\\ud[89a-f]", re.IGNORECASE)


# Made once: `json.dumps` with options other than its defaults makes an encoder every call.
_ENCODER = json.JSONEncoder(separators=(",", ":"), allow_nan=False)


def send(message):
    # No NaN or Infinity: they are not JSON, and modelc would not read the line. The message is
    # written in ASCII, which CPython's encoder writes several times faster (a batch's answer is
    # a megabyte); one with a surrogate escape is written again as UTF-8, a lone surrogate
    # being replaced rather than sent.
    text = _ENCODER.encode(message)
    if _SURROGATE.search(text):
        text = json.dumps(message, separators=(",", ":"), allow_nan=False, ensure_ascii=False)
    data = memoryview((text + "\n").encode("utf-8", "replace"))
    while data:
        try:
            data = data[os.write(_out, data):]
        except BlockingIOError:
            # A forked host's socket is non-blocking both ways (see `rebind`).
            select.select([], [_out], [])


def receive():
    scanned = 0
    while True:
        end = _buffer.find(b"\n", scanned)
        if end >= 0:
            line = bytes(_buffer[:end])
            del _buffer[: end + 1]
            return json.loads(line)
        scanned = len(_buffer)
        spin_until = time.perf_counter() + _SPIN
        while True:
            try:
                chunk = os.read(_in, 65536)
            except BlockingIOError:
                if time.perf_counter() < spin_until:
                    continue
                select.select([_in], [], [])
                continue
            if not chunk:
                # modelc is done: what plugins printed is flushed, and the host ends.
                sys.stderr.flush()
                os._exit(0)
            _buffer.extend(chunk)
            break


def rebind(fd):
    """Talks to modelc through `fd` from now on (a forked handler host's socket, both ways),
    closing the pipes of the host it was forked from."""
    global _in, _out
    old = {_in, _out}
    _in = _out = fd
    _buffer.clear()
    os.set_blocking(fd, False)
    for descriptor in old:
        os.close(descriptor)


class CodeCache:
    """modelc's API compiled, kept between runs where the environment keeps bytecode: a virtual
    environment's prefix (`__pycache__` there), or PYTHONPYCACHEPREFIX; none for an interpreter
    of the system. Compiling the API took about 20 ms of a handler host's 100 ms start. The
    file is named by the Python version and modelc's digest of the sources (`digest`), so
    another version of either never reads it; one that cannot be read is compiled again, as Python treats a bad
    `.pyc`, and it is trusted as the environment's own bytecode is. It is read always, written
    only when `write` (modelc says no when the user set PYTHONDONTWRITEBYTECODE: the host's own
    setting is modelc's, keeping modules' directories free of `__pycache__`)."""

    def __init__(self, digest, write):
        self.path = _code_cache_path(digest)
        self.write = write
        self.codes = {}
        self.added = False
        if self.path is None:
            return
        try:
            with open(self.path, "rb") as cached:
                codes = marshal.load(cached)
        except Exception:  # none yet, unreadable, or not what `keep` wrote
            return
        if isinstance(codes, dict):
            self.codes = {name: code for name, code in codes.items() if type(code) is _CODE}

    def code(self, name, source):
        code = self.codes.get(name)
        if code is None:
            code = compile(source, "<modelc>/" + name.replace(".", "/") + ".py", "exec")
            self.codes[name] = code
            self.added = True
        return code

    def keep(self):
        """Writes what was compiled since the cache was read (all at once: another process
        reads the old file or the new one), and removes the files of other versions of modelc."""
        if not self.added or self.path is None or not self.write:
            return
        self.added = False
        directory, name = os.path.split(self.path)
        temporary = "%s.%d.tmp" % (self.path, os.getpid())
        try:
            os.makedirs(directory, exist_ok=True)
            with open(temporary, "wb") as out:
                marshal.dump(self.codes, out)
            os.replace(temporary, self.path)
            prefix = name[: name.rindex("-") + 1]
            for entry in os.listdir(directory):
                if entry.startswith(prefix) and entry.endswith(".marshal") and entry != name:
                    os.unlink(os.path.join(directory, entry))
        except OSError:  # a read-only environment: compiled again next time
            try:
                os.unlink(temporary)
            except OSError:
                pass


_CODE = type(CodeCache.code.__code__)


def _code_cache_path(digest):
    tag = sys.implementation.cache_tag
    if not digest or tag is None:
        return None
    if sys.pycache_prefix:
        root = sys.pycache_prefix
    elif sys.prefix != sys.base_prefix:
        root = os.path.join(sys.prefix, "__pycache__")
    else:
        return None
    return os.path.join(root, "modelc-%s-%s.marshal" % (tag, digest))


class ShimFinder:
    """A meta path finder and loader (the protocols of `importlib.abc`): serves modelc's
    `inmanta` API from the sources modelc sent, and each module's Python from where modelc
    found it (a v1 module's `plugins/` is `inmanta_plugins.<module>`)."""

    def __init__(self, sources, modules, codes):
        self.sources = sources
        self.modules = modules
        self.codes = codes

    def find_spec(self, fullname, path=None, target=None):
        if fullname in self.sources:
            is_package, _ = self.sources[fullname]
            return importlib.machinery.ModuleSpec(fullname, self, origin="modelc", is_package=is_package)
        if fullname == "inmanta_plugins":
            spec = importlib.machinery.ModuleSpec(fullname, self, origin="modelc", is_package=True)
            spec.submodule_search_locations = [
                os.path.join(entry, "inmanta_plugins")
                for entry in sys.path
                if entry and os.path.isdir(os.path.join(entry, "inmanta_plugins"))
            ]
            return spec
        module = self.modules.get(fullname)
        if module is not None:
            init = os.path.join(module, "__init__.py")
            loader = importlib.machinery.SourceFileLoader(fullname, init)
            spec = importlib.machinery.ModuleSpec(fullname, loader, origin=init, is_package=True)
            spec.submodule_search_locations = [module]
            spec.has_location = True  # its `__file__` is where it is
            return spec
        return None

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        entry = self.sources.get(module.__name__)
        if entry is None:
            return
        exec(self.codes.code(module.__name__, entry[1]), module.__dict__)


def main():
    init = receive()
    # Every module's package is imported from where modelc found it (and read its signatures).
    modules = {"inmanta_plugins." + module["module"]: module["package"] for module in init["modules"]}
    codes = CodeCache(init.get("shim_digest"), init.get("keep_code", False))
    sys.meta_path.insert(0, ShimFinder(init["shim"], modules, codes))
    if init.get("role") == "handlers":
        # A deploy's handler host: its own loop (inmanta/agent/_host.py). It waits without
        # spinning: a deploy's next resource comes after the engine's own work, and the CPU a
        # spin takes is what the engine and the other hosts need.
        global _SPIN
        _SPIN = 0.0
        import inmanta.agent._host as handlers

        handlers.serve(send, receive, init, rebind, codes.keep)
        return
    import inmanta.plugins as plugins

    runtime = plugins._runtime
    runtime.configure(send, receive, init)
    send({"ready": True, "version": sys.version.split()[0], "executable": sys.executable})
    while True:
        message = receive()
        try:
            if message.get("op") == "call":
                send(runtime.call(message))
            elif message.get("op") == "map":
                send(runtime.map(message))
            elif message.get("op") == "depend":
                send(runtime.depend(message))
            elif message.get("op") == "load":
                send({"loaded": runtime.load(message["module"])})
            else:
                send({"failed": "unknown message " + str(message.get("op"))})
        except Exception as error:
            # The answer itself could not be written: the call fails, the host goes on.
            send({"failed": "the plugin host could not answer: %s: %s" % (type(error).__name__, error)})
        # What this message compiled of modelc's API (nothing, after the first few).
        codes.keep()


main()
