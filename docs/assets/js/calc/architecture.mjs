// Which layers of a model attend, keep a fixed state or hold an MLP alone; the state's size and
// FLOPs. Twin of generator/estimate/architecture.py.
import { STATE_BYTES, num } from "./formats.mjs";

/** Layers with attention: all but the state layers and the MLP-only blocks. */
export const attentionLayers = (model) => model.layers - num(model, "state_layers") - num(model, "mlp_only_layers");
/** Layers with an MLP: every layer, or only the MLP blocks where the model gives them. */
export const mlpLayers = (model) => num(model, "mlp_only_layers") || model.layers;
export const sparseAttention = (model) => Boolean(model.index_topk && model.index_head_dim);

/** [recurrent values, convolution values] of one state layer for one sequence. */
export function stateParts(model) {
  const kind = model.state_kind;
  if (!num(model, "state_layers") || !kind) return [0, 0];
  const heads = num(model, "state_heads"), dim = num(model, "state_head_dim"), keyDim = num(model, "state_key_dim");
  const conv = Math.max(0, num(model, "state_conv_kernel") - 1);
  if (kind === "gated-deltanet") return [heads * keyDim * dim, conv * (2 * num(model, "state_key_heads") * keyDim + heads * dim)];
  if (kind === "mamba2") return [heads * dim * keyDim, conv * (heads * dim + 2 * num(model, "state_groups") * keyDim)];
  if (kind === "lightning") return [heads * dim * dim, 0];
  return [0, conv * model.hidden_size];
}

export function stateValuesPerLayer(model) {
  const [recurrent, conv] = stateParts(model);
  return recurrent + conv;
}

/** Bytes of the fixed state of every state layer, for `batch` sequences. */
export const stateBytes = (model, batch = 1) => num(model, "state_layers") * stateValuesPerLayer(model) * STATE_BYTES * batch;

/** FLOPs of the state layers' token mixing over n tokens (update and read of the recurrent state). */
export const stateFlops = (model, n) => num(model, "state_layers") * 4 * stateParts(model)[0] * n;
