"""The options of ``python -m generator import-bench``, apart from the command so that every start
of ``python -m generator`` reads them without importing the import itself (main.py runs
``command.run``)."""
from __future__ import annotations


def add_parser(subparsers):
    p = subparsers.add_parser("import-bench", help="write a measurements file from llama-bench's output "
                                                   "(json, jsonl, csv, markdown) or vLLM's benchmark JSON")
    p.add_argument("file", metavar="FILE", help="the benchmark's output (- reads standard input)")
    p.add_argument("--source", help="public address of the results (asked for when missing)")
    p.add_argument("--date", help="publication date of the results, YYYY-MM-DD (asked for when missing)")
    p.add_argument("--publisher", help="who ran them (default: the owner in a github.com, gitlab.com or "
                                       "huggingface.co address)")
    p.add_argument("--title", help="the file's title (default: tool, model, format and GPU)")
    p.add_argument("--gpu", help="GPU id, where the output names none or one that data/gpus lacks")
    p.add_argument("--gpus", help="GPUs used, where the output does not say")
    p.add_argument("--model", help="model id or Hugging Face repository, where the output's name is not one")
    p.add_argument("--weights", help="weight format (vLLM, where the model id names none)")
    p.add_argument("--batch", help="requests at once (vLLM, where --max-concurrency was not set)")
    p.add_argument("--runtime-version", help="default: llama.cpp's build number, or vLLM's recorded version, "
                                             "else unknown")
    p.add_argument("--id", help="the file's id (default: tool-gpu-model-date)")
    p.add_argument("--out", help="where to write (default: data/measurements/<id>.yaml)")
    p.add_argument("--dry-run", action="store_true", help="print the YAML, write nothing")
    p.add_argument("--no-input", action="store_true", help="never ask: a missing fact exits 2")
    p.add_argument("--data", default="data", help="the data folder (default: data)")
    return p
