"""Type stubs of the mhacfg module: keyword arguments are the CLI's flags with underscores, grouped as the
CLI declares them (model, workload, deployment, serving records)."""
import os
from typing import Any, Mapping, Sequence, TypedDict

from typing_extensions import Unpack

__version__: str

Model = str | os.PathLike[str] | Mapping[str, Any]
"""A preset name, a config.json path, a Hugging Face id in the local cache, or config.json content."""

class Error(Exception):
    exit_code: int

class InputError(Error, ValueError):
    field: str | None
    value: str | None
    reason: str | None
    def __init__(self, message: str, field: str | None = ..., value: str | None = ..., reason: str | None = ...) -> None: ...

class Infeasible(Error):
    closest: dict[str, Any] | None
    document: dict[str, Any] | None
    def __init__(self, message: str, closest: dict[str, Any] | None = ..., document: dict[str, Any] | None = ...) -> None: ...

class RuntimeFailure(Error, RuntimeError): ...


Count = int | str
"""An integer, or text the CLI would take (``"7B"`` for a parameter count)."""
Path = str | os.PathLike[str]

class DeploymentFlags(TypedDict, total=False):
    tp: Count
    kv_dtype: str
    weight_dtype: str
    attention_weight_dtype: str
    ffn_weight_dtype: str
    state_dtype: str
    ep: Count
    pp: Count
    dp_attention: bool
    nodes: Count

class WorkloadFlags(DeploymentFlags, total=False):
    batch: Count
    prompt_len: Count
    context: Count

class ModelFlags(TypedDict, total=False):
    hf_config: Path
    d_model: Count
    layers: Count
    heads: Count
    kv_heads: Count
    head_dim: Count
    v_head_dim: Count
    variant: str
    kv_lora_rank: Count
    q_lora_rank: Count
    rope_head_dim: Count
    ffn_dim: Count
    ffn: str
    vocab: Count
    tie_embeddings: bool
    sliding_window: Count
    attention_chunk: Count
    global_every: Count
    index_topk: Count
    index_heads: Count
    index_head_dim: Count

class TargetFlags(TypedDict, total=False):
    target: Path
    roofline: bool

class AnalyzeFlags(ModelFlags, WorkloadFlags, TargetFlags, total=False):
    engine: Path

class RecommendFlags(DeploymentFlags, TargetFlags, total=False):
    hf_config: Path
    params: Count
    d_model: Count
    layers: Count
    context: Count
    seq: Count
    batch: Count
    objective: str
    quality: str
    variants: str | Sequence[str]
    sliding_window: Count
    attention_chunk: Count
    global_every: Count
    index_topk: Count
    top: Count
    vocab: Count
    memory_fraction: float
    engine: Path
    output_len: Count
    ttft_ms: float
    tpot_ms: float
    head_dim: Count
    kv_heads_multiple_of: Count
    max_kv_bytes_per_token: Count

class CompareFlags(WorkloadFlags, TargetFlags, total=False):
    engine: Path
    memory_fraction: float

class ServingRecordFlags(TypedDict, total=False):
    engine: Path
    set: Mapping[str, str | int | bool] | Sequence[str]
    records_of: str | Sequence[str]
    profile: Path
    roofline: bool

class ValidateFlags(ServingRecordFlags, total=False):
    attention_backend: str | Sequence[str]

def analyze(model: Model | None = None, **flags: Unpack[AnalyzeFlags]) -> dict[str, Any]:
    """Every exact count of one model under a workload; with ``target``, predicted times.

    As ``mhacfg analyze --format json``: analyze.schema.json."""

def recommend(model: Model | None = None, **flags: Unpack[RecommendFlags]) -> dict[str, Any]:
    """Query heads, KV heads, head_dim and projection for a budget, a context and a target.

    As ``mhacfg recommend --format json``: recommend.schema.json. Raises Infeasible when nothing fits."""

def compare(models: Sequence[Model], **flags: Unpack[CompareFlags]) -> dict[str, Any]:
    """Models side by side with deltas against the first, as ``mhacfg compare --format json``."""

def validate(in_: Path, **flags: Unpack[ValidateFlags]) -> dict[str, Any]:
    """A profile's prediction error on kernel records (``profile=``) or serving records, as ``mhacfg validate``."""

def predict(in_: Path, **flags: Unpack[ServingRecordFlags]) -> list[dict[str, Any]]:
    """Each record with its prediction, as ``mhacfg predict``'s JSON Lines (one dict per record)."""

def profiles() -> dict[str, Any]:
    """The shipped device profiles with provenance, as ``mhacfg profiles --format json``."""

def models() -> dict[str, Any]:
    """The model presets ``model=NAME`` reads, with shapes and sources, as ``mhacfg models --format json``."""

def load_profile(name: Path, roofline: bool = False) -> dict[str, Any]:
    """A device profile by shipped name or file, as ``mhacfg profiles show NAME --format json``."""
