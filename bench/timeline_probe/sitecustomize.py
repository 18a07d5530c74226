"""The first run's timeline probe (bench/bench_first_run_timeline.py puts this folder first on
PYTHONPATH): where $ARBOR_TL names a file, every Python process started with it (the app,
the first import's process) appends "pid mark wall-clock cpu-seconds" lines to it at its
start, at the app's steps (arguments parsed, store made, Textual loaded, mount, first page,
the first three frames with the rows they held and the child's CPU then) and the child's
(modules loaded, told its store, its first three commits). Hooks are put on the modules as
they are imported; nothing of arbor is changed."""
import os, sys, time
_LOG = os.environ.get("ARBOR_TL")
if _LOG:
    _pid = os.getpid()
    def mark(name, _t=time.time, _c=time.process_time):
        fd = os.open(_LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        os.write(fd, f"{_pid} {name} {_t():.6f} {_c():.4f}\n".encode())
        os.close(fd)
    import builtins
    builtins._tl_mark = mark
    mark("interp-up")

    def _wrap(obj, attr, before=None, after=None):
        f = getattr(obj, attr)
        import functools
        @functools.wraps(f)
        def w(*a, **k):
            if before: mark(before if isinstance(before, str) else before(a))
            r = f(*a, **k)
            if after: mark(after if isinstance(after, str) else after(a, r))
            return r
        setattr(obj, attr, w)

    def _patch(name, mod):
        if name == "core.importing.first_run.process":
            _wrap(mod, "_load", "child-load-begin", "child-load-end")
            _wrap(mod, "_import", "child-told")
            _wrap(mod.FirstRunProcess, "start", "spawn-begin", "spawn-end")
            _wrap(mod.FirstRunProcess, "tell_store", "tell-store")
            _wrap(mod.FirstRunProcess, "tell_drawn", "tell-drawn")
            # first message from the child, as the app reads it
            _wrap(mod.FirstRunProcess, "_tell", lambda a: f"app-heard-{a[1]}")
        elif name == "core.importing.first_run.priority":
            _wrap(mod.Yielding, "committed", "child-yield-begin", "child-yield-end")
            _wrap(mod.Yielding, "drawn", "child-drawn-begin", "child-drawn-end")
        elif name == "core.importing.state":
            n = [0]
            orig = mod.Pacer.commit
            def commit(self, *a, **k):
                try:   # (a read that has read enough raises ImportStopped once committed)
                    return orig(self, *a, **k)
                finally:
                    n[0] += 1
                    if n[0] <= 3: mark(f"child-commit-{n[0]}")
            mod.Pacer.commit = commit
            orig2 = mod.Pacer.commit_written
            def cw(self, *a, **k):
                try:
                    return orig2(self, *a, **k)
                finally:
                    n[0] += 1
                    if n[0] <= 3: mark(f"child-commit-{n[0]}")
            mod.Pacer.commit_written = cw
        elif name == "core.importing.driver":
            _wrap(mod, "import_paths", "child-import-paths")
            _wrap(mod, "import_file", lambda a: "child-import-file",
                  lambda a, r: f"child-file-done {os.path.getsize(a[1]) >> 10}K {r.status}")
            _wrap(mod, "_workers", "child-workers-begin", "child-workers-end")
            _wrap(mod, "link_lineage", "child-link-begin", "child-link-end")
        elif name == "tui.commands.browse":
            _wrap(mod, "run", "browse-run")
            _wrap(mod, "_open", "open-begin", "open-end")
        elif name == "tui.app":
            mark("tui.app-imported")
            A = mod.ArborApp
            _wrap(A, "on_mount", "on-mount-begin", lambda a, r: f"on-mount-end rows={len(a[0].sessions)}")
            _wrap(A, "_show_first_page", None, lambda a, r: f"first-page rows={len(a[0].sessions)}")
            _wrap(A, "_begin_first_run", "begin-first-run")
            _wrap(A, "_first_rows_shown", "first-rows-shown")
            _wrap(A, "_poll", "app-poll")
            _wrap(A, "_sessions_loaded", None, lambda a, r: f"app-sessions-loaded rows={len(a[1])}")
        elif name == "textual.app":
            mark("textual.app-imported")
            A = mod.App
            orig = A._display
            seen = [0]
            def _display(self, *a, **k):
                r = orig(self, *a, **k)
                if seen[0] < 3:
                    seen[0] += 1
                    rows = len(getattr(self, "sessions", ()) or ())
                    kids = []
                    try:
                        import glob
                        for t in glob.glob(f"/proc/{os.getpid()}/task/*/children"):
                            kids += open(t).read().split()
                        cpu = []
                        for k in kids:
                            f = open(f"/proc/{k}/stat").read().rsplit(")", 1)[1].split()
                            cpu.append((int(f[11]) + int(f[12])) * 10)
                    except Exception as e:
                        cpu = [repr(e)]
                    mark(f"display-{seen[0]} rows={rows} childcpu={cpu}")
                return r
            A._display = _display
            _wrap(A, "run", "app-run")

    WATCH = {"core.importing.first_run.process", "core.importing.first_run.priority", "core.importing.state", "core.importing.driver",
             "tui.commands.browse", "tui.app", "textual.app"}
    import importlib.abc, importlib.machinery
    class Finder(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name not in WATCH:
                return None
            for f in sys.meta_path:
                if f is self: continue
                spec = f.find_spec(name, path, target) if hasattr(f, "find_spec") else None
                if spec is not None:
                    loader = spec.loader
                    orig_exec = loader.exec_module
                    def exec_module(module, _o=orig_exec, _n=name):
                        _o(module)
                        _patch(_n, module)
                    loader.exec_module = exec_module
                    return spec
            return None
    sys.meta_path.insert(0, Finder())
