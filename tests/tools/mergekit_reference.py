#!/usr/bin/env python3
"""An independent reference for minfer's merge arithmetic (src/toolbox/merge_math.*): mergekit's
linear, slerp, task_arithmetic and ties on one tensor, translated to numpy from mergekit's own source
(github.com/arcee-ai/mergekit at a6e4028), never from minfer's code. numpy only (Debian's
python3-numpy); nothing of minfer or torch is imported.

Computation is float64 throughout, with one exception that is mergekit's own: a task vector is
`x - base` in the tensors' dtype (get_task_vectors: `x = tensors[model].to(base.dtype); delta = x -
base`), and minfer's sources are f32 (exact dequantization), so the deltas are float32 differences,
widened to float64 afterwards. The magnitudes magnitude() ranks are those float32 deltas' (it ranks
`tensor.abs().float()`).

Where mergekit is not deterministic: magnitude() keeps `torch.argsort(w, descending=True)[:k]`, and
argsort is not stable, so which of several elements equal to the k-th magnitude are kept is not
specified. This reference keeps the first of them in index order (a stable sort of -|delta|): the
choice minfer documents.

    mergekit_reference.py DIR

Every subdirectory of DIR holding a `case.txt` is one merge:
  case.txt    `key value...` lines: method (linear|slerp|task_arithmetic|ties), n_values, models,
              base, t, normalize, rescale, int8_mask, lambda (numbers as %.17g; 0/1 for booleans),
              weights and densities (one number per model)
  inputs.f32  the models' values, model after model, little-endian float32
It writes beside them:
  out.f64     the merged tensor, little-endian float64 (mergekit's result before its final cast)
  kept.u8     ties only: per model (model after model), 1 where magnitude() keeps the delta (every
              element of the base model and of a model whose delta is not sparsified), else 0
  info.txt    `lerp 0|1` for slerp (whether slerp() took its colinear branch), `k I K` for ties (the
              k magnitude() keeps for model I; absent when it returns the delta as it is)
Exit codes: 0 done, 1 a case that mergekit refuses or this script cannot read (message on stderr),
77 numpy missing.
"""

import os
import sys

try:
    import numpy as np
except ImportError:  # the caller decides whether that is a failure (CI) or a loud skip
    sys.stderr.write("mergekit_reference: numpy is not installed (Debian: python3-numpy)\n")
    sys.exit(77)


# ---- mergekit/merge_methods/linear.py: LinearMergeTask.execute ---------------------------------------
def linear(tensors, weights, normalize):
    tensors = np.stack(tensors, axis=0)
    w = np.asarray(weights, dtype=np.float64).reshape(-1, 1)
    res = (w * tensors).sum(axis=0)
    if normalize:
        res = res / w.sum(axis=0)
    return res


# ---- mergekit/merge_methods/slerp.py: SlerpTask.execute, slerp, lerp, normalize ----------------------
def lerp(t, v0, v1):
    return (1 - t) * v0 + t * v1


def normalize(v, eps):
    norm_v = np.linalg.norm(v)
    if norm_v > eps:
        v = v / norm_v
    return v


def slerp(t, v0, v1, DOT_THRESHOLD=0.9995, eps=1e-8):
    """Returns the result and whether the colinear branch (lerp) was taken."""
    v0_copy = np.copy(v0)
    v1_copy = np.copy(v1)
    v0 = normalize(v0, eps)
    v1 = normalize(v1, eps)
    dot = np.sum(v0 * v1)
    if np.abs(dot) > DOT_THRESHOLD:
        return lerp(t, v0_copy, v1_copy), True
    theta_0 = np.arccos(dot)
    sin_theta_0 = np.sin(theta_0)
    theta_t = theta_0 * t
    sin_theta_t = np.sin(theta_t)
    s0 = np.sin(theta_0 - theta_t) / sin_theta_0
    s1 = sin_theta_t / sin_theta_0
    return s0 * v0_copy + s1 * v1_copy, False


def slerp_task(tensors, base, t):
    if len(tensors) == 1:
        return tensors[0], None
    if len(tensors) != 2:
        raise ValueError("Slerp merge expects exactly two models")
    a, b = tensors[base], tensors[1 - base]  # the base model first
    return slerp(t, a, b)


# ---- mergekit/sparsify.py: magnitude, rescaled_masked_tensor (rescale_norm l1) -----------------------
def rescaled_masked_tensor(tensor, mask, rescale, eps=1e-7):
    masked = tensor * mask
    if not rescale:
        return masked
    before_scale = np.abs(tensor).sum()
    after_scale = np.abs(masked).sum()
    if before_scale < eps or after_scale < eps:
        return masked
    return masked * (before_scale / after_scale)


def magnitude(tensor, magnitudes_f32, density, rescale):
    """Returns (sparsified tensor, mask or None, k or None)."""
    if density >= 1:
        return tensor, None, None
    k = int(density * tensor.size)
    if not k > 0:
        raise ValueError("not gonna zero out the whole tensor buddy (k = 0)")
    mask = np.zeros_like(tensor)
    w = magnitudes_f32.reshape(-1)
    # argsort(w, descending=True)[:k], equal magnitudes in index order (the documented choice).
    topk = np.argsort(-w, kind="stable")[:k]
    mask.reshape(-1)[topk] = 1
    return rescaled_masked_tensor(tensor, mask, rescale), mask, k


# ---- mergekit/merge_methods/generalized_task_arithmetic.py: GTATask.execute, get_mask ----------------
def get_mask(delta, method="sum"):
    sign = np.sign(delta)
    if method == "sum":
        sign_weight = delta.sum(axis=0)
        majority_sign = (sign_weight >= 0).astype(np.float64) * 2 - 1
    elif method == "count":
        majority_sign = (sign.sum(axis=0) >= 0).astype(np.float64) * 2 - 1
    else:
        raise ValueError(method)
    return sign == majority_sign


def gta(tensors_f32, base, weights, densities, sparsify, consensus, normalize, rescale, lambda_):
    """task_arithmetic: sparsify=False, consensus=None; ties: sparsify=True (magnitude), consensus="sum"
    (mergekit/merge_methods/registry.py). Returns (result, {model: mask}, {model: k})."""
    base_t = tensors_f32[base]
    tvs = []
    for i, x in enumerate(tensors_f32):
        if i == base:
            continue
        delta32 = (x - base_t).astype(np.float32)  # in the tensors' dtype (float32)
        tvs.append({"model": i, "delta": delta32.astype(np.float64), "mag": np.abs(delta32),
                    "weight": weights[i], "density": densities[i]})
    if not tvs:
        return base_t.astype(np.float64), {}, {}
    masks, ks = {}, {}
    if sparsify:
        for tv in tvs:
            tv["delta"], mask, k = magnitude(tv["delta"], tv["mag"], tv["density"], rescale)
            if mask is not None:
                masks[tv["model"]] = mask
                ks[tv["model"]] = k
    deltas = np.stack([tv["delta"] for tv in tvs], axis=0)
    w = np.asarray([tv["weight"] for tv in tvs], dtype=np.float64).reshape(-1, 1)
    weighted_deltas = deltas * w
    if consensus:
        mask = get_mask(weighted_deltas, method=consensus).astype(np.float64)
        mixed_delta = (weighted_deltas * mask).sum(axis=0)
        divisor = (w * mask).sum(axis=0)
        divisor[divisor == 0] = 1
    else:
        mixed_delta = weighted_deltas.sum(axis=0)
        divisor = w.sum(axis=0)
        divisor[np.abs(divisor) < 1e-8] = 1
    if normalize:
        mixed_delta = mixed_delta / divisor
    if lambda_ != 1:
        mixed_delta = mixed_delta * lambda_
    return base_t.astype(np.float64) + mixed_delta, masks, ks


# ---- the cases ----------------------------------------------------------------------------------------
def read_case(path):
    fields = {}
    with open(os.path.join(path, "case.txt"), encoding="utf-8") as f:
        for line in f:
            parts = line.split()
            if parts:
                fields[parts[0]] = parts[1:]
    n = int(fields["n_values"][0])
    m = int(fields["models"][0])
    raw = np.fromfile(os.path.join(path, "inputs.f32"), dtype="<f4")
    if raw.size != n * m:
        raise ValueError(f"inputs.f32 holds {raw.size} values, expected {n * m}")
    return fields, [raw[i * n:(i + 1) * n].astype(np.float32) for i in range(m)]


def run_case(path):
    fields, tensors = read_case(path)
    method = fields["method"][0]
    base = int(fields["base"][0])
    t = float(fields["t"][0])
    norm = fields["normalize"][0] == "1"
    rescale = fields["rescale"][0] == "1"
    lambda_ = float(fields["lambda"][0])
    weights = [float(v) for v in fields["weights"]]
    densities = [float(v) for v in fields["densities"]]
    info = []
    masks = None
    if method == "linear":
        out = linear([x.astype(np.float64) for x in tensors], weights, norm)
    elif method == "slerp":
        out, lerped = slerp_task([x.astype(np.float64) for x in tensors], base, t)
        if lerped is not None:
            info.append(f"lerp {int(lerped)}")
    elif method in ("task_arithmetic", "ties"):
        ties = method == "ties"
        out, masks, ks = gta(tensors, base, weights, densities, sparsify=ties, consensus="sum" if ties else None,
                             normalize=norm, rescale=rescale, lambda_=lambda_)
        for i in sorted(ks):
            info.append(f"k {i} {ks[i]}")
    else:
        raise ValueError(f"unknown method {method}")
    np.asarray(out, dtype="<f8").tofile(os.path.join(path, "out.f64"))
    if method == "ties":
        kept = np.ones((len(tensors), tensors[0].size), dtype=np.uint8)
        for i, mask in masks.items():
            kept[i] = (mask.reshape(-1) != 0).astype(np.uint8)
        kept.tofile(os.path.join(path, "kept.u8"))
    with open(os.path.join(path, "info.txt"), "w", encoding="utf-8") as f:
        f.write("".join(line + "\n" for line in info))


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: mergekit_reference.py DIR\n")
        return 2
    root = argv[1]
    done = 0
    for name in sorted(os.listdir(root)):
        path = os.path.join(root, name)
        if not os.path.isfile(os.path.join(path, "case.txt")):
            continue
        try:
            run_case(path)
        except (ValueError, KeyError, OSError) as e:
            sys.stderr.write(f"mergekit_reference: {name}: {e}\n")
            return 1
        done += 1
    print(f"mergekit_reference: {done} cases")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
