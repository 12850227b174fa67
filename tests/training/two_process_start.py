"""Run by ``test_llm_chain.py`` under ``torchrun --nproc_per_node 2`` (CPU, gloo): both processes
ask ``start_folder`` for an adapter's start; process 0 writes it, slowly, and process 1 must wait
for it before loading it. Each process records the folder it got and its weights' checksum."""

import json
import os
import sys
import time
from pathlib import Path

from training.llm.start_model import load_text_model, start_folder

out, adapter = Path(sys.argv[1]), sys.argv[2]
rank = os.environ["RANK"]


def slow_load(model: str):
    time.sleep(3)  # process 1 would find no start/ yet, unless it waits
    return load_text_model(model)


def never(model: str):
    raise AssertionError("only the main process writes start/")


start = start_folder(adapter, out, slow_load if rank == "0" else never)
model, _ = load_text_model(start)
checksum = sum(float(p.double().sum()) for p in model.state_dict().values())
(out.parent / f"start_{rank}.json").write_text(json.dumps({"start": start, "checksum": checksum}))
