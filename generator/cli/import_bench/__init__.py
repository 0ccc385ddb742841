"""``python -m generator import-bench FILE``: a measurements file from llama-bench's or vLLM's output.

Reads llama-bench's four text outputs (``-o json``, ``-o jsonl``, ``-o csv`` and the default
markdown table) and the JSON that ``vllm bench serve --save-result`` (formerly
``benchmarks/benchmark_serving.py``) writes. Every condition the file states is taken from it;
what it does not state (where the results are published, when, and where the file cannot tell:
the GPU, the model, the GPU count) is asked for on a terminal, or given as options. Without a
terminal, or with ``--no-input``, a missing fact ends the command with exit 2 and one message that
lists every option still needed; nothing is written.

Exit codes: 0 written (or printed with --dry-run), 1 the written file does not validate (it is
removed again) or data/ has problems, 2 the input cannot be read or a fact is missing.

Modules: ``readers`` (the output formats to rows), ``matching`` (device and model names to ids of
data/), ``questions`` (the facts given as options or asked for), ``llama_rows`` and ``vllm_rows``
(rows to results), ``writer`` (the YAML), ``options`` (the command line), ``command`` (the run).
"""
