"""Fixtures of the report page's browser tests: documents drawn by minfer-render-report, opened in
headless Chromium through Selenium (Debian's chromium, chromium-driver and python3-selenium).

Every page a test opens is checked when the test ends, whatever it asserted itself:
  - the console has no SEVERE entry (an exception of the page, a CSP violation, a failed load);
  - the page made no request: performance.getEntriesByType('resource') is empty, and Chromium's
    performance log has no Network.requestWillBeSent but for the page's own file:// URL (or data:);
  - no alert is open.

Without Chromium, its driver or Selenium the tests skip with the reason, unless the environment
variable CI is set: then they fail, so that CI never passes without having run them.
MINFER_RENDER_REPORT names the tool (ctest sets it); MINFER_CHROMIUM and MINFER_CHROMEDRIVER may
name the browser and its driver.
"""

import json
import os
import shutil
import subprocess
import sys
import time

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report_docs  # noqa: E402


def unavailable(reason):
    # .ci/run sets MINFER_REQUIRE_BROWSER (CI=true is honoured too): there a page test never skips
    required = os.environ.get('CI') or os.environ.get('MINFER_REQUIRE_BROWSER', '0') not in ('', '0')
    if required:
        pytest.fail(reason + ' (CI / MINFER_REQUIRE_BROWSER: the browser tests must run, never skip)', pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope='session')
def render_tool():
    path = os.environ.get('MINFER_RENDER_REPORT')
    if not path:
        unavailable('MINFER_RENDER_REPORT is not set (ctest sets it to the minfer-render-report it built)')
    if not os.access(path, os.X_OK):
        pytest.fail('MINFER_RENDER_REPORT=%s is not an executable' % path, pytrace=False)
    return path


def render(tool, text, directory, name, title=None):
    """The page of the document `text` (JSON): its path."""
    src = os.path.join(directory, name + '.json')
    out = os.path.join(directory, name + '.html')
    with open(src, 'w', encoding='utf-8') as f:
        f.write(text)
    args = [tool, src, out] + ([title] if title is not None else [])
    done = subprocess.run(args, capture_output=True, text=True, check=False)
    assert done.returncode == 0, 'minfer-render-report failed (%d): %s' % (done.returncode, done.stderr)
    return out


def find_program(env, *names, fallback=None):
    if os.environ.get(env):
        return os.environ[env] if os.access(os.environ[env], os.X_OK) else None
    for n in names:
        p = shutil.which(n)
        if p:
            return p
    return fallback if fallback and os.path.exists(fallback) else None


@pytest.fixture(scope='session')
def driver():
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        unavailable('python3-selenium is not installed (apt-get install python3-selenium)')
    chromium = find_program('MINFER_CHROMIUM', 'chromium', 'chromium-browser')
    chromedriver = find_program('MINFER_CHROMEDRIVER', 'chromedriver', fallback='/usr/lib/chromium/chromedriver')
    if not chromium:
        unavailable('chromium is not installed (apt-get install chromium), or MINFER_CHROMIUM names no program')
    if not chromedriver:
        unavailable('chromedriver is not installed (apt-get install chromium-driver), or MINFER_CHROMEDRIVER names no program')
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for arg in ('--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--window-size=1400,1000',
                '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync',
                '--disable-extensions', '--disable-default-apps', '--force-prefers-reduced-motion'):
        options.add_argument(arg)
    options.set_capability('goog:loggingPrefs', {'browser': 'ALL', 'performance': 'ALL'})
    # The driver's path is given: Selenium must not look for (or download) one.
    d = webdriver.Chrome(service=Service(executable_path=chromedriver), options=options)
    d.set_script_timeout(30)
    yield d
    d.quit()


READY = "return document.body ? (document.body.dataset.ready || null) : null"


class Page:
    """An open report page and the document it draws."""

    def __init__(self, driver, doc, path):
        self.driver = driver
        self.doc = doc
        self.path = path
        self.url = 'file://' + path

    def js(self, script, *args):
        return self.driver.execute_script(script, *args)

    def js_async(self, script, *args):
        return self.driver.execute_async_script(script, *args)

    def find(self, css):
        from selenium.webdriver.common.by import By
        return self.driver.find_element(By.CSS_SELECTOR, css)

    def rows(self, css):
        """The elements matching `css`, each as its data-* attributes plus _hidden (not displayed)
        and _text (textContent)."""
        return self.js("""
            return Array.from(document.querySelectorAll(arguments[0])).map((e) =>
                Object.assign({}, e.dataset, {_hidden: e.getClientRects().length === 0, _text: e.textContent,
                                              _class: e.className}));""", css)

    def visible_rows(self, css):
        return [r for r in self.rows(css) if not r['_hidden']]

    def wait(self, predicate_js, timeout=20, *args):
        end = time.monotonic() + timeout
        while True:
            value = self.js(predicate_js, *args)
            if value:
                return value
            if time.monotonic() > end:
                raise AssertionError('timed out waiting for: ' + predicate_js)
            time.sleep(0.02)

    def element(self, target):
        """`target` as an element, scrolled to the middle of the window (not under the sticky header)."""
        e = self.find(target) if isinstance(target, str) else target
        self.js("arguments[0].scrollIntoView({block: 'center'})", e)
        return e

    def click(self, target):
        e = self.element(target)
        e.click()
        return e

    def type_into(self, css, text):
        """Replaces an input's text as a user would (keys, one input event each)."""
        from selenium.webdriver.common.keys import Keys
        e = self.element(css)
        e.send_keys(Keys.CONTROL, 'a')
        e.send_keys(Keys.DELETE)
        if text:
            e.send_keys(text)
        return e

    def column(self, table, attr):
        """The `attr` attribute of every body row of `table`, in the order shown (None when absent)."""
        return self.js("return Array.from(document.querySelectorAll(arguments[0] + ' tbody tr')).map((tr) => tr.getAttribute(arguments[1]))",
                       table, attr)

    def header(self, table, label):
        """The column header of `table` whose text is `label`."""
        from selenium.webdriver.common.by import By
        for th in self.driver.find_elements(By.CSS_SELECTOR, table + ' thead th'):
            if th.text.strip() == label:
                return th
        raise AssertionError('no header %r in %s' % (label, table))

    def detail_names(self):
        """The tensors #layer-detail lists."""
        return [r['name'] for r in self.rows('#layer-detail tbody tr')]

    def search_tokens(self, query):
        """Types `query` into #token-search; returns the result rows once the search is done."""
        self.type_into('#token-search', query)
        self.wait("const r = document.getElementById('token-results');"
                  "return r.dataset.complete === '1' && r.dataset.query === arguments[0];", 20, query)
        return self.rows('#token-results tbody tr')


def same_number(attr, value):
    """A data-* attribute against the document's value: the same number (integers written exactly),
    or the same non-finite string."""
    if isinstance(value, str):
        return attr == value
    return attr is not None and float(attr) == value and (not isinstance(value, int) or attr == str(value))


def drain_logs(driver):
    driver.get_log('browser')
    driver.get_log('performance')


def check_clean(driver, page):
    """The page logged no error, made no request and shows no alert."""
    from selenium.common.exceptions import NoAlertPresentException
    try:
        alert = driver.switch_to.alert
        text = alert.text
        alert.dismiss()
        raise AssertionError('the page opened an alert: %r' % text)
    except NoAlertPresentException:
        pass
    problems = []
    resources = driver.execute_script("return performance.getEntriesByType('resource').map((e) => e.name)")
    if resources:
        problems.append('resources loaded: %r' % resources)
    for entry in driver.get_log('browser'):
        if entry['level'] == 'SEVERE':
            problems.append('console: ' + entry['message'])
    for entry in driver.get_log('performance'):
        message = json.loads(entry['message'])['message']
        if message.get('method') != 'Network.requestWillBeSent':
            continue
        url = message['params']['request']['url']
        if url != page.url and not url.startswith('data:'):
            problems.append('request: ' + url)
    assert not problems, 'the page at %s:\n  ' % page.url + '\n  '.join(problems)


@pytest.fixture
def open_page(driver, render_tool, tmp_path):
    """open_page(doc, title=None) -> Page, ready (body[data-ready="1"]); checked at the end of the test."""
    opened = []

    def open_(doc, title=None, name='report', timeout=30):
        if opened:
            check_clean(driver, opened[-1])
        text = doc if isinstance(doc, str) else report_docs.dumps(doc)
        path = render(render_tool, text, str(tmp_path), name + str(len(opened)), title)
        page = Page(driver, report_docs.loads(text), path)
        drain_logs(driver)
        driver.get(page.url)
        state = page.wait(READY, timeout)
        assert state == '1', 'the page was not drawn (data-ready=%r): %s' % (state, page.find('#page-error').text)
        opened.append(page)
        return page

    yield open_
    if opened:
        check_clean(driver, opened[-1])
