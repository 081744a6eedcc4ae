#!/usr/bin/env python3
"""Report documents (docs/REPORT_JSON.md, version 1) for the browser tests of the report page.

Written here from the schema alone, independently of the C++ builder of `minfer report`: the page is
tested against the contract, not against one implementation of it. Standard library only.

  small_model()   one model with values: 3 layers, biases (two tensors in a cell), f32/f16/q4_K/q6_K,
                  a NaN and an Inf count, a tensor without statistics, a vocabulary with special,
                  invisible and look-alike tokens, a truncated array, a long string value
  compare()       B (q4_K) against reference A (f16): errors with one outlier, nulls and a "nan",
                  tensors in one model only, a shape mismatch, an importance matrix
  scale()         256,000 tokens and 1,000 tensors with 64-bin histograms
  hostile()       markup and script in a token, a key, a string value, a tensor name and more

Numbers are written as the contract says: an f32 statistic with the fewest digits that round-trip
the f32, a double measure with 17 significant digits, non-finite values as "nan"/"inf"/"-inf".

  python3 report_docs.py OUTDIR    writes small.json, compare.json, scale.json, hostile.json
"""

import json
import math
import os
import random
import struct
import sys

HOSTILE_SCRIPT = '</script><script>window.__pwned=1</script>'
HOSTILE_IMG = '<img src=x onerror="window.__pwned=1">'
HOSTILE = HOSTILE_SCRIPT + HOSTILE_IMG


# --- JSON with number texts chosen here -------------------------------------------------------

class Raw:
    """A JSON number written exactly as `text`."""

    def __init__(self, text):
        self.text = text


def f32(x):
    """An f32 value: the fewest digits that give the same f32 back (std::to_chars), or the
    non-finite string."""
    if math.isnan(x):
        return 'nan'
    if math.isinf(x):
        return 'inf' if x > 0 else '-inf'
    bits = struct.pack('<f', x)
    for digits in range(1, 10):
        text = '%.*g' % (digits, struct.unpack('<f', bits)[0])
        if struct.pack('<f', float(text)) == bits:
            return Raw(text)
    raise AssertionError(x)


def f64(x):
    """A double measure: 17 significant digits, or the non-finite string."""
    if x is None:
        return None
    if math.isnan(x):
        return 'nan'
    if math.isinf(x):
        return 'inf' if x > 0 else '-inf'
    return Raw('%.17g' % x)


def dumps(value):
    """JSON text; Raw numbers as written, everything else as json.dumps writes it."""
    parts = []

    def walk(v):
        if isinstance(v, Raw):
            parts.append(v.text)
        elif isinstance(v, dict):
            parts.append('{')
            for i, (k, x) in enumerate(v.items()):
                if i:
                    parts.append(',')
                parts.append(json.dumps(k))
                parts.append(':')
                walk(x)
            parts.append('}')
        elif isinstance(v, (list, tuple)):
            parts.append('[')
            for i, x in enumerate(v):
                if i:
                    parts.append(',')
                walk(x)
            parts.append(']')
        else:
            assert not isinstance(v, float) or math.isfinite(v), v
            parts.append(json.dumps(v))

    walk(value)
    return ''.join(parts)


def loads(text):
    """The document as a test sees it (Raw numbers read back as Python numbers)."""
    return json.loads(text)


# --- the parts of a document --------------------------------------------------------------------

TYPE_BITS = {'f32': 32.0, 'f16': 16.0, 'bf16': 16.0, 'q8_0': 8.5, 'q6_K': 6.5625, 'q5_K': 5.5,
             'q4_K': 4.5, 'q4_0': 4.5, 'iq2_xs': 2.3125}


def split_name(name):
    """(layer, role) of a tensor name, as the schema defines them."""
    parts = name.split('.')
    layer = None
    if len(parts) >= 3 and parts[0] == 'blk' and parts[1].isdigit():
        layer = int(parts[1])
        parts = parts[2:]
    if parts and parts[-1] in ('weight', 'bias'):
        parts = parts[:-1]
    return layer, '.'.join(parts)


def stats_of(rng, count, nan=0, inf=0, spread=0.05):
    """STATS of `count` values drawn here; min/max/mean/std over the finite ones, 64 bins."""
    n = min(count, 512)
    values = [struct.unpack('<f', struct.pack('<f', rng.gauss(0.0, spread)))[0] for _ in range(n)]
    values[0] = 0.0
    lo, hi = min(values), max(values)
    mean = sum(values) / n
    std = math.sqrt(sum((v - mean) ** 2 for v in values) / n)
    bins = 64
    width = struct.unpack('<f', struct.pack('<f', (hi - lo) / bins))[0]
    counts = [0] * bins
    for v in values:
        counts[min(bins - 1, int((v - lo) / width))] += 1
    return {
        'count': count, 'finite': count - nan - inf, 'nan': nan, 'inf': inf,
        'zeros': sum(1 for v in values if v == 0.0),
        'min': f32(lo), 'max': f32(hi), 'mean': f32(mean), 'std': f32(std),
        'histogram': {'lo': f32(lo), 'width': f32(width), 'counts': counts},
    }


def tensor(name, ttype, shape, offset, rng=None, stats=True, nan=0, inf=0):
    layer, role = split_name(name)
    elements = 1
    for d in shape:
        elements *= d
    nbytes = int(elements * TYPE_BITS[ttype] / 8)
    t = {
        'name': name, 'type': ttype, 'shape': list(shape), 'elements': elements, 'bytes': nbytes,
        'offset': offset, 'part': 1, 'layer': layer, 'role': role,
        'bits_per_weight': Raw(repr(8.0 * nbytes / elements)),
        'stats': stats_of(rng, elements, nan, inf) if rng is not None and stats else None,
    }
    return t


def place(tensors):
    """Offsets in file order, aligned to 32."""
    offset = 0
    for t in tensors:
        t['offset'] = offset
        offset += (t['bytes'] + 31) // 32 * 32
    return offset


def layers_of(tensors, count, errors=None):
    roles, cells = [], {}
    for t in tensors:
        if t['layer'] is None:
            continue
        if t['role'] not in roles:
            roles.append(t['role'])
        key = (t['layer'], t['role'])
        cell = cells.setdefault(key, {'layer': t['layer'], 'role': t['role'], 'tensors': [], 'bytes': 0,
                                      'elements': 0, 'bits_per_weight': None, 'rmse': None, 'nmse': None})
        cell['tensors'].append(t['name'])
        cell['bytes'] += t['bytes']
        cell['elements'] += t['elements']
    for cell in cells.values():
        cell['bits_per_weight'] = Raw(repr(8.0 * cell['bytes'] / cell['elements']))
        if errors is not None:
            measured = [errors[n] for n in cell['tensors'] if n in errors]
            if measured:
                cell['rmse'] = f64(max(e['_rmse'] for e in measured))
                cell['nmse'] = f64(max(e['_nmse'] for e in measured))
    ordered = sorted(cells.values(), key=lambda c: (c['layer'], roles.index(c['role'])))
    return {'count': count, 'roles': roles, 'cells': ordered}


def breakdown(tensors, key):
    groups = {}
    for t in tensors:
        g = groups.setdefault(t[key], {key: t[key], 'tensors': 0, 'bytes': 0, 'elements': 0})
        g['tensors'] += 1
        g['bytes'] += t['bytes']
        g['elements'] += t['elements']
    return sorted(groups.values(), key=lambda g: -g['bytes'])


def array_kv(key, item_type, items_all, cap=1024, text=str):
    items = [text(x) for x in items_all[:cap]]
    shown = ', '.join(json.dumps(i) if item_type == 'string' else i for i in items[:3])
    return {'key': key, 'type': 'array[%s]' % item_type,
            'value': '[' + shown + (', \u2026]' if len(items_all) > 3 else ']'),
            'count': len(items_all), 'items': items, 'truncated': len(items) < len(items_all)}


def summary(location, arch, tensors, *, file_type, name, ctx, blocks, vocab, kv_count, tokenizer='gpt2'):
    params = sum(t['elements'] for t in tensors)
    tbytes = sum(t['bytes'] for t in tensors)
    return {
        'location': location, 'file_bytes': tbytes + 12345, 'parts': 1, 'version': 3, 'alignment': 32,
        'kv_count': kv_count, 'tensor_count': len(tensors), 'architecture': arch, 'name': name,
        'file_type': file_type, 'parameters': params, 'tensor_bytes': tbytes,
        'bits_per_weight': Raw(repr(8.0 * tbytes / params)), 'context_length': ctx, 'block_count': blocks,
        'tokenizer': tokenizer, 'vocab_size': vocab,
    }


def vocabulary(texts, rng, special):
    types = []
    for t in texts:
        if t.startswith('<|') or t in ('<s>', '</s>', '<unk>'):
            types.append(3)
        elif t.startswith('<0x'):
            types.append(6)
        else:
            types.append(1)
    scores = [f32(-float(i) / 7.0) for i in range(len(texts))]
    return {'model': 'gpt2', 'count': len(texts), 'texts': texts, 'types': types, 'scores': scores,
            'truncated': False, 'special': special}


def model_tensors(rng, n_layers, *, qtype='q4_K', values=True, biases=True, dim=64, ff=128, vocab=320):
    ts = [tensor('token_embd.weight', qtype, (dim * 4, vocab), 0, rng, values)]
    for i in range(n_layers):
        p = 'blk.%d.' % i
        ts.append(tensor(p + 'attn_norm.weight', 'f32', (dim,), 0, rng, values))
        ts.append(tensor(p + 'attn_q.weight', qtype, (dim * 4, dim * 4), 0, rng, values))
        if biases:
            ts.append(tensor(p + 'attn_q.bias', 'f32', (dim * 4,), 0, rng, values))
        ts.append(tensor(p + 'attn_k.weight', qtype, (dim * 4, dim), 0, rng, values))
        ts.append(tensor(p + 'attn_v.weight', 'q6_K' if qtype == 'q4_K' else qtype, (dim * 4, dim), 0, rng, values))
        ts.append(tensor(p + 'attn_output.weight', qtype, (dim * 4, dim * 4), 0, rng, values))
        ts.append(tensor(p + 'ffn_norm.weight', 'f32', (dim,), 0, rng, values))
        ts.append(tensor(p + 'ffn_gate.weight', qtype, (dim * 4, ff * 2), 0, rng, values))
        ts.append(tensor(p + 'ffn_up.weight', qtype, (dim * 4, ff * 2), 0, rng, values))
        ts.append(tensor(p + 'ffn_down.weight', 'q6_K' if qtype == 'q4_K' else qtype, (ff * 2, dim * 4), 0, rng, values))
    ts.append(tensor('output_norm.weight', 'f32', (dim * 4,), 0, rng, values))
    ts.append(tensor('output.weight', 'q6_K' if qtype == 'q4_K' else qtype, (dim * 4, vocab), 0, rng, values))
    place(ts)
    return ts


def small_texts():
    words = ['hello', ' hello', 'Hello', 'HELLO', 'world', ' world', 'the', ' the', '\n', '\t', ' ', '  ',
             'a\u200bb', 'x\u202ey', 'caf\u00e9', '\u65e5\u672c', '\U0001f600', '<0x0A>', '<0x00>', 'tab\there',
             '12', '5', '123', 'id5']
    texts = ['<unk>', '<s>', '</s>'] + words
    i = 0
    while len(texts) < 317:
        texts.append('tok%d' % i)
        i += 1
    texts += ['<|im_start|>', '<|im_end|>', '<|endoftext|>']
    return texts


CHAT_TEMPLATE = ("{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + "
                 "'<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}")


def small_model(values=True):
    rng = random.Random(31)
    n_layers = 3
    ts = model_tensors(rng, n_layers, values=values)
    if values:
        # a NaN and two Infs in one tensor; a tensor without statistics
        t = next(t for t in ts if t['name'] == 'blk.1.ffn_down.weight')
        t['stats'] = stats_of(rng, t['elements'], nan=1, inf=2)
        next(t for t in ts if t['name'] == 'blk.2.attn_k.weight')['stats'] = None
    texts = small_texts()
    vocab = vocabulary(texts, rng, {'bos': 1, 'eos': 2, 'unknown': 0, 'eot': len(texts) - 2})
    long_text = ' '.join(['This is a long description of the model, repeated.'] * 20)
    metadata = [
        {'key': 'general.architecture', 'type': 'string', 'value': 'llama'},
        {'key': 'general.name', 'type': 'string', 'value': 'Tiny Llama Test'},
        {'key': 'general.description', 'type': 'string', 'value': long_text},
        {'key': 'general.file_type', 'type': 'u32', 'value': '15'},
        {'key': 'llama.block_count', 'type': 'u32', 'value': str(n_layers)},
        {'key': 'llama.context_length', 'type': 'u32', 'value': '4096'},
        {'key': 'llama.rope.freq_base', 'type': 'f32', 'value': '500000'},
        {'key': 'tokenizer.ggml.model', 'type': 'string', 'value': 'gpt2'},
        array_kv('tokenizer.ggml.tokens', 'string', texts),
        array_kv('tokenizer.ggml.token_type', 'i32', vocab['types']),
        array_kv('tokenizer.ggml.merges', 'string', ['a b', 'c d', 'e f', 'g h', 'i j'], cap=2),
        {'key': 'tokenizer.ggml.bos_token_id', 'type': 'u32', 'value': '1'},
        {'key': 'tokenizer.chat_template', 'type': 'string', 'value': CHAT_TEMPLATE},
        array_kv('llama.empty_list', 'i32', []),
    ]
    model = summary('models/tiny-q4_k_m.gguf', 'llama', ts, file_type='Q4_K_M', name='Tiny Llama Test', ctx=4096,
                    blocks=n_layers, vocab=len(texts), kv_count=len(metadata))
    return {
        'minfer_report': 1, 'generator': 'report_docs.py', 'mode': 'model', 'values': values,
        'models': [model], 'metadata': metadata, 'tensors': ts, 'layers': layers_of(ts, n_layers),
        'by_type': breakdown(ts, 'type'), 'by_role': breakdown(ts, 'role'), 'tokens': vocab,
        'chat_template': CHAT_TEMPLATE, 'compare': None,
    }


def compare():
    rng = random.Random(7)
    n_layers = 4
    a = model_tensors(rng, n_layers, qtype='f16', values=False, biases=True)
    b = model_tensors(rng, n_layers, qtype='q4_K', values=False, biases=True)
    # only in A: a bias B lost; only in B: a tensor A lacks; a shape that differs
    b = [t for t in b if t['name'] != 'blk.3.attn_q.bias']
    b.insert(len(b) - 2, tensor('rope_freqs.weight', 'f32', (32,), 0))
    last_block = max(i for i, t in enumerate(b) if t['layer'] == n_layers - 1)
    b.insert(last_block + 1, tensor('blk.%d.attn_q_norm.weight' % (n_layers - 1), 'f32', (64,), 0))  # a cell without errors
    a_embd = next(t for t in a if t['name'] == 'token_embd.weight')
    a_embd.update(tensor('token_embd.weight', 'f16', (256, 300), 0))
    place(a)
    place(b)
    a_names = {t['name']: t for t in a}
    errors, measures = [], {}
    for t in b:
        ref = a_names.get(t['name'])
        if ref is None or ref['shape'] != t['shape']:
            continue
        rmse = abs(rng.gauss(0.002, 0.0005)) + 1e-5
        nmse = abs(rng.gauss(0.003, 0.001)) + 1e-6
        outlier = t['name'] == 'blk.2.ffn_down.weight'
        if outlier:
            nmse, rmse = 0.25, 0.04
        e = {
            'name': t['name'], 'layer': t['layer'], 'role': t['role'],
            'reference_type': ref['type'], 'compared_type': t['type'],
            'rmse': f64(rmse), 'nmse': f64(nmse), 'cosine': f64(1.0 - nmse / 2),
            'max_abs': f32(rmse * 9.5), 'max_abs_index': rng.randrange(t['elements']),
            'relative_error': f64(rmse * 20), 'weighted_rmse': f64(rmse * 0.8),
            'non_finite_mismatches': 0, 'outlier': outlier,
        }
        if t['name'] == 'blk.0.attn_norm.weight':
            e['nmse'] = None  # a reference of zeros
            e['cosine'] = None
            e['relative_error'] = None
        if t['name'] == 'blk.1.attn_norm.weight':
            e['rmse'] = 'nan'
            e['non_finite_mismatches'] = 3
        errors.append(e)
        measures[t['name']] = dict(e, _rmse=rmse, _nmse=nmse)
    texts = small_texts()
    vocab = vocabulary(texts, rng, {'bos': 1, 'eos': 2})
    metadata = [
        {'key': 'general.architecture', 'type': 'string', 'value': 'llama'},
        {'key': 'general.name', 'type': 'string', 'value': 'Tiny Llama Q4_K_M'},
        {'key': 'llama.block_count', 'type': 'u32', 'value': str(n_layers)},
        {'key': 'llama.context_length', 'type': 'u32', 'value': '8192'},
        array_kv('tokenizer.ggml.tokens', 'string', texts),
    ]
    model_a = summary('tiny-f16.gguf', 'llama', a, file_type='F16', name='Tiny Llama F16', ctx=8192,
                      blocks=n_layers, vocab=len(texts), kv_count=len(metadata) + 1)
    model_b = summary('tiny-q4_k_m.gguf', 'llama', b, file_type='Q4_K_M', name='Tiny Llama Q4_K_M', ctx=8192,
                      blocks=n_layers, vocab=len(texts), kv_count=len(metadata))
    b_names = {t['name'] for t in b}
    return {
        'minfer_report': 1, 'generator': 'report_docs.py', 'mode': 'compare', 'values': False,
        'models': [model_a, model_b], 'metadata': metadata, 'tensors': b,
        'layers': layers_of(b, n_layers, measures), 'by_type': breakdown(b, 'type'),
        'by_role': breakdown(b, 'role'), 'tokens': vocab, 'chat_template': None,
        'compare': {
            'reference': 0, 'compared': 1, 'imatrix': 'tiny.imatrix', 'errors': errors,
            'only_in_reference': [t['name'] for t in a if t['name'] not in b_names],
            'only_in_compared': [t['name'] for t in b if t['name'] not in a_names],
            'shape_mismatch': [{'name': 'token_embd.weight', 'reference_shape': a_embd['shape'],
                                'compared_shape': next(t for t in b if t['name'] == 'token_embd.weight')['shape']}],
        },
    }


SCALE_TOKENS = 256_000
SCALE_TENSORS = 1_000


def scale():
    rng = random.Random(256)
    # 4 tensors outside the blocks + 83 blocks of 12 = 1,000 tensors
    roles = ['attn_norm', 'attn_q', 'attn_k', 'attn_v', 'attn_output', 'attn_q_norm', 'attn_k_norm',
             'ffn_norm', 'ffn_gate', 'ffn_up', 'ffn_down', 'post_ffw_norm']
    n_layers = 83
    ts = [tensor('token_embd.weight', 'q6_K', (4096, SCALE_TOKENS), 0, rng)]
    for i in range(n_layers):
        for r in roles:
            norm = r.endswith('norm')
            ts.append(tensor('blk.%d.%s.weight' % (i, r), 'f32' if norm else 'q4_K', (4096,) if norm else (4096, 4096), 0, rng))
    ts += [tensor('output_norm.weight', 'f32', (4096,), 0, rng), tensor('output.weight', 'q6_K', (4096, SCALE_TOKENS), 0, rng),
           tensor('rope_freqs.weight', 'f32', (64,), 0, rng)]
    assert len(ts) == SCALE_TENSORS
    place(ts)
    alphabet = 'abcdefghijklmnopqrstuvwxyz'
    texts = []
    for i in range(SCALE_TOKENS):
        n = 2 + i % 7
        w = ''.join(alphabet[(i * 7 + k * 13 + i // 26) % 26] for k in range(n))
        texts.append((' ' if i % 3 == 0 else '') + w)
    texts[200_001] = 'needle'
    texts[255_999] = ' needle tail'
    vocab = vocabulary(texts, rng, {'bos': 1, 'eos': 2})
    vocab['scores'] = [Raw(str(-i)) for i in range(SCALE_TOKENS)]
    metadata = [
        {'key': 'general.architecture', 'type': 'string', 'value': 'gemma3'},
        {'key': 'gemma3.block_count', 'type': 'u32', 'value': str(n_layers)},
        array_kv('tokenizer.ggml.tokens', 'string', texts),
        array_kv('tokenizer.ggml.scores', 'f32', [str(-i) for i in range(SCALE_TOKENS)]),
        array_kv('tokenizer.ggml.token_type', 'i32', [str(t) for t in vocab['types']]),
    ]
    model = summary('big.gguf', 'gemma3', ts, file_type='Q4_K_M', name='Big', ctx=131072, blocks=n_layers,
                    vocab=SCALE_TOKENS, kv_count=len(metadata))
    return {
        'minfer_report': 1, 'generator': 'report_docs.py', 'mode': 'model', 'values': True,
        'models': [model], 'metadata': metadata, 'tensors': ts, 'layers': layers_of(ts, n_layers),
        'by_type': breakdown(ts, 'type'), 'by_role': breakdown(ts, 'role'), 'tokens': vocab,
        'chat_template': CHAT_TEMPLATE, 'compare': None,
    }


def hostile():
    """Markup and script wherever the document has a string: none of it may run or become markup."""
    doc = small_model(values=True)
    doc['tokens']['texts'][40] = HOSTILE_SCRIPT
    doc['tokens']['texts'][41] = HOSTILE_IMG
    doc['tokens']['texts'][42] = HOSTILE
    doc['tokens']['special'][HOSTILE] = 42
    doc['metadata'].append({'key': HOSTILE, 'type': 'string', 'value': 'a key of markup'})
    doc['metadata'].append({'key': 'general.url', 'type': 'string', 'value': HOSTILE})
    doc['metadata'].append(array_kv('hostile.items', 'string', [HOSTILE_SCRIPT, HOSTILE_IMG]))
    t = doc['tensors'][5]
    old = t['name']
    t['name'] = 'blk.0.' + HOSTILE + '.weight'
    t['type'] = HOSTILE_IMG
    for cell in doc['layers']['cells']:
        cell['tensors'] = [t['name'] if n == old else n for n in cell['tensors']]
    m = doc['models'][0]
    for key in ('location', 'name', 'architecture', 'file_type', 'tokenizer'):
        m[key] = HOSTILE
    doc['layers']['roles'].append(HOSTILE)
    doc['layers']['cells'].append({'layer': 0, 'role': HOSTILE, 'tensors': [t['name']], 'bytes': 1, 'elements': 8,
                                   'bits_per_weight': 1, 'rmse': None, 'nmse': None})
    doc['by_type'].append({'type': HOSTILE, 'tensors': 1, 'bytes': 1, 'elements': 1})
    doc['by_role'].append({'role': HOSTILE, 'tensors': 1, 'bytes': 1, 'elements': 1})
    doc['chat_template'] = HOSTILE + '<!-- {{ x }} -->'
    doc['generator'] = HOSTILE
    return doc


DOCUMENTS = {'small': small_model, 'compare': compare, 'scale': scale, 'hostile': hostile}


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    os.makedirs(argv[1], exist_ok=True)
    for name, make in DOCUMENTS.items():
        with open(os.path.join(argv[1], name + '.json'), 'w', encoding='utf-8') as f:
            f.write(dumps(make()))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
