// The live view (/kubefake/v1/ui/) in headless Chromium, driven by playwright-core against a
// running `kubefake serve --http --authorization-mode AlwaysAllow` (scripts/browser-tests.sh
// starts it and sets KUBEFAKE_URL). Every check reads the DOM; every wait is bounded.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { chromium } from 'playwright-core';

const url = process.env.KUBEFAKE_URL;
const chromiumPath = process.env.CHROMIUM || '/usr/bin/chromium';
const WAIT = { timeout: 10_000 };

let browser;
let page;
const pageErrors = []; // uncaught exceptions, console errors and CSP violations of the page

async function api(method, path, body, contentType = 'application/json') {
  const resp = await fetch(url + path, {
    method,
    headers: { 'Content-Type': contentType },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: resp.status, body: await resp.json().catch(() => null) };
}

const configMap = (name, data) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data });
const configMaps = '/api/v1/namespaces/default/configmaps';

// Waits until the element's text contains every one of the strings.
async function waitForText(selector, ...wanted) {
  await page.waitForFunction(({ selector, wanted }) => {
    const node = document.querySelector(selector);
    return node !== null && wanted.every((w) => node.textContent.includes(w));
  }, { selector, wanted }, WAIT);
}

// Polls a condition of the server until it holds, for WAIT at most.
async function until(condition) {
  const deadline = Date.now() + WAIT.timeout;
  while (!(await condition())) {
    assert.ok(Date.now() < deadline, `not within ${WAIT.timeout} ms: ${condition}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

// The objects table's row for a name, or null.
const objectRow = (name) => page.locator('#objects tbody tr', { has: page.locator(`td:text-is("${name}")`) });

before(async () => {
  assert.ok(url, 'KUBEFAKE_URL is set');
  browser = await chromium.launch({ executablePath: chromiumPath, headless: true, timeout: 30_000 });
  page = await browser.newPage();
  page.setDefaultTimeout(WAIT.timeout);
  page.on('pageerror', (err) => pageErrors.push(`exception: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error') pageErrors.push(`console: ${msg.text()} (${msg.location().url})`);
  });
});

after(async () => {
  await browser?.close();
});

test('the page loads from /kubefake/v1/ui (redirected to ui/) with its script and stylesheet', async () => {
  const { status } = await api('POST', configMaps, configMap('settings', { greeting: 'hello' }));
  assert.equal(status, 201);
  const resp = await page.goto(`${url}/kubefake/v1/ui`);
  assert.equal(resp.status(), 200);
  assert.match(page.url(), /\/kubefake\/v1\/ui\/$/);
  assert.equal(await page.title(), 'kubefake · live view');
  await waitForText('#status', 'pick a resource');
  // The stylesheet applied: the grid layout is not the browser's default block.
  assert.equal(await page.$eval('main', (m) => getComputedStyle(m).display), 'grid');
});

test('resources by group: the core group lists configmaps, apps lists deployments', async () => {
  await waitForText('#tree', 'core', 'apps', 'configmaps');
  const groups = await page.$$eval('#tree summary', (s) => s.map((n) => n.textContent));
  assert.equal(groups[0], 'core');
  assert.ok(groups.includes('apps'), groups.join());
  assert.equal(await page.locator('#tree button[data-key="apps/v1/deployments"]').count(), 1);
});

test('a ConfigMap created before is in the list and opens as YAML rendered by the server', async () => {
  await page.click('#tree button[data-key="/v1/configmaps"]');
  await objectRow('settings').waitFor(WAIT);
  await objectRow('settings').click();
  await waitForText('#object-title', 'ConfigMap default/settings');
  await waitForText('#object-yaml', 'kind: ConfigMap', 'name: settings', 'greeting: hello');
});

test('the view is in the URL: a reload shows the same resource and object', async () => {
  assert.match(page.url(), /#resource=%2Fv1%2Fconfigmaps&name=settings&objectNamespace=default$/);
  await page.reload();
  await waitForText('#object-title', 'ConfigMap default/settings');
  await waitForText('#object-yaml', 'greeting: hello');
  await objectRow('settings').waitFor(WAIT);
  assert.equal(await page.getAttribute('#tree button.picked', 'data-key'), '/v1/configmaps');
  assert.equal(await page.getAttribute('#objects tr.picked', 'class'), 'picked');
});

test('the page follows the watch: a create and an update show at once', async () => {
  assert.equal((await api('POST', configMaps, configMap('live', { n: '1' }))).status, 201);
  await objectRow('live').waitFor(WAIT);
  await waitForText('#events', 'ADDED', 'ConfigMap default/live');

  const patch = await api('PATCH', `${configMaps}/settings`, { data: { greeting: 'bonjour' } },
    'application/merge-patch+json');
  assert.equal(patch.status, 200);
  await waitForText('#object-yaml', 'greeting: bonjour');
  await waitForText('#events', 'MODIFIED', 'ConfigMap default/settings');

  assert.equal((await api('DELETE', `${configMaps}/live`)).status, 200);
  await waitForText('#events', 'DELETED');
  await objectRow('live').waitFor({ state: 'detached', ...WAIT });
});

test('a new CRD joins the tree and a new namespace the picker, without a reload', async () => {
  const crd = readFileSync(new URL('../../../fixtures/crds/resourcedefinition.yaml', import.meta.url));
  const created = await fetch(`${url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions`, {
    method: 'POST', headers: { 'Content-Type': 'application/yaml' }, body: crd,
  });
  assert.equal(created.status, 201);
  await page.locator('#tree button[data-key="stable.example.com/v1/crontabs"]').waitFor({ state: 'attached', ...WAIT });
  const ns = await api('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'live-ns' } });
  assert.equal(ns.status, 201);
  await page.locator('#namespace option[value="live-ns"]').waitFor({ state: 'attached', ...WAIT });
});

test('a watch answered 410 Expired makes the page list again and go on following', async () => {
  const fault = await api('POST', '/kubefake/v1/faults', {
    match: { verb: 'watch', resource: 'configmaps' }, action: { watch: 'expire' }, times: 1,
  });
  assert.equal(fault.status, 201);
  await page.selectOption('#namespace', 'default'); // a new list and watch, which the fault expires
  await waitForText('#events', 'RELIST', '410 Expired');
  // The server saw the page watch again after the expired one: what is created now is an event.
  await until(async () => {
    const log = await api('GET', '/kubefake/v1/requests?verb=watch&resource=configmaps&namespace=default');
    const watches = log.body.items;
    return watches.length >= 2 && watches.at(-2).fault === fault.body.id && !watches.at(-1).fault;
  });
  assert.equal((await api('POST', configMaps, configMap('after-relist', {}))).status, 201);
  await objectRow('after-relist').waitFor(WAIT);
  await waitForText('#events', 'ADDED', 'ConfigMap default/after-relist');
  await api('DELETE', `/kubefake/v1/faults/${fault.body.id}`);
});

test('a fault that fires shows in the request log and in the faults table', async () => {
  const fault = await api('POST', '/kubefake/v1/faults', {
    match: { verb: 'get', resource: 'configmaps', name: 'boom' },
    action: { code: 503, reason: 'ServiceUnavailable', message: 'injected by the browser test' },
    times: 1,
  });
  assert.equal(fault.status, 201);
  const id = fault.body.id;
  assert.equal((await api('GET', `${configMaps}/boom`)).status, 503);

  await page.waitForFunction((id) => [...document.querySelectorAll('#requests tbody tr')].some((row) =>
    row.textContent.includes('configmaps default/boom') && row.querySelector('.code').textContent === '503'
    && row.querySelector('.fault').textContent === id && row.classList.contains('faulted')), id, WAIT);
  await page.waitForFunction((id) => [...document.querySelectorAll('#faults tbody tr')].some((row) => {
    const cells = [...row.cells].map((c) => c.textContent);
    return cells[0] === id && cells[4] === '1' && cells[2].includes('503');
  }), id, WAIT);

  await page.check('#only-faults');
  await page.waitForFunction(() => {
    const rows = [...document.querySelectorAll('#requests tbody tr')];
    return rows.length === 1 && rows[0].textContent.includes('boom');
  }, null, WAIT);
});

test('the page works at http://localhost:PORT as well as 127.0.0.1', async () => {
  const other = await browser.newPage();
  try {
    await other.goto(`${url.replace('127.0.0.1', 'localhost')}/kubefake/v1/ui/`);
    await other.waitForFunction(() => document.querySelector('#status').textContent === 'pick a resource',
      null, WAIT);
  } finally {
    await other.close();
  }
});

test('the page raised no errors and no Content-Security-Policy violations', () => {
  assert.deepEqual(pageErrors, []);
});
