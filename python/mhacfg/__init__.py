"""mhacfg in-process: the attention-design configurator's commands as Python functions.

Each function mirrors a command and returns the JSON document its ``--format json`` writes, as
Python objects (dicts, lists, str, int, float, bool, None; the JSON Schemas in
share/mhacfg/schemas describe them). Keyword arguments are the command's flags with underscores
(``prompt_len=2048`` is ``--prompt-len 2048``; ``in_`` is ``--in``); a list is a comma list or a
repeated flag, a dict ``--set KEY=VALUE`` pairs, ``True`` a switch. A model is a preset name, a
config.json path, a Hugging Face id in the local cache (``"meta-llama/Llama-3.1-8B"``), or a dict of
config.json content.

    import mhacfg
    doc = mhacfg.analyze("llama-3-8b", context=32768, batch=8, target="h200-sxm-cudnn")
    doc["kv_cache"]["bytes_total"], doc["predicted"]["tokens_per_s"]

Errors raise InputError (exit 2 of the CLI: ``field``, ``value``, ``reason``), Infeasible (exit 1:
``closest`` candidate and the whole ``document``) or RuntimeFailure (exit 3). The library releases
the GIL while it works: threads sweep in parallel.
"""


class Error(Exception):
    """An mhacfg error; ``exit_code`` is the CLI's for the same failure."""

    exit_code = 3


class InputError(Error, ValueError):
    """Invalid input: a flag, file, config key or record that cannot be accepted (CLI exit 2)."""

    exit_code = 2

    def __init__(self, message, field=None, value=None, reason=None):
        super().__init__(message)
        self.field = field
        self.value = value
        self.reason = reason


class Infeasible(Error):
    """No configuration satisfies the constraints (CLI exit 1); ``closest`` is the nearest miss."""

    exit_code = 1

    def __init__(self, message, closest=None, document=None):
        super().__init__(message)
        self.closest = closest
        self.document = document


class RuntimeFailure(Error, RuntimeError):
    """A failure of the machine while running (CLI exit 3)."""

    exit_code = 3


from ._mhacfg import (  # noqa: E402  (the classes above are what it raises)
    __version__,
    analyze,
    compare,
    load_profile,
    models,
    predict,
    profiles,
    recommend,
    validate,
)

__all__ = ["analyze", "recommend", "compare", "predict", "validate", "profiles", "models", "load_profile",
           "Error", "InputError", "Infeasible", "RuntimeFailure", "__version__"]
