// @kubernetes/client-node against startKubefake(): the fixture itself, CRUD with the real
// codes, a watch, an informer, and a custom resource whose CRD the fixture loaded.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import {
  ApiException, CoreV1Api, CustomObjectsApi, PatchStrategy, Watch, makeInformer, setHeaderOptions,
} from '@kubernetes/client-node';
import { binaryPath, startKubefake } from 'kubefake';

// The repository's CRD fixture, named by scripts/javascript-package.sh.
const crds = process.env.KUBEFAKE_CRDS;

// Resolves with what `wait` gives once `event` fires, or rejects after `ms`.
function within(ms, what, wait) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([new Promise(wait), timeout]).finally(() => clearTimeout(timer));
}

// The HTTP code and Status reason a call was refused with.
async function refusal(call) {
  try {
    await call();
  } catch (err) {
    assert.ok(err instanceof ApiException, `not an ApiException: ${err}`);
    const body = typeof err.body === 'string' ? JSON.parse(err.body) : err.body;
    return [err.code, body.reason];
  }
  assert.fail('the call succeeded');
}

describe('startKubefake', () => {
  test('runs the platform package binary and stops it', async () => {
    assert.match(binaryPath(), /node_modules\/@kubefake\/linux-x64\/bin\/kubefake$/);
    const server = await startKubefake();
    assert.match(server.url, /^https:\/\/127\.0\.0\.1:\d+$/);
    assert.ok(existsSync(server.kubeconfig));
    assert.equal(server.kubeConfig().getCurrentCluster().server, server.url);
    await server.stop();
    assert.ok(!existsSync(server.kubeconfig), 'the kubeconfig outlived the server');
    const port = Number(new URL(server.url).port);
    const refused = await new Promise((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => { socket.destroy(); resolve(false); });
      socket.once('error', () => resolve(true));
    });
    assert.ok(refused, 'the port still accepts connections after stop()');
  });

  test('a server that cannot start is a rejection with its message', async () => {
    await assert.rejects(startKubefake({ crds: '/nonexistent/crds' }), /kubefake serve exited before it was ready/);
  });

  test('start-to-ready time', async (t) => {
    const times = [];
    for (let i = 0; i < 10; i++) {
      const begin = process.hrtime.bigint();
      const server = await startKubefake();
      times.push(Number(process.hrtime.bigint() - begin) / 1e6);
      await server.stop();
    }
    times.sort((a, b) => a - b);
    t.diagnostic(`start-to-ready median ${times[5].toFixed(1)} ms (min ${times[0].toFixed(1)}, max ${times[9].toFixed(1)})`);
  });
});

describe('@kubernetes/client-node', () => {
  let server;
  let kc;
  let core;
  before(async () => {
    server = await startKubefake({ crds });
    kc = server.kubeConfig();
    core = kc.makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: 'js' } } });
  });
  after(() => server.stop());

  test('CRUD: create, conflict, list by label, replace, stale replace, merge patch, delete', async () => {
    const body = { metadata: { name: 'cm', labels: { app: 'js' } }, data: { a: '1' } };
    const created = await core.createNamespacedConfigMap({ namespace: 'js', body });
    assert.ok(created.metadata.resourceVersion);
    assert.deepEqual(await refusal(() => core.createNamespacedConfigMap({ namespace: 'js', body })),
      [409, 'AlreadyExists']);
    const list = await core.listNamespacedConfigMap({ namespace: 'js', labelSelector: 'app=js' });
    assert.deepEqual(list.items.map((cm) => cm.metadata.name), ['cm']);
    const replaced = await core.replaceNamespacedConfigMap({
      namespace: 'js', name: 'cm', body: { ...created, data: { a: '2' } },
    });
    assert.deepEqual(replaced.data, { a: '2' });
    assert.deepEqual(await refusal(() => core.replaceNamespacedConfigMap({
      namespace: 'js', name: 'cm', body: { ...created, data: { a: 'stale' } },
    })), [409, 'Conflict']);
    const patched = await core.patchNamespacedConfigMap(
      { namespace: 'js', name: 'cm', body: { data: { b: '3' } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    assert.deepEqual(patched.data, { a: '2', b: '3' });
    await core.deleteNamespacedConfigMap({ namespace: 'js', name: 'cm' });
    assert.deepEqual(await refusal(() => core.readNamespacedConfigMap({ namespace: 'js', name: 'cm' })),
      [404, 'NotFound']);
  });

  test('watch: ADDED, MODIFIED and DELETED in order', async () => {
    const list = await core.listNamespacedConfigMap({ namespace: 'js' });
    const events = [];
    let done;
    const all = new Promise((resolve) => { done = resolve; });
    const request = await new Watch(kc).watch('/api/v1/namespaces/js/configmaps',
      { resourceVersion: list.metadata.resourceVersion },
      (type, obj) => {
        events.push(`${type} ${obj.metadata.name}`);
        if (type === 'DELETED') done();
      },
      () => {});
    try {
      await core.createNamespacedConfigMap({ namespace: 'js', body: { metadata: { name: 'w' } } });
      await core.patchNamespacedConfigMap({ namespace: 'js', name: 'w', body: { data: { x: 'y' } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
      await core.deleteNamespacedConfigMap({ namespace: 'js', name: 'w' });
      await within(10000, 'the DELETED event', (resolve) => all.then(resolve));
    } finally {
      request.abort();
    }
    assert.deepEqual(events, ['ADDED w', 'MODIFIED w', 'DELETED w']);
  });

  test('informer: list, then add and update events from its watch', async () => {
    await core.createNamespacedConfigMap({ namespace: 'js', body: { metadata: { name: 'before' } } });
    const informer = makeInformer(kc, '/api/v1/namespaces/js/configmaps',
      () => core.listNamespacedConfigMap({ namespace: 'js' }));
    const seen = [];
    let sawUpdate;
    const updated = new Promise((resolve) => { sawUpdate = resolve; });
    informer.on('add', (obj) => seen.push(`add ${obj.metadata.name}`));
    informer.on('update', (obj) => {
      seen.push(`update ${obj.metadata.name}`);
      if (obj.metadata.name === 'after') sawUpdate();
    });
    await informer.start();
    try {
      await core.createNamespacedConfigMap({ namespace: 'js', body: { metadata: { name: 'after' } } });
      await core.patchNamespacedConfigMap({ namespace: 'js', name: 'after', body: { data: { v: '2' } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
      await within(10000, 'the update event', (resolve) => updated.then(resolve));
    } finally {
      await informer.stop();
    }
    assert.ok(seen.includes('add before'), seen.join(', '));
    assert.deepEqual(seen.filter((e) => e.endsWith(' after')), ['add after', 'update after']);
    const names = informer.list('js').map((cm) => cm.metadata.name);
    assert.ok(names.includes('after') && names.includes('before'), names.join(', '));
  });

  test('custom resources of the CRD the fixture loaded', { skip: !crds && 'KUBEFAKE_CRDS not set' }, async () => {
    const custom = kc.makeApiClient(CustomObjectsApi);
    const gvr = { group: 'stable.example.com', version: 'v1', namespace: 'js', plural: 'crontabs' };
    await custom.createNamespacedCustomObject({
      ...gvr,
      body: { apiVersion: 'stable.example.com/v1', kind: 'CronTab', metadata: { name: 'tab' },
        spec: { cronSpec: '* * * * */5', image: 'my-cron-image', replicas: 1 } },
    });
    const read = await custom.getNamespacedCustomObject({ ...gvr, name: 'tab' });
    assert.equal(read.spec.image, 'my-cron-image');
    assert.deepEqual(await refusal(() => custom.createNamespacedCustomObject({
      ...gvr, body: { apiVersion: 'stable.example.com/v1', kind: 'CronTab', metadata: { name: 'bad' },
        spec: { replicas: 'many' } },
    })), [422, 'Invalid']);
  });
});
