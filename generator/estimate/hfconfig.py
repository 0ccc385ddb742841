"""A model for the engine from a Hugging Face ``config.json``, and its parameters from the shapes.

``model_from_config(config)`` gives the dict a record of ``data/models`` gives the engine (the same
field names and conventions), so ``python -m generator estimate --config FILE`` estimates a model
the catalogue lacks exactly as it would its record. ``docs/assets/js/calc/hfconfig.mjs`` is the
browser's twin (the calculator's "paste a config.json"); ``tests/fixtures/hf_configs.json`` holds
configs both must read alike.

What is read (a multimodal config's ``text_config`` first, then the top level):

- the shape: hidden_size, num_hidden_layers, num_attention_heads, num_key_value_heads (default:
  the attention heads), head_dim (default hidden_size / heads), intermediate_size, vocab_size,
  tie_word_embeddings (default false), max_position_embeddings;
- experts: num_experts, n_routed_experts or num_local_experts; num_experts_per_tok;
  moe_intermediate_size (else intermediate_size); n_shared_experts, or a
  shared_expert_intermediate_size / shared_intermediate_size above 0 as one shared expert;
  first_k_dense_replace leading dense layers. With no dense layer the recorded
  intermediate_size is the expert's width, as the catalogue records it (Llama 4 with
  interleave_moe_layer_step above 1: intermediate_size_mlp); LFM2's block_ff_dim is cut to two
  thirds and rounded up to block_multiple_of where block_auto_adjust_ff_dim says so;
- MLA: kv_lora_rank and qk_rope_head_dim (head_dim = qk_nope_head_dim + qk_rope_head_dim);
  DeepSeek Sparse Attention: index_topk, index_n_heads, index_head_dim;
- windows: sliding_window with layer_types ("sliding_attention"), sliding_window_pattern (every
  n-th layer global), Gemma 2's alternation, or every layer (Mistral); none where
  use_sliding_window is false; Llama 4's attention_chunk_size on its rotary layers (no_rope_layers);
- layer kinds: layer_types ("linear_attention", "mamba", "conv"), full_attention_interval,
  hybrid_override_pattern (Nemotron-H: M Mamba-2, * attention, - MLP), attn_type_list
  (MiniMax-M1: 0 lightning), full_attn_idxs (LFM2), each with its state's figures
  (linear_*, mamba_*/ssm_state_size/n_groups/conv_kernel, conv_L_cache);
- Gemma 4's small sizes: num_kv_shared_layers as kv_shared_layers (the last layers, which reuse the
  keys and values of the last earlier layer of their kind), with kv_shared_sliding_layers counted
  from layer_types; hidden_size_per_layer_input as per_layer_embedding_dim (a table of
  vocab_size x layers x that width: the engine counts its rows as vocab_size, which Gemma 4's
  vocab_size_per_layer_input equals);
- num_nextn_predict_layers / mtp_num_hidden_layers as mtp_layers; a vision_config makes
  vision_encoder "excluded" (the parameters counted are the language model's).

``parameters_from_config`` counts, per layer kind: attention q, k, v, o (MLA: the low-rank q of
q_lora_rank when given, the latent's down and up projections); Gated DeltaNet's projections
(hidden x (2 key_heads x key_dim + 2 heads x head_dim + 2 heads)), its convolution and output;
Mamba-2's in_proj (hidden x (2 inner + 2 groups x d_state + heads)), convolution and out_proj;
lightning attention's q, k, v, gate and output; a short convolution's 3 hidden in, hidden out;
gated MLPs of 3 matrices (2 with squared ReLU, Nemotron-H), experts with their router; two norms
per layer; embeddings and the untied head. Gemma 4: KV-shared layers have no key and value
projections; use_double_wide_mlp doubles their MLP's width; per-layer embeddings add their table,
the projection of the hidden state to every layer's slice (hidden x layers x width) with its norm,
and in each layer a gate (hidden x width) and a projection back (width x hidden) with a norm.
Active parameters leave out the routed experts a token does not use.
"""
from __future__ import annotations

from generator.estimate.formats import STATE_KINDS

# the sentence of each kind of ConfigError (the command's; the calculator's are in data/ui.yaml)
MESSAGES = {"not_object": "a config.json is one JSON object ({{...}})",
            "missing": "the config gives no {field}, which the estimate needs",
            "not_whole": "{field} in the config is not a whole number above zero",
            "layer_kinds": "{field} does not list one entry per layer (num_hidden_layers)"}


class ConfigError(ValueError):
    """``kind``: not_object (the config is not a JSON object), missing (``field`` absent), not_whole
    (``field`` is not a whole number above zero), layer_kinds (the layer list disagrees with
    num_hidden_layers)."""

    def __init__(self, kind: str, field: str | None = None):
        super().__init__(MESSAGES[kind].format(field=field))
        self.kind, self.field = kind, field


def _flat(config) -> dict:
    """The text model's fields: text_config over the top level (vision_config left aside)."""
    if not isinstance(config, dict):
        raise ConfigError("not_object")
    text = config.get("text_config")
    top = {k: v for k, v in config.items() if k not in ("text_config", "vision_config")}
    if isinstance(text, dict):
        top.update(text)
    return top


def _whole(c: dict, *names, required: bool = False, default=None):
    """The first of ``names`` the config gives, as a whole number above zero."""
    for name in names:
        value = c.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value) or value <= 0:
            raise ConfigError("not_whole", name)
        return int(value)
    if required:
        raise ConfigError("missing", names[0])
    return default


def _count0(c: dict, *names) -> int:
    """A count that may be 0 (first_k_dense_replace, n_shared_experts)."""
    for name in names:
        value = c.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value) or value < 0:
            raise ConfigError("not_whole", name)
        return int(value)
    return 0


def _layer_kinds(c: dict, layers: int) -> dict:
    """{'state': n, 'kind': state kind or None, 'mlp_only': n, 'sliding': n or None} from the layer lists."""
    out = {"state": 0, "kind": None, "mlp_only": 0, "sliding": None}
    types = c.get("layer_types")
    pattern = c.get("hybrid_override_pattern")
    if isinstance(pattern, str) and pattern:
        if len(pattern) != layers:
            raise ConfigError("layer_kinds", "hybrid_override_pattern")
        out.update(state=pattern.count("M"), kind="mamba2" if "M" in pattern else None, mlp_only=pattern.count("-"))
        return out
    if isinstance(types, list) and types:
        if len(types) != layers:
            raise ConfigError("layer_kinds", "layer_types")
        names = [str(t) for t in types]
        for name, kind in (("linear_attention", "gated-deltanet"), ("mamba", "mamba2"), ("conv", "short-conv")):
            if name in names:
                out.update(state=names.count(name), kind=kind)
        if "sliding_attention" in names:
            out["sliding"] = names.count("sliding_attention")
        return out
    attn_types = c.get("attn_type_list")
    if isinstance(attn_types, list) and attn_types:
        if len(attn_types) != layers:
            raise ConfigError("layer_kinds", "attn_type_list")
        lightning = sum(1 for t in attn_types if t == 0)
        out.update(state=lightning, kind="lightning" if lightning else None)
        return out
    full = c.get("full_attn_idxs")
    if isinstance(full, list) and c.get("conv_L_cache"):
        out.update(state=layers - len(full), kind="short-conv" if layers > len(full) else None)
        return out
    interval = _whole(c, "full_attention_interval")
    if interval and c.get("linear_num_value_heads"):
        out.update(state=layers - layers // interval, kind="gated-deltanet")
    return out


def _state_figures(c: dict, kind: str) -> dict:
    """The figures STATE_KINDS names for ``kind`` (lightning attention's heads are the attention heads)."""
    names = {
        "gated-deltanet": {"state_heads": ("linear_num_value_heads",), "state_head_dim": ("linear_value_head_dim",),
                           "state_key_heads": ("linear_num_key_heads",), "state_key_dim": ("linear_key_head_dim",),
                           "state_conv_kernel": ("linear_conv_kernel_dim",)},
        "mamba2": {"state_heads": ("mamba_n_heads", "mamba_num_heads"), "state_head_dim": ("mamba_d_head", "mamba_head_dim"),
                   "state_key_dim": ("mamba_d_state", "ssm_state_size"), "state_groups": ("mamba_n_groups", "n_groups"),
                   "state_conv_kernel": ("mamba_d_conv", "conv_kernel")},
        "lightning": {},
        "short-conv": {"state_conv_kernel": ("conv_L_cache",)},
    }[kind]
    return {field: _whole(c, *aliases, required=True) for field, aliases in names.items()}


def _windows(c: dict, layers: int, attention: int, listed) -> tuple[int, int] | None:
    """(window, layers using it), or None."""
    chunk = _whole(c, "attention_chunk_size")
    if chunk and isinstance(c.get("no_rope_layers"), list):  # Llama 4: its rotary layers attend within chunks
        return chunk, sum(1 for x in c["no_rope_layers"] if x)
    window = _whole(c, "sliding_window")
    if not window or c.get("use_sliding_window") is False:
        return None
    if listed is not None:
        return window, listed
    pattern = _whole(c, "sliding_window_pattern")
    if pattern:
        return window, attention - attention // pattern
    if str(c.get("model_type")) == "gemma2":
        return window, attention // 2
    return window, attention


def _mlp_width(c: dict):
    """intermediate_size; LFM2's block_ff_dim, cut to two thirds and rounded up to block_multiple_of
    where block_auto_adjust_ff_dim says so."""
    width = _whole(c, "block_ff_dim", "intermediate_size")
    if width and c.get("block_auto_adjust_ff_dim") is True:
        width = int(2 * width / 3)
        multiplier = c.get("block_ffn_dim_multiplier")
        if isinstance(multiplier, (int, float)) and not isinstance(multiplier, bool) and multiplier > 0:
            width = int(multiplier * width)
        step = _whole(c, "block_multiple_of", default=256)
        width = step * -(-width // step)
    return width


def _attention_fields(c: dict, hidden: int, heads: int, kv: int) -> dict:
    """Multi-head latent attention (a kv_lora_rank) or grouped-query attention, with the head size."""
    rank = _whole(c, "kv_lora_rank")
    if rank:
        rope = _whole(c, "qk_rope_head_dim", required=True)
        return {"head_dim": _whole(c, "qk_nope_head_dim", required=True) + rope, "attention": "mla",
                "kv_lora_rank": rank, "qk_rope_head_dim": rope}
    return {"head_dim": _whole(c, "head_dim", default=hidden // heads),
            "attention": "mha" if kv == heads else "mqa" if kv == 1 else "gqa"}


def _mlp_fields(c: dict) -> dict:
    """The dense MLP width and, for a mixture of experts, its experts (routed, per token, shared),
    their width and the leading dense layers."""
    n_exp = _whole(c, "num_experts", "n_routed_experts", "num_local_experts")
    dense = _count0(c, "first_k_dense_replace")
    inter = _mlp_width(c)
    out: dict = {}
    if n_exp:
        per_token = _whole(c, "num_experts_per_tok", "top_k_experts", required=True)
        width = _whole(c, "moe_intermediate_size") or inter
        if width is None:
            raise ConfigError("missing", "moe_intermediate_size")
        shared = _count0(c, "n_shared_experts", "num_shared_experts")
        if not shared and _count0(c, "shared_expert_intermediate_size", "shared_intermediate_size") > 0:
            shared = 1
        if not shared and c.get("enable_moe_block") is True and inter:
            shared = 1  # Gemma 4: a dense MLP of intermediate_size runs beside the experts in every layer
        if _whole(c, "interleave_moe_layer_step", default=1) > 1:
            inter = _whole(c, "intermediate_size_mlp", required=True)
        elif not dense:
            inter = width
        out.update(experts=n_exp, experts_per_token=per_token, shared_experts=shared, moe_intermediate_size=width,
                   dense_layers=dense)
    if inter is None:
        raise ConfigError("missing", "intermediate_size")
    out["intermediate_size"] = inter
    return out


def _full_attention_fields(c: dict, model: dict) -> dict:
    """Gemma 4: the full-attention layers' own head size and KV heads, and keys used as values."""
    out: dict = {}
    dim, kv = _whole(c, "global_head_dim"), _whole(c, "num_global_key_value_heads")
    if dim and dim != model["head_dim"]:
        out["full_head_dim"] = dim
    if kv and kv != model["kv_heads"]:
        out["full_kv_heads"] = kv
    if c.get("attention_k_eq_v") is True:
        out["full_values_from_keys"] = True
    return out


def _shared_kv_fields(c: dict, layers: int, attention: int) -> dict:
    """Gemma 4 E2B/E4B: the last num_kv_shared_layers layers keep no KV cache; how many of them slide."""
    shared = _count0(c, "num_kv_shared_layers")
    if not shared:
        return {}
    if shared >= attention:
        raise ConfigError("not_whole", "num_kv_shared_layers")
    out = {"kv_shared_layers": shared}
    types = c.get("layer_types")
    if isinstance(types, list) and len(types) == layers:
        out["kv_shared_sliding_layers"] = sum(1 for t in types[layers - shared:] if t == "sliding_attention")
    return out


def _per_layer_fields(c: dict, model: dict) -> dict:
    """Gemma 4 E2B/E4B: the width of the per-layer embedding table (hidden_size_per_layer_input)."""
    dim = _count0(c, "hidden_size_per_layer_input")
    return {"per_layer_embedding_dim": dim} if dim else {}


def _layer_fields(c: dict, model: dict) -> dict:
    """What the layers are: state layers and their figures, MLP-only blocks, windows, sparse
    attention's indexer and multi-token-prediction layers."""
    layers, out = model["layers"], {}
    kinds = _layer_kinds(c, layers)
    if kinds["state"]:
        out.update(state_layers=kinds["state"], state_kind=kinds["kind"], **_state_figures(c, kinds["kind"]))
        if kinds["kind"] == "lightning":
            out.update(state_heads=model["attention_heads"], state_head_dim=model["head_dim"])
        assert set(STATE_KINDS[kinds["kind"]]) <= set(out)
    if kinds["mlp_only"]:
        out["mlp_only_layers"] = kinds["mlp_only"]
    window = _windows(c, layers, layers - kinds["state"] - kinds["mlp_only"], kinds["sliding"])
    if window:
        out.update(sliding_window=window[0], sliding_window_layers=window[1])
        out.update(_full_attention_fields(c, model))
    shared = _shared_kv_fields(c, layers, layers - kinds["state"] - kinds["mlp_only"])
    if shared and not window:
        shared.pop("kv_shared_sliding_layers", None)
    out.update(shared)
    out.update(_per_layer_fields(c, model))
    topk = _whole(c, "index_topk")
    if topk and model.get("kv_lora_rank"):
        out.update(index_topk=topk, index_heads=_whole(c, "index_n_heads", required=True),
                   index_head_dim=_whole(c, "index_head_dim", required=True))
    mtp = _count0(c, "num_nextn_predict_layers", "mtp_num_hidden_layers")
    if mtp:
        out["mtp_layers"] = mtp
    return out


def architecture_from_config(config) -> dict:
    """The engine's fields of the model a config describes, parameters aside."""
    c = _flat(config)
    layers = _whole(c, "num_hidden_layers", required=True)
    hidden = _whole(c, "hidden_size", required=True)
    heads = _whole(c, "num_attention_heads", required=True)
    vocab = _whole(c, "vocab_size", required=True)
    kv = _whole(c, "num_key_value_heads", default=heads)
    model: dict = {"id": None, "layers": layers, "hidden_size": hidden, "attention_heads": heads, "kv_heads": kv,
                   "vocab_size": vocab, "tied_embeddings": c.get("tie_word_embeddings") is True}
    model.update(_attention_fields(c, hidden, heads, kv))
    model.update(_mlp_fields(c))
    model.update(_layer_fields(c, model))
    context = _whole(c, "max_position_embeddings")
    if context:
        model["max_context"] = context
    if isinstance(config.get("vision_config"), dict):
        model["vision_encoder"] = "excluded"
    return model


def _attention_params(c: dict, m: dict) -> float:
    h, heads = m["hidden_size"], m["attention_heads"]
    if m.get("attention") == "mla":
        rope, rank = m["qk_rope_head_dim"], m["kv_lora_rank"]
        nope = m["head_dim"] - rope
        v_dim = _whole(c, "v_head_dim", default=nope)
        q_rank = _whole(c, "q_lora_rank")
        q = h * q_rank + q_rank + q_rank * heads * m["head_dim"] if q_rank else h * heads * m["head_dim"]
        return q + h * (rank + rope) + rank + rank * heads * (nope + v_dim) + heads * v_dim * h
    d, kv = m["head_dim"], m["kv_heads"]
    return 2 * h * heads * d + 2 * h * kv * d


def _all_attention_params(c: dict, m: dict, attention: int) -> float:
    """Attention weights of every attention layer; full-attention layers with their own head size,
    KV heads and no value projection where they use keys as values, and KV-shared layers with
    no key or value projection (Gemma 4)."""
    per = _attention_params(c, m)
    shared = m.get("kv_shared_layers", 0)
    if not shared and not any(k in m for k in ("full_head_dim", "full_kv_heads", "full_values_from_keys")):
        return attention * per
    h, heads = m["hidden_size"], m["attention_heads"]
    d, kv = m.get("full_head_dim", m["head_dim"]), m.get("full_kv_heads", m["kv_heads"])
    kv_full = (1 if m.get("full_values_from_keys") else 2) * h * kv * d
    kv_sliding = 2 * h * m["kv_heads"] * m["head_dim"]
    sliding = m.get("sliding_window_layers", 0) if m.get("sliding_window") else 0
    shared_sliding = m.get("kv_shared_sliding_layers", 0)
    full_layers = attention - sliding
    total = sliding * per + full_layers * (2 * h * heads * d + kv_full)
    return total - shared_sliding * kv_sliding - (shared - shared_sliding) * kv_full


def _state_params(m: dict) -> float:
    h, kind = m["hidden_size"], m.get("state_kind")
    heads, dim, key_dim = m.get("state_heads", 0), m.get("state_head_dim", 0), m.get("state_key_dim", 0)
    kernel = m.get("state_conv_kernel", 0)
    if kind == "gated-deltanet":
        key = m["state_key_heads"] * key_dim
        conv = 2 * key + heads * dim
        return h * (2 * key + 2 * heads * dim + 2 * heads) + conv * kernel + heads * dim * h + 2 * heads
    if kind == "mamba2":
        inner = heads * dim
        conv = inner + 2 * m["state_groups"] * key_dim
        return h * (2 * inner + 2 * m["state_groups"] * key_dim + heads) + conv * kernel + inner * h + 3 * heads + inner
    if kind == "lightning":
        return 5 * h * heads * dim
    return 4 * h * h + h * kernel  # short-conv


def parameters_from_config(config) -> dict:
    """{'parameters_b', 'active_parameters_b'} counted from the config's shapes (billions)."""
    c = _flat(config)
    m = architecture_from_config(config)
    h, layers, vocab = m["hidden_size"], m["layers"], m["vocab_size"]
    state, mlp_only = m.get("state_layers", 0), m.get("mlp_only_layers", 0)
    attention = layers - state - mlp_only
    matrices = 2 if str(c.get("mlp_hidden_act") or c.get("hidden_act")) == "relu2" else 3
    mlp_layers = mlp_only or layers
    total = vocab * h * (1 if m["tied_embeddings"] else 2) + h  # embeddings, head, final norm
    total += _all_attention_params(c, m, attention) + state * _state_params(m) + 2 * h * layers
    inactive = 0.0
    if m.get("experts"):
        n_exp, k, width = m["experts"], m["experts_per_token"], m["moe_intermediate_size"]
        step = _whole(c, "interleave_moe_layer_step", default=1)
        moe_layers = (mlp_layers - m["dense_layers"]) // step if step > 1 else mlp_layers - m["dense_layers"]
        shared_width = (_count0(c, "shared_expert_intermediate_size", "shared_intermediate_size")
                        or (_mlp_width(c) if c.get("enable_moe_block") is True else None) or width)
        expert = matrices * h * width
        total += moe_layers * (n_exp * expert + m["shared_experts"] * matrices * h * shared_width + h * n_exp)
        total += (mlp_layers - moe_layers) * matrices * h * m["intermediate_size"]
        inactive = moe_layers * (n_exp - k) * expert
    else:
        total += mlp_layers * matrices * h * m["intermediate_size"]
        if c.get("use_double_wide_mlp") is True:  # Gemma 4 E2B: the KV-shared layers' MLP is twice as wide
            total += m.get("kv_shared_layers", 0) * matrices * h * m["intermediate_size"]
    dim = m.get("per_layer_embedding_dim", 0)
    if dim:  # the table, the model's projection to every layer's slice with its norm, each layer's gate and projection
        total += vocab * layers * dim + h * layers * dim + dim + layers * (2 * h * dim + h)
    return {"parameters_b": total / 1e9, "active_parameters_b": (total - inactive) / 1e9}


def model_from_config(config, parameters_b: float | None = None, active_parameters_b: float | None = None) -> dict:
    """The engine's model: the architecture, with the parameters given or else counted from the shapes."""
    model = architecture_from_config(config)
    counted = parameters_from_config(config)
    model["parameters_b"] = parameters_b if parameters_b is not None else counted["parameters_b"]
    if active_parameters_b is not None:
        model["active_parameters_b"] = active_parameters_b
    elif model.get("experts"):
        model["active_parameters_b"] = (counted["active_parameters_b"] if parameters_b is None
                                        else parameters_b * counted["active_parameters_b"] / counted["parameters_b"])
    else:
        model["active_parameters_b"] = model["parameters_b"]
    return model

