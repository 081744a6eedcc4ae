#!/usr/bin/python3
"""Record what llama.cpp's convert_hf_to_gguf.py writes for the general.* keys (tests/convert/data/metadata_expected.json).

    /usr/bin/python3 tests/convert/make_metadata_expected.py \
        --ref build/convert-ref --models build/convert-models --out tests/convert/data/metadata_expected.json

--ref is scripts/convert-ref.sh's folder (run_convert.py beside llama.cpp/), --models the folder of
tests/convert/make_models.py's checkpoints. Nothing here computes an expected value itself:

* "conversions": each case copies a small checkpoint (Tiny-Llama-SPM; Tiny-Qwen3-MoE for an expert model) into a
  folder of the case's name, writes the case's README.md / generation_config.json / config.json `_name_or_path`,
  runs the reference converter on it (f32, no --vocab-only: the size label needs the tensors) and records the keys
  of its output from general.architecture up to the first key that is not general.* (the hyperparameters follow),
  with their GGUF types, and the parameter counts of its tensors as gguf_writer counts them. A case the reference
  refuses is recorded with "ok": false.
* "size_labels", "model_ids", "titles", "naming", "templated": the reference's own functions (gguf.size_label,
  Metadata.get_model_id_components, Metadata.id_to_title, gguf.naming_convention, gguf.fill_templated_filename)
  called on inputs no tiny checkpoint can give (an 8B parameter count).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

GENERAL_TYPES = {}


def kv_entry(field, gguf):
    t = field.types
    T = gguf.GGUFValueType
    if t[0] == T.ARRAY:
        sub = t[1]
        vals = [field.parts[i] for i in field.data]
        if sub == T.STRING:
            return "[string]", [bytes(v).decode("utf-8") for v in vals]
        if sub == T.INT32:
            return "[i32]", [int(v[0]) for v in vals]
        return "[" + sub.name + "]", [v.tolist() for v in vals]
    part = field.parts[field.data[0]]
    if t[0] == T.STRING:
        return "string", bytes(part).decode("utf-8")
    if t[0] == T.UINT32:
        return "u32", int(part[0])
    if t[0] == T.INT32:
        return "i32", int(part[0])
    if t[0] == T.FLOAT32:
        return "f32", float(part[0])
    if t[0] == T.BOOL:
        return "bool", bool(part[0])
    return t[0].name, part.tolist()


def read_output(path, gguf):
    reader = gguf.GGUFReader(path)
    keys = []
    arch = None
    for name, field in reader.fields.items():
        if name.startswith("GGUF."):
            continue
        if not name.startswith("general."):
            break
        typ, val = kv_entry(field, gguf)
        if name == "general.architecture":
            arch = val
        keys.append({"key": name, "type": typ, "value": val})
    total = expert = 0
    for t in reader.tensors:
        n = int(t.n_elements)
        total += n
        if "_exps" in t.name:
            expert += n
    count = 0
    f = reader.fields.get(f"{arch}.expert_count")
    if f is not None:
        count = int(f.parts[f.data[0]][0])
    counts = {"total": total, "shared": total - expert, "expert": expert, "expert_count": count}
    return keys, counts


# (id, base checkpoint, folder name, README.md text or None, generation_config.json text or None (absent),
#  _name_or_path (None: as the base has it; "": removed), --model-name or None)
CASES = [
    ("plain", "Tiny-Llama-SPM", "Tiny-Llama-SPM", None, None, None, None),
    ("model_name", "Tiny-Llama-SPM", "Tiny-Llama-SPM", None, None, None, "minfer convert test"),
    ("dir_llama31", "Tiny-Llama-SPM", "Meta-Llama-3.1-8B-Instruct", None, None, None, None),
    ("dir_qwen_gguf", "Tiny-Llama-SPM", "Qwen2.5-0.5B-Instruct-GGUF", None, None, None, None),
    ("dir_small_label", "Tiny-Llama-SPM", "tiny-model-125K-chat-v2", None, None, None, None),
    ("dir_context_len", "Tiny-Llama-SPM", "mistral-7b-v0.1-32k", None, None, None, None),
    ("dir_quant_word", "Tiny-Llama-SPM", "phi-2-q8_0-lora", None, None, None, None),
    ("dir_words", "Tiny-Llama-SPM", "gpt2-medium", None, None, None, None),
    ("dir_bloom", "Tiny-Llama-SPM", "bloom-7b1", None, None, None, None),
    ("dir_sentence", "Tiny-Llama-SPM", "my model", None, None, None, None),
    ("dir_dots", "Tiny-Llama-SPM", "v1.5", None, None, None, None),
    ("name_or_path", "Tiny-Llama-SPM", "checkpoint", None, None, "meta-llama/Llama-2-7b-chat-hf", None),
    ("name_or_path_path", "Tiny-Llama-SPM", "checkpoint", None, None, "/home/me/models/llama", None),
    ("name_or_path_dot", "Tiny-Llama-SPM", "checkpoint", None, None, "./Llama-2-7b", None),
    ("gen_all", "Tiny-Llama-SPM", "Tiny-Llama-SPM", None,
     '{"sequence": "kt", "top_k": 40, "top_p": 0.95, "min_p": 0.05, "xtc_probability": 0.5, "xtc_threshold": 0.1,'
     ' "temperature": 0.7, "penalty_last_n": 64, "penalty_repeat": 1.1, "mirostat": 2, "mirostat_tau": 5.0,'
     ' "mirostat_eta": 0.1}', None, None),
    ("gen_ints_as_floats", "Tiny-Llama-SPM", "Tiny-Llama-SPM", None, '{"temperature": 1, "top_p": true, "top_k": null}', None, None),
    ("gen_malformed", "Tiny-Llama-SPM", "Tiny-Llama-SPM", None, '{"temperature": 0.6,', None, None),
    ("gen_empty_list", "Tiny-Llama-SPM", "Tiny-Llama-SPM", None, '[]', None, None),
    ("gen_list", "Tiny-Llama-SPM", "Tiny-Llama-SPM", None, '[1]', None, None),
    ("gen_top_k_float", "Tiny-Llama-SPM", "Tiny-Llama-SPM", None, '{"top_k": 1.5}', None, None),
    ("gen_temp_string", "Tiny-Llama-SPM", "Tiny-Llama-SPM", None, '{"temperature": "0.6"}', None, None),
    ("card_full", "Tiny-Llama-SPM", "Tiny-Llama-SPM",
     "---\nname: Card Name\nauthor: Someone\nversion: v2\norganization: Org\ndescription: A model.\nfinetune: Chat\n"
     "basename: card-base\nsize_label: 3B\nurl: https://example.com/m\ndoi: 10.1/x\nuuid: abc\nrepo_url: https://example.com/r\n"
     "license: mit\nlicense_name: MIT License\nlicense_link: https://example.com/l\n"
     "tags:\n- a\n- b\npipeline_tag: text-generation\nlanguage:\n- en\n- no\n- fr\n---\n# text\n", None, None, None),
    ("card_model_keys", "Tiny-Llama-SPM", "Tiny-Llama-SPM",
     "---\nmodel_name: MN\nmodel_creator: Creator\nmodel_type: llama\nmodel_version: '3'\nlanguages: de\n---\n", None, None, None),
    ("card_license_list", "Tiny-Llama-SPM", "Tiny-Llama-SPM", "---\nlicense:\n- mit\n- apache-2.0\n---\n", None, None, None),
    ("card_license_empty_list", "Tiny-Llama-SPM", "Tiny-Llama-SPM", "---\nlicense: []\n---\n", None, None, None),
    ("card_base_models", "Tiny-Llama-SPM", "Tiny-Llama-SPM",
     "---\nbase_model:\n- Qwen/Qwen3-0.6B-Base\n- https://huggingface.co/meta-llama/Llama-3.1-8B\n- https://example.com/model\n"
     "- name: Dict Model\n  organization: Dict Org\n  repo_url: https://example.com/d\n- 42\n- mistral-7b-v0.1\n---\n", None, None, None),
    ("card_base_model_str", "Tiny-Llama-SPM", "Tiny-Llama-SPM", "---\nbase_model: ./local/Model-v1.2-7B\n---\n", None, None, None),
    ("card_datasets", "Tiny-Llama-SPM", "Tiny-Llama-SPM",
     "---\ndatasets:\n- HuggingFaceH4/ultrachat_200k\n- https://huggingface.co/datasets/x\n- https://huggingface.co/org/ds-v2\n"
     "- name: D\n---\n", None, None, None),
    ("card_dataset_str", "Tiny-Llama-SPM", "Tiny-Llama-SPM", "---\ndataset: org/some-data\n---\n", None, None, None),
    ("card_not_dict", "Tiny-Llama-SPM", "Tiny-Llama-SPM", "---\n- a\n- b\n---\n", None, None, None),
    ("card_no_front_matter", "Tiny-Llama-SPM", "Tiny-Llama-SPM", "# Title\n---\nlicense: mit\n---\n", None, None, None),
    ("card_unclosed", "Tiny-Llama-SPM", "Tiny-Llama-SPM", "---\nlicense: mit\ntags: x\n", None, None, None),
    ("card_crlf_tabs", "Tiny-Llama-SPM", "Tiny-Llama-SPM", "---\r\nlicense: mit\r\ntags:\r\n\t- t1\r\n---\r\n", None, None, None),
    ("card_tags_merge", "Tiny-Llama-SPM", "Tiny-Llama-SPM", "---\ntags: solo\npipeline_tag:\n- p1\n- p2\n---\n", None, None, None),
    ("card_tags_ints", "Tiny-Llama-SPM", "Tiny-Llama-SPM", "---\ntags:\n- 1\n- 2\n---\n", None, None, None),
    ("card_tags_mixed", "Tiny-Llama-SPM", "Tiny-Llama-SPM", "---\ntags:\n- 1\n- a\n---\n", None, None, None),
    ("card_version_float", "Tiny-Llama-SPM", "Tiny-Llama-SPM", "---\nversion: 1.5\n---\n", None, None, None),
    ("card_version_zero", "Tiny-Llama-SPM", "Tiny-Llama-SPM", "---\nversion: 0\n---\n", None, None, None),
    ("card_version_date", "Tiny-Llama-SPM", "Tiny-Llama-SPM", "---\nversion: 2024-01-02\n---\n", None, None, None),
    ("card_name_null", "Tiny-Llama-SPM", "Tiny-Llama-SPM", "---\nname:\nauthor: ''\n---\n", None, None, None),
    ("card_quoted_no", "Tiny-Llama-SPM", "Tiny-Llama-SPM", "---\nlicense: 'yes'\nlanguage:\n- no\n- yes\n---\n", None, None, None),
    ("card_malformed", "Tiny-Llama-SPM", "Tiny-Llama-SPM", "---\nlicense: [mit\n---\n", None, None, None),
    ("card_name_overridden", "Tiny-Llama-SPM", "Tiny-Llama-SPM", "---\nname: 5\n---\n", None, None, "given"),
    ("card_empty", "Tiny-Llama-SPM", "Tiny-Llama-SPM", "", None, None, None),
    ("card_bare_dashes", "Tiny-Llama-SPM", "Tiny-Llama-SPM", "---\n---\n", None, None, None),
    ("card_base_model_null", "Tiny-Llama-SPM", "Tiny-Llama-SPM", "---\nbase_model:\ndatasets: {a: b}\n---\n", None, None, None),
    ("card_base_model_dict", "Tiny-Llama-SPM", "Tiny-Llama-SPM",
     "---\nbase_models:\n- {name: '', author: A, version: 0, description: D, url: U, doi: X, uuid: Y}\n---\n", None, None, None),
    ("card_url_newline", "Tiny-Llama-SPM", "Tiny-Llama-SPM", '---\nbase_model: "https://huggingface.co/org/M-7B\\n"\n---\n', None, None, None),
    ("card_tags_dict", "Tiny-Llama-SPM", "Tiny-Llama-SPM", "---\ntags: {a: b}\nlanguage: 5\n---\n", None, None, None),
    ("card_duplicate_key", "Tiny-Llama-SPM", "Tiny-Llama-SPM", "---\nlicense: a\nname: N\nlicense: b\n---\n", None, None, None),
    ("card_yaml_ints", "Tiny-Llama-SPM", "Tiny-Llama-SPM", "---\ntags: [0x1F, 017, 1_000, 1:30, -0b11, +5, 0]\n---\n", None, None, None),
    ("card_size_label_card", "Tiny-Llama-SPM", "Model-7B", "---\nsize_label: 3x1B\nmodel_size_label: x\n---\n", None, None, None),
    ("model_name_empty", "Tiny-Llama-SPM", "Tiny-Llama-SPM", None, None, None, ""),
    ("gen_bools", "Tiny-Llama-SPM", "Tiny-Llama-SPM", None, '{"top_k": true, "mirostat": false, "min_p": false, "sequence": ""}', None, None),
    ("gen_falsy_root", "Tiny-Llama-SPM", "Tiny-Llama-SPM", None, '0', None, None),
    ("moe", "Tiny-Qwen3-MoE", "Tiny-Qwen3-MoE", None, None, None, None),
    ("moe_dir_label", "Tiny-Qwen3-MoE", "Qwen3-30B-A3B", None, None, None, None),
]


def run_case(case, ref, models, tmp, gguf):
    cid, base, dir_name, readme, gen, name_or_path, model_name = case
    d = os.path.join(tmp, cid, dir_name)
    os.makedirs(os.path.dirname(d), exist_ok=True)
    shutil.copytree(os.path.join(models, base), d)
    for f in ("README.md", "generation_config.json"):
        p = os.path.join(d, f)
        if os.path.exists(p):
            os.remove(p)
    if readme is not None:
        with open(os.path.join(d, "README.md"), "w", encoding="utf-8", newline="") as fh:
            fh.write(readme)
    if gen is not None:
        with open(os.path.join(d, "generation_config.json"), "w", encoding="utf-8") as fh:
            fh.write(gen)
    with open(os.path.join(d, "config.json"), encoding="utf-8") as fh:
        config = json.load(fh)
    config.pop("_name_or_path", None)
    if name_or_path is not None:
        config["_name_or_path"] = name_or_path
    config_text = json.dumps(config, indent=2)
    with open(os.path.join(d, "config.json"), "w", encoding="utf-8") as fh:
        fh.write(config_text)
    out = os.path.join(tmp, cid + ".gguf")
    cmd = [sys.executable, os.path.join(ref, "run_convert.py"), d, "--outfile", out, "--outtype", "f32"]
    if model_name is not None:
        cmd += ["--model-name", model_name]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    rec = {"id": cid, "base": base, "dir_name": dir_name, "readme": readme, "generation_config": gen,
           "config": config_text, "model_name": model_name, "ok": proc.returncode == 0}
    if proc.returncode == 0:
        rec["keys"], rec["counts"] = read_output(out, gguf)
    else:
        rec["error"] = proc.stderr.strip().splitlines()[-1][:300] if proc.stderr.strip() else ""
    return rec


SIZES = [  # total, shared, expert, expert count
    (0, 0, 0, 0), (1, 1, 0, 0), (999, 999, 0, 0), (1000, 1000, 0, 0), (1001, 1001, 0, 0), (12345, 12345, 0, 0),
    (125_000, 125_000, 0, 0), (999_999, 999_999, 0, 0), (1_000_000, 1_000_000, 0, 0), (1_000_001, 1_000_001, 0, 0),
    (9_950_000, 9_950_000, 0, 0), (10_485_760, 10_485_760, 0, 0), (494_032_768, 494_032_768, 0, 0),
    (999_999_999, 999_999_999, 0, 0), (1_000_000_001, 1_000_000_001, 0, 0), (1_235_814_400, 1_235_814_400, 0, 0),
    (8_030_261_248, 8_030_261_248, 0, 0), (70_553_706_496, 70_553_706_496, 0, 0), (1_500_000_000_000, 0, 0, 0),
    (46_702_792_704, 1_600_000_000, 45_102_792_704, 8), (30_532_122_624, 1_300_000_000, 29_232_122_624, 128),
    (2_000_000, 500_000, 1_500_000, 4), (-7_000_000, -7_000_000, 0, 0), (95_000, 95_000, 0, 0), (9_500, 9_500, 0, 0),
]

MODEL_IDS = [
    ("Meta-Llama-3.1-8B-Instruct", 8_030_261_248), ("Meta-Llama-3.1-8B-Instruct", 0), ("Meta-Llama-3.1-8B-Instruct", 125_000),
    ("meta-llama/Meta-Llama-3.1-8B-Instruct", 8_030_261_248), ("Qwen2.5-0.5B-Instruct-GGUF", 494_032_768),
    ("Qwen/Qwen3-0.6B-Base", 0), ("mistralai/Mixtral-8x7B-Instruct-v0.1", 46_702_792_704),
    ("bigscience/bloom-7b1", 7_069_016_064), ("gpt2-medium", 354_823_168), ("gpt2-xl-1.5B", 1_557_611_200),
    ("TheBloke/Mistral-7B-Instruct-v0.2-GGUF", 7_241_732_096), ("phi-2-q8_0", 2_779_683_840),
    ("a model with spaces", 0), ("./models/x-7B", 7_000_000_000), ("../x", 0), ("--7B--", 7_000_000_000),
    ("Llama-3-8B-Instruct-262k", 8_030_261_248), ("lora-7B-LoRA", -40_000_000), ("org/", 0), ("", 0),
    ("v1.5-chat", 0), ("iter3-1_5B", 1_500_000_000), ("Model-A3B", 3_000_000_000), ("Model-70B-mini-small", 70_000_000_000),
    ("SmolLM2-135M-Instruct", 134_515_008), ("x-1.2T", 0), ("NAME-BF16-FP32-iq4_xs", 0), ("Ünïcode-Modell-7B", 7_000_000_000),
]

TITLES = ["meta-llama", "qwen3-0.6b-base", "v1.5 model", "SmolLM2 135M", "hello  world-", "  x-y-z  ", "3b-chat",
          "ünïcode wörld", "ǆemo", "ßtraße", "can't-stop", "mixed CASE words", "o'neil's"]

NAMING = [  # model name, base name, finetune, version, size label, output type, model type
    ("Tiny Llama", None, None, None, "125K", "F32", None),
    ("my model/x", "Meta-Llama", "Instruct", "v3.1", "8B", "q8_0", None),
    (None, None, None, None, None, None, "vocab"),
    (" spaced name ", None, "chat tuned", "1 0", None, "MOSTLY BF16", "LoRA"),
]

TEMPLATES = [("out-{ftype}.gguf", "Q8_0"), ("out-{FTYPE}-{outtype}-{OUTTYPE}.gguf", "bf16"), ("{}.gguf", "F16"),
             ("plain.gguf", None), ("x-{ftype}.gguf", None)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ref", required=True)
    ap.add_argument("--models", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    sys.path.insert(0, os.path.join(args.ref, "llama.cpp", "gguf-py"))
    import gguf  # the reference's own gguf-py
    from gguf.metadata import Metadata

    with open(os.path.join(args.ref, "llama.cpp", "COMMIT"), encoding="utf-8") as fh:
        commit = fh.read().strip()
    result = {"reference": "llama.cpp " + commit + " (convert_hf_to_gguf.py, gguf-py)", "conversions": []}
    with tempfile.TemporaryDirectory() as tmp:
        for case in CASES:
            rec = run_case(case, args.ref, args.models, tmp, gguf)
            print(case[0], "ok" if rec["ok"] else "refused: " + rec["error"], file=sys.stderr)
            result["conversions"].append(rec)
    result["size_labels"] = [{"total": t, "shared": s, "expert": e, "expert_count": c,
                              "label": gguf.size_label(t, s, e, c)} for t, s, e, c in SIZES]
    result["model_ids"] = [{"id": i, "total": t, "components": list(Metadata.get_model_id_components(i, t))}
                           for i, t in MODEL_IDS]
    result["titles"] = [{"text": s, "title": Metadata.id_to_title(s)} for s in TITLES]
    result["naming"] = [{"args": list(a), "name": gguf.naming_convention(*a)} for a in NAMING]
    result["templated"] = [{"filename": f, "output_type": o, "result": gguf.fill_templated_filename(f, o)}
                           for f, o in TEMPLATES]
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump(result, fh, indent=1, ensure_ascii=False)
        fh.write("\n")


if __name__ == "__main__":
    main()
