"""Hooks of `bench/bench_import_timeline.py` (not part of arbor): on PYTHONPATH with ARBOR_TL set
to a folder, every Python process of an import (the importing process and each worker)
writes `<pid>.log` there: one line an event, `wall CPU thread event`, as modules of the
import are loaded and some of their functions entered and left."""

import os
import sys
import time

_FOLDER = os.environ.get("ARBOR_TL")
if _FOLDER:
    import functools
    import importlib.abc
    import threading

    _log = open(os.path.join(_FOLDER, f"{os.getpid()}.log"), "a", buffering=1)

    def event(name: str) -> None:
        _log.write(f"{time.time():.4f} {time.process_time():.4f} "
                   f"{threading.current_thread().name[:12]} {name}\n")

    event("start " + " ".join(sys.argv)[:60])
    import atexit
    atexit.register(lambda: event("atexit"))

    def wrap(owner, attr: str, label: str | None = None, says=None) -> None:
        real = getattr(owner, attr)
        label = label or attr

        @functools.wraps(real)
        def inner(*args, **kwargs):
            extra = says(*args, **kwargs) if says else ""
            event(f"> {label} {extra}")
            try:
                return real(*args, **kwargs)
            finally:
                event(f"< {label} {extra}")
        setattr(owner, attr, inner)

    def _file(path) -> str:
        try:
            return f"{os.path.basename(str(path))[:12]} {os.stat(path).st_size}"
        except OSError:
            return str(path)[:20]

    def patch(name: str, module) -> None:
        if name == "core.importing.driver":
            wrap(module, "import_file", says=lambda store, path, *a, **k: _file(path))
            wrap(module, "link_lineage")
            wrap(module, "plan_found", says=lambda store, found, *a, **k: str(len(found)))
            wrap(module, "_workers")
            wrap(module, "import_paths")
        elif name == "core.importing.workers.parallel":
            wrap(module.Workers, "take", says=lambda self, job, *a, **k: str(job))
            wrap(module.Workers, "_start", "workers.start")
            wrap(module.Workers, "close", "workers.close")
            wrap(module.ParallelImport, "_move_in", says=lambda self, s, r, b: f"{len(b)} files")
        elif name == "core.importing.workers.worker":
            read, write = module.read_frame, module.write_frame

            def read_frame(stream):
                value = read(stream)
                event("got " + (f"job {value.get('job')} {len(value.get('files', []))} files"
                                if isinstance(value, dict) and "job" in value else "settings"))
                return value

            def write_frame(stream, value):
                if isinstance(value, dict) and "results" in value:
                    event(f"answer job {value['job']}")
                write(stream, value)
            module.read_frame, module.write_frame = read_frame, write_frame
        elif name == "core.store.rooms.usage":
            for owner in vars(module).values():
                if isinstance(owner, type) and hasattr(owner, "price_waiting"):
                    wrap(owner, "price_waiting")
        elif name == "core.store.store":
            wrap(module.Store, "close", "store.close")
        elif name == "genai_prices":
            event("loaded the price table's package")

    NAMES = {"core.importing.driver", "core.importing.workers.parallel",
             "core.importing.workers.worker", "core.store.rooms.usage", "core.store.store",
             "genai_prices"}

    class _Finder(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name not in NAMES:
                return None
            for finder in sys.meta_path:
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(name, path, target)
                if spec is not None:
                    real = spec.loader.exec_module

                    def exec_module(module, real=real, name=name):
                        real(module)
                        patch(name, module)
                    spec.loader.exec_module = exec_module
                    return spec
            return None

    sys.meta_path.insert(0, _Finder())
