"""Pages written by `minfer report` itself (not from hand-made documents): the project's sample model,
the shared real files, and a comparison of the sample model with its Q8_0 quantization whose error
figures, as the page shows them, equal numpy's computation over the values `minfer tensor --dump`
gives (the figures are the report's accumulation; numpy is the reference). Each page: no console
error, no request, every table's rows as the document has them."""

import json
import os
import subprocess
import tempfile

import numpy as np
import pytest

from conftest import READY, Page, check_clean, drain_logs, unavailable

SHARED = os.environ.get('MINFER_SHARED_DIR', '')


def tool(env):
    path = os.environ.get(env)
    if not path or not os.path.exists(path):
        unavailable('%s is not set (ctest sets it)' % env)
    return path


@pytest.fixture(scope='module')
def cli():
    return tool('MINFER_CLI')


@pytest.fixture(scope='module')
def files(cli):
    d = tempfile.mkdtemp(prefix='minfer-cli-pages-')
    sample = os.path.join(d, 'sample.gguf')
    subprocess.run([tool('MINFER_SAMPLE'), sample], check=True, stdout=subprocess.DEVNULL)
    q8 = os.path.join(d, 'sample-q8.gguf')
    subprocess.run([cli, 'quantize', sample, q8, 'Q8_0', '--allow-requantize', '--quiet'], check=True)
    return d, sample, q8


def report(cli, out_dir, *args):
    """`minfer report ARGS -o page` and its --json document."""
    page = os.path.join(out_dir, 'page-%d.html' % len(os.listdir(out_dir)))
    subprocess.run([cli, 'report', *args, '-o', page, '--quiet'], check=True)
    doc = json.loads(subprocess.run([cli, 'report', *args, '--json'], check=True, capture_output=True).stdout)
    return page, doc


def open_file(driver, path, doc):
    page = Page(driver, doc, path)
    drain_logs(driver)
    driver.get(page.url)
    assert page.wait(READY, 30) == '1'
    return page


def check_tables(page):
    doc = page.doc
    assert page.js("return document.querySelectorAll('#metadata tbody tr').length") == len(doc['metadata'])
    rows = page.rows('#tensors tbody tr')
    assert [r['name'] for r in rows] == [t['name'] for t in doc['tensors']]
    for r, t in zip(rows, doc['tensors']):
        assert r['type'] == t['type'] and int(r['bytes']) == t['bytes']
        if doc['values']:
            for k in ('min', 'max', 'mean', 'std'):
                assert np.float32(float(r[k])) == np.float32(t['stats'][k]), (t['name'], k)
            assert int(r['nan']) == t['stats']['nan'] and int(r['inf']) == t['stats']['inf']
    cells = page.rows('#layers [data-layer]')
    assert len(cells) == len(doc['layers']['cells'])
    assert sorted((int(c['layer']), c['role'], int(c['bytes'])) for c in cells) == \
        sorted((c['layer'], c['role'], c['bytes']) for c in doc['layers']['cells'])
    if doc['tokens']:
        texts = doc['tokens']['texts']
        # by text: the longest printable token (few others contain it), found among the results
        printable = [i for i, t in enumerate(texts) if t.isprintable() and t.strip() == t and t]
        if printable:
            i = max(printable, key=lambda k: len(texts[k]))
            found = page.search_tokens(texts[i])
            assert str(i) in [r.get('id') for r in found], (texts[i], found[:3])
        found = page.search_tokens(str(len(texts) - 1))
        assert any(r.get('id') == str(len(texts) - 1) for r in found), found[:3]


def test_the_sample_models_page(driver, cli, files, tmp_path):
    _, sample, _ = files
    path, doc = report(cli, str(tmp_path), sample, '--values')
    page = open_file(driver, path, doc)
    check_tables(page)
    check_clean(driver, page)


def test_the_shared_real_files_pages(driver, cli, tmp_path):
    real = os.path.join(SHARED, 'fixtures', 'real')
    if not SHARED or not os.path.isdir(real):
        unavailable('no shared fixtures at %r (../shared)' % real)
    names = sorted(n for n in os.listdir(real) if n.endswith('.gguf'))
    opened = 0
    for n in names:
        src = os.path.join(real, n)
        if subprocess.run([cli, 'info', src], capture_output=True).returncode != 0:
            continue  # a file the loader refuses gets no page (report exits 1, as info does)
        path, doc = report(cli, str(tmp_path), src)
        page = open_file(driver, path, doc)
        check_tables(page)
        check_clean(driver, page)
        opened += 1
    assert opened >= 5


def dump(cli, model, name):
    out = subprocess.run([cli, 'tensor', model, name, '--dump', '-'], check=True, capture_output=True).stdout
    return np.frombuffer(out, dtype=np.float32).astype(np.float64)


def test_compare_figures_on_the_page_are_numpys(driver, cli, files, tmp_path):
    _, sample, q8 = files
    path, doc = report(cli, str(tmp_path), sample, q8)
    page = open_file(driver, path, doc)
    rows = page.rows('#errors tbody tr')
    assert [r['name'] for r in rows] == [e['name'] for e in doc['compare']['errors']]
    assert len(rows) == len(doc['tensors'])
    for r in rows:
        a, b = dump(cli, sample, r['name']), dump(cli, q8, r['name'])
        d = b - a
        assert float(r['rmse']) == pytest.approx(np.sqrt(np.mean(d * d)), rel=1e-9, abs=1e-12), r['name']
        assert float(r['maxabs']) == np.abs(d).max(), r['name']
        cos = a @ b / (np.linalg.norm(a) * np.linalg.norm(b))
        assert float(r['cosine']) == pytest.approx(cos, rel=1e-12), r['name']
    check_clean(driver, page)
