"""Loaded by the builds that benchmarks/ measures (PYTHONPATH=benchmarks/probe): appends one line
to $TERMBASE_BENCH_NOTEBOOK_LOG each time a Jupyter kernel is started to execute a notebook
(nbclient, which nbconvert and mkdocs-jupyter use). Nothing else changes; without the variable
this file does nothing."""

import os
import sys

_LOG = os.environ.get("TERMBASE_BENCH_NOTEBOOK_LOG")

if _LOG:
    import importlib.abc
    import importlib.util
    import time

    def _patch(module):
        client = getattr(module, "NotebookClient", None)
        if client is None or getattr(client, "_termbase_probe", False):
            return
        original_async = client.async_start_new_kernel
        original_sync = client.start_new_kernel  # run_sync(original_async), bound at class creation

        def note(self):
            resources = getattr(self, "resources", None) or {}
            where = (resources.get("metadata") or {}).get("path") or os.getcwd()
            with open(_LOG, "a", encoding="utf-8") as fh:
                fh.write(f"{time.time():.3f}\t{os.getpid()}\t{where}\n")

        async def async_start_new_kernel(self, *args, **kwargs):
            note(self)
            return await original_async(self, *args, **kwargs)

        def start_new_kernel(self, *args, **kwargs):
            note(self)
            return original_sync(self, *args, **kwargs)

        client.async_start_new_kernel = async_start_new_kernel
        client.start_new_kernel = start_new_kernel
        client._termbase_probe = True

    class _Finder(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name != "nbclient.client":
                return None
            sys.meta_path.remove(self)
            try:
                spec = importlib.util.find_spec(name)
            finally:
                sys.meta_path.insert(0, self)
            if spec is None or spec.loader is None:
                return spec
            exec_module = spec.loader.exec_module

            def patched(module):
                exec_module(module)
                _patch(module)

            spec.loader.exec_module = patched
            return spec

    sys.meta_path.insert(0, _Finder())
