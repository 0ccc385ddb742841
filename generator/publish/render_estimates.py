"""What model, GPU, accuracy and today pages print from the estimates (a mixin of
:class:`generator.publish.render.Context`): numbers come from the derive stage, text from data/ui.yaml."""
from __future__ import annotations

from urllib.parse import urlencode

from markupsafe import Markup, escape

from generator.data.records_llm import BENCHMARK_WORKLOADS, MODEL_SOURCED
from generator.facts.estimates import GRID_OPTIONS, four_bit, memory_contexts
from generator.facts.today import CONTEXT, INFERENCE_MODELS, newest_date
from generator.publish.charts_accuracy import METRICS, accuracy_chart

MODEL_FIELDS = ("parameters_b", "active_parameters_b", "layers", "hidden_size", "intermediate_size", "attention",
                "attention_heads", "kv_heads", "head_dim", "vocab_size", "tied_embeddings", "experts",
                "experts_per_token", "shared_experts", "moe_intermediate_size", "dense_layers", "kv_lora_rank",
                "qk_rope_head_dim", "sliding_window", "sliding_window_layers", "state_layers", "state_kind", "state_heads",
                "state_head_dim", "state_key_heads", "state_key_dim", "state_groups", "state_conv_kernel",
                "mlp_only_layers", "mtp_layers", "index_topk", "index_heads", "index_head_dim", "vision_encoder",
                "max_context", "release_date", "licence")
# the label of each weight format of the memory table on model pages (the native format's: model.as_published)
MEMORY_LABELS = {"q4_k_m": "Q4_K_M (GGUF)", "q8_0": "Q8_0 (GGUF)", "bf16": "BF16"}


class EstimatesText:
    # -- today's cards
    def today_rows(self):
        return self.facts.today

    def today_newest(self):

        return newest_date(self.ds)

    def today_models(self):

        return [m for m in INFERENCE_MODELS if m[1] in self.ds.models]

    def today_context(self) -> int:

        return CONTEXT

    # -- error bands
    def error_band(self, metric: str, runtime: str):
        """{median_pct, p90_pct, count, ...} of one metric and runtime over the shipped measurements."""
        return (self.facts.estimates.get("errors") or {}).get(metric, {}).get(runtime)

    def band_text(self, band) -> str:
        """The band a reader should expect (leave-one-source-out: median and 90th percentile), then
        the error on the measurements the fit read; a table without the first gives the second alone."""
        if not band:
            return self.ui_plain("est.no_band")
        unseen = self.unseen_of(band)
        if unseen.get("median_pct") is None:
            return self.fill_plain("est.band_fitted", median=self.num(band["median_pct"], 0),
                                   p90=self.num(band["p90_pct"], 0), count=self.num(band["count"]))
        return self.fill_plain("est.band", median=self.num(unseen["median_pct"], 0), p90=self.num(unseen["p90_pct"], 0),
                               in_median=self.num(band["median_pct"], 0), count=self.num(band["count"]))

    @staticmethod
    def unseen_of(entry) -> dict:
        """The leave-one-source-out band of an error entry ({median_pct, p90_pct, count, sources},
        None each where the table has none)."""
        unseen = (entry or {}).get("unseen")
        if unseen:
            return unseen
        return {"median_pct": (entry or {}).get("loso_median_pct"), "p90_pct": (entry or {}).get("loso_p90_pct"),
                "count": None, "sources": None}

    def holdout_error_rows(self):
        """(metric, runtime, entry) of the held-out check (generator.facts.holdout), "all" last."""
        return [(metric, runtime, e) for metric, per in self.facts.holdout["errors"].items()
                for runtime, e in per.items()]

    def error_rows(self):
        """(metric, runtime, error entry) of every measured metric, "all" last within a metric."""
        errors = self.facts.estimates.get("errors") or {}
        out = []
        for metric, per in errors.items():
            for runtime in sorted(per, key=lambda r: (r == "all", r)):
                if per[runtime].get("count"):
                    out.append((metric, runtime, per[runtime]))
        return out

    def measurement_publishers(self) -> int:
        return len({m["publisher"] for m in self.ds.measurements})

    def own_measurements(self):
        """The measurements files of the site's own runs (named by their script, not a URL), newest
        first, each with its number of results."""
        own = [m for m in self.ds.measurements if m.get("script")]
        own.sort(key=lambda m: (m["date"], m.id), reverse=True)
        return [(m, len(m["results"])) for m in own]

    def accuracy_charts(self):

        charts = (accuracy_chart(self, metric, self.facts.measured) for metric in METRICS)
        return [ch for ch in charts if ch is not None]

    def revision_price(self, rev, gid: str, basis: str = "new"):
        """The price the revision gives a card under the one price rule (generator.facts.derive)."""
        return self.facts.revision_prices.get(rev.id, {}).get(gid, {}).get(basis)

    # -- names
    def model_name(self, mid: str) -> str:
        model = self.ds.models.get(mid)
        return model["name"] if model else mid

    @staticmethod
    def workload_name(wid: str) -> str:
        return BENCHMARK_WORKLOADS.get(wid, wid)

    def subject_name(self, m: dict) -> str:
        """What a measurement ran: the model's name, or the training workload's."""
        return self.workload_name(m["workload"]) if m.get("workload") else self.model_name(m["model"])

    def gpu_vendor(self, gid: str) -> str:
        return self.ds.gpus[gid]["vendor"]

    # -- model pages
    def models_by_size(self):
        return sorted(self.ds.models.items(), key=lambda kv: (kv[1]["parameters_b"], kv[0]))

    def model_fields(self, model):
        return [f for f in MODEL_FIELDS if model.get(f) is not None]

    def model_value(self, model, field: str):
        value = model[field]
        if field == "attention":
            return self.ui(f"attention.{value}")
        if field == "state_kind":
            return self.ui("model.state." + value.replace("-", "_"))
        if field == "vision_encoder":
            return self.ui("model.vision." + value)
        if field == "tied_embeddings":
            return self.ui("model.yes" if value else "model.no")
        if field == "release_date":
            return self.date(value)
        if isinstance(value, (int, float)):
            return self.num(value)
        return value

    def model_sources(self, model) -> list[str]:
        return list(dict.fromkeys(s if isinstance(s, str) else s["url"] for s in model["sources"]))

    def model_source_numbers(self, model, field: str) -> list[int]:
        urls = self.model_sources(model)
        out = []
        for s in model["sources"]:
            url, fields = (s, MODEL_SOURCED) if isinstance(s, str) else (s["url"], s.get("fields") or MODEL_SOURCED)
            if field in fields and urls.index(url) + 1 not in out:
                out.append(urls.index(url) + 1)
        return out

    def model_contexts(self, model):
        return list(memory_contexts(model))

    def model_memory(self, mid: str):
        """[(format label, [GiB at each context])]: weights, KV cache and the runtime's workspace."""
        native = self.facts.bundle.models[mid].get("native_weights")
        return [(self.fill_plain("model.as_published", format=native.upper()) if w == native else MEMORY_LABELS[w], row)
                for w, _runtime, row in self.facts.memory_table(mid)]

    def model_four_bit(self, mid: str):
        """GiB at 4,096 tokens in the model's 4-bit format (its own where it ships one, else Q4_K_M)."""
        native = self.facts.bundle.models[mid].get("native_weights")
        row = 0 if native and four_bit(native) else (1 if native else 0)
        return self.model_memory(mid)[row][1][0]

    # how many cards of each kind "Cards that run it" lists: a reader's own desk first
    CARDS_PER_SEGMENT = (("consumer", 6), ("workstation", 4), ("datacenter", 5), ("cloud", 2))

    def calc_query(self, mid: str, gid: str | None = None) -> Markup:
        """The large-model calculator's query for a model (and a card) under the conditions the
        model page's list was computed with (runtime, weights, context), so that the calculator
        opens on the setup the list shows."""
        pairs = [("model", mid), *((k, str(GRID_OPTIONS[k])) for k in ("runtime", "weights", "context"))]
        if gid is not None:
            pairs.append(("card", gid))
        return Markup(escape(urlencode(pairs)))  # URL-encoded, then escaped for the attribute

    def cards_for(self, mid: str):
        """The cards that hold the model alone (Q4_K_M, 4,096 tokens): the fastest of each segment
        (consumer cards, workstation cards, datacenter cards, cloud chips), so that the cards a reader
        can buy stand beside the datacenter ones. [(segment, [(gpu id, estimate)])]."""
        fits = self.facts.fastest_fits.get(mid, [])
        out = []
        for segment, count in self.CARDS_PER_SEGMENT:
            chosen = [(gid, e) for gid, e in fits if self.ds.gpus[gid]["segment"] == segment][:count]
            if chosen:
                out.append((segment, chosen))
        return out

    def runs_on(self, gid: str):
        cells = ((mid, self.facts.grid_cell(mid, gid)) for mid, _ in self.models_by_size())
        return [(mid, e) for mid, e in cells if e is not None]

    def measured_on_gpu(self, gid: str):
        return self.facts.measured_where("gpu", gid)

    def measured_for_model(self, mid: str):
        return self.facts.measured_where("model", mid)
