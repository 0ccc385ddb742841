// The large-model calculator's form rules (docs/assets/js/calc/llmform.mjs) on the models, cards
// and fitted table of tests/fixtures/estimate.json. Run with `node --test tests/js/`.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as L from "../../docs/assets/js/calc/llmform.mjs";
import * as E from "../../docs/assets/js/calc/estimate.mjs";

const fixture = JSON.parse(readFileSync(new URL("../fixtures/estimate.json", import.meta.url), "utf8"));
const NAMES = { "llama-3-1-8b": "Llama 3.1 8B", "llama-3-1-70b": "Llama 3.1 70B", "llama-2-7b": "Llama 2 7B", "qwen3-8b": "Qwen3 8B" };
const models = Object.values(fixture.models).map((m) => ({ ...m, name: NAMES[m.id] || m.id }));
const gpus = Object.entries(fixture.gpus).map(([id, g]) => ({ ...g, id, name: g.name || id }));
const table = fixture.table;
const byId = (items, id) => items.find((x) => x.id === id);
const llama8 = byId(models, "llama-3-1-8b");
const rtx4090 = byId(gpus, "rtx-4090");

/** What the form sends when the reader changes nothing but `over`. */
function raw(over = {}) {
  return {
    model: "Llama 3.1 8B", custom: "0", ...L.archOf(llama8), mode: "inference", runtime: "transformers", weights: "bf16",
    context: "4096", kv: "f16", batch: "1", gpus: "1", card: "rtx-4090", ckpt: "1", flash: "1", ...over,
  };
}
const ctx = { models, gpus, table, lang: "en" };

test("a model is found by its name, its id or the only name that contains what was typed", () => {
  assert.equal(L.findByName(models, "Llama 3.1 8B").item.id, "llama-3-1-8b");
  assert.equal(L.findByName(models, "  llama-3-1-70b ").item.id, "llama-3-1-70b");
  assert.equal(L.findByName(models, "3.1 8b").item.id, "llama-3-1-8b");
  assert.equal(L.findByName(models, "3.1 8B").item.id, "llama-3-1-8b");
  const many = L.findByName(models, "llama");
  assert.equal(many.item, null);
  assert.equal(many.matches, 4); // Llama 2 7B, 3.1 8B, 3.1 70B and llama-4-scout
  assert.deepEqual(L.findByName(models, ""), { item: null, matches: 0 });
  assert.deepEqual(L.findByName(models, "no such model"), { item: null, matches: 0 });
  assert.deepEqual(L.findByName(models, "..."), { item: null, matches: 0 });
});

test("the formats, caches and runtimes offered are exactly those estimate.mjs accepts", () => {
  for (const mode of L.MODES) {
    for (const runtime of L.RUNTIMES) {
      const allowedRuntime = L.runtimesFor(mode).includes(runtime);
      for (const weights of L.WEIGHTS) {
        const offered = allowedRuntime && L.weightsFor(runtime, mode).includes(weights);
        const kvs = mode === "inference" ? L.kvFor(runtime) : ["f16"];
        for (const kv of L.KV) {
          const out = E.run(llama8, fixture.gpus["h100-sxm"], { mode, runtime, weights, kv_cache: kv, context: 512 }, table);
          const ok = offered && kvs.includes(kv);
          if (ok) assert.deepEqual(out.errors, [], `${mode} ${runtime} ${weights} ${kv}`);
          else if (mode === "inference" || kv === "f16") assert.equal(out.errors.length, 1, `${mode} ${runtime} ${weights} ${kv} should be refused`);
        }
      }
      assert.ok(!allowedRuntime || L.weightsFor(runtime, mode).includes(L.defaultWeights(runtime, mode)), `${mode} ${runtime}`);
    }
  }
  assert.deepEqual(L.weightsFor("transformers", "qlora"), ["nf4"]);
  assert.ok(L.weightsFor("llama.cpp", "inference").includes("q4_k_m"));
  assert.ok(!L.weightsFor("vllm", "inference").includes("q4_k_m"));
  assert.deepEqual(L.runtimesFor("lora"), ["transformers"]);
});

test("a catalogue model gives estimate()'s own figures", () => {
  const ev = L.evaluate(raw(), ctx);
  assert.deepEqual(ev.errors, {});
  const direct = E.estimate(llama8, fixture.gpus["rtx-4090"], { mode: "inference", runtime: "transformers", weights: "bf16",
    kv_cache: "f16", context: 4096, batch: 1, gpus: 1, checkpointing: true, flash_attention: true }, table);
  assert.deepEqual(ev.result, direct);
  assert.equal(ev.gpu.id, "rtx-4090");
  assert.deepEqual(ev.warnings, {});
});

test("the same shape typed as a custom architecture is the model the command line builds", () => {
  const m = L.customModel({ params: 8.03, active: null, layers: 32, hidden: 4096, heads: 32, kv_heads: 8, head_dim: 128,
    vocab: 128256, inter: 14336, experts: null, experts_k: null, tied: false });
  assert.deepEqual(m, { id: null, parameters_b: 8.03, active_parameters_b: 8.03, layers: 32, hidden_size: 4096, attention_heads: 32,
    kv_heads: 8, head_dim: 128, vocab_size: 128256, tied_embeddings: false, intermediate_size: 14336, attention: "gqa" });
  const ev = L.evaluate(raw({ custom: "1" }), ctx);
  assert.deepEqual(ev.errors, {});
  const catalogue = L.evaluate(raw(), ctx).result;
  // a dense model without sliding window: the custom copy gives the same memory
  assert.equal(ev.result.memory.total_bytes, catalogue.memory.total_bytes);
  const moe = L.customModel({ params: 30, active: 3, layers: 48, hidden: 2048, heads: 32, kv_heads: 4, head_dim: 128,
    vocab: 151936, inter: null, experts: 128, experts_k: null, tied: false });
  assert.equal(moe.experts_per_token, 2);
  assert.equal(moe.intermediate_size, 4 * 2048);
});

test("bad input gives a message key on its field and no result, never a NaN", () => {
  for (const [over, field, key] of [
    [{ context: "-4096" }, "context", "calc.err.positive"],
    [{ context: "abc" }, "context", "calc.err.number"],
    [{ context: "1e999" }, "context", "calc.err.max"],
    [{ batch: "0" }, "batch", "calc.err.positive"],
    [{ gpus: "1.5" }, "gpus", "calc.err.integer"],
    [{ model: "no such model" }, "model", "calc.llm.err_model"],
    [{ model: "llama" }, "model", "calc.llm.err_model_many"],
    [{ card: "" }, "card", "calc.llm.err_card"],
    [{ runtime: "vllm", weights: "q4_k_m" }, "weights", "calc.llm.err_weights_runtime"],
    [{ runtime: "transformers", kv: "q8_0" }, "kv", "calc.llm.err_kv_runtime"],
    [{ mode: "full", runtime: "llama.cpp" }, "runtime", "calc.llm.err_training_runtime"],
    [{ mode: "full", weights: "nf4" }, "weights", "calc.err.train_precision"],
    [{ mode: "lora", weights: "int8" }, "weights", "calc.llm.err_lora_weights"],
    [{ mode: "qlora", weights: "bf16" }, "weights", "calc.llm.err_qlora_weights"],
    [{ mode: "warp" }, "mode", "calc.err.choice"],
    [{ custom: "1", kv_heads: "64" }, "kv_heads", "calc.err.kv_heads"],
    [{ custom: "1", kv_heads: "12" }, "heads", "calc.llm.err_heads_divisible"],
    [{ custom: "1", params: "0.5" }, "params", "calc.llm.err_embeddings"],
    [{ custom: "1", params: "-8" }, "params", "calc.err.positive"],
    [{ custom: "1", experts: "8" }, "active", "calc.llm.err_active_needed"],
    [{ custom: "1", experts: "8", active: "2", experts_k: "9" }, "experts_k", "calc.llm.err_experts_k"],
    [{ custom: "1", active: "9" }, "active", "calc.llm.err_active"],
    // active parameters below the total describe a mixture of experts: the engine asks for the experts
    [{ custom: "1", active: "2" }, "experts", "calc.err.required"],
    [{ custom: "1", inter: "-5" }, "inter", "calc.err.positive"],
    [{ custom: "1", layers: "1000000000" }, "layers", "calc.err.max"],
  ]) {
    const ev = L.evaluate(raw(over), ctx);
    assert.equal(ev.result, null, JSON.stringify(over));
    assert.equal(ev.errors[field] && ev.errors[field].key, key, `${JSON.stringify(over)}: ${JSON.stringify(ev.errors)}`);
  }
  // fields of the catalogue's model are not read while custom is off
  assert.deepEqual(L.evaluate(raw({ layers: "abc" }), ctx).errors, {});
});

test("heads × head size other than the hidden size warns and still estimates", () => {
  const ev = L.evaluate(raw({ custom: "1", head_dim: "160" }), ctx);
  assert.deepEqual(ev.errors, {});
  assert.ok(ev.result);
  assert.deepEqual(ev.warnings.arch, { key: "calc.llm.warn_arch", params: { product: 5120, hidden: 4096 } });
  assert.equal(L.evaluate(raw({ custom: "1" }), ctx).warnings.arch, undefined);
  // beyond the model's longest context the engine refuses, on the context field (one rule with the CLI)
  const long = L.evaluate(raw({ context: String(llama8.max_context + 1) }), ctx);
  assert.equal(long.result, null);
  assert.equal(long.errors.context.key, "calc.llm.err_context_model");
  // within the context its publisher reaches with RoPE scaling: estimated, with a note
  const scaled = { ...llama8, max_context_scaled: llama8.max_context * 4 };
  const yarn = L.evaluate(raw({ context: String(llama8.max_context * 2) }), { ...ctx, models: ctx.models.map((m) => (m.id === llama8.id ? scaled : m)) });
  assert.ok(yarn.result);
  assert.deepEqual(yarn.warnings.context, { key: "calc.llm.warn_context", params: { max: llama8.max_context } });
});

test("QLoRA needs less memory than LoRA, LoRA less than full training", () => {
  const total = (mode, weights) => L.evaluate(raw({ mode, weights, context: "2048" }), ctx).result.memory.total_bytes;
  assert.ok(total("qlora", "nf4") < total("lora", "bf16"));
  assert.ok(total("lora", "bf16") < total("full", "bf16"));
});

test("the card table: cards that hold the model first, fastest first, then the fewest cards needed", () => {
  const options = { mode: "inference", runtime: "transformers", weights: "bf16", kv_cache: "f16", context: 4096, batch: 1,
    gpus: 1, checkpointing: true, flash_attention: true };
  const model = byId(models, "llama-3-1-70b");
  const rows = L.cardTable(model, options, gpus, table);
  assert.equal(rows.length, gpus.length);
  const firstMiss = rows.findIndex((r) => !r.fits);
  assert.ok(firstMiss > 0 && rows.slice(firstMiss).every((r) => !r.fits), JSON.stringify(rows));
  for (let i = 1; i < firstMiss; i++) assert.ok(rows[i - 1].speed >= rows[i].speed);
  for (const r of rows) {
    const g = byId(gpus, r.id);
    assert.equal(r.fits, E.estimate(model, g, options, table).fits, r.id);
    if (r.fits || r.count === null) continue;
    const limit = L.limitBytes(g, options.runtime);
    assert.ok(L.totalBytes(model, options, table.constants, r.count) <= limit, r.id);
    assert.ok(L.totalBytes(model, options, table.constants, r.count - 1) > limit, r.id);
    assert.equal(r.count, L.cardsNeeded(model, options, table.constants, g, 2));
  }
  assert.ok(rows.some((r) => !r.fits && r.count >= 2));
  // two RTX 4090s in tensor parallel under vLLM: the 90 % reservation counts
  const vllm = { ...options, runtime: "vllm", gpus: 2 };
  const est = E.estimate(model, fixture.gpus["rtx-4090"], vllm, table);
  assert.equal(est.reserved_bytes, est.usable_bytes * 0.9);
  assert.equal(L.limitBytes(rtx4090, "vllm"), est.reserved_bytes);
  assert.equal(L.cardsNeeded(llama8, options, table.constants, rtx4090, 1, 0), null);
});

test("error bands as message keys", () => {
  assert.deepEqual(L.bandText(null), { key: "calc.llm.no_band", params: {} });
  // a table without the leave-one-source-out band: the fitted median alone
  assert.deepEqual(L.bandText({ count: 12, median_pct: 5.5, scope: "transformers" }), { key: "calc.llm.band_fitted", params: { median: 5.5, count: 12 } });
  assert.equal(L.bandText({ count: 12, median_pct: 5.5, scope: "all" }).key, "calc.llm.band_fitted_all");
  // the band on unseen results first, then the fitted median
  const unseen = { median_pct: 9.5, p90_pct: 40, count: 12, sources: 3 };
  assert.deepEqual(L.bandText({ count: 12, median_pct: 5.5, scope: "transformers", unseen }),
    { key: "calc.llm.band", params: { median: 9.5, p90: 40, in_median: 5.5, count: 12 } });
  assert.equal(L.bandText({ count: 12, median_pct: 5.5, scope: "all", unseen }).key, "calc.llm.band_all");
});

test("a catalogue model's fields round-trip through the custom form", () => {
  const a = L.archOf(byId(models, "qwen3-30b-a3b"));
  assert.ok(a.experts !== "" && a.active !== "");
  const ev = L.evaluate(raw({ custom: "1", ...a }), ctx);
  assert.deepEqual(ev.errors, {});
  assert.equal(ev.model.experts, Number(a.experts));
  assert.equal(ev.model.experts_per_token, Number(a.experts_k));
});

test("the optimizer sets the training state, the paged one in host memory; an address without it trains with AdamW", () => {
  const near = (a, b) => assert.ok(Math.abs(a - b) < 1e-6 * b, `${a} != ${b}`);
  const full = (opt) => L.evaluate(raw({ mode: "full", weights: "bf16", ...(opt ? { opt } : {}) }), ctx);
  const adamw = full("adamw"), eight = full("adamw-8bit"), paged = full("paged-adamw-8bit"), none = full(null);
  for (const ev of [adamw, eight, paged, none]) assert.deepEqual(ev.errors, {});
  assert.deepEqual(none.result, adamw.result);
  const params = adamw.result.basis.trainable_params;
  // AdamW 8 B + a 4 B fp32 master copy; 8-bit AdamW 2 B + the master; paged: the master only on the card
  near(adamw.result.memory.optimizer_bytes, params * 12);
  near(eight.result.memory.optimizer_bytes, params * 6);
  near(paged.result.memory.optimizer_bytes, params * 4);
  near(paged.result.memory.host_bytes, params * 2);
  near(adamw.result.memory.total_bytes - paged.result.memory.total_bytes, params * 8);
  assert.equal(paged.options.optimizer, "paged-adamw-8bit");
  assert.equal(full("adam-9bit").errors.opt.key, "calc.err.choice");
});

test("LoRA's rank and adapters and the loss in chunks reach the estimate; an older address keeps the defaults", () => {
  const lora = (over) => L.evaluate(raw({ mode: "lora", weights: "bf16", ...over }), ctx);
  const old = lora({});
  assert.deepEqual(old.errors, {});
  assert.deepEqual(old.options.lora_targets, E.LORA_TARGETS);
  assert.equal(old.options.lora_rank, E.DEFAULTS.lora_rank);
  assert.equal(old.options.chunked_loss, false);
  assert.deepEqual(lora({ rank: "16", targets: "all", chunk: "0" }).result, old.result);
  const qv = lora({ rank: "8", targets: "qv", chunk: "1" });
  assert.deepEqual(qv.errors, {});
  assert.deepEqual(qv.result.basis.lora_targets, ["q", "v"]);
  assert.equal(qv.result.basis.trainable_params, 32 * 8 * ((4096 + 4096) + (4096 + 1024)));
  assert.ok(qv.result.memory.activations_bytes < old.result.memory.activations_bytes);
  const attention = lora({ targets: "attention" });
  assert.deepEqual(attention.result.basis.lora_targets, ["q", "k", "v", "o"]);
  assert.ok(attention.result.basis.trainable_params < old.result.basis.trainable_params);
  // the rank is read in LoRA and QLoRA only: a bad one is an error there and ignored elsewhere
  for (const bad of ["0", "2.5", "x", ""]) assert.ok(lora({ rank: bad }).errors.rank, bad);
  assert.equal(lora({ rank: "4097" }).errors.rank.key, "calc.err.max");
  const inference = L.evaluate(raw({ rank: "x", targets: "qv" }), ctx);
  assert.deepEqual(inference.errors, {});
  assert.equal(lora({ targets: "mlp" }).errors.targets.key, "calc.err.choice");
  // the loss in chunks counts in full fine-tuning too
  const full = (chunk) => L.evaluate(raw({ mode: "full", weights: "bf16", chunk }), ctx).result.memory.activations_bytes;
  assert.equal(full("0") - full("1"), 5 * 128256 * 4096);
});

test("each engine error reaches the field and the text tables.json names for it", () => {
  const params = { field: "context" };
  for (const [key, spec] of Object.entries(E.ERRORS)) {
    const [field, msg] = L.engineError({ key, params }, "lora");
    if (!spec.ui) {
      assert.deepEqual([field, msg.key], ["model", "calc.err.choice"], key);
      continue;
    }
    assert.equal(field, spec.field === "{field}" ? "context" : spec.field, key);
    assert.equal(msg.key, spec.ui, key);
    assert.equal(L.engineError({ key, params }, "full")[1].key, spec.ui_full || spec.ui, key);
  }
  assert.deepEqual(L.engineError({ key: "est.err.positive", params: { field: "lora_rank" } }, "lora"),
    ["rank", { key: "calc.err.positive", params: {} }]);
  assert.deepEqual(L.engineError({ key: "est.err.above_max", params: { field: "intermediate_size", max: 10 } }, "lora"),
    ["inter", { key: "calc.err.max", params: { max: 10 } }]);
});

test("the form's choices and limits are the engine's tables", () => {
  const T = E.TABLES;
  assert.deepEqual(L.MODES, Object.keys(T.modes));
  assert.deepEqual(L.RUNTIMES, Object.keys(T.runtimes).filter((r) => T.runtimes[r].offered));
  assert.deepEqual([...L.WEIGHTS].sort(), Object.keys(T.weight_formats).sort());
  assert.deepEqual(L.WEIGHTS.slice(0, T.calculator.weights_first.length), T.calculator.weights_first);
  assert.deepEqual(L.KV, Object.keys(T.kv_cache));
  assert.deepEqual(L.OPT, Object.keys(T.optimizers));
  assert.deepEqual(L.TARGETS, Object.keys(T.calculator.lora_presets));
  assert.deepEqual(L.LORA_PRESETS.all, T.lora_targets);
  assert.deepEqual(L.RUN_FIELDS, { context: T.limits.context, batch: T.limits.batch, gpus: T.limits.gpus });
  assert.deepEqual(L.ARCH_FIELDS.layers, T.limits.model.layers);
  assert.deepEqual(L.ARCH_FIELDS.experts_k, { ...T.limits.model.experts_per_token, optional: true });
  assert.equal(L.RANK_FIELD, T.limits.lora_rank);
  assert.equal(L.MAX_CARDS, T.limits.cards);
});

// A pasted config.json (hfconfig.mjs through fromConfig) fills the custom architecture and keeps its layer facts.
const configs = JSON.parse(readFileSync(new URL("../fixtures/hf_configs.json", import.meta.url), "utf8"));
const configOf = (id) => JSON.stringify(configs.cases.find((c) => c.id === id).config);

test("a pasted config fills the form's fields and keeps the layers' facts", () => {
  const got = L.fromConfig(configOf("qwen3-next-80b-a3b"));
  assert.equal(got.fields.layers, "48");
  assert.equal(got.fields.heads, "16");
  assert.equal(got.fields.kv_heads, "2");
  assert.equal(got.fields.experts, "512");
  assert.equal(got.fields.params, "79.57"); // counted from the shapes, 4 significant digits
  assert.equal(got.attention, 12);
  assert.equal(got.facts.state_layers, 36);
  assert.equal(got.facts.state_kind, "gated-deltanet");
  // the custom model it gives estimates the cache of the 12 attention layers only
  const rawFields = { ...raw({ custom: "1", context: "131072" }), ...got.fields };
  const withFacts = L.evaluate(rawFields, { ...ctx, facts: got.facts });
  const without = L.evaluate(rawFields, ctx);
  assert.deepEqual(withFacts.errors, {});
  const kv = (ev) => ev.result.memory.kv_cache_bytes;
  assert.ok(kv(withFacts) < kv(without) / 3.5, `${kv(withFacts)} vs ${kv(without)}`);
  const record = fixture.models["qwen3-next-80b-a3b"];
  assert.equal(kv(withFacts), E.kvCacheBytes(record, 131072, 1, "f16"));
});

test("a config the page cannot read names the field, in the form's message keys", () => {
  assert.deepEqual(L.fromConfig("{"), { error: { key: "calc.llm.config_err_json", params: {} } });
  assert.deepEqual(L.fromConfig("[]"), { error: { key: "calc.llm.config_err_object", params: {} } });
  assert.deepEqual(L.fromConfig('{"hidden_size": 4096}'),
    { error: { key: "calc.llm.config_err_missing", params: { field: "num_hidden_layers" } } });
  assert.deepEqual(L.fromConfig('{"hidden_size": 4096, "num_hidden_layers": -2}'),
    { error: { key: "calc.llm.config_err_whole", params: { field: "num_hidden_layers" } } });
  assert.deepEqual(L.fromConfig(configOf("layer-types-short")),
    { error: { key: "calc.llm.config_err_layers", params: { field: "layer_types" } } });
});

test("layer facts of a dense model change nothing, and MLA's are dropped from a model without them", () => {
  const a = { params: 8.03, layers: 32, hidden: 4096, heads: 32, kv_heads: 8, head_dim: 128, vocab: 128256, inter: 14336 };
  assert.deepEqual(L.customModel(a, L.layerFacts(llama8)), L.customModel(a));
  const m = L.customModel(a, { attention: "gqa", kv_lora_rank: 512, state_layers: 8, state_kind: "lightning" });
  assert.equal(m.kv_lora_rank, undefined);
  assert.equal(m.state_layers, 8);
});

test("offload, host memory and backend reach the engine; a setup that does not fit has no speed", () => {
  const qwen = { model: "qwen3-30b-a3b", ...L.archOf(byId(models, "qwen3-30b-a3b")), runtime: "llama.cpp", weights: "q8_0" };
  const none = L.evaluate(raw(qwen), ctx);
  assert.equal(none.result.fits, false);
  assert.equal(none.result.decode_tokens_per_s, null);
  assert.ok(none.result.shortfall.bytes > 0 && none.result.shortfall.suggestions.some((s) => s.kind === "offload"));
  const auto = L.evaluate(raw({ ...qwen, offload: "auto", host_gb: "64" }), ctx);
  assert.equal(auto.options.offload, "auto");
  assert.equal(auto.options.host_memory_gb, 64);
  assert.equal(auto.result.fits, true);
  assert.ok(auto.result.decode_tokens_per_s > 0 && auto.result.offload.expert_layers > 0);
  const experts = L.evaluate(raw({ ...qwen, offload: "experts", offload_n: "" }), ctx);
  assert.equal(experts.options.offload, "experts");
  assert.equal(experts.result.offload.expert_layers, E.moeLayers(byId(models, "qwen3-30b-a3b")));
  const layers = L.evaluate(raw({ ...qwen, offload: "layers", offload_n: "20" }), ctx);
  assert.equal(layers.result.offload.host_layers, 20);
  const tooMany = L.evaluate(raw({ ...qwen, offload: "layers", offload_n: "999" }), ctx);
  assert.equal(tooMany.result, null);
  assert.equal(tooMany.errors.offload.key, "calc.llm.err_offload");
  const small = L.evaluate(raw({ ...qwen, offload: "auto", host_gb: "2" }), ctx);
  assert.equal(small.result.fits, false);
  assert.ok(small.result.shortfall.host_bytes > 0);
  // the backend and the offload apply to llama.cpp only; transformers ignores both
  const metal = L.evaluate(raw({ ...qwen, backend: "metal" }), ctx);
  assert.equal(metal.errors.card.key, "calc.llm.err_backend_card");
  const hf = L.evaluate(raw({ offload: "auto", backend: "vulkan" }), ctx);
  assert.equal(hf.options.offload, undefined);
  assert.equal(hf.options.backend, undefined);
  assert.equal(hf.result.basis.runtime, "transformers");
});

test("the card table lists only the cards the runtime runs", () => {
  const options = L.evaluate(raw({ runtime: "llama.cpp", weights: "q4_k_m" }), ctx).options;
  const all = L.cardTable(llama8, options, gpus, table).map((r) => r.id);
  const some = L.cardTable(llama8, options, gpus, { ...table, runtime_cards: { "llama.cpp": ["rtx-4090", "h100-sxm"] } }).map((r) => r.id);
  assert.ok(all.length > 2);
  assert.deepEqual(some.sort(), ["h100-sxm", "rtx-4090"]);
});

test("a name every object inherits (from the address) is no runtime, mode or format", () => {
  for (const name of ["constructor", "toString", "__proto__", "hasOwnProperty"]) {
    assert.deepEqual(L.kvFor(name), L.kvFor("no-such-runtime"), name);
    assert.ok(Array.isArray(L.weightsFor(name, name)), name);
  }
});

// KV-shared layers and the per-layer embedding table (Gemma 3n, Gemma 4 E2B/E4B) as fields of the custom architecture.
const gemmaE2b = byId(models, "gemma-4-e2b");
const e2bRaw = (over = {}) => raw({ model: "gemma-4-e2b", custom: "1", context: "131072", ...L.archOf(gemmaE2b), ...over });
const e2bCtx = { ...ctx, facts: L.layerFacts(gemmaE2b) };

test("the custom form filled with Gemma 4 E2B's values estimates what its catalogue record does", () => {
  const a = L.archOf(gemmaE2b);
  assert.deepEqual([a.kv_shared, a.kv_shared_sliding, a.per_layer], ["20", "16", "256"]);
  assert.equal(L.layerFacts(gemmaE2b).full_head_dim, 512); // the full-attention layers' wider heads stay too
  for (const options of [{}, { runtime: "llama.cpp", weights: "q4_k_m" }, { mode: "lora", weights: "bf16" }]) {
    const custom = L.evaluate(e2bRaw(options), e2bCtx);
    const record = L.evaluate(raw({ model: "gemma-4-e2b", context: "131072", ...options }), ctx);
    assert.deepEqual(custom.errors, {}, JSON.stringify(options));
    assert.equal(custom.model.id, null);
    assert.equal(record.model.id, "gemma-4-e2b");
    assert.deepEqual(custom.result.memory, record.result.memory, JSON.stringify(options));
    // (the longest context differs: the record caps it at the model's 131,072 tokens, a custom architecture has no cap)
    for (const k of ["decode_tokens_per_s", "prefill_tokens_per_s", "training_relative", "fits", "offload", "shortfall"]) {
      assert.deepEqual(custom.result[k], record.result[k], `${k} ${JSON.stringify(options)}`);
    }
  }
  // 15 of the 35 layers keep a cache (12 windowed, 3 full with heads of 512), as the engine counts it for the record
  const kv = L.evaluate(e2bRaw(), e2bCtx).result.memory.kv_cache_bytes;
  assert.equal(kv, E.kvCacheBytes(gemmaE2b, 131072, 1, "f16"));
  assert.equal(kv, 2 * 2 * (12 * 512 * 256 + 3 * 131072 * 512));
});

test("the sharing fields at 0 or empty mean none: more cache, and a parameter count without the per-layer table", () => {
  const kv = (over) => L.evaluate(e2bRaw(over), e2bCtx).result.memory.kv_cache_bytes;
  const none = { kv_shared: "0", kv_shared_sliding: "0", per_layer: "0" };
  const zero = L.evaluate(e2bRaw(none), e2bCtx);
  assert.deepEqual(zero.errors, {});
  for (const k of ["kv_shared_layers", "kv_shared_sliding_layers", "per_layer_embedding_dim"]) assert.equal(zero.model[k], undefined, k);
  assert.deepEqual(L.evaluate(e2bRaw({ kv_shared: "", kv_shared_sliding: "", per_layer: "" }), e2bCtx).result, zero.result);
  assert.ok(kv({}) < kv(none), `${kv({})} vs ${kv(none)}`);
  assert.equal(kv(none), 2 * 2 * (28 * 512 * 256 + 7 * 131072 * 512)); // all 35 layers keep one
  // the sliding share is read only with shared layers (its field is off then): a stale value changes nothing
  assert.deepEqual(L.evaluate(e2bRaw({ ...none, kv_shared_sliding: "16" }), e2bCtx).errors, {});
  // the per-layer table: weights the same (it is in the parameters), decode faster (a token reads one row of it)
  const table = L.evaluate(e2bRaw(), e2bCtx).result, noTable = L.evaluate(e2bRaw({ per_layer: "0" }), e2bCtx).result;
  assert.equal(table.memory.weights_bytes, noTable.memory.weights_bytes);
  assert.ok(table.decode_tokens_per_s > noTable.decode_tokens_per_s);
  // an address saved before the fields existed: none of them
  const old = e2bRaw();
  for (const k of ["kv_shared", "kv_shared_sliding", "per_layer"]) delete old[k];
  assert.deepEqual(L.evaluate(old, e2bCtx).result, zero.result);
});

test("the sharing fields take whole numbers from 0, fewer shared layers than attention layers, a sliding share both counts allow", () => {
  const err = (over, facts = e2bCtx.facts) => L.evaluate(e2bRaw(over), { ...ctx, facts }).errors;
  for (const [field, bad, key] of [["kv_shared", "-1", "calc.err.negative"], ["kv_shared", "2.5", "calc.err.integer"],
    ["kv_shared_sliding", "x", "calc.err.number"], ["per_layer", "-256", "calc.err.negative"],
    ["per_layer", "100001", "calc.err.max"], ["kv_shared", "10001", "calc.err.max"]]) {
    assert.equal(err({ [field]: bad })[field]?.key, key, `${field}=${bad}`);
  }
  // at least one layer keeps its own cache
  assert.deepEqual(err({ kv_shared: "35" }), { kv_shared: { key: "calc.llm.err_kv_shared", params: { max: 34 } } });
  assert.deepEqual(err({ kv_shared: "34", kv_shared_sliding: "27" }), {});
  // the sliding share: no more than the shared layers nor the windowed ones, leaving no more full ones than the 7
  const range = (min, max) => ({ kv_shared_sliding: { key: "calc.llm.err_kv_shared_sliding", params: { min, max } } });
  assert.deepEqual(err({ kv_shared: "10", kv_shared_sliding: "11" }), range(3, 10));
  assert.deepEqual(err({ kv_shared: "20", kv_shared_sliding: "12" }), range(13, 20));
  assert.deepEqual(err({ kv_shared: "30", kv_shared_sliding: "29" }), range(23, 28));
  assert.deepEqual(err({ kv_shared: "20", kv_shared_sliding: "" }), range(13, 20)); // empty is 0
  // typed from scratch (no window): every shared layer is a full-attention one
  assert.deepEqual(err({ kv_shared: "20", kv_shared_sliding: "1" }, null), range(0, 0));
  const plain = L.evaluate(e2bRaw({ kv_shared: "20", kv_shared_sliding: "0" }), ctx);
  assert.deepEqual(plain.errors, {});
  assert.equal(plain.result.memory.kv_cache_bytes, 2 * 2 * 15 * 131072 * 256);
  // what the engine accepts is what the form accepts, for every split on this model
  for (let shared = 0; shared <= 36; shared++) {
    for (let sliding = 0; sliding <= 30; sliding++) {
      const form = err({ kv_shared: String(shared), kv_shared_sliding: String(sliding) });
      const model = { ...gemmaE2b, kv_shared_layers: shared, kv_shared_sliding_layers: sliding };
      const engine = E.run(model, rtx4090, { context: 4096 }, table).errors;
      if (shared === 0) continue; // the sliding share is not read then
      assert.equal(Object.keys(form).length === 0, engine.length === 0, `${shared} / ${sliding}: ${JSON.stringify(form)}`);
    }
  }
});

test("a pasted Gemma 4 E2B config fills the sharing fields and counts the layers that keep a cache", () => {
  const got = L.fromConfig(configOf("gemma-4-e2b-as-published"));
  assert.deepEqual([got.fields.kv_shared, got.fields.kv_shared_sliding, got.fields.per_layer], ["20", "16", "256"]);
  assert.equal(got.layers, 35);
  assert.equal(got.attention, 15);
  const ev = L.evaluate({ ...raw({ custom: "1", context: "131072" }), ...got.fields }, { ...ctx, facts: got.facts });
  assert.deepEqual(ev.errors, {});
  assert.equal(ev.result.memory.kv_cache_bytes, E.kvCacheBytes(gemmaE2b, 131072, 1, "f16"));
});
