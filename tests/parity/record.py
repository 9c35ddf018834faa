"""Records the reference compiler's result for parity cases (run by scripts/record-parity).

For each .cf file given, compiles it as a project's main.cf with the reference (inmanta-core,
in the venv `../shared/tools/reference-inmanta` installs) and prints one JSON line in the format
of the shared conformance cases: id, source, expect, error_class, error_message, error_line,
stdout. Never run by CI.
"""
import contextlib
import io
import json
import os
import shutil
import sys
import tempfile


def record(path: str, case_id: str) -> dict:
    source = open(path, encoding="utf-8").read()
    project = tempfile.mkdtemp()
    try:
        libs = os.environ.get("MODELC_REFERENCE_LIBS")
        with open(os.path.join(project, "project.yml"), "w") as f:
            f.write("name: parity\nmodulepath: %s\ndownloadpath: libs\nrepo: []\n" % (libs or "libs"))
        with open(os.path.join(project, "main.cf"), "w", encoding="utf-8") as f:
            f.write(source)
        cwd = os.getcwd()
        os.chdir(project)
        out = io.StringIO()
        result = {"id": case_id, "source": source}
        try:
            from inmanta import compiler
            from inmanta.module import Project

            Project.set(Project(project, autostd=True))
            Project.get().load()
            with contextlib.redirect_stdout(out):
                compiler.do_compile()
            result["expect"] = "ok"
            printed = out.getvalue()
            if printed:
                result["stdout"] = printed
        except Exception as e:  # the reference's verdict
            result["expect"] = "error"
            result["error_class"] = type(e).__name__
            message = str(e.get_message() if hasattr(e, "get_message") else e)
            # Paths of the temporary project read as the reference prints a project's own.
            result["error_message"] = message.replace(project + "/", "./")
            location = getattr(e, "location", None)
            if location is not None and getattr(location, "lnr", None):
                result["error_line"] = location.lnr
        finally:
            os.chdir(cwd)
        return result
    finally:
        shutil.rmtree(project, ignore_errors=True)


if __name__ == "__main__":
    root = sys.argv[1]
    for path in sys.argv[2:]:
        case_id = os.path.relpath(path, root)[: -len(".cf")]
        print(json.dumps(record(path, case_id), ensure_ascii=False), flush=True)
