"""nnprof's start-up hook for PyTorch scripts run unchanged: ``NNPROF_TORCH=1 nnprof run
-- python train.py`` (CONTRACTS.md section 4) puts this folder first on PYTHONPATH, so
Python imports this module at start-up. When the script imports ``torch``, the PyTorch
shim is loaded and registered with the session libnnprof started from the environment:
every op of the script is recorded, with no change to it.

Settings (environment): NNPROF_TORCH_RECORD_SHAPES=1 (input shapes and dtypes),
NNPROF_TORCH_WITH_FLOPS=1, NNPROF_TORCH_WITH_STACK=1 (each op's Python stack; the
script's own frame shows the line that imported torch, where capture began, as
torch.profiler shows the line that started it), NNPROF_TORCH_PROFILE_MEMORY=1 (also on when
MS_PROFILER_OPTIONS has "profile_memory": true), NNPROF_TORCH_AUTO_STEPS=0 (default 1:
each interval between two optimizer steps is recorded as a step). Collectives need
"profile_communication": true in MS_PROFILER_OPTIONS.

Nothing here may break the user's program: any failure is one line on stderr. Another
sitecustomize further on sys.path (Debian ships one) still runs, after this one.
"""

import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
_ON = ("1", "true", "on", "yes")


def _flag(name, default=False):
    value = os.environ.get(name)
    return default if value is None else value.strip().lower() in _ON


def _say(msg):
    sys.stderr.write(f"[nnprof] warn: {msg}\n")


def _ms_options():
    try:
        opts = json.loads(os.environ.get("MS_PROFILER_OPTIONS") or "{}")
        return opts if isinstance(opts, dict) else {}
    except ValueError:
        return {}


def _after_torch(torch):
    """torch is imported: load the shim, configure it, name collectives' group once
    torch.distributed is initialised."""
    try:
        from nnprof import _torch_shim, record  # pylint: disable=import-outside-toplevel
        cfg = _torch_shim.Config()
        cfg.record_shapes = _flag("NNPROF_TORCH_RECORD_SHAPES")
        cfg.with_flops = _flag("NNPROF_TORCH_WITH_FLOPS")
        cfg.profile_memory = _flag("NNPROF_TORCH_PROFILE_MEMORY",
                                   _ms_options().get("profile_memory") is True)
        cfg.auto_steps = _flag("NNPROF_TORCH_AUTO_STEPS", True)
        _torch_shim.load()
        _torch_shim.configure(cfg)
        if _flag("NNPROF_TORCH_WITH_STACK"):
            _torch_shim.stacks_start()
    except Exception as err:  # pylint: disable=broad-except
        _say(f"NNPROF_TORCH=1: PyTorch capture is off: {err}")
        return
    dist = getattr(torch, "distributed", None)
    init = getattr(dist, "init_process_group", None) if dist is not None else None
    if init is None or getattr(init, "_nnprof_wrapped", False):
        return

    def init_process_group(*args, **kwargs):
        result = init(*args, **kwargs)
        try:
            group = _torch_shim.group_descriptor("default_pg", range(dist.get_world_size()))
            cfg.comm_group = record.intern(group)
            _torch_shim.configure(cfg)
        except Exception as err:  # pylint: disable=broad-except
            _say(f"cannot name the default process group: {err}")
        return result

    init_process_group._nnprof_wrapped = True  # pylint: disable=protected-access
    init_process_group.__wrapped__ = init
    init_process_group.__doc__ = init.__doc__
    dist.init_process_group = init_process_group


class _TorchFinder(importlib.abc.MetaPathFinder):
    """Finds ``torch`` as the normal path finder does and runs :func:`_after_torch` once
    its module has executed; removes itself after that one use."""

    def find_spec(self, fullname, path, target=None):  # pylint: disable=unused-argument
        if fullname != "torch":
            return None
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        exec_module = spec.loader.exec_module

        def exec_then_capture(module):
            exec_module(module)
            _after_torch(module)

        spec.loader.exec_module = exec_then_capture
        return spec


def _chain_next_sitecustomize():
    """Runs the sitecustomize this one hides (the next one on sys.path), if any."""
    others = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", others)
    if spec is None or spec.loader is None or spec.origin == __file__:
        return
    try:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except Exception as err:  # pylint: disable=broad-except
        _say(f"the next sitecustomize ({spec.origin}) failed: {err}")


if os.environ.get("NNPROF_TORCH", "").strip().lower() in _ON and "torch" not in sys.modules:
    sys.meta_path.insert(0, _TorchFinder())
_chain_next_sitecustomize()
