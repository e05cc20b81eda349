"""The RoPE kernel as the registry sees it: its spec, rules, hash, build and reproduction script part."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from neffbench.kernels.api import Built, TensorSig
from neffbench.kernels.rope import validate as rules
from neffbench.kernels.rope.cli import RopeCli
from neffbench.kernels.rope.params import RopeCompileSpec
from neffbench.kernels.token import DTYPE_BYTES, TokenKernel


class RopeKernel(TokenKernel):
    name = "rope"
    title = "RoPE (vLLM rotary embedding)"
    summary = (
        "vLLM's RotaryEmbedding.forward: NeoX or GPT-J pairing, partial rotary, GQA, optional key, "
        "linear/dynamic/llama3/yarn scaling; the cos/sin table as an input or inlined."
    )
    preset_dir = Path(__file__).resolve().parent / "presets"
    spec_class = RopeCompileSpec
    gui_preview = "neffbench.kernels.rope.gui.panel:RopePreviewPanel"
    cli = RopeCli()
    own_range_checks = rules.OWN_RANGE_CHECKS
    section_titles = {"model": "Model", "rope": "RoPE table"}

    def validate(self, spec: RopeCompileSpec) -> list:
        return rules.validate(spec)

    def ignored_fields(self, spec: RopeCompileSpec) -> dict[str, str]:
        return rules.ignored(spec)

    def neff_relevant(self, spec: RopeCompileSpec) -> dict[str, Any]:
        out = super().neff_relevant(spec)
        # RoPE specs hashed this way before kernels existed: job directories keep their names.
        del out["kernel"]
        # rotary_dim and partial_rotary_factor are two spellings of one number.
        model = out["model"]
        model.pop("partial_rotary_factor", None)
        model["rotary_dim"] = spec.model.effective_rotary_dim
        # As an input the table's values are data, not code: only its shape and dtype reach the NEFF.
        if spec.rope.cache_mode == "input":
            out["rope"] = {k: out["rope"][k] for k in ("max_pos", "cache_mode", "cache_dtype")}
        return out

    def preset_figures(self, data: dict[str, Any]) -> str:
        """``131072 positions, 32/8 heads, llama3 scaling (factor 8)``: what the preset menu lists of a RoPE preset."""
        from neffbench.kernels.rope.params import ModelSpec, RopeSpec

        model, rope = data.get("model", {}), data.get("rope", {})
        q = model.get("num_heads_q", ModelSpec.num_heads_q)
        k = model.get("num_heads_k", ModelSpec.num_heads_k)
        rope_type = rope.get("rope_type", RopeSpec.rope_type)
        scaling = (
            "no scaling"
            if rope_type == "default"
            else (f"{rope_type} scaling (factor {rope.get('factor', RopeSpec.factor):g})")
        )
        return f"{rope.get('max_pos', RopeSpec.max_pos)} positions, {q}/{k} heads, {scaling}"

    def io_signature(self, spec: RopeCompileSpec) -> tuple[list[TensorSig], list[TensorSig]]:
        from neffbench.kernels.rope.build import io_signature

        return io_signature(spec)

    def compile_data_bytes(self, spec: RopeCompileSpec) -> int:
        """The query, key, positions and cos/sin table (no torch needed)."""
        m, tokens = spec.model, max(spec.inputs.num_tokens or (1,))
        heads = m.num_heads_q + (m.num_heads_k if m.with_key else 0)
        # In and out for query and key, int64 positions, and the table (an input or inlined, it is traced).
        return (
            2 * tokens * heads * m.head_size * DTYPE_BYTES.get(spec.inputs.dtype, 4)
            + 8 * tokens
            + spec.rope.max_pos * m.effective_rotary_dim * DTYPE_BYTES.get(spec.rope.cache_dtype, 4)
        )

    def preload(self) -> None:
        from neffbench.kernels.rope import build  # noqa: F401

    def build(self, spec: RopeCompileSpec) -> Built:
        from neffbench.kernels.rope.build import build_module, example_inputs, rope_scaling

        inputs = example_inputs(spec)
        ins, outs = self.io_signature(spec)
        return Built(
            build_module(spec).eval(),
            inputs,
            tuple(t.role for t in ins),
            tuple(t.role for t in outs),
            info={"rope_scaling": rope_scaling(spec)},
        )

    def example_inputs(self, spec: RopeCompileSpec) -> tuple[Any, ...]:
        from neffbench.kernels.rope.build import example_inputs

        return example_inputs(spec)

    def reproduce_source(self, spec: RopeCompileSpec, built: Built) -> str:
        from neffbench.kernels.rope.reproduce import source

        return source(spec)

    def preview_preload(self) -> None:
        from neffbench.kernels.rope import preview  # noqa: F401

    def preview(self, spec: RopeCompileSpec, bucket: Any = None) -> Any:
        from neffbench.kernels.rope.preview import compute

        return compute(spec, bucket=None if bucket is None else bucket.get("num_tokens"))


KERNEL = RopeKernel()
