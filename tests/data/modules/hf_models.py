"""A table of tiny Hugging Face models for the module kernel: built from configs, random weights.

Nothing is downloaded: each model is ``<entry>(<config>(**config_kwargs))`` with the sizes below
(2 layers, hidden 32, 2 heads, intermediate 64, vocab 1000). Per model:

- ``entry`` / ``config``: ``"transformers:<Class>"`` entries for the model and its config class;
- ``config_kwargs``: the config's keyword arguments;
- ``inputs``: forward inputs by name as tensor specs, ``dtype[dims] init``, where dims may be
  ``{batch}`` / ``{seq}`` (filled from ``buckets``);
- ``constants``: non-tensor forward arguments bound as constants;
- ``buckets``: the values of ``{batch}`` / ``{seq}`` to compile for.

The comment on each entry records what a check with transformers 5.24.0 / torch 2.13.0+cpu saw:
eager output and ``torch.jit.trace(wrapper, inputs, strict=False)`` of a wrapper that calls the
model by keyword with the constants and returns a flat tuple of the tensor leaves, plus the time
that trace took on the CPU (a few runs on a shared machine; a later run under load was up to 2x
slower, so treat them as rough). Building the first model also pays for importing the transformers
model code (1.7-3.1 s seen for BERT, first in the table); later builds took 0.01-0.07 s. For
every model the traced graph also matched eager on fresh ids and on an attention mask with
padding (zeros), although it was traced with an all-ones mask. No model had to be dropped: all
six trace on these versions.
"""

HF_MODELS: dict[str, dict] = {
    # Observed: 2 leaves, last_hidden_state [1, 16, 32] f32 and pooler_output [1, 32] f32; traced ==
    # eager. Trace 0.22 s (check_trace=True) / 0.07 s (check_trace=False). TracerWarnings (all shape
    # checks in transformers, constant for a fixed bucket): masking_utils.py:229 x1,
    # integrations/sdpa_attention.py:148 x2 (one per layer).
    "bert": {
        "entry": "transformers:BertModel",
        "config": "transformers:BertConfig",
        "config_kwargs": {
            "vocab_size": 1000,
            "hidden_size": 32,
            "num_hidden_layers": 2,
            "num_attention_heads": 2,
            "intermediate_size": 64,
            "max_position_embeddings": 64,
        },
        "inputs": {
            "input_ids": "i64[{batch},{seq}] randint(0, 1000)",
            "attention_mask": "i64[{batch},{seq}] ones",
            "token_type_ids": "i64[{batch},{seq}] zeros",
        },
        "constants": {"return_dict": False},
        "buckets": {"batch": [1], "seq": [16]},
    },
    # Observed: 1 leaf, last_hidden_state [1, 16, 32] f32; traced == eager. Trace 0.15-0.22 s
    # (check_trace=True) / 0.06 s (check_trace=False). TracerWarnings (all shape checks in
    # transformers, constant for a fixed bucket): masking_utils.py:229 x1,
    # integrations/sdpa_attention.py:148 x2.
    "distilbert": {
        "entry": "transformers:DistilBertModel",
        "config": "transformers:DistilBertConfig",
        "config_kwargs": {
            "vocab_size": 1000,
            "dim": 32,
            "n_layers": 2,
            "n_heads": 2,
            "hidden_dim": 64,
            "max_position_embeddings": 64,
        },
        "inputs": {
            "input_ids": "i64[{batch},{seq}] randint(0, 1000)",
            "attention_mask": "i64[{batch},{seq}] ones",
        },
        "constants": {"return_dict": False},
        "buckets": {"batch": [1], "seq": [16]},
    },
    # Observed: 1 leaf, last_hidden_state [1, 16, 32] f32 (use_cache=False: no cache among the
    # outputs); traced == eager. Trace 0.16-0.19 s (check_trace=True) / 0.06-0.07 s
    # (check_trace=False). TracerWarnings (all shape checks in transformers, constant for a fixed
    # bucket): masking_utils.py:229 x1, :268 x1, integrations/sdpa_attention.py:148 x2. bos/eos ids
    # are set to 0 because the defaults (50256) lie outside the 1000-token vocabulary and
    # transformers logs a warning about them.
    "gpt2": {
        "entry": "transformers:GPT2Model",
        "config": "transformers:GPT2Config",
        "config_kwargs": {
            "vocab_size": 1000,
            "n_embd": 32,
            "n_layer": 2,
            "n_head": 2,
            "n_inner": 64,
            "n_positions": 64,
            "bos_token_id": 0,
            "eos_token_id": 0,
        },
        "inputs": {
            "input_ids": "i64[{batch},{seq}] randint(0, 1000)",
            "attention_mask": "i64[{batch},{seq}] ones",
        },
        "constants": {"return_dict": False, "use_cache": False},
        "buckets": {"batch": [1], "seq": [16]},
    },
    # Observed: 1 leaf, last_hidden_state [1, 16, 32] f32 (use_cache=False); traced == eager. Trace
    # 0.16-0.19 s (check_trace=True) / 0.06-0.07 s (check_trace=False). TracerWarnings (all shape
    # checks in transformers, constant for a fixed bucket): masking_utils.py:229 x1, :268 x1,
    # integrations/sdpa_attention.py:148 x2.
    "llama": {
        "entry": "transformers:LlamaModel",
        "config": "transformers:LlamaConfig",
        "config_kwargs": {
            "vocab_size": 1000,
            "hidden_size": 32,
            "num_hidden_layers": 2,
            "num_attention_heads": 2,
            "num_key_value_heads": 2,
            "intermediate_size": 64,
            "max_position_embeddings": 64,
        },
        "inputs": {
            "input_ids": "i64[{batch},{seq}] randint(0, 1000)",
            "attention_mask": "i64[{batch},{seq}] ones",
        },
        "constants": {"return_dict": False, "use_cache": False},
        "buckets": {"batch": [1], "seq": [16]},
    },
    # Observed: 1 leaf, last_hidden_state [1, 16, 32] f32; traced == eager. Trace 0.20-0.23 s
    # (check_trace=True) / 0.07-0.11 s (check_trace=False). TracerWarnings (all shape checks in
    # transformers, constant for a fixed bucket): masking_utils.py:229 x1,
    # integrations/sdpa_attention.py:148 x2.
    "t5_encoder": {
        "entry": "transformers:T5EncoderModel",
        "config": "transformers:T5Config",
        "config_kwargs": {
            "vocab_size": 1000,
            "d_model": 32,
            "d_kv": 16,
            "d_ff": 64,
            "num_layers": 2,
            "num_heads": 2,
        },
        "inputs": {
            "input_ids": "i64[{batch},{seq}] randint(0, 1000)",
            "attention_mask": "i64[{batch},{seq}] ones",
        },
        "constants": {"return_dict": False},
        "buckets": {"batch": [1], "seq": [16]},
    },
    # Observed: 2 leaves, last_hidden_state [1, 17, 32] f32 and pooler_output [1, 32] f32; traced ==
    # eager. Trace 0.12-0.14 s (check_trace=True) / 0.05 s (check_trace=False). TracerWarnings (all
    # shape checks in transformers, constant for a fixed bucket): models/vit/modeling_vit.py:64 x1,
    # :152 x2, integrations/sdpa_attention.py:148 x2.
    "vit": {
        "entry": "transformers:ViTModel",
        "config": "transformers:ViTConfig",
        "config_kwargs": {
            "hidden_size": 32,
            "num_hidden_layers": 2,
            "num_attention_heads": 2,
            "intermediate_size": 64,
            "image_size": 32,
            "patch_size": 8,
            "num_channels": 3,
        },
        "inputs": {
            "pixel_values": "f32[{batch},3,32,32] randn",
        },
        "constants": {"return_dict": False},
        # No {seq}: the image size is fixed by the config (32x32, 16 patches + CLS = 17 tokens).
        "buckets": {"batch": [1]},
    },
}
